"""The root ``svc`` group, the state its commands share, and error → exit code mapping."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Sequence

import click
import httpx

from .. import __version__
from ..client import Client
from ..errors import (
    AuthenticationError,
    AuthorizationError,
    ConfigError,
    NetworkError,
    NotFoundError,
    ServerError,
    SvcError,
    ValidationError,
    WaitTimeoutError,
)

EXIT_OK = 0
EXIT_FAILURE = 1  # a waited Run failed/was cancelled, a connection test failed, or another error
EXIT_USAGE = 2
#: First match wins: MissingCredentialsError and LocalFileExistsError are ConfigErrors (3).
EXIT_CODES: tuple[tuple[type[SvcError], int], ...] = (
    (WaitTimeoutError, 10),
    (ConfigError, 3),
    (AuthenticationError, 4),
    (AuthorizationError, 5),
    (NotFoundError, 6),
    (ValidationError, 7),
    (NetworkError, 8),
    (ServerError, 9),
)


def exit_code_for(error: SvcError) -> int:
    for cls, code in EXIT_CODES:
        if isinstance(error, cls):
            return code
    return EXIT_FAILURE


@dataclass
class State:
    """Global options, and the one Client a command uses (made on first need)."""

    url: str | None = None
    allow_http: bool = False
    timeout: float = 30
    run_timeout: float = 600
    json: bool = False  # tables for people by default; --json for scripts
    transport: httpx.BaseTransport | None = None  # tests inject an httpx.MockTransport
    _client: Client | None = field(default=None, repr=False)

    def client(self) -> Client:
        if self._client is None:
            self._client = Client(
                url=self.url,
                timeout=self.timeout,
                run_timeout=self.run_timeout,
                allow_http=self.allow_http,
                transport=self.transport,
            )
            click.get_current_context().call_on_close(self._client.close)
        return self._client


pass_state = click.make_pass_decorator(State, ensure=True)


class SvcGroup(click.Group):
    """Turns library errors into a message on stderr and the exit code of their class."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except SvcError as error:
            _print_error(error)
            ctx.exit(exit_code_for(error))
        except (ValueError, TypeError) as error:  # arguments the library refused
            click.echo(f"Error: {error}", err=True)
            ctx.exit(EXIT_USAGE)


def _print_error(error: SvcError) -> None:
    tags = [type(error).__name__]
    if error.code:
        tags.append(error.code)
    if error.status_code:
        tags.append(f"HTTP {error.status_code}")
    click.echo(f"Error: {error.message} [{', '.join(tags)}]", err=True)
    if error.details:
        click.echo(f"details: {json.dumps(error.details, ensure_ascii=False, default=str)}", err=True)


@click.group(cls=SvcGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--url", metavar="URL", help="Installation origin (default: $SVC_URL, then saved login).")
@click.option("--allow-http", is_flag=True, help="Allow plain http to a non-loopback host.")
@click.option("--timeout", type=float, default=30, show_default=True, help="Seconds for ordinary requests.")
@click.option(
    "--run-timeout",
    type=float,
    default=600,
    show_default=True,
    help="Seconds for upload, preview, convert, download, and waiting for a Run.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the server's JSON instead of a table.")
@click.option("--table", is_flag=True, hidden=True, help="Print a table (the default).")
@click.version_option(__version__, prog_name="svc")
@pass_state
def cli(
    state: State,
    url: str | None,
    allow_http: bool,
    timeout: float,
    run_timeout: float,
    as_json: bool,
    table: bool,
) -> None:
    """Client of the geospatial conversion service.

    Output is a table; --json (before or after the command) prints the server's JSON. The
    token comes from $SVC_TOKEN or from `svc auth login`; it is never accepted on the command
    line, and neither are connection secrets. Exit codes: 0 ok, 1 a Run failed or a connection
    test did not pass (or another error), 2 usage, 3 config, 4 authentication, 5 authorization,
    6 not found, 7 validation, 8 network, 9 server, 10 wait timeout.
    """
    state.url = url
    state.allow_http = allow_http
    state.timeout = timeout
    state.run_timeout = run_timeout
    state.json = (state.json or as_json) and not table


def main(argv: Sequence[str] | None = None) -> None:
    cli.main(args=list(argv) if argv is not None else None, prog_name="svc")
