"""Workspace flow against the real server: upload → preview → transform → convert → download."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import pytest

from svc_client import Client, LocalFileExistsError, ValidationError, Workspace

from .conftest import CITIES, DataServer, capability, require_capability, unique


@pytest.fixture
def client(client_with: Callable[..., Client]) -> Client:
    return client_with("workspaces:read", "workspaces:write", "workspaces:run")


@pytest.fixture
def cities(tmp_path: Path) -> Path:
    path = tmp_path / "cities.geojson"
    path.write_text(json.dumps(CITIES))
    return path


def _upload(client: Client, path: Path) -> Workspace:
    return client.workspaces.upload(path)


def _field_names(preview: dict[str, Any]) -> list[str]:
    return [f["name"] for f in preview["fields"]]


def _vector_output_format(client: Client) -> str:
    """A writable vector format from the server's catalog (GeoPackage when offered)."""
    writable = [f for f in client.formats.list() if f.get("write") and f.get("kind", "vector") == "vector"]
    assert writable, "the format catalog offers no writable vector format"
    for f in writable:
        if str(f["id"]).lower() == "gpkg":
            return str(f["id"])
    return str(writable[0]["id"])


def test_upload_preview_transform_convert_download(client: Client, cities: Path, tmp_path: Path) -> None:
    uploaded: list[tuple[int, int | None]] = []
    ws = client.workspaces.upload(cities, progress=lambda d, t: uploaded.append((d, t)))
    assert ws.id and ws.status
    assert uploaded[-1][0] == cities.stat().st_size
    assert len(ws.layer_names) == 1
    layer = ws.layer_names[0]

    data = ws.preview_data(layer, limit=2)
    assert data["preview_row_count"] == len(data["rows"]) == 2
    assert data["truncated"] is True
    assert {"name", "pop"} <= set(_field_names(data))
    assert data["has_geometry"] is True

    spatial = ws.preview_map(layer)
    assert spatial["preview_crs"] == "EPSG:4326"
    assert spatial["geojson"]["type"] == "FeatureCollection"
    assert len(spatial["geojson"]["features"]) == 3
    lon, lat = spatial["geojson"]["features"][0]["geometry"]["coordinates"][:2]
    assert -10 < lon < -7 and 36 < lat < 42

    operations = [{"type": "rename_column", "from": "name", "to": "city"}]
    ws.set_transformations(operations=operations)
    stored = ws.transformations()["operations"]
    assert [{k: op.get(k) for k in operations[0]} for op in stored] == operations
    transformed = ws.preview_transformed_data(layer)
    assert "city" in _field_names(transformed) and "name" not in _field_names(transformed)
    assert ws.preview_transformed_map(layer)["geojson"]["type"] == "FeatureCollection"

    output_format = _vector_output_format(client)
    result = ws.convert(output_format)
    assert result["status"] == "completed"
    assert ws.refresh().status == "completed"

    target = tmp_path / "out" / "cities.out"
    target.parent.mkdir()
    downloaded: list[tuple[int, int | None]] = []
    saved = ws.download(target, progress=lambda d, t: downloaded.append((d, t)))
    assert saved == target and target.stat().st_size > 0
    if output_format.lower() == "gpkg":
        assert target.read_bytes()[:16] == b"SQLite format 3\x00"
    with pytest.raises(LocalFileExistsError):
        ws.download(target)
    assert ws.download(target, overwrite=True) == target
    assert sorted(p.name for p in target.parent.iterdir()) == ["cities.out"]

    ws.clear_transformations()
    assert "name" in _field_names(ws.preview_transformed_data(layer))


def test_spatial_preview_of_a_table_is_refused(client: Client, tmp_path: Path) -> None:
    table = tmp_path / "people.csv"
    table.write_text("id,name\n1,Ana\n2,Rui\n")
    ws = _upload(client, table)
    data = ws.preview_data()
    assert data["has_geometry"] is False
    assert len(data["rows"]) == 2
    with pytest.raises(ValidationError) as caught:
        ws.preview_map()
    assert (caught.value.status_code, caught.value.code) == (400, "invalid_parameter")


def test_bad_preview_limit(client: Client, cities: Path) -> None:
    ws = _upload(client, cities)
    with pytest.raises(ValidationError) as caught:
        ws.preview_data(limit=0)
    assert caught.value.code == "invalid_parameter"


def test_workspace_needs_its_scope(client_with: Callable[..., Client], cities: Path) -> None:
    from svc_client import AuthorizationError

    _upload(client_with("workspaces:write"), cities)
    with pytest.raises(AuthorizationError):
        client_with("workspaces:read").workspaces.upload(cities)


def test_import_from_a_saved_source_and_deliver(
    client_with: Callable[..., Client], data_server: DataServer, postgis_config: dict[str, Any]
) -> None:
    client = client_with("workspaces:read", "workspaces:write", "workspaces:run", "sources:read", "sources:write",
                         "destinations:read", "destinations:write")
    source = client.sources.create(unique("cities"), "url", {"url": data_server.url("cities.geojson")})
    destination = client.destinations.create(unique("db"), "postgis", postgis_config)
    table = unique("cities")
    try:
        ws = client.workspaces.import_source(source["id"])  # a url Source needs no selector
        assert ws.status == "inspected" and ws.layers[0]["feature_count"] == 3
        with pytest.raises(ValidationError) as no_shorthand:
            client.workspaces.import_source(source["id"], "cities")  # url has no shorthand: the server says so
        assert no_shorthand.value.status_code == 422

        with pytest.raises(ValidationError) as not_ready:
            ws.deliver(destination["id"], {"schema": "public", "table": table})
        assert (not_ready.value.status_code, not_ready.value.code) == (409, "job_not_ready")

        ws.convert(_vector_output_format(client))
        if not capability(client, "postgis", "deliver"):
            with pytest.raises(ValidationError) as refused:
                ws.deliver(destination["id"], {"schema": "public", "table": table})
            assert (refused.value.status_code, refused.value.code) == (422, "not_implemented")
            pytest.skip("the server's postgis connector cannot deliver yet: the PostGIS round trip did not run")

        target = {"schema": "public", "table": table, "write_mode": "create"}
        delivered = ws.deliver(destination["id"], target)
        assert (delivered["destination_id"], delivered["destination_type"]) == (destination["id"], "postgis")
        assert delivered["rows_written"] == 3
        assert postgis_config["password"] not in str(delivered)
        with pytest.raises(ValidationError) as exists:
            ws.deliver(destination_id=destination["id"], destination_target=target)
        assert (exists.value.status_code, exists.value.code) == (409, "target_exists")

        require_capability(client, "postgis", "import")
        back = client.sources.create(unique("db"), "postgis", postgis_config)
        try:
            for resource in (table, {"schema": "public", "table": table}):  # shorthand, then selector
                imported = client.workspaces.import_source(back["id"], resource)
                assert imported.layers[0]["feature_count"] == 3
        finally:
            client.sources.delete(back["id"])
    finally:
        client.sources.delete(source["id"])
        client.destinations.delete(destination["id"])
