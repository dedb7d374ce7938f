"""The candidate model pipelines: every encoding lives inside them, so the user never has to
one-hot or impute by hand and the fitted pipeline runs on raw data.

Everything here is module-level (no lambdas) so fitted pipelines pickle.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, RegressorMixin, TransformerMixin, clone
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler
from sklearn.utils.validation import check_is_fitted

from kernel_tools.models.fences import FAR_OUT, far_out_fences
from kernel_tools.models.survival import AFTEstimator, CoxPHEstimator, GradientBoostedCox
from kernel_tools.vocabulary import TaskKind

# HistGradientBoosting takes category codes below max_bins (255); the last code means "other".
MAX_CATEGORIES = 254
_MAX_ONEHOT_CATEGORIES = 20
_MIN_ONEHOT_ROWS = 5  # rarer levels pool into one column: a level in 3 rows is noise to a linear model


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
        # one float block, filled in place: a frame built from a dict of columns checks each one
        # (~2 ms of ~3 a call on 250 rows x 50 columns; a search transforms before every fit and prediction)
        out = np.empty((len(X), len(self.numeric) + len(self.categorical)), dtype="float64")
        _numeric_block(X, self.numeric, out)
        for j, name in enumerate(self.categorical, start=len(self.numeric)):
            text = _as_text(X[name]).to_numpy()
            known = self.categories_[name]
            # a level's position among the known (unique, never missing), -1 for any other value:
            # Categorical's codes without building one (~1 ms a column a call)
            codes = pd.Index(known, dtype=object).get_indexer(text).astype("float64")
            other = ~pd.isna(text) & (codes < 0)
            codes[codes < 0] = np.nan
            codes[other] = len(known)
            out[:, j] = codes
        # string names: scikit-learn rejects mixed int/str column names
        return pd.DataFrame(out, index=X.index, columns=self.get_feature_names_out(), copy=False)

    def get_feature_names_out(self, input_features=None) -> np.ndarray:
        return np.asarray([str(c) for c in [*self.numeric, *self.categorical]], dtype=object)

    def _check(self, X) -> None:
        if not isinstance(X, pd.DataFrame):
            raise TypeError(f"the model expects a pandas DataFrame, got {type(X).__name__}")
        missing = [c for c in [*self.numeric, *self.categorical] if c not in X.columns]
        if missing:
            raise KeyError(f"columns the model was trained on are missing: {missing}")


def _numeric_block(X: pd.DataFrame, names: Sequence[str], out: np.ndarray) -> None:
    """The numeric columns as float64 into ``out``'s first columns: the whole block in one
    conversion (a transform runs before every fit and prediction of a search; column by column
    took ~10x longer), column by column where one needs parsing."""
    if not len(names):
        return
    try:
        out[:, :len(names)] = X[list(names)].to_numpy(dtype="float64", na_value=np.nan)
    except (TypeError, ValueError):
        for j, name in enumerate(names):
            out[:, j] = _as_float(X[name])


def _as_float(column: pd.Series) -> np.ndarray:
    """float64 values (no copy when they already are); unparseable entries become NaN."""
    try:
        return column.to_numpy(dtype="float64", na_value=np.nan)
    except (TypeError, ValueError):
        return pd.to_numeric(column, errors="coerce").to_numpy(dtype="float64", na_value=np.nan)


def _as_text(column: pd.Series) -> pd.Series:
    """Values as strings, missing kept missing: mixed-type columns encode consistently (a
    column of strings already is: taken as it is)."""
    if column.dtype == object and pd.api.types.infer_dtype(column, skipna=True) in ("string", "empty"):
        return column
    return column.astype(str).where(column.notna().to_numpy(), np.nan).astype(object)


class MissingPatterns(TransformerMixin, BaseEstimator):
    """One 0/1 "was missing" column per distinct missingness pattern seen at fit.

    Measurements taken together (a lab panel) go missing together: one indicator per column
    repeated the same column up to ten times, doubling the width of a wide table for nothing
    and making the linear models' problem singular. Columns never missing at fit get none.
    """

    def fit(self, X, y=None) -> MissingPatterns:
        missing = np.isnan(np.asarray(X, dtype=float))
        seen: dict[bytes, int] = {}
        for j in np.flatnonzero(missing.any(axis=0)):
            seen.setdefault(np.packbits(missing[:, j]).tobytes(), int(j))
        self.columns_ = np.asarray(sorted(seen.values()), dtype=int)
        self.n_features_in_ = missing.shape[1]
        return self

    def transform(self, X) -> np.ndarray:
        check_is_fitted(self, "columns_")
        return np.isnan(np.asarray(X, dtype=float)[:, self.columns_]).astype("float64")

    def get_feature_names_out(self, input_features=None) -> np.ndarray:
        names = input_features if input_features is not None else [f"x{i}" for i in range(self.n_features_in_)]
        return np.asarray([f"missing_{names[j]}" for j in self.columns_], dtype=object)


class FarOutClip(OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Clip each column to its far-out fences learned at fit (:func:`far_out_fences`), drawn on
    the log scale for a column of positive values.

    A linear model extrapolates along a value typed x100 (a blood pressure of 10,831): one such
    value in a validation fold made a Ridge fold score R² -937. Trees are immune (they split on
    order); a linear model needs the tails bounded. Values inside the fences, the bulk of any
    column, are untouched, so coefficients keep their meaning. A positive measure spreads by
    factors (assets, counts, prices): fences on its own scale clipped the real assets of the
    largest firms (Ornstein, a Ridge 0.56 -> 0.32), on the log scale they do not, and a value typed
    x100 is still 4.6 log units out. The fences may lie beyond the fitted range: a trend (a year,
    a growing GNP) continues past it in a later row, and holding such values to the range cost a
    16-row table (Longley) a fold at R² -2.47.
    """

    def __init__(self, k: float = FAR_OUT):
        self.k = k

    def fit(self, X, y=None) -> FarOutClip:
        values = np.asarray(X, dtype=float)
        positive = np.nanmin(values, axis=0) > 0
        lower, upper = far_out_fences(values, self.k)
        log_lower, log_upper = far_out_fences(np.log(np.where(positive, values, 1.0)), self.k)
        self.lower_ = np.where(positive, np.exp(log_lower), lower)
        self.upper_ = np.where(positive, np.exp(log_upper), upper)
        self.n_features_in_ = values.shape[1]
        return self

    def transform(self, X) -> np.ndarray:
        check_is_fitted(self, "lower_")
        return np.clip(np.asarray(X, dtype=float), self.lower_, self.upper_)


class WithinTargetFences(RegressorMixin, BaseEstimator):
    """A regressor whose predictions are clipped to the far-out fences of the target it was
    fitted on (:func:`far_out_fences`, never inside its observed range).

    A model must not predict far outside what it learned from: a linear model meeting an
    unusual row extrapolates without bound, and one wild prediction decides a fold's R². A
    prediction a little past the largest target seen is often right (the next year of a trend,
    the biggest tree): clipping at the observed range cost Longley's cross-validated R² 0.885 ->
    0.676, so only predictions beyond the fences are held.
    """

    def __init__(self, regressor: Any, k: float = FAR_OUT):
        self.regressor = regressor
        self.k = k

    def fit(self, X, y) -> WithinTargetFences:
        self.regressor_ = clone(self.regressor).fit(X, y)
        target = np.asarray(y, dtype=float).reshape(-1, 1)
        lower, upper = far_out_fences(target, self.k)
        self.range_ = (min(float(lower[0]), float(np.nanmin(target))), max(float(upper[0]), float(np.nanmax(target))))
        self.n_features_in_ = getattr(self.regressor_, "n_features_in_", np.asarray(X).shape[1])
        return self

    def predict(self, X) -> np.ndarray:
        check_is_fitted(self, "range_")
        return np.clip(self.regressor_.predict(X), *self.range_)


def _linear_encoder(numeric: list[int], categorical: list[int]) -> ColumnTransformer:
    """Impute, bound the far tails of and scale numbers (plus one indicator per missingness
    pattern), one-hot category codes (the most frequent levels; the rest pooled)."""
    numeric_steps = Pipeline([("impute", SimpleImputer(strategy="median")), ("bound", FarOutClip()),
                              ("scale", StandardScaler())])
    categorical_steps = Pipeline(
        [
            ("impute", SimpleImputer(strategy="constant", fill_value=-1.0)),
            (
                "onehot",
                OneHotEncoder(
                    handle_unknown="infrequent_if_exist",
                    max_categories=_MAX_ONEHOT_CATEGORIES,
                    min_frequency=_MIN_ONEHOT_ROWS,
                    sparse_output=False,
                ),
            ),
        ]
    )
    return ColumnTransformer(
        [("num", numeric_steps, numeric), ("missing", MissingPatterns(), numeric),
         ("cat", categorical_steps, categorical)],
        remainder="drop",
    )


@dataclass
class Candidate:
    """One model family ``fit_evaluate`` cross-validates.

    ``explainable``: a linear model whose coefficients read directly; it is chosen whenever it
    is within noise of the best. ``grid``: hyper-parameter settings (pipeline parameter names)
    a successive-halving search picks from; the first is the library default. ``cost``: rough
    fit cost relative to the linear model, so a time budget can skip what would not fit.
    """

    name: str
    pipeline: Pipeline
    explainable: bool = False
    grid: list[dict[str, Any]] = field(default_factory=list)
    cost: float = 1.0


# Small-data friendly settings around the default: shallower trees, slower learning, more
# regularisation; early stopping sizes each one.
_TREE_GRID = [
    {},
    {"model__learning_rate": 0.05, "model__max_leaf_nodes": 15, "model__l2_regularization": 1.0},
    {"model__learning_rate": 0.05, "model__max_leaf_nodes": 7, "model__min_samples_leaf": 40,
     "model__l2_regularization": 1.0},
    {"model__learning_rate": 0.05, "model__max_leaf_nodes": 4, "model__max_iter": 400},
    {"model__learning_rate": 0.1, "model__max_leaf_nodes": 63, "model__min_samples_leaf": 10},
    {"model__learning_rate": 0.03, "model__min_samples_leaf": 50, "model__max_features": 0.5,
     "model__l2_regularization": 1.0, "model__max_iter": 400},
]


# early stopping holds out 10% of a fit's rows, stratified: on the folds of a table under this
# size that is one row, fewer than the classes, and every tree fit fails (a 13-row table: "test_size
# = 1 should be greater or equal to the number of classes = 2")
EARLY_STOP_ROWS = 40


class _EntityStopping:
    """HistGradientBoosting whose early stopping holds out whole entities. Its own inner split is
    by rows: with several rows per entity the same entity sits on both sides, the held-out loss
    keeps falling as the trees learn the entities, and the fit runs 2-5x the rounds a split by
    entity chooses (synthetic entities of 5-20 rows, docs/benchmarks.md, Session 17). ``groups``
    (one code per row) is passed by :class:`EntityPipeline`; without it, or without early
    stopping, the fit is scikit-learn's."""

    early_stopping: Any
    validation_fraction: float
    random_state: Any

    def fit(self, X, y, sample_weight=None, groups=None):
        if groups is None or self.early_stopping is not True or len(np.unique(groups)) < 2:
            return super().fit(X, y, sample_weight)  # type: ignore[misc]
        from sklearn.model_selection import GroupShuffleSplit

        split = GroupShuffleSplit(1, test_size=self.validation_fraction, random_state=self.random_state)
        fit_rows, val_rows = next(split.split(X, y, groups))
        y = np.asarray(y)
        if isinstance(self, HistGradientBoostingClassifier) and not (
                len(np.unique(y[fit_rows])) == len(np.unique(y)) and len(np.unique(y[val_rows])) > 1):
            return super().fit(X, y, sample_weight)  # type: ignore[misc]  # a class on one side only
        from sklearn.utils import _safe_indexing

        weights = (None, None) if sample_weight is None else (sample_weight[fit_rows], sample_weight[val_rows])
        return super().fit(_safe_indexing(X, fit_rows), y[fit_rows], weights[0],  # type: ignore[misc]
                           X_val=_safe_indexing(X, val_rows), y_val=y[val_rows], sample_weight_val=weights[1])


class EntityStoppedClassifier(_EntityStopping, HistGradientBoostingClassifier):
    """:class:`HistGradientBoostingClassifier` stopped early on held-out entities."""


class EntityStoppedRegressor(_EntityStopping, HistGradientBoostingRegressor):
    """:class:`HistGradientBoostingRegressor` stopped early on held-out entities."""


class EntityPipeline(Pipeline):
    """A pipeline whose model stops early on held-out entities: ``entities`` (an entity code
    for each training row, by the rows' index) is looked up for the rows each fit is given
    (a fold, a search's subset) and passed to the model's ``fit`` as ``groups``."""

    def __init__(self, steps, *, entities: pd.Series | None = None, transform_input=None, memory=None,
                 verbose=False):
        super().__init__(steps, transform_input=transform_input, memory=memory, verbose=verbose)
        self.entities = entities

    def fit(self, X, y=None, **params):
        if self.entities is not None and isinstance(X, pd.DataFrame) and X.index.isin(self.entities.index).all():
            params = {**params, f"{self.steps[-1][0]}__groups": self.entities.reindex(X.index).to_numpy()}
        return super().fit(X, y, **params)


def entity_codes(train: pd.DataFrame, groups: str | None) -> pd.Series | None:
    """Each training row's entity code by its index, when rows repeat an entity (else None:
    a row split is an entity split) and the index names each row once."""
    if groups is None or not train.index.is_unique or not train[groups].duplicated().any():
        return None
    return pd.Series(pd.factorize(train[groups])[0], index=train.index)


def candidates(
    task: str,
    numeric: list[str],
    categorical: list[str],
    *,
    class_weight: str | None,
    random_state: int,
    rows: int | None = None,
    entities: pd.Series | None = None,
) -> list[Candidate]:
    """The unfitted candidates for ``task``, explainable first; ``rows`` the training rows, when
    known (a tiny classification stops the trees' early stopping: see ``EARLY_STOP_ROWS``);
    ``entities``: the rows' entity codes (:func:`entity_codes`) the trees' early stopping holds
    out whole."""
    features = FeatureFrame(numeric=list(numeric), categorical=list(categorical))
    # FeatureFrame puts numeric columns first; the encoders select by position
    numeric_at = list(range(len(numeric)))
    categorical_at = list(range(len(numeric), len(numeric) + len(categorical)))

    def encoded(model) -> Pipeline:
        return Pipeline([("features", clone(features)), ("encode", _linear_encoder(numeric_at, categorical_at)),
                         ("model", model)])

    if task == TaskKind.SURVIVAL:
        return [
            Candidate("CoxPH (penalized)", encoded(CoxPHEstimator(penalizer=0.1)), explainable=True),
            Candidate("Weibull AFT", encoded(AFTEstimator("weibull", penalizer=0.01)), cost=3.0),
            # trees split on category codes and NaN natively: no further encoding
            Candidate("Gradient-boosted Cox",
                      Pipeline([("features", clone(features)),
                                ("model", GradientBoostedCox(random_state=random_state))]),
                      cost=2.0),
        ]
    mask = [False] * len(numeric) + [True] * len(categorical)
    categorical_features = mask if any(mask) else None
    stop = not (task == TaskKind.CLASSIFICATION and rows is not None and rows < EARLY_STOP_ROWS)
    settings = {"categorical_features": categorical_features, "random_state": random_state,
                "early_stopping": stop, "max_iter": 300}
    grouped = entities is not None and stop
    if task == TaskKind.CLASSIFICATION:
        tree_class = EntityStoppedClassifier if grouped else HistGradientBoostingClassifier
        tree = tree_class(class_weight=class_weight, **settings)
        linear = LogisticRegression(max_iter=2000, class_weight=class_weight)
        names = ("LogisticRegression", "HistGradientBoostingClassifier")
    else:
        tree = (EntityStoppedRegressor if grouped else HistGradientBoostingRegressor)(**settings)
        linear = WithinTargetFences(Ridge(alpha=1.0))
        names = ("Ridge", "HistGradientBoostingRegressor")
    tree_steps = [("features", clone(features)), ("model", tree)]
    return [
        Candidate(names[0], encoded(linear), explainable=True),
        Candidate(names[1], EntityPipeline(tree_steps, entities=entities) if grouped else Pipeline(tree_steps),
                  grid=[dict(g) for g in _TREE_GRID], cost=3.0),
    ]
