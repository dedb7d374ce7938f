"""The layout of a REDCap export: records, events, repeating instruments and the forms each holds.

A longitudinal REDCap project exports one row per record *and event* (``record_id``,
``redcap_event_name``: ``baseline_arm_1``, ``month_6_arm_1`` ...), plus one row per instance of a
repeating instrument (``redcap_repeat_instrument``, ``redcap_repeat_instance``). Each event
holds some of the forms, so the fields of a form an event does not hold are blank on its rows by
design: that is structure, not missing values.

The order of the events comes, in this order of trust, from REDCap's instrument–event mapping
(it lists events in the project's order), from the event names when every name places itself
(``baseline``/``screening`` first, ``week_2``/``month_6``/``year_1`` by the time they name,
``end_of_study`` last), else from where each event's rows sit within their records (REDCap writes
a record's events in the project's order).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from kernel_tools.dictionary import Dictionary

RECORD_NAMES = ("record_id", "record", "study_id", "participant_id", "subject_id")
EVENT = "redcap_event_name"
REPEAT_INSTRUMENT = "redcap_repeat_instrument"
REPEAT_INSTANCE = "redcap_repeat_instance"
SYSTEM = re.compile(r"^redcap_(event_name|repeat_instrument|repeat_instance|data_access_group|survey_identifier)$"
                    r"|_(complete|timestamp)$")
ARM = re.compile(r"_arm_(\d+)$")
FIRST = re.compile(r"(^|_)(screen\w*|baseline|enrol\w*|registration|randomi[sz]\w*|intake|initial|entry|"
                   r"day_?0|week_?0|month_?0|v(isit)?_?0|pre)(_|$)")
LAST = re.compile(r"(^|_)(end\w*|final|close\w*|exit|complet\w*|termination|death|off_study|eos)(_|$)")
# a month is a twelfth of a year exactly: events "12m" and "1y" fall on one day
DAYS = {"d": 1.0, "day": 1.0, "w": 7.0, "wk": 7.0, "week": 7.0, **dict.fromkeys(("m", "mo", "mon", "month"), 365.25 / 12),
        "y": 365.25, "yr": 365.25, "year": 365.25}
TIMED = re.compile(r"(?:^|_)(?:(\d+(?:[._]\d+)?)_?(d|day|w|wk|week|m|mo|mon|month|y|yr|year)s?"
                   r"|(day|week|month|year)s?_?(\d+(?:[._]\d+)?))(?:_|$)")


@dataclass
class Layout:
    """Where a REDCap export keeps its structure, and how its events relate."""

    record: str
    event: str | None = None
    events: list[str] = field(default_factory=list)  # in order, baseline first
    order_from: str = ""  # "the event mapping", "the event names", "the rows' order within records"
    repeat_instrument: str | None = None
    repeat_instance: str | None = None
    forms_by_event: dict[str, list[str]] = field(default_factory=dict)
    forms_from: str = ""  # "the event mapping" or "the data (forms with values at each event)"
    held: dict[str, list[str]] = field(default_factory=dict)  # column -> events whose rows have its values

    @property
    def baseline_event(self) -> str | None:
        return self.events[0] if self.events else None

    def to_dict(self) -> dict:
        return {"record": self.record, "event": self.event, "events": list(self.events),
                "order_from": self.order_from, "repeat_instrument": self.repeat_instrument,
                "repeat_instance": self.repeat_instance,
                "forms_by_event": {e: list(f) for e, f in self.forms_by_event.items()}, "forms_from": self.forms_from}


def is_system_column(column: str) -> bool:
    """REDCap's own columns (event, repeat, data access group, ``<form>_complete``): no field of
    the dictionary describes them."""
    return bool(SYSTEM.search(column))


def find_layout(df: pd.DataFrame, dictionary: Dictionary | None = None) -> Layout | None:
    """The REDCap layout of ``df``, or None when it is not a REDCap export (no event or repeat
    columns named as REDCap names them)."""
    columns = [str(c) for c in df.columns]
    event = EVENT if EVENT in columns else None
    repeat = REPEAT_INSTRUMENT if REPEAT_INSTRUMENT in columns else None
    if event is None and repeat is None:
        return None
    record = _record_column(columns, dictionary)
    if record is None:
        return None
    layout = Layout(record, event, repeat_instrument=repeat,
                    repeat_instance=REPEAT_INSTANCE if REPEAT_INSTANCE in columns else None)
    if event is not None:
        layout.events, layout.order_from = order_events(df, record, event, dictionary)
        layout.forms_by_event, layout.forms_from = _forms_by_event(df, layout, dictionary)
        layout.held = _held(df, layout)
    return layout


def _held(df: pd.DataFrame, layout: Layout) -> dict[str, list[str]]:
    """Per column (REDCap's own and the record aside), the events whose rows have its values."""
    assert layout.event is not None
    columns = [c for c in df.columns if c != layout.record and not is_system_column(str(c))]
    filled = df[columns].notna().groupby(df[layout.event].to_numpy()).any()
    return {str(c): [e for e in layout.events if e in filled.index and bool(filled.at[e, c])] for c in columns}


def _record_column(columns: list[str], dictionary: Dictionary | None) -> str | None:
    """REDCap's record id is the project's first field, and the export's first column."""
    if dictionary is not None and dictionary.format == "redcap" and dictionary.fields:
        first = next(iter(dictionary.fields))
        if first in columns:
            return first
    named = [c for c in columns if c.lower() in RECORD_NAMES]
    return named[0] if named else (columns[0] if columns and columns[0] != EVENT else None)


def event_time(name: str) -> tuple[int, float] | None:
    """(arm, days from the start) an event's name says, or None when it says no time."""
    match = ARM.search(name)
    arm = int(match.group(1)) if match else 1
    base = ARM.sub("", name.lower())
    if FIRST.search(base):
        return arm, 0.0
    if LAST.search(base):
        return arm, float("inf")
    timed = TIMED.search(base)
    if timed is None:
        return None
    number, unit = (timed.group(1), timed.group(2)) if timed.group(1) else (timed.group(4), timed.group(3))
    return arm, float(number.replace("_", ".")) * DAYS[unit]


def order_events(df: pd.DataFrame, record: str, event: str, dictionary: Dictionary | None) -> tuple[list[str], str]:
    """The export's events in order, and what the order rests on."""
    present = [str(e) for e in pd.unique(df[event].dropna())]
    if dictionary is not None and dictionary.events:
        mapped = dictionary.event_order()
        if set(present) <= set(mapped):
            return [e for e in mapped if e in set(present)], "the event mapping"
    times = {e: event_time(e) for e in present}
    if present and all(t is not None for t in times.values()):
        return sorted(present, key=lambda e: times[e] or (0, 0.0)), "the event names"
    position = df.groupby(record, sort=False).cumcount()
    mean = position.groupby(df[event].to_numpy()).mean()
    return sorted(present, key=lambda e: float(mean.get(e, 0.0))), "the rows' order within records"


def _forms_by_event(df: pd.DataFrame, layout: Layout, dictionary: Dictionary | None) -> tuple[dict[str, list[str]], str]:
    if dictionary is not None and dictionary.events and all(e.forms for e in dictionary.events):
        return {e.name: list(e.forms) for e in dictionary.events if e.name in layout.events}, "the event mapping"
    if dictionary is None or not dictionary.forms:
        return {}, ""
    plain = _plain_rows(df, layout)
    events = df[layout.event]
    held: dict[str, list[str]] = {e: [] for e in layout.events}
    for form, columns in form_columns(dictionary, df).items():
        filled = df[columns].notna().any(axis=1) & plain
        for e in pd.unique(events[filled].dropna()):
            if str(e) in held:
                held[str(e)].append(form)
    return held, "the data (forms with values at each event)"


def form_columns(dictionary: Dictionary, df: pd.DataFrame) -> dict[str, list[str]]:
    """The columns of ``df`` of each form (checkbox columns aside: REDCap writes their 0s on
    events that do not hold the form, so they say nothing about which forms an event holds)."""
    out: dict[str, list[str]] = {}
    for column in map(str, df.columns):
        f = dictionary.field(column)
        if f is not None and f.form and not f.multi and f.name != next(iter(dictionary.fields)):
            out.setdefault(f.form, []).append(column)
    return out


def _plain_rows(df: pd.DataFrame, layout: Layout) -> pd.Series:
    """Rows that are not instances of a repeating instrument."""
    if layout.repeat_instrument is None:
        return pd.Series(True, index=df.index)
    return df[layout.repeat_instrument].isna() | (df[layout.repeat_instrument].astype("string").str.strip() == "")


def blank_by_design(df: pd.DataFrame, layout: Layout | None, dictionary: Dictionary) -> dict[str, np.ndarray]:
    """Per column, the rows where a blank is structure: the rows of events that do not hold its
    form, the rows of other instruments' repeated instances (or plain rows, for a repeating
    instrument's own fields), and the rows where its branching logic hides it."""
    n = len(df)
    plain = _plain_rows(df, layout).to_numpy() if layout is not None else np.ones(n, dtype=bool)
    instrument = (df[layout.repeat_instrument].astype("string").fillna("").to_numpy()
                  if layout is not None and layout.repeat_instrument else None)
    repeating = set(instrument[~plain]) if instrument is not None else set()
    events = df[layout.event].astype("string").fillna("").to_numpy() if layout and layout.event else None
    out: dict[str, np.ndarray] = {}
    if layout is not None and events is not None and not layout.forms_by_event:
        # no forms known: a column blank on every row of an event is not collected there
        for column, held in layout.held.items():
            mask = ~plain | ~np.isin(events, held)
            if held and mask.any():
                out[column] = mask
    for form, columns in form_columns(dictionary, df).items():
        if form in repeating and instrument is not None:
            mask = instrument != form
        else:
            mask = ~plain
            if events is not None and layout is not None and layout.forms_by_event:
                holding = [e for e, forms in layout.forms_by_event.items() if form in forms]
                mask = mask | ~np.isin(events, holding)
        for column in columns:
            f = dictionary.field(column)
            hidden = branched_off(df, f.branching) if f is not None and f.branching else None
            both = mask if hidden is None else mask | hidden
            if both.any():
                out[column] = both
    return out


BRANCH_TERM = re.compile(r"\[(\w+)(?:\((\w+)\))?\]\s*(=|<>|!=)\s*(?:'([^']*)'|\"([^\"]*)\"|(-?[\w.]+))")


def branched_off(df: pd.DataFrame, logic: str) -> np.ndarray | None:
    """The rows where REDCap's branching logic hides a field (so its blank is by design), for
    logic made of ``[field] = 'value'`` / ``<>`` terms (``[box(2)]`` for a checkbox choice)
    joined by ``and`` / ``or`` (one kind only); None for any other logic."""
    terms = list(BRANCH_TERM.finditer(logic))
    joiners = set(re.findall(r"\b(and|or)\b", BRANCH_TERM.sub(" ", logic).lower()))
    rest = re.sub(r"\b(and|or)\b|[()\s]", "", BRANCH_TERM.sub("", logic), flags=re.I)
    if not terms or rest or len(joiners) > 1:
        return None
    shown = []
    for term in terms:
        name = f"{term.group(1)}___{term.group(2).lower()}" if term.group(2) else term.group(1)
        if name not in df.columns:
            return None
        value = next(g for g in term.groups()[3:] if g is not None)
        cells = df[name].map(_code_text).astype("string")
        equal = (cells == value).fillna(False).to_numpy(dtype=bool)
        shown.append(equal if term.group(3) == "=" else ~equal)
    combined = np.logical_or.reduce(shown) if joiners == {"or"} else np.logical_and.reduce(shown)
    return ~combined


def _code_text(value: object) -> object:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return value if value is None or (isinstance(value, float) and np.isnan(value)) else str(value)


__all__ = ["EVENT", "Layout", "blank_by_design", "branched_off", "event_time", "find_layout", "form_columns", "is_system_column",
           "order_events"]
