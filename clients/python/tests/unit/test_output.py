"""CLI rendering: JSON for scripts, plain tables for people."""

from __future__ import annotations

import json
import subprocess
import sys

from svc_client.output import MAX_CELL, to_json, to_table


def test_json_is_indented_and_unicode() -> None:
    assert json.loads(to_json({"name": "Straße"})) == {"name": "Straße"}
    assert "Straße" in to_json({"name": "Straße"})


def test_table_of_objects_with_preferred_columns() -> None:
    rows = [{"id": "a", "name": "x", "tags": ["p", "q"], "config": {"k": 1}}, {"id": "b", "name": None}]
    lines = to_table(rows, ["id", "tags", "missing"]).splitlines()
    assert lines[0].split() == ["id", "tags"]
    assert lines[2].split() == ["a", "p,", "q"]
    assert lines[3].split() == ["b"]


def test_table_default_columns_skip_nested_values() -> None:
    lines = to_table([{"id": "a", "config": {"k": 1}, "ok": True}]).splitlines()
    assert lines[0].split() == ["id", "ok"]
    assert lines[2].split() == ["a", "true"]


def test_single_object_is_key_value() -> None:
    lines = to_table({"id": "a", "layers": [{"name": "roads"}], "note": "x" * 100}).splitlines()
    assert lines[0].split() == ["field", "value"]
    assert lines[3].startswith("layers") and '[{"name":"roads"}]' in lines[3]
    assert len(lines[4].split()[1]) == MAX_CELL


def test_empty_and_scalar() -> None:
    assert to_table([]) == "(none)"
    assert to_table(["a", "b"]).splitlines()[2] == "a"
    assert to_table(None) == ""


def test_python_dash_m_runs_the_cli() -> None:
    result = subprocess.run([sys.executable, "-m", "svc_client", "--version"], capture_output=True, text=True, check=True)
    assert "svc" in result.stdout
