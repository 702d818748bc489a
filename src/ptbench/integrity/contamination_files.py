"""Contamination in what the agent left and did: test items' n-grams in its workspace and logs.

An item counts as found in a file when at least ITEM_COVERAGE of its n-grams are there; the trial is flagged when
more than ALLOWED_ITEMS items are found (PostTrainBench tolerates up to 3 accidental ones).
"""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path

from ptbench.integrity.ngrams import ItemIndex
from ptbench.integrity.result import MAX_LISTED, CheckResult, Evidence, could_not_run, flagged, passed
from ptbench.integrity.workspace import Walk, texts

NAME = "contamination-files"
ITEM_COVERAGE = 0.5
ALLOWED_ITEMS = 3


def check_files(index: ItemIndex, roots: list[Path], exclude: list[Path] | None = None) -> CheckResult:
    """Scan every file under roots for the indexed test items (not under `exclude`: the submission)."""
    present = [root for root in roots if root.exists() or root.is_symlink()]
    if not present:
        return could_not_run(NAME, "no workspace or logs were given to the verifier")
    start, walk = time.perf_counter(), Walk.excluding(exclude)
    found: dict[int, tuple[str, float]] = {}
    files: Counter[str] = Counter()
    for text in texts(present, walk):
        for item, share in index.coverage(text.data).items():
            if share >= ITEM_COVERAGE:
                files[text.where] += 1
                if share > found.get(item, ("", 0.0))[1]:
                    found[item] = (text.where, share)
    seconds = time.perf_counter() - start
    listed = sorted(found.items(), key=lambda kv: -kv[1][1])[:MAX_LISTED]
    evidence = Evidence(
        files=[f"{where}: {count} items" for where, count in files.most_common(MAX_LISTED)] + walk.skipped[:MAX_LISTED],
        items=[f"{index.ids[i]} in {where}: {share:.0%} of its {index.n}-grams" for i, (where, share) in listed],
        numbers={"items_found": len(found), "files": walk.files, "bytes": walk.bytes, "skipped": len(walk.skipped),
                 "mb_per_s": round(walk.bytes / 1e6 / max(seconds, 1e-9), 1)},
    )
    if len(found) > ALLOWED_ITEMS:
        return flagged(NAME, f"{len(found)} test items found in the workspace or logs (more than {ALLOWED_ITEMS})",
                       evidence)
    return passed(NAME, f"{len(found)} test items found (at most {ALLOWED_ITEMS} tolerated) in {walk.files} files",
                  evidence)
