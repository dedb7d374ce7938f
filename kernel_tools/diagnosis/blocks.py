"""A hidden panel: rows that come in consecutive blocks of k records of one entity, with no id.

A panel written out person by person (seven yearly rows each) without the person's id looks like
independent rows, and a random split then puts one person's years on both sides. The blocks show
in the data: cut the rows every k, and several columns that describe the entity (sex, schooling)
are the same within nearly every block while they differ between blocks, and a counter rises by
one within each block (years of experience) or a column runs through the same sequence in each
(the year). A table merely sorted by a column is told apart by cutting the rows half a block
later: its sorted column stays as constant, a real block's attributes do not.
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


@dataclass
class Blocks:
    """Blocks of ``size`` consecutive rows, the attributes constant within them and the counter."""

    size: int
    attributes: list[str]
    counter: str
    counter_kind: str  # 'rises by one' or 'repeats its sequence'
    column: str = "block"  # the name the block id would take (not a column of the table)

    @property
    def strong(self) -> bool:
        """Whether grouping by the blocks is the recommended answer (still asked: a guess)."""
        return len(self.attributes) >= STRONG_ATTRIBUTES and self.counter_kind == "rises by one"

    def words(self, n: int) -> str:
        shown = ", ".join(repr(c) for c in self.attributes[:4]) + (" ..." if len(self.attributes) > 4 else "")
        return (f"rows may be blocks of {self.size} records of one entity ({n // self.size:,} blocks of "
                f"{self.size} consecutive rows): {shown} are the same within nearly every block and change "
                f"between them, and '{self.counter}' {self.counter_kind} within each block; no column names "
                "the entity, so a random split would put one entity's records on both sides")

    def to_dict(self) -> dict:
        return {"size": self.size, "attributes": self.attributes, "counter": self.counter,
                "counter_kind": self.counter_kind, "column": self.column, "strong": self.strong}


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
    return best


def free_name(df: pd.DataFrame, name: str) -> str:
    """``name``, or ``name_2``, ``name_3`` ... the first that is not a column of ``df``."""
    taken = {str(c) for c in df.columns}
    return next(n for n in [name, *(f"{name}_{i}" for i in range(2, len(taken) + 3))] if n not in taken)
