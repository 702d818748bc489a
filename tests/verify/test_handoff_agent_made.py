"""A submission the agent made hard to hand over is the agent's failure, never a verifier error: the collect hook
records what it can (a name that is not UTF-8, a path too long for the record, a FIFO, a link, a file past the
record's byte budget are listed as left out, not compared), so the verifier judges what arrived. Whatever the
agent put beside it, a recorded file the machine lost on the way stays a verifier error. (The hook's stopping of
the processes the agent left running: test_handoff_leftovers.py, test_handoff_stop_job.py.)"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from ptbench.errors import VerifierError
from ptbench.verify import handoff
from ptbench.verify.handoff import HandoffRecord, arrival_problems, write_record
from ptbench.verify.pipeline import verify

from .conftest import quiet
from .test_handoff import SHARDS, request_for, sharded_copy

LONG = "/".join(["d" * 200] * 22)  # 4,400 characters: a path the record cannot hold


def non_utf8_name(model: Path) -> None:
    (Path(os.fsdecode(bytes(model) + b"/notes-\xff.txt"))).write_bytes(b"x")


def long_path(model: Path) -> None:
    fd = os.open(model, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for part in LONG.split("/"):
            os.mkdir(part, dir_fd=fd)
            new = os.open(part, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = new
        os.close(os.open("f", os.O_WRONLY | os.O_CREAT, dir_fd=fd))
    finally:
        os.close(fd)


def shard_as_absolute_link(model: Path) -> None:
    target = model.parent / "outside.bin"
    (model / SHARDS[0]).rename(target)
    (model / SHARDS[0]).symlink_to(target)


def model_as_link(model: Path) -> None:
    real = model.parent / "real_model"
    model.rename(real)
    model.symlink_to(real)


# What the agent left -> what arrives at the verifier (Harbor's tar filter drops links that leave the artifact and
# special files; a name or path it can carry arrives as it was).
AGENT_MADE: dict[str, tuple[Callable[[Path], None], Callable[[Path], None]]] = {
    "a file named in bytes that are not UTF-8": (non_utf8_name, lambda m: None),
    "a path longer than the record holds": (long_path, lambda m: None),
    "a FIFO": (lambda m: os.mkfifo(m / "pipe"), lambda m: (m / "pipe").unlink()),
    "a shard that is an absolute link": (shard_as_absolute_link, lambda m: (m / SHARDS[0]).unlink()),
    "the model dir itself a link": (model_as_link, lambda m: m.unlink()),
}


@pytest.mark.parametrize("case", sorted(AGENT_MADE))
def test_what_the_agent_made_unrecordable_is_recorded_as_left_out_and_never_a_verifier_error(case, tiny_dir, tmp_path):
    model = sharded_copy(tiny_dir, tmp_path / "final_model")
    make, transfer = AGENT_MADE[case]
    make(model)
    record = tmp_path / "logs-artifacts" / "ptbench-handoff.json"
    write_record(model, record)  # the hook itself must not fail: no record is a verifier error
    recorded = HandoffRecord.model_validate_json(record.read_text())
    assert recorded.left_out
    assert all(name.isprintable() and len(name) <= handoff.MAX_NAME for name in recorded.left_out)
    transfer(model)
    assert arrival_problems(model, record) == []


def test_the_hook_cli_never_fails_on_a_name_that_is_not_utf8(tiny_dir, tmp_path):
    model = sharded_copy(tiny_dir, tmp_path / "final_model")
    non_utf8_name(model)
    record = tmp_path / "record.json"
    done = subprocess.run(
        [sys.executable, "-m", "ptbench.cli.main", "handoff-record", str(model), str(record)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert arrival_problems(model, record) == []


@pytest.mark.parametrize("case", ["a shard that is an absolute link", "the model dir itself a link"])
def test_a_model_the_agent_left_as_links_is_scored_as_the_agents_failure(case, tiny_dir, tmp_path, workdir):
    model = sharded_copy(tiny_dir, tmp_path / "final_model")
    make, transfer = AGENT_MADE[case]
    make(model)
    record = tmp_path / "logs-artifacts" / "ptbench-handoff.json"
    write_record(model, record)
    transfer(model)
    verdict = verify(request_for(tmp_path, model, record), quiet())
    assert verdict.scored == "base" and verdict.fallback_reasons and verdict.reward is not None


@pytest.mark.parametrize("case", sorted(case for case in AGENT_MADE if "link" not in case))  # a link is not carried
def test_beside_what_the_agent_made_a_shard_the_machine_lost_is_still_a_verifier_error(
    case, tiny_dir, tmp_path, workdir
):
    model = sharded_copy(tiny_dir, tmp_path / "final_model")
    make, transfer = AGENT_MADE[case]
    make(model)
    record = tmp_path / "logs-artifacts" / "ptbench-handoff.json"
    write_record(model, record)
    transfer(model)
    (model / SHARDS[1]).unlink()  # the machine's loss
    with pytest.raises(VerifierError, match=f"did not arrive whole: {SHARDS[1]} is missing"):
        verify(request_for(tmp_path, model, record), quiet())


def test_files_past_the_records_byte_budget_are_left_out(tiny_dir, tmp_path, monkeypatch):
    model = sharded_copy(tiny_dir, tmp_path / "final_model")
    with (model / "huge.bin").open("wb") as handle:
        handle.truncate(1 << 20)
    budget = sum(p.stat().st_size for p in model.iterdir()) - 1
    monkeypatch.setattr(handoff, "MAX_BYTES", budget)
    recorded = handoff.record_submission(model)
    assert len(recorded.left_out) == 1
    assert sum(entry.size for entry in recorded.files) <= budget
    assert len(recorded.files) == len(list(model.iterdir())) - 1


def test_honest_models_record_every_file(tiny_dir, tmp_path):
    """The look-alikes that must stay whole: unicode names, nested dirs, a relative link kept beside real files."""
    model = sharded_copy(tiny_dir, tmp_path / "final_model")
    (model / "résumé-日本.txt").write_text("x")
    (model / "sub" / "deeper").mkdir(parents=True)
    (model / "sub" / "deeper" / "extra.json").write_text("{}")
    (model / "tokenizer-link.json").symlink_to("tokenizer.json")
    recorded = handoff.record_submission(model)
    paths = {entry.path for entry in recorded.files}
    assert {"résumé-日本.txt", "sub/deeper/extra.json", *SHARDS} <= paths
    assert recorded.left_out == ["tokenizer-link.json"]
