"""``svc workspaces``: upload or import, preview, transform, convert, download, deliver."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ..output import to_table
from ..workspaces import Workspace
from . import views
from .app import State, cli, pass_state
from .support import byte_progress, emit, load_json, load_json_array, load_json_object, table_option


@cli.group()
def workspaces() -> None:
    """Temporary processing: upload or import, preview, transform, convert, download, deliver."""


@workspaces.command("upload")
@click.argument("path", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--source-crs", help="The CRS the coordinates are in, when the file has none or a wrong one (EPSG:2056).")
@click.option("--x-column", help="Column of the X (longitude) coordinates: CSV, plain Parquet.")
@click.option("--y-column", help="Column of the Y (latitude) coordinates: CSV, plain Parquet.")
@click.option("--z-column", help="Column of the Z coordinates (with --x-column and --y-column).")
@click.option("--geometry-column", help="Column holding WKB or WKT geometry in a Parquet file without GeoParquet metadata.")
@table_option
@pass_state
def ws_upload(state: State, path: Path, **reading: str | None) -> None:
    """Upload a local dataset (a shapefile as one ZIP) and show the new Workspace."""
    client = state.client()
    with byte_progress("Uploading") as progress:
        ws = client.workspaces.upload(path, progress=progress, **reading)
    emit(state, ws.data, view=views.workspace)


@workspaces.command("import")
@click.argument("source_id")
@click.option("--resource", help="source_resource selector: JSON object, @file.json, or a plain name.")
@table_option
@pass_state
def ws_import(state: State, source_id: str, resource: str | None) -> None:
    """Create a Workspace from a saved Source."""
    selector: Any = None
    if resource is not None:
        try:
            parsed = load_json(resource, "--resource")
        except click.BadParameter:
            parsed = None
        selector = parsed if isinstance(parsed, dict) else resource  # else a bare name
    client = state.client()
    with byte_progress("Importing") as progress:
        ws = client.workspaces.import_source(source_id, selector, progress=progress)
    emit(state, ws.data, view=views.workspace)


@workspaces.command("get")
@click.argument("id")
@table_option
@pass_state
def ws_get(state: State, id: str) -> None:
    """Show a Workspace (status, layers, output, expiry)."""
    emit(state, state.client().workspaces.get(id).data, view=views.workspace)


def _handle(state: State, id: str) -> Workspace:
    # A handle without a GET: the commands below need only the id.
    return Workspace(state.client(), {"id": id})


@workspaces.command("preview")
@click.argument("id")
@click.option("--layer", help="Layer name (needed for multi-layer datasets).")
@click.option("--limit", type=int, help="Rows (default 100, at most 500; data preview only).")
@click.option("--map", "as_map", is_flag=True, help="Spatial preview (GeoJSON in EPSG:4326) instead of rows.")
@click.option("--transformed", is_flag=True, help="Preview through the stored pipeline.")
@table_option
@pass_state
def ws_preview(state: State, id: str, layer: str | None, limit: int | None, as_map: bool, transformed: bool) -> None:
    """Preview rows (default) or a map sample, raw or transformed."""
    ws = _handle(state, id)
    if as_map:
        if limit is not None:
            raise click.UsageError("--limit applies to the data preview only")
        result = ws.preview_transformed_map(layer) if transformed else ws.preview_map(layer)
        emit(state, result)
        return
    result = ws.preview_transformed_data(layer, limit) if transformed else ws.preview_data(layer, limit)
    if not state.json:
        columns = [str(f.get("name")) for f in result.get("fields", []) if isinstance(f, dict)]
        click.echo(to_table(result.get("rows", []), columns or None))
    else:
        emit(state, result)


@workspaces.command("transformations")
@click.argument("id")
@table_option
@pass_state
def ws_transformations(state: State, id: str) -> None:
    """Show the stored pipeline."""
    emit(state, _handle(state, id).transformations())


@workspaces.command("set-transformations")
@click.argument("id")
@click.option("--layer", "layers", multiple=True, help="Layer the pipeline applies to (repeatable).")
@click.option("--operations", help="Operations as a JSON array, @file.json or -.")
@click.option("--sql", help="One SELECT against the relation named source (excludes --operations).")
@click.option("--python-file", type=click.Path(exists=True, dir_okay=False, path_type=Path), help="Python step script.")
@table_option
@pass_state
def ws_set_transformations(
    state: State, id: str, layers: tuple[str, ...], operations: str | None, sql: str | None, python_file: Path | None
) -> None:
    """Replace the whole pipeline."""
    ops = load_json_array(operations, "--operations")
    if ops is not None and sql is not None:
        raise click.UsageError("--operations and --sql exclude each other")
    result = _handle(state, id).set_transformations(
        layers=list(layers) or None, operations=ops, sql=sql, python=python_file
    )
    emit(state, result)


@workspaces.command("clear-transformations")
@click.argument("id")
@table_option
@pass_state
def ws_clear(state: State, id: str) -> None:
    """Empty the pipeline."""
    emit(state, _handle(state, id).clear_transformations())


@workspaces.command("convert")
@click.argument("id")
@click.option("--format", "-f", "output_format", required=True, help="Output format id (see `svc formats list`).")
@click.option("--layer", "layers", multiple=True, help="Layer to convert (repeatable).")
@click.option("--target-crs", help="Reproject the output, e.g. EPSG:3857.")
@click.option("--creation-options", help='The format\'s creation options as JSON, {"dataset": {...}, "layer": {...}} (or @file.json, -).')
@table_option
@pass_state
def ws_convert(
    state: State, id: str, output_format: str, layers: tuple[str, ...], target_crs: str | None, creation_options: str | None
) -> None:
    """Convert through the stored pipeline (waits until done)."""
    options = load_json_object(creation_options, "--creation-options") if creation_options is not None else None
    ws = _handle(state, id)
    with byte_progress("Converting") as progress:
        result = ws.convert(output_format, list(layers) or None, target_crs, creation_options=options, progress=progress)
    emit(state, result, view=views.workspace)


@workspaces.command("download")
@click.argument("id")
@click.argument("path", type=click.Path(path_type=Path))
@click.option("--overwrite", is_flag=True, help="Replace PATH if it exists.")
@table_option
@pass_state
def ws_download(state: State, id: str, path: Path, overwrite: bool) -> None:
    """Save the converted output to PATH (a file, or a folder to use the server's file name)."""
    ws = _handle(state, id)
    with byte_progress("Downloading") as progress:
        saved = ws.download(path, overwrite=overwrite, progress=progress)
    emit(state, {"path": str(saved), "bytes": saved.stat().st_size})


@workspaces.command("deliver")
@click.argument("id")
@click.option("--destination", "destination_id", required=True, help="Saved Destination id.")
@click.option("--target", help="destination_target as JSON (schema, table, write_mode…), @file.json or -.")
@table_option
@pass_state
def ws_deliver(state: State, id: str, destination_id: str, target: str | None) -> None:
    """Publish the converted output to a saved Destination."""
    target_obj = load_json_object(target, "--target") if target is not None else None
    ws = _handle(state, id)
    with byte_progress("Delivering") as progress:
        result = ws.deliver(destination_id, target_obj, progress=progress)
    emit(state, result)


