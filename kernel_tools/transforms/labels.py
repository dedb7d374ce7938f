"""Label errors: cleanlab on out-of-fold predicted probabilities."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from kernel_tools.lazy import lazy_aware

from ._base import check_choice, check_columns, check_frame, is_categorical
from ._targets import is_classification
from .report import StepReport

ACTIONS = ("flag", "remove", "relabel")
MAX_CATEGORIES = 255  # HistGradientBoosting's limit for a categorical feature
SINGLE_THREAD_CELLS = 2_000_000
# above this many labelled rows, 3 folds and 50 faster boosting rounds: each row's out-of-fold
# probability is still from a model that never saw it, and 5 folds of 100 rounds on 300k rows
# took over 12 minutes on 2 shared cores (the rest of a 1M-row run took less)
LARGE_ROWS = 50_000


def _model_frame(df: pd.DataFrame, features: list) -> tuple[pd.DataFrame, dict]:
    """Features HistGradientBoosting can use natively (categories, missing values)."""
    X, skipped = {}, {}
    for col in features:
        s = df[col]
        if pd.api.types.is_datetime64_any_dtype(s):
            skipped[str(col)] = "datetime"
        elif is_categorical(s):
            if s.nunique() > MAX_CATEGORIES:
                skipped[str(col)] = f"more than {MAX_CATEGORIES} categories"
            else:
                X[col] = s.astype(str).where(s.notna()).astype("category")
        else:
            X[col] = s.astype(float)
    return pd.DataFrame(X, index=df.index), skipped


def label_model(y: np.ndarray, n_splits: int, random_state: int = 0, *, max_iter: int = 100,
                learning_rate: float = 0.1) -> Any:
    """The (unfitted) classifier whose predictions judge the labels ``y`` (codes), in
    ``n_splits``-fold cross-validation — also what a lazy frame's rows outside the sample are
    scored by (kernel_tools.lazy.labels)."""
    from sklearn.ensemble import HistGradientBoostingClassifier

    # early stopping keeps the small-data model from memorising the very labels it checks; its
    # stratified 10% validation split needs a few rows of every class in each training fold,
    # so very small data gets fewer boosting rounds instead
    per_fold = np.bincount(np.asarray(y)).min() * (n_splits - 1) / n_splits
    early = bool(per_fold >= 20)
    return HistGradientBoostingClassifier(
        categorical_features="from_dtype", max_iter=max_iter if early else 30, early_stopping=early,
        learning_rate=learning_rate, random_state=random_state,
    )


def out_of_fold_probabilities(
    X: pd.DataFrame, y: np.ndarray, groups: Any = None, n_splits: int = 5, random_state: int = 0,
    *, max_iter: int = 100, learning_rate: float = 0.1,
) -> np.ndarray:
    """Predicted class probabilities for each row from a model that never saw that row."""
    from sklearn.model_selection import StratifiedKFold, cross_val_predict
    from threadpoolctl import threadpool_limits

    from kernel_tools.folds import StratifiedEntityKFold

    model = label_model(y, n_splits, random_state, max_iter=max_iter, learning_rate=learning_rate)
    if groups is not None:
        cv = StratifiedEntityKFold(n_splits=n_splits, shuffle=True, random_state=random_state)
    else:
        cv = StratifiedKFold(n_splits=n_splits, shuffle=True, random_state=random_state)
    # small data: one thread is faster; OpenMP threads on busy cores are 10-20x slower
    with threadpool_limits(limits=1 if X.size < SINGLE_THREAD_CELLS else None):
        return cross_val_predict(model, X, y, groups=groups, cv=cv, method="predict_proba")


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
    pred_probs = out_of_fold_probabilities(
        X, y, df.loc[usable, groups] if groups is not None else None, max(2, n_splits), random_state,
        max_iter=max_iter, learning_rate=learning_rate,
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
        "folds": max(2, n_splits),
        "boosting": {"max_iter": max_iter, "learning_rate": learning_rate},  # fewer, faster rounds above LARGE_ROWS rows
        "rows_not_checked": int((~usable).sum()),
        "skipped_features": skipped,
        "action": action,
    }
    warnings = []
    if (~usable).any():
        warnings.append(f"{int((~usable).sum())} rows with a missing or single-row class were not checked")
    if len(issue) and issue.mean() > 0.2:
        warnings.append(f"{issue.mean():.0%} of labels look wrong: the features may not predict the target well")
    return out, StepReport.between("handle_label_issues", df, out, details=details, warnings=warnings)


def _check_arguments(
    df: pd.DataFrame, target: str, action: str, features: Sequence[str] | None, groups: str | None
) -> list:
    """The feature columns (all but the target and entity id when not given), after one clear
    error for a missing column, a bad action, or feature names scikit-learn cannot take."""
    check_frame(df)
    check_choice(action, "action", ACTIONS)
    check_columns(df, [target], "target column")
    if groups is not None:
        check_columns(df, [groups], "groups column")
    features = check_columns(df, features) if features is not None else [c for c in df.columns if c not in (target, groups)]
    if target in features:
        raise ValueError(f"the target {target!r} cannot also be a feature")
    if not features:
        raise ValueError("no feature columns to predict the labels from")
    named = [c for c in features if not isinstance(c, str)]
    if named:  # the cross-validated model (scikit-learn) needs string feature names
        raise TypeError(f"feature column names must be strings, got {named[:10]}; "
                        "rename them, e.g. df.columns = df.columns.astype(str)")
    if "label_issue" in df.columns and action == "flag":
        raise ValueError("the frame already has a 'label_issue' column")
    return features


def _checkable_labels(
    df: pd.DataFrame, y_all: pd.Series, target: str, groups: str | None
) -> tuple[pd.Series, list, int]:
    """(usable rows, classes, folds): rows with a class of at least two rows can be checked, and
    the folds are as many as the rarest class (in rows, or entities with ``groups``) allows, up to 5."""
    if not is_classification(y_all):
        raise ValueError(f"label issues need class labels; {target!r} looks continuous ({y_all.nunique()} distinct numbers)")
    known = y_all.notna()
    counts = y_all[known].value_counts()
    if len(counts) < 2:
        raise ValueError(f"target {target!r} has fewer than two classes")
    usable = known & y_all.isin(counts.index[counts >= 2])
    classes = sorted(counts.index[counts >= 2].tolist(), key=str)
    if len(classes) < 2:
        raise ValueError(f"target {target!r} needs two classes with at least two rows each, "
                         f"got counts {counts.to_dict()}")
    n_splits = int(min(5, counts[counts >= 2].min()))
    if groups is not None:  # every fold needs each class, so each class needs n_splits entities
        n_splits = int(min(n_splits, df.loc[usable, groups].groupby(y_all[usable]).nunique().min()))
        if n_splits < 2:
            raise ValueError(f"a class of {target!r} occurs in a single {groups!r} entity: cannot cross-validate by entity")
    return usable, classes, n_splits


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
