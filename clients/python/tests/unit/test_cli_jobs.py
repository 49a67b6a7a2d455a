"""`svc jobs` and `svc runs`: bodies from options, tables, the live status line, exit codes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

import click
import httpx
import pytest

from svc_client.cli import cli

from .cli_support import out, svc
from .conftest import CONNECTORS, FakeServer, envelope, local_zone

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
    yield from local_zone(monkeypatch, "UTC")


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


def test_create_with_creation_options(server: FakeServer, tmp_path: Path) -> None:
    server.on("POST", "/jobs", JOB, status=201)
    options = tmp_path / "options.json"
    options.write_text('{"dataset": {"COMPRESSION": "SNAPPY", "ROW_GROUP_SIZE": "5000"}}')
    result = svc(server, "jobs", "create", "--name", "n", "--source", "src_1", "--format", "GeoParquet",
                 "--creation-options", f"@{options}")
    assert result.exit_code == 0, result.stderr
    assert server.body() == {"name": "n", "source_id": "src_1", "output_format": "GeoParquet",
                             "creation_options": {"dataset": {"COMPRESSION": "SNAPPY", "ROW_GROUP_SIZE": "5000"}}}
    # Leaving the convert stage out takes its options with it.
    svc(server, "jobs", "create", "--name", "n", "--source", "src_1", "--creation-options", '{"dataset": {}}',
        "--without", "convert")
    assert server.body() == {"name": "n", "source_id": "src_1", "pipeline": {"convert": False}}


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


def refused_before_sending(server: FakeServer, args: tuple[str, ...], says: str) -> None:
    """``jobs create`` with these options is a usage error (exit 2) saying ``says``; nothing is sent."""
    result = svc(server, "jobs", "create", "--name", "n", *args)
    assert result.exit_code == 2
    assert says in result.stderr
    assert server.requests == []


@pytest.mark.parametrize(("args", "says"), [
    (("--operations", "[]", "--sql", "SELECT 1"), "three transform modes"),
    (("--daily", "02:30"), "--timezone"),
    (("--daily", "24:00", "--timezone", "UTC"), "HH:MM"),
    (("--timezone", "UTC"), "--daily"),
    (("--no-schedule", "--daily", "01:00"), "--no-schedule"),
    (("--operations", '{"type": "buffer"}'), "JSON array"),
])
def test_create_option_mistakes(server: FakeServer, args: tuple[str, ...], says: str) -> None:
    refused_before_sending(server, args, says)


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
    (("jobs", "webhook", "issue", "job_1"), "POST", "/jobs/job_1/webhook"),
    (("jobs", "webhook", "revoke", "job_1"), "DELETE", "/jobs/job_1/webhook"),
    (("schedules", "preview", "--every", "15"), "POST", "/schedules/preview"),
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
    server.on("POST", "/jobs/job_1/webhook", {"url": "https://h/api/v1/jobs/job_1/webhook", "auth": "hmac",
                                              "secret": "whsec_x"}, status=201)
    server.on("DELETE", "/jobs/job_1/webhook", status=204)
    server.on("POST", "/schedules/preview", {"schedule": {"kind": "interval", "timezone": "UTC", "every_minutes": 15},
                                             "description": "every 15 minutes (UTC standard time)",
                                             "next_run_times": ["2026-05-01T10:15:00.000Z"]})
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
    for group in ("sources", "destinations", "connectors", "jobs", "runs", "schedules"):
        command = cli.commands[group]
        assert isinstance(command, click.Group)
        for name, sub in command.commands.items():
            if not sub.hidden:
                assert (group, name) in listed, f"svc {group} {name} is missing from EVERY_COMMAND"


# -- schedules, triggers, parameters, webhook, retry (issue 33) --------------------------------------


@pytest.mark.parametrize(("args", "schedule"), [
    (("--weekly", "mon-fri", "--at", "07:30", "--timezone", "Europe/Berlin"),
     {"kind": "weekly", "timezone": "Europe/Berlin", "days": ["mon", "tue", "wed", "thu", "fri"], "hour": 7, "minute": 30}),
    (("--monthly", "1,last", "--at", "6:00", "--timezone", "UTC"),
     {"kind": "monthly", "timezone": "UTC", "days": [1, "last"], "hour": 6, "minute": 0}),
    (("--every", "15m"), {"kind": "interval", "timezone": "UTC", "every_minutes": 15}),
    (("--every", "1h", "--timezone", "Asia/Kolkata"), {"kind": "interval", "timezone": "Asia/Kolkata", "every_minutes": 60}),
    (("--cron", "*/15 7-18 * * mon-fri", "--timezone", "America/New_York"),
     {"kind": "cron", "timezone": "America/New_York", "expression": "*/15 7-18 * * mon-fri"}),
])
def test_create_with_each_schedule_kind(server: FakeServer, args: tuple[str, ...], schedule: dict[str, Any]) -> None:
    server.on("POST", "/jobs", JOB, status=201)
    result = svc(server, "jobs", "create", "--name", "n", *args)
    assert result.exit_code == 0, result.stderr
    assert server.body()["schedule"] == schedule


@pytest.mark.parametrize(("args", "says"), [
    (("--weekly", "mon", "--timezone", "UTC"), "--at"),
    (("--daily", "07:00", "--at", "07:00", "--timezone", "UTC"), "--at goes with --weekly"),
    (("--cron", "0 7 * * *"), "--timezone"),
    (("--cron", "0 7 * *", "--timezone", "UTC"), "five fields"),
    (("--every", "15m", "--daily", "07:00", "--timezone", "UTC"), "give one schedule"),
    (("--weekly", "fri-mon", "--at", "07:00", "--timezone", "UTC"), "--weekly: a range of days"),
    (("--no-schedule", "--every", "5"), "--no-schedule"),
    (("--at", "07:00"), "go with a schedule"),
    (("--on-change", "0"), "--on-change: the interval is at least 1 minute"),
    (("--on-change", "5", "--no-on-change"), "give one"),
    (("--after", "job_2:never"), "--after"),
    (("--parameter", "x:float"), "--parameter: parameter types"),
    (("--parameter", "x", "--no-parameters"), "give one"),
])
def test_schedule_and_trigger_mistakes(server: FakeServer, args: tuple[str, ...], says: str) -> None:
    refused_before_sending(server, args, says)


def test_create_with_triggers_and_parameters(server: FakeServer) -> None:
    server.on("POST", "/jobs", JOB, status=201)
    result = svc(server, "jobs", "create", "--name", "n", "--on-change", "10", "--after", "job_a", "--after", "job_b:any",
                 "--parameter", "region=north", "--parameter", "year:integer")
    assert result.exit_code == 0, result.stderr
    body = server.body()
    assert body["triggers"] == {"on_change": {"every_minutes": 10},
                                "after": [{"job_id": "job_a", "when": "succeeded"}, {"job_id": "job_b", "when": "any"}]}
    assert body["parameters"] == [{"name": "region", "type": "string", "default": "north"},
                                  {"name": "year", "type": "integer", "default": None}]


SAVED = dict(JOB, triggers={"on_change": None, "after": [{"job_id": "job_a", "when": "failed"}]},
             parameters=[{"name": "region", "type": "string", "default": "north", "description": None, "choices": None}],
             webhook={"url": "https://gis.example.org/api/v1/jobs/job_1/webhook", "auth": "hmac",
                      "created_at": "2026-05-01T00:00:00Z", "rotated_at": None},
             followers=[{"id": "job_9", "name": "refresh layer", "when": "succeeded"}],
             schedule_description="every day at 02:30 (Europe/Berlin)",
             next_run_times=["2026-05-02T00:30:00.000Z", "2026-05-03T00:30:00.000Z"])


def test_update_keeps_what_was_not_named(server: FakeServer) -> None:
    server.on("GET", "/jobs/job_1", SAVED)
    server.on("PUT", "/jobs/job_1", SAVED)
    svc(server, "jobs", "update", "job_1", "--name", "renamed")
    sent = server.body()
    # A rename keeps the triggers and parameters (a PUT replaces the whole Job).
    assert sent["triggers"] == SAVED["triggers"] and sent["parameters"] == SAVED["parameters"]
    assert "webhook" not in sent and "followers" not in sent and "next_run_times" not in sent

    svc(server, "jobs", "update", "job_1", "--on-change", "5m")
    assert server.body()["triggers"] == {"on_change": {"every_minutes": 5}, "after": [{"job_id": "job_a", "when": "failed"}]}
    svc(server, "jobs", "update", "job_1", "--no-after", "--no-parameters")
    assert server.body()["triggers"] == {"on_change": None, "after": []}
    assert server.body()["parameters"] == []


def test_get_table_shows_when_it_runs(server: FakeServer) -> None:
    server.on("GET", "/jobs/job_1", SAVED)
    text = svc(server, "jobs", "get", "job_1", as_json=False).stdout
    assert "every day at 02:30 (Europe/Berlin)" in text
    assert "2026-05-02 00:30 UTC, 2026-05-03 00:30 UTC" in text
    assert "job_a fails" in text
    assert "refresh layer (when this one succeeds)" in text
    assert "https://gis.example.org/api/v1/jobs/job_1/webhook (hmac)" in text
    assert "region: string = north" in text


def test_list_table_says_each_kind_short(server: FakeServer) -> None:
    server.on("GET", "/jobs", {"items": [
        dict(JOB, schedule={"kind": "weekly", "timezone": "UTC", "days": ["mon", "fri"], "hour": 7, "minute": 5}),
        dict(JOB, id="job_2", schedule={"kind": "cron", "timezone": "UTC", "expression": "*/15 * * * *"}),
        dict(JOB, id="job_3", schedule={"kind": "interval", "timezone": "UTC", "every_minutes": 15}),
    ], "next_cursor": None})
    server.on("GET", "/sources", {"items": [], "next_cursor": None})
    server.on("GET", "/destinations", {"items": [], "next_cursor": None})
    text = svc(server, "jobs", "list", as_json=False).stdout
    assert "weekly mon,fri 07:05 UTC" in text and "cron */15 * * * * UTC" in text and "every 15 min UTC" in text


def test_preview(server: FakeServer) -> None:
    server.on("POST", "/schedules/preview", {
        "schedule": {"kind": "weekly", "timezone": "Europe/Berlin", "days": ["mon"], "hour": 7, "minute": 30},
        "description": "every Monday at 07:30 (Europe/Berlin)",
        "next_run_times": ["2026-03-23T06:30:00.000Z", "2026-03-30T05:30:00.000Z"],
    })
    result = svc(server, "schedules", "preview", "--weekly", "mon", "--at", "07:30", "--timezone", "Europe/Berlin",
                 "--count", "2", as_json=False)
    assert result.exit_code == 0, result.stderr
    assert server.body() == {"schedule": {"kind": "weekly", "timezone": "Europe/Berlin", "days": ["mon"], "hour": 7,
                                          "minute": 30}, "count": 2}
    lines = result.stdout.splitlines()
    assert lines[0] == "Runs every Monday at 07:30 (Europe/Berlin)."
    # The same 07:30 on the schedule's clock either side of the change to summer time.
    assert "2026-03-23 06:30 UTC" in lines[4] and "2026-03-23 07:30 CET" in lines[4]
    assert "2026-03-30 05:30 UTC" in lines[5] and "2026-03-30 07:30 CEST" in lines[5]
    assert svc(server, "schedules", "preview").exit_code == 2


def test_preview_refused_names_the_field(server: FakeServer) -> None:
    server.on("POST", "/schedules/preview", envelope(422, "validation_failed", "schedule.expression: hour: 25 is outside 0–23"))
    result = svc(server, "schedules", "preview", "--cron", "0 25 * * *", "--timezone", "UTC")
    assert result.exit_code != 0
    assert "hour: 25 is outside 0–23" in result.stderr


def test_run_with_parameter_values(server: FakeServer) -> None:
    server.on("POST", "/jobs/job_1/run", a_run("queued", parameters={"region": "south"}), status=201)
    result = svc(server, "jobs", "run", "job_1", "--param", "region=south", "--param", "year=2025", as_json=False)
    assert result.exit_code == 0, result.stderr
    assert server.body() == {"parameters": {"region": "south", "year": "2025"}}
    assert "region=south" in result.stdout
    svc(server, "jobs", "run", "job_1")
    assert server.last.content == b""  # no values: no body
    assert svc(server, "jobs", "run", "job_1", "--param", "region").exit_code == 2


def test_retry_current_by_default_or_as_it_was(server: FakeServer) -> None:
    server.on("POST", "/jobs/job_1/runs/run_1/retry",
              a_run("queued", run_id="run_3", trigger="retry", retry_of="run_1", retry_definition="current"), status=201)
    text = svc(server, "runs", "retry", "job_1", "run_1", as_json=False).stdout
    assert server.body() == {"definition": "current"}
    assert "run_1 (with the Job as it is now)" in text
    svc(server, "runs", "retry", "job_1", "run_1", "--as-it-was")
    assert server.body() == {"definition": "original"}


def test_run_view_says_what_started_it(server: FakeServer) -> None:
    server.on("GET", "/jobs/job_1/runs/run_2", a_run("succeeded", trigger="after",
                                                      triggered_by={"job_id": "job_a", "run_id": "run_a"},
                                                      started_runs=[{"job_id": "job_9", "run_id": "run_9"}],
                                                      delivery_id=None, parameters={}))
    text = svc(server, "runs", "show", "job_1", "run_2", as_json=False).stdout
    assert "run run_a of job job_a" in text and "run run_9 of job job_9" in text
    assert "parameters" not in text


def test_webhook_issue_and_revoke(server: FakeServer) -> None:
    issued = {"url": "https://gis.example.org/api/v1/jobs/job_1/webhook", "auth": "bearer", "secret": "whsec_x"}
    server.on("POST", "/jobs/job_1/webhook", issued, status=201)
    server.on("DELETE", "/jobs/job_1/webhook", status=204)
    assert out(svc(server, "jobs", "webhook", "issue", "job_1", "--bearer")) == issued
    assert server.body() == {"auth": "bearer"}
    svc(server, "jobs", "webhook", "issue", "job_1")
    assert server.body() == {"auth": "hmac"}
    assert out(svc(server, "jobs", "webhook", "revoke", "job_1")) == {"id": "job_1", "done": "webhook revoked"}
    assert server.last.method == "DELETE"
