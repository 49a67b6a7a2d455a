"""Jobs (saved automation) and their Runs.

Why a failed Run is returned rather than raised: the request to run the Job succeeded; the Run
is a record the server keeps (its steps, its error with ``step`` and ``retryable``, its id to
retry it), and a Job failing because a remote system is down is an expected outcome of
automation, like a connection test that answers ``ok: false``. Raising would turn that record
into an exception to unpack, and make "start, wait, then decide to retry" a try/except. The
exceptions stay for what went wrong with the request itself (refused, not found, unreachable)
and for waiting too long (:class:`~svc_client.WaitTimeoutError`).
"""

from __future__ import annotations

from typing import Any, Callable, Iterator, Literal, Mapping

from ..errors import ServerError, WaitTimeoutError
from ..jobs_helpers import job_body, job_write_body
from .base import JSON, Collection, JSONList, Page, segment

#: Run statuses after which a Run no longer changes.
FINISHED_STATUSES = frozenset({"succeeded", "failed", "cancelled"})

OnPoll = Callable[[JSON, float], None]
"""Called after each look at a Run being waited for, with the Run and the seconds waited."""


def _merge(body: Mapping[str, Any] | None, fields: Mapping[str, Any]) -> dict[str, Any]:
    merged = dict(body or {})
    merged.update(fields)
    return job_write_body(merged)


class Jobs(Collection):
    path = "/jobs"

    def create(self, body: Mapping[str, Any] | None = None, **fields: Any) -> JSON:
        """Create a Job from a body and/or keyword fields (see the spec's Job fields).

        The body goes through :func:`~svc_client.job_write_body`: explicit ``false`` stage flags
        are kept and the fields of absent stages are dropped.
        """
        return self._client._object("POST", self.path, json=_merge(body, fields))

    def update(self, id: str, body: Mapping[str, Any] | None = None, **fields: Any) -> JSON:
        """Replace a Job (PUT), through :func:`~svc_client.job_write_body`.

        With ``body``, that is the whole new body (``fields`` laid over it). With ``fields``
        only, the saved Job is read first and only those fields change
        (:func:`~svc_client.job_body`): ``jobs.update(id, name="nightly v2")``.
        """
        if body is None:
            return self._client._object(
                "PUT", self._item(id), json=job_write_body(job_body(self.get(id), **fields))
            )
        return self._client._object("PUT", self._item(id), json=_merge(body, fields))

    def enable(self, id: str) -> Any:
        """Enable a Job: its schedule fires again. Returns the server's answer (the Job)."""
        return self._client._json("POST", self._item(id, "enable"))

    def disable(self, id: str) -> Any:
        """Disable a Job: no scheduled Runs (Run Now still works). Returns the server's answer."""
        return self._client._json("POST", self._item(id, "disable"))

    def sync_reset(self, id: str) -> Any:
        """Forget the sync cursor: the next Run reads everything again and writes it as usual."""
        return self._client._json("POST", self._item(id, "sync", "reset"))

    def sync_reinitialize(self, id: str) -> Any:
        """Forget the sync cursor and rebuild the target on the next Run (staged, then swapped)."""
        return self._client._json("POST", self._item(id, "sync", "reinitialize"))

    # -- the webhook trigger ------------------------------------------------------------------

    def issue_webhook(self, id: str, auth: Literal["hmac", "bearer"] = "hmac") -> JSON:
        """Issue the Job's webhook trigger, or rotate its secret: answers ``url``, ``auth`` and
        the new ``secret``, shown this once (the old secret stops working at once). ``hmac``:
        callers sign each call; ``bearer``: callers send the secret as a bearer token
        (docs/jobs.md, "Webhook trigger")."""
        return self._client._object("POST", self._item(id, "webhook"), json={"auth": auth})

    def revoke_webhook(self, id: str) -> None:
        """Revoke the Job's webhook trigger: its URL answers 401 from now on."""
        self._client._request("DELETE", self._item(id, "webhook"))

    # -- Runs --------------------------------------------------------------------------------

    def iter_runs(self, id: str, *, page_size: int | None = None) -> Iterator[JSON]:
        return self._client._paginate(self._item(id, "runs"), page_size=page_size)

    def list_runs(self, id: str, *, page_size: int | None = None) -> JSONList:
        """Every Run of a Job, newest first, all pages followed."""
        return list(self.iter_runs(id, page_size=page_size))

    def runs_page(self, id: str, *, limit: int | None = None, cursor: str | None = None) -> Page:
        """One page of a Job's Runs, newest first (``next_cursor`` for the next)."""
        return self._client._page(self._item(id, "runs"), limit=limit, cursor=cursor)

    def iter_all_runs(self, *, page_size: int | None = None) -> Iterator[JSON]:
        """Your Runs of every Job, a deleted Job's too (until retention removes them), newest first."""
        return self._client._paginate("/runs", page_size=page_size)

    def all_runs_page(self, *, limit: int | None = None, cursor: str | None = None) -> Page:
        """One page of your Runs of every Job, newest first."""
        return self._client._page("/runs", limit=limit, cursor=cursor)

    def get_run(self, id: str, run_id: str) -> JSON:
        return self._client._object("GET", self._item(id, "runs", segment(run_id)))

    def run(
        self,
        id: str,
        wait: bool = True,
        *,
        timeout: float | None = None,
        idempotency_key: str | None = None,
        on_poll: OnPoll | None = None,
        parameters: Mapping[str, Any] | None = None,
    ) -> JSON:
        """Start a Run (Run Now). With ``wait``, poll until it is succeeded, failed or cancelled.

        Polling starts only when the first answer is queued or running, and backs off from the
        client's ``poll_interval`` (0.5 s) doubling up to ``max_poll_interval`` (2 s). Waiting
        longer than ``timeout`` (default: the client's ``run_timeout``) raises
        :class:`~svc_client.WaitTimeoutError`; the Run goes on on the server. A failed Run is
        returned, not raised (see the module's docstring): look at ``status`` and ``error``.
        ``idempotency_key``: the same key within 24 h answers with the same Run.
        ``parameters``: values for the Job's run-time parameters (the rest take their defaults;
        numbers and booleans may be given as text); the Run records them in ``parameters``.
        """
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key else None
        body = {"parameters": dict(parameters)} if parameters else None
        run = _run_of(self._client._json("POST", self._item(id, "run"), headers=headers, json=body))
        return self._wait(id, run, timeout, on_poll) if wait else run

    def retry_run(
        self,
        id: str,
        run_id: str,
        wait: bool = False,
        *,
        timeout: float | None = None,
        on_poll: OnPoll | None = None,
        definition: Literal["current", "original"] | None = None,
    ) -> JSON:
        """Retry a failed Run: a new Run (``trigger`` retry, ``retry_of`` the failed one). By
        default (``definition="current"``) it runs the Job as it is now, with the failed Run's
        parameter values, so a fix made to the Job counts; ``definition="original"`` runs the
        failed Run's own snapshot again. The new Run records which in ``retry_definition``.
        With ``wait``, wait for it as :meth:`run` does. Retrying a Run that did not fail is
        refused (:class:`~svc_client.ValidationError`, 409)."""
        path = self._item(id, "runs", segment(run_id), "retry")
        body = {"definition": definition} if definition else None
        run = _run_of(self._client._json("POST", path, json=body))
        return self._wait(id, run, timeout, on_poll) if wait else run

    retry = retry_run  # the name of the first release

    def wait_for_run(
        self, id: str, run_id: str, *, timeout: float | None = None, on_poll: OnPoll | None = None
    ) -> JSON:
        """Wait for an existing Run to finish."""
        return self._wait(id, self.get_run(id, run_id), timeout, on_poll)

    def _wait(self, job_id: str, run: JSON, timeout: float | None, on_poll: OnPoll | None) -> JSON:
        client = self._client
        limit = client.run_timeout if timeout is None else float(timeout)
        started = client._clock()
        delay = client.poll_interval
        run_id: str | None = None  # read only when a poll is needed
        while True:
            waited = client._clock() - started
            if on_poll is not None:
                on_poll(run, waited)
            if run.get("status") in FINISHED_STATUSES:
                return run
            remaining = limit - waited
            if remaining <= 0:
                raise WaitTimeoutError(
                    f"run {run.get('id')} of job {job_id} still {run.get('status')!r} after {limit:g}s",
                    code="wait_timeout",
                    details={
                        "job_id": job_id,
                        "run_id": run.get("id"),
                        "last_status": run.get("status"),
                        "timeout_seconds": limit,
                    },
                )
            client._sleep(min(delay, remaining))
            delay = min(delay * 2, client.max_poll_interval)
            run_id = run_id or _run_id(run)
            run = self.get_run(job_id, run_id)


def _run_of(data: Any) -> JSON:
    # A bare Run is the documented answer; {"run": {...}} is tolerated.
    if isinstance(data, dict) and isinstance(data.get("run"), dict):
        data = data["run"]
    if not isinstance(data, dict):
        raise ServerError("expected a Run object", code="invalid_response")
    return data


def _run_id(run: JSON) -> str:
    run_id = run.get("id")
    if not isinstance(run_id, str) or not run_id:
        raise ServerError("the Run has no id", code="invalid_response")
    return run_id
