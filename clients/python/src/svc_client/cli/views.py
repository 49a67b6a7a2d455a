"""How Sources, Destinations, connection tests, discovery, Jobs and Runs read in a terminal.

Pure functions from the server's JSON to text; ``--json`` prints the JSON itself instead.
"""

from __future__ import annotations

import json
from datetime import datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError
from typing import Any, Mapping, Sequence

from ..jobs_helpers import job_pipeline
from ..output import to_table

JSON = Mapping[str, Any]

STEP_MARKS = {"pending": "·", "running": "…", "succeeded": "✓", "failed": "✗", "skipped": "–"}

# The configuration fields that say where a connection points, most telling first.
_WHERE_FIELDS = ("url", "bucket", "container", "account", "base_url", "endpoint", "path")


# -- small formatters ------------------------------------------------------------------------


def local_time(value: Any) -> str:
    """An ISO 8601 UTC timestamp in this machine's time zone (``2026-05-02 02:30 CEST``)."""
    if not isinstance(value, str) or not value:
        return ""
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return value
    if moment.tzinfo is None:
        return value
    return moment.astimezone().strftime("%Y-%m-%d %H:%M %Z").strip()


def duration(ms: Any) -> str:
    if not isinstance(ms, (int, float)) or isinstance(ms, bool):
        return ""
    seconds = ms / 1000
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest:02d} s"


def _between(start: Any, end: Any) -> Any:
    try:
        a = datetime.fromisoformat(str(start).replace("Z", "+00:00"))
        b = datetime.fromisoformat(str(end).replace("Z", "+00:00"))
    except ValueError:
        return None
    return (b - a).total_seconds() * 1000


def compact(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def schedule_text(schedule: Any) -> str:
    """``daily 02:30 Europe/Berlin``, ``weekly mon,tue 07:30 Europe/Berlin``, ``cron */15 * * * *
    UTC``, ``every 15 min UTC`` (the Job's own time zone), or ``—`` without a schedule."""
    if not isinstance(schedule, Mapping):
        return "—"
    kind = schedule.get("kind", "?")
    hour, minute = schedule.get("hour"), schedule.get("minute")
    at = f" {hour:02d}:{minute:02d}" if isinstance(hour, int) and isinstance(minute, int) else ""
    zone = f" {schedule['timezone']}" if schedule.get("timezone") else ""
    if kind in ("weekly", "monthly") and isinstance(schedule.get("days"), list):
        return f"{kind} {','.join(str(d) for d in schedule['days'])}{at}{zone}"
    if kind == "cron":
        return f"cron {schedule.get('expression')}{zone}"
    if kind == "interval":
        return f"every {schedule.get('every_minutes')} min{zone}"
    return f"{kind}{at}{zone}"


def zone_time(value: Any, zone: Any) -> str:
    """An ISO 8601 UTC timestamp on the clock of an IANA zone (``2026-05-02 02:30 CEST``)."""
    if not isinstance(value, str) or not isinstance(zone, str):
        return ""
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00")).astimezone(ZoneInfo(zone))
    except (ValueError, ZoneInfoNotFoundError):
        return ""
    return moment.strftime("%Y-%m-%d %H:%M %Z")


def schedule_preview(item: JSON) -> str:
    """What ``POST /schedules/preview`` answered: the schedule in words, then its next Runs in
    this machine's time and the schedule's own."""
    schedule = item.get("schedule") if isinstance(item.get("schedule"), Mapping) else {}
    zone = schedule.get("timezone")
    rows = [{"next runs (local)": local_time(t), f"in {zone}": zone_time(t, zone)} for t in item.get("next_run_times") or []]
    return f"Runs {item.get('description')}.\n\n" + to_table(rows, ("next runs (local)", f"in {zone}"))


_WHEN = {"succeeded": "succeeds", "failed": "fails", "any": "succeeds or fails"}


def _triggers_text(item: JSON) -> list[tuple[str, Any]]:
    triggers = item.get("triggers") if isinstance(item.get("triggers"), Mapping) else {}
    on_change = triggers.get("on_change")
    after = [a for a in triggers.get("after") or [] if isinstance(a, Mapping)]
    followers = [f for f in item.get("followers") or [] if isinstance(f, Mapping)]
    hook = item.get("webhook")
    rows: list[tuple[str, Any]] = [
        ("on change", f"checked every {on_change.get('every_minutes')} min" if isinstance(on_change, Mapping) else "off"),
        ("runs after", "; ".join(f"{a.get('job_id')} {_WHEN.get(str(a.get('when')), a.get('when'))}" for a in after) or "—"),
    ]
    if followers:
        rows.append(("runs before", "; ".join(f"{f.get('name') or f.get('id')} (when this one {_WHEN.get(str(f.get('when')), f.get('when'))})"
                                              for f in followers)))
    rows.append(("webhook", f"{hook.get('url')} ({hook.get('auth')})" if isinstance(hook, Mapping) else "—"))
    return rows


def _parameters_text(item: JSON) -> str:
    said = []
    for p in item.get("parameters") or []:
        if not isinstance(p, Mapping):
            continue
        text = f"{p.get('name')}: {p.get('type')}"
        text += " (required)" if p.get("default") is None else f" = {compact(p.get('default'))}"
        if p.get("choices"):
            text += f" one of {compact(p.get('choices'))}"
        said.append(text)
    return "; ".join(said) or "—"


def where(connection: JSON) -> str:
    """Where a connection points, without secrets: its URL, host/database, bucket…"""
    config = connection.get("configuration")
    if not isinstance(config, Mapping):
        return ""
    if config.get("host"):
        text = str(config["host"])
        if config.get("port"):
            text += f":{config['port']}"
        if config.get("database"):
            text += f"/{config['database']}"
        return text
    for field in _WHERE_FIELDS:
        if config.get(field):
            return str(config[field])
    return ""


def _key_values(rows: Sequence[tuple[str, Any]]) -> str:
    """One object as field/value lines; a single value column may be wider than a list's cells."""
    return to_table(
        [{"field": k, "value": v if isinstance(v, str) else compact(v)} for k, v in rows],
        ("field", "value"),
        max_cell=100,
    )


def login(result: JSON) -> str:
    """``svc auth login``: where the login was saved, and whose token it is."""
    user: Mapping[str, Any] = result["user"] if isinstance(result.get("user"), Mapping) else {}
    auth: Mapping[str, Any] = user["auth"] if isinstance(user.get("auth"), Mapping) else {}
    rows: list[tuple[str, Any]] = [("saved", result.get("saved")), ("url", result.get("url"))]
    if user:
        rows.append(("user", f"{user.get('email')} ({user.get('name')})"))
    if auth.get("scopes"):
        rows.append(("scopes", ", ".join(map(str, auth["scopes"]))))
    return _key_values(rows)


# -- connections -------------------------------------------------------------------------------


def connections(items: list[Any]) -> str:
    return to_table(
        [{"id": c.get("id"), "name": c.get("name"), "type": c.get("type"), "where": where(c),
          "updated_at": c.get("updated_at")} for c in items],
        ("id", "name", "type", "where", "updated_at"),
    )


def connection(item: JSON) -> str:
    rows: list[tuple[str, Any]] = [(k, item.get(k)) for k in ("id", "name", "type")]
    config = item.get("configuration")
    if isinstance(config, Mapping):
        for key, value in config.items():
            if key.startswith("has_") and isinstance(value, bool):
                rows.append((key[4:], "stored (secret)" if value else "not set"))
            else:
                rows.append((key, value))
    rows += [("created_at", item.get("created_at")), ("updated_at", item.get("updated_at"))]
    return _key_values(rows)


def connection_test(result: JSON) -> str:
    tried = result.get("tried")
    tried_text = ", ".join(f"{k}={compact(v)}" for k, v in tried.items()) if isinstance(tried, Mapping) else ""
    mark = "✓ ok" if result.get("ok") else f"✗ {result.get('status')}"
    return _key_values([
        ("result", mark), ("message", result.get("message")), ("tried", tried_text),
        ("duration", duration(result.get("duration_ms"))),
    ])


def discovery(result: JSON) -> str:
    tables = result.get("tables")
    if isinstance(tables, list):
        return to_table(tables, ("schema", "name", "has_geometry", "geometry_type"))
    schemas = result.get("schemas") or []
    return to_table([{"schema": s} for s in schemas]) if schemas else "(no schemas)"


def connectors(items: list[Any]) -> str:
    rows = []
    for c in items:
        rows.append({
            "type": c.get("type"), "label": c.get("label"), "kinds": ", ".join(c.get("kinds") or []),
            "works": "yes" if c.get("implemented") else "not yet", "secrets": ", ".join(c.get("secrets") or []),
        })
    return to_table(rows, ("type", "label", "kinds", "works", "secrets"))


def connector(entry: JSON) -> str:
    """The fields of a connection type: what to put in --config, and which are secrets."""
    schema = entry.get("configuration") or {}
    props = schema.get("properties") or {}
    required = set(schema.get("required") or [])
    secrets = set(entry.get("secrets") or [])
    rows = []
    for name, spec in props.items():
        spec = spec if isinstance(spec, Mapping) else {}
        kind = spec.get("type") or ("one of " + "|".join(map(str, spec["enum"])) if "enum" in spec else "")
        rows.append({
            "field": name, "type": kind if isinstance(kind, str) else compact(kind),
            "required": "yes" if name in required else "",
            "default": compact(spec.get("default")),
            "secret": "secret" if name in secrets else "",
            "description": spec.get("description", ""),
        })
    head = f"{entry.get('type')}: {entry.get('label')} ({', '.join(entry.get('kinds') or [])})"
    if not entry.get("implemented"):
        head += " — accepted and saved, but cannot connect yet"
    return head + "\n" + to_table(rows, ("field", "type", "required", "default", "secret", "description"))


def _crs_text(label: object, info: object) -> str | None:
    """"EPSG:2263 · NAD83 / New York Long Island (ftUS) · US survey foot"; the label alone without its name and unit."""
    if not isinstance(info, Mapping):
        return str(label) if label else None
    code = info.get("code") or label
    parts = [str(p) for p in (code if code and len(str(code)) <= 40 else None, info.get("name"), info.get("unit")) if p]
    return " · ".join(parts) if parts else (str(label) if label else None)


# -- Workspaces ------------------------------------------------------------------------------------


def workspace(item: JSON) -> str:
    """A Workspace: status, what was read (layers with geometry and counts), the output, expiry."""
    layers = []
    for layer in item.get("layers") or []:
        if isinstance(layer, Mapping):
            kind = layer.get("geometry_type") if layer.get("has_geometry", True) else "no geometry"
            count = layer.get("feature_count")
            layers.append(f"{layer.get('name')} ({kind}{f', {count} features' if count is not None else ''})")
    output = item.get("output")
    output_text = ""
    if isinstance(output, Mapping):
        output_text = f"{output.get('format')}: {output.get('filename')}, {output.get('size')} bytes"
    origin = item.get("source")
    origin_text = ""
    if isinstance(origin, Mapping) and origin.get("id"):
        origin_text = f"{origin['id']} {compact(origin.get('resource'))}".strip()
    rows: list[tuple[str, Any]] = [
        ("id", item.get("id")), ("status", item.get("status")),
        ("file", f"{item.get('filename')} ({item.get('size')} bytes, {item.get('format')})"),
        ("from source", origin_text),
        ("crs", item.get("crs")), ("layers", "; ".join(layers)),
        ("output", output_text), ("warnings", "; ".join(map(str, item.get("warnings") or []))),
        ("errors", "; ".join(map(compact, item.get("errors") or []))),
        ("expires (local)", local_time(item.get("expires_at"))),
    ]
    return _key_values([(k, v) for k, v in rows if v not in (None, "") or k in ("id", "status")])


# -- Jobs and Runs -------------------------------------------------------------------------------


def _last_run(job: JSON) -> str:
    last = job.get("last_run")
    return str(last.get("status")) if isinstance(last, Mapping) else ""


def jobs(items: list[Any], names: Mapping[str, str] | None = None) -> str:
    names = names or {}
    rows = []
    for job in items:
        src, dst = job.get("source_id"), job.get("destination_id")
        rows.append({
            "id": job.get("id"), "name": job.get("name"),
            "source → destination": f"{names.get(str(src), src)} → {names.get(str(dst), dst)}",
            "schedule": schedule_text(job.get("schedule")),
            "next run (local)": local_time(job.get("next_run_at")),
            "enabled": job.get("enabled"), "last run": _last_run(job),
        })
    return to_table(rows, ("id", "name", "source → destination", "schedule", "next run (local)", "enabled", "last run"))


def _transform_text(job: JSON) -> str:
    mode = job.get("transform_mode")
    if mode == "manual":
        ops = job.get("operations") or []
        return "manual: " + (", ".join(str(op.get("type")) for op in ops if isinstance(op, Mapping)) or "no operations")
    if mode == "recipe":
        return f"recipe {job.get('recipe_id')} ({len(job.get('operations') or [])} operations copied)"
    if mode == "sql":
        return f"sql: {job.get('sql')}"
    return "—"


def job(item: JSON) -> str:
    stages = job_pipeline(item)
    enabled = "yes" if item.get("enabled") else "no"
    if item.get("disabled_reason"):
        enabled += f" ({item['disabled_reason']})"
    last = item.get("last_run")
    last_text = (
        f"{last.get('id')} {last.get('status')} {local_time(last.get('finished_at'))}".strip()
        if isinstance(last, Mapping) else "never"
    )
    sync = item.get("sync")
    sync_text = ""
    if isinstance(sync, Mapping):
        if not sync.get("supported"):
            sync_text = "not supported by this Source"
        else:
            pending = [w for w in ("reset", "reinitialize") if sync.get(f"{w}_pending")]
            sync_text = f"cursor {compact(sync.get('cursor')) or '—'}"
            if pending:
                sync_text += f" ({' and '.join(pending)} pending)"
    rows: list[tuple[str, Any]] = [
        ("id", item.get("id")), ("name", item.get("name")), ("enabled", enabled),
        ("source", f"{item.get('source_id')} {compact(item.get('source_resource'))}".strip()),
        ("transform", _transform_text(item) if stages["transform"] else "(stage off)"),
        ("python", item.get("python_filename") or "script" if stages["python"] else "(stage off)"),
        ("output format", item.get("output_format") if stages["convert"] else "(stage off)"),
        ("destination", f"{item.get('destination_id')} {compact(item.get('destination_target'))}".strip()),
        ("schedule", item.get("schedule_description") or schedule_text(item.get("schedule"))),
        ("next runs (local)", ", ".join(local_time(t) for t in item.get("next_run_times") or [])
         or local_time(item.get("next_run_at")) or "—"),
        *_triggers_text(item),
        ("parameters", _parameters_text(item)),
        ("last run", last_text), ("sync", sync_text),
        ("created_at", item.get("created_at")), ("updated_at", item.get("updated_at")),
    ]
    return _key_values(rows)


def _run_duration(run: JSON) -> str:
    if run.get("started_at") and run.get("finished_at"):
        return duration(_between(run["started_at"], run["finished_at"]))
    return ""


def runs(items: list[Any]) -> str:
    rows = []
    for run in items:
        error = run.get("error")
        stats = run.get("stats")
        rows.append({
            "id": run.get("id"), "status": run.get("status"), "trigger": run.get("trigger"),
            "attempt": run.get("attempt"), "created (local)": local_time(run.get("created_at")),
            "duration": _run_duration(run),
            "written": stats.get("features_written") if isinstance(stats, Mapping) else None,
            "error": f"{error.get('code')} at {error.get('step')}" if isinstance(error, Mapping) else "",
        })
    return to_table(rows, ("id", "status", "trigger", "attempt", "created (local)", "duration", "written", "error"))


def steps(run: JSON) -> str:
    rows = []
    for step in run.get("steps") or []:
        if not isinstance(step, Mapping):
            continue
        status = str(step.get("status"))
        rows.append({
            "step": step.get("name"), "status": f"{STEP_MARKS.get(status, '?')} {status}",
            "started (local)": local_time(step.get("started_at")),
            "duration": duration(step.get("duration_ms")),
            "failed attempts": _attempts(step),
            "progress": progress_text(step) if status == "running" else "",
        })
    return to_table(rows, ("step", "status", "started (local)", "duration", "failed attempts", "progress")) if rows else "(no steps yet)"



def progress_text(step: Mapping[str, Any]) -> str:
    """What a running step last reported: ``convert 412 MB written 60%`` (empty when it said nothing)."""
    progress = step.get("progress")
    if not isinstance(progress, Mapping):
        return ""
    said = []
    if isinstance(progress.get("features_written"), int):
        said.append(f"{progress['features_written']:,} features")
    if isinstance(progress.get("bytes_written"), int):
        said.append(f"{progress['bytes_written'] / (1024 * 1024):.0f} MB written")
    if isinstance(progress.get("percent"), (int, float)):
        said.append(f"{progress['percent']:.0f}%")
    return f"{step.get('name')} {' '.join(said)}" if said else ""


def _attempts(step: Mapping[str, Any]) -> str:
    """Failed attempts of a step with the latest error (a running step is being retried)."""
    failed = step.get("failed_attempts") or 0
    last = step.get("last_error") if isinstance(step.get("last_error"), Mapping) else None
    if not failed or last is None:
        return ""
    return f"{failed}: {last.get('code')} ({last.get('reason') or 'unclassified'})"


def _count(value: Any) -> str:
    return "—" if value is None else str(value)  # None: the step that counts did not run


def run(item: JSON) -> str:
    """A Run: what, when, how much, its steps, and its error."""
    stats: Mapping[str, Any] = item["stats"] if isinstance(item.get("stats"), Mapping) else {}
    workflow: Mapping[str, Any] = item["workflow"] if isinstance(item.get("workflow"), Mapping) else {}
    rows: list[tuple[str, Any]] = [
        ("id", item.get("id")), ("job", item.get("job_id")), ("status", item.get("status")),
        ("trigger", item.get("trigger")), ("attempt", item.get("attempt")),
    ]
    if item.get("retry_of"):
        how = "as it ran" if item.get("retry_definition") == "original" else "with the Job as it is now"
        rows.append(("retry of", f"{item['retry_of']} ({how})"))
    triggered_by = item.get("triggered_by")
    if isinstance(triggered_by, Mapping):
        rows.append(("started by", f"run {triggered_by.get('run_id')} of job {triggered_by.get('job_id')}"))
    started = [r for r in item.get("started_runs") or [] if isinstance(r, Mapping)]
    if started:
        rows.append(("started", ", ".join(f"run {r.get('run_id')} of job {r.get('job_id')}" for r in started)))
    if item.get("parameters"):
        rows.append(("parameters", ", ".join(f"{k}={compact(v)}" for k, v in item["parameters"].items())))
    if item.get("delivery_id"):
        rows.append(("webhook delivery", item["delivery_id"]))
    rows += [
        ("created (local)", local_time(item.get("created_at"))),
        ("started (local)", local_time(item.get("started_at"))),
        ("finished (local)", local_time(item.get("finished_at"))),
        ("duration", _run_duration(item)),
        ("features", f"{_count(stats.get('features_read'))} read, {_count(stats.get('features_written'))} written"),
        ("bytes", f"{_count(stats.get('bytes_read'))} read, {_count(stats.get('bytes_written'))} written"),
    ]
    if item.get("skipped_reason"):
        rows.append(("skipped", item["skipped_reason"]))
    if workflow.get("workflow_id"):
        rows.append(("temporal workflow", workflow["workflow_id"]))
    text = _key_values(rows) + "\n\n" + steps(item)
    log = run_log(item)
    if log:
        text += "\n\n" + log
    error = item.get("error")
    if isinstance(error, Mapping):
        text += "\n\n" + run_error(item)
    return text


def _facts(facts: Any) -> str:
    """``url https://…/a.geojson · places.geojson · GeoJSON · 5,120 bytes · 25 features``."""
    if not isinstance(facts, Mapping):
        return ""
    said: list[str] = []
    connection = facts.get("connection")
    if isinstance(connection, Mapping):
        said.append(f"{connection.get('type')} {connection.get('id')}")
    location = facts.get("location")
    if isinstance(location, Mapping) and location:
        said.append(", ".join(f"{k}: {v}" for k, v in location.items()))
    for key in ("filename", "format"):
        if facts.get(key):
            said.append(str(facts[key]))
    if isinstance(facts.get("bytes"), int):
        said.append(f"{facts['bytes']:,} bytes")
    if isinstance(facts.get("features"), int):
        said.append(f"{facts['features']:,} features")
    return " · ".join(said)


def run_log(item: JSON) -> str:
    """Each finished step's log: what it read and wrote (layers with geometry type and CRS), and its warnings."""
    lines: list[str] = []
    warnings = [w for w in item.get("warnings") or [] if isinstance(w, Mapping)]
    for step in item.get("steps") or []:
        if not isinstance(step, Mapping):
            continue
        log = step.get("log") if isinstance(step.get("log"), Mapping) else {}
        said = [w for w in warnings if w.get("step") == step.get("name")]
        if not log and not said:
            continue
        lines.append(f"{step.get('name')}:")
        for label, key in (("read", "read"), ("wrote", "wrote")):
            facts = log.get(key)
            if not isinstance(facts, Mapping):
                continue
            lines.append(f"  {label}: {_facts(facts) or '—'}")
            for layer in facts.get("layers") or []:
                if isinstance(layer, Mapping) and (layer.get("geometry_type") or layer.get("crs") or layer.get("features") is not None):
                    parts = [str(p) for p in (layer.get("geometry_type"), _crs_text(layer.get("crs"), layer.get("crs_info"))) if p]
                    if isinstance(layer.get("features"), int):
                        parts.append(f"{layer['features']:,} features")
                    lines.append(f"    {layer.get('name')}: {' · '.join(parts)}")
        for w in said:
            where_ = f"{w['layer']}: " if w.get("layer") else ""
            lines.append(f"  warning: {where_}{w.get('message')} [{w.get('code')}]")
        output = log.get("output")
        if isinstance(output, Mapping):
            for stream in ("stdout", "stderr"):
                if output.get(stream):
                    lines.append(f"  {stream}: " + str(output[stream]).rstrip().replace("\n", "\n    "))
    return ("Log\n" + "\n".join(lines)) if lines else ""


def run_error(item: JSON) -> str:
    """``Error at step deliver: … [delivery_failed, retryable]`` for a Run that failed."""
    error = item.get("error")
    if not isinstance(error, Mapping):
        return f"Run {item.get('id')} {item.get('status')}"
    tags = [str(error.get("code"))]
    if error.get("retryable"):
        tags.append("retryable")
    where_ = f" at step {error['step']}" if error.get("step") else ""
    return f"Error{where_}: {error.get('message')} [{', '.join(tags)}]"
