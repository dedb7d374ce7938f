"""The post-step checks and the split audit on lazy frames, each in one pass.

Rows of a lazy frame have no labels to match before and after a step, so the checks compare
counts — as :func:`kernel_tools.checks.validate_step` does for pandas frames whose rows cannot
be matched: row counts, missing values per column, the target's presence, one row per entity,
train/test schemas. Everything a check needs is computed together (the files are read once).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from kernel_tools import checks
from kernel_tools.lazy import engine


def validate_lazy(before: Any, after: Any, *, target: str | None = None,
                  expect: dict[str, Any] | None = None) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """(failures, row and column counts) of a step that turned ``before`` into ``after``; either
    may be a pandas frame too (a sample taken into memory)."""
    expect = dict(expect or {})
    pair = expect.pop("train_test", None)
    expect = checks._check_expect(expect)
    if target is not None and target not in before.columns:
        raise KeyError(f"target {target!r} is not a column of the frame before the step")
    shared = [c for c in after.columns if c in before.columns and c != target]
    entity = expect.get("id") if expect.get("rows") == "one_per_entity" else None
    todo: dict[str, Any] = {"n_before": before.shape[0], "n_after": after.shape[0]}
    if expect.get("new_missing") is not True and shared:
        todo["missing_before"] = before[shared].isna().sum()
        todo["missing_after"] = after[shared].isna().sum()
    if target is not None and target in after.columns:
        todo["target_missing"] = after[target].isna().sum()
        if _target_comparable(before, after, target, expect):
            # rows have no labels to match: the multiset of target values, as a sum of their hashes
            todo["target_before"] = engine.row_hashes(before, [target]).sum()
            todo["target_after"] = engine.row_hashes(after, [target]).sum()
    if entity is not None and entity in after.columns:
        todo["repeated"] = engine.duplicated_count(after[entity])
    done = dict(zip(todo, engine.compute(*todo.values())))
    n_before, n_after = int(done["n_before"]), int(done["n_after"])

    failures = checks.row_failures(n_before, n_after, expect,
                                   int(done["repeated"]) if "repeated" in done else None)
    failures += checks._check_duplicated_columns(_schema(after))
    if target is not None:
        if target not in after.columns:
            failures.append(checks._failure("target_lost", f"target column {target!r} is gone after the step"))
        elif n_after and int(done["target_missing"]) == n_after:
            failures.append(checks._failure("target_all_missing", f"target column {target!r} is entirely missing"))
        elif "target_before" in done and n_before == n_after and done["target_before"] != done["target_after"]:
            failures.append(checks._failure("target_changed", f"target {target!r} has other values after the "
                                            f"step (its {n_after} rows, compared as a whole: lazy rows have no labels)"))
    if "missing_before" in done:
        failures += checks.missing_failures(done["missing_after"] - done["missing_before"], expect)
    if pair is not None:
        failures += checks._check_train_test(_schema(pair[0]), _schema(pair[1]))
    if "fit_rows" in expect:
        failures += checks._check_fit_rows(expect["fit_rows"], expect["test_index"])
    info = {"rows_before": n_before, "rows_after": n_after,
            "cols_before": len(before.columns), "cols_after": len(after.columns)}
    return failures, info


def _target_comparable(before: Any, after: Any, target: str, expect: dict[str, Any]) -> bool:
    """Whether the target's values must be the same before and after (as validate_step's
    target check): the step keeps every row and the target's type, and may not change it."""
    return (not expect.get("target_changes") and expect.get("rows") in (None, "same")
            and _schema(before)[target].dtype == _schema(after)[target].dtype)


def _schema(df: Any) -> pd.DataFrame:
    """An empty pandas frame with ``df``'s columns and dtypes (a lazy frame's ``_meta``)."""
    return df._meta if engine.is_lazy(df) else df.iloc[:0]


def split_overlap_lazy(train: Any, test: Any, groups: str | None = None) -> dict[str, Any]:
    """What lazy train and test share, in one pass: entities (``groups``), compared through
    64-bit hashes of their ids, and rows, through hashes of every value — lazy rows have no
    labels, so two equal rows on both sides count as shared."""
    todo: dict[str, Any] = {"train_rows": train.shape[0], "test_rows": test.shape[0],
                            "train_rows_h": engine.row_hashes(train).unique(),
                            "test_rows_h": engine.row_hashes(test).unique()}
    if groups is not None and groups in train.columns and groups in test.columns:
        todo["train_ids"] = engine.row_hashes(train[[groups]].dropna()).unique()
        todo["test_ids"] = engine.row_hashes(test[[groups]].dropna()).unique()
    done = dict(zip(todo, engine.compute(*todo.values())))
    out: dict[str, Any] = {"train_rows": int(done["train_rows"]), "test_rows": int(done["test_rows"]),
                           "groups": groups, "compared_by": "hashes of the values (lazy rows have no labels)"}
    out["shared_rows"] = int(np.intersect1d(done["train_rows_h"], done["test_rows_h"]).size)
    if "train_ids" in done:
        out["shared_entities"] = int(np.intersect1d(done["train_ids"], done["test_ids"]).size)
    return out
