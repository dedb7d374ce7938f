"""Survival analysis in scikit-learn's shape: lifelines' Cox model as an estimator, so it
shares one Pipeline (imputation, one-hot, scaling) with the other models.

``y`` for survival is a 2-column array ``[duration, event]``.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted


def survival_target(duration, event) -> np.ndarray:
    """Stack duration and event into the ``(n, 2)`` target the survival estimators take."""
    return np.column_stack([np.asarray(duration, dtype=float), np.asarray(event, dtype=float)])


def concordance(y: np.ndarray, risk: np.ndarray) -> float:
    """Harrell's C-index of a risk score (higher risk = earlier event)."""
    from lifelines.utils import concordance_index

    y = np.asarray(y, dtype=float)
    return float(concordance_index(y[:, 0], -np.asarray(risk, dtype=float), y[:, 1]))


class CoxPHEstimator(RegressorMixin, BaseEstimator):
    """Penalised Cox proportional hazards (lifelines ``CoxPHFitter``).

    ``predict`` returns the partial hazard (a relative risk); ``score`` is Harrell's C-index.
    The penalty keeps one-hot and correlated columns from breaking convergence; when the fit
    still fails to converge the penalty is raised tenfold once, recorded in ``penalizer_``.
    """

    def __init__(self, penalizer: float = 0.1, l1_ratio: float = 0.0):
        self.penalizer = penalizer
        self.l1_ratio = l1_ratio

    def fit(self, X, y) -> CoxPHEstimator:
        from lifelines import CoxPHFitter
        from lifelines.exceptions import ConvergenceError

        X = np.asarray(X, dtype=float)
        y = np.asarray(y, dtype=float)
        if y.ndim != 2 or y.shape[1] != 2:
            raise ValueError("survival y must be an (n, 2) array of [duration, event]")
        # lifelines scales each covariate by its spread: a constant one (a rare flag absent from
        # this fold) would divide by zero and stop the fit; it carries no signal, so its weight is 0
        varying = np.ptp(X, axis=0) > 0 if len(X) else np.zeros(X.shape[1], dtype=bool)
        frame = self._frame(X[:, varying])
        frame["_duration"] = y[:, 0]
        frame["_event"] = y[:, 1]
        penalizer = self.penalizer
        for attempt in range(2):
            model = CoxPHFitter(penalizer=penalizer, l1_ratio=self.l1_ratio)
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    model.fit(frame, duration_col="_duration", event_col="_event")
                break
            except ConvergenceError:
                if attempt == 1:
                    raise
                penalizer *= 10
        self.model_ = model
        self.penalizer_ = penalizer
        self.coef_ = np.zeros(X.shape[1])
        self.coef_[varying] = model.params_.to_numpy()
        self.mean_ = X.mean(axis=0)  # lifelines centres covariates on the training means
        self.n_features_in_ = X.shape[1]
        return self

    def predict(self, X) -> np.ndarray:
        """Partial hazard exp((x - mean) . beta), as lifelines computes it, in plain numpy
        (lifelines' own path builds DataFrames; this runs inside permutation importance)."""
        check_is_fitted(self, "coef_")
        X = np.asarray(X, dtype=float)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"expected {self.n_features_in_} features, got {X.shape[1]}")
        return np.exp((X - self.mean_) @ self.coef_)

    def score(self, X, y, sample_weight=None) -> float:
        return concordance(y, self.predict(X))

    @staticmethod
    def _frame(X: np.ndarray) -> pd.DataFrame:
        return pd.DataFrame(X, columns=[f"x{i}" for i in range(X.shape[1])])


def risk_group_curves(y: np.ndarray, risk: np.ndarray) -> dict[str, dict[str, list[float]]]:
    """Kaplan-Meier curves of low / medium / high predicted-risk tertiles (JSON-safe).

    A good model separates them: the high-risk curve should fall fastest.
    """
    from lifelines import KaplanMeierFitter

    y = np.asarray(y, dtype=float)
    ranks = pd.Series(np.asarray(risk, dtype=float)).rank(method="first")
    groups = pd.qcut(ranks, 3, labels=["low risk", "medium risk", "high risk"])
    curves = {}
    for name in groups.cat.categories:
        members = (groups == name).to_numpy()
        if not members.any():
            continue
        km = KaplanMeierFitter().fit(y[members, 0], y[members, 1])
        table = km.survival_function_
        curves[str(name)] = {
            "time": [float(t) for t in table.index],
            "survival": [float(s) for s in table.iloc[:, 0]],
            "n": int(members.sum()),
        }
    return curves
