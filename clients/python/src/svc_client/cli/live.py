"""The live status line of a Run being waited for (``svc jobs run --wait``, ``svc runs wait``).

On a terminal it is drawn with rich (a spinner, the Run's status, each step's mark and the time
waited, ticking between polls); without rich, a plain line rewritten in place. Off a terminal
nothing is drawn, so cron jobs and pipes stay quiet: the Run itself is printed at the end.
"""

from __future__ import annotations

import sys
import time
from contextlib import contextmanager
from typing import Any, Callable, Iterator, Mapping, TextIO

from .views import STEP_MARKS, progress_text

OnPoll = Callable[[dict[str, Any], float], None]


def status_text(run: Mapping[str, Any], waited: float) -> str:
    """``Run run_1 running · extract ✓ transform … deliver · · 12 s``."""
    parts = [f"Run {run.get('id')} {run.get('status')}"]
    steps = [
        f"{step.get('name')} {STEP_MARKS.get(str(step.get('status')), '?')}"
        for step in run.get("steps") or []
        if isinstance(step, Mapping)
    ]
    if steps:
        parts.append(" ".join(steps))
    progress = next((progress_text(step) for step in run.get("steps") or []
                     if isinstance(step, Mapping) and step.get("status") == "running" and progress_text(step)), "")
    if progress:
        parts.append(progress)
    parts.append(f"{waited:.0f} s")
    return " · ".join(parts)


def final_text(run: Mapping[str, Any], waited: float) -> str:
    mark = "✓" if run.get("status") == "succeeded" else "✗"
    return f"{mark} Run {run.get('id')} {run.get('status')} after {waited:.0f} s"


class _Line:
    """What the spinner shows: the last Run seen, with the time waited counted at each redraw."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self._started = clock()
        self.run: Mapping[str, Any] = {}

    def waited(self) -> float:
        return self._clock() - self._started

    def __rich__(self) -> Any:
        from rich.text import Text  # plain text: a name in brackets is not markup

        return Text(status_text(self.run, self.waited()) if self.run else "Starting the Run…")


@contextmanager
def rich_status(console: Any, clock: Callable[[], float] = time.monotonic) -> Iterator[OnPoll]:
    from rich.live import Live
    from rich.spinner import Spinner
    from rich.text import Text

    line = _Line(clock)
    spinner = Spinner("dots", text=line, style="status.spinner")  # line is drawn through __rich__
    with Live(spinner, console=console, refresh_per_second=8, transient=True) as live:

        def update(run: dict[str, Any], _waited: float) -> None:
            line.run = run
            live.refresh()  # drawn now, not at the next tick: each poll is seen

        yield update
    if line.run:
        console.print(Text(final_text(line.run, line.waited())))


@contextmanager
def plain_status(out: TextIO, clock: Callable[[], float] = time.monotonic) -> Iterator[OnPoll]:
    line = _Line(clock)

    def update(run: dict[str, Any], _waited: float) -> None:
        line.run = run
        out.write("\r" + status_text(run, line.waited()) + "\x1b[K")
        out.flush()

    try:
        yield update
    except BaseException:
        if line.run:
            out.write("\n")  # keep the last status visible above the error
        raise
    if line.run:
        out.write("\r" + final_text(line.run, line.waited()) + "\x1b[K\n")
        out.flush()


@contextmanager
def run_status(enabled: bool, terminal: bool) -> Iterator[OnPoll | None]:
    """The ``on_poll`` callback that draws the line, or None when there is nothing to draw."""
    if not (enabled and terminal):
        yield None
        return
    try:
        from rich.console import Console
    except ImportError:  # rich is a dependency, but a vendored install may lack it
        with plain_status(sys.stderr) as update:
            yield update
        return
    with rich_status(Console(stderr=True, force_terminal=True)) as update:
        yield update
