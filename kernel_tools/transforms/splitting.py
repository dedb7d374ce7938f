"""Train/test split that respects entities (grouped), time order, and class balance."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from kernel_tools.lazy import lazy_aware

from ._base import check_columns, check_frame
from ._targets import is_classification
from .entity_ids import said, with_ids
from .report import StepReport, json_safe

STRATIFIED_GROUP_KFOLD_MAX_GROUPS = 2000


def _time_split(df: pd.DataFrame, time: str, groups: str | None, test_size: float) -> np.ndarray:
    """Test = the latest rows (or the entities whose first record is latest)."""
    if groups is not None:
        first = df.groupby(groups, sort=False)[time].min().sort_values(kind="stable")
        cum = df[groups].value_counts().reindex(first.index).cumsum() / len(df)
        test_groups = first.index[(cum > 1 - test_size).to_numpy()]
        if len(test_groups) == len(first):
            test_groups = first.index[1:]
        return df[groups].isin(test_groups).to_numpy()
    order = df[time].sort_values(kind="stable", na_position="first")
    cutoff = order.iloc[int(np.floor(len(df) * (1 - test_size)))]
    test = (df[time] >= cutoff).to_numpy()
    if test.all():  # many ties at the cutoff: put the ties in train instead
        test = (df[time] > cutoff).to_numpy()
    return test


@lazy_aware()
def split(
    df: pd.DataFrame,
    target: str,
    groups: str | None = None,
    time: str | None = None,
    test_size: float = 0.2,
    stratify: bool = True,
    random_state: int = 0,
    missing_ids: str | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame, StepReport]:
    """Split rows into (train, test, report) without leaking across the split.

    groups (entity id): all rows of one entity land on the same side (StratifiedGroupKFold
    for class targets when ``stratify``, else GroupShuffleSplit). time: train gets the
    earliest rows (with groups: the entities whose first record is earliest). Otherwise a
    stratified split for class targets, a shuffled one for numbers.
    missing_ids: rows without a ``groups`` id are dropped (``"drop"``) or each taken as an
    entity of its own (``"own"``); None: such rows are an error that says so.
    """
    warnings: list[str] = []
    if groups is not None and missing_ids is not None:
        check_columns(df, [groups], "groups column")
        df, n_missing = with_ids(df, groups, missing_ids)
        if n_missing:
            warnings.append(said(groups, missing_ids, n_missing))
    _check_arguments(df, target, groups, time, test_size)
    y = df[target]
    classes = is_classification(y)
    strata = y.astype(object).where(y.notna(), "<missing>").astype(str)
    if time is not None:
        kind = "time, grouped" if groups is not None else "time"
        test_mask = _time_split(df, time, groups, test_size)
    elif groups is not None:
        kind, test_mask = _grouped_split(df, groups, strata, classes and stratify, test_size, random_state)
    else:
        kind, test_mask = _row_split(df, strata, classes, stratify, test_size, random_state, warnings)
    train, test = df.loc[~test_mask], df.loc[test_mask]
    if train.empty or test.empty:
        raise ValueError(f"the split left an empty {'train' if train.empty else 'test'} set; check test_size and the data")
    if y.isna().any():
        warnings.append(f"{int(y.isna().sum())} rows have no {target!r} value")
    warnings += _thin_holdout(df, test, target, groups, classes)
    report = StepReport(
        operation="split",
        rows_in=int(len(df)),
        rows_out=int(len(train) + len(test)),
        columns_in=int(df.shape[1]),
        columns_out=int(df.shape[1]),
        details=json_safe(_details(df, train, test, target, groups, time, classes, kind, random_state)),
        warnings=warnings,
    )
    return train, test, report


def _check_arguments(df: pd.DataFrame, target: str, groups: str | None, time: str | None, test_size: float) -> None:
    """One clear error for a missing column, missing entity ids or times, or a bad ``test_size``."""
    check_frame(df)
    check_columns(df, [target], "target column")
    if groups is not None:
        check_columns(df, [groups], "groups column")
        if df[groups].isna().any():
            n = int(df[groups].isna().sum())
            raise ValueError(f"{n} row{'s have' if n != 1 else ' has'} no '{groups}' (the entity): drop them "
                             "(missing_ids='drop') or take each as an entity of its own (missing_ids='own')")
    if time is not None:
        check_columns(df, [time], "time column")
        if df[time].isna().any():
            raise ValueError(f"time column {time!r} has {int(df[time].isna().sum())} missing values")
    if not isinstance(test_size, float) or not 0 < test_size < 1:
        raise ValueError(f"test_size must be a fraction between 0 and 1; got {test_size!r}")
    if len(df) < 2:
        raise ValueError("need at least two rows to split")


def _grouped_split(
    df: pd.DataFrame, groups: str, strata: pd.Series, stratify: bool, test_size: float, random_state: int
) -> tuple[str, np.ndarray]:
    """(kind, test mask) keeping each entity on one side, class-stratified when ``stratify`` and
    every class spans enough entities."""
    from sklearn.model_selection import GroupShuffleSplit, train_test_split

    from kernel_tools.folds import StratifiedEntityKFold

    n_groups = df[groups].nunique()
    if n_groups < 2:
        raise ValueError(f"groups column {groups!r} has a single entity: nothing to split by")
    n_splits = max(2, int(round(1 / test_size)))
    # StratifiedGroupKFold needs every class in at least n_splits entities
    groups_per_class = df[groups].groupby(strata).nunique().min()
    if stratify and groups_per_class >= n_splits:
        kind = "grouped, stratified"
        if n_groups <= STRATIFIED_GROUP_KFOLD_MAX_GROUPS:
            cv = StratifiedEntityKFold(n_splits=n_splits, shuffle=True, random_state=random_state)
            _, test_idx = next(cv.split(df, strata, df[groups]))
        else:  # its greedy search is slow on many entities: stratify entities by their usual class
            label = _usual_class(df[groups], strata)
            _, test_groups = train_test_split(
                label.index, test_size=test_size, random_state=random_state, stratify=label.to_numpy()
            )
            test_idx = np.flatnonzero(df[groups].isin(test_groups).to_numpy())
    elif stratify and _few_per_class(label := _usual_class(df[groups], strata), test_size):
        # too few entities of a class for folds (a small cohort's censored few): each side still gets
        # some of every class, not a holdout of events only
        kind = "grouped, stratified"
        _, test_groups = train_test_split(label.index, test_size=test_size, random_state=random_state,
                                          stratify=label.to_numpy())
        test_idx = np.flatnonzero(df[groups].isin(test_groups).to_numpy())
    else:
        kind = "grouped"
        shuffle = GroupShuffleSplit(n_splits=1, test_size=test_size, random_state=random_state)
        _, test_idx = next(shuffle.split(df, groups=df[groups]))
    test_mask = np.zeros(len(df), dtype=bool)
    test_mask[test_idx] = True
    return kind, test_mask


MIN_TEST_GROUPS = 5  # fewer groups in the test set: its score is one or two groups' luck
MIN_TEST_CLASS = 2  # rows of a class in the test set: one row cannot be ranked against the rest


def _thin_holdout(df: pd.DataFrame, test: pd.DataFrame, target: str, groups: str | None, classes: bool) -> list[str]:
    """Words when the test set is too thin to judge a model: a handful of groups (a grouping of few
    large groups, a family or a site taken as the unit), or a class with a single row there."""
    out = []
    if groups is not None and (k := int(test[groups].nunique())) < MIN_TEST_GROUPS:
        out.append(f"the test set holds only {k} of the {int(df[groups].nunique())} '{groups}' groups "
                   f"({len(test)} rows): its score is the luck of {'that group' if k == 1 else 'those groups'}; "
                   f"cross-validation over the groups says more, and a grouping this coarse may not be the unit")
    if classes:
        counts = test[target].value_counts()
        thin = [f"'{c}' ({int(n)} row{'s' if n != 1 else ''})" for c, n in counts.items() if n < MIN_TEST_CLASS]
        missing = [f"'{c}'" for c in df[target].dropna().unique() if c not in counts.index]
        if thin or missing:
            out.append("the test set has too few rows of " + ", ".join(thin + [f"{m} (none)" for m in missing])
                       + " to score a classifier on it")
    return out


def _usual_class(groups: pd.Series, strata: pd.Series) -> pd.Series:
    """Each entity's most common class (a crosstab: computed only where a branch needs it)."""
    return pd.crosstab(groups, strata).idxmax(axis=1)


def _few_per_class(label: pd.Series, test_size: float) -> bool:
    """Whether entities can be split stratified by their usual class: every class the usual one of
    two entities or more, and room on each side for one of each."""
    counts = label.value_counts()
    n_test = int(np.ceil(test_size * len(label)))
    return bool(counts.min() >= 2 and min(n_test, len(label) - n_test) >= len(counts))


def _row_split(
    df: pd.DataFrame, strata: pd.Series, classes: bool, stratify: bool, test_size: float, random_state: int,
    warnings: list[str],
) -> tuple[str, np.ndarray]:
    """(kind, test mask) over independent rows: stratified for class targets when every class has
    two rows, else shuffled."""
    from sklearn.model_selection import train_test_split

    can_stratify = classes and stratify and strata.value_counts().min() >= 2
    kind = "stratified" if can_stratify else "random"
    if classes and stratify and not can_stratify:
        warnings.append("a class has a single row: split without stratification")
    positions = np.arange(len(df))
    _, test_idx = train_test_split(
        positions, test_size=test_size, random_state=random_state, stratify=strata if can_stratify else None
    )
    test_mask = np.zeros(len(df), dtype=bool)
    test_mask[test_idx] = True
    return kind, test_mask


def _details(
    df: pd.DataFrame, train: pd.DataFrame, test: pd.DataFrame, target: str, groups: str | None,
    time: str | None, classes: bool, kind: str, random_state: int,
) -> dict[str, Any]:
    """The report's details: sizes, entities on each side (and on both), the time cut, class shares."""
    details: dict[str, Any] = {
        "kind": kind,
        "train_rows": int(len(train)),
        "test_rows": int(len(test)),
        "test_share": float(len(test) / len(df)),
        "random_state": random_state,
    }
    if groups is not None:
        details["train_groups"] = int(train[groups].nunique())
        details["test_groups"] = int(test[groups].nunique())
        details["groups_on_both_sides"] = int(len(set(train[groups]) & set(test[groups])))
    if time is not None:
        details["test_from"] = test[time].min()
        details["train_until"] = train[time].max()
    if classes:
        details["class_share"] = {
            "train": {str(k): float(v) for k, v in train[target].value_counts(normalize=True).items()},
            "test": {str(k): float(v) for k, v in test[target].value_counts(normalize=True).items()},
        }
    return details
