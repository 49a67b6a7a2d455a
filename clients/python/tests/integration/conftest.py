"""Fixtures for the tests against a real server.

The project's `npm test` starts the server and exports SVC_TEST_URL (origin), SVC_TEST_ADMIN_EMAIL
and SVC_TEST_ADMIN_PASSWORD. Without SVC_TEST_URL every test here is skipped, saying so.
The bootstrap (login, token creation) uses httpx directly, as a browser session would: a personal
access token cannot create tokens.
"""

from __future__ import annotations

import os
import uuid
from typing import Any, Callable, Iterator, TypeVar

import httpx
import pytest

from svc_client import Client, NotFoundError

T = TypeVar("T")

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


def require_route(call: Callable[[], T], what: str) -> T:
    """Run ``call``; skip the test when the server answers 404 ``not_found`` (route not landed)."""
    try:
        return call()
    except NotFoundError as error:
        if error.code == "not_found":
            pytest.skip(
                f"{what}: the server answers 404 not_found for this route, "
                "so the capability has not landed yet"
            )
        raise


def ids(items: list[dict[str, Any]]) -> list[str]:
    return [str(item["id"]) for item in items]
