"""Sources, Destinations, Recipes and the catalogs: every method, its route and its body."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from svc_client import Client, NotFoundError

from .conftest import CONNECTORS, FakeServer


@pytest.mark.parametrize("name", ["sources", "destinations"])
def test_connection_crud(server: FakeServer, client: Client, name: str) -> None:
    prefix = f"/{name}"
    saved = {"id": "x_1", "name": "roads", "type": "postgis", "configuration": {"host": "db", "has_password": True}}
    server.on("GET", prefix, {"items": [saved], "next_cursor": None})
    server.on("GET", f"{prefix}/x_1", saved)
    server.on("POST", prefix, saved, status=201)
    server.on("PUT", f"{prefix}/x_1", saved)
    server.on("DELETE", f"{prefix}/x_1", status=204)
    server.on("GET", "/connectors", {"items": CONNECTORS})
    collection = getattr(client, name)
    config = {"host": "db", "database": "gis", "username": "u", "password": "p", "ssl_mode": "prefer"}

    assert collection.list() == [saved]
    assert collection.get("x_1") == saved
    assert collection.create("roads", "postgis", config) == saved
    assert (server.last.method, server.body()) == ("POST", {"name": "roads", "type": "postgis", "configuration": config})
    assert collection.update("x_1", "roads2", "postgis", config) == saved
    assert (server.last.method, server.body()) == ("PUT", {"name": "roads2", "type": "postgis", "configuration": config})
    assert collection.page(limit=1) == {"items": [saved], "next_cursor": None}
    assert dict(server.last.url.params) == {"limit": "1"}
    assert collection.delete("x_1") is None
    assert server.last.method == "DELETE"


@pytest.mark.parametrize("name", ["sources", "destinations"])
def test_connection_test_and_discover(server: FakeServer, client: Client, name: str) -> None:
    prefix = f"/{name}"
    server.on("POST", f"{prefix}/x_1/test", {"ok": True})
    server.on("POST", f"{prefix}/test", {"ok": False})
    server.on("GET", f"{prefix}/x_1/discover", lambda r: httpx.Response(200, json={
        "host": "db", "database": "gis", "schemas": ["public"], **({"schema": r.url.params["schema"], "tables": []} if "schema" in r.url.params else {})
    }))
    collection = getattr(client, name)

    assert collection.test("x_1") == {"ok": True}
    assert collection.test_draft("url", {"url": "https://data.example/a.geojson"}) == {"ok": False}
    assert server.body() == {"type": "url", "configuration": {"url": "https://data.example/a.geojson"}}
    collection.test_draft("url", {"url": "u"}, name="draft")
    assert server.body()["name"] == "draft"
    assert collection.discover("x_1") == {"host": "db", "database": "gis", "schemas": ["public"]}
    assert "schema" not in server.last.url.params
    assert collection.discover("x_1", schema="public")["tables"] == []
    assert server.last.url.params["schema"] == "public"


@pytest.mark.parametrize("name", ["sources", "destinations"])
def test_geoserver_and_geonode_browse_helpers(server: FakeServer, client: Client, name: str) -> None:
    prefix = f"/{name}/x_1"
    server.on("GET", f"{prefix}/geoserver/workspaces", {"items": [{"name": "nyc"}]})
    server.on("GET", f"{prefix}/geoserver/workspaces/ny%20c/stores", {"workspace": "ny c", "items": [{"name": "boroughs"}]})
    server.on("GET", f"{prefix}/geoserver/workspaces/nyc/layers", {"workspace": "nyc", "items": [{"name": "boroughs", "qualified_name": "nyc:boroughs"}]})
    server.on("GET", f"{prefix}/geonode/datasets", lambda r: httpx.Response(200, json={"items": [], "total": 0, "page": int(r.url.params["page"]), "page_size": int(r.url.params["page_size"])}))
    collection = getattr(client, name)

    assert collection.geoserver_workspaces("x_1")["items"] == [{"name": "nyc"}]
    assert collection.geoserver_stores("x_1", "ny c")["items"] == [{"name": "boroughs"}]
    assert collection.geoserver_layers("x_1", "nyc")["items"][0]["qualified_name"] == "nyc:boroughs"
    assert collection.geonode_datasets("x_1", search="borough", page=2, page_size=5) == {"items": [], "total": 0, "page": 2, "page_size": 5}
    assert server.last.url.params["search"] == "borough"
    collection.geonode_datasets("x_1")
    assert "search" not in server.last.url.params


@pytest.mark.parametrize("name", ["sources", "destinations"])
def test_hub_browse_helpers(server: FakeServer, client: Client, name: str) -> None:
    prefix = f"/{name}/x_1/hub"
    server.on("GET", f"{prefix}/items", lambda r: httpx.Response(200, json={"total": 1, "start": int(r.url.params["start"]), "next_start": None, "items": [{"id": "a1"}], "params": dict(r.url.params)}))
    server.on("GET", f"{prefix}/folders", {"username": "gis", "folders": [{"id": "f1", "title": "nightly"}]})
    server.on("GET", f"{prefix}/items/a1/layers", {"item": {"id": "a1"}, "layers": [{"id": 0, "name": "parcels"}]})
    collection = getattr(client, name)

    page = collection.hub_items("x_1", 'type:"Feature Service"', owner_only=True, start=21)
    assert page["params"] == {"q": 'type:"Feature Service"', "owner_only": "true", "start": "21", "num": "20"}
    assert collection.hub_items("x_1")["params"] == {"start": "1", "num": "20"}
    assert collection.hub_folders("x_1")["folders"][0]["title"] == "nightly"
    assert collection.hub_layers("x_1", "a1")["layers"][0]["name"] == "parcels"


@pytest.mark.parametrize("name", ["sources", "destinations"])
def test_update_changes_only_what_is_given(server: FakeServer, client: Client, name: str) -> None:
    saved = {"id": "x_1", "name": "db", "type": "postgis", "created_at": "2026-01-01T00:00:00Z",
             "configuration": {"host": "db", "port": 5433, "database": "gis", "username": "u", "ssl_mode": "require",
                               "has_password": True}}
    server.on("GET", f"/{name}/x_1", saved)
    server.on("GET", "/connectors", {"items": CONNECTORS})
    server.on("PUT", f"/{name}/x_1", saved)
    collection = getattr(client, name)
    kept = {"host": "db", "port": 5433, "database": "gis", "username": "u", "ssl_mode": "require"}

    collection.update("x_1", name="db v2")
    # has_password is a flag of the answer, not a field: it is not sent back; the secret is kept.
    assert server.body() == {"name": "db v2", "type": "postgis", "configuration": kept}

    collection.update("x_1", configuration={"password": "new", "port": None})
    expected = dict(kept, password="new")
    del expected["port"]  # None leaves a field to the server's default
    assert server.body() == {"name": "db", "type": "postgis", "configuration": expected}

    collection.update("x_1", clear_secrets=["password"])
    assert server.body()["configuration"] == dict(kept, password=None)  # null clears a secret
    collection.update("x_1", configuration={"password": None})
    assert server.body()["configuration"] == dict(kept, password=None)
    with pytest.raises(ValueError, match="not a secret"):
        collection.update("x_1", clear_secrets=["host"])

    # A new type takes a whole new configuration: nothing of the old one is carried over.
    collection.update("x_1", type="s3", configuration={"bucket": "b"})
    assert server.body() == {"name": "db", "type": "s3", "configuration": {"bucket": "b"}}


def test_page_passes_limit_and_cursor(server: FakeServer, client: Client) -> None:
    server.on("GET", "/sources", {"items": [{"id": "src_2"}], "next_cursor": "c2"})
    assert client.sources.page(limit=1, cursor="c1") == {"items": [{"id": "src_2"}], "next_cursor": "c2"}
    assert dict(server.last.url.params) == {"limit": "1", "cursor": "c1"}
    server.on("GET", "/sources", {"items": [], "next_cursor": ""})
    assert client.sources.page() == {"items": [], "next_cursor": None}
    assert dict(server.last.url.params) == {}


def test_connector_catalog(server: FakeServer, client: Client) -> None:
    server.on("GET", "/connectors", {"items": CONNECTORS})
    assert client.connectors.ids() == ["url", "postgis", "s3"]
    assert client.connectors.get("postgis")["label"] == "PostGIS"
    assert client.connectors.secrets("s3") == ["secret_key", "session_token"]
    assert client.connectors.secrets("url") == []
    assert "authorization" not in server.last.headers  # public, like /formats
    with pytest.raises(ValueError, match="url, postgis, s3"):
        client.connectors.get("ftp")


def test_source_projects_and_inspect(server: FakeServer, client: Client) -> None:
    server.on("POST", "/sources/src_1/projects", {"items": [{"id": "p1", "name": "Trees"}]})
    inspected = {"project": {"id": "p1"}, "version": "v3", "versions": [], "files": [{"name": "a.gpkg", "layers": []}]}
    server.on("POST", "/sources/src_1/inspect-project", inspected)
    assert client.sources.projects("src_1") == [{"id": "p1", "name": "Trees"}]
    assert server.body() == {}
    assert client.sources.inspect_project("src_1", "p1", version="v3") == inspected
    assert server.body() == {"project": "p1", "version": "v3"}
    assert client.sources.inspect_project("src_1", "p1") == inspected
    assert server.body() == {"project": "p1"}


def test_discover_error_code_is_kept(server: FakeServer, client: Client) -> None:
    server.on("GET", "/destinations/dst_9/discover", httpx.Response(
        404, json={"error": {"code": "destination_not_found", "message": "no such destination", "details": {}}}))
    with pytest.raises(NotFoundError) as caught:
        client.destinations.discover("dst_9")
    assert caught.value.code == "destination_not_found"


def test_recipe_crud(server: FakeServer, client: Client) -> None:
    ops: list[dict[str, Any]] = [{"type": "rename_column", "from": "a", "to": "b"}, {"type": "buffer", "distance": 5, "units": "source"}]
    recipe = {"id": "rcp_1", "name": "clean", "description": None, "operations": ops}
    server.on_collection("/recipes", recipe)

    assert client.recipes.list() == [recipe]
    assert client.recipes.get("rcp_1") == recipe
    client.recipes.create("clean", ops)
    assert server.body() == {"name": "clean", "operations": ops}
    client.recipes.create("clean", ops, description="tidy")
    assert server.body() == {"name": "clean", "operations": ops, "description": "tidy"}
    client.recipes.update("rcp_1", "clean2", ops[:1])
    assert (server.last.method, server.body()) == ("PUT", {"name": "clean2", "operations": ops[:1]})
    client.recipes.delete("rcp_1")
    assert server.last.method == "DELETE"


def test_transformations_catalog(server: FakeServer, client: Client) -> None:
    catalog = [{"id": "buffer", "label": "Buffer"}, {"id": "simplify", "label": "Simplify"}]
    server.on("GET", "/transformations", {"items": catalog})
    assert client.transformations.list() == catalog
    assert client.transformations.ids() == ["buffer", "simplify"]
    assert server.last.headers["authorization"].startswith("Bearer ")


def test_formats_catalog_from_server(server: FakeServer, client: Client) -> None:
    server.on("GET", "/formats", {"items": [{"id": "FlatGeobuf", "write": True}]})
    assert client.formats.ids() == ["FlatGeobuf"]
    assert "authorization" not in server.last.headers


def test_catalog_with_unexpected_shape(server: FakeServer, client: Client) -> None:
    from svc_client import ServerError

    server.on("GET", "/transformations", {"operations": []})
    with pytest.raises(ServerError):
        client.transformations.list()


@pytest.mark.parametrize(
    ("name", "body"),
    [
        ("sources", {"name": "roads", "type": "url", "configuration": {"url": "https://example.org/r.geojson"}}),
        ("destinations", {"name": "out", "type": "postgis", "configuration": {"host": "db", "database": "gis", "username": "u"}}),
        ("recipes", {"name": "clean", "operations": [{"type": "buffer", "distance": 5, "units": "source"}], "description": "tidy"}),
        ("jobs", {"name": "nightly", "source": {"type": "upload"}}),
    ],
)
def test_every_collection_takes_a_body_mapping_and_or_keyword_fields_the_same_way(
    server: FakeServer, client: Client, name: str, body: dict[str, Any]
) -> None:
    """README, "Calling convention": create(body) == create(**fields) == create(part, **rest); update(id, body) likewise."""
    prefix = f"/{name}"
    answer = {"id": "x_1", **body}
    server.on("POST", prefix, answer, status=201)
    server.on("PUT", f"{prefix}/x_1", answer)
    server.on("GET", f"{prefix}/x_1", answer)
    server.on("GET", "/connectors", {"items": CONNECTORS})
    collection = getattr(client, name)
    first, *rest = body
    sent = []
    for call in (lambda: collection.create(body), lambda: collection.create(**body),
                 lambda: collection.create({first: body[first]}, **{k: body[k] for k in rest})):
        assert call() == answer
        sent.append(server.body())
    assert sent[0] == sent[1] == sent[2]
    assert sent[0]["name"] == body["name"]
    updates = []
    for call in (lambda: collection.update("x_1", body), lambda: collection.update("x_1", {first: body[first]}, **{k: body[k] for k in rest})):
        call()
        updates.append((server.last.method, server.body()))
    assert updates[0] == updates[1] == ("PUT", sent[0])
    # Keyword fields alone change just those fields of the saved object.
    collection.update("x_1", name="renamed")
    assert server.last.method == "PUT" and server.body()["name"] == "renamed"
    if name != "jobs":  # a Job body's fields are checked by the server
        with pytest.raises(TypeError):
            collection.create(body, nonsense=1)
