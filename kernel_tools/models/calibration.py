"""Do predicted probabilities mean what they say? Calibration curves and Brier scores.

- classification: the calibration curve (mean predicted probability vs observed frequency in
  bins of the prediction) and the Brier score; with several classes, of the top class.
- survival: the integrated Brier score (IPCW, over the follow-up) and, at the median
  follow-up time, the Kaplan-Meier survival observed in groups of predicted survival next to
  the mean predicted survival.

Each returns a JSON-safe dict (``curve``: lists ``predicted``, ``observed``, ``n``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from sklearn.calibration import calibration_curve

from kernel_tools.models.survival import kaplan_meier, survival_at


def classification_calibration(y: np.ndarray, proba: np.ndarray, classes: np.ndarray) -> dict[str, Any]:
    """Brier score and calibration curve. ``proba``: ``(n, n_classes)`` aligned to ``classes``."""
    y = np.asarray(y)
    onehot = (y[:, None] == np.asarray(classes)[None, :]).astype(float)
    if len(classes) == 2:
        hit, confidence = onehot[:, 1], proba[:, 1]
        what = f"P({classes[1]})"
        brier = float(np.mean((proba[:, 1] - onehot[:, 1]) ** 2))
    else:  # multiclass: squared error summed over classes; the curve of the top class
        top = proba.argmax(axis=1)
        hit, confidence = onehot[np.arange(len(y)), top], proba[np.arange(len(y)), top]
        what = "top-class probability"
        brier = float(np.mean(np.sum((proba - onehot) ** 2, axis=1)))
    bins = int(np.clip(len(y) // 30, 2, 10))
    observed, predicted = calibration_curve(hit, confidence, n_bins=bins, strategy="quantile")
    # rows per bin, binned as calibration_curve bins them (it drops the empty ones)
    edges = np.percentile(confidence, np.linspace(0, 100, bins + 1))
    counts = np.bincount(np.searchsorted(edges[1:-1], confidence), minlength=len(edges))
    return {
        "kind": "classification", "brier": brier, "of": what,
        "curve": {"predicted": predicted.tolist(), "observed": observed.tolist(),
                  "n": [int(c) for c in counts if c > 0]},
    }


def evaluation_times(y: np.ndarray, points: int = 20) -> tuple[np.ndarray, float]:
    """A time grid for the integrated Brier score (10th-80th percentile of the observed times,
    where enough rows are still followed) and the median follow-up time."""
    times = np.asarray(y, dtype=float)[:, 0]
    grid = np.unique(np.quantile(times, np.linspace(0.1, 0.8, points)))
    return grid, float(np.median(times))


def survival_calibration(
    y_train: np.ndarray, y_eval: np.ndarray, survival: np.ndarray, times: np.ndarray,
    at_survival: np.ndarray, at_time: float,
) -> dict[str, Any]:
    """Integrated Brier score of ``survival`` (``(n, len(times))``, S(t | x) on ``y_eval``) with
    the censoring distribution of ``y_train``; observed (Kaplan-Meier) vs mean predicted
    survival at ``at_time`` in groups of ``at_survival`` (S(at_time | x))."""
    from sksurv.metrics import brier_score
    from sksurv.util import Surv

    def surv(y):
        return Surv.from_arrays(event=y[:, 1].astype(bool), time=y[:, 0])

    # the IPCW weights need times inside both follow-ups
    limit = min(y_train[:, 0].max(), y_eval[:, 0].max())
    keep = (times > y_eval[:, 0].min()) & (times < limit)
    if keep.sum() < 2:
        raise ValueError("too short a follow-up to integrate the Brier score over time")
    # integrated as scikit-survival's integrated_brier_score does (it calls np.trapz, gone in numpy 2.4)
    grid, scores = brier_score(surv(y_train), surv(y_eval), survival[:, keep], times[keep])
    ibs = float(np.trapezoid(scores, grid) / (grid[-1] - grid[0]))
    groups = int(np.clip(len(y_eval) // 50, 3, 5))
    ranks = pd.Series(at_survival).rank(method="first")
    labels = pd.qcut(ranks, groups, labels=False).to_numpy()
    predicted, observed, counts = [], [], []
    for g in range(groups):
        members = labels == g
        predicted.append(float(np.mean(at_survival[members])))
        observed.append(survival_at(*kaplan_meier(y_eval[members, 0], y_eval[members, 1]), at_time))
        counts.append(int(members.sum()))
    return {
        "kind": "survival", "integrated_brier": ibs, "time": float(at_time),
        "times": [float(times[keep][0]), float(times[keep][-1])],
        "curve": {"predicted": predicted, "observed": observed, "n": counts},
    }
