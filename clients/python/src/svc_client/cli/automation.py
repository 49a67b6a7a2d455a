"""When a Job runs, from options: its schedule (five kinds), triggers and run-time parameters;
and ``svc schedules preview``, to see a schedule's next Runs before saving it."""

from __future__ import annotations

from typing import Any

import click

from .. import schedules as sched
from . import views
from .app import State, cli, pass_state
from .support import F, emit, load_json_array, table_option

#: Returned when no schedule option was given: the Job's schedule stays as it is.
KEEP: Any = object()

_KINDS = ("daily", "weekly", "monthly", "every", "cron")


def schedule_options(f: F) -> F:
    options = [
        click.option("--daily", metavar="HH:MM", help="Run every day at this time, in --timezone."),
        click.option("--weekly", metavar="DAYS", help="Run on these weekdays (mon-fri, sat,sun…) at --at, in --timezone."),
        click.option("--monthly", metavar="DAYS", help="Run on these days of the month (1,15,last…) at --at, in --timezone."),
        click.option("--at", metavar="HH:MM", help="The time of --weekly and --monthly."),
        click.option("--every", metavar="MINUTES", help="Run every N minutes of elapsed time (15, 15m, 2h)."),
        click.option("--cron", metavar="EXPRESSION", help="Run on a five-field cron expression, in --timezone (e.g. '*/15 7-18 * * mon-fri')."),
        click.option("--timezone", metavar="ZONE", help="IANA time zone of the schedule, e.g. Europe/Berlin (--every: UTC if not given)."),
        click.option("--no-schedule", is_flag=True, help="No schedule (Run Now and triggers only)."),
    ]
    for option in reversed(options):
        f = option(f)
    return f


def _usage(error: ValueError, option: str) -> click.UsageError:
    return click.UsageError(f"{option}: {error}")


def schedule_from(options: dict[str, Any]) -> Any:
    """The schedule the options name, None for --no-schedule, or KEEP when none was given."""
    given = [k for k in _KINDS if options.get(k) is not None]
    timezone, at = options.get("timezone"), options.get("at")
    if options.get("no_schedule"):
        if given or timezone or at:
            raise click.UsageError("--no-schedule excludes the schedule options (--daily, --weekly, --timezone…)")
        return None
    if len(given) > 1:
        raise click.UsageError(f"give one schedule: --{' and --'.join(given)} are several")
    if not given:
        if timezone or at:
            raise click.UsageError("--timezone and --at go with a schedule: --daily, --weekly, --monthly, --every or --cron")
        return KEEP
    kind = given[0]
    if at is not None and kind not in ("weekly", "monthly"):
        raise click.UsageError(f"--at goes with --weekly and --monthly (--{kind} says its own time, if any)")
    if kind in ("weekly", "monthly") and at is None:
        raise click.UsageError(f"--{kind} needs --at HH:MM")
    if kind != "every" and not timezone:
        raise click.UsageError(f"--{kind} needs --timezone (an IANA zone such as Europe/Berlin): the schedule "
                               "runs on that clock, across daylight-saving changes")
    value = options[kind]
    try:
        if kind == "daily":
            return sched.daily(value, timezone)
        if kind == "weekly":
            return sched.weekly(value, at, timezone)
        if kind == "monthly":
            return sched.monthly(value, at, timezone)
        if kind == "every":
            return sched.interval(value, timezone or "UTC")
        return sched.cron(value, timezone)
    except ValueError as error:
        raise _usage(error, f"--{kind}") from None


def trigger_options(f: F) -> F:
    options = [
        click.option("--on-change", metavar="MINUTES", help="Run when the Source changes, checked every N minutes (15, 15m, 1h)."),
        click.option("--no-on-change", is_flag=True, help="Stop running when the Source changes."),
        click.option("--after", "after", multiple=True, metavar="JOB_ID[:WHEN]",
                     help="Run after a Run of that Job succeeded (default), :failed or :any. Repeatable; replaces the list."),
        click.option("--no-after", is_flag=True, help="Run after no other Job."),
        click.option("--parameter", "parameter", multiple=True, metavar="NAME[:TYPE][=DEFAULT]",
                     help="Declare a run-time parameter, used as {{NAME}} (types: string, integer, number, boolean, date; "
                          "no default: a value is required). Repeatable; replaces the list."),
        click.option("--parameters", metavar="JSON", help="The parameters as a JSON array (with choices and descriptions), @file.json or -."),
        click.option("--no-parameters", is_flag=True, help="Remove the Job's parameters."),
    ]
    for option in reversed(options):
        f = option(f)
    return f


def triggers_from(options: dict[str, Any]) -> dict[str, Any] | None:
    """The trigger keys the options change (None: none given). On an update, the other keys stay."""
    triggers: dict[str, Any] = {}
    if options.get("on_change") is not None and options.get("no_on_change"):
        raise click.UsageError("--on-change and --no-on-change: give one")
    if options.get("after") and options.get("no_after"):
        raise click.UsageError("--after and --no-after: give one")
    if options.get("on_change") is not None:
        try:
            triggers["on_change"] = {"every_minutes": sched.parse_minutes(options["on_change"])}
        except ValueError as error:
            raise _usage(error, "--on-change") from None
    elif options.get("no_on_change"):
        triggers["on_change"] = None
    if options.get("after"):
        try:
            triggers["after"] = [sched.parse_after(a) for a in options["after"]]
        except ValueError as error:
            raise _usage(error, "--after") from None
    elif options.get("no_after"):
        triggers["after"] = []
    return triggers or None


def parameters_from(options: dict[str, Any]) -> list[dict[str, Any]] | None:
    """The parameter declarations the options give (None: none given)."""
    given = [o for o in ("parameter", "parameters", "no_parameters") if options.get(o)]
    if len(given) > 1:
        raise click.UsageError("--parameter, --parameters and --no-parameters: give one")
    if options.get("no_parameters"):
        return []
    if options.get("parameters"):
        return load_json_array(options["parameters"], "--parameters")
    if options.get("parameter"):
        try:
            return [sched.parse_parameter(p) for p in options["parameter"]]
        except ValueError as error:
            raise _usage(error, "--parameter") from None
    return None


def run_values(pairs: tuple[str, ...]) -> dict[str, str] | None:
    """``--param name=value`` values for a Run (None: none given)."""
    try:
        return sched.parse_values(pairs) or None
    except ValueError as error:
        raise _usage(error, "--param") from None


@cli.group()
def schedules() -> None:
    """Schedules: see when one would run before saving it on a Job."""


@schedules.command("preview")
@schedule_options
@click.option("--count", type=click.IntRange(1, 100), default=5, show_default=True, help="How many fire times.")
@click.option("--after-time", "after_time", metavar="ISO8601", help="List the fire times after this instant (default: now).")
@table_option
@pass_state
def preview(state: State, count: int, after_time: str | None, **options: Any) -> None:
    """Check a schedule as a Job save would, and list its next Runs (your local time and the
    schedule's own):

    \b
    svc schedules preview --weekly mon-fri --at 07:30 --timezone Europe/Berlin
    svc schedules preview --cron '*/15 7-18 * * mon-fri' --timezone America/New_York --count 10
    """
    schedule = schedule_from(options)
    if schedule is KEEP or schedule is None:
        raise click.UsageError("name a schedule: --daily, --weekly, --monthly, --every or --cron")
    emit(state, state.client().schedules.preview(schedule, count, after=after_time), view=views.schedule_preview)
