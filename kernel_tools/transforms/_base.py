"""Shared input checks and the pandas-in/pandas-out transformer base."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted


def check_frame(df: Any, name: str = "df") -> pd.DataFrame:
    """``df`` itself; TypeError if it is not a DataFrame, ValueError if column names repeat
    (``df[name]`` would then be a frame, not a column: every step would be ambiguous)."""
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"{name} must be a pandas DataFrame, got {type(df).__name__}")
    if not df.columns.is_unique:
        repeated = list(dict.fromkeys(df.columns[df.columns.duplicated()]))[:10]
        raise ValueError(f"{name} has repeated column names {repeated}: rename them first, e.g. "
                         f"{name}.columns = [f'{{c}}_{{i}}' for i, c in enumerate({name}.columns)]")
    return df


def check_columns(df: pd.DataFrame, columns: Any, what: str = "column") -> list:
    """Return ``columns`` as a list, raising KeyError naming any that ``df`` lacks."""
    if columns is None:
        return []
    if isinstance(columns, (str, int)) or not isinstance(columns, Iterable):
        columns = [columns]
    columns = list(columns)
    missing = [c for c in columns if c not in df.columns]
    if missing:
        shown = ", ".join(repr(c) for c in missing[:10])
        raise KeyError(f"{what} not in the frame: {shown} (it has {df.shape[1]} columns)")
    return columns


def check_choice(value: Any, name: str, choices: Iterable[str]) -> str:
    choices = tuple(choices)
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, choices))}; got {value!r}")
    return value


def is_categorical(series: pd.Series) -> bool:
    """Text, category and boolean columns: imputed and encoded as labels, not numbers."""
    return (
        isinstance(series.dtype, pd.CategoricalDtype)
        or pd.api.types.is_object_dtype(series)
        or pd.api.types.is_string_dtype(series)
        or pd.api.types.is_bool_dtype(series)
    )


def is_numeric(series: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series)


class FrameTransformer(TransformerMixin, BaseEstimator):
    """Base for the fitted steps: DataFrame in, DataFrame out, fit once, replay unchanged.

    Outputs are always pandas, so ``set_output`` accepts "pandas" (and "default") and is a
    no-op; it exists so a Pipeline's ``set_output(transform="pandas")`` works.
    """

    def set_output(self, *, transform: str | None = None) -> FrameTransformer:
        if transform not in (None, "default", "pandas"):
            raise ValueError(f"{type(self).__name__} only outputs pandas DataFrames; got {transform!r}")
        return self

    def _remember_input(self, X: Any) -> pd.DataFrame:
        X = check_frame(X, "X")
        self.feature_names_in_ = np.asarray([str(c) for c in X.columns], dtype=object)
        self.n_features_in_ = X.shape[1]
        return X

    def _check_transform_input(self, X: Any, required: Iterable = ()) -> pd.DataFrame:
        check_is_fitted(self, "feature_names_in_")
        X = check_frame(X, "X")
        missing = [c for c in required if c not in X.columns]
        if missing:
            raise KeyError(
                f"{type(self).__name__} was fitted with columns the new frame lacks: "
                + ", ".join(repr(c) for c in missing[:10])
            )
        return X

    def get_feature_names_out(self, input_features: Any = None) -> np.ndarray:
        check_is_fitted(self, "feature_names_out_")
        return np.asarray(self.feature_names_out_, dtype=object)
