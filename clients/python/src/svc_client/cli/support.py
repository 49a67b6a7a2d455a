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


def emit(state: State, data: Any, columns: Sequence[str] | None = None) -> None:
    click.echo(to_table(data, columns) if state.table else to_json(data))


def _set_table(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if value:
        ctx.ensure_object(State).table = True


def table_option(f: F) -> F:
    """``--table`` on a command (the same as the global one)."""
    return click.option(
        "--table",
        is_flag=True,
        expose_value=False,
        callback=_set_table,
        help="Print a readable table instead of JSON.",
    )(f)


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


@contextmanager
def wait_progress(
    timeout: float, enabled: bool
) -> Iterator[Callable[[dict[str, Any], float], None] | None]:
    """A bar over the wait timeout showing the Run's status (None off a terminal)."""
    if not (enabled and stderr_is_terminal()):
        yield None
        return
    limit = max(int(timeout), 1)
    with click.progressbar(length=limit, label="Waiting", file=sys.stderr, show_eta=False) as bar:
        shown = 0

        def update(run: dict[str, Any], waited: float) -> None:
            nonlocal shown
            bar.label = f"Run {run.get('id')}: {run.get('status')}"
            step = min(int(waited), limit) - shown
            bar.update(step)
            shown += step

        yield update


def add_list_get_delete(group: click.Group, attr: str, noun: str, columns: Sequence[str]) -> None:
    """The ``list``, ``get`` and ``delete`` commands every collection group has."""

    @group.command("list", help=f"List all {noun}s (every page).")
    @page_size_option
    @table_option
    @pass_state
    def list_(state: State, page_size: int | None) -> None:
        emit(state, getattr(state.client(), attr).list(page_size=page_size), columns)

    @group.command("get", help=f"Show one {noun}.")
    @click.argument("id")
    @table_option
    @pass_state
    def get(state: State, id: str) -> None:
        emit(state, getattr(state.client(), attr).get(id))

    @group.command("delete", help=f"Delete a {noun}.")
    @click.argument("id")
    @pass_state
    def delete(state: State, id: str) -> None:
        getattr(state.client(), attr).delete(id)
        emit(state, {"deleted": id})
