"""Schedules: when one would fire, before a Job is saved with it."""

from __future__ import annotations

from typing import Any, Mapping

from .base import JSON


class Schedules:
    """``/schedules``: the schedule preview (the same check a Job save makes)."""

    path = "/schedules"

    def __init__(self, client: Any) -> None:
        self._client = client

    def preview(self, schedule: Mapping[str, Any], count: int = 5, *, after: str | None = None) -> JSON:
        """The schedule as a Job would store it, in words, and its next ``count`` fire times (UTC,
        ISO 8601) after ``after`` (default: now). A schedule the server refuses raises
        :class:`~svc_client.ValidationError` naming the field (``schedule.expression``…).

        >>> svc.schedules.preview(schedules.cron("*/15 7-18 * * mon-fri", "Europe/Berlin"))["next_run_times"]
        """
        body: dict[str, Any] = {"schedule": dict(schedule), "count": count}
        if after is not None:
            body["after"] = after
        return self._client._object("POST", f"{self.path}/preview", json=body)

    def __repr__(self) -> str:
        return f"<Schedules {self.path}>"
