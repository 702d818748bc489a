"""Canonical form of a board under the 8 symmetries of the square and region relabelling.

Two boards are the same puzzle iff their canonical forms are equal: rotate/reflect the grid
in all 8 ways, relabel regions in order of first appearance (row-major), keep the smallest.
The sha256 of that form is the board's identity for overlap checks between sets.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from ptbench.frogs.board import Board

CANONICAL_VERSION = 1
Grid = tuple[tuple[int, ...], ...]


def symmetries(grid: Sequence[Sequence[int]]) -> list[Grid]:
    """The 8 images of a square grid: 4 rotations, each with and without a transpose."""
    images: list[Grid] = []
    current: Grid = tuple(tuple(row) for row in grid)
    for _ in range(4):
        images.append(current)
        images.append(tuple(zip(*current, strict=True)))  # transpose
        current = tuple(zip(*current[::-1], strict=True))  # rotate 90 degrees clockwise
    return images


def relabel(grid: Grid) -> tuple[int, ...]:
    """The grid flattened row-major with regions renumbered by first appearance."""
    names: dict[int, int] = {}
    return tuple(names.setdefault(g, len(names)) for row in grid for g in row)


def canonical_form(board: Board) -> tuple[int, ...]:
    """The smallest relabelled flattening over the 8 symmetries."""
    return min(relabel(image) for image in symmetries(board.regions))


def canonical_hash(board: Board) -> str:
    """sha256 (hex) of the canonical form, prefixed with N and the form's version."""
    return grid_hash(board.regions)


def grid_hash(grid: Sequence[Sequence[object]]) -> str:
    """`canonical_hash` of a square grid of any labels (letters, numbers), unvalidated: a board found in a file."""
    names: dict[object, int] = {}
    numbered = [[names.setdefault(label, len(names)) for label in row] for row in grid]
    form = min(relabel(image) for image in symmetries(numbered))
    text = f"frogs-canonical-v{CANONICAL_VERSION}:{len(grid)}:" + ",".join(map(str, form))
    return hashlib.sha256(text.encode()).hexdigest()
