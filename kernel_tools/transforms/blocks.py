"""The entity id a hidden panel lacks: rows that are consecutive blocks of one entity's records, numbered.

A panel written out person by person (seven yearly rows each) without the person's id needs one,
or a split puts a person's years on both sides. The id comes from the layout by a readable rule,
so a new file of the same layout gets its ids the same way: a new block every ``size`` rows
(blocks of one length), or wherever ``counter`` does not rise by one from the row before (a new
entity's records start over; blocks of any length).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ._base import FrameTransformer, check_frame
from .report import StepReport


class BlockNumberer(FrameTransformer):
    """Adds ``column`` (1, 2, 3 ... one number per block) as the first column: blocks of ``size``
    consecutive rows, or runs of rows in which ``counter`` rises by one (give one of the two)."""

    def __init__(self, column: str = "block", size: int | None = None, counter: str | None = None) -> None:
        self.column = column
        self.size = size
        self.counter = counter

    def fit(self, X: pd.DataFrame, y: Any = None) -> BlockNumberer:
        X = self._remember_input(X)
        if (self.size is None) == (self.counter is None):
            raise ValueError("say how blocks are cut: size=<rows per block> or counter=<a column rising by one>")
        if self.size is not None and int(self.size) < 1:
            raise ValueError(f"size must be a number of rows (1 or more), not {self.size!r}")
        if self.column in X.columns:
            raise ValueError(f"{self.column!r} is a column already: name the block id otherwise (column=...)")
        self.feature_names_out_ = [self.column, *X.columns]
        return self

    def transform(self, X: pd.DataFrame) -> pd.DataFrame:
        X = self._check_transform_input(X, [self.counter] if self.counter is not None else [])
        ids = self._ids(X)
        return pd.concat([pd.Series(ids, index=X.index, name=self.column), X], axis=1)

    def _ids(self, X: pd.DataFrame) -> np.ndarray:
        n = len(X)
        if self.size is not None:
            size = int(self.size)
            if n % size:
                raise ValueError(f"{n} rows are not whole blocks of {size}: the rows are not in the layout "
                                 "the blocks were read in")
            return np.arange(n) // size + 1
        values = pd.to_numeric(X[self.counter], errors="coerce").to_numpy(dtype=float)
        starts = np.ones(n, dtype=bool)
        starts[1:] = ~(np.diff(values) == 1)  # a missing counter starts a block too
        return np.cumsum(starts)


def number_blocks(df: pd.DataFrame, column: str = "block", size: int | None = None,
                  counter: str | None = None) -> tuple[pd.DataFrame, StepReport]:
    """Number the blocks of consecutive rows that are one entity's records each: a new block every
    ``size`` rows, or wherever ``counter`` does not rise by one from the row before. The number is
    the new first column ``column``, the entity id to group splits and folds by."""
    check_frame(df)
    numberer = BlockNumberer(column=column, size=size, counter=counter).fit(df)
    out = numberer.transform(df)
    lengths = out[column].value_counts()
    rule = (f"a new block every {int(size)} rows" if size is not None
            else f"a new block wherever '{counter}' does not rise by one from the row before")
    said = f"'{column}' numbers {len(lengths):,} blocks ({rule})"
    report = StepReport.between("number_blocks", df, out, transformer=numberer, details={
        "column": column, "rule": rule, "said": said, "blocks": int(len(lengths)),
        "shortest": int(lengths.min()) if len(lengths) else 0, "longest": int(lengths.max()) if len(lengths) else 0})
    return out, report


__all__ = ["BlockNumberer", "number_blocks"]
