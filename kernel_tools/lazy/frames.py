"""Relational work on lazy frames, written once with narwhals expressions.

Each function takes and returns the engine's own (native) lazy frame; narwhals translates the
expressions to Dask here, and to Spark, DuckDB or polars' lazy engine on those. Nothing here
computes: results are computed together, once per pass, by :func:`kernel_tools.lazy.engine.compute`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd


def _nw() -> Any:
    import narwhals as nw

    return nw


def lazy(df: Any) -> Any:
    """The narwhals LazyFrame over a native lazy frame."""
    return _nw().from_native(df)


def column_stats(df: Any, columns: Sequence[str], numeric: Sequence[str]) -> Any:
    """One lazy row: per column the missing count (NaN counts as missing, as in pandas), and per
    numeric column its finite min and max, infinite values and non-integer values."""
    nw = _nw()
    exprs = [nw.col(c).null_count().alias(f"null|{c}") for c in columns]
    for c in numeric:
        col = nw.col(c)
        finite = col.is_finite().fill_null(False)
        exprs += [
            nw.when(finite).then(col).min().alias(f"min|{c}"),
            nw.when(finite).then(col).max().alias(f"max|{c}"),
            (~finite & ~col.is_null()).cast(nw.Int64).sum().alias(f"inf|{c}"),
            (finite & ((col - col.round(0)).abs() > 0)).cast(nw.Int64).sum().alias(f"frac|{c}"),
        ]
    return lazy(df).select(*exprs).to_native()


def unpack_stats(row: pd.DataFrame) -> dict[str, dict[str, Any]]:
    """``{"null": {column: n}, "min": {...}, ...}`` from the computed :func:`column_stats` row."""
    out: dict[str, dict[str, Any]] = {}
    for key, value in row.iloc[0].items():
        stat, column = str(key).split("|", 1)
        out.setdefault(stat, {})[column] = value
    return out


def drop(df: Any, columns: Sequence[str]) -> Any:
    return lazy(df).drop(list(columns)).to_native()


def unique(df: Any, subset: Sequence[str] | None) -> Any:
    """One row of each set of equal rows (on ``subset``). Which of them is kept is the
    engine's choice: a lazy frame has no row order to say "the first"."""
    return lazy(df).unique(subset=list(subset) if subset else None, keep="any").to_native()
