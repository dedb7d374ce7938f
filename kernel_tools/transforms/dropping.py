"""Dropping columns and matching rows: the pandas parts the lazy drops build on too."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from ._base import FrameTransformer, check_columns


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


def rows_matching(df: Any, where: Sequence[Mapping[str, Any]]) -> Any:
    """Rows whose cells, read as text, equal one record of ``where`` in every column it names
    (a pandas or a Dask frame: the mask is built column-wise, the same way for both)."""
    mask = None
    for record in where:
        if not record:
            raise ValueError("an empty record in where would match every row")
        match = None
        for column, value in record.items():
            cell = df[column].astype(str).str.strip() == str(value).strip()
            match = cell if match is None else match & cell
        mask = match if mask is None else mask | match
    return mask
