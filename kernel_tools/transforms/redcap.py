"""One row per record at baseline, with the outcome from the event where it is recorded.

A longitudinal REDCap export has a row per record and event (see :mod:`kernel_tools.redcap`).
A prediction made at enrolment may use what the baseline event holds, and must learn the outcome
recorded later (death by month 12, on the ``month_12_arm_1`` row): this step keeps each record's
baseline row, drops the columns the baseline event never holds (forms of later events: blank on
every baseline row, and unknown at enrolment), and joins each outcome column's value from its
event to the same record's row. What it learned (the events, the columns kept, each outcome's
event) replays unchanged on new rows of the same project.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from kernel_tools.plurals import counted
from kernel_tools.redcap import EVENT, REPEAT_INSTANCE, REPEAT_INSTRUMENT, is_system_column, order_events

from ._base import FrameTransformer, check_columns, check_frame
from .report import StepReport


class RedcapBaseline(FrameTransformer):
    """Keep each record's baseline row; take the outcome columns from their events."""

    def __init__(self, outcome: Sequence[str], record: str = "record_id", event: str = EVENT,
                 events: Sequence[str] | None = None, baseline_event: str | None = None,
                 outcome_event: str | dict[str, str] | None = None) -> None:
        self.outcome = outcome
        self.record = record
        self.event = event
        self.events = events
        self.baseline_event = baseline_event
        self.outcome_event = outcome_event

    def fit(self, X: pd.DataFrame, y: Any = None) -> RedcapBaseline:
        X = self._remember_input(X)
        outcome = [self.outcome] if isinstance(self.outcome, str) else list(self.outcome)
        check_columns(X, [self.record, self.event, *outcome], "column")
        events = list(self.events) if self.events is not None else order_events(X, self.record, self.event, None)[0]
        present = {str(e) for e in pd.unique(X[self.event].dropna())}
        if not events:
            raise ValueError(f"{self.event!r} names no event")
        baseline = self.baseline_event or events[0]
        if baseline not in present:
            raise ValueError(f"no row of the baseline event {baseline!r} (events: {sorted(present)[:8]})")
        rows = self._plain(X)
        at_baseline = rows & (X[self.event].astype("string") == baseline).to_numpy()
        self.outcome_events_ = {c: self._outcome_event(X, rows, c, events) for c in outcome}
        system = {self.event, REPEAT_INSTRUMENT, REPEAT_INSTANCE}
        held = X.loc[at_baseline].notna().any()
        self.columns_ = [str(c) for c in X.columns if c not in outcome and c not in system
                         and not is_system_column(str(c)) and (held[c] or c == self.record)]
        self.removed_ = [str(c) for c in X.columns if c not in self.columns_ and c not in outcome]
        self.events_, self.baseline_event_ = events, baseline
        self.feature_names_out_ = self.columns_ + outcome
        return self

    def _outcome_event(self, X: pd.DataFrame, rows: Any, column: str, events: list[str]) -> str:
        given = self.outcome_event
        if isinstance(given, dict) and column in given:
            return given[column]
        if isinstance(given, str):
            return given
        recorded = X.loc[rows & X[column].notna().to_numpy(), self.event].astype("string")
        if recorded.empty:
            raise ValueError(f"outcome {column!r} is blank on every row: no event records it")
        # the latest event that records it for most records: the outcome's own visit
        counts = recorded.value_counts()
        common = counts[counts >= 0.5 * counts.max()].index
        return max(common, key=lambda e: events.index(e) if e in events else -1)

    def _plain(self, X: pd.DataFrame) -> Any:
        if REPEAT_INSTRUMENT not in X.columns:
            return pd.Series(True, index=X.index).to_numpy()
        instrument = X[REPEAT_INSTRUMENT].astype("string").str.strip()
        return (instrument.isna() | (instrument == "")).to_numpy()

    def transform(self, X: pd.DataFrame) -> pd.DataFrame:
        X = self._check_transform_input(X, required=[self.record, self.event])
        rows = self._plain(X)
        events = X[self.event].astype("string")
        base = X.loc[rows & (events == self.baseline_event_).to_numpy(), [c for c in self.columns_ if c in X.columns]]
        base = base.drop_duplicates(self.record)
        out = base.set_index(self.record)
        for column, event in self.outcome_events_.items():
            if column not in X.columns:
                continue
            at = X.loc[rows & (events == event).to_numpy(), [self.record, column]].drop_duplicates(self.record)
            out[column] = at.set_index(self.record)[column].reindex(out.index)
        return out.reset_index()


def redcap_baseline(df: pd.DataFrame, outcome: str | Sequence[str], record: str = "record_id",
                    event: str = EVENT, events: Sequence[str] | None = None, baseline_event: str | None = None,
                    outcome_event: str | dict[str, str] | None = None) -> tuple[pd.DataFrame, StepReport]:
    """One row per ``record`` from a longitudinal REDCap export: its ``baseline_event`` row (the
    first of ``events``), the columns that event holds, and each ``outcome`` column from the event
    that records it (``outcome_event``: one event, a column -> event mapping, or None: the latest
    event recording it for most records).

    ``events``: the events in order (from the diagnosis, the event mapping or the names); None
    orders them from their names or their rows' order within records. Repeating-instrument rows
    are left out (they are summarised separately, if at all). Records without a baseline row are
    left out; a record whose outcome event has no row gets a missing outcome.
    """
    check_frame(df)
    step = RedcapBaseline(outcome, record, event, events, baseline_event, outcome_event).fit(df)
    out = step.transform(df)
    records = int(df[record].nunique())
    outcome_cols = list(step.outcome_events_)
    warnings = []
    no_baseline = records - len(out)
    if no_baseline:
        warnings.append(f"{counted(no_baseline, 'record')} {'has' if no_baseline == 1 else 'have'} no "
                        f"{step.baseline_event_!r} row and {'was' if no_baseline == 1 else 'were'} left out")
    missing = {c: int(out[c].isna().sum()) for c in outcome_cols if out[c].isna().any()}
    if missing:
        warnings.append("records without the outcome at its event: " + ", ".join(
            f"{c} {n} (at {step.outcome_events_[c]!r})" for c, n in missing.items()))
    repeated = int((~step._plain(df)).sum())
    details = {"records": len(out), "events": step.events_, "baseline_event": step.baseline_event_,
               "outcome_events": step.outcome_events_, "columns_not_at_baseline": step.removed_[:50],
               "repeating_rows_left_out": repeated, "outcome_missing": missing}
    return out, StepReport.between("redcap_baseline", df, out, details=details, warnings=warnings, transformer=step)


__all__ = ["RedcapBaseline", "redcap_baseline"]
