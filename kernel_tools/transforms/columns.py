"""Column drops, rows that are not data, and duplicate rows."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from kernel_tools.lazy import lazy_aware

from ._base import check_columns, check_frame
from .dropping import ColumnDropper, rows_matching
from .report import StepReport


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


@lazy_aware()
def drop_rows(
    df: pd.DataFrame,
    where: Sequence[Mapping[str, Any]] = (),
    index: Sequence[Any] | None = None,
    reason: str | None = None,
) -> tuple[pd.DataFrame, StepReport]:
    """Remove rows that are not data: a header repeated inside the table, a total.

    ``where`` lists records ``{column: value}``: a row goes when its cells, read as text, equal
    every value of one record (``{"age": "age", "bp": "bp"}`` for a repeated header,
    ``{"name": "Total"}`` for a labelled total); a rule, so it reads the same on new data.
    ``index`` adds rows by their labels (an unlabelled total). Nothing is learned.
    """
    check_frame(df)
    where = list(where)
    check_columns(df, sorted({c for record in where for c in record}))
    labels = list(index or [])
    missing = [i for i in labels if i not in df.index]
    if missing:
        raise KeyError(f"no rows labelled {missing[:5]} in the frame (they may be gone already)")
    if not where and not labels:
        raise ValueError("name the rows to drop: where=[{column: value}] or index=[labels]")
    drop = df.index.isin(labels)
    if where:
        drop |= rows_matching(df, where).to_numpy()
    out = df.loc[~drop]
    details = {"rows_removed": int(drop.sum()), "where": where, "index": [str(i) for i in labels],
               "reason": reason, "example_index": [str(i) for i in df.index[drop][:10]]}
    return out, StepReport.between("drop_rows", df, out, details=details)


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
