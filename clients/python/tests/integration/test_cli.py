"""The `svc` CLI against the real server: login saves config, then commands use it; connections
with a secret from standard input; a Job run and watched, its Run shown with its steps."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any, Callable

import pytest
from click.testing import CliRunner, Result

from svc_client.cli import State, cli

from .conftest import DataServer, unique


def _runner() -> CliRunner:
    try:
        return CliRunner(mix_stderr=False)  # type: ignore[call-arg]  # click 8.1
    except TypeError:
        return CliRunner()  # click >= 8.2 keeps stderr apart


@pytest.fixture
def svc(server_url: str, make_token: Callable[..., str], tmp_path: Path) -> Callable[..., Result]:
    """`svc ARGS…` logged in with a token of every scope these tests use."""
    env = {"SVC_CONFIG_DIR": str(tmp_path), "SVC_URL": "", "SVC_TOKEN": ""}
    token = make_token("account:read", "recipes:read", "recipes:write", "sources:read", "sources:write",
                       "destinations:read", "destinations:write", "jobs:read", "jobs:write", "jobs:run")
    login = _runner().invoke(cli, ["auth", "login", "--url", server_url, "--token-stdin"], input=token + "\n",
                             env=env, obj=State())
    assert login.exit_code == 0, login.output
    assert token not in login.stdout

    def run(*args: str, input: str | None = None) -> Result:
        return _runner().invoke(cli, list(args), env=env, obj=State(), input=input)

    return run


def value(result: Result) -> Any:
    assert result.exit_code == 0, (result.stdout, result.stderr)
    return json.loads(result.stdout)


def test_login_then_commands(server_url: str, make_token: Callable[..., str], tmp_path: Path) -> None:
    token = make_token("account:read", "recipes:read", "recipes:write")
    env = {"SVC_CONFIG_DIR": str(tmp_path), "SVC_URL": "", "SVC_TOKEN": ""}
    runner = _runner()

    login = runner.invoke(cli, ["auth", "login", "--url", server_url, "--token-stdin"], input=token + "\n",
                          env=env, obj=State())
    assert login.exit_code == 0, login.output
    assert token not in login.stdout
    config = tmp_path / "config.toml"
    if os.name == "posix":
        assert stat.S_IMODE(config.stat().st_mode) == 0o600

    whoami = runner.invoke(cli, ["--json", "auth", "whoami"], env=env, obj=State())
    assert json.loads(whoami.stdout)["id"]
    assert "email" in runner.invoke(cli, ["auth", "whoami"], env=env, obj=State()).stdout  # a table

    created = runner.invoke(cli, ["recipes", "create", "--json", "--name", "svc-client cli",
                                  "--operations", '[{"type": "simplify", "tolerance": 1}]'], env=env, obj=State())
    recipe_id = value(created)["id"]
    assert runner.invoke(cli, ["recipes", "delete", recipe_id], env=env, obj=State()).exit_code == 0
    missing = runner.invoke(cli, ["recipes", "get", recipe_id], env=env, obj=State())
    assert missing.exit_code == 6

    bad = runner.invoke(cli, ["recipes", "create", "--name", "x", "--operations", '[{"type": "no_such_operation"}]'],
                        env=env, obj=State())
    assert bad.exit_code == 7


def test_connections(svc: Callable[..., Result], data_server: DataServer, postgis_config: dict[str, Any]) -> None:
    url = data_server.url("cities.geojson")
    source = value(svc("--json", "sources", "create", "--name", unique("cities"), "--type", "url", "--set", f"url={url}"))
    try:
        tested = svc("sources", "test", source["id"])
        assert tested.exit_code == 0 and "✓ ok" in tested.stdout
        listed = svc("sources", "list", "--limit", "1")
        assert source["id"] in listed.stdout and url in listed.stdout
        renamed = value(svc("--json", "sources", "update", source["id"], "--name", "renamed"))
        assert (renamed["name"], renamed["configuration"]["url"]) == ("renamed", url)
        failing = svc("sources", "test-draft", "--type", "url", "--set", f"url={data_server.url('missing.geojson')}")
        assert failing.exit_code == 1 and "✗" in failing.stdout
        refused = svc("sources", "discover", source["id"])
        assert refused.exit_code == 7 and "invalid_source" in refused.stderr
    finally:
        assert svc("sources", "delete", source["id"]).exit_code == 0

    config = {k: v for k, v in postgis_config.items() if k != "password"}
    typed = svc("destinations", "create", "--name", "db", "--type", "postgis", "--config", json.dumps(postgis_config))
    assert typed.exit_code == 2 and "shell history" in typed.stderr

    created = svc("--json", "destinations", "create", "--name", unique("db"), "--type", "postgis",
                  "--config", json.dumps(config), "--password-stdin", input=postgis_config["password"] + "\n")
    destination = value(created)
    try:
        assert destination["configuration"]["has_password"] is True
        shown = svc("destinations", "get", destination["id"])
        assert "stored (secret)" in shown.stdout
        assert postgis_config["password"] not in shown.stdout + created.stdout
        cleared = value(svc("--json", "destinations", "update", destination["id"], "--clear-secret", "password"))
        assert cleared["configuration"]["has_password"] is False
    finally:
        svc("destinations", "delete", destination["id"])


def test_a_failed_run_watched_from_the_cli(
    svc: Callable[..., Result], data_server: DataServer, postgis_config: dict[str, Any], tmp_path: Path
) -> None:
    missing = data_server.url("missing.geojson")  # answers 404: the Run fails at extract
    source = value(svc("--json", "sources", "create", "--name", unique("missing"), "--type", "url", "--set", f"url={missing}"))
    secrets = tmp_path / "pw"
    secrets.write_text(postgis_config["password"] + "\n")
    config = {k: v for k, v in postgis_config.items() if k != "password"}
    destination = value(svc("--json", "destinations", "create", "--name", unique("db"), "--type", "postgis",
                            "--config", json.dumps(config), "--secret-file", f"password={secrets}"))
    job_id = None
    try:
        job = value(svc("--json", "jobs", "create", "--name", unique("cli job"), "--source", source["id"],
                        "--operations", '[{"type": "rename_column", "from": "name", "to": "city"}]',
                        "--format", "GPKG", "--destination", destination["id"],
                        "--target", json.dumps({"schema": "public", "table": unique("cities")}),
                        "--daily", "02:30", "--timezone", "Europe/Berlin"))
        job_id = job["id"]
        assert job["schedule"] == {"kind": "daily", "timezone": "Europe/Berlin", "hour": 2, "minute": 30}
        table = svc("jobs", "list")
        assert job_id in table.stdout and "daily 02:30 Europe/Berlin" in table.stdout

        ran = svc("jobs", "run", job_id, "--wait", "--timeout", "120")
        assert ran.exit_code == 1, (ran.stdout, ran.stderr)
        assert "Error at step extract" in ran.stderr
        runs = value(svc("--json", "runs", "list", job_id))
        run_id = runs[0]["id"]
        shown = svc("runs", "show", job_id, run_id)
        assert shown.exit_code == 0
        assert "extract" in shown.stdout and "✗ failed" in shown.stdout and f"run-{run_id}" in shown.stdout
        retried = svc("runs", "retry", job_id, run_id, "--wait", "--timeout", "120")
        assert retried.exit_code == 1 and "retry" in retried.stdout

        disabled = value(svc("--json", "jobs", "disable", job_id))
        assert disabled is None or disabled.get("enabled") is False
        assert value(svc("--json", "jobs", "get", job_id))["enabled"] is False
    finally:
        if job_id:
            svc("jobs", "delete", job_id)
        svc("sources", "delete", source["id"])
        svc("destinations", "delete", destination["id"])
