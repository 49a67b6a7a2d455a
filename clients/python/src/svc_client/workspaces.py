"""Workspaces: upload (or import a saved Source), inspect, preview, transform, convert, download."""

from __future__ import annotations

import os
import re
import secrets
import threading
from pathlib import Path, PurePosixPath
from typing import IO, TYPE_CHECKING, Any, Callable, Mapping, Sequence, TypeVar
from urllib.parse import unquote

import httpx

from .errors import (
    AuthenticationError,
    AuthorizationError,
    ConfigError,
    LocalFileExistsError,
    NetworkError,
    ServerError,
    SvcError,
    ValidationError,
)
from .resources.base import JSON, segment

if TYPE_CHECKING:
    from .client import Client

__all__ = ["Workspace", "Workspaces", "Progress"]

Progress = Callable[[int, "int | None"], None]
"""Called as bytes move: ``progress(bytes_done, bytes_total_or_None)``."""

StrPath = str | os.PathLike[str]

#: How often a followed request's progress is read: the server updates it at most once a second.
PROGRESS_POLL_SECONDS = 1.0


_T = TypeVar("_T")


def _one_name(value: _T | None, api_value: _T | None, name: str, api_name: str) -> _T | None:
    """An argument that may be given under its short name or the API's name, not under both."""
    if api_value is None:
        return value
    if value is not None:
        raise TypeError(f"give {name} or {api_name}, not both")
    return api_value


class Workspaces:
    """``client.workspaces``: create Workspaces and get handles on existing ones."""

    path = "/workspaces"

    def __init__(self, client: Client) -> None:
        self._client = client

    def upload(
        self,
        path: StrPath,
        *,
        progress: Progress | None = None,
        source_crs: str | None = None,
        x_column: str | None = None,
        y_column: str | None = None,
        z_column: str | None = None,
        geometry_column: str | None = None,
    ) -> Workspace:
        """Upload and inspect a local dataset; returns its :class:`Workspace` handle.

        A shapefile must be one ZIP holding its .shp, .shx, .dbf (and .prj) files.
        ``source_crs`` says which CRS the coordinates are in (a shapefile without .prj, a wrong
        one); ``x_column``/``y_column`` (and ``z_column``) name a CSV's or a plain Parquet file's
        coordinate columns; ``geometry_column`` names the WKB or WKT column of a Parquet file
        without GeoParquet metadata.
        """
        options = {
            "source_crs": source_crs,
            "x_column": x_column,
            "y_column": y_column,
            "z_column": z_column,
            "geometry_column": geometry_column,
        }
        file = Path(path)
        if not file.is_file():
            raise ConfigError(f"no such file: {file}", code="missing_file")
        if file.suffix.lower() in (".shp", ".shx", ".dbf"):
            raise ConfigError(
                f"{file.name}: upload a shapefile as one ZIP containing its .shp, .shx, .dbf "
                "and .prj files",
                code="invalid_file",
            )
        try:
            handle = file.open("rb")
        except OSError as exc:
            raise ConfigError(f"cannot read {file}: {exc.strerror}", code="unreadable_file") from None
        with handle:
            body = _CountingReader(handle, file.stat().st_size, progress)
            # The reading options go before the file: the server reads the fields it has seen by then.
            fields: list[tuple[str, Any]] = [(k, (None, v)) for k, v in options.items() if v is not None]
            data = self._client._object(
                "POST", self.path, files=[*fields, ("file", (file.name, body))], long=True
            )
        return Workspace(self._client, data)

    def import_source(
        self,
        source_id: str,
        resource: Mapping[str, Any] | str | None = None,
        *,
        source_resource: Mapping[str, Any] | str | None = None,
        progress: Progress | None = None,
        progress_id: str | None = None,
    ) -> Workspace:
        """Create a Workspace from a saved Source; returns its :class:`Workspace` handle.

        ``resource`` selects what to read: an object checked by the Source's connector
        (``{"table": "roads", "schema": "public"}`` for PostGIS, ``{"key": ...}`` for S3…; see
        ``client.connectors.get(type)["source"]["resource"]``) or a string, the type's shorthand
        (``"roads"`` for a PostGIS Source means ``{"table": "roads"}``). url Sources need none.
        ``source_resource=`` is the same argument under the API's name.

        ``progress`` is called as the server transfers the data, ``progress(bytes_done,
        bytes_total_or_None)``, about once a second from another thread; ``progress_id`` names the
        request for :meth:`progress` (see :meth:`Workspace.convert`).
        """
        resource = _one_name(resource, source_resource, "resource", "source_resource")
        body: JSON = {"source_id": source_id}
        if resource is not None:
            body["source_resource"] = resource if isinstance(resource, str) else dict(resource)
        data = _followed(self._client, self.path, body, progress, progress_id)
        return Workspace(self._client, data)

    def progress(self, progress_id: str) -> JSON:
        """How far the import, convert or delivery sent with ``progress_id`` has got.

        ``GET /api/v1/progress/{progress_id}``: ``operation``, ``status`` (running, completed,
        failed), ``phase`` (transfer, inspect, pipeline, write), ``bytes_written``,
        ``bytes_total``, ``features_written``, ``percent`` (each may be ``None``), ``started_at``,
        ``updated_at``. :class:`~svc_client.NotFoundError` until the
        server has begun the work. The figures change at most once a second.
        """
        return self._client._object("GET", "/progress/" + segment(progress_id))

    def get(self, id: str) -> Workspace:
        return Workspace(self._client, self._client._object("GET", self._item(id)))

    def _item(self, id: str, *rest: str) -> str:
        return "/".join((self.path, segment(id), *rest))

    def __repr__(self) -> str:
        return f"<Workspaces {self.path}>"


class Workspace:
    """Handle on one Workspace. ``data`` is the last representation the server sent."""

    def __init__(self, client: Client, data: JSON) -> None:
        self._client = client
        self.data: JSON = data
        if not isinstance(data.get("id"), str):
            raise ServerError("the Workspace has no id", code="invalid_response")

    # -- what the spec names on the handle ---------------------------------------------------

    @property
    def id(self) -> str:
        return str(self.data["id"])

    @property
    def status(self) -> str | None:
        return self.data.get("status")

    @property
    def layers(self) -> list[Any]:
        """The layers as the server describes them (objects with at least a name)."""
        return list(self.data.get("layers") or [])

    @property
    def layer_names(self) -> list[str]:
        return [
            layer["name"] if isinstance(layer, Mapping) else str(layer) for layer in self.layers
        ]

    @property
    def expires_at(self) -> str | None:
        return self.data.get("expires_at")

    def __repr__(self) -> str:
        return f"Workspace(id={self.id!r}, status={self.status!r}, layers={self.layer_names!r})"

    def _path(self, *rest: str) -> str:
        return "/".join(("/workspaces", segment(self.id), *rest))

    def _get(self, *rest: str, params: Mapping[str, Any] | None = None) -> JSON:
        return self._client._object("GET", self._path(*rest), params=params, long=True)

    # -- inspect and preview -----------------------------------------------------------------

    def refresh(self) -> Workspace:
        """Fetch the current representation (status, layers, output…)."""
        self.data = self._client._object("GET", self._path())
        return self

    def preview_data(self, layer: str | None = None, limit: int | None = None) -> JSON:
        """A sample of rows (default 100, at most 500). ``layer`` may be omitted for one layer."""
        return self._get("data-preview", params={"layer": layer, "limit": limit})

    def preview_map(self, layer: str | None = None) -> JSON:
        """A WGS 84 sample of a spatial layer; ``["geojson"]`` is a FeatureCollection."""
        return self._get("spatial-preview", params={"layer": layer})

    # -- transformations ---------------------------------------------------------------------

    def transformations(self) -> JSON:
        """The stored pipeline."""
        return self._get("transformations")

    def set_transformations(
        self,
        layers: Sequence[str] | None = None,
        operations: Sequence[Mapping[str, Any]] | None = None,
        sql: str | None = None,
        python: Mapping[str, str] | os.PathLike[str] | None = None,
    ) -> JSON:
        """Replace the whole ordered pipeline.

        ``operations`` and ``sql`` exclude each other. ``python`` is ``{"script", "filename"}``
        or the path of a script file. ``layers`` is required by multi-layer datasets.
        """
        if operations is not None and sql is not None:
            raise ValueError("operations and sql are mutually exclusive")
        body: JSON = {}
        if layers is not None:
            body["layers"] = [layers] if isinstance(layers, str) else list(layers)
        if operations is not None:
            body["operations"] = [dict(op) for op in operations]
        if sql is not None:
            body["sql"] = sql
        if python is not None:
            body["python"] = _python_body(python)
        return self._client._object("PUT", self._path("transformations"), json=body)

    def clear_transformations(self) -> JSON:
        """Empty the pipeline (the upload itself is never changed)."""
        return self._client._object("PUT", self._path("transformations"), json={"operations": []})

    def preview_transformed_data(self, layer: str | None = None, limit: int | None = None) -> JSON:
        return self._get("transform-preview", params={"layer": layer, "limit": limit})

    def preview_transformed_map(self, layer: str | None = None) -> JSON:
        return self._get("transform-spatial-preview", params={"layer": layer})

    # -- results -----------------------------------------------------------------------------

    def convert(
        self,
        output_format: str,
        layers: Sequence[str] | None = None,
        target_crs: str | None = None,
        creation_options: Mapping[str, Mapping[str, Any]] | None = None,
        *,
        progress: Progress | None = None,
        progress_id: str | None = None,
    ) -> JSON:
        """Convert the upload through the stored pipeline (synchronous; status becomes completed).

        ``output_format`` is an id from ``client.formats.list()``. ``creation_options`` are GDAL's,
        ``{"dataset": {...}, "layer": {...}}`` (``{"layer": {"GEOMETRY": "AS_XY"}}`` for CSV,
        ``{"dataset": {"ROW_GROUP_SIZE": "100000"}}`` for GeoParquet); the server checks them
        against the format's list. What the format changed (renamed
        fields, with the mapping) is in the result's ``output["warnings"]``.

        ``progress`` is called with the output's bytes written so far, ``progress(bytes_done,
        None)`` (a convert's total is not known in advance), about once a second from another
        thread while the request waits. ``progress_id`` (8–64 of ``A-Z a-z 0-9 _ -``) names the
        request so that you can read ``client.workspaces.progress(progress_id)`` yourself, from
        another thread or process; with ``progress`` alone an id is made up.
        """
        body: JSON = {"output_format": output_format}
        if creation_options is not None:
            body["creation_options"] = {k: dict(v) for k, v in creation_options.items()}
        if layers is not None:
            body["layers"] = [layers] if isinstance(layers, str) else list(layers)
        if target_crs is not None:
            body["target_crs"] = target_crs
        result = _followed(self._client, self._path("convert"), body, progress, progress_id)
        if result.get("id") == self.id and "status" in result:
            self.data = result
        return result

    def deliver(
        self,
        destination_id: str,
        target: Mapping[str, Any] | None = None,
        *,
        destination_target: Mapping[str, Any] | None = None,
        progress: Progress | None = None,
        progress_id: str | None = None,
    ) -> JSON:
        """Publish the converted output to a saved Destination and wait for the result.

        ``target`` is the per-delivery target checked by the Destination's connector (schema,
        table and ``write_mode`` for PostGIS; an object key for S3…). Answers with the delivery
        (``delivery_id``, ``destination_type``, ``target``, ``rows_written``…, no secrets).
        Before a convert it fails with ``job_not_ready`` (409); ``write_mode: "create"`` onto an
        existing table with ``target_exists`` (409); a remote failure with ``delivery_failed``
        (422, ``details["reason"]``, ``details["retryable"]``). ``destination_target=`` is the
        same argument under the API's name. ``progress`` and ``progress_id`` follow the transfer
        (bytes sent of the output's size) as for :meth:`convert`.
        """
        target = _one_name(target, destination_target, "target", "destination_target")
        body: JSON = {"destination_id": destination_id}
        if target is not None:
            body["destination_target"] = dict(target)
        return _followed(self._client, self._path("deliver"), body, progress, progress_id)

    def download(
        self, path: StrPath, overwrite: bool = False, *, progress: Progress | None = None
    ) -> Path:
        """Stream the converted output to ``path`` and return the file's path.

        An existing file is never replaced unless ``overwrite`` is true
        (:class:`~svc_client.LocalFileExistsError`). When ``path`` is a folder, the server's file
        name is used inside it. Nothing is left behind when the transfer fails.
        """
        target = Path(path)
        into_folder = target.is_dir()
        if not into_folder:
            _check_target(target, overwrite)
        with self._client._stream("GET", self._path("download"), long=True) as response:
            if into_folder:
                name = _disposition_filename(response.headers.get("content-disposition"))
                target = target / (name or self._fallback_filename())
                _check_target(target, overwrite)
            _save(response, target, overwrite, progress)
        return target

    def _fallback_filename(self) -> str:
        output = self.data.get("output")
        if isinstance(output, Mapping):
            name = _safe_name(str(output.get("filename") or ""))
            if name:
                return name
        return f"{self.id}.out"


# -- helpers -----------------------------------------------------------------------------------


def _followed(
    client: Client, path: str, body: JSON, progress: Progress | None, progress_id: str | None
) -> JSON:
    """POST a long request; with ``progress``, report how far it has got while it runs."""
    if progress is not None and progress_id is None:
        progress_id = "py-" + secrets.token_hex(12)
    if progress_id is not None:
        body["progress_id"] = progress_id
    if progress is None or progress_id is None:
        return client._object("POST", path, json=body, long=True)
    with _ProgressPoller(client, progress_id, progress):
        return client._object("POST", path, json=body, long=True)


class _ProgressPoller:
    """Reads GET /progress/{id} from a daemon thread while the calling thread waits on its request.

    Polling is only a view on the request: whatever goes wrong with it is left to the request
    itself to report, so a poll never raises into the caller. An exception of the callback ends
    the polling (``threading.excepthook`` reports it), not the request.
    """

    def __init__(self, client: Client, progress_id: str, progress: Progress) -> None:
        self._client = client
        self._path = "/progress/" + segment(progress_id)
        self._progress = progress
        self._stop = threading.Event()
        # A daemon: an interrupted program never waits for it.
        self._thread = threading.Thread(target=self._run, name="svc-progress", daemon=True)

    def __enter__(self) -> None:
        self._thread.start()

    def __exit__(self, *exc_info: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(PROGRESS_POLL_SECONDS):
            try:
                data = self._client._object("GET", self._path)
            except (AuthenticationError, AuthorizationError, ValidationError):
                return  # refused (token, id): asking again would not help
            except SvcError:
                continue  # not begun yet (404), a poll lost on the way, a busy server: try again
            # No report after the request has returned: its caller has moved on.
            if self._stop.is_set():
                return
            done, total = data.get("bytes_written"), data.get("bytes_total")
            if data.get("status") == "running" and isinstance(done, int):
                self._progress(done, total if isinstance(total, int) else None)


def _python_body(python: Mapping[str, str] | os.PathLike[str]) -> dict[str, str]:
    if isinstance(python, os.PathLike):
        file = Path(python)
        try:
            return {"script": file.read_text(encoding="utf-8"), "filename": file.name}
        except OSError as exc:
            raise ConfigError(f"cannot read {file}: {exc.strerror}", code="missing_file") from None
    if not isinstance(python, Mapping) or "script" not in python:
        raise ValueError("python must be {'script': ..., 'filename': ...} or a path")
    return {k: python[k] for k in ("script", "filename") if k in python}


class _CountingReader:
    """A binary file that reports how much of it httpx has read (for upload progress)."""

    def __init__(self, raw: IO[bytes], total: int, progress: Progress | None) -> None:
        self._raw = raw
        self._total = total
        self._progress = progress
        self._done = 0
        self.name = getattr(raw, "name", "upload")

    def read(self, size: int = -1) -> bytes:
        chunk = self._raw.read(size)
        self._done += len(chunk)
        if self._progress is not None and chunk:
            self._progress(self._done, self._total)
        return chunk

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        position = self._raw.seek(offset, whence)
        self._done = position
        return position

    def tell(self) -> int:
        return self._raw.tell()

    def fileno(self) -> int:  # lets httpx send a Content-Length
        return self._raw.fileno()


def _check_target(target: Path, overwrite: bool) -> None:
    if target.exists() and not overwrite:
        raise LocalFileExistsError(
            f"{target} exists; pass overwrite=True (or --overwrite) to replace it",
            code="file_exists",
            details={"path": str(target)},
        )
    if target.is_dir():
        raise ConfigError(f"{target} is a folder", code="invalid_path")
    if not target.parent.is_dir():
        raise ConfigError(f"folder {target.parent} does not exist", code="missing_folder")


def _save(response: httpx.Response, target: Path, overwrite: bool, progress: Progress | None) -> None:
    # Content-Length counts the encoded bytes: compare it only when nothing was encoded.
    encoded = response.headers.get("content-encoding", "identity").lower() not in ("", "identity")
    length = response.headers.get("content-length", "")
    total = int(length) if length.isdigit() and not encoded else None
    partial = target.parent / f".{target.name}.{secrets.token_hex(4)}.part"
    try:
        # O_EXCL: never follow or reuse a planted file; mode 0666 lets the umask decide.
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
        fd = os.open(partial, flags, 0o666)
    except OSError as exc:
        raise ConfigError(
            f"cannot write in {target.parent}: {exc.strerror}", code="unwritable_folder"
        ) from None
    try:
        done = 0
        with os.fdopen(fd, "wb") as out:
            try:
                for chunk in response.iter_bytes():
                    out.write(chunk)
                    done += len(chunk)
                    if progress is not None:
                        progress(done, total)
            except httpx.RequestError as exc:
                raise NetworkError(f"download interrupted: {exc}", code="network_error") from None
        if total is not None and done != total:
            raise NetworkError(
                f"download cut off: {done} of {total} bytes", code="incomplete_download"
            )
        _place(partial, target, overwrite)
    finally:
        if partial.exists():
            partial.unlink()


def _place(partial: Path, target: Path, overwrite: bool) -> None:
    if overwrite:
        os.replace(partial, target)
        return
    try:
        os.link(partial, target)  # fails, atomically, if the target appeared meanwhile
    except FileExistsError:
        raise LocalFileExistsError(
            f"{target} exists; pass overwrite=True (or --overwrite) to replace it",
            code="file_exists",
            details={"path": str(target)},
        ) from None
    except OSError:  # no hard links on this filesystem
        if target.exists():
            raise LocalFileExistsError(
                f"{target} exists", code="file_exists", details={"path": str(target)}
            ) from None
        os.replace(partial, target)


_DISPOSITION_EXT = re.compile(r"filename\*\s*=\s*([^']*)'[^']*'([^;]+)", re.IGNORECASE)
_DISPOSITION = re.compile(r'filename\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;]+))', re.IGNORECASE)


def _disposition_filename(header: str | None) -> str | None:
    """The file name of a Content-Disposition header, reduced to a safe base name."""
    if not header:
        return None
    match = _DISPOSITION_EXT.search(header)
    if match:
        charset = match.group(1) or "utf-8"
        try:
            name = unquote(match.group(2).strip(), encoding=charset, errors="strict")
        except (LookupError, UnicodeDecodeError):
            name = ""
        if _safe_name(name):
            return _safe_name(name)
    match = _DISPOSITION.search(header)
    if match:
        quoted, bare = match.groups()
        name = re.sub(r"\\(.)", r"\1", quoted) if quoted is not None else bare.strip()
        return _safe_name(name)
    return None


def _safe_name(name: str) -> str | None:
    name = "".join(ch for ch in name if ord(ch) >= 0x20 and ch != "\x7f")
    name = PurePosixPath(name.replace("\\", "/")).name.strip()
    if name in ("", ".", "..") or name.startswith("."):
        return None
    return name
