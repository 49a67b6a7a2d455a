"""Stage flags of a Job (the spec's "Stage flags (pipeline)" table), as pure functions.

=====================  ==============================================================
``pipeline`` value     meaning
=====================  ==============================================================
omitted, or ``{}``     legacy / inferred: a stage is present when the Job has its fields
a stage ``false``      that stage is absent; its leftover fields never bring it back
a stage ``true``       that stage is present
=====================  ==============================================================
"""

from __future__ import annotations

import copy
from typing import Any, Literal, Mapping

__all__ = [
    "STAGES",
    "STAGE_FIELDS",
    "pipeline_stages",
    "job_pipeline",
    "stage_included",
    "job_write_body",
    "JOB_BODY_FIELDS",
    "job_body",
]

#: The fields of a Job's write body (POST and PUT); a Job's representation adds the fields the
#: server keeps (id, enabled state, next_run_at, next_run_times, last_run, sync, webhook,
#: followers, timestamps).
JOB_BODY_FIELDS: tuple[str, ...] = (
    "name", "source_id", "source_resource", "transform_mode", "operations", "output_fields",
    "recipe_id", "sql", "python_script", "python_filename", "output_format", "creation_options",
    "destination_id", "destination_target", "schedule", "triggers", "parameters", "pipeline", "enabled",
)

#: Transform fields per ``transform_mode``: switching mode drops the fields of the others.
MODE_FIELDS: dict[str, tuple[str, ...]] = {
    "manual": ("operations", "output_fields"),
    "recipe": ("recipe_id",),
    "sql": ("sql",),
}

Stage = Literal["transform", "convert", "python"]
STAGES: tuple[Stage, ...] = ("transform", "convert", "python")

#: The Job fields that belong to each stage: they infer its presence when no flag is given,
#: and they are dropped from a write body when the stage is explicitly absent.
STAGE_FIELDS: dict[str, tuple[str, ...]] = {
    "transform": ("transform_mode", "operations", "output_fields", "recipe_id", "sql"),
    "convert": ("output_format", "creation_options"),
    "python": ("python_script", "python_filename"),
}

# Fields whose value alone says the stage is there (output_fields and python_filename only
# qualify a stage, they do not make one).
_INFERRING_FIELDS: dict[str, tuple[str, ...]] = {
    "transform": ("transform_mode", "operations", "recipe_id", "sql"),
    "convert": ("output_format",),
    "python": ("python_script",),
}


def pipeline_stages(
    transform: bool | None = None, convert: bool | None = None, python: bool | None = None
) -> dict[str, bool]:
    """A ``pipeline`` object holding only the flags given (``None`` leaves a flag out).

    >>> pipeline_stages(transform=True, python=False)
    {'transform': True, 'python': False}
    """
    flags: dict[str, bool] = {}
    for stage, value in (("transform", transform), ("convert", convert), ("python", python)):
        if value is None:
            continue
        if not isinstance(value, bool):
            raise TypeError(f"stage flag {stage} must be a bool or None, got {value!r}")
        flags[stage] = value
    return flags


def _flags(job: Mapping[str, Any]) -> dict[str, bool]:
    pipeline = job.get("pipeline")
    if not isinstance(pipeline, Mapping):
        return {}
    return {stage: pipeline[stage] for stage in STAGES if isinstance(pipeline.get(stage), bool)}


def _has_value(value: Any) -> bool:
    if value is None:
        return False
    if isinstance(value, (str, list, tuple, dict)):
        return len(value) > 0
    return True


def job_pipeline(job: Mapping[str, Any]) -> dict[str, bool]:
    """The effective ``{transform, convert, python}`` of a Job or Job body.

    An explicit flag wins. Without one (``pipeline`` omitted or ``{}``), a stage is present when the
    Job carries its fields: transform with transform_mode, operations, recipe_id or sql; convert
    with output_format; python with python_script.
    """
    flags = _flags(job)
    return {
        stage: flags[stage]
        if stage in flags
        else any(_has_value(job.get(field)) for field in _INFERRING_FIELDS[stage])
        for stage in STAGES
    }


def stage_included(job: Mapping[str, Any], stage: str) -> bool:
    """Whether ``stage`` ("transform", "convert" or "python") is present in the Job."""
    if stage not in STAGES:
        raise ValueError(f"unknown stage {stage!r}; expected one of {', '.join(STAGES)}")
    return job_pipeline(job)[stage]


def job_write_body(body: Mapping[str, Any]) -> dict[str, Any]:
    """The body to send on create or update.

    Explicit flags (``false`` ones above all) are kept in ``pipeline``; the fields of a stage set
    to ``false`` are dropped, so leftover operations, format or Python cannot bring it back.
    The input is not modified.
    """
    out = copy.deepcopy(dict(body))
    if "pipeline" not in out or out["pipeline"] is None:
        out.pop("pipeline", None)
        return out
    if not isinstance(out["pipeline"], Mapping):
        raise TypeError(f"pipeline must be an object, got {type(out['pipeline']).__name__}")
    for name in STAGES:
        value = out["pipeline"].get(name)
        if value is not None and not isinstance(value, bool):
            raise TypeError(f"pipeline.{name} must be a bool, got {value!r}")
    out["pipeline"] = {k: v for k, v in out["pipeline"].items() if v is not None}
    for stage, present in _flags(out).items():
        if not present:
            for field in STAGE_FIELDS[stage]:
                out.pop(field, None)
    return out


def job_body(job: Mapping[str, Any], **changes: Any) -> dict[str, Any]:
    """The write body of a saved Job, with ``changes`` laid over it (for a PUT).

    Keeps only the body fields (server-kept ones such as ``next_run_at`` are dropped) and the
    fields of the Job's ``transform_mode``: in recipe mode the Recipe's copied ``operations``
    are left for the server to copy again. When ``changes`` switch ``transform_mode``, the old
    mode's fields go too; ``pipeline`` and ``triggers`` in ``changes`` change only the keys
    they name. The result has not been through :func:`job_write_body`.
    """
    body = {k: copy.deepcopy(job[k]) for k in JOB_BODY_FIELDS if k in job and job[k] is not None}
    mode = changes.get("transform_mode", body.get("transform_mode"))
    for other, fields in MODE_FIELDS.items():
        if other != mode:
            for field in fields:
                if field not in changes:
                    body.pop(field, None)
    changes = copy.deepcopy(changes)
    # pipeline and triggers change key by key: --on-change keeps the Jobs it runs after.
    for merged in ("pipeline", "triggers"):
        if isinstance(changes.get(merged), Mapping) and isinstance(body.get(merged), Mapping):
            changes[merged] = {**body[merged], **changes[merged]}
    body.update(changes)
    return body
