"""Stratified samples and single-feature scores with the task's own metric.

A single feature's predictive power is measured out of fold: the feature is binned (quantile
bins for numbers, frequent levels for categories, missing as its own bin), each bin gets the
outcome mean of the *other* folds, and that score is rated with AUROC (classification), R²
(regression) or the C-index (survival). This is a depth-one "tree" with honest validation:
it catches non-monotone relations and "filled only when the event happened" columns alike,
and it is a few numpy passes per column.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import rankdata

from kernel_tools.diagnosis.columns import ColumnProfile, category_codes, numeric_values
from kernel_tools.vocabulary import TaskKind

N_BINS = 20
N_FOLDS = 3


def stratified_sample(n: int, size: int | None, strata: np.ndarray | None, seed: int = 0) -> np.ndarray:
    """Sorted positions of a sample of ``size`` rows keeping the share of each stratum."""
    if size is None or n <= size:
        return np.arange(n)
    rng = np.random.default_rng(seed)
    if strata is None:
        return np.sort(rng.choice(n, size=size, replace=False))
    # hashed, not sorted (np.unique took ~0.4 s at 1M rows); sorted codes: the same sample
    inverse, _ = pd.factorize(np.asarray(strata).ravel(), sort=True, use_na_sentinel=False)
    counts = np.bincount(inverse)
    quota = np.maximum(1, np.floor(counts * size / n)).astype(int)
    order = rng.permutation(n)
    picked = []
    for k in range(len(counts)):
        members = order[inverse[order] == k]
        picked.append(members[: quota[k]])
    return np.sort(np.concatenate(picked))


def fold_ids(n: int, strata: np.ndarray | None, seed: int = 0) -> np.ndarray:
    """Fold number per row, stratified when strata are given."""
    rng = np.random.default_rng(seed + 1)
    folds = np.empty(n, dtype=np.int64)
    if strata is None:
        folds[rng.permutation(n)] = np.arange(n) % N_FOLDS
        return folds
    order = rng.permutation(n)
    order = order[np.argsort(strata[order], kind="stable")]
    folds[order] = np.arange(n) % N_FOLDS
    return folds


def bin_codes(s: pd.Series, prof: ColumnProfile) -> np.ndarray:
    """Bin index per row (missing gets the last code) for the single-feature score."""
    values = numeric_values(s, prof)
    if np.isnan(values).all() and prof.n_present > 0:
        codes = category_codes(s)
        return np.where(codes < 0, codes.max() + 1 if codes.size else 0, codes)
    present = ~np.isnan(values)
    codes = np.full(len(values), N_BINS, dtype=np.int64)
    if present.any():
        distinct = np.unique(values[present])
        if distinct.size <= N_BINS:
            codes[present] = np.searchsorted(distinct, values[present])
        else:
            edges = np.unique(np.quantile(values[present], np.linspace(0, 1, N_BINS + 1)[1:-1]))
            codes[present] = np.searchsorted(edges, values[present], side="right")
    return codes


def oof_encode(codes: np.ndarray, y: np.ndarray, folds: np.ndarray) -> np.ndarray:
    """Out-of-fold mean of ``y`` (1-D or 2-D) per code; unseen codes get the fold's mean."""
    y2 = y.reshape(len(y), -1).astype(float)
    out = np.empty_like(y2)
    n_codes = int(codes.max()) + 1 if codes.size else 1
    for k in range(N_FOLDS):
        train = folds != k
        test = ~train
        prior = y2[train].mean(axis=0)
        cnt = np.bincount(codes[train], minlength=n_codes).astype(float)
        for j in range(y2.shape[1]):
            sums = np.bincount(codes[train], weights=y2[train, j], minlength=n_codes)
            # a little shrinkage toward the prior keeps tiny bins from looking perfect
            means = (sums + 2.0 * prior[j]) / (cnt + 2.0)
            out[test, j] = means[codes[test]]
    return out if y.ndim > 1 else out[:, 0]


def auroc(score: np.ndarray, positive: np.ndarray) -> float:
    """Area under the ROC curve from ranks (ties count half); NaN when one class is absent."""
    pos = positive.astype(bool)
    n_pos, n_neg = int(pos.sum()), int((~pos).sum())
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    ranks = rankdata(score)
    return float((ranks[pos].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


# a score with at most this many distinct values (a single-feature score's out-of-fold bin
# means: ~20 bins x 3 folds) is counted per value, in one pass over a (times x values) table
FEW_VALUES = 256
MAX_TABLE = 4_000_000  # cells of that table


def concordance(duration: np.ndarray, score: np.ndarray, event: np.ndarray) -> float:
    """Harrell's C-index where a higher score means a longer survival (lifelines' convention);
    the models' numpy C-index (lifelines' own walks the rows in Python: 20 of 27 s of a 10k-row
    survival diagnosis), or for a score of few distinct values the same pairs counted per value
    (:func:`_concordance_of_few_values`: ~20 ms -> ~2 ms at 10k rows, ~60 calls a diagnosis)."""
    from kernel_tools.models.survival import concordance as c_index

    risk = -np.asarray(score, dtype=float)
    fast = _concordance_of_few_values(np.asarray(duration, dtype=float), risk, np.asarray(event) > 0)
    return fast if fast is not None else c_index(np.column_stack([duration, event]), risk)


def _concordance_of_few_values(time: np.ndarray, risk: np.ndarray, event: np.ndarray) -> float | None:
    """The models' C-index (same comparable pairs: the earlier row had the event, a row censored
    at its time counts as later; tied risks count one half) from a table of how many rows of
    each risk value come after each time; None when the risk has too many distinct values or
    is not finite (the general count then runs)."""
    if not len(time) or not np.isfinite(risk).all() or not np.isfinite(time).all():
        return None
    values, rank = np.unique(risk, return_inverse=True)
    if len(values) > FEW_VALUES:
        return None
    # each row's place in time (censored rows after the events of their time): rows of a higher
    # place are the later ones
    order = np.lexsort((~event, time))
    new = np.r_[True, (time[order][1:] != time[order][:-1]) | (event[order][1:] != event[order][:-1])]
    key = np.empty(len(time), dtype=np.int64)
    key[order] = np.cumsum(new) - 1
    n_keys, m = int(key[order[-1]]) + 1, len(values)
    if n_keys * m > MAX_TABLE:
        return None
    if not event.any():
        return float("nan")
    table = np.bincount(key * m + rank, minlength=n_keys * m).reshape(n_keys, m)
    after = np.cumsum(table[::-1], axis=0)[::-1]  # rows at this place in time or later
    after = np.vstack([after[1:], np.zeros((1, m), dtype=after.dtype)])  # strictly later
    lower = np.hstack([np.zeros((n_keys, 1), dtype=after.dtype), np.cumsum(after, axis=1)])
    k, r = key[event], rank[event]
    pairs = lower[k, m].sum()
    if not pairs:
        return float("nan")
    correct = lower[k, r].sum()
    tied = (lower[k, r + 1] - lower[k, r]).sum()
    return float((correct + 0.5 * tied) / pairs)


def score_encoded(encoded: np.ndarray, outcome) -> float:
    """Rate an out-of-fold prediction with the task's metric (higher is better, 0.5/0 = none)."""
    kind = outcome.kind
    if kind == TaskKind.CLASSIFICATION:
        if outcome.n_classes == 2:
            return auroc(encoded, outcome.y == 1)
        aucs = np.array([auroc(encoded[:, k], outcome.y == k) for k in range(outcome.n_classes)])
        weights = np.bincount(outcome.y, minlength=outcome.n_classes)
        ok = ~np.isnan(aucs)
        return float(np.average(aucs[ok], weights=weights[ok])) if ok.any() else float("nan")
    if kind == TaskKind.REGRESSION:
        y = outcome.y
        sst = float(((y - y.mean()) ** 2).sum())
        return 1.0 - float(((y - encoded) ** 2).sum()) / sst if sst > 0 else float("nan")
    return concordance(outcome.duration, encoded, outcome.y)


def encode_target(outcome) -> np.ndarray:
    """What the out-of-fold encoder averages: class indicators, the value, or the duration."""
    if outcome.kind == TaskKind.CLASSIFICATION:
        if outcome.n_classes == 2:
            return (outcome.y == 1).astype(float)
        return np.eye(outcome.n_classes)[outcome.y]
    if outcome.kind == TaskKind.REGRESSION:
        return outcome.y.astype(float)
    # survival: rank-normalised duration with events counted shorter than censored times
    return rankdata(outcome.duration) / len(outcome.duration) - 0.5 * outcome.y


def single_feature_score(codes: np.ndarray, outcome, folds: np.ndarray) -> float:
    encoded = oof_encode(codes, encode_target(outcome), folds)
    return score_encoded(encoded, outcome)


def missingness_score(miss: np.ndarray, outcome, folds: np.ndarray, memo: Any = None) -> float:
    """:func:`single_feature_score` of a missingness indicator. With ``memo``
    (:class:`~kernel_tools.diagnosis.reuse.Memo`) one computed for the same indicator, sampled
    outcome and folds is taken: the leakage and missing-value checks both score each column's
    gaps, and a re-diagnosis after a step that did not touch them scores them again."""
    codes = np.asarray(miss).astype(np.int64)
    if memo is None:
        return single_feature_score(codes, outcome, folds)
    key = memo.key_of("missingness score", codes, *memo.outcome_context(outcome, folds, None))
    return memo.get(key, lambda: single_feature_score(codes, outcome, folds))


def metric_name(kind: str) -> str:
    return TaskKind(kind).metric
