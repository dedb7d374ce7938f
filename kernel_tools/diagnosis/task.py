"""Which learning task the data poses (classification, regression or survival), and why."""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from kernel_tools.diagnosis.columns import ColumnProfile, numeric_values

DURATION_NAME = re.compile(
    r"(^|[_\W])(time|times|duration|follow|followup|futime|survival|surv|survtime|tte|os|pfs|dfs)"
    r"([_\W]|$)|time$|duration$|^surv|futime|follow_?up|time_?to|days_?to|"
    r"^(n_?days|days|weeks?|months?|years?|stop|t)$",
    re.IGNORECASE,
)
MAX_CLASSES = 20


@dataclass
class Outcome:
    """The target as arrays the detectors share; ``valid`` marks rows with a usable target."""

    kind: str
    target: str | None
    y: np.ndarray | None = None  # class codes, values, or the 0/1 event for survival
    valid: np.ndarray | None = None
    classes: list | None = None
    duration: np.ndarray | None = None
    time: str | None = None
    event_values: list | None = None
    reason: str = ""

    @property
    def n_classes(self) -> int:
        return len(self.classes or [])

    def take(self, positions: np.ndarray) -> "Outcome":
        """The same outcome restricted to some rows (e.g. the sample for model-based checks)."""
        return Outcome(self.kind, self.target, None if self.y is None else self.y[positions],
                       None if self.valid is None else self.valid[positions], self.classes,
                       None if self.duration is None else self.duration[positions], self.time,
                       self.event_values, self.reason)


def _class_codes(s: pd.Series) -> tuple[np.ndarray, list]:
    valid = s.notna().to_numpy()
    values = s[valid]
    try:
        classes = sorted(pd.unique(values))
    except TypeError:
        classes = sorted(pd.unique(values.astype(str)))
        values = values.astype(str)
    codes = np.full(len(s), -1, dtype=np.int64)
    codes[valid] = pd.Categorical(values, categories=classes).codes
    return codes, list(classes)


def _event_indicator(s: pd.Series) -> tuple[np.ndarray, list] | None:
    """0/1 events from a two-valued column (or 0 = censored, other codes = events)."""
    present = s.dropna()
    distinct = pd.unique(present)
    if len(distinct) < 2 or len(distinct) > 6:
        return None
    numeric = pd.to_numeric(present, errors="coerce")
    if numeric.notna().all() and set(np.unique(numeric)) >= {0} and (numeric >= 0).all():
        event = (pd.to_numeric(s, errors="coerce") > 0).astype(float).to_numpy()
    elif len(distinct) == 2:
        codes, classes = _class_codes(s)
        event = codes.astype(float)
    else:
        return None
    event[s.isna().to_numpy()] = np.nan
    return event, sorted(map(str, distinct))


def find_duration(df: pd.DataFrame, profiles: dict[str, ColumnProfile], exclude: set[str]) -> str | None:
    """A column named and behaving like a follow-up time (positive numbers); the longest wins."""
    candidates = []
    for name, prof in profiles.items():
        if name in exclude or prof.kind != "numeric" or prof.nunique < 10:
            continue
        if not DURATION_NAME.search(name):
            continue
        v = numeric_values(df[name], prof)
        if np.nanmin(v) < 0 or prof.missing_rate > 0.2:
            continue
        candidates.append((name, v))
    if not candidates:
        return None
    if len(candidates) == 1:
        return candidates[0][0]
    # several time columns (e.g. time to recurrence and time to death): the overall follow-up
    # is the one at least as long as the others on most rows
    def dominance(item):
        _, v = item
        return np.mean([np.nanmean(v >= w) for _, w in candidates])

    return max(candidates, key=dominance)[0]


def infer_task(
    df: pd.DataFrame,
    profiles: dict[str, ColumnProfile],
    target: str | None,
    task: str | None,
    time: str | None,
) -> Outcome:
    """Decide the task from the target's values and a duration column, given or evident."""
    if target is None:
        return Outcome("classification" if task is None else task, None,
                       reason="no target given: only target-free checks ran")
    s = df[target]
    prof = profiles[target]
    if task == "survival" or (time is not None and task is None):
        if time is None:
            time = find_duration(df, profiles, {target})
            if time is None:
                raise ValueError(
                    "task='survival' needs the duration column: pass time='<follow-up column>'"
                )
        event = _event_indicator(s)
        if event is None:
            raise ValueError(
                f"survival target {target!r} must be an event indicator (0 = censored, 1 = event)"
            )
        ind, values = event
        dur = numeric_values(df[time], profiles[time])
        valid = ~np.isnan(ind) & ~np.isnan(dur)
        reason = (f"survival: duration column {time!r} with event indicator {target!r}"
                  + (" (given)" if task == "survival" else ""))
        return Outcome("survival", target, np.nan_to_num(ind).astype(np.int64), valid, [0, 1],
                       dur, time, values, reason)
    numeric = prof.kind in ("numeric", "bool") or prof.parsed_as in ("numeric", "bool")
    values = numeric_values(s, prof) if numeric else None
    distinct = prof.nunique
    if task == "regression" or (
        task is None and numeric and prof.kind != "bool" and prof.parsed_as != "bool"
        and (distinct > MAX_CLASSES or not prof.is_integer and distinct > 2)
    ):
        if values is None:
            raise ValueError(f"regression target {target!r} is not numeric")
        valid = ~np.isnan(values)
        reason = ("regression (given)" if task == "regression"
                  else f"regression: numeric target with {distinct} distinct values")
        return Outcome("regression", target, np.nan_to_num(values), valid, reason=reason)
    codes, classes = _class_codes(s)
    valid = codes >= 0
    kind_reason = f"classification: target has {distinct} classes"
    zero_one = set(np.unique(values[~np.isnan(values)])) <= {0.0, 1.0} if values is not None else False
    if task is None and distinct == 2 and zero_one:
        duration = find_duration(df, profiles, {target})
        event = _event_indicator(s)
        if duration is not None and event is not None:
            ind, ev_values = event
            dur = numeric_values(df[duration], profiles[duration])
            valid = ~np.isnan(ind) & ~np.isnan(dur)
            return Outcome("survival", target, np.nan_to_num(ind).astype(np.int64), valid, [0, 1],
                           dur, duration, ev_values,
                           f"survival: binary target {target!r} next to follow-up time {duration!r}")
    if task == "classification":
        kind_reason = f"classification (given): {distinct} classes"
    return Outcome("classification", target, codes, valid, classes, reason=kind_reason)
