"""The `svc` CLI over a mocked server: output, login, exit codes, every group's --help."""

from __future__ import annotations

import json
import os
import stat
import time
from pathlib import Path

import click
import httpx
import pytest

from svc_client import config as cfg
from svc_client.cli import State, cli

from .cli_support import make_runner, out, svc
from .conftest import CONNECTORS, TOKEN, URL, FakeServer, envelope


def _all_command_paths(group: click.Group, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    paths = [prefix]
    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            paths.extend(_all_command_paths(command, prefix + (name,)))
        else:
            paths.append(prefix + (name,))
    return paths


@pytest.mark.parametrize("path", _all_command_paths(cli), ids=lambda p: " ".join(p) or "svc")
def test_help_everywhere(server: FakeServer, path: tuple[str, ...]) -> None:
    result = svc(server, *path, "--help")
    assert result.exit_code == 0, result.output
    assert "Usage:" in result.stdout
    assert server.requests == []


def test_table_by_default_and_json_on_request(server: FakeServer) -> None:
    recipes = [{"id": "rcp_2", "name": "b", "description": None, "operations": [{"type": "buffer"}]},
               {"id": "rcp_1", "name": "a", "description": "x", "operations": []}]
    server.on("GET", "/recipes", {"items": recipes, "next_cursor": None})

    for args in (("recipes", "list"), ("recipes", "list", "--table"), ("--json", "recipes", "list", "--table")):
        table = svc(server, *args, as_json=False).stdout.splitlines()
        assert table[0].split() == ["id", "name", "description"]
        assert table[2].split()[:2] == ["rcp_2", "b"]

    for args in (("--json", "recipes", "list"), ("recipes", "list", "--json")):
        assert out(svc(server, *args, as_json=False)) == recipes


def test_login_asks_checks_and_saves_0600(server: FakeServer, tmp_path: Path) -> None:
    server.on("GET", "/auth/me", {"id": "usr_1", "email": "ana@example.org"})
    env = {"SVC_URL": "", "SVC_TOKEN": "", "SVC_CONFIG_DIR": str(tmp_path)}

    result = svc(server, "auth", "login", env=env, input=f"{URL}/\n{TOKEN}\n")

    assert result.exit_code == 0, result.stderr
    assert TOKEN not in result.stdout and TOKEN not in result.stderr
    # click 8.1's test runner echoes the typed answers on stdout; a terminal would not.
    assert json.loads(result.stdout[result.stdout.index("{"):])["user"]["email"] == "ana@example.org"
    assert server.last.headers["authorization"] == f"Bearer {TOKEN}"
    path = tmp_path / "config.toml"
    assert cfg.load_saved(path) == {"url": URL, "token": TOKEN}
    if os.name == "posix":
        assert stat.S_IMODE(path.stat().st_mode) == 0o600

    # The saved login is then used without any variable.
    whoami = svc(server, "auth", "whoami", env=env)
    assert out(whoami)["id"] == "usr_1"

    logout = svc(server, "auth", "logout", env=env)
    assert out(logout)["token_removed"] is True
    assert cfg.load_saved(path) == {"url": URL}


def test_login_token_from_stdin(server: FakeServer, tmp_path: Path) -> None:
    server.on("GET", "/auth/me", {"id": "usr_1"})
    env = {"SVC_CONFIG_DIR": str(tmp_path)}
    result = svc(server, "auth", "login", "--url", URL, "--token-stdin", env=env, input=TOKEN + "\n")
    assert result.exit_code == 0, result.stderr
    assert cfg.load_saved(tmp_path / "config.toml")["token"] == TOKEN


def test_login_with_a_bad_token_saves_nothing(server: FakeServer, tmp_path: Path) -> None:
    server.on("GET", "/auth/me", envelope(401, "unauthorized", "invalid token"))
    env = {"SVC_CONFIG_DIR": str(tmp_path)}
    result = svc(server, "auth", "login", "--url", URL, env=env, input="svcpat_bad\n")
    assert result.exit_code == 4
    assert "unauthorized" in result.stderr
    assert not (tmp_path / "config.toml").exists()


def test_login_refuses_api_v1_url(server: FakeServer, tmp_path: Path) -> None:
    result = svc(server, "auth", "login", "--url", URL + "/api/v1", env={"SVC_CONFIG_DIR": str(tmp_path)}, input="t\n")
    assert result.exit_code == 3
    assert "/api/v1" in result.stderr


@pytest.mark.parametrize(
    ("status", "code", "exit_code"),
    [(401, "unauthorized", 4), (403, "forbidden", 5), (404, "recipe_not_found", 6), (400, "invalid_parameter", 7),
     (409, "conflict", 7), (422, "validation_error", 7), (500, "internal_error", 9), (405, "method_not_allowed", 1)],
)
def test_exit_code_per_error_class(server: FakeServer, status: int, code: str, exit_code: int) -> None:
    server.on("GET", "/recipes/rcp_1", envelope(status, code, "nope", {"hint": "x"}))
    result = svc(server, "recipes", "get", "rcp_1")
    assert result.exit_code == exit_code
    assert result.stdout == ""
    assert code in result.stderr and "nope" in result.stderr and '"hint"' in result.stderr


def test_exit_code_network() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("[Errno 111] Connection refused")

    result = make_runner().invoke(cli, ["auth", "whoami"], obj=State(transport=httpx.MockTransport(refuse)),
                                  env={"SVC_URL": URL, "SVC_TOKEN": TOKEN})
    assert result.exit_code == 8
    assert "NetworkError" in result.stderr


def test_exit_code_config(server: FakeServer) -> None:
    assert svc(server, "auth", "whoami", env={"SVC_URL": ""}).exit_code == 3
    missing_token = svc(server, "auth", "whoami", env={"SVC_TOKEN": ""})
    assert missing_token.exit_code == 3
    assert "svc auth login" in missing_token.stderr
    assert svc(server, "--url", "http://gis.example.org", "system").exit_code == 3


def test_exit_code_usage(server: FakeServer) -> None:
    assert svc(server, "nosuch").exit_code == 2
    assert svc(server, "recipes", "get").exit_code == 2
    assert svc(server, "recipes", "create", "--name", "x").exit_code == 2
    assert svc(server, "recipes", "create", "--name", "x", "--operations", "{not json").exit_code == 2


def test_public_commands_without_token(server: FakeServer) -> None:
    server.on("GET", "/formats", {"items": [
        {"id": "GPKG", "kind": "vector", "read": True, "write": True},
        {"id": "GTiff", "kind": "raster", "read": True, "write": True},
        {"id": "ESRIJSON", "kind": "vector", "read": True, "write": False},
    ]})
    server.on("GET", "/system", {"version": "1.2.3"})
    result = svc(server, "formats", "list", "--kind", "vector", "--writable", env={"SVC_TOKEN": ""})
    assert result.exit_code == 0, result.stderr
    assert [f["id"] for f in out(result)] == ["GPKG"]
    assert out(svc(server, "system", env={"SVC_TOKEN": ""}))["version"] == "1.2.3"


def test_sources_create_from_options_and_file(server: FakeServer, tmp_path: Path) -> None:
    server.on("GET", "/connectors", {"items": CONNECTORS})
    server.on("POST", "/sources", lambda r: httpx.Response(201, json={"id": "src_1", **json.loads(r.content)}))
    result = svc(server, "sources", "create", "--name", "roads", "--type", "url", "--config", '{"url": "https://d.example/r.geojson"}')
    assert out(result)["id"] == "src_1"
    assert server.body() == {"name": "roads", "type": "url", "configuration": {"url": "https://d.example/r.geojson"}}

    body = tmp_path / "src.json"
    body.write_text(json.dumps({"name": "db", "type": "postgis", "configuration": {"host": "h", "password": "p"}}))
    svc(server, "sources", "create", "--data", f"@{body}", "--name", "db2")
    assert server.body()["name"] == "db2"
    assert svc(server, "sources", "create", "--name", "x").exit_code == 2
    assert svc(server, "sources", "create", "--data", "@/nonexistent.json").exit_code == 3


def test_destinations_discover(server: FakeServer) -> None:
    server.on("GET", "/destinations/dst_1/discover", {"host": "h", "database": "d", "schemas": ["public"]})
    result = svc(server, "destinations", "discover", "dst_1", "--schema", "public")
    assert out(result)["schemas"] == ["public"]
    assert server.last.url.params["schema"] == "public"


def test_jobs_create_applies_stage_flags(server: FakeServer) -> None:
    server.on("POST", "/jobs", {"id": "job_1"}, status=201)
    body = {"name": "n", "source_id": "src_1", "output_format": "GPKG", "python_script": "x", "pipeline": {"python": False}}
    assert svc(server, "jobs", "create", "--data", "-", input=json.dumps(body)).exit_code == 0
    assert server.body() == {"name": "n", "source_id": "src_1", "output_format": "GPKG", "pipeline": {"python": False}}


def test_jobs_stages(server: FakeServer) -> None:
    server.on("GET", "/jobs/job_1", {"id": "job_1", "operations": [{"type": "buffer"}], "pipeline": {"convert": False}, "output_format": "GPKG"})
    assert out(svc(server, "jobs", "stages", "job_1")) == {"transform": True, "convert": False, "python": False}


@pytest.fixture
def no_sleep(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    slept: list[float] = []
    monkeypatch.setattr("time.sleep", slept.append)
    return slept


@pytest.mark.parametrize(("final", "exit_code"), [("succeeded", 0), ("failed", 1), ("cancelled", 1)])
def test_jobs_run_wait(server: FakeServer, no_sleep: list[float], final: str, exit_code: int) -> None:
    server.on("POST", "/jobs/job_1/run", {"id": "run_1", "status": "queued"}, status=201)
    server.on("GET", "/jobs/job_1/runs/run_1", [httpx.Response(200, json={"id": "run_1", "status": "running"}),
                                                httpx.Response(200, json={"id": "run_1", "status": final})])
    result = svc(server, "jobs", "run", "job_1", "--wait")
    assert result.exit_code == exit_code
    assert out(result)["status"] == final
    assert no_sleep == [0.5, 1.0]


def test_jobs_run_without_wait(server: FakeServer) -> None:
    server.on("POST", "/jobs/job_1/run", {"id": "run_1", "status": "queued"}, status=201)
    result = svc(server, "jobs", "run", "job_1", "--idempotency-key", "abc")
    assert result.exit_code == 0
    assert out(result)["status"] == "queued"
    assert server.last.headers["idempotency-key"] == "abc"


def test_jobs_run_wait_timeout(server: FakeServer, no_sleep: list[float]) -> None:
    server.on("POST", "/jobs/job_1/run", {"id": "run_1", "status": "queued"}, status=201)
    server.on("GET", "/jobs/job_1/runs/run_1", {"id": "run_1", "status": "running"})
    result = svc(server, "jobs", "run", "job_1", "--wait", "--timeout", "2")
    assert result.exit_code == 10
    assert "wait_timeout" in result.stderr


def test_jobs_runs_retry_and_actions(server: FakeServer, no_sleep: list[float]) -> None:
    server.on("GET", "/jobs/job_1/runs", {"items": [{"id": "run_1", "status": "failed"}], "next_cursor": None})
    server.on("GET", "/jobs/job_1/runs/run_1", {"id": "run_1", "status": "failed"})
    server.on("POST", "/jobs/job_1/runs/run_1/retry", {"id": "run_2", "status": "queued"}, status=201)
    server.on("GET", "/jobs/job_1/runs/run_2", {"id": "run_2", "status": "succeeded"})
    for action in ("enable", "disable", "sync-reset", "sync-reinitialize"):
        path = "/jobs/job_1/" + action.replace("sync-", "sync/")
        server.on("POST", path, {"ok": action})
        assert out(svc(server, "jobs", action, "job_1")) == {"ok": action}

    assert out(svc(server, "jobs", "runs", "job_1"))[0]["id"] == "run_1"
    assert out(svc(server, "jobs", "run-get", "job_1", "run_1"))["status"] == "failed"
    assert svc(server, "jobs", "wait", "job_1", "run_1").exit_code == 1
    assert out(svc(server, "jobs", "retry", "job_1", "run_1"))["status"] == "queued"
    assert out(svc(server, "jobs", "retry", "job_1", "run_1", "--wait"))["status"] == "succeeded"


def test_workspace_commands(server: FakeServer, tmp_path: Path) -> None:
    ws = {"id": "ws_1", "status": "inspected", "layers": [{"name": "roads"}]}
    data = tmp_path / "roads.geojson"
    data.write_text('{"type": "FeatureCollection", "features": []}')
    server.on("POST", "/workspaces", ws, status=201)
    server.on("GET", "/workspaces/ws_1", ws)
    server.on("GET", "/workspaces/ws_1/data-preview", {
        "fields": [{"name": "name", "type": "String"}, {"name": "geom", "type": "Geometry"}],
        "rows": [{"name": "Main St", "geom": "LINESTRING"}]})
    server.on("GET", "/workspaces/ws_1/transform-spatial-preview", {"geojson": {"type": "FeatureCollection", "features": []}})
    server.on("PUT", "/workspaces/ws_1/transformations", lambda r: httpx.Response(200, json=json.loads(r.content)))
    server.on("GET", "/workspaces/ws_1/transformations", {"operations": []})
    server.on("POST", "/workspaces/ws_1/convert", dict(ws, status="completed"))
    server.on("POST", "/workspaces/ws_1/deliver", {"delivery": {"ok": True}})
    server.on("GET", "/workspaces/ws_1/download", httpx.Response(200, content=b"GPKG-bytes", headers={
        "content-disposition": 'attachment; filename="roads.gpkg"', "content-length": "10"}))

    assert out(svc(server, "workspaces", "upload", str(data)))["id"] == "ws_1"
    assert b'filename="roads.geojson"' in server.last.content
    parquet = tmp_path / "parcels.parquet"
    parquet.write_bytes(b"PAR1")
    svc(server, "workspaces", "upload", str(parquet), "--geometry-column", "shape_wkb", "--source-crs", "EPSG:2056")
    sent = server.last.content
    assert b'name="geometry_column"\r\n\r\nshape_wkb' in sent and b'name="source_crs"\r\n\r\nEPSG:2056' in sent
    assert b'name="x_column"' not in sent
    assert sent.index(b'name="geometry_column"') < sent.index(b'name="file"')
    assert svc(server, "workspaces", "upload", str(tmp_path / "absent.gpkg")).exit_code == 3
    server.on("POST", "/workspaces", lambda r: httpx.Response(201, json=dict(ws, id="ws_2")))
    assert out(svc(server, "workspaces", "import", "src_1", "--resource", '{"table": "roads"}'))["id"] == "ws_2"
    assert server.body() == {"source_id": "src_1", "source_resource": {"table": "roads"}}
    svc(server, "workspaces", "import", "src_1", "--resource", "public.roads")
    assert server.body() == {"source_id": "src_1", "source_resource": "public.roads"}
    assert out(svc(server, "workspaces", "get", "ws_1"))["status"] == "inspected"

    table = svc(server, "workspaces", "preview", "ws_1", "--layer", "roads", "--limit", "5", as_json=False).stdout
    assert table.splitlines()[0].split() == ["name", "geom"]
    assert "Main St" in table
    assert dict(server.last.url.params) == {"layer": "roads", "limit": "5"}
    mapped = out(svc(server, "workspaces", "preview", "ws_1", "--map", "--transformed"))
    assert mapped["geojson"]["type"] == "FeatureCollection"

    ops = '[{"type": "rename_column", "from": "name", "to": "title"}]'
    result = svc(server, "workspaces", "set-transformations", "ws_1", "--layer", "roads", "--operations", ops)
    assert out(result) == {"layers": ["roads"], "operations": json.loads(ops)}
    assert svc(server, "workspaces", "set-transformations", "ws_1", "--operations", ops, "--sql", "SELECT 1").exit_code == 2
    script = tmp_path / "step.py"
    script.write_text("import sys\n")
    svc(server, "workspaces", "set-transformations", "ws_1", "--python-file", str(script))
    assert server.body() == {"python": {"script": "import sys\n", "filename": "step.py"}}
    assert out(svc(server, "workspaces", "clear-transformations", "ws_1")) == {"operations": []}
    assert out(svc(server, "workspaces", "transformations", "ws_1")) == {"operations": []}

    assert out(svc(server, "workspaces", "convert", "ws_1", "--format", "GPKG", "--layer", "roads"))["status"] == "completed"
    assert server.body() == {"output_format": "GPKG", "layers": ["roads"]}
    options = '{"dataset": {"ROW_GROUP_SIZE": "5000", "COMPRESSION": "SNAPPY"}}'
    svc(server, "workspaces", "convert", "ws_1", "--format", "GeoParquet", "--creation-options", options)
    assert server.body() == {"output_format": "GeoParquet", "creation_options": json.loads(options)}
    assert svc(server, "workspaces", "convert", "ws_1", "--format", "GeoParquet", "--creation-options", "[]").exit_code == 2
    assert out(svc(server, "workspaces", "deliver", "ws_1", "--destination", "dst_1", "--target", '{"table": "t"}'))["delivery"]["ok"]
    assert server.body() == {"destination_id": "dst_1", "destination_target": {"table": "t"}}

    target = tmp_path / "out"
    target.mkdir()
    result = svc(server, "workspaces", "download", "ws_1", str(target))
    assert out(result) == {"path": str(target / "roads.gpkg"), "bytes": 10}
    again = svc(server, "workspaces", "download", "ws_1", str(target / "roads.gpkg"))
    assert again.exit_code == 3
    assert "exists" in again.stderr
    assert svc(server, "workspaces", "download", "ws_1", str(target / "roads.gpkg"), "--overwrite").exit_code == 0


def test_transformations_list_table(server: FakeServer) -> None:
    server.on("GET", "/transformations", {"items": [{"id": "buffer", "label": "Buffer", "category": "geometry",
                                                     "requires_geometry": True, "parameters": {}}]})
    table = svc(server, "transformations", "list", as_json=False).stdout.splitlines()
    assert table[0].split() == ["id", "category", "requires_geometry", "label"]
    assert table[2].split() == ["buffer", "geometry", "true", "Buffer"]


@pytest.mark.parametrize(("args", "route", "label"), [
    (["import", "src_1"], "/workspaces", "Importing"),
    (["convert", "ws_1", "--format", "GPKG"], "/workspaces/ws_1/convert", "Converting"),
    (["deliver", "ws_1", "--destination", "dst_1"], "/workspaces/ws_1/deliver", "Delivering"),
], ids=["import", "convert", "deliver"])
def test_long_workspace_commands_show_progress_on_a_terminal(
    server: FakeServer, monkeypatch: pytest.MonkeyPatch, args: list[str], route: str, label: str
) -> None:
    monkeypatch.setattr("svc_client.workspaces.PROGRESS_POLL_SECONDS", 0.01)
    ws = {"id": "ws_1", "status": "inspected", "layers": [{"name": "roads"}]}

    def held(request: httpx.Request) -> httpx.Response:
        progress_id = json.loads(request.content).get("progress_id")
        if progress_id is not None:
            path = f"/progress/{progress_id}"
            server.on("GET", path, {"status": "running", "bytes_written": 400, "bytes_total": 1000})
            for _ in range(500):  # until the bar has had a figure to show
                if any(r.url.path == "/api/v1" + path for r in server.requests):
                    break
                time.sleep(0.01)
        return httpx.Response(201 if route == "/workspaces" else 200, json=ws)

    server.on("POST", route, held)
    quiet = svc(server, "workspaces", *args)  # off a terminal: no bar, no progress_id
    assert quiet.exit_code == 0 and quiet.stderr == ""
    assert "progress_id" not in server.body()

    monkeypatch.setattr("svc_client.cli.support.stderr_is_terminal", lambda: True)
    shown = svc(server, "workspaces", *args)
    assert shown.exit_code == 0
    assert label in shown.stderr  # click draws the bar itself only on a real terminal; its label shows here
    assert out(shown)["id"] == "ws_1"
