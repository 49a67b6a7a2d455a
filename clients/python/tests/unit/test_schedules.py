"""Schedules, triggers and parameters from what a person types (svc_client.schedules)."""

from __future__ import annotations

import pytest

from svc_client import schedules as s


def test_the_five_kinds() -> None:
    assert s.daily("2:30", "Europe/Berlin") == {"kind": "daily", "timezone": "Europe/Berlin", "hour": 2, "minute": 30}
    assert s.weekly("mon-fri", "07:30", "Europe/Berlin")["days"] == ["mon", "tue", "wed", "thu", "fri"]
    assert s.weekly(["sun", "sat"], "07:30", "UTC")["days"] == ["sat", "sun"]  # week order
    assert s.monthly("15, 1, last", "06:00", "UTC") == {"kind": "monthly", "timezone": "UTC", "days": [15, 1, "last"],
                                                          "hour": 6, "minute": 0}
    assert s.cron(" */15 7-18 * * mon-fri ", "America/New_York") == {
        "kind": "cron", "timezone": "America/New_York", "expression": "*/15 7-18 * * mon-fri"}
    assert s.cron("@hourly", "UTC")["expression"] == "@hourly"
    assert s.interval("15m") == {"kind": "interval", "timezone": "UTC", "every_minutes": 15}
    assert s.interval("2h", "Europe/Berlin")["every_minutes"] == 120
    assert s.interval(1)["every_minutes"] == 1


@pytest.mark.parametrize(("text", "days"), [
    ("mon,wed-fri", ["mon", "wed", "thu", "fri"]),
    ("Saturday Sunday", ["sat", "sun"]),
    ("monday-friday", ["mon", "tue", "wed", "thu", "fri"]),
    ("fri,fri", ["fri"]),
])
def test_weekdays(text: str, days: list[str]) -> None:
    assert s.parse_weekdays(text) == days


@pytest.mark.parametrize(("call", "says"), [
    (lambda: s.daily("24:00", "UTC"), "HH:MM"),
    (lambda: s.daily("7", "UTC"), "HH:MM"),
    (lambda: s.parse_weekdays("fri-mon"), "runs forward"),
    (lambda: s.parse_weekdays("month"), "mon … sun"),
    (lambda: s.parse_weekdays(" , "), "at least one day"),
    (lambda: s.parse_month_days("0"), "1 … 31"),
    (lambda: s.parse_month_days("32"), "1 … 31"),
    (lambda: s.parse_month_days("first"), "1 … 31"),
    (lambda: s.cron("*/15 * * *", "UTC"), "five fields"),
    (lambda: s.cron("  ", "UTC"), "empty"),
    (lambda: s.interval("0"), "at least 1 minute"),
    (lambda: s.interval("15s"), "15m or 2h"),
])
def test_what_is_plainly_wrong_is_told_before_any_request(call: object, says: str) -> None:
    with pytest.raises(ValueError, match=says):
        call()  # type: ignore[operator]


def test_after() -> None:
    assert s.parse_after("job_1") == {"job_id": "job_1", "when": "succeeded"}
    assert s.parse_after("job_1:failed") == {"job_id": "job_1", "when": "failed"}
    with pytest.raises(ValueError, match="succeeded/failed/any"):
        s.parse_after("job_1:cancelled")
    with pytest.raises(ValueError, match="Job id"):
        s.parse_after(":any")


def test_parameters_and_values() -> None:
    assert s.parse_parameter("region") == {"name": "region", "type": "string", "default": None}
    assert s.parse_parameter("year:integer=2024") == {"name": "year", "type": "integer", "default": 2024}
    assert s.parse_parameter("ratio:number=0.5")["default"] == 0.5
    assert s.parse_parameter("dry:boolean=False")["default"] is False
    assert s.parse_parameter("day:date=2026-01-31")["default"] == "2026-01-31"
    assert s.parse_parameter("label=a=b")["default"] == "a=b"
    # Not an integer: sent as text, for the server to refuse in its own words.
    assert s.parse_parameter("year:integer=soon")["default"] == "soon"
    with pytest.raises(ValueError, match="types are"):
        s.parse_parameter("x:float=1")
    with pytest.raises(ValueError, match="NAME"):
        s.parse_parameter("1st")
    assert s.parse_values(["region=north", "note=a=b", "empty="]) == {"region": "north", "note": "a=b", "empty": ""}
    with pytest.raises(ValueError, match="NAME=VALUE"):
        s.parse_values(["region"])
