"""The Workspace handle: upload, import, previews, pipeline, convert, deliver, download."""

from __future__ import annotations

import json
import os
import re
import stat
import threading
import time
from pathlib import Path
from typing import Any, Callable

import httpx
import pytest

from svc_client import (
    Client,
    ConfigError,
    LocalFileExistsError,
    NetworkError,
    NotFoundError,
    ValidationError,
    Workspace,
)
from svc_client.workspaces import _disposition_filename

from .conftest import FakeServer, envelope

WS = {
    "id": "ws_1",
    "status": "inspected",
    "filename": "roads.geojson",
    "layers": [{"name": "roads", "geometry_type": "LineString", "has_geometry": True, "fields": []}],
    "output": None,
    "expires_at": "2030-01-01T00:00:00Z",
}


@pytest.fixture
def ws(client: Client) -> Workspace:
    return Workspace(client, dict(WS))


def test_upload_streams_multipart_and_reports_progress(server: FakeServer, client: Client, tmp_path: Path) -> None:
    data = b'{"type":"FeatureCollection","features":[]}' * 5000
    path = tmp_path / "roads.geojson"
    path.write_bytes(data)
    server.on("POST", "/workspaces", WS, status=201)
    progress: list[tuple[int, int | None]] = []

    handle = client.workspaces.upload(path, progress=lambda done, total: progress.append((done, total)))

    assert (handle.id, handle.status, handle.layer_names) == ("ws_1", "inspected", ["roads"])
    assert handle.layers == WS["layers"]
    assert handle.expires_at == WS["expires_at"]
    request = server.last
    assert request.headers["content-type"].startswith("multipart/form-data; boundary=")
    assert int(request.headers["content-length"]) == len(request.content)
    assert b'name="file"; filename="roads.geojson"' in request.content
    assert data in request.content
    assert request.extensions["timeout"]["read"] == client.run_timeout
    assert progress[-1] == (len(data), len(data))
    assert len(progress) > 1


def test_upload_sends_reading_options_before_the_file(server: FakeServer, client: Client, tmp_path: Path) -> None:
    path = tmp_path / "stations.csv"
    path.write_bytes(b"station,easting,northing\nA,980000,195000\n")
    server.on("POST", "/workspaces", WS, status=201)

    client.workspaces.upload(path, source_crs="EPSG:2263", x_column="easting", y_column="northing")

    content = server.last.content
    assert b'name="source_crs"\r\n\r\nEPSG:2263' in content
    assert b'name="x_column"\r\n\r\neasting' in content
    assert b'name="z_column"' not in content
    assert content.index(b'name="y_column"') < content.index(b'name="file"')


def test_upload_names_the_geometry_column_of_a_plain_parquet_file(server: FakeServer, client: Client, tmp_path: Path) -> None:
    path = tmp_path / "parcels.parquet"
    path.write_bytes(b"PAR1" + b"\0" * 64 + b"PAR1")
    server.on("POST", "/workspaces", WS, status=201)

    client.workspaces.upload(path, geometry_column="shape_wkb", source_crs="EPSG:2056")

    content = server.last.content
    assert b'name="geometry_column"\r\n\r\nshape_wkb' in content
    assert b'name="x_column"' not in content
    assert content.index(b'name="geometry_column"') < content.index(b'name="file"')


def test_convert_sends_creation_options(server: FakeServer, client: Client) -> None:
    server.on("GET", "/workspaces/ws_1", WS)
    handle = client.workspaces.get("ws_1")
    server.on("POST", "/workspaces/ws_1/convert", {**WS, "status": "completed"})
    handle.convert("CSV", creation_options={"layer": {"GEOMETRY": "AS_XY"}})
    assert server.body() == {"output_format": "CSV", "creation_options": {"layer": {"GEOMETRY": "AS_XY"}}}


def test_upload_missing_file_is_config_error(client: Client, tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        client.workspaces.upload(tmp_path / "absent.gpkg")
    assert caught.value.code == "missing_file"


def test_loose_shapefile_is_refused_with_a_hint(client: Client, tmp_path: Path) -> None:
    shp = tmp_path / "parcels.shp"
    shp.write_bytes(b"x")
    with pytest.raises(ConfigError, match="ZIP"):
        client.workspaces.upload(shp)


def test_upload_too_large(server: FakeServer, client: Client, tmp_path: Path) -> None:
    path = tmp_path / "big.gpkg"
    path.write_bytes(b"x")
    server.on("POST", "/workspaces", envelope(400, "upload_too_large", "too big", {"max_bytes": 268435456}))
    with pytest.raises(ValidationError) as caught:
        client.workspaces.upload(path)
    assert caught.value.details == {"max_bytes": 268435456}


def test_import_source(server: FakeServer, client: Client) -> None:
    server.on("POST", "/workspaces", WS, status=201)
    assert client.workspaces.import_source("src_1").id == "ws_1"
    assert server.body() == {"source_id": "src_1"}
    assert server.last.headers["content-type"] == "application/json"
    client.workspaces.import_source("src_1", {"table": "public.roads"})
    assert server.body() == {"source_id": "src_1", "source_resource": {"table": "public.roads"}}
    client.workspaces.import_source("src_1", "roads")  # the type's shorthand
    assert server.body() == {"source_id": "src_1", "source_resource": "roads"}
    client.workspaces.import_source("src_1", source_resource={"key": "a.gpkg"})
    assert server.body() == {"source_id": "src_1", "source_resource": {"key": "a.gpkg"}}
    with pytest.raises(TypeError):
        client.workspaces.import_source("src_1", "a", source_resource="b")


def test_get_and_refresh(server: FakeServer, client: Client) -> None:
    server.on("GET", "/workspaces/ws_1", [httpx.Response(200, json=WS), httpx.Response(200, json=dict(WS, status="completed"))])
    handle = client.workspaces.get("ws_1")
    assert handle.status == "inspected"
    assert handle.refresh() is handle
    assert handle.status == "completed"
    assert "ws_1" in repr(handle) and "roads" in repr(handle)


def test_expired_workspace(server: FakeServer, client: Client) -> None:
    server.on("GET", "/workspaces/ws_1", envelope(404, "job_expired", "expired"))
    with pytest.raises(NotFoundError) as caught:
        client.workspaces.get("ws_1")
    assert caught.value.code == "job_expired"


@pytest.mark.parametrize(
    ("method", "route", "args", "params"),
    [
        ("preview_data", "data-preview", ("roads", 10), {"layer": "roads", "limit": "10"}),
        ("preview_data", "data-preview", (), {}),
        ("preview_map", "spatial-preview", ("roads",), {"layer": "roads"}),
        ("preview_transformed_data", "transform-preview", ("roads", 5), {"layer": "roads", "limit": "5"}),
        ("preview_transformed_map", "transform-spatial-preview", (None,), {}),
    ],
)
def test_previews(server: FakeServer, ws: Workspace, method: str, route: str, args: tuple, params: dict) -> None:
    answer = {"workspace_id": "ws_1", "layer": "roads", "geojson": {"type": "FeatureCollection", "features": []}}
    server.on("GET", f"/workspaces/ws_1/{route}", answer)
    assert getattr(ws, method)(*args) == answer
    assert dict(server.last.url.params) == params
    assert server.last.extensions["timeout"]["read"] == 600


def test_spatial_preview_of_table_is_validation_error(server: FakeServer, ws: Workspace) -> None:
    server.on("GET", "/workspaces/ws_1/spatial-preview", envelope(400, "invalid_parameter", "layer has no geometry"))
    with pytest.raises(ValidationError) as caught:
        ws.preview_map("table")
    assert caught.value.code == "invalid_parameter"


def test_set_get_and_clear_transformations(server: FakeServer, ws: Workspace, tmp_path: Path) -> None:
    stored: dict[str, Any] = {"layers": ["roads"], "operations": [{"type": "buffer", "distance": 10, "units": "source"}]}
    server.on("PUT", "/workspaces/ws_1/transformations", lambda r: httpx.Response(200, json=json.loads(r.content)))
    server.on("GET", "/workspaces/ws_1/transformations", stored)

    assert ws.set_transformations(layers=["roads"], operations=stored["operations"]) == stored
    assert server.body() == stored
    assert ws.transformations() == stored

    ws.set_transformations(sql="SELECT * FROM source WHERE a > 1")
    assert server.body() == {"sql": "SELECT * FROM source WHERE a > 1"}

    ws.set_transformations(layers="roads", python={"script": "import sys", "filename": "step.py"})
    assert server.body() == {"layers": ["roads"], "python": {"script": "import sys", "filename": "step.py"}}

    script = tmp_path / "fix.py"
    script.write_text("print('hi')\n")
    ws.set_transformations(python=script)
    assert server.body() == {"python": {"script": "print('hi')\n", "filename": "fix.py"}}

    assert ws.clear_transformations() == {"operations": []}
    assert server.body() == {"operations": []}


def test_operations_and_sql_exclude_each_other(ws: Workspace) -> None:
    with pytest.raises(ValueError):
        ws.set_transformations(operations=[], sql="SELECT 1")
    with pytest.raises(ValueError):
        ws.set_transformations(python={"filename": "x.py"})  # type: ignore[typeddict-item]


def test_geometry_operation_on_table(server: FakeServer, ws: Workspace) -> None:
    server.on("PUT", "/workspaces/ws_1/transformations", envelope(422, "invalid_transformation", "table has no geometry"))
    with pytest.raises(ValidationError) as caught:
        ws.set_transformations(operations=[{"type": "buffer", "distance": 1}])
    assert caught.value.status_code == 422


def test_convert_updates_the_handle(server: FakeServer, ws: Workspace) -> None:
    done = dict(WS, status="completed", output={"format": "GPKG", "filename": "roads.gpkg", "size": 10})
    server.on("POST", "/workspaces/ws_1/convert", done)

    assert ws.convert("GPKG", layers=["roads"], target_crs="EPSG:3857") == done
    assert server.body() == {"output_format": "GPKG", "layers": ["roads"], "target_crs": "EPSG:3857"}
    assert ws.status == "completed"
    ws.convert("gpkg")
    assert server.body() == {"output_format": "gpkg"}


def test_deliver(server: FakeServer, ws: Workspace) -> None:
    server.on("POST", "/workspaces/ws_1/deliver", {"destination": {"id": "dst_1", "type": "postgis"}, "delivery": {"rows": 3}})
    target = {"schema": "public", "table": "roads", "write_mode": "replace"}
    assert ws.deliver("dst_1", target)["delivery"] == {"rows": 3}
    assert server.body() == {"destination_id": "dst_1", "destination_target": target}
    ws.deliver("dst_1")
    assert server.body() == {"destination_id": "dst_1"}
    ws.deliver("dst_1", destination_target={"key": "out.gpkg"})
    assert server.body() == {"destination_id": "dst_1", "destination_target": {"key": "out.gpkg"}}
    with pytest.raises(TypeError):
        ws.deliver("dst_1", target, destination_target=target)


def test_deliver_before_convert(server: FakeServer, ws: Workspace) -> None:
    server.on("POST", "/workspaces/ws_1/deliver", envelope(409, "job_not_ready", "convert first"))
    with pytest.raises(ValidationError) as caught:
        ws.deliver("dst_1")
    assert caught.value.code == "job_not_ready"


def _file_response(payload: bytes, name: str = "roads.gpkg", **headers: str) -> httpx.Response:
    return httpx.Response(200, content=payload, headers={
        "content-type": "application/octet-stream",
        "content-disposition": f'attachment; filename="{name}"',
        "content-length": str(len(payload)),
        **headers,
    })


def test_download_streams_to_disk(server: FakeServer, ws: Workspace, tmp_path: Path) -> None:
    payload = os.urandom(300_000)
    server.on("GET", "/workspaces/ws_1/download", _file_response(payload))
    progress: list[tuple[int, int | None]] = []

    saved = ws.download(tmp_path / "out.gpkg", progress=lambda d, t: progress.append((d, t)))

    assert saved == tmp_path / "out.gpkg"
    assert saved.read_bytes() == payload
    assert progress[-1] == (len(payload), len(payload))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.gpkg"]
    if os.name == "posix":
        umask = os.umask(0)
        os.umask(umask)
        assert stat.S_IMODE(saved.stat().st_mode) == 0o666 & ~umask


def test_download_refuses_to_replace(server: FakeServer, ws: Workspace, tmp_path: Path) -> None:
    target = tmp_path / "out.gpkg"
    target.write_bytes(b"keep me")
    server.on("GET", "/workspaces/ws_1/download", _file_response(b"new"))

    with pytest.raises(LocalFileExistsError) as caught:
        ws.download(target)
    assert isinstance(caught.value, FileExistsError) and isinstance(caught.value, ConfigError)
    assert target.read_bytes() == b"keep me"
    assert server.requests == [], "refused before any transfer"

    assert ws.download(target, overwrite=True) == target
    assert target.read_bytes() == b"new"


def test_download_into_folder_uses_the_server_name(server: FakeServer, ws: Workspace, tmp_path: Path) -> None:
    server.on("GET", "/workspaces/ws_1/download", _file_response(b"data", name="roads.gpkg"))
    assert ws.download(tmp_path) == tmp_path / "roads.gpkg"
    with pytest.raises(LocalFileExistsError):
        ws.download(tmp_path)
    assert (tmp_path / "roads.gpkg").read_bytes() == b"data"


def test_download_never_escapes_the_folder(server: FakeServer, ws: Workspace, tmp_path: Path) -> None:
    server.on("GET", "/workspaces/ws_1/download", _file_response(b"data", name="../../etc/passwd"))
    folder = tmp_path / "dl"
    folder.mkdir()
    assert ws.download(folder) == folder / "passwd"


def test_download_cut_off_leaves_nothing(server: FakeServer, ws: Workspace, tmp_path: Path) -> None:
    server.on("GET", "/workspaces/ws_1/download", httpx.Response(200, content=b"short", headers={"content-length": "100"}))
    with pytest.raises(NetworkError) as caught:
        ws.download(tmp_path / "out.gpkg")
    assert caught.value.code == "incomplete_download"
    assert list(tmp_path.iterdir()) == []


def test_download_before_convert(server: FakeServer, ws: Workspace, tmp_path: Path) -> None:
    server.on("GET", "/workspaces/ws_1/download", envelope(409, "job_not_ready", "convert first"))
    with pytest.raises(ValidationError):
        ws.download(tmp_path / "out.gpkg")
    assert list(tmp_path.iterdir()) == []


def test_download_into_missing_folder(ws: Workspace, tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        ws.download(tmp_path / "absent" / "out.gpkg")
    assert caught.value.code == "missing_folder"


@pytest.mark.parametrize(
    ("header", "name"),
    [
        ('attachment; filename="roads.gpkg"', "roads.gpkg"),
        ("attachment; filename=roads.fgb", "roads.fgb"),
        ("attachment; filename*=UTF-8''stra%C3%9Fen.gpkg; filename=\"strassen.gpkg\"", "straßen.gpkg"),
        ('attachment; filename="..\\\\..\\\\evil.dll"', "evil.dll"),
        ('attachment; filename=".."', None),
        ('attachment; filename=".bashrc"', None),
        ("attachment", None),
        (None, None),
    ],
)
def test_disposition_filename(header: str | None, name: str | None) -> None:
    assert _disposition_filename(header) == name


def test_download_of_a_chunked_stream(server: FakeServer, ws: Workspace, tmp_path: Path) -> None:
    chunks = [os.urandom(1000) for _ in range(5)]
    server.on("GET", "/workspaces/ws_1/download", lambda r: httpx.Response(
        200, content=iter(chunks), headers={"content-disposition": 'attachment; filename="a.fgb"'}))
    progress: list[tuple[int, int | None]] = []
    saved = ws.download(tmp_path / "a.fgb", progress=lambda d, t: progress.append((d, t)))
    assert saved.read_bytes() == b"".join(chunks)
    assert progress == [(1000 * (i + 1), None) for i in range(5)]


def test_download_with_transport_compression(server: FakeServer, ws: Workspace, tmp_path: Path) -> None:
    import gzip

    payload = b"GPKG" * 10_000
    packed = gzip.compress(payload)
    server.on("GET", "/workspaces/ws_1/download", lambda r: httpx.Response(
        200, content=iter([packed]), headers={"content-encoding": "gzip", "content-length": str(len(packed))}))
    assert ws.download(tmp_path / "a.gpkg").read_bytes() == payload


def test_download_interrupted_leaves_nothing(server: FakeServer, ws: Workspace, tmp_path: Path) -> None:
    def body():  # type: ignore[no-untyped-def]
        yield b"first chunk"
        raise httpx.ReadError("connection reset by peer")

    server.on("GET", "/workspaces/ws_1/download", lambda r: httpx.Response(200, content=body()))
    with pytest.raises(NetworkError) as caught:
        ws.download(tmp_path / "out.gpkg")
    assert caught.value.code == "network_error"
    assert list(tmp_path.iterdir()) == []


# -- following a long request (progress=, progress_id=) -----------------------------------------


@pytest.fixture
def fast_polls(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("svc_client.workspaces.PROGRESS_POLL_SECONDS", 0.01)


def _running(done: int | None, total: int | None, status: str = "running") -> dict[str, Any]:
    return {"progress_id": "x", "operation": "import", "status": status, "bytes_written": done,
            "bytes_total": total, "features_written": None, "percent": None,
            "started_at": "2030-01-01T00:00:00.000Z", "updated_at": "2030-01-01T00:00:01.000Z"}


def _held_request(server: FakeServer, answer: httpx.Response, polls: list[Any], until: Callable[[], bool]) -> Callable[[httpx.Request], httpx.Response]:
    """A POST handler that answers GET /progress/{its progress_id} with ``polls`` and returns ``answer`` once ``until()`` holds."""

    def handle(request: httpx.Request) -> httpx.Response:
        server.on("GET", "/progress/" + json.loads(request.content)["progress_id"], polls)
        deadline = time.monotonic() + 5
        while not until() and time.monotonic() < deadline:
            time.sleep(0.005)
        return answer

    return handle


def _polls(server: FakeServer) -> int:
    return sum(1 for r in server.requests if r.url.path.startswith("/api/v1/progress/"))


def _poller_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "svc-progress"]


FOLLOWED = [
    ("/workspaces", lambda c, ws, **kw: c.workspaces.import_source("src_1", **kw), httpx.Response(201, json=WS)),
    ("/workspaces/ws_1/convert", lambda c, ws, **kw: ws.convert("GPKG", **kw), httpx.Response(200, json=WS)),
    ("/workspaces/ws_1/deliver", lambda c, ws, **kw: ws.deliver("dst_1", **kw), httpx.Response(200, json={"delivery_id": "d_1"})),
]


@pytest.mark.parametrize(("route", "call", "answer"), FOLLOWED, ids=["import", "convert", "deliver"])
def test_progress_reports_the_polled_figures_while_the_request_runs(
    server: FakeServer, client: Client, ws: Workspace, fast_polls: None, route: str, call: Any, answer: httpx.Response
) -> None:
    seen: list[tuple[int, int | None]] = []
    polls = [envelope(404, "not_found"), _running(0, None), _running(None, 1000), _running(400, 1000),
             _running(900, None), _running(1000, 1000, "completed")]
    server.on("POST", route, _held_request(server, answer, polls, lambda: len(seen) >= 3))

    call(client, ws, progress=lambda done, total: seen.append((done, total)))

    body = json.loads(next(r for r in server.requests if r.method == "POST").content)
    assert re.fullmatch(r"py-[0-9a-f]{24}", body["progress_id"])
    assert seen == [(0, None), (400, 1000), (900, None)]  # a 404 and a null count are skipped
    poll = next(r for r in server.requests if r.method == "GET")
    assert poll.url.path == f"/api/v1/progress/{body['progress_id']}"
    assert poll.headers["authorization"].startswith("Bearer ")


def test_the_poller_stops_when_the_request_returns_or_raises(server: FakeServer, client: Client, fast_polls: None) -> None:
    seen: list[tuple[int, int | None]] = []
    ok = httpx.Response(201, json=WS)
    server.on("POST", "/workspaces", _held_request(server, ok, [_running(5, 10)], lambda: len(seen) >= 2))
    client.workspaces.import_source("src_1", progress=lambda d, t: seen.append((d, t)))
    assert _poller_threads() == []
    after = (_polls(server), len(seen))
    time.sleep(0.1)
    assert (_polls(server), len(seen)) == after  # nothing polls, nothing is reported any more

    refused = envelope(422, "fetch_failed", "the Source answered 500")
    server.on("POST", "/workspaces", _held_request(server, refused, [_running(5, 10)], lambda: _polls(server) > after[0]))
    with pytest.raises(ValidationError):
        client.workspaces.import_source("src_1", progress=lambda d, t: seen.append((d, t)))
    assert _poller_threads() == []
    polled = _polls(server)
    time.sleep(0.1)
    assert _polls(server) == polled


def test_errors_while_polling_are_ignored(server: FakeServer, client: Client, fast_polls: None) -> None:
    def cut(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    seen: list[tuple[int, int | None]] = []
    polls = [cut, envelope(500, "internal_error"), httpx.Response(200, text="<html>"), envelope(404, "not_found"),
             _running(7, 70)]
    server.on("POST", "/workspaces", _held_request(server, httpx.Response(201, json=WS), polls, lambda: bool(seen)))

    assert client.workspaces.import_source("src_1", progress=lambda d, t: seen.append((d, t))).id == "ws_1"
    assert seen[0] == (7, 70)
    assert _polls(server) >= 5


def test_a_refused_poll_ends_polling_not_the_request(server: FakeServer, client: Client, fast_polls: None) -> None:
    seen: list[tuple[int, int | None]] = []
    server.on("GET", "/progress/import-refused-1", [envelope(403, "insufficient_scope"), _running(7, 70)])

    def held(request: httpx.Request) -> httpx.Response:
        time.sleep(0.2)  # many polls long: had polling gone on after the 403, it would have seen 7 of 70
        return httpx.Response(201, json=WS)

    server.on("POST", "/workspaces", held)

    ws = client.workspaces.import_source("src_1", progress_id="import-refused-1", progress=lambda d, t: seen.append((d, t)))
    assert ws.id == "ws_1"
    assert seen == []
    assert _polls(server) == 1


def test_progress_id_alone_is_sent_and_nothing_polls(server: FakeServer, client: Client, ws: Workspace) -> None:
    server.on("POST", "/workspaces", WS, status=201)
    server.on("POST", "/workspaces/ws_1/convert", WS)
    client.workspaces.import_source("src_1", progress_id="my-import-1")
    assert server.body() == {"source_id": "src_1", "progress_id": "my-import-1"}
    ws.convert("GPKG")
    assert server.body() == {"output_format": "GPKG"}  # no progress asked for: no id
    assert _polls(server) == 0


def test_progress_follows_the_callers_progress_id(server: FakeServer, ws: Workspace, client: Client, fast_polls: None) -> None:
    seen: list[tuple[int, int | None]] = []
    server.on("GET", "/progress/deliver-roads-1", _running(3, 9))
    server.on("POST", "/workspaces/ws_1/deliver", _held_request(server, httpx.Response(200, json={}), [_running(3, 9)], lambda: bool(seen)))
    ws.deliver("dst_1", progress_id="deliver-roads-1", progress=lambda d, t: seen.append((d, t)))
    assert server.body(0) == {"destination_id": "dst_1", "progress_id": "deliver-roads-1"}
    assert server.requests[-1].url.path == "/api/v1/progress/deliver-roads-1"
    assert seen[0] == (3, 9)


def test_read_progress(server: FakeServer, client: Client) -> None:
    server.on("GET", "/progress/import-1234", _running(400, 1000))
    assert client.workspaces.progress("import-1234")["bytes_written"] == 400
    with pytest.raises(NotFoundError):
        client.workspaces.progress("never-started-1")
    with pytest.raises(ValueError):
        client.workspaces.progress("")
