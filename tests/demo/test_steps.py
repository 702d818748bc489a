"""The demo's steps: numbered headers, timings kept even on failure, unexpected errors as one line."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console

from ptbench.demo.failures import DemoFailed
from ptbench.demo.phases import StepClock
from ptbench.errors import UserError


def _clock(tmp_path: Path) -> tuple[StepClock, io.StringIO]:
    out = io.StringIO()
    return StepClock(Console(file=out, width=100), 3, tmp_path / "run" / "error.txt"), out


def test_steps_are_numbered_and_timed(tmp_path: Path) -> None:
    clock, out = _clock(tmp_path)
    with clock.step("first", setup=True):
        pass
    with clock.step("second", spinner=True):
        pass
    assert [(p.name, p.setup, p.source) for p in clock.phases] == [("first", True, "demo"), ("second", False, "demo")]
    assert "1/3 first" in out.getvalue() and "2/3 second" in out.getvalue()


def test_an_unexpected_error_becomes_one_line_with_its_traceback_in_a_file(tmp_path: Path) -> None:
    clock, _ = _clock(tmp_path)

    def broken() -> None:
        raise RuntimeError("disk on fire\nsecond line")

    with pytest.raises(DemoFailed) as caught:
        with clock.step("export the task"):
            broken()
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith("step 'export the task' failed: RuntimeError: disk on fire (traceback in ")
    log = tmp_path / "run" / "error.txt"
    assert "in broken" in log.read_text() and "second line" in log.read_text()
    assert clock.phases[0].name == "export the task"  # the failed step's time is kept


@pytest.mark.parametrize("error", [UserError("bad input"), DemoFailed("a stage failed")])
def test_one_line_errors_pass_through_unchanged(tmp_path: Path, error: Exception) -> None:
    clock, _ = _clock(tmp_path)
    with pytest.raises(type(error)) as caught:
        with clock.step("preflight"):
            raise error
    assert caught.value is error
    assert not (tmp_path / "run" / "error.txt").exists()
