"""Jobs against the real server: CRUD with stage flags, enable/disable, a Run waited for."""

from __future__ import annotations

import http.server
import json
import threading
from typing import Any, Callable, Iterator

import pytest

from svc_client import (
    Client,
    NotFoundError,
    ValidationError,
    job_pipeline,
    pipeline_stages,
    stage_included,
)
from svc_client.resources.jobs import FINISHED_STATUSES

from .conftest import ids, require_route

CITIES = json.dumps({
    "type": "FeatureCollection",
    "features": [{"type": "Feature", "properties": {"name": "Lisbon"},
                  "geometry": {"type": "Point", "coordinates": [-9.139, 38.722]}}],
}).encode()


@pytest.fixture
def client(client_with: Callable[..., Client]) -> Client:
    client = client_with("sources:read", "sources:write", "jobs:read", "jobs:write", "jobs:run")
    require_route(client.jobs.list, "GET /api/v1/jobs")
    require_route(client.sources.list, "GET /api/v1/sources")
    return client


@pytest.fixture
def data_url() -> Iterator[str]:
    """A GeoJSON file served on loopback for a url Source."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            self.send_response(200)
            self.send_header("Content-Type", "application/geo+json")
            self.send_header("Content-Length", str(len(CITIES)))
            self.end_headers()
            self.wfile.write(CITIES)

        def log_message(self, *args: Any) -> None:
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/cities.geojson"
    finally:
        httpd.shutdown()
        httpd.server_close()


def _output_format(client: Client) -> str:
    writable = [f for f in client.formats.list() if f.get("write") and f.get("kind", "vector") == "vector"]
    assert writable
    return next((str(f["id"]) for f in writable if str(f["id"]).lower() == "geojson"), str(writable[0]["id"]))


def test_job_lifecycle_and_run(client: Client, data_url: str) -> None:
    try:
        source = client.sources.create("svc-client cities", "url", {"url": data_url})
    except ValidationError as error:
        pytest.skip(f"the server refuses a loopback url Source ({error.code}: {error.message}); "
                    "the jobs test needs one")
    job_id = None
    try:
        body = {
            "name": "svc-client job",
            "source_id": source["id"],
            "transform_mode": "manual",
            "operations": [{"type": "rename_column", "from": "name", "to": "city"}],
            "output_format": _output_format(client),
            # An explicit false: the leftover script must not bring the python stage back.
            "pipeline": pipeline_stages(transform=True, convert=True, python=False),
            "python_script": "raise SystemExit(1)",
            "python_filename": "leftover.py",
        }
        job = client.jobs.create(body)
        job_id = job["id"]
        assert job["pipeline"]["python"] is False
        assert not job.get("python_script")
        assert job_pipeline(job) == {"transform": True, "convert": True, "python": False}

        assert job_id in ids(client.jobs.list())
        fetched = client.jobs.get(job_id)
        assert stage_included(fetched, "python") is False
        assert stage_included(fetched, "transform") is True

        updated = client.jobs.update(job_id, dict(body, name="svc-client job renamed"))
        assert updated["name"] == "svc-client job renamed"
        assert updated["pipeline"]["python"] is False, "update must preserve an explicit false flag"

        client.jobs.enable(job_id)
        assert client.jobs.get(job_id).get("enabled") is True
        client.jobs.disable(job_id)
        assert client.jobs.get(job_id).get("enabled") is False

        run = client.jobs.run(job_id, wait=True, timeout=120)
        assert run["status"] in FINISHED_STATUSES
        assert run["id"] in ids(client.jobs.list_runs(job_id))
        assert client.jobs.get_run(job_id, run["id"])["status"] == run["status"]
        if run["status"] == "failed":
            retried = client.jobs.retry(job_id, run["id"], wait=True, timeout=120)
            assert retried["status"] in FINISHED_STATUSES

        for sync in (client.jobs.sync_reset, client.jobs.sync_reinitialize):
            try:
                sync(job_id)
            except ValidationError:
                pass  # refused for this kind of Job: the route exists and answered by the contract
    finally:
        if job_id is not None:
            client.jobs.delete(job_id)
        client.sources.delete(source["id"])

    if job_id is not None:
        with pytest.raises(NotFoundError):
            client.jobs.get(job_id)
