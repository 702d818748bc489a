"""The logical solver on hand-made boards: one per rule, one needing a guess, one with two solutions."""

from __future__ import annotations

import json

import pytest

from ptbench.frogs import Board, count_solutions
from ptbench.frogs.deduce import GRADES, deduce


def board(rows: list[str]) -> Board:
    return Board(n=len(rows), regions=[[ord(ch) - ord("A") for ch in row] for row in rows])


# Unique boards (checked below) and the hardest rule each needs.
SINGLES = ["EEEEEB", "FEEEEB", "FFEEDB", "FFEDDB", "FFECDB", "ACCCCB"]
CONFINEMENT = ["BDDEEE", "BAEEEE", "AAAEEE", "AAAEEF", "AAAFFF", "AAACFF"]
PIGEONHOLE = ["AAAEEE", "AAAEEE", "AADECC", "ADDCCC", "DDDBBF", "DDBBBF"]
CONTRADICTION = ["AFFFDD", "AFFFFD", "AAACED", "ACCCED", "ABBBBB", "BBBBBB"]
NEEDS_A_GUESS = ["ECFFFA", "ECCCFA", "EECCFF", "BEEFFF", "EEEDFF", "EEEDDD"]


@pytest.mark.parametrize(("rows", "grade"), [(SINGLES, 1), (CONFINEMENT, 2), (PIGEONHOLE, 3), (CONTRADICTION, 4)])
def test_each_rule_on_a_board_that_needs_it(rows, grade):
    b = board(rows)
    exact = count_solutions(b, limit=2)
    assert exact.unique
    result = deduce(b)
    assert result.solved and result.frogs == exact.solutions[0]
    assert result.grade == grade and result.grade_name == GRADES[grade]
    assert max(result.steps) == grade


def test_a_board_that_needs_a_guess_is_not_solved():
    b = board(NEEDS_A_GUESS)
    assert count_solutions(b, limit=2).unique
    result = deduce(b)
    assert not result.solved and len(result.frogs) < b.n


def test_frogs_solve_grades_boards(cli, tmp_path):
    for name, rows in (("pigeonhole", PIGEONHOLE), ("guess", NEEDS_A_GUESS)):
        (tmp_path / f"{name}.json").write_text(board(rows).model_dump_json())
    graded = cli("frogs", "solve", str(tmp_path / "pigeonhole.json"))
    assert "grade 3 (pigeonhole)" in graded.stdout
    as_json = json.loads(cli("frogs", "solve", str(tmp_path / "pigeonhole.json"), "--json").stdout)
    assert as_json["count"] == 1 and as_json["deduction"]["grade"] == 3
    assert "needs a guess" in cli("frogs", "solve", str(tmp_path / "guess.json")).stdout


def test_deduction_never_contradicts_the_exact_solver_on_a_multi_solution_board():
    quads = Board(n=4, regions=[[0, 0, 1, 1], [0, 0, 1, 1], [2, 2, 3, 3], [2, 2, 3, 3]])
    assert not deduce(quads).solved  # two solutions: no sound rule can pick one
