"""Records over time summarised per entity, using only what was known at the prediction index.

A one-to-many table of measurements (long-format labs or vitals: ``id, day, test, value``; or
``id, day`` and a column per measurement) cannot be joined to a one-row-per-subject table as it
is: the join multiplies rows, and the records after the index are follow-up by construction. The
valid summary keeps, for each entity, the records inside a window relative to the index (time
``<= until``, and ``>= since`` when given; the time counts from the index, day 0), and takes one
value per measurement (the latest by default), pivoted by test in long format; the records file's
row labels (R's row names) number its rows, not the entity's, and are left out. The fitted
:class:`RecordSummarizer` replays the same window, tests and columns on new records.
"""

from __future__ import annotations

import pandas as pd

from kernel_tools.diagnosis.entities import INDEX_NAME

from ._base import FrameTransformer, check_choice, check_columns, check_frame
from .report import StepReport

HOW = ("last", "first", "mean", "min", "max", "count")


class RecordSummarizer(FrameTransformer):
    """Summarise records per entity in a fixed window: the same columns for new records."""

    def __init__(self, id: str = "id", time: str = "time", until: float = 0.0, since: float | None = None,
                 key: str | None = None, value: str | None = None, how: str = "last") -> None:
        self.id = id
        self.time = time
        self.until = until
        self.since = since
        self.key = key
        self.value = value
        self.how = how

    def fit(self, X: pd.DataFrame, y: object = None) -> RecordSummarizer:
        X = self._remember_input(X)
        self.feature_names_out_ = list(self._summary(X).columns)
        return self

    def transform(self, X: pd.DataFrame) -> pd.DataFrame:
        X = self._check_transform_input(X, [self.id, self.time])
        out = self._summary(X)
        return out.reindex(columns=self.feature_names_out_)  # a test unseen in training is not a column

    def _window(self, X: pd.DataFrame) -> pd.DataFrame:
        t = pd.to_numeric(X[self.time], errors="coerce")
        keep = t <= self.until
        if self.since is not None:
            keep &= t >= self.since
        return X.loc[keep.fillna(False)]

    def _summary(self, X: pd.DataFrame) -> pd.DataFrame:
        inside = self._window(X).sort_values([self.id, self.time], kind="stable")
        if self.key is not None and self.value is not None:
            long = inside[[self.id, self.key, self.value]]
            wide = _take(long.groupby([self.id, self.key], sort=True)[self.value], self.how).unstack(self.key)
            wide.columns = [f"{k}_{self.how}" for k in wide.columns]
        else:  # a row label of the records file numbers its rows, not the entity's: no measurement
            values = [c for c in inside.columns
                      if c not in (self.id, self.time) and not INDEX_NAME.search(str(c).strip())]
            wide = _take(inside.groupby(self.id, sort=True)[values], self.how)
            wide.columns = [f"{c}_{self.how}" for c in wide.columns]
        wide["records_before_index"] = inside.groupby(self.id, sort=True).size()
        return wide.reset_index().rename(columns={"index": self.id})


def _take(grouped, how: str):
    return grouped.count() if how == "count" else getattr(grouped, how)()


def summarize_records(
    records: pd.DataFrame,
    id: str,
    time: str,
    *,
    until: float = 0.0,
    since: float | None = None,
    key: str | None = None,
    value: str | None = None,
    how: str = "last",
) -> tuple[pd.DataFrame, StepReport]:
    """One row per entity from its records in the window ``since <= time <= until``.

    ``time`` counts from each entity's index (day 0 = enrolment): ``until=0`` keeps what was
    known at the index, so nothing measured later reaches a model. ``key`` / ``value``: a long
    table (``test``, ``value``) is pivoted to a column per test; otherwise every other column is
    a measurement. ``how``: which record's value, or a summary ("last", "first", "mean", "min",
    "max", "count"). The result also counts each entity's records in the window
    (``records_before_index``); entities with none are absent (a left join leaves them missing).
    """
    check_frame(records, "records")
    check_columns(records, [id, time] + [c for c in (key, value) if c is not None], "records column")
    check_choice(how, "how", HOW)
    if (key is None) != (value is None):
        raise ValueError("key and value go together: a long table names its test column and its value column")
    summarizer = RecordSummarizer(id, time, until, since, key, value, how).fit(records)
    out = summarizer.transform(records)
    t = pd.to_numeric(records[time], errors="coerce")
    after = int((t > until).sum())
    details = {"id": id, "time": time, "until": until, "since": since, "key": key, "value": value, "how": how,
               "records": int(len(records)), "records_after_index": after, "entities": int(len(out))}
    warnings = [f"{after} of {len(records)} records are after the index ({time} > {until:g}): left out, they "
                "are follow-up"] if after else []
    return out, StepReport.between("summarize_records", records, out, details=details, warnings=warnings,
                                   transformer=summarizer)
