"""Whether a cross-validated mean stands for the model's usual skill, or for one broken fold.

A mean over folds is dominated by a single fold that went wrong: one Ridge fold that met a
value typed x100 scored R² -937 while its 14 sibling folds scored 0.40-0.63, and the mean
(-62) described that fold, not the model. A fold is *broken* when it scores far below the
folds' median: more than ``FAR_SPREADS`` robust standard deviations (1.4826 x the median
absolute deviation, which the broken fold itself barely moves) and more than ``MIN_GAP`` in the
metric's units, so a tight set of folds with one merely weaker fold is not called broken.
Ten robust standard deviations is far beyond what fold-to-fold luck produces (Tukey's
"far out" fence sits near 4.7); the absolute floor keeps near-identical folds (a spread of
0.001) from making an ordinary dip look wild.

A regression fold's own R² is no fair witness on small data: it measures the fold's errors
against the variance of the fold's own few targets, and three trees of similar size have almost
none, so ordinary errors score R² -1.3 there (31 trees, 15 folds of 5-7 rows, a median fold of
0.91). :func:`shared_scale` measures every fold's errors against the variance of all the
cross-validated targets instead: a fold is then broken only when its *errors* are far larger
than its siblings' (the typo fold at R² -937 stays far out), and the folds' mean on that scale
is the R² of the pooled out-of-fold predictions, which says whether the model beats predicting
the mean at all.

Far below is not yet broken. The folds of a heavy-tailed table that hold its biggest units
are legitimately harder: a fold at 0.30 on the shared scale among folds at 0.97 is a model worse
there, still far better than predicting the mean. A fold is *broken* only when it is far below
its siblings *and* no better than the trivial predictor (R² <= 0 on the shared scale: the mean
errs as little; AUROC or C-index <= 0.5: a coin ranks as well). A far-below fold that beats the
trivial predictor is named in words (:func:`weak_folds`), not failed.

A regression's headline estimate stays the mean of each fold's own R², as scikit-learn
computes it (``cross_val_score``; its ``cross_val_predict`` warns against scoring pooled
predictions as an estimate of generalisation), and its sentence says so (``FOLD_MEAN_LABEL``); the
interval is of the same scores. The shared scale's mean (one minus the folds' mean squared error
over the variance of every cross-validated target) is higher on tiny folds (R's trees 0.604 ->
0.907) and was tried as the headline: its interval is wider where folds hold entities of very
different sizes, and the holdout check, which asks whether the interval claims skill, then let
two development runs whose holdouts show none pass (sleepstudy: holdout -0.98, interval low end
0.12 -> below 0; Grunfeld). The shared mean is what says whether a regression beats the mean.

And folds of a handful of rows say nothing either way: one ordinary row decides a 3-row fold's
score. Below ``MIN_FOLD_ROWS`` rows per fold (:func:`too_few_rows`) no fold is judged; the
estimate then rests on the repeated cross-validation's interval, and that is said.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from kernel_tools.models.fences import FAR_OUT, far_out_fences
from kernel_tools.plurals import counted

if TYPE_CHECKING:  # the co-pilot's process reads the fold checks without pandas
    import pandas as pd

FAR_SPREADS = 10.0
MIN_GAP = 0.25  # in the metric's units (R², AUROC, C-index)
SHARED_LABEL = "r2 against the variance of every fold's targets"  # how :func:`shared_scale` scores are named
# a regression's headline estimate, as its sentence names it (see the module docstring)
FOLD_MEAN_LABEL = "r2 (the mean of each fold's own r2)"
MIN_FOLDS = 3  # fewer fold scores cannot tell a broken fold from the rest
MIN_FOLD_ROWS = 5  # a fold of fewer rows is scored by one or two of them: it cannot look broken or sound
# the score of a predictor with no skill: the mean (R²) or a coin (AUROC, C-index)
TRIVIAL = {"r2": 0.0, SHARED_LABEL: 0.0, "roc_auc": 0.5, "c_index": 0.5}
MEAN_RMSE = "rmse_of_the_mean"  # per regression fold: the error of predicting the training folds' mean
SUSPECT = "suspect_row"  # per regression fold: the row that dominates its errors with a far-out value
DOMINANT_SHARE = 0.5  # one row holding more of a fold's squared error than all its other rows together


def shared_scale(fold_rmse: Sequence[float], y: np.ndarray) -> list[float]:
    """Each regression fold's R² against the variance of every cross-validated target
    (``1 - RMSE² / Var(y)``) rather than of its own rows'."""
    variance = float(np.nanvar(np.asarray(y, dtype=float)))
    if not variance > 0:
        return [float("nan")] * len(fold_rmse)
    return [1.0 - float(r) ** 2 / variance for r in fold_rmse]


def skill_over_the_mean(fold_rmse: Sequence[float], mean_rmse: Sequence[float]) -> list[float]:
    """Each regression fold's R² against predicting the training folds' mean on its own rows
    (``1 - RMSE² / RMSE_mean²``): at or below 0 the model errs there as much as that trivial
    predictor. A fold holding the largest units of a heavy-tailed table can score below 0 on the
    shared scale (its errors exceed the variance of all targets) and still far above 0 here."""
    return [1.0 - float(r) ** 2 / float(m) ** 2 if float(m) > 0 else float("nan") for r, m in zip(fold_rmse, mean_rmse)]


def suspect_row(X_train: pd.DataFrame, y_train: np.ndarray, X_val: pd.DataFrame, y_val: np.ndarray,
                pred: np.ndarray) -> str | None:
    """The row that dominates a validation fold's squared error (more than ``DOMINANT_SHARE``)
    when one of its values, or its target, lies beyond the training rows' far-out fences (on the
    log scale for a positive column, and for the long tail of a skewed one with zeros, where a heavy
    tail's biggest units stay inside: :func:`_fences_outside`): a likely
    entry error, in words. None: no row dominates, or the one that does looks real."""
    errors = (np.asarray(y_val, dtype=float) - np.asarray(pred, dtype=float)) ** 2
    if len(errors) < 2 or not np.nansum(errors) > 0:
        return None
    worst = int(np.nanargmax(errors))
    share = float(errors[worst] / np.nansum(errors))
    if share <= DOMINANT_SHARE:
        return None
    from pandas.api.types import is_bool_dtype, is_numeric_dtype

    numeric = [c for c in X_train.columns if is_numeric_dtype(X_train[c]) and not is_bool_dtype(X_train[c])]
    columns = {str(c): (X_train[c].to_numpy(dtype=float), float(X_val[c].iloc[worst])) for c in numeric}
    columns["the target"] = (np.asarray(y_train, dtype=float), float(y_val[worst]))
    for name, (train, value) in columns.items():
        if (fences := _fences_outside(train, value)) is not None:
            label = X_val.index[worst]
            return (f"row {label.item() if isinstance(label, np.generic) else label!r} ({name} {value:.4g} outside the far-out fences "
                    f"[{fences[0]:.4g}, {fences[1]:.4g}] of the training rows; {share:.0%} of its fold's squared error)")
    return None


def _fences_outside(values: np.ndarray, value: float) -> tuple[float, float] | None:
    """A column's far-out fences when ``value`` lies outside them, else None (inside, or no spread
    to fence). A positive column is fenced on the log scale; a column of zeros and positive values
    that is more symmetric on the log scale (shifted by its smallest positive value) than on its
    own (counts, claims, amounts with a long right tail) spreads by factors just the same, and its
    upper fence is drawn there too: on its own scale its legitimately largest values fall outside."""
    values = values[np.isfinite(values)]
    if len(values) < 4 or np.percentile(values, 75) == np.percentile(values, 25):
        return None
    if values.min() > 0:
        low, high = far_out_fences(np.log(values).reshape(-1, 1), FAR_OUT)
        fences = float(np.exp(low[0])), float(np.exp(high[0]))
    else:
        low, high = far_out_fences(values.reshape(-1, 1), FAR_OUT)
        fences = float(low[0]), float(high[0])
        shift = float(values[values > 0].min()) if value > fences[1] and values.min() == 0 else 0.0
        logged = np.log(values + shift) if shift else values  # a count's shift is 1: its zeros stay
        if shift and abs(octile_skewness(logged)) < abs(octile_skewness(values)):  # more symmetric logged
            top = far_out_fences(logged.reshape(-1, 1), FAR_OUT)[1]
            fences = fences[0], max(fences[1], float(np.exp(top[0])) - shift)
    return None if fences[0] <= value <= fences[1] else fences


def octile_skewness(values: np.ndarray) -> float:
    """How far the median sits from the middle of the 1/8 and 7/8 quantiles, in units of their
    distance (0: symmetric; the extremes themselves do not move it)."""
    low, mid, high = np.percentile(values, [12.5, 50, 87.5])
    return float((high + low - 2 * mid) / (high - low)) if high > low else 0.0


def too_few_rows(fold_rows: float | None) -> str | None:
    """The sentence that says folds of ``fold_rows`` rows (on average) are too small to judge,
    or None when they can be judged (or their size is unknown)."""
    if fold_rows is None or not math.isfinite(fold_rows) or fold_rows >= MIN_FOLD_ROWS:
        return None
    return (f"too few rows to judge fold stability (folds of about {fold_rows:.1f} rows, fewer than "
            f"{MIN_FOLD_ROWS}: one row decides a fold's score): the estimate rests on the repeated "
            "cross-validation's interval")


def broken_folds(scores: Sequence[float], metric: str, skill: Sequence[float] | None = None,
                 suspects: Sequence[str | None] | None = None) -> str | None:
    """A sentence naming the folds that score far below the others and no better than the
    trivial predictor, or whose errors one likely entry error dominates (None: no such fold).
    ``skill`` (a regression's, aligned with ``scores``): each fold's :func:`skill_over_the_mean`,
    which then decides "no better than trivial"; ``suspects``: each fold's :func:`suspect_row`.

    Raises ValueError when fewer than ``MIN_FOLDS`` fold scores are finite: then nothing can be
    said either way; KeyError for a metric without a known trivial score."""
    far = _far_below(scores, metric, skill, suspects)
    broken = far.low[far.trivial | far.suspect.astype(bool)]
    if not len(broken):
        return None
    rows = _by_row([str(s) for s in far.suspect if s])
    return (f"{len(broken)} of {len(far.values)} folds score far below the others ({metric} {_shown(broken)} "
            f"against a median fold of {far.median:.3f}, typical spread {far.spread:.3f}) and "
            + (f"one row dominates their errors: {'; '.join(rows)}, a likely entry error: look at it (and at the "
               "step that handles its values) before trusting the estimate" if rows else
               f"no better than {_trivial_words(metric, skill)}: the mean {float(far.values.mean()):.3f} describes "
               "those folds, not the model's usual skill; look in them for values far outside the training range "
               "(a unit or typing error) or a group the other folds lack"))


def weak_folds(scores: Sequence[float], metric: str, skill: Sequence[float] | None = None,
               suspects: Sequence[str | None] | None = None) -> str | None:
    """A sentence naming the folds far below the others that still beat the trivial predictor:
    the model is worse on their rows (often the largest units of a heavy-tailed table), not
    broken there. None: no such fold. Raises as :func:`broken_folds` does."""
    far = _far_below(scores, metric, skill, suspects)
    weak = far.low[~far.trivial & ~far.suspect.astype(bool)]
    if not len(weak):
        return None
    return (f"{len(weak)} of {len(far.values)} folds score far below the others ({metric} {_shown(weak)} "
            f"against a median fold of {far.median:.3f}) yet better than {_trivial_words(metric, skill)}: the "
            "model is worse on their rows, not broken there")


@dataclass(frozen=True)
class _Far:
    values: np.ndarray  # the finite fold scores
    median: float
    spread: float  # robust standard deviation
    low: np.ndarray  # the scores far below the median, sorted
    trivial: np.ndarray  # of ``low``: no better than the trivial predictor
    suspect: np.ndarray  # of ``low``: the row that dominates its errors, a likely entry error ("" when none)


def _far_below(scores: Sequence[float], metric: str, skill: Sequence[float] | None,
               suspects: Sequence[str | None] | None = None) -> _Far:
    if metric not in TRIVIAL:
        raise KeyError(f"no trivial score is known for the metric {metric!r}")
    raw = np.asarray([np.nan if s is None else s for s in scores], dtype=float)
    over = raw if skill is None else np.asarray([np.nan if s is None else s for s in skill], dtype=float)
    rows = np.asarray([s or "" for s in suspects] if suspects is not None else [""] * len(raw), dtype=object)
    if len(over) != len(raw) or len(rows) != len(raw):
        raise ValueError(f"{len(over)} fold skills and {len(rows)} suspects for {len(raw)} fold scores")
    finite = np.isfinite(raw)
    values, over, rows = raw[finite], over[finite], rows[finite]
    if len(values) < MIN_FOLDS:
        raise ValueError(f"{counted(len(values), 'finite fold score')}: at least {MIN_FOLDS} are needed to tell a "
                         "broken fold from the rest")
    median = float(np.median(values))
    spread = 1.4826 * float(np.median(np.abs(values - median)))
    low = values < median - max(FAR_SPREADS * spread, MIN_GAP)
    order = np.argsort(values[low])
    # an unknown skill (a fold whose mean errs 0) cannot clear the fold: judged broken
    trivial = ~(over[low] > (0.0 if skill is not None else TRIVIAL[metric]))
    return _Far(values, median, spread, values[low][order], trivial[order], rows[low][order])


def _by_row(suspects: list[str]) -> list[str]:
    """One sentence per suspect row (the first fold's), with how many folds it dominates."""
    first: dict[str, str] = {}
    for s in suspects:
        first.setdefault(s.split(" (", 1)[0], s)
    counts = {row: sum(s.split(" (", 1)[0] == row for s in suspects) for row in first}
    return [s + (f" in {counts[row]} folds" if counts[row] > 1 else "") for row, s in first.items()]


def _trivial_words(metric: str, skill: Sequence[float] | None) -> str:
    if skill is not None:
        return "predicting the training folds' mean on their rows"
    if TRIVIAL[metric] == 0.0:
        return "predicting the mean (at or below 0)"
    return "a coin (at or below 0.5)"


def _shown(values: np.ndarray) -> str:
    return ", ".join(f"{v:.3g}" for v in values[:5]) + (" …" if len(values) > 5 else "")
