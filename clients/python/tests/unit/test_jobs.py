"""Jobs: CRUD through job_write_body, actions, Runs, and waiting with backoff."""

from __future__ import annotations

import httpx
import pytest

from svc_client import Client, NotFoundError, ValidationError, WaitTimeoutError

from .conftest import FakeServer

JOB = {"id": "job_1", "name": "nightly", "enabled": False}


def run(status: str, run_id: str = "run_1") -> dict:
    return {"id": run_id, "job_id": "job_1", "status": status, "trigger": "manual", "attempt": 1}


def test_crud(server: FakeServer, client: Client) -> None:
    server.on_collection("/jobs", JOB)

    assert client.jobs.list() == [JOB]
    assert client.jobs.get("job_1") == JOB
    body = {"name": "nightly", "source_id": "src_1", "transform_mode": "manual",
            "operations": [{"type": "buffer", "distance": 2, "units": "source"}], "output_format": "GPKG"}
    assert client.jobs.create(body) == JOB
    assert server.body() == body
    client.jobs.create(name="kw", source_id="src_1")
    assert server.body() == {"name": "kw", "source_id": "src_1"}
    client.jobs.update("job_1", body, name="renamed")
    assert (server.last.method, server.body()["name"]) == ("PUT", "renamed")
    client.jobs.delete("job_1")
    assert server.last.method == "DELETE"


def test_update_of_some_fields_reads_the_job_first(server: FakeServer, client: Client) -> None:
    saved = {"id": "job_1", "name": "nightly", "source_id": "src_1", "source_resource": {"table": "roads"},
             "transform_mode": "recipe", "recipe_id": "rcp_1", "operations": [{"type": "simplify", "tolerance": 1}],
             "output_format": "GPKG", "destination_id": "dst_1", "destination_target": {"table": "roads"},
             "schedule": {"kind": "daily", "timezone": "Europe/Berlin", "hour": 2, "minute": 30},
             "pipeline": {"python": False}, "enabled": True, "disabled_reason": None, "next_run_at": "2026-01-02T01:30:00Z",
             "last_run": None, "sync": {"supported": False}, "created_at": "x", "updated_at": "y"}
    server.on("GET", "/jobs/job_1", saved)
    server.on("PUT", "/jobs/job_1", saved)

    client.jobs.update("job_1", name="nightly v2", schedule=None)

    assert [r.method for r in server.requests] == ["GET", "PUT"]
    # Only body fields; the Recipe's copied operations are left for the server to copy again.
    assert server.body() == {"name": "nightly v2", "source_id": "src_1", "source_resource": {"table": "roads"},
                             "transform_mode": "recipe", "recipe_id": "rcp_1", "output_format": "GPKG",
                             "destination_id": "dst_1", "destination_target": {"table": "roads"}, "schedule": None,
                             "pipeline": {"python": False}, "enabled": True}

    client.jobs.update("job_1", transform_mode="sql", sql="SELECT * FROM source")
    sent = server.body()
    assert (sent["transform_mode"], sent["sql"]) == ("sql", "SELECT * FROM source")
    assert "recipe_id" not in sent and "operations" not in sent


def test_runs_page(server: FakeServer, client: Client) -> None:
    server.on("GET", "/jobs/job_1/runs", {"items": [run("succeeded", "run_2")], "next_cursor": "c"})
    assert client.jobs.runs_page("job_1", limit=1) == {"items": [run("succeeded", "run_2")], "next_cursor": "c"}
    assert dict(server.last.url.params) == {"limit": "1"}


def test_create_and_update_apply_stage_flags(server: FakeServer, client: Client) -> None:
    server.on("POST", "/jobs", JOB, status=201)
    server.on("PUT", "/jobs/job_1", JOB)
    body = {"name": "n", "source_id": "src_1", "transform_mode": "manual", "operations": [{"type": "simplify", "tolerance": 1}],
            "output_format": "GPKG", "python_script": "pass", "python_filename": "s.py",
            "pipeline": {"transform": False, "python": False}}
    client.jobs.create(body)
    sent = server.body()
    assert sent == {"name": "n", "source_id": "src_1", "output_format": "GPKG",
                    "pipeline": {"transform": False, "python": False}}
    client.jobs.update("job_1", body)
    assert server.body() == sent


@pytest.mark.parametrize(
    ("method", "path"),
    [("enable", "/jobs/job_1/enable"), ("disable", "/jobs/job_1/disable"),
     ("sync_reset", "/jobs/job_1/sync/reset"), ("sync_reinitialize", "/jobs/job_1/sync/reinitialize")],
)
def test_actions(server: FakeServer, client: Client, method: str, path: str) -> None:
    server.on("POST", path, dict(JOB, enabled=True))
    assert getattr(client.jobs, method)("job_1") == dict(JOB, enabled=True)
    assert (server.last.method, server.last.url.path) == ("POST", "/api/v1" + path)


def test_list_runs_pages_and_get_run(server: FakeServer, client: Client) -> None:
    server.on("GET", "/jobs/job_1/runs", [
        httpx.Response(200, json={"items": [run("succeeded", "run_2")], "next_cursor": "c"}),
        httpx.Response(200, json={"items": [run("failed", "run_1")], "next_cursor": None}),
    ])
    server.on("GET", "/jobs/job_1/runs/run_1", run("failed"))
    assert [r["id"] for r in client.jobs.list_runs("job_1")] == ["run_2", "run_1"]
    assert server.last.url.params["cursor"] == "c"
    assert client.jobs.get_run("job_1", "run_1")["status"] == "failed"


def test_run_without_wait_returns_the_queued_run(server: FakeServer, client: Client) -> None:
    server.on("POST", "/jobs/job_1/run", run("queued"), status=201)
    assert client.jobs.run("job_1", wait=False) == run("queued")
    assert len(server.requests) == 1
    assert "idempotency-key" not in server.last.headers


def test_run_waits_with_exponential_backoff(server: FakeServer, client: Client) -> None:
    server.on("POST", "/jobs/job_1/run", run("queued"), status=201)
    server.on("GET", "/jobs/job_1/runs/run_1", [httpx.Response(200, json=run(s)) for s in
                                               ["queued", "running", "running", "running", "running", "running", "succeeded"]])
    seen: list[tuple[str, float]] = []

    result = client.jobs.run("job_1", idempotency_key="k-1", on_poll=lambda r, waited: seen.append((r["status"], waited)))

    assert result["status"] == "succeeded"
    assert client.sleeps == [0.5, 1, 2, 2, 2, 2, 2]  # type: ignore[attr-defined]
    assert server.requests[0].headers["idempotency-key"] == "k-1"
    assert [s for s, _ in seen] == ["queued", "queued", "running", "running", "running", "running", "running", "succeeded"]
    assert seen[-1][1] == 11.5


@pytest.mark.parametrize("final", ["succeeded", "failed", "cancelled"])
def test_finished_statuses_stop_waiting(server: FakeServer, client: Client, final: str) -> None:
    server.on("POST", "/jobs/job_1/run", run("running"), status=201)
    server.on("GET", "/jobs/job_1/runs/run_1", run(final))
    assert client.jobs.run("job_1")["status"] == final
    assert len(client.sleeps) == 1  # type: ignore[attr-defined]


def test_run_already_finished_is_not_polled(server: FakeServer, client: Client) -> None:
    server.on("POST", "/jobs/job_1/run", run("succeeded"), status=201)
    assert client.jobs.run("job_1", wait=True)["status"] == "succeeded"
    assert len(server.requests) == 1


def test_wait_timeout(server: FakeServer, client: Client) -> None:
    server.on("POST", "/jobs/job_1/run", run("queued"), status=201)
    server.on("GET", "/jobs/job_1/runs/run_1", run("running"))

    with pytest.raises(WaitTimeoutError) as caught:
        client.jobs.run("job_1", timeout=12)

    error = caught.value
    assert error.code == "wait_timeout"
    assert error.status_code is None
    assert error.details == {"job_id": "job_1", "run_id": "run_1", "last_status": "running", "timeout_seconds": 12}
    assert sum(client.sleeps) == 12  # type: ignore[attr-defined]
    assert client.sleeps[-1] == 0.5  # type: ignore[attr-defined]  # the last sleep is cut to the deadline


def test_default_wait_is_run_timeout(server: FakeServer, client: Client) -> None:
    client.run_timeout = 3
    server.on("POST", "/jobs/job_1/run", run("queued"), status=201)
    server.on("GET", "/jobs/job_1/runs/run_1", run("queued"))
    with pytest.raises(WaitTimeoutError):
        client.jobs.run("job_1")
    assert sum(client.sleeps) == 3  # type: ignore[attr-defined]


def test_wrapped_run_is_tolerated(server: FakeServer, client: Client) -> None:
    server.on("POST", "/jobs/job_1/run", {"run": run("succeeded")}, status=201)
    assert client.jobs.run("job_1")["id"] == "run_1"


def test_retry_and_wait(server: FakeServer, client: Client) -> None:
    server.on("POST", "/jobs/job_1/runs/run_1/retry", run("queued", "run_2"), status=201)
    server.on("GET", "/jobs/job_1/runs/run_2", [httpx.Response(200, json=run("running", "run_2")),
                                                httpx.Response(200, json=run("succeeded", "run_2"))])
    assert client.jobs.retry_run("job_1", "run_1")["status"] == "queued"
    assert (server.last.method, server.last.url.path) == ("POST", "/api/v1/jobs/job_1/runs/run_1/retry")
    assert client.jobs.retry_run("job_1", "run_1", wait=True)["status"] == "succeeded"
    assert client.jobs.retry == client.jobs.retry_run  # the first release's name


def test_retry_of_a_run_that_did_not_fail(server: FakeServer, client: Client) -> None:
    server.on("POST", "/jobs/job_1/runs/run_1/retry", httpx.Response(
        409, json={"error": {"code": "conflict", "message": "only a failed Run can be retried", "details": {"status": "succeeded"}}}))
    with pytest.raises(ValidationError) as caught:
        client.jobs.retry_run("job_1", "run_1")
    assert (caught.value.status_code, caught.value.details) == (409, {"status": "succeeded"})


def test_failed_run_is_returned_with_its_error(server: FakeServer, client: Client) -> None:
    failed = dict(run("failed"), error={"code": "delivery_failed", "message": "db down", "step": "deliver", "retryable": True})
    server.on("POST", "/jobs/job_1/run", run("queued"), status=201)
    server.on("GET", "/jobs/job_1/runs/run_1", failed)
    assert client.jobs.run("job_1") == failed


def test_wait_for_existing_run(server: FakeServer, client: Client) -> None:
    server.on("GET", "/jobs/job_1/runs/run_1", [httpx.Response(200, json=run("running")),
                                                httpx.Response(200, json=run("failed"))])
    assert client.jobs.wait_for_run("job_1", "run_1")["status"] == "failed"


def test_run_of_missing_job(server: FakeServer, client: Client) -> None:
    server.on("POST", "/jobs/job_9/run", httpx.Response(404, json={"error": {"code": "job_not_found", "message": "no", "details": {}}}))
    with pytest.raises(NotFoundError) as caught:
        client.jobs.run("job_9")
    assert caught.value.code == "job_not_found"


def test_automation_calls(server: FakeServer, client: Client) -> None:
    """Run-time values, retry's definition, the webhook and the schedule preview (issue 33)."""
    server.on("POST", "/jobs/job_1/run", run("queued"), status=201)
    client.jobs.run("job_1", wait=False, parameters={"region": "south", "year": 2025})
    assert server.body() == {"parameters": {"region": "south", "year": 2025}}
    client.jobs.run("job_1", wait=False)
    assert server.last.content == b""

    server.on("POST", "/jobs/job_1/runs/run_1/retry", run("queued", "run_2"), status=201)
    client.jobs.retry_run("job_1", "run_1")
    assert server.last.content == b""  # the server's default: the Job as it is now
    client.jobs.retry_run("job_1", "run_1", definition="original")
    assert server.body() == {"definition": "original"}

    server.on("POST", "/jobs/job_1/webhook", {"url": "u", "auth": "bearer", "secret": "whsec_x"}, status=201)
    server.on("DELETE", "/jobs/job_1/webhook", status=204)
    assert client.jobs.issue_webhook("job_1", "bearer")["secret"] == "whsec_x"
    assert server.body() == {"auth": "bearer"}
    assert client.jobs.revoke_webhook("job_1") is None

    server.on("POST", "/schedules/preview", {"schedule": {}, "description": "d", "next_run_times": []})
    client.schedules.preview({"kind": "interval", "timezone": "UTC", "every_minutes": 5}, 3, after="2026-01-01T00:00:00Z")
    assert server.body() == {"schedule": {"kind": "interval", "timezone": "UTC", "every_minutes": 5}, "count": 3,
                             "after": "2026-01-01T00:00:00Z"}


def test_update_of_triggers_changes_only_the_keys_named(server: FakeServer, client: Client) -> None:
    saved = dict(JOB, triggers={"on_change": {"every_minutes": 5}, "after": [{"job_id": "job_a", "when": "any"}]},
                 parameters=[{"name": "x", "type": "string", "default": None, "description": None, "choices": None}],
                 followers=[], webhook=None, next_run_times=[])
    server.on("GET", "/jobs/job_1", saved)
    server.on("PUT", "/jobs/job_1", saved)
    client.jobs.update("job_1", triggers={"on_change": None})
    sent = server.body()
    assert sent["triggers"] == {"on_change": None, "after": [{"job_id": "job_a", "when": "any"}]}
    assert sent["parameters"] == saved["parameters"]
    assert not {"followers", "webhook", "next_run_times"} & set(sent)
