"""The reference recipe practises the habits it measures: it reads its budget from the start stamp, saves a
submission as soon as it has one, replaces it only with a better one, and ends before its budget with the best
model it had, also when the budget is too short for the whole recipe and the machine is loaded."""

from __future__ import annotations

import io
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch
from rich.console import Console
from safetensors.torch import load_file
from tests.reference.conftest import cpu_hogs

from ptbench.catalog.tasks import get_task
from ptbench.errors import UserError
from ptbench.models.intake import intake
from ptbench.models.registry import TINY
from ptbench.reference.config import TINY_FROGS, EvalSettings, GrpoSettings, SftSettings, Stage
from ptbench.reference.deadline import MIN_MARGIN, Deadline, margin_for
from ptbench.reference.dev_scores import DevEval
from ptbench.reference.keeper import BestSubmission, better
from ptbench.reference.run import run_reference
from ptbench.reference.training import load_policy, save_final_model

# a recipe far too long for the budget the test gives it: SFT never reaches its gate nor its max_steps (its cosine
# schedule is fitted to the deadline), the curriculum never ends. 400 steps fitted in the 40 s on a 2-core Intel Xeon
# (2026-12-03), and GRPO started; 2000 is five times that (the SFT stream of max_steps puzzles is made before
# training, about 1.6 ms a puzzle there, so max_steps cannot be unbounded)
_LONG = TINY_FROGS.model_copy(
    update={
        "threads": 0,
        "sft_boards_per_size": 8,  # threads chosen from the load
        "sft": SftSettings(
            learning_rate=3e-3,
            batch_size=1,
            max_steps=2000,
            max_length=512,
            eval_every=10,
            parse_gate=1.0,
            signal_gate=1.0,
            schedule="cosine",
        ),
        "grpo": GrpoSettings(learning_rate=1e-4, prompts_per_step=1, num_generations=2, max_completion_length=8),
        "curriculum": (Stage(n=4, steps=1000), Stage(n=5, steps=1000)),
        "eval": EvalSettings(boards_per_size=2, show_samples=0, max_new_tokens=8),
    }
)


def _stamp(path: Path, started_at: float, budget: int) -> Path:
    path.write_text(json.dumps({"schema_version": 1, "started_at": int(started_at), "budget_seconds": budget}))
    return path


def _eval(phase: str, step: int, pass_rate: float, parse_rate: float) -> DevEval:
    return DevEval(phase=phase, step=step, sizes=(), parse_rate=parse_rate, pass_rate=pass_rate)


@pytest.fixture
def cpu_load() -> Iterator[None]:
    """Two CPU-bound processes beside the test (the machine's cores are busy, as a shared one's are); under
    pytest-xdist one, at niceness 19: there the other workers' tests are the load, and a hog of their priority only
    took their time (40 CPU s for the test's 40 s); niced, it takes what they leave, so the cores stay busy whatever
    they are doing."""
    xdist = bool(os.environ.get("PYTEST_XDIST_WORKER_COUNT"))
    with cpu_hogs(1 if xdist else 2, nice=19 if xdist else 0):
        yield


def test_the_deadline_comes_from_the_start_stamp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PTBENCH_TIMER_STAMP", str(tmp_path / "missing.json"))
    assert not Deadline.from_stamp().bounded  # a run by hand: no budget
    now = time.time()
    monkeypatch.setenv("PTBENCH_TIMER_STAMP", str(_stamp(tmp_path / "stamp.json", now - 100, 900)))
    deadline = Deadline.from_stamp()
    assert deadline.budget_seconds == 900 and margin_for(900) == 45
    assert deadline.end == int(now - 100) + 900 - 45  # the budget's end less the margin
    assert margin_for(60) == MIN_MARGIN and margin_for(10 * 3600) == 600
    deadline.measured("evaluate", 30)
    deadline.measured("save", 5)
    deadline.measured("evaluate", 10)  # the reserve keeps the slowest of each, with half again for a growing load
    assert deadline.reserve == 35 * 1.5
    spare = deadline.spare()
    assert deadline.steps_that_fit(10_000, 1.0) == int(spare // 1.0) and deadline.steps_that_fit(3, 1.0) == 3
    deadline.end = time.time() + 45  # less than the reserve left: nothing fits
    assert deadline.out_of_time() and deadline.steps_that_fit(5, None) == 0
    (tmp_path / "stamp.json").write_text("{not json")
    with pytest.raises(UserError, match="unreadable start stamp"):
        Deadline.from_stamp()


def test_the_submission_is_saved_at_once_and_replaced_only_by_a_better_one(tmp_path: Path) -> None:
    policy = load_policy(TINY, TINY_FROGS.model_copy(update={"threads": 1}))
    out = tmp_path / "final_model"
    saves: list = []
    keeper = BestSubmission(
        lambda _: save_final_model(policy, out, replace=True),  # type: ignore[arg-type,return-value]  # its Path is not used
        Deadline(None),
        Console(file=io.StringIO()),
        saves.append,  # type: ignore[arg-type]  # a None or wider value here fails the test, as it should
    )
    weight = next(p for p in policy.model.parameters())

    def nudge() -> None:
        with torch.no_grad():
            weight.add_(1.0)

    def saved_weight() -> torch.Tensor:
        tensors = load_file(str(out / "model.safetensors"))
        return next(t for t in tensors.values() if t.shape == weight.shape)

    assert keeper.offer(_eval("base", 0, pass_rate=0.1, parse_rate=0.5))  # the first evaluated model: saved
    assert intake(out, TINY).ok
    first = saved_weight().clone()
    nudge()
    assert not keeper.offer(_eval("SFT", 4, pass_rate=0.05, parse_rate=1.0))  # worse: the submission stays
    assert saved_weight().equal(first)
    assert not keeper.offer(_eval("SFT", 8, pass_rate=0.1, parse_rate=0.5))  # only as good: stays
    nudge()
    assert keeper.offer(_eval("SFT", 12, pass_rate=0.1, parse_rate=0.75))  # same pass rate, parses more
    second = saved_weight().clone()
    assert not second.equal(first)
    assert [(s.phase, s.step) for s in saves] == [("base", 0), ("SFT", 12)]

    def broken_save(directory, **kwargs) -> None:
        (Path(directory) / "model.safetensors").write_bytes(b"half")
        raise OSError("disk full")

    policy.model.save_pretrained = broken_save  # type: ignore[assignment, method-assign]  # a stand-in of the same shape
    with pytest.raises(OSError, match="disk full"):
        keeper.offer(_eval("GRPO N=4", 20, pass_rate=0.5, parse_rate=1.0))
    assert saved_weight().equal(second) and intake(out, TINY).ok  # never a half-written submission
    assert keeper.best is not None and keeper.best.step == 12


def test_better_is_pass_rate_then_parse_rate() -> None:
    assert better(_eval("a", 0, 0.2, 0.0), _eval("b", 0, 0.1, 1.0))
    assert not better(_eval("a", 0, 0.1, 0.9), _eval("b", 0, 0.1, 0.9))
    assert better(_eval("a", 0, 0.0, 0.0), None)


def test_a_budget_too_short_under_load_ends_in_time_with_the_best_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cpu_load: None
) -> None:
    budget = 60  # the deadline: 40 s from now (the margin is 20 s)
    monkeypatch.setenv("PTBENCH_TIMER_STAMP", str(_stamp(tmp_path / "stamp.json", time.time(), budget)))
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)  # the load alone chooses the threads (tests cap them at 1)
    out = tmp_path / "final_model"
    log = io.StringIO()
    report = run_reference(get_task("frogs-single-tiny"), out, recipe=_LONG, console=Console(file=log, width=200))
    assert report.budget_seconds == budget
    # it stopped before its budget ended (the deadline is the end less a 20 s margin: used, if at all, by a save)
    assert report.deadline_left_seconds is not None and report.deadline_left_seconds > -MIN_MARGIN
    assert intake(out, TINY).ok  # a valid submission, never nothing
    assert report.saves and report.saves[0].phase == "base"  # saved as soon as there was one
    best = max(report.evaluations, key=lambda e: (e.pass_rate, e.parse_rate))
    first_best = next(e for e in report.evaluations if (e.pass_rate, e.parse_rate) == (best.pass_rate, best.parse_rate))
    assert (report.saves[-1].phase, report.saves[-1].step) == (first_best.phase, first_best.step)
    # the step the deadline stopped was evaluated: SFT's, or (where evaluations are quick enough that the time SFT's
    # fitted schedule left holds a few GRPO steps: a 2-core Intel Xeon, 2026-12-03) the shrunk first stage's
    last = report.evaluations[-1].phase
    assert last in ("SFT", "GRPO N=4"), [e.phase for e in report.evaluations]
    assert report.sft_stopped_at_gate is False
    assert any(note.startswith("SFT stopped at step") and "lack of time" in note for note in report.notes)
    not_fitted = "N=4, N=5" if last == "SFT" else "N=5"
    assert any("skipped" in note and not_fitted in note for note in report.notes), report.notes  # GRPO did not fit
    assert "submission[/bold] saved" not in log.getvalue() and "submission saved" in log.getvalue()
    assert any(note.startswith("torch threads: 1 (other processes kept") for note in report.notes)  # the load seen
    assert "the cosine schedule ended at step" in log.getvalue()  # fitted to the deadline, so it settled
