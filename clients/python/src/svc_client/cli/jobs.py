"""``svc jobs``: saved automation, its Runs, and waiting for them."""

from __future__ import annotations

from typing import Any, Callable

import click

from ..jobs_helpers import job_pipeline
from ..resources.jobs import OnPoll
from .app import EXIT_FAILURE, State, cli, pass_state
from .support import (
    add_list_get_delete,
    data_option,
    emit,
    load_json_object,
    page_size_option,
    table_option,
    timeout_option,
    wait_progress,
)

RUN_COLUMNS = ("id", "status", "trigger", "attempt", "created_at", "finished_at")


@cli.group()
def jobs() -> None:
    """Saved automation and its Runs."""


add_list_get_delete(jobs, "jobs", "Job", ("id", "name", "enabled", "transform_mode", "output_format", "next_run_at"))


@jobs.command("stages")
@click.argument("id")
@table_option
@pass_state
def stages(state: State, id: str) -> None:
    """Show which stages (transform, convert, python) a Job has."""
    emit(state, job_pipeline(state.client().jobs.get(id)))


@jobs.command("create")
@data_option(required=True)
@table_option
@pass_state
def create(state: State, data: str) -> None:
    """Create a Job from a JSON body (fields of stages set to false are dropped)."""
    emit(state, state.client().jobs.create(load_json_object(data, "--data")))


@jobs.command("update")
@click.argument("id")
@data_option(required=True)
@table_option
@pass_state
def update(state: State, id: str, data: str) -> None:
    """Replace a Job with a JSON body."""
    emit(state, state.client().jobs.update(id, load_json_object(data, "--data")))


def _action(name: str, method: str, doc: str) -> None:
    @jobs.command(name, help=doc)
    @click.argument("id")
    @table_option
    @pass_state
    def command(state: State, id: str) -> None:
        emit(state, getattr(state.client().jobs, method)(id))


_action("enable", "enable", "Enable a Job (its schedule runs).")
_action("disable", "disable", "Disable a Job.")
_action("sync-reset", "sync_reset", "Reset a Job's sync state.")
_action("sync-reinitialize", "sync_reinitialize", "Reinitialize a Job's sync state.")


def _show_run(
    ctx: click.Context, wait: bool, wait_timeout: float | None, start: Callable[[OnPoll | None], dict[str, Any]]
) -> None:
    """Start or wait (with a bar on a terminal), print the Run, exit 1 when a waited Run did not succeed."""
    state = ctx.ensure_object(State)
    limit = state.run_timeout if wait_timeout is None else wait_timeout
    with wait_progress(limit, wait) as on_poll:
        run = start(on_poll)
    emit(state, run)
    if wait and run.get("status") != "succeeded":
        ctx.exit(EXIT_FAILURE)


@jobs.command("run")
@click.argument("id")
@click.option("--wait", is_flag=True, help="Wait until the Run succeeds, fails or is cancelled.")
@timeout_option
@click.option("--idempotency-key", help="Key that makes a repeated request start one Run only.")
@table_option
@click.pass_context
def run(ctx: click.Context, id: str, wait: bool, wait_timeout: float | None, idempotency_key: str | None) -> None:
    """Start a Run now. With --wait: exit 0 if it succeeds, 1 if not, 10 if waiting times out."""
    jobs_ = ctx.ensure_object(State).client().jobs
    _show_run(ctx, wait, wait_timeout, lambda on_poll: jobs_.run(
        id, wait=wait, timeout=wait_timeout, idempotency_key=idempotency_key, on_poll=on_poll))


@jobs.command("wait")
@click.argument("id")
@click.argument("run_id")
@timeout_option
@table_option
@click.pass_context
def wait(ctx: click.Context, id: str, run_id: str, wait_timeout: float | None) -> None:
    """Wait for an existing Run to finish (exit codes as `jobs run --wait`)."""
    jobs_ = ctx.ensure_object(State).client().jobs
    _show_run(ctx, True, wait_timeout, lambda on_poll: jobs_.wait_for_run(
        id, run_id, timeout=wait_timeout, on_poll=on_poll))


@jobs.command("retry")
@click.argument("id")
@click.argument("run_id")
@click.option("--wait", is_flag=True, help="Wait until the new attempt finishes.")
@timeout_option
@table_option
@click.pass_context
def retry(ctx: click.Context, id: str, run_id: str, wait: bool, wait_timeout: float | None) -> None:
    """Retry a failed Run."""
    jobs_ = ctx.ensure_object(State).client().jobs
    _show_run(ctx, wait, wait_timeout, lambda on_poll: jobs_.retry(
        id, run_id, wait=wait, timeout=wait_timeout, on_poll=on_poll))


@jobs.command("runs")
@click.argument("id")
@page_size_option
@table_option
@pass_state
def runs(state: State, id: str, page_size: int | None) -> None:
    """List a Job's Runs (every page)."""
    emit(state, state.client().jobs.list_runs(id, page_size=page_size), RUN_COLUMNS)


@jobs.command("run-get")
@click.argument("id")
@click.argument("run_id")
@table_option
@pass_state
def run_get(state: State, id: str, run_id: str) -> None:
    """Show one Run."""
    emit(state, state.client().jobs.get_run(id, run_id))
