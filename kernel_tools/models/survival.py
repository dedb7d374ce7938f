"""Survival models in scikit-learn's shape, so they share one Pipeline (imputation, one-hot,
scaling) with the other models: penalised Cox, a parametric AFT and gradient-boosted Cox.
Each predicts a risk score (higher = earlier event) and ``predict_survival(X, times)``.

``y`` for survival is a 2-column array ``[duration, event]``.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted


def survival_target(duration, event) -> np.ndarray:
    """Stack duration and event into the ``(n, 2)`` target the survival estimators take."""
    return np.column_stack([np.asarray(duration, dtype=float), np.asarray(event, dtype=float)])


def concordance(y: np.ndarray, risk: np.ndarray) -> float:
    """Harrell's C-index of a risk score (higher risk = earlier event); NaN without a
    comparable pair.

    The same pairs and ties as lifelines' ``concordance_index(time, -risk, event)``: a pair is
    comparable when the earlier row had the event (a row censored at the same time counts as
    later), tied risks count one half. lifelines walks the rows in Python (45 ms at 2,000
    rows, ~0.7 s at 67,000); the bootstrap interval and permutation importance call this
    hundreds of times, so it counts with numpy in O(n log² n) (~0.1 s at 67,000 rows): rows
    sorted by (time, censored, risk), each event's later rows with a lower risk counted by a
    bottom-up merge sort (:func:`_smaller_after`), its later rows with the same risk by one search.
    """
    y = np.asarray(y, dtype=float)
    risk = np.asarray(risk, dtype=float)
    event = y[:, 1] > 0
    # by time; at one time, events before censored rows, then by risk: a row's later rows of its
    # own (time, censored) group are not comparable with it and never have a lower risk
    order = np.lexsort((risk, ~event, y[:, 0]))
    time, event, risk = y[order, 0], event[order], risk[order]
    n = len(time)
    if n == 0 or not event.any():
        return float("nan")
    key = np.cumsum(np.r_[True, (time[1:] != time[:-1]) | (event[1:] != event[:-1])]) - 1
    rank = np.unique(risk, return_inverse=True)[1].astype(np.int64).ravel()
    later = n - np.searchsorted(key, key, side="right")  # rows of a higher (time, censored) key
    groups = int(key[-1]) + 1
    pairs = float(later[event].sum())
    if not pairs:
        return float("nan")
    # later rows with the same risk: the same rank and a higher key (searched in sorted order)
    code = rank * groups + key
    by_rank = np.argsort(code, kind="stable")
    code = code[by_rank]
    same = (np.searchsorted(code, code - code % groups + groups - 1, side="right")
            - np.searchsorted(code, code, side="right"))
    correct = float(_smaller_after(rank)[event].sum())
    return (correct + 0.5 * float(same[event[by_rank]].sum())) / pairs


def _smaller_after(values: np.ndarray) -> np.ndarray:
    """For each position, how many later positions hold a smaller value (non-negative integers).

    Bottom-up merge sort: positions in blocks of 1, 2, 4, ... each sorted by value, each pair of
    sibling blocks merged by a stable sort (two sorted runs: linear). An element of the left
    block moves right by exactly the number of right-block values smaller than its own (equal
    ones stay after it), so that move is its count for the level."""
    n = len(values)
    counts = np.zeros(n, dtype=np.int64)
    span = int(values.max()) + 1 if n else 1
    position, value = np.arange(n), values.astype(np.int64)
    size = 1
    while size < n:
        merged = np.argsort((position // (2 * size)) * span + value, kind="stable")
        was_left = (position[merged] // size) % 2 == 0  # by the position of its new place's old element
        position, value = position[merged], value[merged]
        moved = np.arange(n) - merged  # block starts are the same before and after the merge
        counts[position[was_left]] += moved[was_left]
        size *= 2
    return counts


class _CoxBaseline:
    """Survival curves for a model whose output is a log relative risk: Breslow's baseline
    hazard, estimated on the training rows, scaled by each row's risk."""

    # the estimator it is mixed into predicts the log relative risk
    predict: Callable[[Any], np.ndarray]

    def _fit_baseline(self, log_risk: np.ndarray, y: np.ndarray) -> None:
        from sksurv.linear_model.coxph import BreslowEstimator

        self.baseline_ = BreslowEstimator().fit(log_risk, y[:, 1].astype(bool), y[:, 0])

    def predict_survival(self, X, times) -> np.ndarray:
        """S(t | x) at ``times`` for every row: an ``(n_rows, n_times)`` array."""
        check_is_fitted(self, "baseline_")
        curve = self.baseline_.baseline_survival_
        times = np.clip(np.asarray(times, dtype=float), curve.domain[0], curve.domain[1])
        return curve(times)[None, :] ** np.asarray(self.predict(X), dtype=float)[:, None]


class CoxPHEstimator(_CoxBaseline, RegressorMixin, BaseEstimator):
    """Penalised Cox proportional hazards (scikit-survival's coordinate-descent Coxnet).

    ``penalizer`` is lifelines' scale: the penalty on the mean partial log-likelihood
    (``penalizer * ((1 - l1_ratio) / 2 * |b|^2 + l1_ratio * |b|_1)``), so 0.1 gives
    lifelines' ``CoxPHFitter(penalizer=0.1)`` coefficients (Breslow ties). Coxnet replaced
    lifelines' Newton-Raphson, whose Efron ties loop over event times in Python: on 4,300 rows
    x 120 encoded columns one fit took ~16 s, Coxnet takes well under one. When the weights
    still diverge the penalty is raised tenfold once, recorded in ``penalizer_``.
    ``predict`` returns the partial hazard (a relative risk); ``score`` is Harrell's C-index.
    """

    def __init__(self, penalizer: float = 0.1, l1_ratio: float = 0.0):
        self.penalizer = penalizer
        self.l1_ratio = l1_ratio

    def fit(self, X, y) -> CoxPHEstimator:
        from sksurv.linear_model import CoxnetSurvivalAnalysis

        X = np.asarray(X, dtype=float)
        y = _check_survival_y(y)
        # a constant column (a rare flag absent from this fold) carries no signal: weight 0
        varying = np.ptp(X, axis=0) > 0 if len(X) else np.zeros(X.shape[1], dtype=bool)
        self.mean_ = X.mean(axis=0)
        self.coef_ = np.zeros(X.shape[1])
        self.n_features_in_ = X.shape[1]
        self.penalizer_ = self.penalizer
        if varying.any():
            for attempt in range(2):
                # Coxnet needs some L1; 1e-4 of it changes the coefficients in the 4th decimal
                model = CoxnetSurvivalAnalysis(
                    alphas=[self.penalizer_], l1_ratio=max(self.l1_ratio, 1e-4), max_iter=100_000
                )
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        model.fit(X[:, varying] - self.mean_[varying], _structured(y))
                    break
                except ArithmeticError:  # weights diverged (a separating column): more penalty
                    if attempt == 1:
                        raise
                    self.penalizer_ *= 10
            self.coef_[varying] = model.coef_.ravel()
        self._fit_baseline(np.log(self.predict(X)), y)
        return self

    def predict(self, X) -> np.ndarray:
        """Partial hazard exp((x - mean) . beta), as lifelines reports it."""
        check_is_fitted(self, "coef_")
        X = np.asarray(X, dtype=float)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"expected {self.n_features_in_} features, got {X.shape[1]}")
        return np.exp(np.clip((X - self.mean_) @ self.coef_, -50, 50))

    def score(self, X, y, sample_weight=None) -> float:
        return concordance(y, self.predict(X))


class AFTEstimator(RegressorMixin, BaseEstimator):
    """Parametric accelerated failure time model: lifelines' Weibull AFT (fitted by
    ``kernel_tools.models.weibull`` with its exact gradient, lifelines' optimum in a fraction
    of the time).

    It models the time itself, so it also predicts survival beyond the follow-up it saw and
    reads as "this factor stretches time by exp(coef)". ``predict`` returns a risk score
    (minus the log predicted median time: higher = earlier event), like the Cox models.
    """

    def __init__(self, distribution: str = "weibull", penalizer: float = 0.01):
        self.distribution = distribution
        self.penalizer = penalizer

    def fit(self, X, y) -> AFTEstimator:
        from kernel_tools.models.weibull import fit_weibull_aft

        if self.distribution != "weibull":
            raise ValueError(f"distribution must be 'weibull', got {self.distribution!r}")
        X = np.asarray(X, dtype=float)
        y = _check_survival_y(y)
        if (y[:, 0] <= 0).any():
            raise ValueError("an AFT model needs positive durations")
        self.varying_ = np.ptp(X, axis=0) > 0 if len(X) else np.zeros(X.shape[1], dtype=bool)
        self.model_ = fit_weibull_aft(X[:, self.varying_], y[:, 0], y[:, 1], self.penalizer)
        self.n_features_in_ = X.shape[1]
        return self

    def predict(self, X) -> np.ndarray:
        check_is_fitted(self, "model_")
        return -np.clip(self.model_.log_median(self._input(X)), np.log(1e-300), None)

    def predict_survival(self, X, times) -> np.ndarray:
        check_is_fitted(self, "model_")
        return self.model_.survival(self._input(X), np.asarray(times, dtype=float))

    def score(self, X, y, sample_weight=None) -> float:
        return concordance(y, self.predict(X))

    def _input(self, X) -> np.ndarray:
        X = np.asarray(X, dtype=float)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"expected {self.n_features_in_} features, got {X.shape[1]}")
        return X[:, self.varying_]


# GradientBoostedCox's bins when max_bin is None: one per ROWS_PER_BIN rows fitted, within bounds
ROWS_PER_BIN = 4
MIN_BINS = 32
MAX_BINS = 256  # XGBoost's default
# ...and its boosting rounds when n_estimators is None: one per ROWS_PER_ROUND rows fitted, within bounds
ROWS_PER_ROUND = 2
MIN_ROUNDS = 50
MAX_ROUNDS = 200  # the rounds every fit ran before (from 400 rows up: unchanged)


class GradientBoostedCox(_CoxBaseline, RegressorMixin, BaseEstimator):
    """Gradient-boosted trees on the Cox partial likelihood (XGBoost's ``survival:cox``).

    The non-linear survival candidate: interactions and thresholds a linear Cox model cannot
    express, missing values handled by the trees (no imputation). scikit-survival's boosted
    and forest models compute their loss over all pairs of rows: 0.3 s per boosting round at
    5,000 rows (a 100-tree fit took 48 s, a 100-tree random survival forest 55 s); XGBoost
    sorts once and fits the same model in ~0.3 s. ``predict`` returns the relative risk.

    ``max_bin``: split candidates per feature (XGBoost's histogram bins); None ties them to the
    rows fitted: one per :data:`ROWS_PER_BIN` rows, between :data:`MIN_BINS` and XGBoost's
    default 256 (``max_bin_`` holds the number used). A boosting round costs about the bins
    times the features, whatever the rows: on 250 rows, 256 bins made a 200-round fit 3x slower
    than 64, for split points finer than a leaf can use (``min_child_weight`` 5 of the Cox
    loss's weights needs more than 5 rows a leaf). From 1,024 rows up it is the default.

    ``n_estimators``: boosting rounds; None ties them to the rows fitted: one per
    :data:`ROWS_PER_ROUND` rows, between :data:`MIN_ROUNDS` and :data:`MAX_ROUNDS`
    (``n_estimators_`` holds the number used). At a learning rate of 0.05, 200 rounds overfit a
    few hundred rows, and a round costs the same whatever the rows: on synthetic cohorts of
    150-300 rows (a tree-shaped truth in 6 or in 20 columns, a linear and a weak one, 8 seeds
    each, scored on 4,000 new rows) these rounds ranked new patients as well as 200 or better
    (mean concordance +0.000 to +0.011; single seeds -0.005 to +0.017). Fewer were not always:
    50 rounds on 400 rows of the 6-column tree lost 0.009. An early stop on a 20% inner split of
    the fit's rows (patience 20) was no steadier: 0.004-0.012 below 50 rounds at 150-250 rows of
    20 columns (every truth; the Cox loss of 30-50 rows is noise), 0.010 below 200 at 2,500 rows
    of the tree (the rows it holds out). From 400 rows up it is the 200 rounds of before.
    """

    def __init__(self, n_estimators: int | None = None, learning_rate: float = 0.05, max_depth: int = 3,
                 min_child_weight: float = 5.0, subsample: float = 0.8, max_bin: int | None = None,
                 random_state: int = 0):
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.max_depth = max_depth
        self.min_child_weight = min_child_weight
        self.subsample = subsample
        self.max_bin = max_bin
        self.random_state = random_state

    def fit(self, X, y) -> GradientBoostedCox:
        import xgboost

        X = np.asarray(X, dtype=float)
        y = _check_survival_y(y)
        # XGBoost's Cox label: the time, negative when censored
        label = np.where(y[:, 1] > 0, y[:, 0], -y[:, 0])
        self.max_bin_ = self.max_bin or int(np.clip(len(X) // ROWS_PER_BIN, MIN_BINS, MAX_BINS))
        self.n_estimators_ = self.n_estimators or int(np.clip(len(X) // ROWS_PER_ROUND, MIN_ROUNDS, MAX_ROUNDS))
        self.model_ = xgboost.XGBRegressor(
            objective="survival:cox", n_estimators=self.n_estimators_, learning_rate=self.learning_rate,
            max_depth=self.max_depth, min_child_weight=self.min_child_weight, subsample=self.subsample,
            max_bin=self.max_bin_, tree_method="hist", n_jobs=1, random_state=self.random_state,
        ).fit(X, label)
        self.n_features_in_ = X.shape[1]
        self._fit_baseline(np.log(self.predict(X)), y)
        return self

    def predict(self, X) -> np.ndarray:
        check_is_fitted(self, "model_")
        X = np.asarray(X, dtype=float)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"expected {self.n_features_in_} features, got {X.shape[1]}")
        return np.asarray(self.model_.predict(X), dtype=float)  # exp(margin): the hazard ratio

    def score(self, X, y, sample_weight=None) -> float:
        return concordance(y, self.predict(X))


def _check_survival_y(y) -> np.ndarray:
    y = np.asarray(y, dtype=float)
    if y.ndim != 2 or y.shape[1] != 2:
        raise ValueError("survival y must be an (n, 2) array of [duration, event]")
    return y


def _structured(y: np.ndarray) -> np.ndarray:
    """scikit-survival's target: a structured array of (event, time)."""
    from sksurv.util import Surv

    return Surv.from_arrays(event=y[:, 1].astype(bool), time=y[:, 0])


def kaplan_meier(time: np.ndarray, event: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The Kaplan-Meier estimate as lifelines' ``KaplanMeierFitter().fit(time, event)`` gives it:
    its timeline (0 and every observed time) and S(t) on it. In numpy: lifelines' import alone
    cost a survival run's kernel 0.2-0.7 CPU s (issue 31), for a few curves."""
    time = np.asarray(time, dtype=float)
    died = np.asarray(event, dtype=float) > 0
    timeline = np.unique(np.r_[0.0, time])
    at_risk = len(time) - np.searchsorted(np.sort(time), timeline, side="left")
    deaths = np.bincount(np.searchsorted(timeline, time[died]), minlength=len(timeline))
    return timeline, np.cumprod(1.0 - deaths / np.maximum(at_risk, 1))


def survival_at(timeline: np.ndarray, survival: np.ndarray, at: float) -> float:
    """A Kaplan-Meier step function's value at ``at`` (lifelines' ``predict``: the last step at or before it)."""
    step = int(np.searchsorted(timeline, at, side="right")) - 1
    return float(survival[step]) if step >= 0 else 1.0


def risk_group_curves(y: np.ndarray, risk: np.ndarray) -> dict[str, dict[str, list[float] | int]]:
    """Kaplan-Meier curves of low / medium / high predicted-risk tertiles (JSON-safe).

    A good model separates them: the high-risk curve should fall fastest.
    """
    y = np.asarray(y, dtype=float)
    ranks = pd.Series(np.asarray(risk, dtype=float)).rank(method="first")
    groups = pd.qcut(ranks, 3, labels=["low risk", "medium risk", "high risk"])
    curves: dict[str, dict[str, list[float] | int]] = {}
    for name in groups.cat.categories:
        members = (groups == name).to_numpy()
        if not members.any():
            continue
        timeline, survival = kaplan_meier(y[members, 0], y[members, 1])
        curves[str(name)] = {
            "time": [float(t) for t in timeline],
            "survival": [float(s) for s in survival],
            "n": int(members.sum()),
        }
    return curves
