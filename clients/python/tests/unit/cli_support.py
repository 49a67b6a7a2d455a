"""Running `svc` in-process against the fake server."""

from __future__ import annotations

import json
from typing import Any

from click.testing import CliRunner, Result

from svc_client.cli import State, cli

from .conftest import TOKEN, URL, FakeServer


def make_runner() -> CliRunner:
    try:
        return CliRunner(mix_stderr=False)  # type: ignore[call-arg]  # click 8.1
    except TypeError:
        return CliRunner()  # click >= 8.2 keeps stderr apart


def svc(server: FakeServer, *args: str, env: dict[str, str] | None = None, input: str | None = None,
        as_json: bool = True) -> Result:
    """Run `svc` against the fake server; with ``--json`` unless ``as_json`` is false (tables)."""
    base_env = {"SVC_URL": URL, "SVC_TOKEN": TOKEN}
    base_env.update(env or {})
    argv = ["--json", *args] if as_json else list(args)
    return make_runner().invoke(
        cli, argv, obj=State(transport=server.transport()), env=base_env, input=input, catch_exceptions=False
    )


def out(result: Result) -> Any:
    return json.loads(result.stdout)
