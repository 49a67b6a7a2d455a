"""A tiny in-memory server for the unit tests: routes answer through httpx.MockTransport."""

from __future__ import annotations

import json
from typing import Any, Callable, Iterator

import httpx
import pytest

from svc_client import Client

TOKEN = "svcpat_" + "A" * 43
URL = "https://gis.example.test"

Handler = Callable[[httpx.Request], httpx.Response]


def envelope(status: int, code: str, message: str = "refused", details: dict[str, Any] | None = None) -> httpx.Response:
    return httpx.Response(status, json={"error": {"code": code, "message": message, "details": details or {}}})


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
