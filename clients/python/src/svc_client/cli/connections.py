"""``svc sources`` and ``svc destinations``: saved connections."""

from __future__ import annotations

from typing import Any

import click

from .app import State, cli, pass_state
from .support import F, add_list_get_delete, data_option, emit, load_json_object, table_option

COLUMNS = ("id", "name", "type", "created_at", "updated_at")


def _body_options(f: F) -> F:
    f = click.option("--config", help="configuration object as JSON, @file.json or -.")(f)
    f = click.option("--type", "type_", help="Connection type.")(f)
    f = click.option("--name", "name_", help="Name.")(f)
    return data_option()(f)


def _body(data: str | None, name: str | None, type_: str | None, config: str | None, *, need_name: bool = True) -> dict[str, Any]:
    body = load_json_object(data, "--data")
    if name is not None:
        body["name"] = name
    if type_ is not None:
        body["type"] = type_
    if config is not None:
        body["configuration"] = load_json_object(config, "--config")
    required = ("name", "type", "configuration") if need_name else ("type", "configuration")
    missing = [k for k in required if k not in body]
    if missing:
        raise click.UsageError(f"missing {', '.join(missing)} (give --data or the options)")
    return body


def _connection_group(attr: str, noun: str) -> click.Group:
    @cli.group(name=attr, help=f"Saved {noun}s: list, get, create, update, delete, test, discover.")
    def group() -> None:
        pass

    def collection(state: State) -> Any:
        return getattr(state.client(), attr)

    add_list_get_delete(group, attr, noun, COLUMNS)

    @group.command(help=f"Create a {noun} (name, type, configuration).")
    @_body_options
    @table_option
    @pass_state
    def create(state: State, data: str | None, name_: str | None, type_: str | None, config: str | None) -> None:
        b = _body(data, name_, type_, config)
        emit(state, collection(state).create(b["name"], b["type"], b["configuration"]))

    @group.command(help=f"Replace a {noun} (the whole body).")
    @click.argument("id")
    @_body_options
    @table_option
    @pass_state
    def update(state: State, id: str, data: str | None, name_: str | None, type_: str | None, config: str | None) -> None:
        b = _body(data, name_, type_, config)
        emit(state, collection(state).update(id, b["name"], b["type"], b["configuration"]))

    @group.command(help=f"Test a saved {noun}.")
    @click.argument("id")
    @table_option
    @pass_state
    def test(state: State, id: str) -> None:
        emit(state, collection(state).test(id))

    @group.command("test-draft", help=f"Test an unsaved {noun} (type and configuration).")
    @_body_options
    @table_option
    @pass_state
    def test_draft(state: State, data: str | None, name_: str | None, type_: str | None, config: str | None) -> None:
        b = _body(data, name_, type_, config, need_name=False)
        emit(state, collection(state).test_draft(b["type"], b["configuration"], b.get("name")))

    @group.command(help="PostGIS discovery: the schemas, or the tables of --schema.")
    @click.argument("id")
    @click.option("--schema", help="List the tables and views of this schema.")
    @table_option
    @pass_state
    def discover(state: State, id: str, schema: str | None) -> None:
        emit(state, collection(state).discover(id, schema=schema))

    return group


sources = _connection_group("sources", "Source")
destinations = _connection_group("destinations", "Destination")


@sources.command()
@click.argument("id")
@data_option()
@table_option
@pass_state
def projects(state: State, id: str, data: str | None) -> None:
    """List the projects of a qfieldcloud or merginmaps Source."""
    emit(state, state.client().sources.projects(id, load_json_object(data, "--data")))


@sources.command("inspect-project")
@click.argument("id")
@data_option(required=True)
@table_option
@pass_state
def inspect_project(state: State, id: str, data: str) -> None:
    """Inspect a project of a qfieldcloud or merginmaps Source."""
    emit(state, state.client().sources.inspect_project(id, load_json_object(data, "--data")))


