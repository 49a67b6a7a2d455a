"""`svc sources|destinations|connectors`: secrets never from a flag, updates, tests, discovery, pages."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from .cli_support import out, svc
from .conftest import CONNECTORS, FakeServer

SAVED = {"id": "src_1", "name": "db", "type": "postgis", "created_at": "2026-05-01T10:00:00Z",
         "updated_at": "2026-05-01T10:00:00Z",
         "configuration": {"host": "db.internal", "port": 5432, "database": "gis", "username": "loader",
                           "ssl_mode": "prefer", "has_password": True}}


@pytest.fixture
def catalog(server: FakeServer) -> FakeServer:
    server.on("GET", "/connectors", {"items": CONNECTORS})
    for kind in ("sources", "destinations"):
        # Like the server, the answers carry has_password, never the password.
        server.on("POST", f"/{kind}", lambda r: httpx.Response(201, json=dict(SAVED, name=json.loads(r.content)["name"])))
        server.on("GET", f"/{kind}/src_1", SAVED)
        server.on("PUT", f"/{kind}/src_1", SAVED)
    return server


@pytest.fixture
def terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """Standard input is a person at a terminal (so secrets are asked for)."""
    monkeypatch.setattr("svc_client.cli.connections.stdin_is_terminal", lambda: True)


def posted(server: FakeServer) -> list[Any]:
    return [json.loads(r.content) for r in server.requests if r.method in ("POST", "PUT")]


@pytest.mark.parametrize("kind", ["sources", "destinations"])
def test_create_asks_for_secrets_on_a_terminal(catalog: FakeServer, terminal: None, kind: str) -> None:
    result = svc(catalog, kind, "create", "--name", "db", "--type", "postgis", "--set", "host=db.internal",
                 "--set", "port=5433", "--set", "database=gis", "--set", "username=loader", input="s3cret\n",
                 as_json=False)

    assert result.exit_code == 0, result.stderr
    assert catalog.body() == {"name": "db", "type": "postgis", "configuration": {
        "host": "db.internal", "port": 5433, "database": "gis", "username": "loader", "password": "s3cret"}}
    assert "password (secret; Enter to leave out)" in result.stderr
    assert "s3cret" not in result.stdout and "s3cret" not in result.stderr
    assert "stored (secret)" in result.stdout  # the answer's has_password, shown as a table row


def test_enter_leaves_a_secret_out(catalog: FakeServer, terminal: None) -> None:
    result = svc(catalog, "sources", "create", "--name", "db", "--type", "s3", "--set", "bucket=b", input="\n\n")
    assert result.exit_code == 0, result.stderr
    assert catalog.body()["configuration"] == {"bucket": "b"}
    assert result.stderr.count("Enter to leave out") == 2  # secret_key and session_token


def test_no_prompt_off_a_terminal_or_with_no_input(catalog: FakeServer, monkeypatch: pytest.MonkeyPatch) -> None:
    svc(catalog, "sources", "create", "--name", "db", "--type", "postgis", "--set", "host=h")
    assert catalog.body()["configuration"] == {"host": "h"}
    monkeypatch.setattr("svc_client.cli.connections.stdin_is_terminal", lambda: True)
    result = svc(catalog, "sources", "create", "--name", "db", "--type", "postgis", "--set", "host=h", "--no-input")
    assert result.exit_code == 0
    assert "Enter to leave out" not in result.stderr


@pytest.mark.parametrize("args", [
    ("--config", '{"host": "h", "password": "typed"}'),
    ("--set", "password=typed"),
    ("--data", '{"name": "db", "type": "postgis", "configuration": {"password": "typed"}}'),
])
def test_a_secret_typed_after_a_flag_is_refused(catalog: FakeServer, args: tuple[str, ...]) -> None:
    result = svc(catalog, "sources", "create", "--name", "db", "--type", "postgis", *args)
    assert result.exit_code == 2
    assert "shell history" in result.stderr and "--secret-file password=PATH" in result.stderr
    assert posted(catalog) == []  # refused before anything is sent


def test_secrets_from_files_and_stdin(catalog: FakeServer, tmp_path: Path, terminal: None) -> None:
    secret = tmp_path / "pw"
    secret.write_text("from-file\n")
    svc(catalog, "sources", "create", "--name", "db", "--type", "postgis", "--set", "host=h",
        "--secret-file", f"password={secret}")
    assert catalog.body()["configuration"] == {"host": "h", "password": "from-file"}

    svc(catalog, "sources", "create", "--name", "db", "--type", "postgis", "--set", "host=h", "--password-stdin",
        input="from-stdin\n")
    assert catalog.body()["configuration"] == {"host": "h", "password": "from-stdin"}

    svc(catalog, "sources", "create", "--name", "b", "--type", "s3", "--set", "bucket=b", "--secret-stdin",
        "secret_key", "--no-input", input="sk\n")
    assert catalog.body()["configuration"] == {"bucket": "b", "secret_key": "sk"}

    # A configuration file may hold secrets: it is not in the history, and it is not asked again.
    conn = tmp_path / "conn.json"
    conn.write_text(json.dumps({"host": "h", "password": "in-file"}))
    result = svc(catalog, "sources", "create", "--name", "db", "--type", "postgis", "--config", f"@{conn}")
    assert catalog.body()["configuration"] == {"host": "h", "password": "in-file"}
    assert "Enter to leave out" not in result.stderr


@pytest.mark.parametrize(("args", "exit_code", "says"), [
    (("--secret-file", "host=/etc/hostname"), 2, "not a secret of a postgis connection"),
    (("--secret-file", "password"), 2, "FIELD=PATH"),
    (("--secret-file", "password=/nonexistent/pw"), 3, "cannot read"),
    (("--config", "-", "--password-stdin"), 2, "standard input"),
    (("--password-stdin", "--secret-stdin", "secret_key"), 2, "standard input"),
])
def test_secret_option_mistakes(catalog: FakeServer, args: tuple[str, ...], exit_code: int, says: str) -> None:
    result = svc(catalog, "sources", "create", "--name", "db", "--type", "postgis", *args, input="{}")
    assert result.exit_code == exit_code, result.stderr
    assert says in result.stderr
    assert posted(catalog) == []


def test_unknown_type_names_the_known_ones(catalog: FakeServer) -> None:
    result = svc(catalog, "sources", "create", "--name", "x", "--type", "ftp", "--set", "host=h")
    assert result.exit_code == 2
    assert "url, postgis, s3" in result.stderr


def test_update_changes_only_what_is_given(catalog: FakeServer, tmp_path: Path) -> None:
    kept = {"host": "db.internal", "port": 5432, "database": "gis", "username": "loader", "ssl_mode": "prefer"}

    assert svc(catalog, "sources", "update", "src_1", "--name", "db v2").exit_code == 0
    assert catalog.body() == {"name": "db v2", "type": "postgis", "configuration": kept}

    svc(catalog, "sources", "update", "src_1", "--set", "port=6432", "--password-stdin", input="rotated\n")
    assert catalog.body()["configuration"] == dict(kept, port=6432, password="rotated")

    svc(catalog, "destinations", "update", "src_1", "--clear-secret", "password")
    assert catalog.body()["configuration"] == dict(kept, password=None)

    assert svc(catalog, "sources", "update", "src_1", "--set", "password=typed").exit_code == 2
    assert svc(catalog, "sources", "update", "src_1").exit_code == 2  # nothing to change


@pytest.mark.parametrize(("answer", "exit_code"), [
    ({"ok": True, "status": "ok", "message": "connected", "tried": {"host": "db", "port": 5432}, "duration_ms": 42},
     0),
    ({"ok": False, "status": "authentication_failed", "message": "password refused", "tried": {"host": "db"},
      "duration_ms": 7}, 1),
])
def test_connection_tests_exit_1_when_the_connection_fails(
    server: FakeServer, terminal: None, answer: dict[str, Any], exit_code: int
) -> None:
    server.on("GET", "/connectors", {"items": CONNECTORS})
    server.on("POST", "/sources/src_1/test", answer)
    server.on("POST", "/destinations/test", answer)

    saved = svc(server, "sources", "test", "src_1", as_json=False)
    assert saved.exit_code == exit_code
    assert answer["message"] in saved.stdout
    assert ("✓ ok" if answer["ok"] else "✗ authentication_failed") in saved.stdout
    assert "host=db" in saved.stdout

    draft = svc(server, "destinations", "test-draft", "--type", "postgis", "--set", "host=db", input="pw\n")
    assert draft.exit_code == exit_code
    assert out(draft) == answer
    assert server.body() == {"type": "postgis", "configuration": {"host": "db", "password": "pw"}}


def test_discover_tables(server: FakeServer) -> None:
    server.on("GET", "/sources/src_1/discover", lambda r: httpx.Response(200, json={
        "host": "db", "database": "gis", "schemas": ["public", "staging"],
        **({"schema": "public", "tables": [
            {"schema": "public", "name": "parcels", "has_geometry": True, "geometry_type": "MULTIPOLYGON"},
            {"schema": "public", "name": "owners", "has_geometry": False, "geometry_type": None}]}
           if r.url.params.get("schema") else {})}))
    schemas = svc(server, "sources", "discover", "src_1", as_json=False).stdout.splitlines()
    assert [line.strip() for line in schemas[2:]] == ["public", "staging"]
    tables = svc(server, "sources", "discover", "src_1", "--schema", "public", as_json=False).stdout.splitlines()
    assert tables[0].split() == ["schema", "name", "has_geometry", "geometry_type"]
    assert tables[2].split() == ["public", "parcels", "true", "MULTIPOLYGON"]
    assert tables[3].split() == ["public", "owners", "false"]


def test_hub_browse_commands(server: FakeServer) -> None:
    server.on("GET", "/destinations/dst_1/hub/items", lambda r: httpx.Response(200, json={"total": 1, "items": [{"id": "a1"}], "params": dict(r.url.params)}))
    server.on("GET", "/destinations/dst_1/hub/folders", {"username": "gis", "folders": [{"id": "f1", "title": "nightly"}]})
    server.on("GET", "/destinations/dst_1/hub/items/a1/layers", {"layers": [{"id": 0, "name": "parcels"}]})
    found = json.loads(svc(server, "destinations", "hub-items", "dst_1", "--q", "parcels", "--mine", "--start", "21").stdout)
    assert found["params"] == {"q": "parcels", "owner_only": "true", "start": "21", "num": "20"}
    assert json.loads(svc(server, "destinations", "hub-folders", "dst_1").stdout)["folders"][0]["title"] == "nightly"
    assert json.loads(svc(server, "destinations", "hub-layers", "dst_1", "a1").stdout)["layers"][0]["name"] == "parcels"


def test_list_every_page_or_one(server: FakeServer) -> None:
    pages = {None: {"items": [dict(SAVED, id="src_2")], "next_cursor": "c2"}, "c2": {"items": [SAVED], "next_cursor": None}}
    server.on("GET", "/sources", lambda r: httpx.Response(200, json=pages[r.url.params.get("cursor")]))

    assert [s["id"] for s in out(svc(server, "sources", "list"))] == ["src_2", "src_1"]
    assert out(svc(server, "sources", "list", "--limit", "1")) == pages[None]
    assert dict(server.last.url.params) == {"limit": "1"}
    assert out(svc(server, "sources", "list", "--cursor", "c2")) == pages["c2"]

    table = svc(server, "sources", "list", "--limit", "1", as_json=False)
    assert table.stdout.splitlines()[0].split() == ["id", "name", "type", "where", "updated_at"]
    assert "db.internal:5432/gis" in table.stdout
    assert "more: add --cursor c2" in table.stderr
    assert svc(server, "sources", "list", "--limit", "0").exit_code == 2


def test_get_shows_secrets_as_stored(server: FakeServer) -> None:
    server.on("GET", "/destinations/src_1", SAVED)
    lines = svc(server, "destinations", "get", "src_1", as_json=False).stdout.splitlines()
    assert ["password", "stored", "(secret)"] in [line.split() for line in lines]
    assert not any(line.startswith("has_password") for line in lines)


def test_connectors_list_and_show(server: FakeServer) -> None:
    server.on("GET", "/connectors", {"items": CONNECTORS})
    listed = svc(server, "connectors", "list", as_json=False, env={"SVC_TOKEN": ""})
    assert listed.exit_code == 0, listed.stderr
    assert listed.stdout.splitlines()[0].split() == ["type", "label", "kinds", "works", "secrets"]
    shown = svc(server, "connectors", "show", "postgis", as_json=False).stdout
    assert "password  string" in shown and "secret" in shown
    assert [line.split()[:3] for line in shown.splitlines() if line.startswith("port")] == [["port", "integer", "5432"]]
    assert svc(server, "connectors", "show", "ftp").exit_code == 2
