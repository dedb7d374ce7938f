"""Checks on what diagnose is given, so bad input fails with a message naming the problem."""

from __future__ import annotations

import pandas as pd

from kernel_tools.time_names import all_events_status
from kernel_tools.vocabulary import TASK_KINDS as TASKS
from kernel_tools.vocabulary import TaskKind


def check_frame(df, name: str = "df") -> None:
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"{name} must be a pandas DataFrame, got {type(df).__name__}")
    if isinstance(df.columns, pd.MultiIndex):
        raise TypeError(
            f"{name} has MultiIndex columns; flatten them first, e.g. "
            f"{name}.columns = ['_'.join(map(str, c)) for c in {name}.columns]"
        )
    bad = [c for c in df.columns if not isinstance(c, str)]
    if bad:
        raise TypeError(
            f"{name} has non-string column names {bad[:5]!r}; rename them, e.g. "
            f"{name}.columns = {name}.columns.astype(str)"
        )
    dup = df.columns[df.columns.duplicated()].unique().tolist()
    if dup:
        raise ValueError(f"{name} has duplicated column names {dup[:5]!r}; make them unique first")
    if df.shape[0] == 0:
        raise ValueError(f"{name} has no rows: nothing to diagnose")
    if df.shape[1] == 0:
        raise ValueError(f"{name} has no columns: nothing to diagnose")


def check_column(df: pd.DataFrame, column, role: str) -> None:
    if column is None:
        return
    if not isinstance(column, str):
        raise TypeError(f"{role} must be a column name (str), got {type(column).__name__}")
    if column not in df.columns:
        close = [c for c in df.columns if c.lower() == column.lower()]
        hint = f"; did you mean {close[0]!r}?" if close else f"; columns are {list(df.columns)[:20]!r}"
        raise KeyError(f"{role} column {column!r} is not in the frame{hint}")


def check_arguments(df, target, task, time, id, test, sample, index=None) -> None:
    check_frame(df)
    if index is not None and index not in ("first", "row"):
        check_column(df, index, "index")
    for column, role in ((target, "target"), (time, "time"), (id or None, "id")):  # id "": no entity
        check_column(df, column, role)
    if task is not None and task not in TASKS:
        raise ValueError(f"task must be one of {TASKS} or None, got {task!r}")
    if target is not None:
        if time == target or id == target:
            raise ValueError(f"target {target!r} cannot also be the time or id column")
        present = df[target].notna().sum()
        if present == 0:
            raise ValueError(f"target {target!r} is entirely missing: nothing to learn from")
        one = df[target].dropna()
        # a status with every row the event may be survival over a time beside it: the task decides
        if one.nunique() < 2 and not (task in (None, TaskKind.SURVIVAL) and all_events_status(
                one.iloc[0], time, [c for c in map(str, df.columns) if c != target])):
            raise ValueError(f"target {target!r} has a single value: there is nothing to predict")
    elif task == TaskKind.SURVIVAL and time is None:
        raise ValueError("task='survival' needs target=<event column> and time=<duration column>")
    if sample is not None and (not isinstance(sample, int) or isinstance(sample, bool) or sample < 100):
        raise ValueError(f"sample must be an integer >= 100 or None, got {sample!r}")
    if test is not None:
        check_frame(test, "test")
