"""The submission in parts for a cloud that caps one transfer (Modal: 5 GiB a file, each artifact dir one
archive): the exported task declares the part dirs instead of `final_model/`, the collect hook cuts every recorded
file at the part size, each part travels alone, and the verifier joins them before the hand-off check. A part the
machine lost is a verifier error naming the files it held; a whole set of parts rebuilds the model byte for byte."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from harbor.models.task.config import TaskConfig

from ptbench.catalog.submission import FINAL_MODEL, MAX_PARTS, PARTS_DIR, part_dirs
from ptbench.catalog.tasks import get_task
from ptbench.errors import VerifierError
from ptbench.run.export import export_task
from ptbench.verify import parts
from ptbench.verify.handoff import HandoffRecord, arrival_problems, write_record
from ptbench.verify.pipeline import verify

from .conftest import quiet
from .test_handoff import SHARDS, request_for, sharded_copy


def carry(part_root: Path, verifier_root: Path, lose: set[str] = frozenset()) -> None:  # type: ignore[assignment]
    """Harbor's artifact path, per part: each part dir copied on its own (unless lost on the way)."""
    for part in sorted(part_root.iterdir()):
        if part.name not in lose:
            shutil.copytree(part, verifier_root / part.name)


@pytest.fixture
def cut(tiny_dir: Path, tmp_path: Path, monkeypatch) -> tuple[Path, Path, Path]:
    """A sharded model cut into parts of a fifth of its size (so a shard spans several), with its record."""
    model = sharded_copy(tiny_dir, tmp_path / "agent" / "final_model")
    monkeypatch.setattr(parts, "PART_BYTES", sum(p.stat().st_size for p in model.iterdir()) // 5 + 1)
    record = tmp_path / "agent-artifacts" / "ptbench-handoff.json"
    recorded = write_record(model, record)
    part_root = tmp_path / "agent-parts"
    parts.split(model, recorded, part_root)
    return model, record, part_root


def test_whole_parts_join_into_the_model_byte_for_byte(cut, tmp_path):
    model, record, part_root = cut
    assert len(list(part_root.iterdir())) == 5
    assert all(sum(p.stat().st_size for p in part.iterdir()) <= parts.PART_BYTES for part in part_root.iterdir())
    carry(part_root, tmp_path / "verifier-parts")
    rebuilt = tmp_path / "verifier" / "final_model"
    parts.join(tmp_path / "verifier-parts", record, rebuilt)
    assert arrival_problems(rebuilt, record) == []
    for entry in HandoffRecord.model_validate_json(record.read_text()).files:
        assert (rebuilt / entry.path).read_bytes() == (model / entry.path).read_bytes()


def test_a_model_past_the_parts_is_a_verifier_error_naming_what_did_not_fit(tiny_dir, tmp_path, monkeypatch):
    model = sharded_copy(tiny_dir, tmp_path / "final_model")
    monkeypatch.setattr(parts, "PART_BYTES", 1024)  # 32 parts of 1 KiB: the shards cannot fit
    record = tmp_path / "record.json"
    parts.split(model, write_record(model, record), tmp_path / "parts")
    assert len(list((tmp_path / "parts").iterdir())) == MAX_PARTS
    parts.join(tmp_path / "parts", record, tmp_path / "v" / "final_model")
    assert f"{SHARDS[1]} is missing" in arrival_problems(tmp_path / "v" / "final_model", record)


def test_a_whole_small_file_is_hard_linked_not_copied(cut):
    model, _, part_root = cut
    inodes = {p.stat().st_ino for part in part_root.iterdir() for p in part.iterdir()}
    assert (model / "config.json").stat().st_ino in inodes


@pytest.mark.parametrize("lost", ["part-00", "part-01", "the last part"])
def test_a_part_lost_on_the_way_is_a_verifier_error_naming_what_it_held(lost, cut, tmp_path, workdir):
    model, record, part_root = cut
    names = sorted(p.name for p in part_root.iterdir())
    carry(part_root, tmp_path / "verifier-parts", lose={names[-1] if lost == "the last part" else lost})
    rebuilt = tmp_path / "verifier" / "final_model"
    parts.join(tmp_path / "verifier-parts", record, rebuilt)
    with pytest.raises(VerifierError, match="did not arrive whole: .* is missing"):
        verify(request_for(tmp_path, rebuilt, record), quiet())
    assert not (tmp_path / "verifier" / "reward.json").exists()


def test_a_piece_cut_short_on_the_way_is_a_verifier_error(cut, tmp_path):
    model, record, part_root = cut
    carry(part_root, tmp_path / "verifier-parts")
    piece = max((p for p in (tmp_path / "verifier-parts").rglob("*") if p.is_file()), key=lambda p: p.stat().st_size)
    os.truncate(piece, piece.stat().st_size - 1)
    rebuilt = tmp_path / "verifier" / "final_model"
    parts.join(tmp_path / "verifier-parts", record, rebuilt)
    assert any("missing" in problem for problem in arrival_problems(rebuilt, record))


def test_the_joined_model_scores_as_the_submission(cut, tmp_path, workdir):
    model, record, part_root = cut
    carry(part_root, tmp_path / "verifier-parts")
    rebuilt = tmp_path / "verifier" / "final_model"
    rebuilt.mkdir(parents=True)
    (rebuilt / "stale.txt").write_text("the workspace's copy")  # replaced by the join
    parts.join(tmp_path / "verifier-parts", record, rebuilt)
    assert not (rebuilt / "stale.txt").exists()
    verdict = verify(request_for(tmp_path, rebuilt, record), quiet())
    assert verdict.scored == "submission"


def test_the_hook_and_join_clis_round_trip(tiny_dir, tmp_path):
    model = sharded_copy(tiny_dir, tmp_path / "final_model")
    record, part_root, rebuilt = tmp_path / "r.json", tmp_path / "parts", tmp_path / "v" / "final_model"
    cli = [sys.executable, "-m", "ptbench.cli.main"]
    for args in (
        ["handoff-record", str(model), str(record), "--parts", str(part_root)],
        ["handoff-join", str(part_root), str(record), str(rebuilt)],
    ):
        done = subprocess.run(cli + args, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
    assert arrival_problems(rebuilt, record) == []
    assert {*SHARDS} <= {p.name for p in rebuilt.iterdir()}


def test_the_exported_task_for_modal_sends_parts_never_the_model_as_one_archive(tmp_path):
    """Offline: the task config Harbor 0.26 reads for `--handoff-parts` (the path docs/RUNNING.md gives for Modal)."""
    task_dir = export_task(get_task("aime2025-qwen3-4b"), tmp_path, in_parts=True)
    text = (task_dir / "task.toml").read_text()
    config = TaskConfig.model_validate_toml(text)
    sources = [str(artifact.source) for artifact in config.artifacts]
    assert str(FINAL_MODEL) not in sources and not any(s.startswith(str(FINAL_MODEL)) for s in sources)
    assert sources.count(str(PARTS_DIR)) == 0 and [s for s in sources if s.startswith(str(PARTS_DIR))] == [
        str(p) for p in part_dirs()
    ]
    assert len(part_dirs()) * parts.PART_BYTES >= 16 << 30  # Qwen3-8B in bf16 fits
    assert parts.PART_BYTES < 5 << 30  # under Modal's cap, with room for tar headers
    (hook,) = config.verifier.collect
    assert hook.command.endswith(f"--parts {PARTS_DIR}") and "--stop-others" not in hook.command  # Modal: not safe
    test_sh = (task_dir / "tests" / "test.sh").read_text()
    assert f"ptbench handoff-join {PARTS_DIR} " in test_sh
    assert test_sh.index("handoff-join") < test_sh.index("ptbench verify --task")
    assert tomllib.loads(text)["verifier"]["environment_mode"] == "separate"
    assert MAX_PARTS == len(part_dirs())


def test_the_default_export_still_sends_the_model_whole(tmp_path):
    task_dir = export_task(get_task("aime2025-qwen3-4b"), tmp_path)
    config = TaskConfig.model_validate_toml((task_dir / "task.toml").read_text())
    (hook,) = config.verifier.collect
    # the hook stops the agent's leftovers where the host's $PTBENCH_STOP_OTHERS says so (ptbench run: local,
    # docker, podman), never by a flag that would do it on every environment
    assert "--stop-others" not in hook.command
    assert config.environment.env["PTBENCH_STOP_OTHERS"] == "${PTBENCH_STOP_OTHERS:-}"
    sources = [str(artifact.source) for artifact in config.artifacts]
    assert str(FINAL_MODEL) in sources and not any(s.startswith(str(PARTS_DIR)) for s in sources)
    assert "handoff-join" not in (task_dir / "tests" / "test.sh").read_text()
