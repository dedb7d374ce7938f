"""Records over time summarised per entity, using only what was known at the prediction index.

A one-to-many table of measurements (long-format labs or vitals: ``id, day, test, value``; or
``id, day`` and a column per measurement) cannot be joined to a one-row-per-subject table as it
is: the join multiplies rows, and the records after the index are follow-up by construction. The
valid summary keeps, for each entity, the records inside a window relative to the index (time
``<= until``, and ``>= since`` when given; the time counts from the index, day 0), and takes one
value per measurement (the latest by default), pivoted by test in long format; the records file's
row labels (R's row names) number its rows, not the entity's, and are left out. The fitted
:class:`RecordSummarizer` replays the same window, tests and columns on new records.

Records stamped with a clock time (an ICU chart's ``charttime``) count from an ``anchor``: each
entity's own admission time, taken from the one-row-per-entity table (``index=``), in ``unit``
(hours by default), so ``until=24`` keeps the first day after admission.
"""

from __future__ import annotations

import pandas as pd

from kernel_tools.diagnosis.entities import INDEX_NAME
from kernel_tools.diagnosis.id_names import STRONG_ID_NAME

from ._base import FrameTransformer, check_choice, check_columns, check_frame
from .record_units import apply_units, plan_units
from .report import StepReport

HOW = ("last", "first", "mean", "min", "max", "count")


class RecordSummarizer(FrameTransformer):
    """Summarise records per entity in a fixed window: the same columns for new records."""

    def __init__(self, id: str = "id", time: str = "time", until: float = 0.0, since: float | None = None,
                 key: str | None = None, value: str | None = None, how: str = "last", anchor: str | None = None,
                 unit: str = "h", unit_column: str | None = None) -> None:
        self.id = id
        self.time = time
        self.until = until
        self.since = since
        self.key = key
        self.value = value
        self.how = how
        self.anchor = anchor
        self.unit = unit
        self.unit_column = unit_column

    def fit(self, X: pd.DataFrame, y: object = None) -> RecordSummarizer:
        X = self._remember_input(X)
        self.units_: dict = {}
        self.units_said_: list[str] = []
        if self.unit_column is not None and self.key is not None:
            self.units_, self.units_said_ = plan_units(X, self.key, self.unit_column)
        self.feature_names_out_ = list(self._summary(X).columns)
        return self

    def transform(self, X: pd.DataFrame) -> pd.DataFrame:
        X = self._check_transform_input(X, [self.id, self.time])
        out = self._summary(X)
        return out.reindex(columns=self.feature_names_out_)  # a test unseen in training is not a column

    def _window(self, X: pd.DataFrame) -> pd.DataFrame:
        t = relative_time(X, self.time, self.anchor, self.unit)
        keep = t <= self.until
        if self.since is not None:
            keep &= t >= self.since
        return X.loc[keep.fillna(False)]

    def _summary(self, X: pd.DataFrame) -> pd.DataFrame:
        inside = self._window(X).sort_values([self.id, self.time], kind="stable")
        if self.key is not None and self.value is not None:
            if self.unit_column is not None:  # one unit per item, or one column per unit
                inside = apply_units(inside, self.key, self.value, self.unit_column, self.units_)
            long = inside[[self.id, self.key, self.value]]
            wide = _take(long.groupby([self.id, self.key], sort=True)[self.value], self.how).unstack(self.key)
            wide.columns = [f"{k}_{self.how}" for k in wide.columns]
        else:  # a row label or another id (a stay's, the file's row_id) is no measurement
            values = [c for c in inside.columns if c not in (self.id, self.time, self.anchor)
                      and not INDEX_NAME.search(str(c).strip()) and not STRONG_ID_NAME.search(str(c).strip())]
            wide = _take(inside.groupby(self.id, sort=True)[values], self.how)
            wide.columns = [f"{c}_{self.how}" for c in wide.columns]
        wide["records_before_index"] = inside.groupby(self.id, sort=True).size()
        return wide.reset_index().rename(columns={"index": self.id})


def relative_time(X: pd.DataFrame, time: str, anchor: str | None, unit: str = "h") -> pd.Series:
    """Each record's time from its entity's index: the time itself, or its clock time minus the
    anchor's in ``unit`` (unparseable stamps are missing: outside every window)."""
    if anchor is None:
        return pd.to_numeric(X[time], errors="coerce")
    stamp = pd.to_datetime(X[time], errors="coerce", format="mixed")
    start = pd.to_datetime(X[anchor], errors="coerce", format="mixed")
    return (stamp - start) / pd.Timedelta(1, unit=unit)


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
    index: pd.DataFrame | None = None,
    anchor: str | None = None,
    unit: str = "h",
    unit_column: str | None = None,
) -> tuple[pd.DataFrame, StepReport]:
    """One row per entity from its records in the window ``since <= time <= until``.

    ``time`` counts from each entity's index (day 0 = enrolment): ``until=0`` keeps what was
    known at the index, so nothing measured later reaches a model. ``key`` / ``value``: a long
    table (``test``, ``value``) is pivoted to a column per test; otherwise every other column is
    a measurement. ``how``: which record's value, or a summary ("last", "first", "mean", "min",
    "max", "count"). The result also counts each entity's records in the window
    (``records_before_index``); entities with none are absent (a left join leaves them missing).
    ``index`` / ``anchor``: clock-time records count from each entity's ``anchor`` column of the
    one-row-per-entity frame ``index`` (an admission time), in ``unit`` ("h", "D", "min").
    ``unit_column``: the long table's unit of each value (``mg/dL``): an item recorded in several
    units is converted to its most recorded one where the factor is known, else kept apart as
    ``item [unit]`` columns — never averaged across units (:mod:`.record_units`).
    """
    check_frame(records, "records")
    check_columns(records, [id, time] + [c for c in (key, value, unit_column) if c is not None], "records column")
    check_choice(how, "how", HOW)
    if (key is None) != (value is None):
        raise ValueError("key and value go together: a long table names its test column and its value column")
    if (index is None) != (anchor is None):
        raise ValueError("index and anchor go together: the frame holding each entity's index time, and its column")
    if index is not None:
        check_columns(index, [id, anchor], "index column")
        records = records.drop(columns=[anchor], errors="ignore").merge(
            index[[id, anchor]].drop_duplicates(id), on=id, how="left")
    if unit_column is not None and key is None:
        raise ValueError("unit_column needs key and value: units are reconciled per item of a long table")
    summarizer = RecordSummarizer(id, time, until, since, key, value, how, anchor, unit, unit_column).fit(records)
    out = summarizer.transform(records)
    t = relative_time(records, time, anchor, unit)
    after = int((t > until).sum())
    details = {"id": id, "time": time, "anchor": anchor, "unit": unit if anchor else None, "until": until, "since": since, "key": key, "value": value, "how": how,
               "unit_column": unit_column, "units": summarizer.units_said_,
               "records": int(len(records)), "records_after_index": after, "entities": int(len(out))}
    warnings = [f"{after} of {len(records)} records are after the index ({time} > {until:g}): left out, they "
                "are follow-up"] if after else []
    warnings += [f"units: {said}" for said in summarizer.units_said_]
    return out, StepReport.between("summarize_records", records, out, details=details, warnings=warnings,
                                   transformer=summarizer)
