"""Post-step validation: did the step just run leave the data in a state worth keeping?

The coordinator runs :func:`validate_step` after every step and backtracks to the checkpoint
before it when a check with severity ``"error"`` failed. Each check is cheap (vectorised
pandas on the two frames) so it can run after every cell.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from kernel_tools.plurals import counted

_EXPECT_KEYS = {
    "min_row_retention",
    "rows",
    "id",
    "new_missing",
    "target_changes",
    "train_test",
    "fit_rows",
    "test_index",
}
_ROWS = {"same", "fewer", "more", "one_per_entity", "any"}
_DEFAULT_RETENTION = 0.5


def validate_step(
    before: pd.DataFrame,
    after: pd.DataFrame,
    *,
    target: str | None = None,
    expect: dict[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """Return the checks that failed after a step turned ``before`` into ``after``.

    An empty list means every check passed. Each failure is a JSON-safe dict
    ``{"check", "message", "severity": "error"|"warning", ...numbers}``.

    ``expect`` states what the step is allowed to do, so legitimate changes are not flagged:

    - ``min_row_retention`` (float in (0, 1], default 0.5): fewest rows kept, as a fraction.
    - ``rows``: ``"same"``, ``"fewer"``, ``"more"`` (e.g. a join), ``"any"``, or
      ``"one_per_entity"`` (aggregation; needs ``id``: then the retention threshold is replaced
      by a one-row-per-entity check).
    - ``id``: entity id column, for ``rows="one_per_entity"``.
    - ``new_missing`` (bool): whether the step may create missing values. Unset: new missing
      values are a warning; ``False``: an error; ``True``: not checked.
    - ``target_changes`` (bool, default False): whether the step may change target values
      (e.g. label-issue relabelling).
    - ``train_test``: ``(train, test)`` frames that must have the same columns and dtypes.
    - ``fit_rows`` and ``test_index``: the index labels a transformer was fitted on and the
      test set's index; any overlap means test data leaked into fitting.
    """
    if not isinstance(before, pd.DataFrame):
        raise TypeError(f"before must be a pandas DataFrame, got {type(before).__name__}")
    if not isinstance(after, pd.DataFrame):
        raise TypeError(f"after must be a pandas DataFrame, got {type(after).__name__}")
    expect = _check_expect(expect)
    if target is not None and target not in before.columns:
        raise KeyError(f"target {target!r} is not a column of the frame before the step")

    failures: list[dict[str, Any]] = []
    failures += _check_rows(before, after, expect)
    failures += _check_duplicated_columns(after)
    if target is not None:
        failures += _check_target(before, after, target, expect)
    if expect.get("new_missing") is not True:
        failures += _check_new_missing(before, after, target, expect)
    if "train_test" in expect:
        failures += _check_train_test(*expect["train_test"])
    if "fit_rows" in expect:
        failures += _check_fit_rows(expect["fit_rows"], expect["test_index"])
    return failures


def _check_expect(expect: dict[str, Any] | None) -> dict[str, Any]:
    if expect is None:
        return {}
    if not isinstance(expect, dict):
        raise TypeError(f"expect must be a dict, got {type(expect).__name__}")
    unknown = set(expect) - _EXPECT_KEYS
    if unknown:
        raise ValueError(
            f"unknown expectation{'s' if len(unknown) > 1 else ''} {sorted(unknown)}; allowed: {sorted(_EXPECT_KEYS)}"
        )
    retention = expect.get("min_row_retention", _DEFAULT_RETENTION)
    if isinstance(retention, bool) or not isinstance(retention, (int, float)) or not (
        0 < retention <= 1
    ):
        raise ValueError(f"min_row_retention must be a number in (0, 1], got {retention!r}")
    rows = expect.get("rows", "any")
    if rows not in _ROWS:
        raise ValueError(f"expect['rows'] must be one of {sorted(_ROWS)}, got {rows!r}")
    if rows == "one_per_entity" and not expect.get("id"):
        raise ValueError("expect['rows'] == 'one_per_entity' needs expect['id'] (the entity column)")
    if "train_test" in expect:
        pair = expect["train_test"]
        if not (
            isinstance(pair, (tuple, list))
            and len(pair) == 2
            and all(isinstance(f, pd.DataFrame) for f in pair)
        ):
            raise TypeError("expect['train_test'] must be a (train, test) pair of DataFrames")
    if ("fit_rows" in expect) != ("test_index" in expect):
        raise ValueError("expect['fit_rows'] and expect['test_index'] must be given together")
    return expect


def _failure(check: str, message: str, severity: str = "error", **numbers: Any) -> dict[str, Any]:
    return {"check": check, "message": message, "severity": severity, **numbers}


def _check_rows(before: pd.DataFrame, after: pd.DataFrame, expect: dict) -> list[dict]:
    repeated = None
    if expect.get("rows") == "one_per_entity" and expect["id"] in after.columns:
        repeated = int(after[expect["id"]].duplicated().sum())
    return row_failures(len(before), len(after), expect, repeated)


def row_failures(n_before: int, n_after: int, expect: dict, repeated: int | None = None) -> list[dict]:
    """The row checks from the counts alone (what a lazy frame computes): ``repeated`` rows of
    an entity after a one-per-entity step, None when its column is gone."""
    rows = expect.get("rows", "any")
    out: list[dict] = []
    if n_after == 0 and n_before > 0:
        return [_failure("empty", "the step removed every row", rows_before=n_before, rows_after=0)]
    if rows == "one_per_entity":
        entity = expect["id"]
        if repeated is None:
            out.append(_failure("one_per_entity", f"entity column {entity!r} is gone after the step"))
        else:
            if repeated:
                out.append(
                    _failure(
                        "one_per_entity",
                        f"{repeated} rows repeat an entity of {entity!r}; expected one row each",
                        repeated_rows=repeated,
                    )
                )
        return out
    retention = n_after / n_before if n_before else 1.0
    threshold = float(expect.get("min_row_retention", _DEFAULT_RETENTION))
    if retention < threshold:
        out.append(
            _failure(
                "row_retention",
                f"only {retention:.0%} of rows kept ({n_after} of {n_before}); "
                f"threshold {threshold:.0%}",
                rows_before=n_before,
                rows_after=n_after,
                retention=round(retention, 4),
                threshold=threshold,
            )
        )
    if rows == "same" and n_after != n_before:
        out.append(
            _failure(
                "rows_changed",
                f"row count changed from {n_before} to {n_after}; the step should keep every row",
                rows_before=n_before,
                rows_after=n_after,
            )
        )
    if n_after > n_before and rows not in ("more", "any"):
        out.append(
            _failure(
                "rows_increased",
                f"row count grew from {n_before} to {n_after} (a join that multiplied rows?)",
                rows_before=n_before,
                rows_after=n_after,
            )
        )
    elif n_after > n_before and rows == "any":
        out.append(
            _failure(
                "rows_increased",
                f"row count grew from {n_before} to {n_after} (a join that multiplied rows?)",
                "warning",
                rows_before=n_before,
                rows_after=n_after,
            )
        )
    return out


def _check_duplicated_columns(after: pd.DataFrame) -> list[dict]:
    duplicated = after.columns[after.columns.duplicated()].unique().tolist()
    if not duplicated:
        return []
    names = [str(c) for c in duplicated]
    return [_failure("duplicated_columns", f"duplicated column names: {names}", columns=names)]


def _kept_rows(before: pd.DataFrame, after: pd.DataFrame) -> pd.Index | None:
    """Index labels present before and after, or None when rows cannot be matched by label.

    A fresh ``0..k-1`` index on fewer rows is ambiguous (rows dropped, then index reset), so
    those rows are not matched: matching them would report changes that did not happen.
    """
    if not (before.index.is_unique and after.index.is_unique):
        return None
    if after.index.equals(before.index):
        return after.index
    index = after.index
    if isinstance(index, pd.RangeIndex) and index.start == 0 and index.step == 1:
        return None
    return before.index.intersection(index)


def _check_target(before: pd.DataFrame, after: pd.DataFrame, target: str, expect: dict) -> list[dict]:
    if target not in after.columns:
        return [_failure("target_lost", f"target column {target!r} is gone after the step")]
    values = after[target]
    if isinstance(values, pd.DataFrame):  # duplicated target name, reported separately
        return []
    if len(values) and values.isna().all():
        return [_failure("target_all_missing", f"target column {target!r} is entirely missing")]
    if expect.get("target_changes") or expect.get("rows") == "one_per_entity":
        return []
    kept = _kept_rows(before, after)
    if kept is None or len(kept) == 0:
        return []
    old = before[target].loc[kept]
    new = values.loc[kept]
    severity = "error"
    if old.dtype != new.dtype:  # e.g. fix_dtypes parsed "1" into 1: compare the values
        old_num = pd.to_numeric(old, errors="coerce")
        new_num = pd.to_numeric(new, errors="coerce")
        if old_num.isna().equals(old.isna()) and new_num.isna().equals(new.isna()):
            old, new = old_num, new_num
        else:  # representation changed (text -> categories, labels recoded): flag, softly
            old, new = old.astype(str).str.strip(), new.astype(str).str.strip()
            severity = "warning"
    changed = ~((old == new) | (old.isna() & new.isna()))
    n_changed = int(changed.sum())
    if n_changed == 0:
        return []
    return [
        _failure(
            "target_changed",
            f"target {target!r} changed on {n_changed} of {len(kept)} kept rows",
            severity,
            changed_rows=n_changed,
            kept_rows=int(len(kept)),
        )
    ]


def _check_new_missing(
    before: pd.DataFrame, after: pd.DataFrame, target: str | None, expect: dict
) -> list[dict]:
    repeated = set(before.columns[before.columns.duplicated()]) | set(
        after.columns[after.columns.duplicated()]
    )
    shared = [c for c in after.columns if c in before.columns and c != target and c not in repeated]
    if not shared:
        return []
    kept = _kept_rows(before, after)
    if kept is not None:
        was = before.loc[kept, shared].isna()
        now = after.loc[kept, shared].isna()
        new = (now & ~was).sum()
    else:  # rows cannot be matched: compare counts
        new = after[shared].isna().sum() - before[shared].isna().sum()
    return missing_failures(new, expect)


def missing_failures(new: pd.Series, expect: dict) -> list[dict]:
    """The new-missing check from the missing values a step added per column."""
    new = new[new > 0]
    if new.empty:
        return []
    severity = "error" if expect.get("new_missing") is False else "warning"
    counts = {str(c): int(n) for c, n in new.items()}
    return [
        _failure(
            "new_missing",
            f"the step created missing values in {counted(len(counts), 'column')}: "
            + ", ".join(f"{c} (+{n})" for c, n in list(counts.items())[:10]),
            severity,
            new_missing=counts,
        )
    ]


def _check_train_test(train: pd.DataFrame, test: pd.DataFrame) -> list[dict]:
    out: list[dict] = []
    only_train = [str(c) for c in train.columns if c not in test.columns]
    only_test = [str(c) for c in test.columns if c not in train.columns]
    if only_train or only_test:
        out.append(
            _failure(
                "train_test_columns",
                f"train and test columns differ: only in train {only_train}, only in test {only_test}",
                only_train=only_train,
                only_test=only_test,
            )
        )
        return out
    if list(train.columns) != list(test.columns):
        out.append(_failure("train_test_columns", "train and test have their columns in a different order", "warning"))
    differing = {
        str(c): [str(train[c].dtype), str(test[c].dtype)]
        for c in train.columns.unique()
        if np.ndim(train[c]) == 1 and train[c].dtype != test[c].dtype
    }
    if differing:
        out.append(
            _failure(
                "train_test_dtypes",
                f"train and test dtypes differ for {sorted(differing)}",
                "warning",
                dtypes=differing,
            )
        )
    return out


def _check_fit_rows(fit_rows: Any, test_index: Any) -> list[dict]:
    overlap = pd.Index(fit_rows).intersection(pd.Index(test_index))
    if len(overlap) == 0:
        return []
    return [
        _failure(
            "fit_on_test",
            f"{len(overlap)} test rows were used for fitting (e.g. {overlap[:3].tolist()})",
            overlapping_rows=int(len(overlap)),
        )
    ]


def split_overlap(train: pd.DataFrame, test: pd.DataFrame, groups: str | None = None,
                  same_source: bool = True) -> dict[str, Any]:
    """What train and test share: row labels (when both come from one frame) and entities.

    A clean split shares neither; the verdict's ``test_untouched`` check reads this. Rows of a
    separate test file have their own labels, so only entities are compared there.
    """
    out: dict[str, Any] = {"train_rows": int(len(train)), "test_rows": int(len(test)), "groups": groups}
    if same_source:
        if not (train.index.is_unique and test.index.is_unique):
            raise ValueError("train or test has duplicated row labels: the split cannot be checked")
        out["shared_rows"] = int(len(train.index.intersection(test.index)))
    if groups is not None and groups in train.columns and groups in test.columns:
        out["shared_entities"] = int(len(set(train[groups].dropna()) & set(test[groups].dropna())))
    return out
