"""A hidden panel: rows that come in consecutive blocks of k records of one entity, with no id.

A panel written out person by person (seven yearly rows each) without the person's id looks like
independent rows, and a random split then puts one person's years on both sides. The blocks show
in the data: cut the rows every k, and several columns that describe the entity (sex, schooling)
are the same within nearly every block while they differ between blocks, and a counter rises by
one within each block (years of experience) or a column runs through the same sequence in each
(the year). A table merely sorted by a column is told apart by cutting the rows half a block
later: its sorted column stays as constant, a real block's attributes do not.

Entities observed for different lengths of time (3 to 9 years each) make blocks of unequal length:
then the blocks are the runs in which a counter rises by one, each ending where it does not, and
the same attributes and the same cut half a block later tell them from a sorted table.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from kernel_tools.diagnosis.columns import ColumnProfile

MAX_BLOCK = 30  # longest block tried (records of one entity)
MIN_BLOCKS = 20
CONSTANT = 0.95  # share of blocks in which an attribute is the same on every record
SHIFTED_CHANGE = 0.05  # ...and changes within at least this share of blocks cut half a block later (and
SHIFTED_TIMES = 3  # this many times the share it changes within when cut at the block)
MIN_ATTRIBUTES = 2
COUNTER = 0.95  # share of steps within blocks on which the counter rises by one (or the sequence repeats)
MAX_ROWS = 200_000
MAX_COLUMNS = 60
STRONG_ATTRIBUTES = 3  # blocks whose counter rises by one and that hold this many attributes: grouping is recommended


MAX_SINGLES = 0.05  # unequal blocks: share of runs of the counter that are a single row
STEP_CHANGE = 0.02  # ...share of steps within runs on which an attribute changes
SHIFTED_STEP_CHANGE = 0.02  # ...and within the runs cut half a run later, at least this share (and SHIFTED_TIMES as many)


@dataclass
class Blocks:
    """Blocks of ``size`` consecutive rows (None: of unequal length, each a run in which the
    counter rises by one), the attributes constant within them and the counter."""

    size: int | None
    attributes: list[str]
    counter: str
    counter_kind: str  # 'rises by one' or 'repeats its sequence'
    column: str = "block"  # the name the block id would take (not a column of the table)
    lengths: tuple[int, int, int] = (0, 0, 0)  # unequal blocks: how many, the shortest and the longest

    @property
    def strong(self) -> bool:
        """Whether grouping by the blocks is the recommended answer (still asked: a guess)."""
        return len(self.attributes) >= STRONG_ATTRIBUTES and self.counter_kind == "rises by one"

    def words(self, n: int) -> str:
        shown = ", ".join(repr(c) for c in self.attributes[:4]) + (" ..." if len(self.attributes) > 4 else "")
        if self.size is None:
            count, shortest, longest = self.lengths
            blocks = (f"rows may be blocks of one entity's records ({count:,} blocks of {shortest} to {longest} "
                      f"consecutive rows, each ending where '{self.counter}' does not rise by one)")
        else:
            blocks = (f"rows may be blocks of {self.size} records of one entity ({n // self.size:,} blocks of "
                      f"{self.size} consecutive rows)")
        return (f"{blocks}: {shown} are the same within nearly every block and change between them, and "
                f"'{self.counter}' {self.counter_kind} within each block; no column names the entity, so a "
                "random split would put one entity's records on both sides")

    def to_dict(self) -> dict:
        out = {"size": self.size, "attributes": self.attributes, "counter": self.counter,
               "counter_kind": self.counter_kind, "column": self.column, "strong": self.strong}
        if self.size is None:
            out.update(zip(("blocks", "shortest", "longest"), self.lengths))
        return out


def _constant_share(codes: np.ndarray, k: int, shift: int) -> float:
    m = (len(codes) - shift) // k
    block = codes[shift:shift + m * k].reshape(m, k)
    return float(np.mean((block == block[:, :1]).all(axis=1)))


def _counter(values: np.ndarray, k: int) -> str | None:
    """How ``values`` (numbers) count within blocks of ``k``, or None."""
    block = values.reshape(-1, k)
    if not np.isfinite(block).all():
        return None
    # a row number rises by one across blocks too: a counter restarts at each block
    if np.mean(np.diff(block, axis=1) == 1) >= COUNTER and np.mean(block[1:, 0] - block[:-1, -1] == 1) < 0.5:
        return "rises by one"
    if np.ptp(block[0]) > 0 and np.mean((block == block[0]).all(axis=1)) >= COUNTER:
        return "repeats its sequence"
    return None


def find_blocks(df: pd.DataFrame, profiles: dict[str, ColumnProfile], exclude: set[str]) -> Blocks | None:
    """The block length whose blocks hold the most entity attributes and a counter (see the module
    docstring), or None."""
    rows = df.iloc[:MAX_ROWS]
    n = len(rows)
    cols = [c for c, p in profiles.items() if c not in exclude and p.kind != "empty" and 1 < p.nunique < n][:MAX_COLUMNS]
    codes = {c: pd.factorize(rows[c])[0] for c in cols}
    numbers = {c: pd.to_numeric(rows[c], errors="coerce").to_numpy(dtype=float) for c in cols
               if profiles[c].kind == "numeric"}
    best: Blocks | None = None
    for k in range(2, MAX_BLOCK + 1):
        if n % k or n // k < MIN_BLOCKS:
            continue
        attributes = [c for c in cols if codes[c].max() > 0 and (share := _constant_share(codes[c], k, 0)) >= CONSTANT
                      and 1 - _constant_share(codes[c], k, k // 2) >= max(SHIFTED_CHANGE, SHIFTED_TIMES * (1 - share))]
        if len(attributes) < MIN_ATTRIBUTES or (best is not None and len(attributes) < len(best.attributes)):
            continue
        counters = [(c, kind) for c, x in numbers.items() if c not in attributes and (kind := _counter(x, k))]
        if counters:
            best = Blocks(k, attributes, *counters[0], column=free_name(df, "block"))
    return best if best is not None else _unequal_blocks(df, cols, codes, numbers)


def _change_rate(codes: np.ndarray, starts: np.ndarray) -> float:
    """The share of steps from one row to the next within blocks (``starts`` marks each block's
    first row) on which ``codes`` change: per step, so that two entities' records run together
    (a counter that happens to go on rising by one) weigh one step, not a whole block."""
    within = ~starts[1:]
    return float(np.mean(codes[1:][within] != codes[:-1][within])) if within.any() else 0.0


def _unequal_blocks(df: pd.DataFrame, cols: list[str], codes: dict[str, np.ndarray],
                    numbers: dict[str, np.ndarray]) -> Blocks | None:
    """Blocks of unequal length: the runs in which a counter rises by one, nearly none a single row,
    within which at least two attributes (nearly) never change and which they tell apart from the
    same runs cut half a block later (see the module docstring)."""
    best: Blocks | None = None
    for counter, x in numbers.items():
        if not np.isfinite(x).all():
            continue
        starts = np.ones(len(x), dtype=bool)
        starts[1:] = np.diff(x) != 1
        first = np.flatnonzero(starts)
        lengths = np.diff(np.append(first, len(x)))
        if (len(first) < MIN_BLOCKS or np.mean(lengths == 1) > MAX_SINGLES or lengths.max() > MAX_BLOCK
                or len(set(lengths.tolist())) == 1):
            continue
        shifted = np.zeros(len(x), dtype=bool)
        shifted[0] = True
        shifted[(first + lengths // 2)[lengths > 1]] = True
        attributes = [c for c in cols if c != counter and codes[c].max() > 0
                      and (change := _change_rate(codes[c], starts)) <= STEP_CHANGE
                      and _change_rate(codes[c], shifted) >= max(SHIFTED_STEP_CHANGE, SHIFTED_TIMES * change)]
        if len(attributes) >= MIN_ATTRIBUTES and (best is None or len(attributes) > len(best.attributes)):
            best = Blocks(None, attributes, counter, "rises by one", column=free_name(df, "block"),
                          lengths=(len(first), int(lengths.min()), int(lengths.max())))
    return best


def free_name(df: pd.DataFrame, name: str) -> str:
    """``name``, or ``name_2``, ``name_3`` ... the first that is not a column of ``df``."""
    taken = {str(c) for c in df.columns}
    return next(n for n in [name, *(f"{name}_{i}" for i in range(2, len(taken) + 3))] if n not in taken)
