"""Extreme values: flag, clip, set missing or remove, with bounds learned on train only."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from kernel_tools.lazy import lazy_aware

from ._base import FrameTransformer, check_choice, check_columns, check_frame, is_numeric
from .report import StepReport

METHODS = ("iqr", "mad", "isolation_forest")
ACTIONS = ("flag", "clip", "set_missing", "remove")
DEFAULT_THRESHOLD = {"iqr": 1.5, "mad": 3.5, "isolation_forest": 0.01}
FLAG = "outlier"  # the one flag column of isolation_forest (a row, not a value, is unusual)


class OutlierHandler(FrameTransformer):
    """Apply the bounds (or isolation forest) learned on the training frame to any frame.

    action: "flag" (adds ``<col>_outlier`` 0/1 columns, or one ``outlier`` column for
    isolation_forest), "clip" (to the training bounds), "set_missing", or "passthrough".
    Removing rows cannot be part of a pipeline applied to new data (test rows must all be
    scored), so ``handle_outliers(action="remove")`` returns this transformer with "clip"
    (univariate methods) or "passthrough" (isolation_forest). ``bounds`` (column -> [low, high],
    either may be None) are fixed, not learned: a codebook's valid range.
    """

    def __init__(
        self,
        columns: Sequence[str] | None = None,
        action: str = "flag",
        method: str = "iqr",
        threshold: float | None = None,
        random_state: int = 0,
        bounds: Mapping[str, Sequence[float | None]] | None = None,
    ) -> None:
        self.columns = columns
        self.action = action
        self.method = method
        self.threshold = threshold
        self.random_state = random_state
        self.bounds = bounds

    def fit(self, X: pd.DataFrame, y: Any = None) -> OutlierHandler:
        X = self._remember_input(X)
        check_choice(self.method, "method", METHODS)
        check_choice(self.action, "action", ("flag", "clip", "set_missing", "passthrough"))
        columns = check_columns(X, self.columns) if self.columns is not None else [c for c in X.columns if is_numeric(X[c])]
        bad = [c for c in columns if not is_numeric(X[c])]
        if bad:
            raise TypeError(f"outlier detection needs numeric columns; not numeric: {bad[:5]} (run fix_dtypes first?)")
        if not columns:
            raise ValueError("no numeric columns to check for outliers")
        k = DEFAULT_THRESHOLD[self.method] if self.threshold is None else float(self.threshold)
        if k <= 0 or (self.method == "isolation_forest" and k >= 0.5):
            raise ValueError(f"threshold {k!r} is out of range for method {self.method!r}")
        self.threshold_ = k
        self.columns_ = list(columns)
        self.bounds_: dict[str, list[float]] = {}
        self.skipped_: dict[str, str] = {}
        self.forest_ = None
        if self.method == "isolation_forest":
            if self.action in ("clip", "set_missing"):
                raise ValueError("isolation_forest finds unusual rows, not values: use action 'flag' or 'remove'")
            from sklearn.ensemble import IsolationForest

            self.medians_ = X[columns].median()
            self.forest_ = IsolationForest(contamination=k, random_state=self.random_state)
            self.forest_.fit(X[columns].fillna(self.medians_))
        else:
            for col in columns:
                if self.bounds is not None and col in self.bounds:
                    lo, hi = self.bounds[col]
                    self.bounds_[col] = [-np.inf if lo is None else float(lo), np.inf if hi is None else float(hi)]
                    continue
                s = X[col].dropna().astype(float)
                if self.method == "iqr":
                    q1, q3 = s.quantile([0.25, 0.75])
                    spread, center = q3 - q1, None
                    lo, hi = q1 - k * spread, q3 + k * spread
                else:
                    center = s.median()
                    spread = 1.4826 * (s - center).abs().median()
                    lo, hi = center - k * spread, center + k * spread
                if not np.isfinite(spread) or spread == 0:
                    self.skipped_[str(col)] = "no spread (most values are equal)"
                    continue
                self.bounds_[col] = [float(lo), float(hi)]
        flags = [FLAG] if self.forest_ is not None else [f"{c}_outlier" for c in self.bounds_]
        self.flag_columns_ = flags if self.action == "flag" else []
        clash = [c for c in self.flag_columns_ if c in X.columns]
        if clash:
            raise ValueError(f"flag columns would overwrite existing columns: {clash[:5]}")
        self.feature_names_out_ = [str(c) for c in X.columns] + self.flag_columns_
        return self

    def outlier_mask(self, X: pd.DataFrame) -> pd.DataFrame:
        """Boolean frame: which values (or rows, for isolation_forest: column ``outlier``) are outliers."""
        if self.forest_ is not None:
            pred = self.forest_.predict(X[self.columns_].fillna(self.medians_))
            return pd.DataFrame({FLAG: pred == -1}, index=X.index)
        return pd.DataFrame(
            {c: (X[c] < lo) | (X[c] > hi) for c, (lo, hi) in self.bounds_.items()}, index=X.index
        )

    def transform(self, X: pd.DataFrame) -> pd.DataFrame:
        X = self._check_transform_input(X, required=self.columns_)
        out = X.copy()
        if self.action == "passthrough":
            return out
        mask = self.outlier_mask(X)
        if self.action == "flag":
            for col, name in zip(mask.columns, self.flag_columns_):
                out[name] = mask[col].astype(int)
        elif self.action == "clip":
            for col, (lo, hi) in self.bounds_.items():
                out[col] = X[col].clip(lo, hi)
        else:
            for col in mask.columns:
                out[col] = X[col].mask(mask[col])
        return out


@lazy_aware(fitted=True)
def handle_outliers(
    df: pd.DataFrame,
    columns: Sequence[str] | None = None,
    action: str = "flag",
    method: str = "iqr",
    threshold: float | None = None,
    target: str | None = None,
    random_state: int = 0,
    bounds: Mapping[str, Sequence[float | None]] | None = None,
) -> tuple[pd.DataFrame, StepReport]:
    """Find extreme values and flag, clip, set missing, or remove them.

    method: "iqr" (outside Q1 - t*IQR .. Q3 + t*IQR, t=1.5), "mad" (outside median -+ t*1.4826*MAD,
    t=3.5) per column, or "isolation_forest" (unusual rows; t = expected share, 0.01).
    With ``columns=None`` every numeric column except ``target`` is checked.
    "remove" drops rows with any outlier here and returns a transformer that clips new data
    instead (new rows must never be dropped from a test set).
    ``bounds``: column -> [low, high] (either may be None) used instead of the method's learned
    bounds, e.g. a codebook's valid range; with ``columns=None`` only those columns are checked.
    """
    check_frame(df)
    check_choice(action, "action", ACTIONS)
    check_choice(method, "method", METHODS)
    if target is not None:
        check_columns(df, [target], "target column")
    if columns is None:
        columns = list(bounds) if bounds else [c for c in df.columns if c != target and is_numeric(df[c])]
    fit_action = "flag" if action == "remove" else action
    handler = OutlierHandler(columns, fit_action, method, threshold, random_state, bounds).fit(df)
    mask = handler.outlier_mask(df)
    counts = {str(c): int(mask[c].sum()) for c in mask.columns}
    if action == "remove":
        out = df.loc[~mask.any(axis=1).to_numpy()]
        replay = "passthrough" if method == "isolation_forest" else "clip"
        handler = OutlierHandler(columns, replay, method, threshold, random_state, bounds).fit(df)
    else:
        out = handler.transform(df)
    details = {
        "method": method,
        "threshold": handler.threshold_,
        "action": action,
        "outliers": counts,
        "rows_with_outliers": int(mask.any(axis=1).sum()),
        "bounds": {str(c): b for c, b in handler.bounds_.items()},
        "skipped_columns": handler.skipped_,
        "applied_to_new_data_as": handler.action,
    }
    warnings = []
    if action == "remove" and len(df) and (len(df) - len(out)) / len(df) > 0.05:
        warnings.append(f"removed {len(df) - len(out)} of {len(df)} rows (> 5%)")
    return out, StepReport.between("handle_outliers", df, out, details=details, warnings=warnings, transformer=handler)
