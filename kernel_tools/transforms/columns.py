"""Column drops and duplicate rows."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from kernel_tools.lazy import lazy_aware

from ._base import FrameTransformer, check_columns, check_frame
from .report import StepReport


class ColumnDropper(FrameTransformer):
    """Drop a fixed list of columns; fitted so the same columns go from the test split too."""

    def __init__(self, columns: Sequence[str] = (), reason: str | None = None) -> None:
        self.columns = columns
        self.reason = reason

    def fit(self, X: pd.DataFrame, y: Any = None) -> ColumnDropper:
        X = self._remember_input(X)
        self.columns_ = check_columns(X, self.columns)
        dropped = set(self.columns_)
        self.feature_names_out_ = [c for c in X.columns if c not in dropped]
        return self

    def transform(self, X: pd.DataFrame) -> pd.DataFrame:
        X = self._check_transform_input(X)
        return X.drop(columns=[c for c in self.columns_ if c in X.columns])


@lazy_aware()
def drop_columns(
    df: pd.DataFrame, columns: Sequence[str] | str, reason: str | None = None
) -> tuple[pd.DataFrame, StepReport]:
    """Drop columns (leakage, identifiers, constants) and record why."""
    check_frame(df)
    columns = check_columns(df, columns)
    if not columns:
        raise ValueError("columns is empty: name at least one column to drop")
    dropper = ColumnDropper(columns=columns, reason=reason).fit(df)
    out = dropper.transform(df)
    report = StepReport.between(
        "drop_columns", df, out, details={"dropped": columns, "reason": reason}, transformer=dropper
    )
    return out, report


def _near_key(df: pd.DataFrame, decimals: int) -> pd.DataFrame:
    """Comparison key that ignores case, surrounding/double spaces and float noise."""
    key = {}
    for col in df.columns:
        s = df[col]
        if pd.api.types.is_float_dtype(s):
            key[col] = s.round(decimals)
        elif pd.api.types.is_object_dtype(s) or pd.api.types.is_string_dtype(s):
            key[col] = s.map(lambda v: " ".join(v.split()).casefold() if isinstance(v, str) else v)
        else:
            key[col] = s
    return pd.DataFrame(key, index=df.index)


@lazy_aware()
def deduplicate(
    df: pd.DataFrame,
    subset: Sequence[str] | None = None,
    keep: str | bool = "first",
    near: bool = False,
    decimals: int = 6,
) -> tuple[pd.DataFrame, StepReport]:
    """Remove duplicate rows; ``near=True`` also treats case/whitespace/float-noise variants as equal.

    Nothing is learned, so the report has no transformer: duplicates are a property of the
    training rows, not a rule to replay on new data.
    """
    check_frame(df)
    subset = check_columns(df, subset) or list(df.columns)
    if keep not in ("first", "last", False):
        raise ValueError(f"keep must be 'first', 'last' or False; got {keep!r}")
    if not isinstance(decimals, int) or decimals < 0:
        raise ValueError(f"decimals must be a non-negative integer; got {decimals!r}")
    frame = _near_key(df[subset], decimals) if near else df[subset]
    dup = frame.duplicated(keep=keep)
    out = df.loc[~dup.to_numpy()]
    details = {
        "duplicates_removed": int(dup.sum()),
        "subset": subset if len(subset) < df.shape[1] else "all columns",
        "keep": keep,
        "near": near,
        "example_index": [str(i) for i in df.index[dup.to_numpy()][:10]],
    }
    return out, StepReport.between("deduplicate", df, out, details=details)
