"""Generated boards a puzzle designer would publish: regions of 3+ cells, solved by deduction alone
(to the exact solver's unique solution), graded by `deduce`; tiers balanced by grade; sets deterministic;
set files of schema 1 (no grades) still read."""

from __future__ import annotations

import hashlib
import json
from collections import Counter

import pytest

from ptbench.errors import UserError
from ptbench.frogs import (
    build_heldout,
    count_solutions,
    generate_board,
    generate_training_boards,
    manifest_path,
    read_heldout,
    write_set,
)
from ptbench.frogs.deduce import deduce
from ptbench.frogs.generator import MIN_REGION
from ptbench.frogs.tiers import TIER_GRADES, TIER_SIZES


def region_sizes(regions: tuple[tuple[int, ...], ...]) -> Counter[int]:
    return Counter(g for row in regions for g in row)


@pytest.mark.parametrize("rules", ["touch", "diagonal"])
def test_generated_boards_are_deducible_with_big_regions(rules):
    """A few hundred boards over every tier size: no region under 3 cells, solved by deduction alone to the
    exact solver's unique solution, and the grade is the deduction's."""
    for n in range(4, 14):
        for seed in range(14 if rules == "touch" else 6):
            puzzle = generate_board(f"publish/{seed}", n, rules)
            assert min(region_sizes(puzzle.board.regions).values()) >= MIN_REGION == 3
            deduction = deduce(puzzle.board, rules)
            assert deduction.solved and deduction.frogs == puzzle.solution
            assert puzzle.grade == deduction.grade
            exact = count_solutions(puzzle.board, rules, limit=2)
            assert exact.unique and exact.solutions[0] == puzzle.solution


def test_a_grade_can_be_asked_for():
    for grade in (2, 4):
        puzzle = generate_board("graded", 7, grade=grade)
        assert puzzle.grade == grade == deduce(puzzle.board).grade


def test_records_carry_the_deduce_grade_and_tiers_are_balanced_by_grade():
    records = build_heldout(32, seed=9, tiers=("easy", "medium"))
    for record in records:
        assert record.grade == deduce(record.board, record.rules).grade
    for tier in ("easy", "medium"):
        grades = Counter(r.grade for r in records if r.tier == tier)
        assert set(grades) == set(TIER_GRADES[tier])
        assert max(grades.values()) - min(grades.values()) <= 1
        for n in TIER_SIZES[tier]:  # both sizes get every grade
            assert {r.grade for r in records if r.n == n} == set(TIER_GRADES[tier])
    training = list(generate_training_boards(8, seed=9, tiers=("easy",)))
    assert all(r.grade == deduce(r.board).grade for r in training)


def test_heldout_set_is_deterministic_for_a_seed():
    first = build_heldout(8, seed=21)
    assert build_heldout(8, seed=21) == first
    assert [r.tier for r in first] == ["easy", "medium", "hard", "expert"] * 2


def test_sets_of_schema_1_are_still_read_and_a_wrong_grade_is_caught(tmp_path):
    records = build_heldout(4, seed=4, tiers=("easy",))
    path = tmp_path / "heldout.jsonl"
    write_set(records, path, seed=4, tiers=("easy",))
    manifest = json.loads(manifest_path(path).read_text())
    assert manifest["schema_version"] == 2 and manifest["count_per_grade"] == {"easy": {"2": 2, "4": 2}}
    old = [json.loads(r.model_dump_json()) | {"schema_version": 1} for r in records]
    for line in old:
        del line["grade"]
    text = "".join(json.dumps(line) + "\n" for line in old)
    path.write_text(text)
    manifest_path(path).write_text(json.dumps(
        {k: v for k, v in manifest.items() if k not in ("count_per_grade", "deduce_version")}
        | {"schema_version": 1, "sha256": hashlib.sha256(text.encode()).hexdigest()}))
    assert [r.grade for r in read_heldout(path)] == [None] * 4
    manifest_path(path).unlink()
    wrong = records[0].model_copy(update={"grade": 3})
    path.write_text(wrong.model_dump_json() + "\n")
    with pytest.raises(UserError, match="grade is 3 but the board's deduce grade is"):
        read_heldout(path)
