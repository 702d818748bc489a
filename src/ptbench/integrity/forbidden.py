"""Forbidden reads: the agent's trace and logs reaching for held-out data, the verifier's files, the test split,
the family's instruct model, or APIs the task's rules name.

Patterns are matched on the logs' bytes (every file the walk yields, decoded copies included); each hit names the
file, the pattern and the matching text.
"""

from __future__ import annotations

import re
from pathlib import Path

from ptbench.catalog.spec import TaskSpec
from ptbench.integrity.result import MAX_LISTED, CheckResult, Evidence, could_not_run, flagged, passed
from ptbench.integrity.workspace import Walk, texts
from ptbench.models.registry import get_base_model

NAME = "forbidden-reads"
_ALWAYS = {
    "verifier files": rb"(?<![\w.-])/(?:tests|logs/verifier)(?:/[\w./-]*)?",
    "held-out data": rb"heldout\.jsonl|/tests/data\b",
    "test split file": rb"[\w/-]*(?:^|[/_-])test\.(?:jsonl|json|parquet|csv|arrow)\b",
    "hub test split": rb"(?:split\s*=\s*[\"']test[\"']|datasets/[\w.-]+/[\w.-]+/[^\s\"']*test[-_.][\w.-]*)",
}
DISALLOWED_APIS = (rb"api\.openai\.com", rb"api\.anthropic\.com", rb"generativelanguage\.googleapis\.com")


def patterns(spec: TaskSpec) -> dict[str, re.Pattern[bytes]]:
    """What counts as a forbidden read for this task."""
    found = {name: re.compile(p, re.IGNORECASE) for name, p in _ALWAYS.items()}
    instruct = get_base_model(spec.base_model).instruct_hub_id
    if instruct:
        found["instruct model"] = re.compile(re.escape(instruct.encode()) + rb"(?![\w-])", re.IGNORECASE)
    if spec.network == "public":
        found["disallowed API"] = re.compile(b"|".join(DISALLOWED_APIS), re.IGNORECASE)
    return found


def check_reads(spec: TaskSpec, logs: list[Path]) -> CheckResult:
    """Every forbidden pattern in the agent's trace and logs."""
    present = [root for root in logs if root.exists() or root.is_symlink()]
    if not present:
        return could_not_run(NAME, "no agent logs or trajectory were given to the verifier")
    walk, hits = Walk(), []
    for text in texts(present, walk):
        for name, pattern in patterns(spec).items():
            for match in pattern.finditer(text.data):
                shown = match.group().decode("utf-8", "replace")[:120]
                hits.append(f"{name} in {text.where}: {shown!r}")
    evidence = Evidence(files=walk.skipped[:MAX_LISTED], items=hits[:MAX_LISTED],
                        numbers={"hits": len(hits), "files": walk.files})
    if hits:
        return flagged(NAME, f"{len(hits)} forbidden read(s) in the trace: {hits[0]}", evidence)
    return passed(NAME, f"no forbidden read in {walk.files} log files", evidence)
