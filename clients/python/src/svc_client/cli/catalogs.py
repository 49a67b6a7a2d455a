"""``svc transformations``, ``svc formats``, ``svc system``: what the server offers."""

from __future__ import annotations

import click

from .app import State, cli, pass_state
from .support import emit, table_option


@cli.group()
def transformations() -> None:
    """The server's catalog of transform operations."""


@transformations.command("list")
@table_option
@pass_state
def transformations_list(state: State) -> None:
    """List the operation types (ids to use in operations)."""
    emit(state, state.client().transformations.list(), ("id", "category", "requires_geometry", "label"))


@cli.group()
def formats() -> None:
    """The server's catalog of file formats (no token needed)."""


@formats.command("list")
@click.option("--kind", type=click.Choice(["vector", "raster"]), help="Only this kind.")
@click.option("--writable", is_flag=True, help="Only formats that can be written (convert targets).")
@table_option
@pass_state
def formats_list(state: State, kind: str | None, writable: bool) -> None:
    """List formats; use an id as --format of `workspaces convert`."""
    items = state.client().formats.list()
    if kind:
        items = [f for f in items if f.get("kind") == kind]
    if writable:
        items = [f for f in items if f.get("write")]
    emit(state, items, ("id", "name", "kind", "read", "write", "extensions"))


@cli.command()
@table_option
@pass_state
def system(state: State) -> None:
    """Show the server's non-sensitive capabilities (no token needed)."""
    emit(state, state.client().system())
