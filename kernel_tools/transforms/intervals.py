"""Repeated records as (start, stop] intervals: every visit used, none before it was made.

A survival cohort followed from enrolment, with measurements repeated at visits (labs at each
clinic visit), is usually collapsed to one row per entity — its first record — so that a model
sees only what is known at enrolment. The counting-process layout keeps every record instead:
a record holds from its own time until the entity's next record (or the end of its
follow-up), so a time-varying Cox model (``kt.fit_evaluate_intervals``, lifelines'
``CoxTimeVaryingFitter``) compares, at each event time, the covariates in force then, each
measured before it. Data already in (start, stop] form (R's ``survival::cgd``, lifelines'
``load_stanford_heart_transplants``) needs no transform.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ._base import FrameTransformer, check_columns, check_frame, is_numeric
from .report import StepReport


class IntervalBuilder(FrameTransformer):
    """Turn each entity's records into (start, stop] intervals (see :func:`to_intervals`).

    What is learned at fit is the code that means "no event" in ``event`` (0 for 0/1/2 codes,
    1 for R's 1/2, False, "alive"...), so the intervals before an event carry it on any data
    the step is replayed on. Rows change, so inside a Pipeline it belongs before the split.
    """

    def __init__(self, id: str, time: str, duration: str, event: str) -> None:
        self.id = id
        self.time = time
        self.duration = duration
        self.event = event

    def fit(self, X: pd.DataFrame, y: Any = None) -> IntervalBuilder:
        # imported here: the diagnosis package is heavy, and the other transforms do not need it
        from kernel_tools.diagnosis.task import event_indicator

        X = self._remember_input(X)
        roles = [self.id, self.time, self.duration, self.event]
        check_columns(X, roles, "column")
        if len(set(roles)) < 4:
            raise ValueError("id, time, duration and event must be four different columns")
        for role in (self.time, self.duration):
            if not is_numeric(X[role]):
                raise ValueError(f"{role!r} must hold numbers (times on one clock, e.g. days since "
                                 f"enrolment); it is {X[role].dtype}")
        read = event_indicator(X[self.event])
        if read is None:
            raise ValueError(f"event column {self.event!r} cannot be read as events (0/1, bool, 1/2, or "
                             f"0 = censored and other codes events); values {pd.unique(X[self.event])[:6].tolist()}")
        censored = X[self.event][read[0] == 0]
        if len(censored):
            self.censored_value_ = censored.iloc[0]
        elif is_numeric(X[self.event]) or pd.api.types.is_bool_dtype(X[self.event]):
            self.censored_value_ = X[self.event].dtype.type(0)
        else:
            raise ValueError(f"every row of {self.event!r} is an event: no value says 'no event' for the "
                             "intervals before it")
        self.feature_names_out_ = list(self.feature_names_in_)
        return self

    def transform(self, X: pd.DataFrame) -> pd.DataFrame:
        X = self._check_transform_input(X, required=[self.id, self.time, self.duration, self.event])
        return self._build(X)[0]

    def _build(self, X: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, int]]:
        """The intervals and what was left out on the way, in counts."""
        roles = [self.id, self.time, self.duration, self.event]
        known = X[roles].notna().all(axis=1)
        rows = X[known].sort_values([self.id, self.time], kind="stable")
        by_entity = rows.groupby(self.id, sort=False)
        # the follow-up and the outcome of an entity are those on its latest record
        end = by_entity[self.duration].transform("last")
        outcome = by_entity[self.event].transform("last")
        varying = int((by_entity[self.duration].nunique() > 1).sum())
        before_end = (rows[self.time] < end).to_numpy()
        rows, end, outcome = rows[before_end], end[before_end], outcome[before_end]
        following = rows.groupby(self.id, sort=False)[self.time].shift(-1)
        stop = following.fillna(end)
        # two records at one time: the later one holds from then on, the earlier spans nothing
        spans = (stop > rows[self.time]).to_numpy()
        last = following.isna().to_numpy()
        out = rows.copy()
        whole = pd.api.types.is_integer_dtype(X[self.time]) and pd.api.types.is_integer_dtype(X[self.duration])
        out[self.duration] = stop.astype(X[self.duration].dtype if whole else "float64")
        event = np.where(last, outcome.to_numpy(dtype=object), self.censored_value_)
        out[self.event] = pd.Series(event, index=out.index).astype(X[self.event].dtype)
        out = out[spans]  # each interval keeps its record's index label
        counts = {"rows_missing_roles": int((~known).sum()), "records_at_or_after_end": int((~before_end).sum()),
                  "records_at_a_repeated_time": int((~spans).sum()), "entities_with_varying_duration": varying}
        return out, counts


def to_intervals(
    df: pd.DataFrame,
    id: str,
    time: str,
    duration: str,
    event: str,
) -> tuple[pd.DataFrame, StepReport]:
    """Each entity's records, ordered by ``time``, as (start, stop] intervals.

    A record holds from its own ``time`` (the start, kept in ``time``) until the entity's next
    record, or until the end of its follow-up for its last record (the stop, written into
    ``duration``); every other column keeps the record's values, which are known at its start.
    ``event`` is the entity's event code on the interval that ends at its event and the "no
    event" code on every other interval, so an entity is censored at each visit but its last.
    ``time`` and ``duration`` must be on one clock (e.g. days since enrolment): the follow-up
    counts from the first record. Records at or after the end of follow-up describe no time at
    risk and are dropped; of two records at one time the later one is kept; rows without an id,
    time, duration or event are dropped. The entity's duration and event are read from its
    latest record (they are normally the same on every record). Rows come out ordered by
    entity and time, each with its record's index label.

    Fit ``kt.fit_evaluate_intervals(out, id=id, start=time, stop=duration, event=event)`` on
    the result; ``report.apply(new_df)`` builds the intervals of new data the same way.
    """
    check_frame(df)
    builder = IntervalBuilder(id=id, time=time, duration=duration, event=event).fit(df)
    out, counts = builder._build(df)
    if out.empty:
        raise ValueError(f"no record of {df.shape[0]} lies before the end of its follow-up: check that "
                         f"{time!r} and {duration!r} count from the same start")
    sizes = out.groupby(id, sort=False).size()
    warnings = []
    if counts["rows_missing_roles"]:
        warnings.append(f"{counts['rows_missing_roles']} rows without {id!r}, {time!r}, {duration!r} or "
                        f"{event!r} were dropped")
    if counts["records_at_or_after_end"]:
        warnings.append(f"{counts['records_at_or_after_end']} records at or after the end of follow-up "
                        "were dropped: they describe no time at risk")
    if counts["entities_with_varying_duration"]:
        warnings.append(f"{counts['entities_with_varying_duration']} entities have several values of "
                        f"{duration!r}: their latest record's value was taken as the end of follow-up")
    details = {
        "entities": int(sizes.shape[0]),
        "entities_left_out": int(df[id].nunique() - sizes.shape[0]),
        "intervals": int(out.shape[0]),
        "intervals_per_entity": {"min": int(sizes.min()), "median": float(sizes.median()),
                                 "max": int(sizes.max())},
        "events": int((out[event] != builder.censored_value_).sum()),
        "start": time,
        "stop": duration,
        "censored_code": builder.censored_value_,
        **counts,
    }
    return out, StepReport.between("to_intervals", df, out, details=details, warnings=warnings,
                                   transformer=builder)


def drop_empty_intervals(
    df: pd.DataFrame,
    start: str,
    stop: str,
    reason: str | None = None,
    id: str | None = None,
    event: str | None = None,
) -> tuple[pd.DataFrame, StepReport]:
    """Leave out the (start, stop] rows that span no time (``stop <= start``), and with ``id`` the
    rows that repeat an earlier interval of their entity exactly.

    Such a row holds no time at risk (an event recorded at the start of follow-up, a data-entry
    slip, a second event at the time of the first), and a time-varying model refuses it. A repeat
    is one stretch of follow-up written twice (two tumours found at one examination): one row of
    it is kept, carrying the event when any of the repeats had it (``event``: the 0/1 column). A
    rule on the columns, so it reads the same on new data; rows with a missing start or stop are
    kept (the model says what it does with them). Nothing is learned.
    """
    check_frame(df)
    check_columns(df, [start, stop] + [c for c in (id, event) if c is not None], "column")
    for name in (start, stop):
        if not is_numeric(df[name]):
            raise ValueError(f"{name!r} must hold numbers (times on one clock); it is {df[name].dtype}")
    empty = (df[stop] <= df[start]).to_numpy()  # NaN compares False: kept
    out = df.loc[~empty]
    repeated = np.zeros(len(out), dtype=bool)
    if id is not None:
        key = [id, start, stop]
        repeated = out.duplicated(key, keep="first").to_numpy() & out[[start, stop]].notna().all(axis=1).to_numpy()
        if repeated.any() and event is not None:
            happened = pd.to_numeric(out[event], errors="coerce").groupby(
                [out[c] for c in key], sort=False, dropna=False).transform("max")
            out = out.assign(**{event: happened.where(~repeated, out[event]).astype(out[event].dtype)})
        out = out.loc[~repeated]
    details = {"rows_removed": int(empty.sum() + repeated.sum()), "rows_empty": int(empty.sum()),
               "rows_repeated": int(repeated.sum()), "start": start, "stop": stop, "reason": reason,
               "example_index": [str(i) for i in df.index[empty][:10]]}
    warnings = [] if empty.any() or repeated.any() else [
        f"no row has {stop!r} <= {start!r}" + (" or repeats an interval" if id is not None else "")
        + ": nothing was left out"]
    return out, StepReport.between("drop_empty_intervals", df, out, details=details, warnings=warnings)
