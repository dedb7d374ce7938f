"""The candidate model pipelines: every encoding lives inside them, so the user never has to
one-hot or impute by hand and the fitted pipeline runs on raw data.

Everything here is module-level (no lambdas) so fitted pipelines pickle.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler
from sklearn.utils.validation import check_is_fitted

from kernel_tools.models.survival import CoxPHEstimator

# HistGradientBoosting takes category codes below max_bins (255); the last code means "other".
MAX_CATEGORIES = 254
_MAX_ONEHOT_CATEGORIES = 20


class FeatureFrame(TransformerMixin, BaseEstimator):
    """Select the model's feature columns and turn each into float64.

    Numeric and boolean columns become floats (pandas' nullable NA becomes NaN). Other columns
    become category codes learned at fit: the ``max_categories - 1`` most frequent values as
    text, one code for every other value (rare or unseen), NaN for missing. Encoding here with
    pandas is vectorised; scikit-learn's encoders loop in Python over object arrays, which
    made a few text columns cost more than the models.
    """

    def __init__(
        self,
        numeric: Sequence[str] = (),
        categorical: Sequence[str] = (),
        max_categories: int = MAX_CATEGORIES,
    ):
        self.numeric = numeric
        self.categorical = categorical
        self.max_categories = max_categories

    def fit(self, X: pd.DataFrame, y=None) -> FeatureFrame:
        self._check(X)
        self.categories_ = {}
        for name in self.categorical:
            counts = _as_text(X[name]).value_counts(sort=False).sort_index()
            counts = counts.sort_values(ascending=False, kind="stable")
            keep = counts.index if len(counts) < self.max_categories else counts.index[: self.max_categories - 1]
            self.categories_[name] = keep.tolist()
        self.n_features_in_ = len(self.numeric) + len(self.categorical)
        return self

    def transform(self, X: pd.DataFrame) -> pd.DataFrame:
        check_is_fitted(self, "categories_")
        self._check(X)
        # string names: scikit-learn rejects mixed int/str column names
        out = {str(name): _as_float(X[name]) for name in self.numeric}
        for name in self.categorical:
            text = _as_text(X[name])
            known = self.categories_[name]
            codes = pd.Categorical(text, categories=known).codes.astype("float64")
            other = text.notna().to_numpy() & (codes < 0)
            codes[codes < 0] = np.nan
            codes[other] = len(known)
            out[str(name)] = codes
        return pd.DataFrame(out, index=X.index)

    def get_feature_names_out(self, input_features=None) -> np.ndarray:
        return np.asarray([str(c) for c in [*self.numeric, *self.categorical]], dtype=object)

    def _check(self, X) -> None:
        if not isinstance(X, pd.DataFrame):
            raise TypeError(f"the model expects a pandas DataFrame, got {type(X).__name__}")
        missing = [c for c in [*self.numeric, *self.categorical] if c not in X.columns]
        if missing:
            raise KeyError(f"columns the model was trained on are missing: {missing}")


def _as_float(column: pd.Series) -> np.ndarray:
    """float64 values (no copy when they already are); unparseable entries become NaN."""
    try:
        return column.to_numpy(dtype="float64", na_value=np.nan)
    except (TypeError, ValueError):
        return pd.to_numeric(column, errors="coerce").to_numpy(dtype="float64", na_value=np.nan)


def _as_text(column: pd.Series) -> pd.Series:
    """Values as strings, missing kept missing: mixed-type columns encode consistently."""
    return column.astype(str).where(column.notna().to_numpy(), np.nan).astype(object)


def _linear_encoder(numeric: list[int], categorical: list[int]) -> ColumnTransformer:
    """Impute (with missing-indicators) and scale numbers, one-hot category codes."""
    numeric_steps = Pipeline(
        [
            ("impute", SimpleImputer(strategy="median", add_indicator=True)),
            ("scale", StandardScaler()),
        ]
    )
    categorical_steps = Pipeline(
        [
            ("impute", SimpleImputer(strategy="constant", fill_value=-1.0)),
            (
                "onehot",
                OneHotEncoder(
                    handle_unknown="infrequent_if_exist",
                    max_categories=_MAX_ONEHOT_CATEGORIES,
                    sparse_output=False,
                ),
            ),
        ]
    )
    return ColumnTransformer(
        [("num", numeric_steps, numeric), ("cat", categorical_steps, categorical)],
        remainder="drop",
    )


def candidate_pipelines(
    task: str,
    numeric: list[str],
    categorical: list[str],
    *,
    class_weight: str | None,
    random_state: int,
) -> dict[str, Pipeline]:
    """The unfitted candidates for ``task``, by display name."""
    features = FeatureFrame(numeric=list(numeric), categorical=list(categorical))
    # FeatureFrame puts numeric columns first; the encoders select by position
    numeric, categorical = (
        list(range(len(numeric))),
        list(range(len(numeric), len(numeric) + len(categorical))),
    )
    if task == "survival":
        return {
            "CoxPH (penalized)": Pipeline(
                [
                    ("features", features),
                    ("encode", _linear_encoder(numeric, categorical)),
                    ("model", CoxPHEstimator(penalizer=0.1)),
                ]
            )
        }
    categorical_features = [False] * len(numeric) + [True] * len(categorical)
    if not any(categorical_features):
        categorical_features = None
    if task == "classification":
        tree = HistGradientBoostingClassifier(
            categorical_features=categorical_features,
            class_weight=class_weight,
            random_state=random_state,
        )
        linear = LogisticRegression(max_iter=2000, class_weight=class_weight)
        names = ("HistGradientBoostingClassifier", "LogisticRegression")
    else:
        tree = HistGradientBoostingRegressor(
            categorical_features=categorical_features, random_state=random_state
        )
        linear = Ridge(alpha=1.0)
        names = ("HistGradientBoostingRegressor", "Ridge")
    return {
        # trees split on category codes and NaN natively: no further encoding
        names[0]: Pipeline([("features", features), ("model", tree)]),
        names[1]: Pipeline(
            [
                ("features", features),
                ("encode", _linear_encoder(numeric, categorical)),
                ("model", linear),
            ]
        ),
    }
