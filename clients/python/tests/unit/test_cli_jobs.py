"""`svc jobs` and `svc runs`: bodies from options, tables, the live status line, exit codes."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, Iterator

import click
import httpx
import pytest

from svc_client.cli import cli

from .cli_support import out, svc
from .conftest import CONNECTORS, FakeServer, envelope

JOB = {
    "id": "job_1", "name": "nightly parcels", "source_id": "src_1", "source_resource": {"table": "parcels"},
    "transform_mode": "manual", "operations": [{"type": "simplify", "tolerance": 1}], "output_format": "GPKG",
    "destination_id": "dst_1", "destination_target": {"key": "parcels.gpkg"},
    "schedule": {"kind": "daily", "timezone": "Europe/Berlin", "hour": 2, "minute": 30}, "pipeline": {},
    "enabled": True, "disabled_reason": None, "next_run_at": "2026-05-02T00:30:00.000Z",
    "last_run": {"id": "run_1", "status": "failed", "finished_at": "2026-05-01T00:31:00.000Z"},
    "sync": {"supported": False, "cursor": None, "updated_at": None, "reset_pending": False,
             "reinitialize_pending": False},
    "created_at": "2026-04-30T12:00:00.000Z", "updated_at": "2026-04-30T12:00:00.000Z",
}


def a_run(status: str, run_id: str = "run_2", **more: Any) -> dict[str, Any]:
    steps = [
        {"name": "extract", "status": "succeeded", "started_at": "2026-05-01T10:00:00Z",
         "finished_at": "2026-05-01T10:00:01.5Z", "duration_ms": 1500},
        {"name": "transform", "status": "succeeded" if status in ("succeeded", "failed") else "running",
         "started_at": "2026-05-01T10:00:01.5Z", "finished_at": None, "duration_ms": 200},
        {"name": "deliver", "status": {"succeeded": "succeeded", "failed": "failed"}.get(status, "pending"),
         "started_at": None, "finished_at": None, "duration_ms": None},
    ]
    run: dict[str, Any] = {
        "id": run_id, "job_id": "job_1", "status": status, "trigger": "manual", "attempt": 1, "retry_of": None,
        "created_at": "2026-05-01T10:00:00Z", "started_at": "2026-05-01T10:00:00Z",
        "finished_at": "2026-05-01T10:00:04Z" if status in ("succeeded", "failed", "cancelled") else None,
        "steps": steps, "stats": {"features_read": 2, "features_written": 2 if status == "succeeded" else 0,
                                  "bytes_read": 295, "bytes_written": 0},
        "skipped_reason": None, "error": None, "workflow": {"workflow_id": f"run-{run_id}", "run_id": "abc"},
    }
    if status == "failed":
        run["error"] = {"code": "delivery_failed", "message": "bucket gis-exports refused the upload",
                        "step": "deliver", "retryable": True}
    run.update(more)
    return run


@pytest.fixture(autouse=True)
def utc(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Local times are printed in this machine's zone: make it a known one."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.fixture
def no_sleep(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    slept: list[float] = []
    monkeypatch.setattr("time.sleep", slept.append)
    return slept


def test_create_from_options(server: FakeServer, tmp_path: Path) -> None:
    server.on("POST", "/jobs", lambda r: httpx.Response(201, json=dict(JOB, **json.loads(r.content))))
    script = tmp_path / "tidy.py"
    script.write_text("import sys\n")

    result = svc(server, "jobs", "create", "--name", "nightly parcels", "--source", "src_1", "--resource", "parcels",
                 "--operations", '[{"type": "simplify", "tolerance": 1}]', "--python-file", str(script),
                 "--format", "GPKG", "--destination", "dst_1", "--target", '{"key": "parcels.gpkg"}',
                 "--daily", "2:30", "--timezone", "Europe/Berlin", "--disable")

    assert result.exit_code == 0, result.stderr
    assert server.body() == {
        "name": "nightly parcels", "source_id": "src_1", "source_resource": "parcels", "transform_mode": "manual",
        "operations": [{"type": "simplify", "tolerance": 1}], "python_script": "import sys\n",
        "python_filename": "tidy.py", "output_format": "GPKG", "destination_id": "dst_1",
        "destination_target": {"key": "parcels.gpkg"},
        "schedule": {"kind": "daily", "timezone": "Europe/Berlin", "hour": 2, "minute": 30}, "enabled": False,
    }


def test_create_options_over_data(server: FakeServer) -> None:
    server.on("POST", "/jobs", JOB, status=201)
    data = {"name": "n", "source_id": "src_1", "transform_mode": "sql", "sql": "SELECT * FROM source",
            "output_format": "GPKG", "python_script": "x", "destination_id": "dst_1", "pipeline": {"convert": True}}
    svc(server, "jobs", "create", "--data", json.dumps(data), "--recipe", "rcp_1", "--resource", '{"table": "t"}',
        "--without", "python")
    # --recipe switches the mode: the body's sql goes (the server refuses sql with recipe).
    assert server.body() == {"name": "n", "source_id": "src_1", "transform_mode": "recipe",
                             "recipe_id": "rcp_1", "output_format": "GPKG", "destination_id": "dst_1",
                             "source_resource": {"table": "t"}, "pipeline": {"convert": True, "python": False}}


@pytest.mark.parametrize(("args", "says"), [
    (("--operations", "[]", "--sql", "SELECT 1"), "three transform modes"),
    (("--daily", "02:30"), "--timezone"),
    (("--daily", "24:00", "--timezone", "UTC"), "HH:MM"),
    (("--timezone", "UTC"), "--daily"),
    (("--no-schedule", "--daily", "01:00"), "--no-schedule"),
    (("--operations", '{"type": "buffer"}'), "JSON array"),
])
def test_create_option_mistakes(server: FakeServer, args: tuple[str, ...], says: str) -> None:
    result = svc(server, "jobs", "create", "--name", "n", *args)
    assert result.exit_code == 2
    assert says in result.stderr
    assert server.requests == []


def test_update_some_fields_or_the_whole_body(server: FakeServer) -> None:
    server.on("GET", "/jobs/job_1", JOB)
    server.on("PUT", "/jobs/job_1", JOB)

    svc(server, "jobs", "update", "job_1", "--no-schedule", "--name", "on demand")
    assert [r.method for r in server.requests] == ["GET", "PUT"]
    sent = server.body()
    assert (sent["name"], sent["schedule"], sent["operations"]) == ("on demand", None, JOB["operations"])
    assert "next_run_at" not in sent and "last_run" not in sent

    svc(server, "jobs", "update", "job_1", "--data", '{"name": "whole", "source_id": "s", "destination_id": "d"}',
        "--format", "FlatGeobuf")
    assert server.last.method == "PUT" and server.requests[-2].method == "PUT"  # no GET for a whole body
    assert server.body() == {"name": "whole", "source_id": "s", "destination_id": "d", "output_format": "FlatGeobuf"}

    assert svc(server, "jobs", "update", "job_1").exit_code == 2


def test_list_table_names_schedule_and_local_next_run(server: FakeServer) -> None:
    server.on("GET", "/jobs", {"items": [JOB, dict(JOB, id="job_2", name="on demand", schedule=None, next_run_at=None,
                                                   enabled=False, last_run=None)], "next_cursor": None})
    server.on("GET", "/sources", {"items": [{"id": "src_1", "name": "parcels db"}], "next_cursor": None})
    server.on("GET", "/destinations", envelope(403, "forbidden", "The token lacks the scope destinations:read"))

    lines = svc(server, "jobs", "list", as_json=False).stdout.splitlines()

    assert lines[0].startswith("id")
    assert "source → destination" in lines[0] and "next run (local)" in lines[0]
    # Names where the token can read them, ids where it cannot.
    assert "parcels db → dst_1" in lines[2]
    assert "daily 02:30 Europe/Berlin" in lines[2]
    assert "2026-05-02 00:30 UTC" in lines[2]
    assert lines[2].split()[-2:] == ["true", "failed"]
    assert "—" in lines[3] and lines[3].split()[-1] == "false"


def test_get_table(server: FakeServer) -> None:
    server.on("GET", "/jobs/job_1", dict(JOB, enabled=False, disabled_reason="5 scheduled Runs failed in a row"))
    text = svc(server, "jobs", "get", "job_1", as_json=False).stdout
    assert "no (5 scheduled Runs failed in a row)" in text
    assert "manual: simplify" in text
    assert "(stage off)" in text  # no Python step
    assert "run_1 failed 2026-05-01 00:31 UTC" in text
    assert "not supported by this Source" in text


def test_actions(server: FakeServer) -> None:
    server.on("POST", "/jobs/job_1/disable", dict(JOB, enabled=False))
    server.on("POST", "/jobs/job_1/sync/reset", status=204)
    assert "enabled" in svc(server, "jobs", "disable", "job_1", as_json=False).stdout
    assert out(svc(server, "jobs", "sync-reset", "job_1")) == {"id": "job_1", "done": "sync-reset"}


@pytest.fixture
def terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("svc_client.cli.jobs.stderr_is_terminal", lambda: True)


@pytest.mark.parametrize(("final", "exit_code"), [("succeeded", 0), ("failed", 1), ("cancelled", 1)])
def test_run_wait_live_line_and_exit_code(
    server: FakeServer, no_sleep: list[float], terminal: None, final: str, exit_code: int
) -> None:
    server.on("POST", "/jobs/job_1/run", a_run("queued"), status=201)
    server.on("GET", "/jobs/job_1/runs/run_2", [httpx.Response(200, json=a_run("running")),
                                                httpx.Response(200, json=a_run(final))])

    result = svc(server, "jobs", "run", "job_1", "--wait", as_json=False)

    assert result.exit_code == exit_code
    assert "Run run_2 running · extract ✓ transform … deliver ·" in result.stderr  # the live line
    assert f"Run run_2 {final} after" in result.stderr
    assert result.stdout.splitlines()[0].split() == ["field", "value"]
    assert "step" in result.stdout and "extract" in result.stdout
    if final == "failed":
        assert "Error at step deliver: bucket gis-exports refused the upload [delivery_failed, retryable]" in result.stderr
    assert no_sleep == [0.5, 1.0]


def test_run_wait_off_a_terminal_is_quiet_but_says_why_it_failed(server: FakeServer, no_sleep: list[float]) -> None:
    server.on("POST", "/jobs/job_1/run", a_run("queued"), status=201)
    server.on("GET", "/jobs/job_1/runs/run_2", a_run("failed"))
    result = svc(server, "jobs", "run", "job_1", "--wait")
    assert result.exit_code == 1
    assert out(result)["error"]["code"] == "delivery_failed"
    assert result.stderr.strip() == "Error at step deliver: bucket gis-exports refused the upload [delivery_failed, retryable]"


def test_run_wait_timeout_exit_10(server: FakeServer, no_sleep: list[float], terminal: None) -> None:
    server.on("POST", "/jobs/job_1/run", a_run("queued"), status=201)
    server.on("GET", "/jobs/job_1/runs/run_2", a_run("running"))
    result = svc(server, "jobs", "run", "job_1", "--wait", "--timeout", "2", as_json=False)
    assert result.exit_code == 10
    assert "wait_timeout" in result.stderr and '"run_id": "run_2"' in result.stderr


def test_run_without_wait(server: FakeServer) -> None:
    server.on("POST", "/jobs/job_1/run", a_run("queued"), status=201)
    result = svc(server, "jobs", "run", "job_1", "--idempotency-key", "nightly-2026-05-01", as_json=False)
    assert result.exit_code == 0
    assert "queued" in result.stdout and result.stderr == ""
    assert server.last.headers["idempotency-key"] == "nightly-2026-05-01"


def test_runs_list_show_wait_retry(server: FakeServer, no_sleep: list[float]) -> None:
    failed = a_run("failed", "run_1")
    server.on("GET", "/jobs/job_1/runs", {"items": [a_run("succeeded"), failed], "next_cursor": None})
    server.on("GET", "/jobs/job_1/runs/run_1", failed)
    server.on("POST", "/jobs/job_1/runs/run_1/retry", a_run("queued", "run_3", trigger="retry", retry_of="run_1"),
              status=201)
    server.on("GET", "/jobs/job_1/runs/run_3", a_run("succeeded", "run_3", trigger="retry", retry_of="run_1"))

    listed = svc(server, "runs", "list", "job_1", as_json=False).stdout.splitlines()
    assert listed[0].split()[:4] == ["id", "status", "trigger", "attempt"]
    assert listed[2].split()[:2] == ["run_2", "succeeded"] and "4.0 s" in listed[2]
    assert listed[3].split()[:2] == ["run_1", "failed"] and "delivery_failed at deliver" in listed[3]
    assert svc(server, "jobs", "runs", "job_1", as_json=False).stdout.splitlines() == listed
    # Without a Job: every Job's Runs (a deleted Job's too), from GET /runs.
    server.on("GET", "/runs", {"items": [failed], "next_cursor": None})
    everywhere = svc(server, "runs", "list", as_json=False).stdout.splitlines()
    assert everywhere[2].split()[:2] == ["run_1", "failed"] and len(everywhere) == 3

    shown = svc(server, "runs", "show", "job_1", "run_1", as_json=False)
    assert shown.exit_code == 0  # showing a failed Run is not a failure
    steps = [line.split() for line in shown.stdout.splitlines()]
    assert ["extract", "✓", "succeeded", "2026-05-01", "10:00", "UTC", "1.5", "s"] in steps
    assert ["deliver", "✗", "failed"] in steps
    assert "run-run_1" in shown.stdout  # the Temporal workflow id operators search for
    assert "Error at step deliver" in shown.stdout

    assert svc(server, "runs", "wait", "job_1", "run_1").exit_code == 1
    assert out(svc(server, "runs", "retry", "job_1", "run_1"))["status"] == "queued"
    retried = svc(server, "runs", "retry", "job_1", "run_1", "--wait")
    assert (retried.exit_code, out(retried)["retry_of"]) == (0, "run_1")


def test_retry_of_a_run_that_did_not_fail_exit_7(server: FakeServer) -> None:
    server.on("POST", "/jobs/job_1/runs/run_2/retry", envelope(409, "conflict", "Only a failed Run can be retried"))
    result = svc(server, "runs", "retry", "job_1", "run_2")
    assert result.exit_code == 7
    assert "Only a failed Run can be retried" in result.stderr


# Every command of the groups this client adds, with the route it must reach; a new command must
# be added here (the last test checks the list is complete).
EVERY_COMMAND: list[tuple[tuple[str, ...], str, str]] = [
    *[(cmd, method, path) for kind in ("sources", "destinations") for cmd, method, path in [
        ((kind, "list"), "GET", f"/{kind}"),
        ((kind, "get", "src_1"), "GET", f"/{kind}/src_1"),
        ((kind, "delete", "src_1"), "DELETE", f"/{kind}/src_1"),
        ((kind, "create", "--name", "n", "--type", "url", "--set", "url=https://d.example/a.geojson"), "POST", f"/{kind}"),
        ((kind, "update", "src_1", "--name", "n2"), "PUT", f"/{kind}/src_1"),
        ((kind, "test", "src_1"), "POST", f"/{kind}/src_1/test"),
        ((kind, "test-draft", "--type", "url", "--set", "url=https://d.example/a.geojson"), "POST", f"/{kind}/test"),
        ((kind, "discover", "src_1"), "GET", f"/{kind}/src_1/discover"),
        ((kind, "hub-items", "src_1"), "GET", f"/{kind}/src_1/hub/items"),
        ((kind, "hub-folders", "src_1"), "GET", f"/{kind}/src_1/hub/folders"),
        ((kind, "hub-layers", "src_1", "a1"), "GET", f"/{kind}/src_1/hub/items/a1/layers"),
    ]],
    (("sources", "projects", "src_1"), "POST", "/sources/src_1/projects"),
    (("sources", "inspect-project", "src_1", "p", "--version", "v2"), "POST", "/sources/src_1/inspect-project"),
    (("connectors", "list"), "GET", "/connectors"),
    (("connectors", "show", "url"), "GET", "/connectors"),
    (("jobs", "list"), "GET", "/jobs"),
    (("jobs", "get", "job_1"), "GET", "/jobs/job_1"),
    (("jobs", "delete", "job_1"), "DELETE", "/jobs/job_1"),
    (("jobs", "create", "--name", "n", "--source", "src_1", "--destination", "dst_1"), "POST", "/jobs"),
    (("jobs", "update", "job_1", "--name", "n2"), "PUT", "/jobs/job_1"),
    (("jobs", "stages", "job_1"), "GET", "/jobs/job_1"),
    (("jobs", "enable", "job_1"), "POST", "/jobs/job_1/enable"),
    (("jobs", "disable", "job_1"), "POST", "/jobs/job_1/disable"),
    (("jobs", "sync-reset", "job_1"), "POST", "/jobs/job_1/sync/reset"),
    (("jobs", "sync-reinitialize", "job_1"), "POST", "/jobs/job_1/sync/reinitialize"),
    (("jobs", "run", "job_1"), "POST", "/jobs/job_1/run"),
    (("jobs", "runs", "job_1"), "GET", "/jobs/job_1/runs"),
    (("runs", "list", "job_1"), "GET", "/jobs/job_1/runs"),
    (("runs", "show", "job_1", "run_2"), "GET", "/jobs/job_1/runs/run_2"),
    (("runs", "wait", "job_1", "run_2"), "GET", "/jobs/job_1/runs/run_2"),
    (("runs", "retry", "job_1", "run_2"), "POST", "/jobs/job_1/runs/run_2/retry"),
]


@pytest.fixture
def everything(server: FakeServer) -> FakeServer:
    conn = {"id": "src_1", "name": "n", "type": "url", "configuration": {"url": "https://d.example/a.geojson"}}
    server.on("GET", "/connectors", {"items": CONNECTORS})
    for kind in ("sources", "destinations"):
        server.on("GET", f"/{kind}", {"items": [conn], "next_cursor": None})
        server.on("GET", f"/{kind}/src_1", conn)
        server.on("DELETE", f"/{kind}/src_1", status=204)
        server.on("POST", f"/{kind}", conn, status=201)
        server.on("PUT", f"/{kind}/src_1", conn)
        server.on("POST", f"/{kind}/src_1/test", {"ok": True, "status": "ok", "message": "", "tried": {}})
        server.on("POST", f"/{kind}/test", {"ok": True, "status": "ok", "message": "", "tried": {}})
        server.on("GET", f"/{kind}/src_1/discover", {"host": "h", "database": "d", "schemas": ["public"]})
        server.on("GET", f"/{kind}/src_1/hub/items", {"total": 0, "start": 1, "next_start": None, "items": []})
        server.on("GET", f"/{kind}/src_1/hub/folders", {"username": "u", "folders": []})
        server.on("GET", f"/{kind}/src_1/hub/items/a1/layers", {"item": {"id": "a1"}, "layers": []})
    server.on("POST", "/sources/src_1/projects", {"items": []})
    server.on("POST", "/sources/src_1/inspect-project", {"project": {"id": "p"}, "version": "v2", "versions": [], "files": []})
    server.on("GET", "/jobs", {"items": [JOB], "next_cursor": None})
    server.on("GET", "/jobs/job_1", JOB)
    server.on("DELETE", "/jobs/job_1", status=204)
    server.on("POST", "/jobs", JOB, status=201)
    server.on("PUT", "/jobs/job_1", JOB)
    for action in ("enable", "disable", "sync/reset", "sync/reinitialize"):
        server.on("POST", f"/jobs/job_1/{action}", JOB)
    server.on("POST", "/jobs/job_1/run", a_run("queued"), status=201)
    server.on("GET", "/jobs/job_1/runs", {"items": [a_run("succeeded")], "next_cursor": None})
    server.on("GET", "/jobs/job_1/runs/run_2", a_run("succeeded"))
    server.on("POST", "/jobs/job_1/runs/run_2/retry", a_run("queued", "run_3"), status=201)
    return server


@pytest.mark.parametrize("as_json", [False, True], ids=["table", "json"])
@pytest.mark.parametrize(("args", "method", "path"), EVERY_COMMAND, ids=lambda v: " ".join(v) if isinstance(v, tuple) else None)
def test_every_command_reaches_its_route(everything: FakeServer, args: tuple[str, ...], method: str, path: str,
                                         as_json: bool) -> None:
    result = svc(everything, *args, as_json=as_json)
    assert result.exit_code == 0, result.stderr
    assert (method, "/api/v1" + path) in [(r.method, r.url.path) for r in everything.requests]
    if as_json:
        json.loads(result.stdout)
    else:
        assert not result.stdout.lstrip().startswith(("{", "["))


def test_every_command_list_is_complete() -> None:
    listed = {args[:2] for args, _, _ in EVERY_COMMAND}
    for group in ("sources", "destinations", "connectors", "jobs", "runs"):
        command = cli.commands[group]
        assert isinstance(command, click.Group)
        for name, sub in command.commands.items():
            if not sub.hidden:
                assert (group, name) in listed, f"svc {group} {name} is missing from EVERY_COMMAND"
