"""Following a Workspace import while it runs (progress=), against the real server.

A loopback file server sends the first 9 MiB of a larger GeoJSON file and then waits, so the
import is seen mid-way on any machine, however fast (as test/workspaces/progress.e2e.spec.ts does).
"""

from __future__ import annotations

import http.server
import json
import threading
import time
from typing import Any, Callable, Iterator

import pytest

from svc_client import Client, Workspace

from .conftest import LoopbackServer, unique

MiB = 1024 * 1024
HOLD_AT = 9 * MiB  # past the server's first download report (every 8 MiB)
POINTS = 120_000


def _points() -> bytes:
    features = [
        {"type": "Feature", "properties": {"n": i},
         "geometry": {"type": "Point", "coordinates": [round(-9.5 + (i % 1000) / 1000, 6), round(38 + i / POINTS, 6)]}}
        for i in range(POINTS)
    ]
    body = json.dumps({"type": "FeatureCollection", "features": features}).encode()
    assert len(body) > 10 * MiB
    return body


class HeldFileServer(LoopbackServer):
    """Answers every GET with ``body`` and its Content-Length, sends HOLD_AT bytes, then waits for ``release``."""

    def __init__(self, body: bytes) -> None:
        super().__init__()
        release = self.release

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802
                self.send_response(200)
                self.send_header("Content-Type", "application/geo+json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body[:HOLD_AT])
                release.wait(120)  # bounded: a failed test never leaves the server hanging
                self.wfile.write(body[HOLD_AT:])

            def log_message(self, *args: Any) -> None:
                pass

        self.serve(Handler)


@pytest.fixture(scope="module")
def points() -> bytes:
    return _points()


@pytest.fixture
def held_server(points: bytes) -> Iterator[HeldFileServer]:
    server = HeldFileServer(points)
    try:
        yield server
    finally:
        server.close()


def test_import_reports_its_progress_while_it_runs(
    client_with: Callable[..., Client], held_server: HeldFileServer, points: bytes
) -> None:
    client = client_with("workspaces:read", "workspaces:write", "workspaces:run", "sources:read", "sources:write")
    source = client.sources.create(unique("points"), "url", {"url": held_server.url("points.geojson")})
    seen: list[tuple[int, int | None]] = []
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["workspace"] = client.workspaces.import_source(
                source["id"], progress=lambda done, total: seen.append((done, total))
            )
        except Exception as exc:  # noqa: BLE001  (handed to the test's thread)
            outcome["error"] = exc

    importing = threading.Thread(target=run, daemon=True)
    try:
        importing.start()
        deadline = time.monotonic() + 90
        while not any(done >= 8 * MiB for done, _ in seen) and importing.is_alive() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert "error" not in outcome, outcome.get("error")
        assert importing.is_alive(), "the import finished while held: the file server did not hold it"
        mid = next(((done, total) for done, total in seen if done >= 8 * MiB), None)
        assert mid is not None, f"no report of 8 MiB within 90 s; reports: {seen}"
        assert mid[1] == len(points)
        assert 8 * MiB <= mid[0] <= HOLD_AT
        assert all(total in (None, len(points)) for _, total in seen)

        held_server.release.set()
        importing.join(120)
        assert not importing.is_alive(), "the import did not end once released"
        assert "error" not in outcome, outcome.get("error")
        ws = outcome["workspace"]
        assert isinstance(ws, Workspace)
        assert ws.status == "inspected" and ws.layers[0]["feature_count"] == POINTS
        reported = len(seen)
        time.sleep(1.5)
        assert len(seen) == reported, "progress was reported after the import returned"

        # The caller's own id: read back with client.workspaces.progress once the request is over.
        progress_id = unique("py-convert")
        ws.convert("geojson", progress_id=progress_id)
        done = client.workspaces.progress(progress_id)
        assert (done["operation"], done["status"], done["percent"]) == ("convert", "completed", 100)
    finally:
        held_server.release.set()
        importing.join(30)
        client.sources.delete(source["id"])
