"""The terminal views: times in the local zone, durations, schedules, where a connection points."""

from __future__ import annotations

from typing import Iterator

import pytest

from svc_client.cli import views

from .conftest import local_zone


@pytest.fixture
def lisbon(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    yield from local_zone(monkeypatch, "Europe/Lisbon")


def test_local_time_follows_the_machine_zone_and_its_dst(lisbon: None) -> None:
    assert views.local_time("2026-01-15T02:30:00.000Z") == "2026-01-15 02:30 WET"
    assert views.local_time("2026-07-15T02:30:00Z") == "2026-07-15 03:30 WEST"
    assert views.local_time(None) == ""
    assert views.local_time("not a time") == "not a time"


@pytest.mark.parametrize(("ms", "text"), [(42, "0.0 s"), (1500, "1.5 s"), (59_900, "59.9 s"), (61_000, "1 min 01 s"),
                                          (None, ""), (True, "")])
def test_duration(ms: object, text: str) -> None:
    assert views.duration(ms) == text


def test_schedule_text() -> None:
    assert views.schedule_text({"kind": "daily", "timezone": "Europe/Berlin", "hour": 2, "minute": 5}) == \
        "daily 02:05 Europe/Berlin"
    assert views.schedule_text(None) == "—"


@pytest.mark.parametrize(("config", "text"), [
    ({"host": "db", "port": 5432, "database": "gis", "has_password": True}, "db:5432/gis"),
    ({"url": "https://data.example/a.geojson"}, "https://data.example/a.geojson"),
    ({"bucket": "exports", "has_secret_key": True}, "exports"),
    ({}, ""),
])
def test_where_never_shows_secrets(config: dict[str, object], text: str) -> None:
    assert views.where({"configuration": config}) == text


def test_run_error_line() -> None:
    assert views.run_error({"id": "run_1", "status": "failed", "error": {
        "code": "source_failed", "message": "timed out", "step": "extract", "retryable": False}}) == \
        "Error at step extract: timed out [source_failed]"
    assert views.run_error({"id": "run_1", "status": "cancelled", "error": None}) == "Run run_1 cancelled"


def test_run_view_shows_retry_link_skip_reason_and_empty_steps() -> None:
    text = views.run({"id": "run_2", "status": "succeeded", "retry_of": "run_1",
                      "skipped_reason": "the file has not changed since the last Run", "steps": [],
                      "stats": {"features_read": 0, "features_written": None, "bytes_read": 295, "bytes_written": None}})
    assert "0 read, — written" in text and "295 read, — written" in text
    assert "retry of" in text and "run_1" in text
    assert "the file has not changed" in text
    assert "(no steps yet)" in text


def test_workspace_view() -> None:
    text = views.workspace({"id": "ws_1", "status": "completed", "filename": "p.geojson", "size": 666,
                            "format": "GeoJSON", "crs": "EPSG:2056",
                            "layers": [{"name": "parcels", "geometry_type": "POLYGON", "feature_count": 2},
                                       {"name": "owners", "has_geometry": False, "feature_count": 5}],
                            "output": {"format": "GPKG", "filename": "p.gpkg", "size": 98304}, "warnings": [],
                            "errors": []})
    assert "parcels (POLYGON, 2 features); owners (no geometry, 5 features)" in text
    assert "GPKG: p.gpkg, 98304 bytes" in text
    assert "warnings" not in text


def test_login_view_names_the_user_and_scopes() -> None:
    text = views.login({"saved": "/home/ana/.config/svc/config.toml", "url": "https://gis.example.org",
                        "user": {"email": "ana@example.org", "name": "Ana", "auth": {"scopes": ["jobs:read", "jobs:run"]}}})
    assert "ana@example.org (Ana)" in text and "jobs:read, jobs:run" in text
    assert "user" not in views.login({"saved": "x", "url": "y", "user": None})  # saved with --no-verify


def test_steps_show_failed_attempts() -> None:
    run = {"steps": [
        {"name": "extract", "status": "running", "started_at": None, "duration_ms": None, "failed_attempts": 2,
         "last_error": {"code": "source_failed", "message": "http://x answered HTTP 503", "reason": "server_error"}},
        {"name": "deliver", "status": "pending", "started_at": None, "duration_ms": None, "failed_attempts": 0, "last_error": None},
    ]}
    table = views.steps(run)
    assert "failed attempts" in table
    assert "2: source_failed (server_error)" in table
    assert "0:" not in table  # a step without failed attempts shows nothing there


def test_run_view_shows_each_steps_log_and_warnings() -> None:
    text = views.run({"id": "run_3", "status": "succeeded", "stats": {}, "warnings": [
        {"step": "convert", "code": "field_renamed", "message": "Field names cut to 10 characters", "layer": "roads"}],
        "steps": [
            {"name": "extract", "status": "succeeded", "duration_ms": 10, "log": {
                "read": {"connection": {"id": "src_1", "type": "url"}, "location": {"url": "https://data.test/r.geojson"},
                         "filename": "r.geojson", "format": "GeoJSON", "bytes": 5120, "features": 25,
                         "layers": [{"name": "roads", "geometry_type": "LINESTRING", "crs": "EPSG:4326", "features": 25}]}}},
            {"name": "transform", "status": "succeeded", "duration_ms": 7, "log": {
                "wrote": {"format": "GPKG", "features": 25, "layers": [{"name": "roads", "geometry_type": "LINESTRING", "crs": "EPSG:2263",
                          "crs_info": {"code": "EPSG:2263", "name": "NAD83 / New York Long Island (ftUS)", "unit": "US survey foot",
                                       "geographic": False}, "features": 25}]}}},
            {"name": "convert", "status": "succeeded", "duration_ms": 5, "log": {
                "wrote": {"filename": "r.zip", "format": "ESRI Shapefile", "bytes": 9000,
                          "layers": [{"name": "roads", "geometry_type": None, "crs": None, "features": None}]}}},
            {"name": "deliver", "status": "pending", "log": None},
        ]})
    assert "url src_1 · url: https://data.test/r.geojson · r.geojson · GeoJSON · 5,120 bytes · 25 features" in text
    assert "roads: LINESTRING · EPSG:4326 · 25 features" in text
    assert "roads: LINESTRING · EPSG:2263 · NAD83 / New York Long Island (ftUS) · US survey foot · 25 features" in text
    assert "wrote: r.zip · ESRI Shapefile · 9,000 bytes" in text
    assert "warning: roads: Field names cut to 10 characters [field_renamed]" in text
    assert "deliver:" not in text


def test_run_view_without_logs_says_nothing_of_them() -> None:
    assert "Log" not in views.run({"id": "run_4", "status": "queued", "stats": {}, "steps": []})
