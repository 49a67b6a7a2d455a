"""``svc recipes``: saved lists of transform operations."""

from __future__ import annotations

from typing import Any

import click

from .app import State, cli, pass_state
from .support import F, add_list_get_delete, data_option, emit, load_json_array, load_json_object, table_option


@cli.group()
def recipes() -> None:
    """Saved lists of transform operations."""


add_list_get_delete(recipes, "recipes", "Recipe", ("id", "name", "description", "updated_at"))


def _options(f: F) -> F:
    f = click.option("--description", help="Description.")(f)
    f = click.option("--operations", help="Operations as a JSON array, @file.json or -.")(f)
    f = click.option("--name", help="Name.")(f)
    return data_option()(f)


def _body(data: str | None, name: str | None, operations: str | None, description: str | None) -> dict[str, Any]:
    body = load_json_object(data, "--data")
    if name is not None:
        body["name"] = name
    if operations is not None:
        body["operations"] = load_json_array(operations, "--operations")
    if description is not None:
        body["description"] = description
    if "name" not in body or "operations" not in body:
        raise click.UsageError("give --name and --operations (or --data)")
    if not isinstance(body["operations"], list):
        raise click.BadParameter("operations must be a JSON array")
    return body


@recipes.command("create")
@_options
@table_option
@pass_state
def create(state: State, data: str | None, name: str | None, operations: str | None, description: str | None) -> None:
    """Create a Recipe."""
    b = _body(data, name, operations, description)
    emit(state, state.client().recipes.create(b["name"], b["operations"], b.get("description")))


@recipes.command("update")
@click.argument("id")
@_options
@table_option
@pass_state
def update(
    state: State, id: str, data: str | None, name: str | None, operations: str | None, description: str | None
) -> None:
    """Replace a Recipe (Jobs made from it keep their copy)."""
    b = _body(data, name, operations, description)
    emit(state, state.client().recipes.update(id, b["name"], b["operations"], b.get("description")))
