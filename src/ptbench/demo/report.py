"""Assemble the demo's summary from the files the stages left, and decide whether the run failed.

Read: the base model's evaluation (details.json + inspect log under the demo dir), the trial's
verifier output (details.json + inspect log under the trial's verifier/ dir, written in the
verifier's sandbox) and the trial's result.json (through the store's ingest). Verifier files are
read as untrusted input: no symlinks, a size cap, validated models, the log inside its dir.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ptbench.catalog.spec import TaskSpec
from ptbench.demo.config import DemoConfig, DemoPaths
from ptbench.demo.failures import DemoFailed
from ptbench.demo.phases import DemoPhaseTime, trial_phases
from ptbench.demo.summary import DemoSummary, Locations, ModelScores
from ptbench.errors import first_line
from ptbench.files import UnsafeFile, file_inside, read_untrusted
from ptbench.scoring.boards import read_boards
from ptbench.scoring.frogs import compare, score_boards
from ptbench.scoring.stats import BoardOutcome
from ptbench.store.models import JobRecord, TrialRecord

MAX_DETAILS_BYTES = 4 * 1024 * 1024
JOB_STEP = "Harbor job (reference agent, then verifier)"
"""The demo step that the trial's Harbor phases break down."""


class UnusableOutput(Exception):
    """A verifier output that is missing, not a plain file, too large or not what the verifier writes."""


def build_summary(config: DemoConfig, spec: TaskSpec, paths: DemoPaths, task_dir: Path, record: JobRecord,
                  demo_phases: list[DemoPhaseTime]) -> DemoSummary:
    """The summary of a finished run (the trial may have failed: then there is no post-trained score)."""
    k = spec.samples_per_item
    try:
        base_scores, base_boards = _scores("base model", paths.baseline, k, config.resamples)
    except UnusableOutput as exc:
        raise DemoFailed(f"the base model's evaluation is unusable: {exc}") from exc
    first = record.trials[0] if record.trials else None
    trial = first.trial if first else None
    trial_dir = Path(trial.trial_dir) if trial else None
    trained = comparison = None
    problem = None
    if trial_dir is not None:
        try:
            trained, boards = _scores("post-trained (reference recipe)", trial_dir / "verifier", k, config.resamples)
            comparison = compare(boards, base_boards, k, config.resamples)
        except UnusableOutput as exc:
            problem = f"verifier output unusable: {exc}"
    return DemoSummary(
        run=paths.run, task=spec.name, spec=spec.model_dump(mode="json"), max_tokens=config.max_tokens,
        trial=trial.trial_name if trial else None, trial_status=trial.status if trial else "missing",
        trial_reason=(trial.reason if trial else "the job has no trial") or problem,
        base=base_scores, trained=trained, comparison=comparison,
        phases=_phases(demo_phases, first),
        locations=Locations(
            work_dir=str(paths.work_dir), task_dir=str(task_dir), job_dir=str(paths.job),
            trial_dir=str(trial_dir) if trial_dir else None,
            agent_log=_existing(trial_dir / "agent" / "oracle.txt") if trial_dir else None,
            verifier_dir=str(trial_dir / "verifier") if trial_dir else None,
            inspect_dirs=[str(Path(s.inspect_log).parent) for s in (base_scores, trained) if s is not None],
            store=str(paths.store), summary=str(paths.summary),
        ),
    )


def check_outcome(summary: DemoSummary) -> None:
    """Raise DemoFailed when the loop did not close: no post-trained score, or the base model scored instead."""
    where = summary.locations.trial_dir or summary.locations.job_dir
    if summary.trained is None:
        reason = first_line(summary.trial_reason or "no verifier output") or "no reason given"
        raise DemoFailed(f"the reference agent's trial {summary.trial_status}: {reason} (see {where})")
    if summary.trained.scored == "base":
        reason = first_line(summary.trained.fallback_reasons[0] if summary.trained.fallback_reasons else "no reason")
        raise DemoFailed(f"the verifier scored the base model instead of the submission: {reason} (see {where})")


def _scores(label: str, out_dir: Path, k: int, resamples: int) -> tuple[ModelScores, list[BoardOutcome]]:
    """One model's scores from a verifier output dir: details.json, reward and its inspect log."""
    from ptbench.verify.verdict import Verdict

    details = out_dir / "details.json"
    try:
        verdict = Verdict.model_validate_json(_read_capped(details))
    except ValueError as exc:
        raise UnusableOutput(f"{details} is not a verifier verdict: {first_line(exc)}") from exc
    if verdict.evaluation is None:
        reason = next((r for stage in verdict.stages for r in stage.reasons if stage.status == "failed"), None)
        raise UnusableOutput(f"{details} records no evaluation" + (f": {reason}" if reason else ""))
    log = _inside(out_dir, verdict.evaluation.inspect_log)
    boards = read_boards(log)
    if not boards:
        raise UnusableOutput(f"{log} scored no board")
    scores = ModelScores(label=label, scored=verdict.scored, fallback_reasons=verdict.fallback_reasons,
                         reward=verdict.reward, details=str(details), inspect_log=str(log),
                         **score_boards(boards, k, resamples).model_dump())
    return scores, boards


def _phases(demo_phases: list[DemoPhaseTime], trial: TrialRecord | None) -> list[DemoPhaseTime]:
    """The demo's steps, with the trial's Harbor phases right after the job step they break down."""
    harbor = trial_phases(trial) if trial else []
    phases: list[DemoPhaseTime] = []
    for phase in demo_phases:
        phases.append(phase)
        if phase.name == JOB_STEP:
            phases += harbor
    return phases


def _inside(out_dir: Path, logged: str) -> Path:
    """The inspect log a verdict names: a plain file inside the verifier's output dir, reached without symlinks."""
    try:
        return file_inside(out_dir, logged)
    except UnsafeFile as exc:
        raise UnusableOutput(f"inspect log {exc}") from None


def _read_capped(path: Path) -> bytes:
    try:
        return read_untrusted(path, MAX_DETAILS_BYTES)
    except (OSError, UnsafeFile) as exc:
        raise UnusableOutput(f"{path}: {exc.strerror}" if isinstance(exc, OSError) else str(exc)) from exc


def _plain_file(path: Path) -> bool:
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def _existing(path: Path) -> str | None:
    return str(path) if _plain_file(path) else None
