"""The integrity stage of the verifier: the checks of `ptbench.integrity` as one StageRecord.

Any flagged check fails the stage (the base model is scored instead, as the rules say); a check that could not
run, or ran incomplete (it could not see everything), leaves the stage `skipped` (reported as not checked, never as a
pass) unless another check flagged.
"""

from __future__ import annotations

from ptbench.integrity.result import CheckResult
from ptbench.verify.verdict import StageRecord


def integrity_stage(results: list[CheckResult]) -> StageRecord:
    """One stage record for the checks' results."""
    flagged = [f"{r.name}: {r.reason}" for r in results if r.status == "flagged"]
    missing = [f"{r.name} {r.status.replace('-', ' ')}: {r.reason}" for r in results
               if r.status in ("could-not-run", "incomplete")]
    if flagged:
        return StageRecord(name="integrity", status="failed", reasons=flagged + missing)
    if missing:
        return StageRecord(name="integrity", status="skipped", reasons=missing)
    return StageRecord(name="integrity", status="passed", reasons=[f"{r.name}: {r.reason}" for r in results])
