"""``svc jobs`` (saved automation) and ``svc runs`` (its Runs, watched live)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import click

from ..errors import SvcError
from ..jobs_helpers import MODE_FIELDS, job_pipeline
from . import views
from .automation import KEEP, parameters_from, run_values, schedule_from, schedule_options, trigger_options, triggers_from
from .app import EXIT_FAILURE, State, cli, pass_state
from .live import OnPoll, run_status
from .support import (
    F,
    add_list_get_delete,
    data_option,
    emit,
    emit_list,
    list_options,
    load_json,
    load_json_array,
    load_json_object,
    stderr_is_terminal,
    table_option,
    timeout_option,
)

@cli.group()
def jobs() -> None:
    """Saved automation: a Source, a transform, a format, a Destination, a schedule. Its Runs are
    under `svc runs`."""


def _names(state: State) -> dict[str, str]:
    """Source and Destination names by id, for the Jobs table; ids alone if they cannot be read
    (a token with jobs:read only)."""
    names: dict[str, str] = {}
    client = state.client()
    for collection in (client.sources, client.destinations):
        try:
            names.update({str(c["id"]): str(c.get("name")) for c in collection.iter() if "id" in c})
        except SvcError:
            pass
    return names


def _jobs_view(state: State) -> Callable[[list[Any]], str]:
    return lambda items: views.jobs(items, _names(state) if items else {})


@jobs.command("list")
@list_options
@table_option
@pass_state
def list_(state: State, limit: int | None, cursor: str | None, page_size: int | None) -> None:
    """List your Jobs, newest first: source → destination, schedule (in the Job's time zone), the
    next Run in your local time, enabled, the last Run's status."""
    jobs_ = state.client().jobs
    emit_list(state, lambda size: jobs_.list(page_size=size), lambda lim, cur: jobs_.page(limit=lim, cursor=cur),
              limit, cursor, page_size, view=_jobs_view(state))


add_list_get_delete(jobs, "jobs", "Job", (), item_view=views.job, commands=("get", "delete"))


# -- the body of create and update -----------------------------------------------------------------


def _body_options(f: F) -> F:
    options = [
        data_option(),
        click.option("--name", help="Name."),
        click.option("--source", "source_id", metavar="SOURCE_ID", help="The Source to read."),
        click.option("--resource", help="source_resource: JSON object, @file.json, or the type's shorthand (a table name…)."),
        click.option("--operations", help="Manual transform: operations as a JSON array, @file.json or -."),
        click.option("--recipe", "recipe_id", metavar="RECIPE_ID", help="Transform with a Recipe's operations (copied onto the Job)."),
        click.option("--sql", help="Transform with one SELECT against the relation named source."),
        click.option("--python-file", type=click.Path(exists=True, dir_okay=False, path_type=Path), help="Python step script."),
        click.option("--format", "output_format", help="Output format id (see `svc formats list --writable`)."),
        click.option("--creation-options", help='With --format: the format\'s creation options as JSON, '
                     '{"dataset": {"ROW_GROUP_SIZE": "100000"}} (or @file.json, -).'),
        click.option("--destination", "destination_id", metavar="DESTINATION_ID", help="The Destination to deliver to."),
        click.option("--target", help="destination_target as JSON (schema, table, write_mode…), @file.json or -."),
        schedule_options,
        trigger_options,
        click.option("--enable/--disable", "enabled", default=None, help="Whether the schedule and triggers run."),
        click.option("--without", "without", multiple=True, type=click.Choice(["transform", "convert", "python"]),
                     help="Leave a stage out (its fields are then dropped). Repeatable."),
    ]
    for option in reversed(options):
        f = option(f)
    return f


def _selector(value: str | None) -> Any:
    if value is None:
        return None
    if value == "-" or value.startswith("@") or value.lstrip().startswith("{"):
        return load_json(value, "--resource")
    return value  # the type's shorthand, e.g. a table name


def _changes(options: dict[str, Any]) -> dict[str, Any]:
    """Job fields from the options that were given (none of them: an empty dict)."""
    changes: dict[str, Any] = {}
    for key in ("name", "source_id", "recipe_id", "sql", "output_format", "destination_id", "enabled"):
        if options.get(key) is not None:
            changes[key] = options[key]
    if options.get("resource") is not None:
        changes["source_resource"] = _selector(options["resource"])
    if options.get("target") is not None:
        changes["destination_target"] = load_json_object(options["target"], "--target")
    if options.get("creation_options") is not None:
        changes["creation_options"] = load_json_object(options["creation_options"], "--creation-options")
    operations = load_json_array(options.get("operations"), "--operations")
    modes = [m for m, given in (("manual", operations is not None), ("recipe", "recipe_id" in changes),
                                ("sql", "sql" in changes)) if given]
    if len(modes) > 1:
        raise click.UsageError("--operations, --recipe and --sql are three transform modes: give one")
    if modes:
        changes["transform_mode"] = modes[0]
    if operations is not None:
        changes["operations"] = operations
    script: Path | None = options.get("python_file")
    if script is not None:
        changes["python_script"] = script.read_text(encoding="utf-8")
        changes["python_filename"] = script.name
    schedule = schedule_from(options)
    if schedule is not KEEP:
        changes["schedule"] = schedule
    triggers = triggers_from(options)
    if triggers is not None:
        changes["triggers"] = triggers
    parameters = parameters_from(options)
    if parameters is not None:
        changes["parameters"] = parameters
    if options.get("without"):
        changes["pipeline"] = {stage: False for stage in options["without"]}
    return changes


def _laid_over(body: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    """``changes`` over a --data body: a transform mode option drops the body's other modes'
    fields (the server refuses sql with recipe), and --without adds to the body's pipeline
    (--on-change and --after to its triggers)."""
    merged = {**body, **changes}
    if "transform_mode" in changes:
        for mode, fields in MODE_FIELDS.items():
            if mode != changes["transform_mode"]:
                for field in fields:
                    if field not in changes:
                        merged.pop(field, None)
    for key in ("pipeline", "triggers"):
        if isinstance(body.get(key), dict) and key in changes:
            merged[key] = {**body[key], **changes[key]}
    return merged


@jobs.command("create")
@_body_options
@table_option
@pass_state
def create(state: State, /, data: str | None, **options: Any) -> None:
    """Create a Job from --data (a whole JSON body) and/or the options, which win.

    \b
    svc jobs create --name nightly --source src_… --resource parcels \\
        --operations '[{"type":"simplify","tolerance":1}]' --format GPKG \\
        --destination dst_… --target '{"key":"parcels.gpkg"}' --daily 02:30 --timezone Europe/Berlin

    \b
    Schedules: --daily HH:MM, --weekly mon-fri --at HH:MM, --monthly 1,15,last --at HH:MM,
    --every 15m, --cron '*/15 7-18 * * mon-fri' (all but --every need --timezone). Triggers:
    --on-change 10m, --after JOB_ID[:succeeded|failed|any]. Parameters: --parameter
    region=north, used as {{region}} in --resource, --target and --sql.
    """
    body = _laid_over(load_json_object(data, "--data"), _changes(options))
    emit(state, state.client().jobs.create(body), view=views.job)


@jobs.command("update")
@click.argument("id")
@_body_options
@table_option
@pass_state
def update(state: State, /, id: str, data: str | None, **options: Any) -> None:
    """Change a Job. With --data, that is the whole new body; with options only, the saved Job is
    read and only those fields change."""
    changes = _changes(options)
    jobs_ = state.client().jobs
    if data is not None:
        result = jobs_.update(id, _laid_over(load_json_object(data, "--data"), changes))
    elif changes:
        result = jobs_.update(id, **changes)
    else:
        raise click.UsageError("nothing to change: give --data or an option")
    emit(state, result, view=views.job)


@jobs.command("stages")
@click.argument("id")
@table_option
@pass_state
def stages(state: State, id: str) -> None:
    """Show which stages (transform, convert, python) a Job has."""
    emit(state, job_pipeline(state.client().jobs.get(id)))


def _action(name: str, method: str, doc: str) -> None:
    @jobs.command(name, help=doc)
    @click.argument("id")
    @table_option
    @pass_state
    def command(state: State, id: str) -> None:
        result = getattr(state.client().jobs, method)(id)
        is_job = isinstance(result, dict) and "name" in result
        emit(state, result if result is not None else {"id": id, "done": name},
             view=views.job if is_job else None)


_action("enable", "enable", "Enable a Job: its schedule runs again.")
_action("disable", "disable", "Disable a Job: no scheduled Runs (`svc jobs run` still works).")
_action("sync-reset", "sync_reset", "Forget the sync cursor: the next Run reads everything again.")
_action("sync-reinitialize", "sync_reinitialize",
        "Forget the sync cursor and rebuild the target on the next Run (staged, then swapped).")


@jobs.group("webhook")
def webhook() -> None:
    """A Job's webhook trigger: a URL that starts a Run, with its own secret (not your token)."""


@webhook.command("issue")
@click.argument("id")
@click.option("--bearer", is_flag=True, help="Callers send the secret as a bearer token instead of signing each call.")
@table_option
@pass_state
def webhook_issue(state: State, id: str, bearer: bool) -> None:
    """Issue the webhook, or rotate its secret: prints the URL and the new secret, shown this
    once (the old secret stops working at once). How callers sign: docs/jobs.md, "Webhook trigger"."""
    emit(state, state.client().jobs.issue_webhook(id, "bearer" if bearer else "hmac"))


@webhook.command("revoke")
@click.argument("id")
@table_option
@pass_state
def webhook_revoke(state: State, id: str) -> None:
    """Revoke the webhook: its URL answers 401 from now on."""
    state.client().jobs.revoke_webhook(id)
    emit(state, {"id": id, "done": "webhook revoked"})


# -- Runs --------------------------------------------------------------------------------------------


def _finish(ctx: click.Context, wait: bool, wait_timeout: float | None, start: Callable[[OnPoll | None], dict[str, Any]]) -> None:
    """Start or wait (a live status line on a terminal), print the Run; a waited Run that did not
    succeed prints its error on stderr and exits 1 (WaitTimeoutError: 10, by the group)."""
    state = ctx.ensure_object(State)
    with run_status(wait, stderr_is_terminal()) as on_poll:
        run = start(on_poll)
    emit(state, run, view=views.run)
    if wait and run.get("status") != "succeeded":
        click.echo(views.run_error(run), err=True)
        ctx.exit(EXIT_FAILURE)


def _run_command(f: F) -> F:
    f = click.option("--idempotency-key", help="The same key within 24 h starts one Run only.")(f)
    f = timeout_option(f)
    return click.option("--wait", is_flag=True, help="Watch the Run until it succeeds, fails or is cancelled.")(f)


@jobs.command("run")
@click.argument("id")
@click.option("--param", "params", multiple=True, metavar="NAME=VALUE",
              help="A value for one of the Job's parameters (the rest take their defaults). Repeatable.")
@_run_command
@table_option
@click.pass_context
def run(ctx: click.Context, id: str, params: tuple[str, ...], wait: bool, wait_timeout: float | None,
        idempotency_key: str | None) -> None:
    """Run a Job now. With --wait, a live status line on a terminal, then exit 0 if the Run
    succeeded, 1 if it failed or was cancelled, 10 if waiting timed out (the Run goes on).
    With --param region=north, the Run uses that value for {{region}} (and records it)."""
    values = run_values(params)
    jobs_ = ctx.ensure_object(State).client().jobs
    _finish(ctx, wait, wait_timeout, lambda on_poll: jobs_.run(
        id, wait=wait, timeout=wait_timeout, idempotency_key=idempotency_key, on_poll=on_poll, parameters=values))


@cli.group()
def runs() -> None:
    """Runs of a Job: list, show (with steps), wait, retry."""


def _runs_list(state: State, id: str, limit: int | None, cursor: str | None, page_size: int | None) -> None:
    jobs_ = state.client().jobs
    emit_list(state, lambda size: jobs_.list_runs(id, page_size=size),
              lambda lim, cur: jobs_.runs_page(id, limit=lim, cursor=cur),
              limit, cursor, page_size, view=views.runs)


@runs.command("list")
@click.argument("job_id", required=False)
@list_options
@table_option
@pass_state
def runs_list(state: State, job_id: str | None, limit: int | None, cursor: str | None, page_size: int | None) -> None:
    """List a Job's Runs, newest first; without JOB_ID, the Runs of every Job (deleted Jobs' too)."""
    if job_id:
        _runs_list(state, job_id, limit, cursor, page_size)
        return
    jobs_ = state.client().jobs
    emit_list(state, lambda size: list(jobs_.iter_all_runs(page_size=size)),
              lambda lim, cur: jobs_.all_runs_page(limit=lim, cursor=cur),
              limit, cursor, page_size, view=views.runs)


@jobs.command("runs")
@click.argument("id")
@list_options
@table_option
@pass_state
def jobs_runs(state: State, id: str, limit: int | None, cursor: str | None, page_size: int | None) -> None:
    """List a Job's Runs (the same as `svc runs list`)."""
    _runs_list(state, id, limit, cursor, page_size)


@runs.command("show")
@click.argument("job_id")
@click.argument("run_id")
@table_option
@pass_state
def runs_show(state: State, job_id: str, run_id: str) -> None:
    """Show a Run: status, times, counts, each step with its duration, its log (what each step read and wrote, warnings), and the error."""
    emit(state, state.client().jobs.get_run(job_id, run_id), view=views.run)


@runs.command("wait")
@click.argument("job_id")
@click.argument("run_id")
@timeout_option
@table_option
@click.pass_context
def runs_wait(ctx: click.Context, job_id: str, run_id: str, wait_timeout: float | None) -> None:
    """Watch a Run until it finishes (exit codes as `svc jobs run --wait`)."""
    jobs_ = ctx.ensure_object(State).client().jobs
    _finish(ctx, True, wait_timeout, lambda on_poll: jobs_.wait_for_run(
        job_id, run_id, timeout=wait_timeout, on_poll=on_poll))


@runs.command("retry")
@click.argument("job_id")
@click.argument("run_id")
@click.option("--as-it-was", is_flag=True,
              help="Run the failed Run's own snapshot of the Job again, not the Job as it is now.")
@click.option("--wait", is_flag=True, help="Watch the new Run until it finishes.")
@timeout_option
@table_option
@click.pass_context
def runs_retry(ctx: click.Context, job_id: str, run_id: str, as_it_was: bool, wait: bool,
               wait_timeout: float | None) -> None:
    """Retry a failed Run: a new Run of the Job as it is now (your fixes count), with the failed
    Run's parameter values; --as-it-was runs the failed Run's snapshot again (exit codes as
    `jobs run`)."""
    jobs_ = ctx.ensure_object(State).client().jobs
    definition = "original" if as_it_was else "current"
    _finish(ctx, wait, wait_timeout, lambda on_poll: jobs_.retry_run(
        job_id, run_id, wait=wait, timeout=wait_timeout, on_poll=on_poll, definition=definition))


# The first release's names, kept working but out of the help.
jobs.add_command(click.Command("run-get", callback=runs_show.callback, params=runs_show.params, hidden=True,
                               help=runs_show.help))
jobs.add_command(click.Command("wait", callback=runs_wait.callback, params=runs_wait.params, hidden=True,
                               help=runs_wait.help))
jobs.add_command(click.Command("retry", callback=runs_retry.callback, params=runs_retry.params, hidden=True,
                               help=runs_retry.help))
