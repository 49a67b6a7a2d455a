"""Fixtures for the tests against a real server.

The project's `npm test` starts the server and exports SVC_TEST_URL (origin), SVC_TEST_ADMIN_EMAIL,
SVC_TEST_ADMIN_PASSWORD and SVC_TEST_DATABASE_URL (its PostgreSQL + PostGIS cluster, which the
PostGIS Sources and Destinations here point at). Without SVC_TEST_URL every test here is
skipped, saying so. The bootstrap (login, token creation) uses httpx directly, as a browser
session would: a personal access token cannot create tokens.
"""

from __future__ import annotations

import http.server
import json
import os
import threading
import uuid
from typing import Any, Callable, Iterator
from urllib.parse import urlsplit

import httpx
import pytest

from svc_client import Client

MISSING_SERVER = (
    "integration server missing: SVC_TEST_URL is not set "
    "(the project's `npm test` starts the server and exports it)"
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/integration" in str(item.fspath).replace("\\", "/"):
            item.add_marker(pytest.mark.integration)


@pytest.fixture(scope="session")
def server_url() -> str:
    url = os.environ.get("SVC_TEST_URL", "").strip().rstrip("/")
    if not url:
        pytest.skip(MISSING_SERVER)
    return url


@pytest.fixture(scope="session")
def admin_email() -> str:
    return _required("SVC_TEST_ADMIN_EMAIL")


def _required(name: str) -> str:
    value = os.environ.get(name, "")
    if not value:
        pytest.fail(f"SVC_TEST_URL is set but {name} is not: the test command must export it")
    return value


@pytest.fixture(scope="session")
def admin_session(server_url: str, admin_email: str) -> Iterator[httpx.Client]:
    """A browser-like session (cookie svc_session) of the first user."""
    # Cookie-authenticated writes check Origin, as a browser would send it.
    with httpx.Client(base_url=server_url, timeout=30, headers={"Origin": server_url}) as session:
        response = session.post(
            "/api/v1/auth/login",
            json={"email": admin_email, "password": _required("SVC_TEST_ADMIN_PASSWORD")},
        )
        assert response.status_code == 200, f"login failed: {response.status_code} {response.text[:300]}"
        assert "svc_session" in session.cookies, "login did not set the svc_session cookie"
        yield session


@pytest.fixture(scope="session")
def make_token(admin_session: httpx.Client) -> Iterator[Callable[..., str]]:
    """Create a PAT with the given scopes (revoked when the session ends); returns its value."""
    created: list[str] = []

    def make(*scopes: str) -> str:
        response = admin_session.post(
            "/api/v1/account/tokens",
            json={"name": f"svc-client-test-{uuid.uuid4().hex[:8]}", "scopes": list(scopes), "expires_in_days": 1},
        )
        assert response.status_code == 201, f"token creation failed: {response.status_code} {response.text[:300]}"
        body = response.json()
        created.append(body["id"])
        assert body["token"].startswith("svcpat_")
        return str(body["token"])

    yield make
    for token_id in created:
        admin_session.delete(f"/api/v1/account/tokens/{token_id}")


@pytest.fixture
def client_with(server_url: str, make_token: Callable[..., str]) -> Iterator[Callable[..., Client]]:
    """``client_with("recipes:read", ...)``: a Client whose token has exactly those scopes."""
    clients: list[Client] = []

    def make(*scopes: str) -> Client:
        client = Client(url=server_url, token=make_token(*scopes), timeout=30, run_timeout=180)
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.close()


def ids(items: list[dict[str, Any]]) -> list[str]:
    return [str(item["id"]) for item in items]


def unique(prefix: str) -> str:
    """A name no other test (or earlier run against the same server) uses."""
    return f"{prefix}_{uuid.uuid4().hex[:10]}"


CITIES = {
    "type": "FeatureCollection",
    "features": [
        {"type": "Feature", "properties": {"name": "Lisbon", "pop": 545000},
         "geometry": {"type": "Point", "coordinates": [-9.139, 38.722]}},
        {"type": "Feature", "properties": {"name": "Porto", "pop": 232000},
         "geometry": {"type": "Point", "coordinates": [-8.611, 41.149]}},
        {"type": "Feature", "properties": {"name": "Faro", "pop": 64000},
         "geometry": {"type": "Point", "coordinates": [-7.935, 37.019]}},
    ],
}


class LoopbackServer:
    """An HTTP server on 127.0.0.1 in a daemon thread, with a ``release`` event its handler may wait on."""

    def __init__(self) -> None:
        self.release = threading.Event()

    def serve(self, handler: type[http.server.BaseHTTPRequestHandler]) -> None:
        self._httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()

    def url(self, name: str) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/{name}"

    def close(self) -> None:
        self.release.set()
        self._httpd.shutdown()
        self._httpd.server_close()


class DataServer(LoopbackServer):
    """A GeoJSON file server on loopback, for url Sources.

    ``/cities.geojson`` answers CITIES; ``/broken.geojson`` answers HTTP 500; ``/held.geojson``
    answers CITIES only once ``release`` is set (at most 60 s later), so a Run can be caught
    while it runs.
    """

    def __init__(self) -> None:
        super().__init__()
        body = json.dumps(CITIES).encode()
        release = self.release

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802
                path = self.path.split("?")[0]
                if path == "/held.geojson":
                    release.wait(60)
                if path in ("/cities.geojson", "/held.geojson"):
                    self.send_response(200)
                    self.send_header("Content-Type", "application/geo+json")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                    return
                status = 500 if path == "/broken.geojson" else 404
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_HEAD(self) -> None:  # noqa: N802
                self.send_response(200 if self.path.startswith("/cities") else 404)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.serve(Handler)


@pytest.fixture
def data_server() -> Iterator[DataServer]:
    server = DataServer()
    try:
        yield server
    finally:
        server.close()


@pytest.fixture(scope="session")
def postgis_config() -> dict[str, Any]:
    """A PostGIS connection configuration for the test cluster (SVC_TEST_DATABASE_URL)."""
    url = os.environ.get("SVC_TEST_DATABASE_URL", "")
    if not url:
        pytest.skip("SVC_TEST_DATABASE_URL is not set: the PostGIS Source/Destination tests need the test "
                    "cluster that `npm test` starts and exports")
    parts = urlsplit(url)
    return {
        "host": parts.hostname or "127.0.0.1",
        "port": parts.port or 5432,
        "database": parts.path.lstrip("/") or "postgres",
        "username": parts.username or "postgres",
        "password": parts.password or "",
        "ssl_mode": "disable",
    }


def capability(client: Client, type: str, name: str) -> bool:
    """What the server's connector catalogue says a type can do now (test, discover, import, deliver)."""
    return bool(client.connectors.get(type).get("capabilities", {}).get(name))


def require_capability(client: Client, type: str, name: str) -> None:
    """Skip, naming the missing connector capability, when the server cannot do it yet."""
    if not capability(client, type, name):
        pytest.skip(f"the server's {type} connector cannot {name} yet "
                    f"(GET /api/v1/connectors: capabilities.{name} is false)")
