"""A trial's files copied into its report dir so the report's links never break: each file the store names is
re-checked as untrusted (inside the trial dir, reached without a symlink, a regular file, at most
`MAX_EVIDENCE_BYTES`) and written under a fixed name of ours; anything else is skipped with the reason."""

from __future__ import annotations

import os
from pathlib import Path

from ptbench.errors import first_line
from ptbench.files import UnsafeFile, file_inside, read_untrusted, write_atomic
from ptbench.report.manifest import EvidenceFile, EvidenceRole, SkippedFile
from ptbench.store.models import TrialRow

MAX_EVIDENCE_BYTES = 64 * 1024 * 1024

# role -> (the TrialRow field naming the file, the copy's name; inspect logs keep .json or .eval)
_SOURCES: dict[EvidenceRole, tuple[str, str]] = {
    "verdict": ("details_path", "details.json"),
    "inspect log": ("inspect_log_path", "inspect-log"),
    "trajectory": ("trajectory_path", "trajectory.json"),
    "agent log": ("agent_log_path", "agent-log.txt"),
    "trial log": ("log_path", "trial-log.txt"),
    "verifier log": ("verifier_log_path", "verifier-log.txt"),
    "reference report": ("reference_report_path", "reference-report.json"),
}


def copy_evidence(row: TrialRow, report_dir: Path, dest: str) -> tuple[list[EvidenceFile], list[SkippedFile]]:
    """Copy the trial's recorded files into `report_dir/dest/`; returns what was copied and what was skipped."""
    copied, skipped = [], []
    for role, (field, name) in _SOURCES.items():
        recorded: str | None = getattr(row, field)
        if not recorded:
            continue
        if name == "inspect-log":
            name += ".json" if recorded.endswith(".json") else ".eval"
        try:
            path = file_inside(row.trial_dir, os.path.relpath(recorded, row.trial_dir))
            data = read_untrusted(path, MAX_EVIDENCE_BYTES)
        except (UnsafeFile, OSError) as exc:
            skipped.append(SkippedFile(role=role, reason=first_line(exc)))
            continue
        (report_dir / dest).mkdir(parents=True, exist_ok=True)
        write_atomic(report_dir / dest / name, data)
        copied.append(EvidenceFile(role=role, path=f"{dest}/{name}", bytes=len(data)))
    return copied, skipped
