"""The live status line of a waited Run: rich on a terminal, a plain line without rich, nothing off a terminal."""

from __future__ import annotations

import builtins
import io
from typing import Any

import pytest
from rich.console import Console

from svc_client.cli import live


def run(status: str, *steps: tuple[str, str]) -> dict[str, Any]:
    return {"id": "run_1", "status": status, "steps": [{"name": n, "status": s} for n, s in steps]}


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_status_text_marks_each_step() -> None:
    text = live.status_text(run("running", ("extract", "succeeded"), ("transform", "running"),
                                ("python", "skipped"), ("deliver", "pending"), ("convert", "failed")), 12.4)
    assert text == "Run run_1 running · extract ✓ transform … python – deliver · convert ✗ · 12 s"
    assert live.status_text({"id": "run_1", "status": "queued"}, 0) == "Run run_1 queued · 0 s"


def test_status_text_says_how_far_a_running_step_is() -> None:
    waited = run("running", ("extract", "succeeded"), ("convert", "running"))
    waited["steps"][1]["progress"] = {"bytes_written": 412 * 1024 * 1024, "percent": 60}
    assert live.status_text(waited, 30) == "Run run_1 running · extract ✓ convert … · convert 412 MB written 60% · 30 s"
    waited["steps"][1]["progress"] = None
    assert live.status_text(waited, 30) == "Run run_1 running · extract ✓ convert … · 30 s"


def test_rich_line_is_redrawn_at_each_poll_and_ends_with_the_outcome() -> None:
    out = io.StringIO()
    clock = Clock()
    with live.rich_status(Console(file=out, force_terminal=True, width=120), clock) as update:
        update(run("queued"), 0)
        clock.now += 3
        update(run("running", ("extract", "running")), 3)
        clock.now += 4
        update(run("failed", ("extract", "failed")), 7)
    drawn = out.getvalue()
    assert drawn.index("Run run_1 queued · 0 s") < drawn.index("Run run_1 running · extract … · 3 s")
    assert drawn.rstrip().endswith("✗ Run run_1 failed after 7 s")
    assert "\x1b[?25h" in drawn  # the cursor is given back


def test_rich_line_takes_names_literally() -> None:
    out = io.StringIO()
    with live.rich_status(Console(file=out, force_terminal=True, width=120), Clock()) as update:
        update({"id": "[bold]x[/bold]", "status": "succeeded"}, 0)
    assert "Run [bold]x[/bold] succeeded" in out.getvalue()


def test_plain_line_rewrites_itself_then_ends_the_line() -> None:
    out = io.StringIO()
    clock = Clock()
    with live.plain_status(out, clock) as update:
        update(run("queued"), 0)
        clock.now += 2
        update(run("succeeded"), 2)
    assert out.getvalue() == ("\rRun run_1 queued · 0 s\x1b[K\rRun run_1 succeeded · 2 s\x1b[K"
                              "\r✓ Run run_1 succeeded after 2 s\x1b[K\n")


def test_plain_line_keeps_the_last_status_above_an_error() -> None:
    out = io.StringIO()
    with pytest.raises(TimeoutError), live.plain_status(out, Clock()) as update:
        update(run("running"), 0)
        raise TimeoutError
    assert out.getvalue().endswith("Run run_1 running · 0 s\x1b[K\n")


def test_nothing_is_drawn_off_a_terminal_or_without_waiting() -> None:
    with live.run_status(True, terminal=False) as update:
        assert update is None
    with live.run_status(False, terminal=True) as update:
        assert update is None


def test_without_rich_the_plain_line_is_used(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    real_import = builtins.__import__

    def no_rich(name: str, *args: Any, **kwargs: Any) -> Any:
        if name.startswith("rich"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_rich)
    with live.run_status(True, terminal=True) as update:
        assert update is not None
        update(run("succeeded"), 0)
    assert "\rRun run_1 succeeded · 0 s" in capsys.readouterr().err
