"""The target column itself: likely mislabelled rows (cleanlab) and class imbalance.

Label issues come from cleanlab's ``find_label_issues`` on out-of-fold predicted probabilities
of a fast gradient-boosting model, fitted on a stratified sample so the check stays cheap.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from kernel_tools.cleanlab_import import load_cleanlab
from kernel_tools.diagnosis.columns import ColumnProfile, category_codes, numeric_values
from kernel_tools.diagnosis.options import call, keep
from kernel_tools.diagnosis.registry import Context, KindData, detector
from kernel_tools.findings import Finding, Option
from kernel_tools.vocabulary import Basis, Chart, FindingKind, TaskKind

MIN_ISSUE_RATE = 0.01
MIN_ISSUES = 5
MAX_LISTED = 2000  # index labels of the most confident issues kept in the evidence
# cleanlab trusts the model's probabilities: a model no better than chance "contradicts"
# a third of any labels, so label issues are only judged when the features predict the target
MIN_MODEL_AUROC = 0.6


MAX_BINS = 31
# 31 bins instead of 63 cut the three fits on 10k rows from 0.69 s to 0.43 s


def model_matrix(frame: pd.DataFrame, profiles: dict[str, ColumnProfile], features: list[str]):
    """Float matrix and categorical mask for HistGradientBoosting (native categories, at most
    MAX_BINS - 1 levels each; rarer levels share one code)."""
    cols, is_cat = [], []
    for c in features:
        prof = profiles[c]
        v = numeric_values(frame[c], prof)
        if np.isnan(v).all() and prof.n_present > 0:
            codes = category_codes(frame[c], max_levels=MAX_BINS - 1).astype(float)
            codes[codes < 0] = np.nan
            cols.append(codes)
            is_cat.append(True)
        else:
            cols.append(v)
            is_cat.append(False)
    X = np.column_stack(cols) if cols else np.empty((len(frame), 0))
    return X, np.array(is_cat, dtype=bool)


def out_of_fold_probabilities(X, is_cat, y, n_classes: int, seed: int = 0) -> np.ndarray:
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.model_selection import StratifiedKFold
    from threadpoolctl import threadpool_limits

    probs = np.zeros((len(y), n_classes))
    folds = StratifiedKFold(n_splits=3, shuffle=True, random_state=seed)
    # one OpenMP thread: on small samples thread start-up and spinning cost far more than
    # they save (measured 0.3 s vs 2.6-18 s for 1000 rows on 2 cores)
    with threadpool_limits(limits=1, user_api="openmp"):
        for train, test in folds.split(X, y):
            model = HistGradientBoostingClassifier(
                max_iter=30, learning_rate=0.25, max_leaf_nodes=12, max_bins=MAX_BINS, early_stopping=False,
                categorical_features=is_cat if is_cat.any() else None, random_state=seed)
            model.fit(X[train], y[train])
            probs[np.ix_(test, model.classes_)] = model.predict_proba(X[test])
    return probs


def model_auroc(y: np.ndarray, probs: np.ndarray) -> float:
    """Out-of-fold AUROC of the label model (macro one-vs-rest for several classes)."""
    from sklearn.metrics import roc_auc_score

    if probs.shape[1] == 2:
        return float(roc_auc_score(y, probs[:, 1]))
    return float(roc_auc_score(y, probs, multi_class="ovr", average="macro"))


def find_label_issues(frame: pd.DataFrame, profiles: dict[str, ColumnProfile], features: list[str],
                      outcome, seed: int = 0, memo: Any = None) -> Finding | None:
    """Rows whose given label disagrees confidently with what the other rows teach; ``memo``
    (:class:`~kernel_tools.diagnosis.reuse.Memo`): the last diagnosis's out-of-fold
    probabilities are taken when the model's matrix and labels are the same."""
    if outcome.kind != TaskKind.CLASSIFICATION or not features or outcome.n_classes < 2:
        return None
    y = outcome.y
    counts = np.bincount(y, minlength=outcome.n_classes)
    keep_rows = counts[y] >= 6
    if keep_rows.sum() < 50:
        return None
    present = np.flatnonzero(counts >= 6)
    if len(present) < 2:  # one class left: nothing can contradict its labels
        return None
    remap = np.full(outcome.n_classes, -1)
    remap[present] = np.arange(len(present))
    yk = remap[y[keep_rows]]
    X, is_cat = model_matrix(frame.iloc[np.flatnonzero(keep_rows)], profiles, features)

    def fit() -> np.ndarray:
        return out_of_fold_probabilities(X, is_cat, yk, len(present), seed)

    probs = fit() if memo is None else memo.get(memo.key_of("label model", X, is_cat, yk, len(present), seed), fit)
    skill = model_auroc(yk, probs)
    if skill < MIN_MODEL_AUROC:
        return None
    load_cleanlab()  # here, not above: a target the check skips never pays for cleanlab
    from cleanlab.filter import find_label_issues as cl_find

    # n_jobs=1: cleanlab otherwise forks a worker pool, which costs more than it saves here
    issues = cl_find(labels=yk, pred_probs=probs, return_indices_ranked_by="self_confidence", n_jobs=1)
    n = int(keep_rows.sum())
    count = len(issues)
    if count < MIN_ISSUES or count / n < MIN_ISSUE_RATE:
        return None
    index = frame.index[np.flatnonzero(keep_rows)]
    classes = [outcome.classes[k] for k in present]
    top = issues[:MAX_LISTED]
    evidence = {
        "count": count, "rate": round(count / n, 4), "sample_size": n,
        "model": "HistGradientBoosting, 3-fold out-of-fold probabilities",
        "model_auroc": round(skill, 4),
        "method": "cleanlab.filter.find_label_issues",
        "rows": index[top].tolist(), "rows_truncated": count > MAX_LISTED,
        "given_labels": [str(classes[k]) for k in yk[top]],
        "suggested_labels": [str(classes[k]) for k in probs[top].argmax(axis=1)],
        "estimated_issues_in_full_data": int(round(count / n * outcome.valid.sum())),
    }
    t = outcome.target
    severity = "warning" if count / n >= 0.03 else "info"

    def handle(action: str) -> dict:
        return call("handle_label_issues", target=t, action=action)

    options = [
        Option("flag", "Flag suspect labels",
               "Add a column marking rows whose label looks wrong, for review; keep them all.",
               "the model still learns from the wrong labels", True, handle("flag")),
        Option("remove", "Remove suspect rows",
               "Drop rows whose label confidently disagrees with the model.",
               "also drops genuinely unusual cases; can shift the class balance", False,
               handle("remove")),
        Option("relabel", "Relabel to the model's guess",
               "Replace suspect labels with the most likely class.",
               "writes the model's opinion into the data; wrong where the model is wrong", False,
               handle("relabel")),
        keep("Keep the labels as they are.", "label noise lowers accuracy and calibration"),
    ]
    return Finding("label_issues", [t], severity,
                   f"About {count / n:.1%} of the rows checked ({count} of {n}) have a label "
                   f"'{t}' that the other columns confidently contradict: possibly mislabelled.",
                   evidence, options, "label_issues")


def find_class_imbalance(outcome) -> Finding | None:
    if outcome.kind != TaskKind.CLASSIFICATION or outcome.n_classes < 2:
        return None
    counts = np.bincount(outcome.y[outcome.valid], minlength=outcome.n_classes)
    shares = counts / counts.sum()
    small = int(np.argmin(shares))
    ratio = shares.min() / shares.max()
    if (outcome.n_classes == 2 and shares.min() >= 0.25) or (outcome.n_classes > 2 and ratio >= 0.2):
        return None
    severity = "warning" if shares.min() < 0.05 else "info"
    t = outcome.target
    evidence = {"class_counts": {str(c): int(n) for c, n in zip(outcome.classes, counts)},
                "minority_class": str(outcome.classes[small]), "minority_share": round(float(shares.min()), 4),
                "minority_to_majority": round(float(ratio), 4)}
    return Finding(
        "class_imbalance", [t], severity,
        f"'{t}' is imbalanced: the rarest class '{outcome.classes[small]}' is {shares.min():.1%} of rows, "
        "so accuracy is misleading and splits must be stratified.",
        evidence,
        [keep("Keep all rows; use a stratified split, class weights and a threshold-free metric "
              "(AUROC / balanced log loss).",
              "the rare class may still be predicted poorly at the default threshold",
              recommended=True, label="Stratify and weight")],
        None,
    )


@detector("label issues", order=10, needs_target=True,
          finds={FindingKind.LABEL_ISSUES: KindData(chart=Chart.LABEL_ISSUES, basis=Basis.SAMPLE)})
def find_label_issues_in(ctx: Context) -> list[Finding]:
    found = find_label_issues(ctx.frame, ctx.profiles, ctx.model_features, ctx.sub, ctx.random_state, ctx.memo)
    return [found] if found is not None else []


@detector("class imbalance", order=20, needs_target=True,
          finds={FindingKind.CLASS_IMBALANCE: KindData(chart=None, basis=Basis.WHOLE_DATA)})
def find_class_imbalance_in(ctx: Context) -> list[Finding]:
    found = find_class_imbalance(ctx.outcome)
    return [found] if found is not None else []
