"""Sources and Destinations against the real server: pages, partial updates, secrets, tests, discovery."""

from __future__ import annotations

import socket
from typing import Any, Callable

import pytest

from svc_client import AuthorizationError, Client, NotFoundError, ValidationError

from .conftest import DataServer, capability, ids, require_capability, unique

ALL = ("sources:read", "sources:write", "destinations:read", "destinations:write")


def _closed_port_url() -> str:
    """A loopback URL where nothing listens (the port was free a moment ago)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/cities.geojson"


@pytest.fixture
def client(client_with: Callable[..., Client]) -> Client:
    return client_with(*ALL)


def test_source_crud_and_pages(client: Client, data_server: DataServer) -> None:
    made = [client.sources.create(unique("page"), "url", {"url": data_server.url("cities.geojson")}) for _ in range(3)]
    try:
        first = client.sources.page(limit=2)
        assert len(first["items"]) == 2 and first["next_cursor"]
        second = client.sources.page(limit=2, cursor=first["next_cursor"])
        assert not set(ids(first["items"])) & set(ids(second["items"]))
        # Newest first: the three just made open the list, the last one made on top.
        assert ids(first["items"])[:2] == [made[2]["id"], made[1]["id"]]
        everything = ids(client.sources.list(page_size=1))
        assert {s["id"] for s in made} <= set(everything)
        assert len(everything) == len(set(everything))

        one = made[0]
        assert client.sources.get(one["id"]) == one
        renamed = client.sources.update(one["id"], name="renamed")
        assert (renamed["name"], renamed["configuration"]) == ("renamed", one["configuration"])
        moved = client.sources.update(one["id"], configuration={"url": data_server.url("other.geojson")})
        assert (moved["name"], moved["configuration"]["url"]) == ("renamed", data_server.url("other.geojson"))
    finally:
        for source in made:
            client.sources.delete(source["id"])
    with pytest.raises(NotFoundError) as caught:
        client.sources.get(made[0]["id"])
    assert caught.value.code == "source_not_found"


@pytest.mark.parametrize("kind", ["sources", "destinations"])
def test_secrets_are_write_only(client: Client, postgis_config: dict[str, Any], kind: str) -> None:
    collection = getattr(client, kind)
    saved = collection.create(unique("db"), "postgis", postgis_config)
    try:
        assert saved["configuration"]["has_password"] is True
        assert "password" not in saved["configuration"]
        assert postgis_config["password"] not in str(saved) and postgis_config["password"] not in str(collection.list())
        assert collection.get(saved["id"])["configuration"] == saved["configuration"]

        kept = collection.update(saved["id"], name="db renamed", configuration={"port": postgis_config["port"]})
        assert (kept["name"], kept["configuration"]["has_password"]) == ("db renamed", True)

        cleared = collection.update(saved["id"], clear_secrets=["password"])
        assert cleared["configuration"]["has_password"] is False
        assert cleared["configuration"]["host"] == postgis_config["host"]

        with pytest.raises(ValidationError) as caught:
            collection.update(saved["id"], configuration={"no_such_field": 1})
        assert caught.value.status_code == 422 and "no_such_field" in caught.value.message
    finally:
        collection.delete(saved["id"])


def test_connection_tests_are_results(client: Client, data_server: DataServer) -> None:
    source = client.sources.create(unique("cities"), "url", {"url": data_server.url("cities.geojson")})
    try:
        result = client.sources.test(source["id"])
        assert result["ok"] is True and result["status"] == "ok"
        assert result["tried"]["url"] == data_server.url("cities.geojson")
        assert isinstance(result["duration_ms"], (int, float))
    finally:
        client.sources.delete(source["id"])

    draft = client.sources.test_draft("url", {"url": _closed_port_url()})
    assert (draft["ok"], draft["status"]) == (False, "unreachable")

    with pytest.raises(ValidationError) as caught:
        client.sources.test_draft("url", {"url": "not a url"})
    assert caught.value.status_code == 422


def test_postgis_test_and_discover(client: Client, postgis_config: dict[str, Any]) -> None:
    require_capability(client, "postgis", "test")
    draft = client.destinations.test_draft("postgis", postgis_config)
    assert draft["ok"] is True, draft
    assert {"host", "port", "database"} <= set(draft["tried"])
    wrong = client.sources.test_draft("postgis", dict(postgis_config, password="not the password"))
    assert (wrong["ok"], wrong["status"]) == (False, "authentication_failed")
    assert "not the password" not in str(wrong)

    require_capability(client, "postgis", "discover")
    source = client.sources.create(unique("db"), "postgis", postgis_config)
    destination = client.destinations.create(unique("db"), "postgis", postgis_config)
    try:
        assert client.sources.test(source["id"])["ok"] is True
        found = client.sources.discover(source["id"])
        assert "public" in found["schemas"] and found["database"] == postgis_config["database"]
        tables = client.destinations.discover(destination["id"], schema="public")
        assert tables["schema"] == "public" and isinstance(tables["tables"], list)
    finally:
        client.sources.delete(source["id"])
        client.destinations.delete(destination["id"])


def test_saved_destination_test(client: Client, postgis_config: dict[str, Any]) -> None:
    destination = client.destinations.create(unique("db"), "postgis", postgis_config)
    try:
        if capability(client, "postgis", "test"):
            result = client.destinations.test(destination["id"])
            assert (result["ok"], result["tried"]["database"]) == (True, postgis_config["database"])
        else:  # the type is accepted and saved, and the server says it cannot connect yet
            with pytest.raises(ValidationError) as caught:
                client.destinations.test(destination["id"])
            assert (caught.value.status_code, caught.value.code) == (422, "not_implemented")
    finally:
        client.destinations.delete(destination["id"])


def test_discover_is_for_postgis_only(client: Client, data_server: DataServer) -> None:
    source = client.sources.create(unique("cities"), "url", {"url": data_server.url("cities.geojson")})
    try:
        with pytest.raises(ValidationError) as caught:
            client.sources.discover(source["id"])
        assert (caught.value.status_code, caught.value.code) == (400, "invalid_source")
    finally:
        client.sources.delete(source["id"])
    with pytest.raises(NotFoundError) as missing:
        client.destinations.discover("dst_doesnotexist")
    assert missing.value.code == "destination_not_found"


def test_connector_catalogue(client_with: Callable[..., Client]) -> None:
    catalogue = Client(url=client_with("sources:read").url, token=None).connectors  # public: no token
    assert {"url", "postgis", "s3"} <= set(catalogue.ids())
    assert catalogue.secrets("postgis") == ["password"]
    assert capability(client_with("sources:read"), "url", "import") is True


def test_scopes(client_with: Callable[..., Client], data_server: DataServer) -> None:
    reader = client_with("sources:read")
    reader.sources.list()
    with pytest.raises(AuthorizationError) as caught:
        reader.sources.create(unique("x"), "url", {"url": data_server.url("cities.geojson")})
    assert caught.value.details.get("missing_scopes") == ["sources:write"]
    with pytest.raises(AuthorizationError):
        client_with("sources:read", "sources:write").destinations.list()
