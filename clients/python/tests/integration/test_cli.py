"""The `svc` CLI against the real server: login saves config, then commands use it."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Callable

from click.testing import CliRunner

from svc_client.cli import State, cli


def test_login_then_commands(server_url: str, make_token: Callable[..., str], tmp_path: Path) -> None:
    token = make_token("account:read", "recipes:read", "recipes:write")
    env = {"SVC_CONFIG_DIR": str(tmp_path), "SVC_URL": "", "SVC_TOKEN": ""}
    runner = CliRunner()

    login = runner.invoke(cli, ["auth", "login", "--url", server_url, "--token-stdin"], input=token + "\n",
                          env=env, obj=State())
    assert login.exit_code == 0, login.output
    assert token not in login.stdout
    config = tmp_path / "config.toml"
    if os.name == "posix":
        assert stat.S_IMODE(config.stat().st_mode) == 0o600

    whoami = runner.invoke(cli, ["auth", "whoami"], env=env, obj=State())
    assert whoami.exit_code == 0, whoami.output
    assert json.loads(whoami.stdout)["id"]

    created = runner.invoke(cli, ["recipes", "create", "--name", "svc-client cli",
                                  "--operations", '[{"type": "simplify", "tolerance": 1}]'], env=env, obj=State())
    assert created.exit_code == 0, created.output
    recipe_id = json.loads(created.stdout)["id"]
    assert runner.invoke(cli, ["recipes", "delete", recipe_id], env=env, obj=State()).exit_code == 0
    missing = runner.invoke(cli, ["recipes", "get", recipe_id], env=env, obj=State())
    assert missing.exit_code == 6

    bad = runner.invoke(cli, ["recipes", "create", "--name", "x", "--operations", '[{"type": "no_such_operation"}]'],
                        env=env, obj=State())
    assert bad.exit_code == 7
