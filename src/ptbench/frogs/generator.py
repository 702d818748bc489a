"""Seeded generator of boards with exactly one solution (proved by the solver).

1. Plant a random valid placement P of N frogs (randomised backtracking, row by row).
2. Grow N regions from the N frogs by random flood fill: each region is contiguous and
   holds one frog of P, so P is a solution.
3. While the solver finds a second solution S, break it: take a cell x of S that is not in
   P, and move x into a neighbouring region (when x is inside its region, move the path
   from x to the region's edge; pieces of the old region that lose their link to its frog
   go along). The receiving region now holds two frogs of S, so S is no longer a solution.
4. Safe moves: moving a non-planted cell z into a neighbouring region g (its old region
   staying contiguous) can only add solutions with a frog on z, so it keeps the board
   unique iff the solver finds no solution through z in g. Regions smaller than
   MIN_REGION cells take cells from their neighbours this way, where possible.
5. With `accept` (a test on the canonical hash, used to keep held-out and training boards
   apart), apply random safe moves until the board passes.

Deterministic on any machine: all randomness comes from `random.Random` seeded with an
integer derived from the seed by sha256 (never `hash()`), and nothing iterates over a set.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable

from pydantic import BaseModel, ConfigDict

from ptbench.frogs.board import MAX_N, MIN_N, Board, Cell, Rules
from ptbench.frogs.canonical import canonical_hash, relabel
from ptbench.frogs.solver import RegionSearch

GENERATOR_VERSION = 1
"""Bump whenever a change could alter the board produced for a seed."""

_ATTEMPTS = 500  # fresh starts before giving up; a start fails rarely (its break loop is capped)
MIN_REGION = 3  # regions smaller than this are grown where a safe move allows
_NODE_BUDGET = 20_000  # solver nodes per check; a board that needs more is abandoned (rare, N >= 14)


class Puzzle(BaseModel):
    """A board with its unique solution (sorted by row) and the board's canonical hash."""

    model_config = ConfigDict(frozen=True)

    board: Board
    solution: tuple[Cell, ...]
    canonical_hash: str


def derive_seed(*parts: object) -> int:
    """A 64-bit integer seed from any parts, identical on every machine and Python build."""
    text = "/".join(str(p) for p in parts)
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")


def generate_board(seed: int | str, n: int, rules: Rules = "touch",
                   accept: Callable[[str], bool] | None = None) -> Puzzle:
    """The unique-solution N x N board for this seed (the same on every machine).

    `accept`, if given, must hold for the board's canonical hash; the held-out and training
    sets pass complementary tests here, which is what keeps them disjoint.
    """
    if not MIN_N <= n <= MAX_N:
        raise ValueError(f"board size must be {MIN_N}..{MAX_N}, got {n}")
    rng = random.Random(derive_seed("frogs-board", GENERATOR_VERSION, seed, n, rules))
    for _ in range(_ATTEMPTS):
        builder = _Builder(rng, n, rules)
        if not builder.make_unique():
            continue
        builder.fill_small_regions()
        puzzle = builder.puzzle()
        for _ in range(16 * n):
            if accept is None or accept(puzzle.canonical_hash):
                return puzzle
            if not builder.safe_move():
                break
            puzzle = builder.puzzle()
    raise RuntimeError(f"no board after {_ATTEMPTS} attempts (seed {seed!r}, n={n}, rules={rules})")


class _Builder:
    """One attempt at a board: the planted frogs and the solver's (editable) region map."""

    def __init__(self, rng: random.Random, n: int, rules: Rules) -> None:
        self.rng, self.n = rng, n
        self.planted = [r * n + c for r, c in _random_placement(rng, n, rules)]
        self.search = RegionSearch(n, rules)
        self.region = self.search.region  # region id per cell index; region g grows from planted[g]
        for g, i in enumerate(self.planted):
            self.search.assign(i, g)
        self._grow()

    def _grow(self) -> None:
        """Random flood fill: a random frontier cell joins a random neighbouring region."""
        frontier: list[int] = []
        queued: set[int] = set()

        def push_around(i: int) -> None:
            for j in self._neighbours(i):
                if self.region[j] < 0 and j not in queued:
                    queued.add(j)
                    frontier.append(j)

        for i in self.planted:
            push_around(i)
        while frontier:
            k = self.rng.randrange(len(frontier))
            frontier[k], frontier[-1] = frontier[-1], frontier[k]
            y = frontier.pop()
            self.search.assign(y, self.rng.choice(self._owners(y)))
            push_around(y)

    def make_unique(self) -> bool:
        """Break other solutions until P is the only one (proved by the solver); False if stuck."""
        planted = tuple(sorted(self.planted))
        for _ in range(8 * self.n):
            found = self.search.solutions(2, budget=_NODE_BUDGET)
            if found is None:
                return False
            if found == [planted]:
                return True
            other = next(s for s in found if s != planted)
            if not self._break([i for i in other if i not in self.planted]):
                return False
        return False

    def fill_small_regions(self) -> None:
        """Grow regions smaller than MIN_REGION cells with safe moves of neighbouring cells,
        where possible (tiny regions give frogs away)."""
        stuck: set[int] = set()
        while True:
            small = [g for g in range(self.n) if self._size(g) < MIN_REGION and g not in stuck]
            if not small:
                return
            g = small[0]
            donors = sorted({j for i in self._cells(g) for j in self._neighbours(i)
                             if self.region[j] != g and j not in self.planted
                             and self._size(self.region[j]) > MIN_REGION})
            self.rng.shuffle(donors)
            if not any(self._move_if_safe(j, g) for j in donors):
                stuck.add(g)

    def safe_move(self) -> bool:
        """Move one non-planted cell to a neighbouring region, keeping its old region contiguous
        and adding no solution (none runs through it in its new region); False if none can."""
        cells = [i for i in range(self.n * self.n) if i not in self.planted]
        self.rng.shuffle(cells)
        for z in cells:
            own = self.region[z]
            targets = [g for g in self._owners(z) if g != own]
            if not targets:
                continue
            self.rng.shuffle(targets)
            if any(self._move_if_safe(z, g) for g in targets):
                return True
        return False

    def _move_if_safe(self, z: int, g: int) -> bool:
        """Move z into region g if its old region stays contiguous and no solution runs
        through z in g (so the move adds no solution); otherwise change nothing."""
        own = self.region[z]
        self.search.assign(z, g)
        if (len(self._reachable(self.planted[own])) == self._size(own)
                and self.search.solutions(1, through=z, budget=_NODE_BUDGET) == []):
            return True
        self.search.assign(z, own)
        return False

    def _cells(self, g: int) -> list[int]:
        mask = self.search.units[2 * self.n + g]
        return [i for i in range(self.n * self.n) if mask >> i & 1]

    def puzzle(self) -> Puzzle:
        """The current map as a Puzzle, regions renumbered by first appearance."""
        n = self.n
        flat = relabel((tuple(self.region),))
        board = Board(n=n, regions=tuple(flat[r * n:(r + 1) * n] for r in range(n)))
        solution = tuple(divmod(i, n) for i in sorted(self.planted))
        return Puzzle(board=board, solution=solution, canonical_hash=canonical_hash(board))

    def _break(self, cells: list[int]) -> bool:
        """Move one of these cells (with its path to its region's edge) into a neighbouring region."""
        self.rng.shuffle(cells)
        for x in cells:
            own = self.region[x]
            path = self._path_to_edge(x, self.planted[own])
            if not path:
                continue
            target = self.rng.choice([g for g in self._owners(path[-1]) if g != own])
            for i in path:
                self.search.assign(i, target)
            kept = self._reachable(self.planted[own])
            for i in range(self.n * self.n):
                if self.region[i] == own and i not in kept:
                    self.search.assign(i, target)
            return True
        return False

    def _path_to_edge(self, start: int, avoid: int) -> list[int]:
        """Shortest path inside start's region from start to a cell touching another region,
        not passing through `avoid`; [] if there is none."""
        g = self.region[start]
        previous: dict[int, int] = {start: start}
        queue = [start]
        for cur in queue:
            if any(self.region[j] != g for j in self._neighbours(cur)):
                path = [cur]
                while path[-1] != start:
                    path.append(previous[path[-1]])
                return path[::-1]
            for j in self._neighbours(cur):
                if j not in previous and j != avoid and self.region[j] == g:
                    previous[j] = cur
                    queue.append(j)
        return []

    def _reachable(self, start: int) -> set[int]:
        """The cells of start's region 4-connected to start."""
        g = self.region[start]
        seen = {start}
        stack = [start]
        while stack:
            for j in self._neighbours(stack.pop()):
                if j not in seen and self.region[j] == g:
                    seen.add(j)
                    stack.append(j)
        return seen

    def _size(self, g: int) -> int:
        return self.search.units[2 * self.n + g].bit_count()

    def _owners(self, i: int) -> list[int]:
        """The distinct regions of i's assigned neighbours, sorted."""
        return sorted({self.region[j] for j in self._neighbours(i) if self.region[j] >= 0})

    def _neighbours(self, i: int) -> list[int]:
        r, c = divmod(i, self.n)
        return [rr * self.n + cc for rr, cc in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1))
                if 0 <= rr < self.n and 0 <= cc < self.n]


def _random_placement(rng: random.Random, n: int, rules: Rules) -> list[Cell]:
    """A random valid placement, one frog per row and column, by randomised backtracking."""
    cols: list[int] = []

    def allowed(c: int) -> bool:
        r = len(cols)
        if c in cols:
            return False
        if rules == "touch":
            return r == 0 or abs(c - cols[-1]) > 1
        return all(abs(c - cc) != r - rr for rr, cc in enumerate(cols))

    def extend() -> bool:
        if len(cols) == n:
            return True
        options = [c for c in range(n) if allowed(c)]
        rng.shuffle(options)
        for c in options:
            cols.append(c)
            if extend():
                return True
            cols.pop()
        return False

    if not extend():
        raise RuntimeError(f"no valid placement exists for n={n} under {rules}")
    return list(enumerate(cols))
