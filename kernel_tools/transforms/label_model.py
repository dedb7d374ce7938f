"""The model that judges labels: its inputs, its out-of-fold probabilities, the labels it can check."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ._base import check_choice, check_columns, check_frame, is_categorical
from ._targets import is_classification
from .entity_ids import own_ids

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


def fold_groups(df: pd.DataFrame, usable: pd.Series, groups: str | None) -> pd.Series | None:
    """The ``groups`` of the usable rows, each row without one a group of its own: a row outside
    every matched set or site belongs with no other row (and NaN would make them one group)."""
    return None if groups is None else own_ids(df.loc[usable, groups])


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
        n_splits = int(min(n_splits, own_ids(df.loc[usable, groups]).groupby(y_all[usable]).nunique().min()))
        if n_splits < 2:
            raise ValueError(f"a class of {target!r} occurs in a single {groups!r} entity: cannot cross-validate by entity")
    return usable, classes, n_splits
