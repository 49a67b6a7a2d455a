"""What the command modules share: output, JSON arguments, common options, progress bars."""

from __future__ import annotations

import json
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence, TypeVar

import click

from ..errors import ConfigError
from ..output import to_json, to_table
from .app import State, pass_state

F = TypeVar("F", bound=Callable[..., Any])

DATA_HELP = "Request body as JSON: inline, @file.json, or - for stdin."


View = Callable[[Any], str]
"""Renders a command's result for people (the default output); ``--json`` bypasses it."""


def emit(state: State, data: Any, columns: Sequence[str] | None = None, view: View | None = None) -> None:
    """Print a result: the server's JSON with ``--json``, else ``view(data)`` or a plain table."""
    if state.json:
        click.echo(to_json(data))
    elif view is not None:
        click.echo(view(data))
    else:
        click.echo(to_table(data, columns))


def _set_json(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if value:
        ctx.ensure_object(State).json = True


def _set_table(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if value:
        ctx.ensure_object(State).json = False


def table_option(f: F) -> F:
    """``--json`` on a command (the same as the global one); ``--table``, the default, is kept
    hidden for scripts written when JSON was the default."""
    f = click.option(
        "--table", is_flag=True, expose_value=False, hidden=True, callback=_set_table,
        help="Print a table (the default).",
    )(f)
    return click.option(
        "--json", "as_json", is_flag=True, expose_value=False, callback=_set_json,
        help="Print the server's JSON instead of a table.",
    )(f)


def stdin_is_terminal() -> bool:
    return sys.stdin.isatty()


def page_size_option(f: F) -> F:
    return click.option("--page-size", type=click.IntRange(1, 200), help="Items per request.")(f)


def data_option(required: bool = False) -> Callable[[F], F]:
    return click.option("--data", "-d", required=required, help=DATA_HELP)


def timeout_option(f: F) -> F:
    return click.option(
        "--timeout", "wait_timeout", type=float, help="Seconds to wait (default: --run-timeout)."
    )(f)


# -- JSON arguments ---------------------------------------------------------------------------


def load_json(value: str | None, what: str) -> Any:
    """JSON given inline, as ``@file.json``, or ``-`` for standard input."""
    if value is None:
        return None
    if value == "-":
        text = sys.stdin.read()
    elif value.startswith("@"):
        path = Path(value[1:]).expanduser()
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"cannot read {path}: {exc.strerror}", code="missing_file") from None
    else:
        text = value
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise click.BadParameter(f"{what} is not valid JSON: {exc}") from None


def load_json_object(value: str | None, what: str) -> dict[str, Any]:
    data = load_json(value, what)
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise click.BadParameter(f"{what} must be a JSON object")
    return data


def load_json_array(value: str | None, what: str) -> list[Any] | None:
    data = load_json(value, what)
    if data is not None and not isinstance(data, list):
        raise click.BadParameter(f"{what} must be a JSON array")
    return data


# -- progress (stderr, and only on a terminal, so scripts and cron stay quiet) -----------------


def stderr_is_terminal() -> bool:
    return sys.stderr.isatty()


@contextmanager
def byte_progress(label: str) -> Iterator[Callable[[int, int | None], None] | None]:
    """A bar over bytes moved; yields the callback to hand to the client (None off a terminal)."""
    if not stderr_is_terminal():
        yield None
        return
    bar_cm: Any = None
    bar: Any = None
    shown = 0

    def update(done: int, total: int | None) -> None:
        nonlocal bar_cm, bar, shown
        if bar is None:
            if total is None:
                return
            bar_cm = click.progressbar(length=total, label=label, file=sys.stderr)
            bar = bar_cm.__enter__()
        bar.update(done - shown)
        shown = done

    try:
        yield update
    finally:
        if bar_cm is not None:
            bar_cm.__exit__(None, None, None)


def list_options(f: F) -> F:
    """``--limit``/``--cursor`` (one page) and ``--page-size`` (every page)."""
    f = page_size_option(f)
    f = click.option("--cursor", help="Continue after the page that printed this cursor.")(f)
    return click.option(
        "--limit", type=click.IntRange(1, 200), help="One page of at most this many (newest first)."
    )(f)


def emit_list(
    state: State,
    every: Callable[[int | None], list[Any]],
    one_page: Callable[[int | None, str | None], Any],
    limit: int | None,
    cursor: str | None,
    page_size: int | None,
    columns: Sequence[str] | None = None,
    view: Callable[[list[Any]], str] | None = None,
) -> None:
    """Every item (all pages), or with ``--limit``/``--cursor`` one page. As JSON a page is
    ``{items, next_cursor}``; as a table the next cursor is said on stderr."""
    if limit is None and cursor is None:
        emit(state, every(page_size), columns, view)
        return
    page = one_page(limit, cursor)
    if state.json:
        click.echo(to_json(page))
        return
    click.echo(view(page["items"]) if view is not None else to_table(page["items"], columns))
    if page.get("next_cursor"):
        click.echo(f"more: add --cursor {page['next_cursor']}", err=True)


def add_list_get_delete(
    group: click.Group,
    attr: str,
    noun: str,
    columns: Sequence[str],
    *,
    list_view: Callable[[list[Any]], str] | None = None,
    item_view: View | None = None,
    commands: Sequence[str] = ("list", "get", "delete"),
) -> None:
    """The ``list``, ``get`` and ``delete`` commands every collection group has."""

    @click.command("list", help=f"List your {noun}s, newest first (every page unless --limit/--cursor).")
    @list_options
    @table_option
    @pass_state
    def list_(state: State, limit: int | None, cursor: str | None, page_size: int | None) -> None:
        collection = getattr(state.client(), attr)
        emit_list(
            state,
            lambda size: collection.list(page_size=size),
            lambda lim, cur: collection.page(limit=lim, cursor=cur),
            limit, cursor, page_size, columns, list_view,
        )

    @click.command("get", help=f"Show one {noun}.")
    @click.argument("id")
    @table_option
    @pass_state
    def get(state: State, id: str) -> None:
        emit(state, getattr(state.client(), attr).get(id), view=item_view)

    @click.command("delete", help=f"Delete a {noun}.")
    @click.argument("id")
    @table_option
    @pass_state
    def delete(state: State, id: str) -> None:
        getattr(state.client(), attr).delete(id)
        emit(state, {"deleted": id})

    for command in (list_, get, delete):
        if command.name in commands:
            group.add_command(command)
