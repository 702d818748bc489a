"""Canonical form and the held-out / training split (disjoint by construction), set files."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ptbench.errors import UserError
from ptbench.frogs import (
    Board,
    build_heldout,
    canonical_hash,
    generate_board,
    generate_training_boards,
    in_heldout_space,
    manifest_path,
    read_heldout,
    read_records,
    write_set,
)
from ptbench.frogs.canonical import symmetries

from .helpers import random_board


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10**9), n=st.integers(4, 9))
def test_canonical_hash_is_equal_for_all_symmetric_copies_and_relabellings(seed, n):
    board = random_board(seed, n)
    labels = list(range(n))
    random.Random(seed).shuffle(labels)
    expected = canonical_hash(board)
    images = symmetries(board.regions)
    assert len(images) == 8
    for image in images:
        relabelled = [[labels[g] for g in row] for row in image]
        assert canonical_hash(Board(n=n, regions=relabelled)) == expected


def test_canonical_hash_tells_different_boards_apart():
    hashes = {canonical_hash(generate_board(s, 7).board) for s in range(30)}
    assert len(hashes) == 30


def test_heldout_and_training_spaces_never_meet():
    heldout = build_heldout(12, seed=3, tiers=("tiny", "easy", "medium"))
    training = list(generate_training_boards(12, seed=3, tiers=("tiny", "easy", "medium")))
    assert all(in_heldout_space(r.canonical_hash) for r in heldout)
    assert not any(in_heldout_space(r.canonical_hash) for r in training)
    assert not {r.canonical_hash for r in heldout} & {r.canonical_hash for r in training}


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(-(2**63), 2**63))
def test_no_training_seed_yields_a_heldout_board(seed):
    record = next(generate_training_boards(1, seed=seed, tiers=("easy",)))
    assert not in_heldout_space(record.canonical_hash)
    assert canonical_hash(record.board) == record.canonical_hash


def test_training_boards_of_one_size_are_distinct_training_boards_of_that_size():
    records = list(generate_training_boards(12, seed=3, tiers=("tiny", "easy"), size=5))
    assert {(r.n, r.tier) for r in records} == {(5, "tiny")}
    assert len({r.canonical_hash for r in records}) == 12
    assert not any(in_heldout_space(r.canonical_hash) for r in records)
    with pytest.raises(UserError, match="board size 6 belongs to none of the tiers tiny"):
        generate_training_boards(1, seed=3, tiers=("tiny",), size=6)


def test_heldout_mix_order_and_determinism():
    records = build_heldout(10, seed=1, tiers=("tiny", "easy"))
    assert [r.tier for r in records[:4]] == ["tiny", "easy", "tiny", "easy"]
    assert {r.n for r in records if r.tier == "tiny"} == {4, 5}
    assert len({r.canonical_hash for r in records}) == 10
    assert build_heldout(10, seed=1, tiers=("tiny", "easy")) == records
    assert build_heldout(10, seed=2, tiers=("tiny", "easy")) != records


def test_set_roundtrip_and_tampering_is_caught(tmp_path: Path):
    records = build_heldout(6, seed=0, tiers=("tiny", "easy", "medium"))
    path = tmp_path / "heldout.jsonl"
    manifest = write_set(records, path, seed=0, tiers=("tiny", "easy", "medium"))
    assert manifest.count_per_tier == {"tiny": 2, "easy": 2, "medium": 2}
    assert manifest_path(path).is_file()
    assert read_heldout(path) == records
    with pytest.raises(UserError, match="split is heldout, not train"):
        read_records(path, split="train")

    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines[:-1]) + "\n")
    with pytest.raises(UserError, match="sha256 differs"):
        read_heldout(path)

    manifest_path(path).unlink()
    bad = records[0].model_copy(update={"solution": records[0].solution[::-1][:-1] + ((0, 0),)})
    path.write_text(bad.model_dump_json() + "\n")
    with pytest.raises(UserError, match="record 1 .*"):
        read_heldout(path)
    path.write_text('{"schema_version": 1, "id": ')
    with pytest.raises(UserError, match="malformed JSON"):
        read_heldout(path)
