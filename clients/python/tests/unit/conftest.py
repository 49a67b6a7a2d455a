"""A tiny in-memory server for the unit tests: routes answer through httpx.MockTransport."""

from __future__ import annotations

import json
import time
from typing import Any, Callable, Iterator

import httpx
import pytest

from svc_client import Client

TOKEN = "svcpat_" + "A" * 43
URL = "https://gis.example.test"

Handler = Callable[[httpx.Request], httpx.Response]

#: A slice of GET /api/v1/connectors, as the server serves it (fields trimmed to what clients read).
CONNECTORS = [
    {"type": "url", "label": "URL", "kinds": ["source"], "implemented": True, "secrets": [],
     "configuration": {"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"]},
     "source": {"resource_required": False, "resource_shorthand": None}, "destination": None},
    {"type": "postgis", "label": "PostGIS", "kinds": ["source", "destination"], "implemented": True,
     "secrets": ["password"],
     "configuration": {"type": "object", "properties": {
         "host": {"type": "string"}, "port": {"type": "integer", "default": 5432}, "database": {"type": "string"},
         "username": {"type": "string"}, "password": {"type": "string", "description": "Password (secret: write-only)"},
         "ssl_mode": {"type": "string", "default": "prefer"}}, "required": ["host", "database", "username"]},
     "source": {"resource_required": True, "resource_shorthand": "table"}, "destination": {"deliverable": True}},
    {"type": "s3", "label": "Amazon S3", "kinds": ["source", "destination"], "implemented": False,
     "secrets": ["secret_key", "session_token"],
     "configuration": {"type": "object", "properties": {
         "bucket": {"type": "string"}, "access_key": {"type": "string"}, "secret_key": {"type": "string"},
         "session_token": {"type": "string"}}, "required": ["bucket"]},
     "source": {"resource_required": True, "resource_shorthand": "key"}, "destination": {"deliverable": True}},
]


def envelope(status: int, code: str, message: str = "refused", details: dict[str, Any] | None = None) -> httpx.Response:
    return httpx.Response(status, json={"error": {"code": code, "message": message, "details": details or {}}})


def local_zone(monkeypatch: pytest.MonkeyPatch, zone: str) -> Iterator[None]:
    """For a fixture: the machine's time zone is ``zone`` while the test runs (times print in it)."""
    monkeypatch.setenv("TZ", zone)
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


class FakeServer:
    """Routes keyed by (method, path); each answers with a response, a handler, or a sequence."""

    def __init__(self) -> None:
        self.routes: dict[tuple[str, str], Any] = {}
        self.requests: list[httpx.Request] = []

    def on(self, method: str, path: str, answer: Any = None, *, status: int = 200) -> FakeServer:
        """``answer``: a JSON value, an httpx.Response, a handler, or a list of those (one per call)."""
        if not (isinstance(answer, (httpx.Response, list)) or callable(answer)):
            answer = httpx.Response(status, json=answer) if answer is not None else httpx.Response(status)
        self.routes[(method, "/api/v1" + path)] = answer
        return self

    def __call__(self, request: httpx.Request) -> httpx.Response:
        request.read()
        self.requests.append(request)
        path = request.url.raw_path.decode().split("?")[0]
        answer = self.routes.get((request.method, path))
        if answer is None:
            return envelope(404, "not_found", f"no route {request.method} {request.url.path}")
        if isinstance(answer, list):
            answer = answer.pop(0) if len(answer) > 1 else answer[0]
        if callable(answer) and not isinstance(answer, httpx.Response):
            answer = answer(request)
        if not isinstance(answer, httpx.Response):
            answer = httpx.Response(200, json=answer)
        return answer

    def on_collection(self, path: str, item: dict[str, Any]) -> FakeServer:
        """A collection holding one ``item``: list, get, create (201), replace and delete (204)."""
        one = f"{path}/{item['id']}"
        self.on("GET", path, {"items": [item], "next_cursor": None})
        self.on("GET", one, item)
        self.on("POST", path, item, status=201)
        self.on("PUT", one, item)
        return self.on("DELETE", one, status=204)

    @property
    def last(self) -> httpx.Request:
        return self.requests[-1]

    def body(self, index: int = -1) -> Any:
        return json.loads(self.requests[index].content)

    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self)


@pytest.fixture(autouse=True)
def isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """No test sees the developer's SVC_* variables or saved login."""
    for name in ("SVC_URL", "SVC_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SVC_CONFIG_DIR", str(tmp_path_factory.mktemp("svc-config")))
    yield


@pytest.fixture
def server() -> FakeServer:
    return FakeServer()


@pytest.fixture
def client(server: FakeServer) -> Iterator[Client]:
    sut = Client(url=URL, token=TOKEN, transport=server.transport())
    sleeps: list[float] = []
    now = [0.0]

    def fake_sleep(seconds: float) -> None:
        sleeps.append(seconds)
        now[0] += seconds

    sut._sleep = fake_sleep
    sut._clock = lambda: now[0]
    sut.sleeps = sleeps  # type: ignore[attr-defined]
    with sut:
        yield sut
