"""A Job's schedule, triggers and run-time parameters, built from what a person types.

Pure functions (no I/O): the CLI's ``--weekly mon-fri --at 07:30``, ``--every 15m``,
``--after job_…:failed`` and ``--param name=value`` go through them, and library users can call
them to build bodies. The server checks every value again (a cron expression's fields, the
timezone, a cycle of Jobs) and explains what it refuses; these functions only catch what is
plainly not of the right shape, so a mistake is told before any request.

>>> weekly("mon-fri", "07:30", "Europe/Berlin")
{'kind': 'weekly', 'timezone': 'Europe/Berlin', 'days': ['mon', 'tue', 'wed', 'thu', 'fri'], 'hour': 7, 'minute': 30}
>>> interval("1h")
{'kind': 'interval', 'timezone': 'UTC', 'every_minutes': 60}
"""

from __future__ import annotations

import re
from typing import Any

__all__ = [
    "WEEKDAYS",
    "AFTER_WHEN",
    "PARAMETER_TYPES",
    "daily",
    "weekly",
    "monthly",
    "cron",
    "interval",
    "parse_time",
    "parse_minutes",
    "parse_weekdays",
    "parse_month_days",
    "parse_after",
    "parse_parameter",
    "parse_values",
]

WEEKDAYS: tuple[str, ...] = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
AFTER_WHEN: tuple[str, ...] = ("succeeded", "failed", "any")
PARAMETER_TYPES: tuple[str, ...] = ("string", "integer", "number", "boolean", "date")

_TIME = re.compile(r"^([01]?\d|2[0-3]):([0-5]\d)$")
_MINUTES = re.compile(r"^(\d+)\s*(m|min|minutes?|h|hours?)?$", re.IGNORECASE)


def parse_time(text: str) -> tuple[int, int]:
    """``"7:30"`` → ``(7, 30)``; anything but HH:MM from 00:00 to 23:59 raises ValueError."""
    match = _TIME.match(text.strip())
    if not match:
        raise ValueError(f"a time is HH:MM (00:00 to 23:59), got {text!r}")
    return int(match.group(1)), int(match.group(2))


def parse_minutes(text: str | int) -> int:
    """``15``, ``"15m"``, ``"2h"`` → minutes (at least 1)."""
    match = _MINUTES.match(str(text).strip())
    if not match:
        raise ValueError(f"give minutes as 15, 15m or 2h, got {text!r}")
    minutes = int(match.group(1)) * (60 if (match.group(2) or "m").lower().startswith("h") else 1)
    if minutes < 1:
        raise ValueError("the interval is at least 1 minute")
    return minutes


_DAY_NAMES = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")


def _weekday(name: str, part: str) -> int:
    """mon or monday → 0."""
    for names in (WEEKDAYS, _DAY_NAMES):
        if name in names:
            return names.index(name)
    raise ValueError(f"days are mon … sun, got {part!r}")


def parse_weekdays(text: str) -> list[str]:
    """``"mon-fri"``, ``"sat,sun"``, ``"mon,wed-fri"`` → day names in week order (mon … sun)."""
    chosen: set[str] = set()
    for part in filter(None, (p.strip().lower() for p in re.split(r"[,\s]+", text))):
        first, dash, last = part.partition("-")
        i = _weekday(first, part)
        j = _weekday(last, part) if dash else i
        if i > j:
            raise ValueError(f"a range of days runs forward within a week (mon-fri, sat-sun), got {part!r}")
        chosen.update(WEEKDAYS[i:j + 1])
    if not chosen:
        raise ValueError("name at least one day (mon … sun)")
    return [d for d in WEEKDAYS if d in chosen]


def parse_month_days(text: str) -> list[int | str]:
    """``"1,15,last"`` → ``[1, 15, 'last']`` (a month without a day named is skipped: use last)."""
    days: list[int | str] = []
    for part in filter(None, (p.strip().lower() for p in re.split(r"[,\s]+", text))):
        if part == "last":
            days.append("last")
        elif part.isdigit() and 1 <= int(part) <= 31:
            days.append(int(part))
        else:
            raise ValueError(f"days of the month are 1 … 31 or last, got {part!r}")
    if not days:
        raise ValueError("name at least one day of the month (1 … 31, or last)")
    return days


def daily(at: str, timezone: str) -> dict[str, Any]:
    """Every day at ``at`` (HH:MM), the clock in ``timezone``."""
    hour, minute = parse_time(at)
    return {"kind": "daily", "timezone": timezone, "hour": hour, "minute": minute}


def weekly(days: str | list[str], at: str, timezone: str) -> dict[str, Any]:
    """On the days named (``"mon-fri"`` or a list) at ``at`` in ``timezone``."""
    hour, minute = parse_time(at)
    names = parse_weekdays(days if isinstance(days, str) else ",".join(days))
    return {"kind": "weekly", "timezone": timezone, "days": names, "hour": hour, "minute": minute}


def monthly(days: str | list[int | str], at: str, timezone: str) -> dict[str, Any]:
    """On the days of the month named (``"1,15,last"`` or a list) at ``at`` in ``timezone``."""
    hour, minute = parse_time(at)
    numbers = parse_month_days(days if isinstance(days, str) else ",".join(str(d) for d in days))
    return {"kind": "monthly", "timezone": timezone, "days": numbers, "hour": hour, "minute": minute}


def cron(expression: str, timezone: str) -> dict[str, Any]:
    """A five-field cron expression (or @hourly, @daily…), read in ``timezone``; the server checks it."""
    expression = expression.strip()
    if not expression:
        raise ValueError("the cron expression is empty")
    if not expression.startswith("@") and len(expression.split()) != 5:
        raise ValueError(f"a cron expression has five fields (minute hour day month weekday), got {expression!r}")
    return {"kind": "cron", "timezone": timezone, "expression": expression}


def interval(every: str | int, timezone: str = "UTC") -> dict[str, Any]:
    """Every N minutes of elapsed time, aligned to ``timezone``'s standard clock (default UTC)."""
    return {"kind": "interval", "timezone": timezone, "every_minutes": parse_minutes(every)}


def parse_after(text: str) -> dict[str, str]:
    """``"job_1"`` or ``"job_1:failed"`` → ``{"job_id": …, "when": …}`` (when: succeeded by default)."""
    job_id, _, when = text.strip().partition(":")
    when = when.strip() or "succeeded"
    if not job_id:
        raise ValueError(f"give a Job id, optionally with :succeeded, :failed or :any, got {text!r}")
    if when not in AFTER_WHEN:
        raise ValueError(f"after a Job's Run that {'/'.join(AFTER_WHEN)}, got {when!r}")
    return {"job_id": job_id, "when": when}


_PARAMETER = re.compile(r"^(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?::(?P<type>[a-z]+))?(?:=(?P<default>.*))?$", re.DOTALL)


def _typed(kind: str, text: str) -> Any:
    """A default as the declared type's JSON; what does not read as that type goes as text, for
    the server to refuse with its own words."""
    try:
        if kind == "integer":
            return int(text)
        if kind == "number":
            return float(text) if any(c in text for c in ".eE") else int(text)
    except ValueError:
        return text
    if kind == "boolean" and text.lower() in ("true", "false"):
        return text.lower() == "true"
    return text


def parse_parameter(text: str) -> dict[str, Any]:
    """A parameter declaration ``NAME[:TYPE][=DEFAULT]``: ``region``, ``year:integer=2024``.

    Without ``=DEFAULT`` a Run must be given a value. For choices or a description, give the
    Job's ``parameters`` as JSON instead.
    """
    match = _PARAMETER.match(text.strip())
    if not match:
        raise ValueError(f"a parameter is NAME[:TYPE][=DEFAULT] (name: letters, digits, _), got {text!r}")
    kind = match.group("type") or "string"
    if kind not in PARAMETER_TYPES:
        raise ValueError(f"parameter types are {', '.join(PARAMETER_TYPES)}, got {kind!r}")
    default = match.group("default")
    return {"name": match.group("name"), "type": kind, "default": None if default is None else _typed(kind, default)}


def parse_values(pairs: list[str] | tuple[str, ...]) -> dict[str, str]:
    """``["region=north", "year=2024"]`` → values for a Run, as text (the server reads each as
    its parameter's type and says which one it refuses)."""
    values: dict[str, str] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip():
            raise ValueError(f"a value is NAME=VALUE, got {pair!r}")
        values[name.strip()] = value
    return values
