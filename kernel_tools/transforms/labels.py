"""Label errors: cleanlab on out-of-fold predicted probabilities."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from kernel_tools.cleanlab_import import load_cleanlab
from kernel_tools.lazy import lazy_aware
from kernel_tools.scale import LABEL_FIT_ROWS, at_scale, sampled_sentence

from .label_model import (
    LARGE_ROWS,
    _check_arguments,
    _checkable_labels,
    _model_frame,
    fold_groups,
    out_of_fold_probabilities,
)
from .report import StepReport


@lazy_aware()
def handle_label_issues(
    df: pd.DataFrame,
    target: str,
    action: str = "flag",
    features: Sequence[str] | None = None,
    groups: str | None = None,
    random_state: int = 0,
) -> tuple[pd.DataFrame, StepReport]:
    """Find rows whose label disagrees with what the other rows predict (cleanlab).

    action: "flag" (adds a 0/1 ``label_issue`` column), "remove" the rows, or "relabel"
    (set the label the model predicts). Run it on the training split only: label noise is
    a property of training data, so the report has no transformer to apply to test data.
    ``groups`` (entity id column) keeps an entity's rows in one fold.
    """
    load_cleanlab()  # without HuggingFace datasets, which cleanlab's package imports for Datalab
    from cleanlab.filter import find_label_issues
    from cleanlab.rank import get_label_quality_scores

    features = _check_arguments(df, target, action, features, groups)
    y_all = df[target]
    usable, classes, n_splits = _checkable_labels(df, y_all, target, groups)
    y = pd.Categorical(y_all[usable], categories=classes).codes
    X, skipped = _model_frame(df.loc[usable], features)
    if X.shape[1] == 0:
        raise ValueError(f"no usable feature to predict {target!r} from (skipped: {skipped})")
    large = len(X) > LARGE_ROWS
    if large:
        n_splits = min(n_splits, 3)
    max_iter, learning_rate = (50, 0.2) if large else (100, 0.1)
    n_folds = max(2, n_splits)
    fold_rows = len(X) * (n_folds - 1) // n_folds  # a training fold's rows, about
    fit_rows = min(fold_rows, LABEL_FIT_ROWS) if at_scale(len(X)) else fold_rows
    pred_probs = out_of_fold_probabilities(
        X, y, fold_groups(df, usable, groups), n_folds, random_state,
        max_iter=max_iter, learning_rate=learning_rate, fit_rows=fit_rows if fit_rows < fold_rows else None,
    )
    issue = find_label_issues(labels=y, pred_probs=pred_probs)
    quality = get_label_quality_scores(labels=y, pred_probs=pred_probs)
    suggested = np.asarray(classes, dtype=object)[pred_probs.argmax(axis=1)]
    rows = np.flatnonzero(usable.to_numpy())[issue]  # positions, safe with a repeated index
    out = _apply_action(df, target, action, rows, suggested[issue])
    order = np.argsort(quality[issue])[:10]
    examples = [
        {"index": str(df.index[r]), "given": y_all.iloc[r], "suggested": s, "quality": float(q)}
        for r, s, q in zip(rows[order], suggested[issue][order], quality[issue][order])
    ]
    per_class = pd.Series(np.asarray(classes, dtype=object)[y[issue]]).value_counts()
    details = {
        "issues": int(issue.sum()),
        "share": float(issue.mean()) if len(issue) else 0.0,
        "per_class": {str(k): int(v) for k, v in per_class.items()},
        "examples": examples,
        "model": "HistGradientBoostingClassifier, out-of-fold",
        "folds": n_folds,
        "boosting": {"max_iter": max_iter, "learning_rate": learning_rate},  # fewer, faster rounds above LARGE_ROWS rows
        "rows_not_checked": int((~usable).sum()),
        "skipped_features": skipped,
        "action": action,
    }
    if fit_rows < fold_rows:  # first, where the step's output shows it
        details = {"sampled": sampled_sentence(f"each of the {n_folds} fold models learnt", fit_rows,
                                               fold_rows, "training rows")
                   + f"; each of the {len(X):,} rows was still checked by a model that never saw it", **details}
    warnings = []
    if (~usable).any():
        warnings.append(f"{int((~usable).sum())} rows with a missing or single-row class were not checked")
    if len(issue) and issue.mean() > 0.2:
        warnings.append(f"{issue.mean():.0%} of labels look wrong: the features may not predict the target well")
    return out, StepReport.between("handle_label_issues", df, out, details=details, warnings=warnings)


def _apply_action(df: pd.DataFrame, target: str, action: str, rows: np.ndarray, suggested: np.ndarray) -> pd.DataFrame:
    """A new frame with the issue rows (positions) flagged, removed, or given the suggested label."""
    flagged = np.zeros(len(df), dtype=bool)
    flagged[rows] = True
    if action == "flag":
        out = df.copy()
        out["label_issue"] = flagged.astype(int)
    elif action == "remove":
        out = df.loc[~flagged]
    else:
        out = df.copy()
        labels = out[target].astype(object).to_numpy(copy=True)
        labels[rows] = suggested
        out[target] = pd.Series(labels, index=out.index).infer_objects()
    return out
