"""An ordered target's levels recoded as their ranks, so a regression can use their order.

An answer scale (no < perhaps < yes), a severity (none < mild < severe) or R's ordered factor
is an ordered score: a classifier treats its levels as unrelated and throws the order away. A
regression on the ranks 1, 2, ..., k keeps it, and its errors count how many levels apart a
prediction is. The mapping is the expert's (the task card asks it): it is written in the cell
and fitted as a transformer, so a test file's labels are ranked the same way. Blank labels are
missing values; a label that is not one of the levels stops the step rather than being guessed.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ._base import FrameTransformer, check_columns, check_frame
from .report import StepReport


def _labels(s: pd.Series) -> pd.Series:
    """The labels as text, missing where missing or blank (a category's label as it reads)."""
    text = s.astype(str).str.strip().where(s.notna())
    return text.mask(text.eq(""))


class LevelRanker(FrameTransformer):
    """``column``: the i-th of ``levels`` -> i (1-based), missing and blank kept missing."""

    def __init__(self, column: str = "", levels: list | None = None) -> None:
        self.column = column
        self.levels = levels

    def fit(self, X: pd.DataFrame, y: Any = None) -> LevelRanker:
        X = self._remember_input(X)
        check_columns(X, [self.column])
        levels = [str(v).strip() for v in (self.levels or [])]
        if len(levels) < 2 or len(set(levels)) != len(levels):
            raise ValueError(f"levels must name at least two distinct labels in their order; got {self.levels!r}")
        self.ranks_ = {label: i for i, label in enumerate(levels, 1)}
        self._unknown(X)  # fitted on labels it cannot read: said now, not at the model
        self.feature_names_out_ = list(X.columns)
        return self

    def _unknown(self, X: pd.DataFrame) -> None:
        labels = _labels(X[self.column])
        unknown = sorted(set(labels.dropna()) - set(self.ranks_))
        if unknown:
            raise ValueError(
                f"{self.column!r} holds labels that are not among its levels "
                f"({' < '.join(self.ranks_)}): {unknown[:5]}; add them to the levels in their place"
            )

    def transform(self, X: pd.DataFrame) -> pd.DataFrame:
        X = self._check_transform_input(X, [self.column])
        if pd.api.types.is_numeric_dtype(X[self.column]) and not self._numeric_levels():
            return X  # already ranked (the test split of a frame ranked before it was split)
        self._unknown(X)
        ranks = _labels(X[self.column]).map(self.ranks_).astype(float)
        if not ranks.isna().any():
            ranks = ranks.astype(np.int64)
        return X.assign(**{self.column: ranks})

    def _numeric_levels(self) -> bool:
        return all(pd.notna(pd.to_numeric(level, errors="coerce")) for level in self.ranks_)


def rank_levels(df: pd.DataFrame, column: str, levels: list) -> tuple[pd.DataFrame, StepReport]:
    """Recode ``column``'s labels as their ranks in ``levels`` (lowest first: 1, 2, ...), so a
    regression uses their order; the report's transformer ranks new data the same way."""
    check_frame(df)
    ranker = LevelRanker(column=column, levels=list(levels)).fit(df)
    out = ranker.transform(df)
    counts = _labels(df[column]).value_counts()
    mapping = ", ".join(f"{label} -> {rank}" for label, rank in ranker.ranks_.items())
    said = f"'{column}' ranked in its order: {mapping}"
    report = StepReport.between(
        "rank_levels",
        df,
        out,
        transformer=ranker,
        details={
            "column": column,
            "levels": list(ranker.ranks_),
            "ranks": dict(ranker.ranks_),
            "said": said,
            "rows_per_level": {label: int(counts.get(label, 0)) for label in ranker.ranks_},
        },
    )
    return out, report


__all__ = ["LevelRanker", "rank_levels"]
