"""Jobs and Runs against the real server and worker: CRUD with stage flags and schedules, Runs
waited for (failed ones returned, retried), a Run caught while it runs, idempotency, sync, scopes.

These need the Jobs routes: without them they fail (never skip), as the project's brief asks.
"""

from __future__ import annotations

import uuid
from typing import Any, Callable, Iterator

import pytest

from svc_client import (
    FINISHED_STATUSES,
    AuthorizationError,
    Client,
    NotFoundError,
    ValidationError,
    WaitTimeoutError,
    job_pipeline,
    pipeline_stages,
    stage_included,
)

from .conftest import DataServer, ids, require_capability, unique

SCOPES = ("sources:read", "sources:write", "destinations:read", "destinations:write",
          "jobs:read", "jobs:write", "jobs:run")
OPERATIONS = [{"type": "rename_column", "from": "name", "to": "city"}]


@pytest.fixture
def client(client_with: Callable[..., Client]) -> Client:
    return client_with(*SCOPES)


class Fixtures:
    """Saved connections for the Jobs (url Sources on the loopback data server, a PostGIS
    Destination on the test cluster) and the Jobs made from them, removed in that order."""

    def __init__(self, client: Client, data: DataServer, postgis: dict[str, Any]) -> None:
        self.client = client
        self.data = data
        self.postgis = postgis
        self.sources = {
            name: client.sources.create(unique(name), "url", {"url": data.url(f"{name}.geojson")})["id"]
            for name in ("cities", "missing", "held")
        }
        self.destination = client.destinations.create(unique("db"), "postgis", postgis)["id"]
        self.jobs: list[str] = []

    def body(self, source: str = "cities", **more: Any) -> dict[str, Any]:
        return {
            "name": unique("job"), "source_id": self.sources[source], "transform_mode": "manual",
            "operations": OPERATIONS, "output_format": "GPKG", "destination_id": self.destination,
            "destination_target": {"schema": "public", "table": unique("cities"), "write_mode": "replace"},
            **more,
        }

    def job(self, source: str = "cities", **more: Any) -> dict[str, Any]:
        job = self.client.jobs.create(self.body(source, **more))
        self.jobs.append(job["id"])
        return job

    def close(self) -> None:
        self.data.release.set()
        for job_id in self.jobs:
            try:
                self.client.jobs.delete(job_id)
            except NotFoundError:
                pass  # the test deleted it
        for source_id in self.sources.values():
            self.client.sources.delete(source_id)
        self.client.destinations.delete(self.destination)


@pytest.fixture
def made(client: Client, data_server: DataServer, postgis_config: dict[str, Any]) -> Iterator[Fixtures]:
    fixtures = Fixtures(client, data_server, postgis_config)
    try:
        yield fixtures
    finally:
        fixtures.close()


def test_job_crud_schedule_and_stage_flags(client: Client, made: Fixtures) -> None:
    schedule = {"kind": "daily", "timezone": "Europe/Berlin", "hour": 2, "minute": 30}
    # An explicit false: the leftover script must not bring the python stage back.
    job = made.job(schedule=schedule, pipeline=pipeline_stages(transform=True, convert=True, python=False),
                   python_script="raise SystemExit(1)", python_filename="leftover.py")
    job_id = job["id"]
    assert job["pipeline"]["python"] is False and not job.get("python_script")
    assert job_pipeline(job) == {"transform": True, "convert": True, "python": False}
    assert job["schedule"] == schedule
    assert (job["enabled"], job["disabled_reason"], job["last_run"]) == (True, None, None)
    assert job["next_run_at"], "an enabled Job with a schedule has a next Run"
    assert {"supported", "cursor", "reset_pending", "reinitialize_pending"} <= set(job["sync"])

    assert job_id in ids(client.jobs.list())
    assert ids(client.jobs.page(limit=1)["items"]) == [job_id]  # newest first
    assert stage_included(client.jobs.get(job_id), "python") is False

    renamed = client.jobs.update(job_id, name="renamed")  # only the name changes
    assert (renamed["name"], renamed["schedule"], renamed["operations"][0]["type"]) == ("renamed", schedule, "rename_column")
    assert renamed["pipeline"]["python"] is False, "update must preserve an explicit false flag"

    disabled = client.jobs.disable(job_id)
    assert client.jobs.get(job_id)["enabled"] is False
    assert client.jobs.get(job_id)["next_run_at"] is None
    assert disabled is None or disabled["enabled"] is False
    client.jobs.enable(job_id)
    assert client.jobs.get(job_id)["enabled"] is True

    unscheduled = client.jobs.update(job_id, schedule=None)
    assert (unscheduled["schedule"], unscheduled["next_run_at"]) == (None, None)
    whole = client.jobs.update(job_id, made.body(name="whole body", transform_mode="sql",
                                                 sql="SELECT city FROM source", operations=None))
    assert (whole["name"], whole["transform_mode"], whole["sql"]) == ("whole body", "sql", "SELECT city FROM source")

    with pytest.raises(ValidationError) as in_use:
        client.sources.delete(made.sources["cities"])
    assert in_use.value.status_code == 409, "a Source a Job uses cannot be deleted"

    client.jobs.delete(job_id)
    with pytest.raises(NotFoundError) as gone:
        client.jobs.get(job_id)
    assert gone.value.code == "job_not_found"


@pytest.mark.parametrize("change", [
    {"transform_mode": "basic"},
    {"schedule": {"kind": "daily", "timezone": "Mars/Olympus", "hour": 2, "minute": 0}},
    {"output_format": "no such format"},
    {"destination_target": {"table": "t", "no_such_key": 1}},
])
def test_bad_job_bodies_are_refused(client: Client, made: Fixtures, change: dict[str, Any]) -> None:
    with pytest.raises(ValidationError) as caught:
        made.job(**change)
    assert caught.value.status_code in (400, 422)
    assert caught.value.message


def test_a_failed_run_is_returned_with_its_error_and_retried(client: Client, made: Fixtures) -> None:
    job_id = made.job(source="missing")["id"]  # the data server answers 404: a classified failure

    polled: list[str] = []
    run = client.jobs.run(job_id, wait=True, timeout=120, on_poll=lambda r, _w: polled.append(r["status"]))

    assert run["status"] == "failed"  # returned, not raised
    assert polled[-1] == "failed" and polled[0] in ("queued", "running", "failed")
    assert (run["trigger"], run["attempt"], run["job_id"]) == ("manual", 1, job_id)
    assert run["error"]["step"] == "extract" and run["error"]["code"] == "source_failed"
    assert run["error"]["retryable"] is False
    assert [s["name"] for s in run["steps"]][0] == "extract" and run["steps"][0]["status"] == "failed"
    assert run["workflow"]["workflow_id"] == f"run-{run['id']}"
    assert run["id"] in ids(client.jobs.list_runs(job_id))
    assert client.jobs.get_run(job_id, run["id"])["status"] == "failed"
    assert client.jobs.get(job_id)["last_run"]["id"] == run["id"]

    retried = client.jobs.retry_run(job_id, run["id"], wait=True, timeout=120)
    assert retried["id"] != run["id"]
    assert (retried["trigger"], retried["retry_of"], retried["status"]) == ("retry", run["id"], "failed")
    assert ids(client.jobs.runs_page(job_id, limit=1)["items"]) == [retried["id"]]

    with pytest.raises(NotFoundError):
        client.jobs.get_run(job_id, "run_doesnotexist")


def test_a_running_run_times_the_wait_out_and_goes_on(client: Client, made: Fixtures) -> None:
    job_id = made.job(source="held")["id"]  # extract waits until the data server is released
    key = f"svc-client-{uuid.uuid4().hex}"
    first = client.jobs.run(job_id, wait=False, idempotency_key=key)
    assert first["status"] in ("queued", "running")
    assert client.jobs.run(job_id, wait=False, idempotency_key=key)["id"] == first["id"]

    with pytest.raises(WaitTimeoutError) as caught:
        client.jobs.wait_for_run(job_id, first["id"], timeout=1.5)
    details = caught.value.details
    assert (details["job_id"], details["run_id"]) == (job_id, first["id"])
    assert details["last_status"] in ("queued", "running")

    made.data.release.set()
    finished = client.jobs.wait_for_run(job_id, first["id"], timeout=120)
    assert finished["status"] in FINISHED_STATUSES
    extract = finished["steps"][0]
    assert (extract["name"], extract["status"]) == ("extract", "succeeded"), finished["error"]


def test_a_run_into_postgis_succeeds(client_with: Callable[..., Client], client: Client, made: Fixtures) -> None:
    require_capability(client, "postgis", "deliver")
    job = made.job()
    run = client.jobs.run(job["id"], wait=True, timeout=180)
    assert run["status"] == "succeeded", run.get("error")
    assert run["error"] is None
    assert run["stats"]["features_written"] == 3
    assert {s["name"]: s["status"] for s in run["steps"]}["deliver"] == "succeeded"
    with pytest.raises(ValidationError) as caught:
        client.jobs.retry_run(job["id"], run["id"])
    assert caught.value.status_code == 409, "only a failed Run can be retried"

    require_capability(client, "postgis", "import")
    reader = client_with("sources:read", "sources:write", "workspaces:read", "workspaces:write")
    table = job["destination_target"]["table"]
    source = reader.sources.create(unique("db"), "postgis", made.postgis)
    try:
        for resource in (table, {"schema": "public", "table": table}):  # the shorthand and the selector
            ws = reader.workspaces.import_source(source["id"], resource)
            assert ws.layers[0]["feature_count"] == 3
            assert "city" in [f["name"] for f in ws.layers[0]["fields"]]
    finally:
        reader.sources.delete(source["id"])


def test_sync_reset_and_reinitialize(client: Client, made: Fixtures) -> None:
    job_id = made.job()["id"]
    client.jobs.sync_reset(job_id)
    after_reset = client.jobs.get(job_id)["sync"]
    client.jobs.sync_reinitialize(job_id)
    after_reinit = client.jobs.get(job_id)["sync"]
    if after_reset["supported"]:
        assert after_reset["reset_pending"] is True
        assert after_reinit["reinitialize_pending"] is True
    else:
        assert after_reset["cursor"] is None and after_reinit["cursor"] is None


def test_jobs_run_scope_starts_runs_but_does_not_read_them(
    client_with: Callable[..., Client], client: Client, made: Fixtures
) -> None:
    job_id = made.job(source="held")["id"]
    runner = client_with("jobs:run")
    run = runner.jobs.run(job_id, wait=False)
    assert run["status"] in ("queued", "running")
    with pytest.raises(AuthorizationError):
        runner.jobs.get_run(job_id, run["id"])
    with pytest.raises(AuthorizationError):  # waiting polls GET …/runs/{id}: it needs jobs:read too
        runner.jobs.run(job_id, wait=True, timeout=30)
    with pytest.raises(AuthorizationError):
        client_with("jobs:read").jobs.run(job_id, wait=False)
