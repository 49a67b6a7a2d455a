"""The spec's stage-flag table through the four helpers."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from svc_client import JOB_BODY_FIELDS, job_body, job_pipeline, job_write_body, pipeline_stages, stage_included

FULL: dict[str, Any] = {
    "name": "nightly",
    "source_id": "src_1",
    "transform_mode": "manual",
    "operations": [{"type": "simplify", "tolerance": 1}],
    "output_fields": ["a"],
    "output_format": "GPKG",
    "python_script": "print(1)",
    "python_filename": "step.py",
    "destination_id": "dst_1",
}


def test_pipeline_stages_keeps_only_given_flags() -> None:
    assert pipeline_stages() == {}
    assert pipeline_stages(transform=True) == {"transform": True}
    assert pipeline_stages(transform=False, convert=True, python=False) == {
        "transform": False, "convert": True, "python": False}
    with pytest.raises(TypeError):
        pipeline_stages(convert="yes")  # type: ignore[arg-type]


@pytest.mark.parametrize("pipeline", [None, {}, "omit"])
def test_omitted_or_empty_pipeline_infers_from_fields(pipeline: object) -> None:
    job = dict(FULL)
    if pipeline != "omit":
        job["pipeline"] = pipeline
    assert job_pipeline(job) == {"transform": True, "convert": True, "python": True}
    bare = {"name": "copy", "source_id": "src_1"}
    if pipeline != "omit":
        bare["pipeline"] = pipeline  # type: ignore[assignment]
    assert job_pipeline(bare) == {"transform": False, "convert": False, "python": False}


@pytest.mark.parametrize(
    ("fields", "stage"),
    [
        ({"transform_mode": "sql"}, "transform"),
        ({"operations": [{"type": "buffer", "distance": 1}]}, "transform"),
        ({"recipe_id": "rcp_1"}, "transform"),
        ({"sql": "SELECT * FROM source"}, "transform"),
        ({"output_format": "GeoJSON"}, "convert"),
        ({"python_script": "pass"}, "python"),
    ],
)
def test_each_inferring_field(fields: dict, stage: str) -> None:
    effective = job_pipeline(fields)
    assert effective[stage] is True
    assert sum(effective.values()) == 1


def test_empty_values_do_not_infer_a_stage() -> None:
    assert job_pipeline({"operations": [], "sql": "", "output_format": None, "python_filename": "x.py"}) == {
        "transform": False, "convert": False, "python": False}


def test_explicit_flags_win_over_fields() -> None:
    job = dict(FULL, pipeline={"transform": False, "python": False})
    assert job_pipeline(job) == {"transform": False, "convert": True, "python": False}
    job = {"name": "x", "pipeline": {"convert": True}}
    assert job_pipeline(job) == {"transform": False, "convert": True, "python": False}


def test_stage_included() -> None:
    job = dict(FULL, pipeline={"convert": False})
    assert stage_included(job, "transform") is True
    assert stage_included(job, "convert") is False
    with pytest.raises(ValueError):
        stage_included(job, "deliver")


def test_write_body_drops_fields_of_absent_stages_and_keeps_false_flags() -> None:
    body = dict(FULL, pipeline={"transform": False, "convert": True, "python": False})
    before = copy.deepcopy(body)

    out = job_write_body(body)

    assert out["pipeline"] == {"transform": False, "convert": True, "python": False}
    for field in ("transform_mode", "operations", "output_fields", "recipe_id", "sql", "python_script", "python_filename"):
        assert field not in out
    assert out["output_format"] == "GPKG"
    assert out["destination_id"] == "dst_1"
    assert body == before, "the input must not be modified"
    # Leftovers cannot bring the stage back: what is sent says the same as what was asked.
    assert job_pipeline(out) == {"transform": False, "convert": True, "python": False}


def test_write_body_convert_false() -> None:
    out = job_write_body(dict(FULL, creation_options={"dataset": {"COMPRESSION": "SNAPPY"}}, pipeline={"convert": False}))
    assert "output_format" not in out
    assert "creation_options" not in out, "the server refuses creation options without the convert stage"
    assert out["pipeline"] == {"convert": False}
    assert out["operations"] == FULL["operations"]


def test_write_body_without_flags_changes_nothing() -> None:
    assert job_write_body(FULL) == FULL
    assert job_write_body(dict(FULL, pipeline={})) == dict(FULL, pipeline={})
    assert job_write_body(dict(FULL, pipeline=None)) == FULL


def test_write_body_refuses_non_boolean_flags() -> None:
    with pytest.raises(TypeError):
        job_write_body({"pipeline": {"python": "false"}})
    with pytest.raises(TypeError):
        job_write_body({"pipeline": ["transform"]})


def test_write_body_keeps_unknown_pipeline_keys() -> None:
    assert job_write_body({"pipeline": {"deliver": True}})["pipeline"] == {"deliver": True}


def test_job_body_keeps_body_fields_of_the_mode() -> None:
    job = {"id": "job_1", "name": "n", "transform_mode": "manual", "operations": [{"type": "buffer"}],
           "output_fields": ["a"], "sql": None, "recipe_id": None, "enabled": False, "next_run_at": None,
           "last_run": {"id": "run_1"}, "sync": {}, "created_at": "x", "updated_at": "y"}
    assert job_body(job) == {"name": "n", "transform_mode": "manual", "operations": [{"type": "buffer"}],
                             "output_fields": ["a"], "enabled": False}
    assert job_body(job, transform_mode="recipe", recipe_id="rcp_1") == {
        "name": "n", "transform_mode": "recipe", "recipe_id": "rcp_1", "enabled": False}
    changed = job_body(job, operations=[])
    assert changed["operations"] == [] and job["operations"] == [{"type": "buffer"}]  # input untouched
    assert set(JOB_BODY_FIELDS) >= set(job_body(job))


def test_job_body_lays_pipeline_flags_over_the_saved_ones() -> None:
    job = {"name": "n", "output_format": "GPKG", "pipeline": {"convert": False, "transform": True}}
    assert job_body(job, pipeline={"python": False})["pipeline"] == {"convert": False, "transform": True, "python": False}
    # None takes a flag back to inferred, once job_write_body has dropped it.
    body = job_write_body(job_body(job, pipeline={"convert": None}))
    assert body["pipeline"] == {"transform": True}


def test_job_body_keeps_the_creation_options() -> None:
    # A PUT replaces the whole Job: a rename must not drop the output format's options.
    job = {"id": "job_1", "name": "n", "output_format": "GeoParquet",
           "creation_options": {"dataset": {"ROW_GROUP_SIZE": "5000"}}, "last_run": None}
    body = job_write_body(job_body(job, name="renamed"))
    assert body == {"name": "renamed", "output_format": "GeoParquet", "creation_options": {"dataset": {"ROW_GROUP_SIZE": "5000"}}}
