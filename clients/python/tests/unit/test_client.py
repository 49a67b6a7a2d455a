"""The Client itself: headers, token hygiene, timeouts, pagination, top-level calls."""

from __future__ import annotations

import logging

import httpx
import pytest

from svc_client import Client, ServerError

from .conftest import TOKEN, URL, FakeServer


def test_bearer_header_and_prefix(server: FakeServer, client: Client) -> None:
    server.on("GET", "/auth/me", {"id": "usr_1", "email": "a@example.org"})

    assert client.me() == {"id": "usr_1", "email": "a@example.org"}

    request = server.last
    assert str(request.url) == f"{URL}/api/v1/auth/me"
    assert request.headers["authorization"] == f"Bearer {TOKEN}"
    assert request.headers["accept"] == "application/json"
    assert request.headers["user-agent"].startswith("svc-client/")
    assert TOKEN not in str(request.url)


def test_origin_with_path_prefix(server: FakeServer) -> None:
    server.routes[("GET", "/gis/api/v1/auth/me")] = httpx.Response(200, json={"id": "usr_1"})
    with Client(url="https://example.org/gis/", token=TOKEN, transport=server.transport()) as client:
        assert client.api_url == "https://example.org/gis/api/v1"
        assert client.me() == {"id": "usr_1"}


def test_public_catalogs_need_no_token(server: FakeServer) -> None:
    server.on("GET", "/formats", {"items": [{"id": "GPKG", "write": True}]})
    server.on("GET", "/system", {"name": "svc", "version": "1.0"})
    with Client(url=URL, transport=server.transport()) as client:
        assert client.formats.list() == [{"id": "GPKG", "write": True}]
        assert client.system()["version"] == "1.0"
    assert all("authorization" not in r.headers for r in server.requests)


def test_repr_never_shows_the_token(client: Client) -> None:
    assert TOKEN not in repr(client)
    assert "token=set" in repr(client)
    assert client.has_token


def test_token_never_logged(server: FakeServer, client: Client, caplog: pytest.LogCaptureFixture) -> None:
    server.on("GET", "/auth/me", {"id": "usr_1"})
    with caplog.at_level(logging.DEBUG):
        client.me()
    assert caplog.records, "expected debug logs from svc_client/httpx"
    assert TOKEN not in caplog.text


def test_context_manager_closes(server: FakeServer) -> None:
    with Client(url=URL, token=TOKEN, transport=server.transport()) as client:
        pass
    assert client._http.is_closed


def test_timeouts_ordinary_and_long(server: FakeServer) -> None:
    server.on("GET", "/recipes/rcp_1", {"id": "rcp_1"})
    server.on("GET", "/workspaces/ws_1/data-preview", {"rows": []})
    with Client(url=URL, token=TOKEN, timeout=7, run_timeout=99, transport=server.transport()) as client:
        client.recipes.get("rcp_1")
        assert server.last.extensions["timeout"]["read"] == 7
        client.workspaces._client._json("GET", "/workspaces/ws_1/data-preview", long=True)
        assert server.last.extensions["timeout"]["read"] == 99


def test_defaults_match_the_spec() -> None:
    with Client(url=URL, token=TOKEN) as client:
        assert client.timeout == 30
        assert client.run_timeout == 600


def test_list_follows_every_page(server: FakeServer, client: Client) -> None:
    pages = {
        None: {"items": [{"id": "rcp_3"}, {"id": "rcp_2"}], "next_cursor": "c1"},
        "c1": {"items": [{"id": "rcp_1"}], "next_cursor": "c2"},
        "c2": {"items": [], "next_cursor": None},
    }
    server.on("GET", "/recipes", lambda r: httpx.Response(200, json=pages[r.url.params.get("cursor")]))

    assert [r["id"] for r in client.recipes.list(page_size=2)] == ["rcp_3", "rcp_2", "rcp_1"]
    assert [dict(r.url.params) for r in server.requests] == [
        {"limit": "2"},
        {"limit": "2", "cursor": "c1"},
        {"limit": "2", "cursor": "c2"},
    ]


def test_iter_is_lazy(server: FakeServer, client: Client) -> None:
    server.on("GET", "/recipes", [
        httpx.Response(200, json={"items": [{"id": "a"}], "next_cursor": "c1"}),
        httpx.Response(200, json={"items": [{"id": "b"}], "next_cursor": None}),
    ])
    iterator = client.recipes.iter()
    assert next(iterator) == {"id": "a"}
    assert len(server.requests) == 1
    assert [r["id"] for r in iterator] == ["b"]


def test_repeated_cursor_stops_with_server_error(server: FakeServer, client: Client) -> None:
    server.on("GET", "/recipes", {"items": [{"id": "a"}], "next_cursor": "same"})
    with pytest.raises(ServerError) as caught:
        client.recipes.list()
    assert caught.value.code == "invalid_response"


def test_unpaginated_list_is_tolerated(server: FakeServer, client: Client) -> None:
    server.on("GET", "/recipes", httpx.Response(200, json=[{"id": "a"}]))
    assert client.recipes.list() == [{"id": "a"}]


def test_non_json_success_is_server_error(server: FakeServer, client: Client) -> None:
    server.on("GET", "/auth/me", httpx.Response(200, text="<html>login</html>"))
    with pytest.raises(ServerError) as caught:
        client.me()
    assert caught.value.code == "invalid_response"


def test_ids_are_one_path_segment(server: FakeServer, client: Client) -> None:
    server.on("GET", "/recipes/..%2Fjobs", {"id": "x"})
    client.recipes.get("../jobs")
    assert server.last.url.raw_path == b"/api/v1/recipes/..%2Fjobs"
    with pytest.raises(ValueError):
        client.recipes.get("")
