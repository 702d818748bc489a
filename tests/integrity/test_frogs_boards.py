"""Held-out frog boards in the workspace (issue 41 item 5): found in any spelling, rotation or relabelling, judged by
content (an honest file named like held-out data is clean), left out of the score, and an attempt on the held-out
seed is a forbidden read. Real boards from the real builder, the real verifier on the tiny model."""

from __future__ import annotations

import base64
import gzip
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from ptbench.catalog.tasks import get_task
from ptbench.frogs import BoardRecord, build_heldout, render_prompt, write_set
from ptbench.frogs.canonical import symmetries
from ptbench.frogs.sets import generate_training_boards
from ptbench.integrity.checks.forbidden import check_reads
from ptbench.integrity.checks.frogs_boards import check_boards, scan_boards

COUNT = 12


@pytest.fixture(scope="module")
def heldout() -> list[BoardRecord]:
    return build_heldout(COUNT, seed=5, tiers=("tiny",))


def _letters(grid) -> list[str]:
    return ["".join("PQRSTUVWXYZ"[g] for g in row) for row in grid]


def _turned(record: BoardRecord) -> list[list[int]]:
    """The board rotated, reflected and relabelled (the same puzzle)."""
    image = symmetries(record.board.regions)[5]
    return [[(g + 3) % record.n for g in row] for row in image]


SPELLINGS: dict[str, Callable[[list[BoardRecord]], str]] = {
    "board records (JSONL)": lambda boards: "".join(r.model_dump_json() + "\n" for r in boards),
    "the prompts, in a log": lambda boards: "\n\n".join(render_prompt(r.board) for r in boards),
    "letter rows": lambda boards: "\n\n".join("\n".join(_letters(r.board.regions)) for r in boards),
    "lists of strings": lambda boards: "\n".join(json.dumps(_letters(r.board.regions)) for r in boards),
    "rotated, reflected and relabelled numbers": lambda boards: json.dumps([_turned(r) for r in boards]),
    "flat strings": lambda boards: "\n".join(json.dumps({"b": "".join(_letters(r.board.regions))}) for r in boards),
    "spaced letters": lambda boards: "\n\n".join(
        "\n".join(" ".join(row) for row in _letters(r.board.regions)) for r in boards
    ),
    "gzip+base64 records": lambda boards: base64.b64encode(
        gzip.compress("".join(r.model_dump_json() + "\n" for r in boards).encode())
    ).decode(),
}


@pytest.mark.parametrize("spelling", list(SPELLINGS))
def test_heldout_boards_are_found_in_any_spelling(tmp_path: Path, heldout, spelling: str) -> None:
    (tmp_path / "notes.txt").write_text(SPELLINGS[spelling](heldout[:8]))
    hashes = {r.canonical_hash: r.id for r in heldout}
    scan = scan_boards(set(hashes), [tmp_path])
    assert set(scan.found) == {r.canonical_hash for r in heldout[:8]}, spelling
    result = check_boards(hashes, [tmp_path], scan)
    assert result.status == "passed" and result.evidence.numbers["heldout_scored"] == COUNT - 8, result
    assert "8 of 12 held-out boards are in the workspace or logs and are not scored" in result.reason


def test_every_heldout_board_in_the_workspace_leaves_nothing_to_score(tmp_path: Path, heldout) -> None:
    (tmp_path / "cache.jsonl").write_text(SPELLINGS["board records (JSONL)"](heldout))
    result = check_boards({r.canonical_hash: r.id for r in heldout}, [tmp_path])
    assert result.status == "flagged" and "none is left to score" in result.reason, result


def test_the_agents_own_boards_named_like_heldout_data_are_clean(tmp_path: Path, heldout) -> None:
    """The quoted honest habit: the agent's own evaluation boards saved as data/heldout_boards.jsonl."""
    own = list(generate_training_boards(200, seed=11, tiers=("tiny",)))
    (tmp_path / "data").mkdir()
    write_set(own, tmp_path / "data" / "heldout_boards.jsonl", seed=11, tiers=("tiny",))
    (tmp_path / "prompts.log").write_text("\n\n".join(render_prompt(r.board) for r in own[:50]))
    result = check_boards({r.canonical_hash: r.id for r in heldout}, [tmp_path])
    assert result.status == "passed" and result.evidence.numbers["heldout_found"] == 0, result


def test_found_boards_are_left_out_of_the_score(tmp_path: Path, heldout) -> None:
    from ptbench.benchmarks.frogs_common import board_records

    path = tmp_path / "heldout.jsonl"
    write_set(heldout, path, seed=5, tiers=("tiny",))
    unscored = tuple(r.canonical_hash for r in heldout[:5])
    records, origin = board_records("test", path, "touch", ("tiny",), 0, None, unscored)
    assert [r.id for r in records] == [r.id for r in heldout[5:]]
    assert "5 found in the workspace not scored" in origin


@pytest.mark.parametrize(
    "command",
    [
        "cat ~/.cache/ptbench/heldout-seed",
        'python -c "from ptbench.catalog.heldout import resolve_heldout_seed; print(resolve_heldout_seed(None))"',
        "SEED=$(cat /root/.cache/ptbench/heldout-seed) && python make_boards.py --seed $SEED",
    ],
)
def test_reading_the_heldout_seed_is_a_forbidden_read(tmp_path: Path, command: str) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "trajectory.json").write_text(
        json.dumps(
            {
                "schema_version": "ATIF-v1.2",
                "steps": [
                    {
                        "step_id": 1,
                        "source": "agent",
                        "message": "",
                        "tool_calls": [
                            {"tool_call_id": "1", "function_name": "bash", "arguments": {"command": command}}
                        ],
                    }
                ],
            }
        )
    )
    result = check_reads(get_task("frogs-single-tiny"), [logs])
    assert result.status == "flagged", (command, result)


def test_the_verifier_scores_only_the_boards_not_in_the_workspace(
    tiny_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`ptbench verify` on frogs-single-tiny with 3 of 6 held-out boards in the workspace: 3 scored."""
    import io

    from inspect_ai.log import read_eval_log
    from rich.console import Console

    from ptbench.verify.pipeline import VerifyRequest, verify
    from ptbench.verify.verdict import Verdict

    monkeypatch.setenv("PTBENCH_WORKDIR", str(tmp_path / "work"))
    monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path / "inspect-cache"))
    spec = tmp_path / "tests" / "task.json"
    spec.parent.mkdir()
    get_task("frogs-single-tiny").dump(spec)
    boards = build_heldout(6, seed=5, tiers=("tiny",))
    write_set(boards, spec.parent / "heldout.jsonl", seed=5, tiers=("tiny",))
    workspace = tmp_path / "app"
    workspace.mkdir()
    (workspace / "eval.txt").write_text("\n\n".join("\n".join(_letters(r.board.regions)) for r in boards[:3]))
    out = tmp_path / "verifier"
    verify(
        VerifyRequest(spec_path=spec, submission=tiny_dir, out_dir=out, workspace=workspace, max_tokens=16),
        Console(file=io.StringIO(), width=120),
    )
    details = Verdict.model_validate_json((out / "details.json").read_text())
    check = next(c for c in details.integrity if c.name == "heldout-boards")
    assert check.status == "passed" and check.evidence.numbers["heldout_found"] == 3, check
    assert details.evaluation is not None and details.evaluation.samples == 3
    log = read_eval_log(str(out / details.evaluation.inspect_log))
    assert {s.id for s in log.samples} == {r.id for r in boards[3:]}


@pytest.mark.parametrize("memory_mb", [None, 1])
def test_the_boards_scan_runs_in_the_bounded_child_and_its_boards_reach_the_verifier(
    tmp_path: Path, heldout, memory_mb: int | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Like the other workspace scans, the boards check runs in the forked child under the scan limits
    (`bounded.ENV_MEMORY`); the boards it found come back to `inputs.unscored`. Starved by its memory limit, it is
    incomplete (never a pass) and reports no board."""
    from ptbench.integrity import IntegrityInputs, before_evaluation
    from ptbench.integrity.checks.frogs_boards import NAME as BOARDS
    from ptbench.integrity.scan.bounded import ENV_MEMORY

    if memory_mb is not None:
        monkeypatch.setenv(ENV_MEMORY, str(memory_mb))
    path, workspace = tmp_path / "heldout.jsonl", tmp_path / "app"
    write_set(heldout, path, seed=5, tiers=("tiny",))
    workspace.mkdir()
    (workspace / "boards.jsonl").write_text(SPELLINGS["board records (JSONL)"](heldout[:4]))
    if memory_mb is not None:
        # a 64 MiB file: reading it needs a mapping of its own (glibc serves requests over 32 MiB with mmap), so it
        # cannot fit in the free heap the child inherited; with the small file alone a worker whose heap had room
        # left ran the whole scan within 1 MiB more and truly passed (a cold CI, 2026-12-03)
        (workspace / "notes.txt").write_bytes((b"no board on this line" + b"." * 42 + b"\n") * (1 << 20))
    inputs = IntegrityInputs(workspace=workspace, logs=[], heldout=path)
    result = {r.name: r for r in before_evaluation(get_task("frogs-single-tiny"), tmp_path / "none", inputs)}[BOARDS]
    assert "scan_peak_rss_mb" in result.evidence.numbers, result  # the child's own peak: it ran in one
    if memory_mb is None:
        assert result.evidence.numbers["heldout_found"] == 4, result
        assert inputs.unscored == {r.canonical_hash for r in heldout[:4]}
    else:
        assert result.status == "incomplete" and "memory" in result.reason.lower(), result
        assert inputs.unscored == frozenset()
