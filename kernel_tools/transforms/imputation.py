"""Missing values: simple statistics or a model-based imputer, fit on train only.

Model-based imputation uses hyperimpute's plugins when hyperimpute is installed (the
``[hyperimpute]`` extra: it needs torch) and scikit-learn's iterative and KNN imputers
otherwise, so the core install stays small and a notebook re-runs without hyperimpute.
"""

from __future__ import annotations

import contextlib
import importlib.util
import pickle
import time
import warnings as _warnings
from collections.abc import Mapping, Sequence
from typing import Any

import joblib
import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from kernel_tools.lazy import lazy_aware

from . import imputation_budget as budgeted
from ._base import FrameTransformer, check_choice, check_columns, check_frame, is_categorical
from .report import StepReport

METHODS = ("auto", "median", "mean", "most_frequent", "iterative", "knn", "hyperimpute", "missforest", "ice")
MODEL_METHODS = ("iterative", "knn", "hyperimpute", "missforest", "ice")
HYPERIMPUTE_METHODS = ("hyperimpute", "missforest", "ice")  # all run hyperimpute's iterative loop
# without hyperimpute, MissForest and ICE are scikit-learn's IterativeImputer (random forests /
# its default Bayesian ridge); "hyperimpute" itself, a model search, has no such equivalent
SKLEARN_EQUIVALENT = {"missforest": "IterativeImputer with random forests", "ice": "IterativeImputer"}
INSTALL_HINT = "pip install 'dcpilot-kernel-tools[hyperimpute]'"
# "auto" uses a model only where it can pay off and finish quickly
AUTO_MAX_ROWS = 50_000
AUTO_MIN_MISSING = 0.02
AUTO_MIN_CORRELATION = 0.3
# below this many cells (rows x columns the model uses) "auto" takes scikit-learn's iterative
# imputer even where hyperimpute is installed: scikit-learn is loaded already, while hyperimpute
# first loads torch (2-4 s on 2 cores), longer than the whole imputation takes at this size
# (1,000 rows x 48 columns: ~0.6 s against ~1 s + the imports; bench_scale.py's tables)
AUTO_LIGHT_MAX_CELLS = 100_000


def hyperimpute_available() -> bool:
    """Whether hyperimpute can be imported here (checked without importing it: torch is slow)."""
    try:
        return importlib.util.find_spec("hyperimpute") is not None
    except (ImportError, ValueError):  # a parent package missing, or a module without a spec
        return False


def make_hyperimpute_plugin(name: str, settings: Mapping[str, Any]) -> Any:
    """Build a hyperimpute imputer plugin (one place, so a test can substitute a broken one)."""
    from hyperimpute.plugins.imputers import Imputers

    return Imputers().get(name, **settings)


def fitted_internals(plugin: Any) -> Any:
    """hyperimpute's fitted iterative model inside a plugin (ice/missforest wrap a hyperimpute one)."""
    obj = plugin
    for _ in range(3):
        if hasattr(obj, "column_to_model"):
            return obj
        obj = getattr(obj, "model", None) or getattr(obj, "_model", None)
    return None


def default_settings(method: str, n_rows: int, n_cols: int, random_state: int) -> dict:
    """Settings chosen by data size so the imputer finishes in seconds, not minutes.

    hyperimpute's default model search (random forests, xgboost, catboost, 40 rounds) takes
    minutes on a few thousand rows; linear models with a few rounds take seconds and capture
    the correlations imputation relies on. Pass ``settings`` to search wider.
    """
    if method == "hyperimpute":
        return {
            "n_inner_iter": 5 if n_rows * n_cols <= 50_000 else 3,
            "regression_seed": ["linear_regression"],
            "classifier_seed": ["logistic_regression"],
            "random_state": random_state,
        }
    if method in ("ice", "iterative"):
        return {"max_iter": 10, "random_state": random_state}
    if method == "missforest":
        return {"max_iter": 3, "n_estimators": 10, "random_state": random_state}
    if method == "knn":
        return {"n_neighbors": 5}
    return {}


def _imputed_like_mean(observed: pd.Series, imputed: pd.Series) -> bool:
    """True when every imputed value equals the observed mean (what a broken imputer returns)."""
    scale = float(observed.std()) if len(observed) > 1 else 1.0
    scale = scale if scale > 0 else 1.0
    return bool(np.abs(imputed.to_numpy(float) - float(observed.mean())).max() <= 1e-6 * scale)


def _iterative_imputer(method: str, settings: Mapping[str, Any], clock: budgeted.Clock | None = None) -> Any:
    """scikit-learn's IterativeImputer for "iterative" / "ice", with random forests for "missforest";
    with a ``clock``, each column fit first checks it (:mod:`.imputation_budget`)."""
    from sklearn.experimental import enable_iterative_imputer  # noqa: F401
    from sklearn.impute import IterativeImputer

    settings = dict(settings)
    estimator = _column_model(method, settings)
    if clock is not None:
        estimator = budgeted.Clocked(estimator, clock)
    return IterativeImputer(estimator=estimator, **settings, keep_empty_features=True)


def _column_model(method: str, settings: dict[str, Any]) -> Any:
    """The per-column model of scikit-learn's iterative imputer (its forest settings are taken
    out of ``settings``): random forests for "missforest", else its default Bayesian ridge."""
    if method == "missforest":
        from sklearn.ensemble import RandomForestRegressor

        forest = {k: settings.pop(k) for k in ("n_estimators", "max_depth") if k in settings}
        return RandomForestRegressor(**forest, random_state=settings.get("random_state"), n_jobs=1)
    from sklearn.linear_model import BayesianRidge

    return BayesianRidge()


class Imputer(FrameTransformer):
    """Fill missing values with what was learned on the training frame.

    The target column is never imputed nor used as a covariate, and rows whose target is
    missing are left untouched. Text/boolean columns are label-encoded for the models and
    filled with their most frequent value (hyperimpute predicts them as labels).
    """

    def __init__(
        self,
        method: str = "auto",
        indicators: bool = False,
        target: str | None = None,
        columns: Sequence[str] | None = None,
        random_state: int = 0,
        settings: Mapping[str, Any] | None = None,
        budget: float | None = None,
    ) -> None:
        self.method = method
        self.indicators = indicators
        self.target = target
        self.columns = columns
        self.random_state = random_state
        self.settings = settings
        self.budget = budget

    def __getstate__(self) -> dict:
        # hyperimpute loads its plugin classes from files, so plain pickle cannot find them;
        # cloudpickle (a hyperimpute dependency) stores them by value.
        state = dict(super().__getstate__())  # a copy: never change the live object
        if state.get("model_") is not None:
            import cloudpickle

            state["model_"] = cloudpickle.dumps(state["model_"])
        return state

    def __setstate__(self, state: dict) -> None:
        if isinstance(state.get("model_"), bytes):
            state = {**state, "model_": pickle.loads(state["model_"])}
        super().__setstate__(state)

    # -- encoding: every imputed column as float, categories as codes learned on train
    def _encode(self, X: pd.DataFrame) -> pd.DataFrame:
        data = {}
        for i, col in enumerate(self.columns_):
            if col in self.categories_:
                codes = pd.Categorical(X[col], categories=self.categories_[col]).codes.astype(float)
                codes[codes < 0] = np.nan
                data[f"c{i}"] = codes
            else:
                data[f"c{i}"] = pd.to_numeric(X[col], errors="coerce").to_numpy(dtype=float)
        return pd.DataFrame(data)

    def _decode(self, enc: pd.DataFrame, X: pd.DataFrame) -> dict:
        out = {}
        for i, col in enumerate(self.columns_):
            values = enc[f"c{i}"].to_numpy(dtype=float)
            if col in self.categories_:
                cats = self.categories_[col]
                codes = np.clip(np.rint(values), 0, len(cats) - 1).astype(int)
                out[col] = pd.Series(np.asarray(cats, dtype=object)[codes], index=X.index)
            else:
                out[col] = pd.Series(values, index=X.index)
        return out

    def _choose(self, X: pd.DataFrame) -> tuple[str, str]:
        if self.method != "auto":
            return self.method, "requested"
        missing = X[self.columns_].isna()
        share = float(missing.to_numpy().mean()) if missing.size else 0.0
        if share == 0:
            return "median", "no missing values in the training data"
        if len(X) > AUTO_MAX_ROWS:
            return "median", f"{len(X):,} rows: a model-based imputer would be slow; median is robust"
        if share < AUTO_MIN_MISSING:
            return "median", f"only {share:.1%} of values are missing: a model would change little"
        numeric = [c for c in self.columns_ if c not in self.categories_]
        corr = X[numeric].corr().abs().to_numpy() if len(numeric) > 1 else np.zeros((1, 1))
        np.fill_diagonal(corr, 0)
        best = float(np.nanmax(corr)) if corr.size else 0.0
        if best < AUTO_MIN_CORRELATION:
            return "median", f"columns barely correlate (max |r| = {best:.2f}): nothing for a model to use"
        why = f"{share:.1%} missing and correlated columns (max |r| = {best:.2f}): a model can predict them"
        if not hyperimpute_available():
            return "iterative", f"{why} (scikit-learn's IterativeImputer: hyperimpute is not installed)"
        if len(X) * len(self.columns_) < AUTO_LIGHT_MAX_CELLS:
            return "iterative", (f"{why} (scikit-learn's IterativeImputer: at {len(X):,} rows × {len(self.columns_)} "
                                 "columns it is done before hyperimpute's imports would be)")
        return "hyperimpute", why

    def fit(self, X: pd.DataFrame, y: Any = None) -> Imputer:
        self._fit(X)
        return self

    def _fit(self, X: pd.DataFrame) -> pd.DataFrame:
        """Fit and return the imputed training frame (the model's own output on it)."""
        started = time.perf_counter()
        X = self._remember_input(X)
        budget = budgeted.check_budget(self.budget)
        check_choice(self.method, "method", METHODS)
        if self.target is not None:
            check_columns(X, [self.target], "target column")
        given = check_columns(X, self.columns)
        candidates = given or [c for c in X.columns if c != self.target]
        if self.target in candidates:
            raise ValueError(f"the target {self.target!r} is never imputed: leave it out of columns")
        rows = X[X[self.target].notna()] if self.target is not None else X
        skipped = {
            str(c): "datetime" for c in candidates if pd.api.types.is_datetime64_any_dtype(X[c])
        }
        skipped.update({str(c): "no observed value" for c in candidates if c not in skipped and rows[c].isna().all()})
        self.columns_ = [c for c in candidates if str(c) not in skipped]
        self.skipped_ = skipped
        self.categories_ = {
            c: sorted(rows[c].dropna().unique().tolist(), key=str) for c in self.columns_ if is_categorical(X[c])
        }
        self.fill_values_ = {}
        for c in self.columns_:
            if c in self.categories_ or self.method == "most_frequent":
                self.fill_values_[c] = rows[c].mode(dropna=True).iloc[0]
            elif self.method == "mean":
                self.fill_values_[c] = float(rows[c].mean())
            else:
                self.fill_values_[c] = float(rows[c].median())
        self.missing_columns_ = [c for c in self.columns_ if rows[c].isna().any()]
        self.indicator_names_ = [f"{c}_missing" for c in self.missing_columns_] if self.indicators else []
        clash = [n for n in self.indicator_names_ if n in X.columns]
        if clash:
            raise ValueError(f"indicator columns would overwrite existing columns: {clash[:5]}")
        method, why = self._choose(rows)
        self.method_, self.reason_ = method, why
        self.settings_: dict[str, Any] = {}
        self.fallback_: str | None = None
        self.substituted_: str | None = None
        self.implementation_: str | None = None
        self.model_: Any = None  # the fitted imputer: scikit-learn's, a KNN triple or hyperimpute's internals
        self.simple_columns_: list = []  # left to the simple fill by the budget (.imputation_budget)
        self.budget_note_: str | None = None
        self.budget_plan_: dict[str, Any] = {}
        self.feature_names_out_ = [str(c) for c in X.columns] + self.indicator_names_
        if method in MODEL_METHODS and not self.missing_columns_:
            self.method_ = "median"
            self.reason_ = "no missing values in the training data: gaps in new data get the training median"
        if self.method_ not in MODEL_METHODS:
            return self._fill_simple(rows)
        if method in HYPERIMPUTE_METHODS and not hyperimpute_available():
            if method not in SKLEARN_EQUIVALENT:
                raise ImportError(f"method={method!r} needs the hyperimpute package ({INSTALL_HINT}); "
                                  "method='iterative' or 'auto' work without it")
            self.substituted_ = (f"hyperimpute is not installed: {method} ran as scikit-learn's "
                                 f"{SKLEARN_EQUIVALENT[method]} (values differ from hyperimpute's; "
                                 f"{INSTALL_HINT})")
        requested = self.settings
        if budget is not None:
            method, requested = self._within_budget(method, rows, budget, started)
            if method == "median":
                return self._fill_simple(rows)
            rows = self._prefill(rows)
        enc = self._encode(rows)
        clock = budgeted.Clock(budgeted.deadline(started, budget)) if budget is not None else None
        try:
            return self._fit_checked(method, rows, enc, requested, clock)
        except budgeted.OverBudget:
            assert clock is not None and budget is not None
            rounds = int((requested or {}).get("max_iter") or self.settings_.get("max_iter") or 10)
            fitted = (self.budget_plan_.get("columns_by_model") if (requested or {}).get("skip_complete")
                      else len(self.columns_))
            self.budget_note_ = budgeted.stopped_note(budget, clock, rounds * int(fitted or len(self.columns_)))
            self.budget_plan_["stopped_after_fits"] = clock.fits
            self.method_, self.model_, self.simple_columns_ = "median", None, []
            self.reason_ = self.budget_note_
            return self._fill_simple(rows)

    def _fit_checked(self, method: str, rows: pd.DataFrame, enc: pd.DataFrame,
                     requested: Mapping[str, Any] | None, clock: budgeted.Clock | None) -> pd.DataFrame:
        """Fit the model, and refit when it silently returned mean imputation (or, hyperimpute,
        nothing to replay); the imputed training rows."""
        filled = self._fit_model(method, enc, requested, clock)
        degenerate = self._mean_like(enc, filled)
        if degenerate or (self.implementation_ == "hyperimpute" and self.model_ is None):
            problem = (
                f"returned plain mean imputation for {degenerate}" if degenerate
                else "exposes no fitted models to apply to new data"
            )
            self.fallback_ = f"{method} {problem}; refit with scikit-learn IterativeImputer"
            # the requested settings were for the other model (the budget's rounds still hold)
            rounds = {"max_iter": requested["max_iter"]} if clock is not None and requested and "max_iter" in requested else None
            filled = self._fit_model("iterative", enc, rounds, clock)
            if self._mean_like(enc, filled):
                self.fallback_ += "; that also returned the mean, so the median is used"
                self.method_ = "median"
                self.model_ = None
                return self._fill_simple(rows)
        return self._assemble(rows, filled)

    def _within_budget(self, method: str, rows: pd.DataFrame, budget: float,
                       started: float) -> tuple[str, Mapping[str, Any] | None]:
        """The method and settings that fit ``budget`` seconds (:mod:`.imputation_budget`): fewer
        rounds, or the fewest-missing columns by the model and ``simple_columns_`` by the median;
        hyperimpute, whose loop cannot be stopped between columns, runs as scikit-learn's
        iterative imputer when its estimate does not fit. ``budget_note_`` says what was cut."""
        if method == "knn":  # its cost is in the neighbours' search of every row, not in column fits
            return method, self.settings
        enc = self._encode(rows)
        keys = [f"c{i}" for i, c in enumerate(self.columns_) if c in self.missing_columns_]
        names = {f"c{i}": str(c) for i, c in enumerate(self.columns_)}
        sk_method = "missforest" if method == "missforest" else "iterative"
        hyper = method in HYPERIMPUTE_METHODS and self.substituted_ is None
        given = dict(self.settings or {})
        settings = {**default_settings(method if hyper else sk_method, enc.shape[0], enc.shape[1], self.random_state), **given}
        rounds = budgeted.rounds_needed(settings, hyper)
        with threadpool_limits(limits=1):  # as the fits it estimates run (see _fit_model)
            fit_s, seen = budgeted.column_fit_seconds(_column_model(sk_method, dict(settings)), enc, keys)
        factor = budgeted.HYPERIMPUTE_FACTOR if hyper else 1.0
        available = budgeted.SHARE * budget - (time.perf_counter() - started)
        p = budgeted.plan(enc, keys, rounds, factor * fit_s / max(seen, 1), available)
        if hyper and p.rounds is not None:  # too slow for hyperimpute: scikit-learn's, planned afresh
            sk_rounds = budgeted.rounds_needed({**default_settings(sk_method, enc.shape[0], enc.shape[1], self.random_state),
                                                **given}, False)
            estimate = p.estimate_s
            p = budgeted.plan(enc, keys, sk_rounds, fit_s / max(seen, 1), available)
            p.estimate_s, rounds = estimate, sk_rounds
            method, given = sk_method, {}  # hyperimpute's settings are not scikit-learn's
            self.substituted_ = None
        self.budget_plan_ = {"budget_s": budget, "estimate_s": round(p.estimate_s, 2),
                             "planned_s": round(p.planned_s, 2), "rounds": p.rounds or rounds,
                             "columns_by_model": len(p.model), "columns_by_median": len(p.simple)}
        note = budgeted.planned_note(p, budget, rounds, names)
        if note is not None and hyper and p.model:
            note = f"{note} (scikit-learn's iterative imputer instead of hyperimpute, which cannot be stopped midway)"
        self.budget_note_ = note
        self.simple_columns_ = [self.columns_[int(k[1:])] for k in p.simple]
        if not p.model:
            self.method_, self.simple_columns_, self.reason_ = "median", [], note or self.reason_
            return "median", None
        if p.rounds is None:
            return method, self.settings
        # cut to fewer columns: only theirs are fitted (scikit-learn's skip_complete), the
        # others, complete once pre-filled, are their features
        return method, {**given, "max_iter": p.rounds, **({"skip_complete": True} if p.simple else {})}

    def _prefill(self, X: pd.DataFrame) -> pd.DataFrame:
        """``X`` with the columns the budget left to the simple fill filled (the model then sees
        them as complete features), in fit and in every replay alike."""
        if not getattr(self, "simple_columns_", None):  # also an imputer fitted before budgets
            return X
        return X.fillna({c: self.fill_values_[c] for c in self.simple_columns_})

    def _fit_model(self, method: str, enc: pd.DataFrame, requested: Mapping[str, Any] | None,
                   clock: budgeted.Clock | None = None) -> pd.DataFrame:
        """Fit ``method`` (with the ``requested`` settings over the defaults) on the encoded
        training rows; return them imputed. ``clock``: each column fit checks it (raises
        :class:`.imputation_budget.OverBudget` past its deadline)."""
        n_rows, n_cols = enc.shape
        settings = {**default_settings(method, n_rows, n_cols, self.random_state), **dict(requested or {})}
        hyper = method in HYPERIMPUTE_METHODS and self.substituted_ is None
        quiet = _warnings.catch_warnings()
        with quiet:
            _warnings.simplefilter("ignore")  # convergence chatter from the inner models
            if method in ("iterative", *SKLEARN_EQUIVALENT) and not hyper:
                model = _iterative_imputer(method, settings, clock)
                # under a budget, one BLAS thread: small per-column fits gain nothing from more, and
                # threads spinning on a shared machine's busy cores made them many times slower
                # (and the estimate of their time worthless)
                with threadpool_limits(limits=1) if clock is not None else contextlib.nullcontext():
                    filled = pd.DataFrame(model.fit_transform(enc), columns=enc.columns)
            elif method == "knn":
                from sklearn.impute import KNNImputer

                center, scale = enc.mean(), enc.std().replace(0, 1).fillna(1)
                model = (KNNImputer(**settings, keep_empty_features=True), center, scale)
                filled = pd.DataFrame(model[0].fit_transform((enc - center) / scale), columns=enc.columns)
                filled = filled * scale + center
            else:
                plugin = make_hyperimpute_plugin(method, settings)
                # its logistic regressions ask joblib for all cores: starting worker processes
                # (~25 s on the first call) and threads on busy cores cost more than these
                # many small per-column fits gain
                with joblib.parallel_config(backend="sequential"), threadpool_limits(limits=1):
                    filled = pd.DataFrame(np.asarray(plugin.fit_transform(enc.copy()), dtype=float), columns=enc.columns)
                model = fitted_internals(plugin)
                if model is not None:
                    # replayed rows start at the train median (numbers) or mode (labels)
                    start = enc.median()
                    labels = {f"c{i}" for i, c in enumerate(self.columns_) if c in self.categories_}
                    for key in labels | set(model.encoders):
                        start[key] = enc[key].mode().iloc[0]
                    self.replay_start_ = start
                    self.replay_constant_ = [k for k in enc.columns if enc[k].nunique() <= 1]
        self.method_, self.model_, self.settings_ = method, model, settings
        self.implementation_ = "hyperimpute" if hyper else "scikit-learn"
        return filled.where(enc.isna(), enc)

    def _mean_like(self, enc: pd.DataFrame, filled: pd.DataFrame) -> list[str]:
        """Numeric columns whose imputed values are all the mean; [] if any column differs."""
        checked, like_mean = 0, []
        for i, col in enumerate(self.columns_):
            key = f"c{i}"
            hole = enc[key].isna()
            if col in self.categories_ or hole.sum() < 2:
                continue
            checked += 1
            if _imputed_like_mean(enc.loc[~hole, key], filled.loc[hole, key]):
                like_mean.append(str(col))
        return like_mean if checked and len(like_mean) == checked else []

    def _fill_simple(self, X: pd.DataFrame) -> pd.DataFrame:
        out = X.copy()
        for c in self.columns_:
            if out[c].isna().any():
                out[c] = out[c].fillna(self.fill_values_[c])
        return out

    def _assemble(self, X: pd.DataFrame, filled: pd.DataFrame) -> pd.DataFrame:
        decoded = self._decode(filled, X)
        out = X.copy()
        for c in self.columns_:
            hole = X[c].isna()
            if not hole.any():
                continue
            if c in self.categories_ and self.implementation_ != "hyperimpute":
                out[c] = X[c].fillna(self.fill_values_[c])
            else:
                out[c] = X[c].mask(hole, decoded[c])
        return out

    def _replay_hyperimpute(self, enc: pd.DataFrame) -> pd.DataFrame:
        """Apply hyperimpute's fitted per-column models to new rows without refitting.

        hyperimpute's own transform refits on whatever it is given (test statistics would
        leak), so new rows start from the training fill values and get a few rounds of
        predictions from the models fitted on train.
        """
        model = self.model_
        work = enc.fillna(self.replay_start_)
        for key, encoder in model.encoders.items():
            known = work[key].isin(encoder.classes_)
            work[key] = encoder.transform(work[key].where(known, self.replay_start_[key]))
        hole = enc.isna()
        for _ in range(3):
            for key, est in model.column_to_model.items():
                rows = hole[key].to_numpy()
                if not rows.any() or key in self.replay_constant_:
                    continue
                covs = work.drop(columns=[key])
                pred = np.asarray(est.predict(covs.loc[rows]), dtype=float).reshape(-1)
                lo, hi = model.limits[key]
                work.loc[rows, key] = np.clip(pred, lo, hi)
        for key, encoder in model.encoders.items():
            codes = np.clip(np.rint(work[key].to_numpy(float)), 0, len(encoder.classes_) - 1).astype(int)
            work[key] = encoder.inverse_transform(codes)
        return work.astype(float)

    def transform(self, X: pd.DataFrame) -> pd.DataFrame:
        X = self._check_transform_input(X, required=self.columns_)
        index = X.index
        X = X.reset_index(drop=True)  # work by position: an index may repeat labels
        keep = X[self.target].isna() if self.target is not None and self.target in X.columns else pd.Series(False, index=X.index)
        rows = X[~keep]
        if self.model_ is None:
            done = self._fill_simple(rows)
        else:
            rows = self._prefill(rows)
            enc = self._encode(rows)
            if self.implementation_ == "hyperimpute":
                filled = self._replay_hyperimpute(enc)
            elif self.method_ == "knn":
                knn, center, scale = self.model_
                filled = pd.DataFrame(knn.transform((enc - center) / scale), columns=enc.columns) * scale + center
            else:
                with _warnings.catch_warnings():
                    _warnings.simplefilter("ignore")
                    filled = pd.DataFrame(self.model_.transform(enc), columns=enc.columns)
            filled = filled.where(enc.isna(), enc)
            done = self._assemble(rows, filled)
        out = pd.concat([done, X[keep]]).sort_index() if keep.any() else done
        return self._add_indicators(X, out).set_axis(index)

    def _add_indicators(self, X: pd.DataFrame, out: pd.DataFrame) -> pd.DataFrame:
        if not self.indicator_names_:
            return out
        out = out.copy()
        for col, name in zip(self.missing_columns_, self.indicator_names_):
            out[name] = X[col].isna().astype(int) if col in X.columns else 0
        return out


@lazy_aware(fitted=True)
def impute(
    df: pd.DataFrame,
    method: str = "auto",
    indicators: bool = False,
    target: str | None = None,
    columns: Sequence[str] | None = None,
    random_state: int = 0,
    settings: Mapping[str, Any] | None = None,
    budget: float | None = None,
) -> tuple[pd.DataFrame, StepReport]:
    """Impute missing values; apply ``report.apply(test)`` to fill the test split the same way.

    method: "median" / "mean" (numbers; text takes its most frequent value), "most_frequent",
    or a model: "iterative", "knn" (scikit-learn), "hyperimpute", "missforest", "ice"
    (hyperimpute plugins; without hyperimpute installed, MissForest and ICE run as scikit-learn's
    IterativeImputer, and "hyperimpute" raises ImportError). "auto" picks the median for large
    data, little missingness or uncorrelated columns, and otherwise hyperimpute (fast settings)
    when installed and the table is not small (below 100,000 cells scikit-learn's lighter
    "iterative" is done before hyperimpute loads), else "iterative"; ``report.details["reason"]`` says why and
    ``details["implementation"]`` which library ran.
    A model that silently returns plain mean imputation is detected and replaced (warning).
    ``settings`` overrides the size-based defaults passed to the imputer.
    ``budget``: seconds the step should take (None: no limit). A model-based imputer whose
    estimated time does not fit runs fewer rounds, or models only the columns with the fewest
    missing values and fills the rest by the median, and is stopped (the median for every column)
    if it still runs past the budget; ``details["budget"]`` has the numbers and the warnings say
    what was cut, in words (:mod:`.imputation_budget`).
    """
    check_frame(df)
    imputer = Imputer(method, indicators, target, columns, random_state, settings, budget)
    data = df.reset_index(drop=True)  # work by position: an index may repeat labels
    filled = imputer._fit(data)
    keep = data[target].isna() if target is not None else pd.Series(False, index=data.index)
    out = pd.concat([filled, data[keep]]).sort_index() if keep.any() else filled
    out = imputer._add_indicators(data, out).set_axis(df.index)
    keep = keep.set_axis(df.index)
    cols = imputer.columns_
    gaps = data.loc[~keep.to_numpy(), cols].isna().sum()
    counts = {str(c): int(n) for c, n in gaps.items() if n}
    details = {
        "method": imputer.method_,
        "requested": method,
        "reason": imputer.reason_,
        "settings": {k: v for k, v in imputer.settings_.items() if isinstance(v, (int, float, str, list, bool))},
        "values_imputed": counts,
        "rows_with_missing_target_left_as_is": int(keep.sum()),
        "skipped_columns": imputer.skipped_,
        "fill_values": ({str(c): v for c, v in imputer.fill_values_.items()} if imputer.model_ is None
                        else {str(c): imputer.fill_values_[c] for c in imputer.simple_columns_}),
        "fallback": imputer.fallback_,
        "implementation": imputer.implementation_,
        "budget": imputer.budget_plan_,
        "by_median_for_the_budget": [str(c) for c in imputer.simple_columns_],
    }
    warnings = [imputer.substituted_] if imputer.substituted_ else []
    if imputer.budget_note_:
        warnings.append(imputer.budget_note_)
    if imputer.fallback_:
        warnings.append(imputer.fallback_)
    if imputer.skipped_:
        warnings.append(f"not imputed: {imputer.skipped_}")
    if keep.any():
        warnings.append(f"{int(keep.sum())} rows with a missing target {target!r} were left as they are")
    return out, StepReport.between("impute", df, out, details=details, warnings=warnings, transformer=imputer)
