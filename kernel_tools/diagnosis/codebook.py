"""What a study's codebook says about a frame, as evidence with a confidence.

Value tests cannot see a follow-up measure that is only mildly related to the outcome, nor an
identifier that looks like a number. The codebook (:mod:`kernel_tools.dictionary`) often says
both outright. This module turns what it says into evidence the diagnosis weighs, each piece
citing the codebook line it rests on:

- **timing** of each column, in order of trust: the events that hold its form (REDCap's
  instrument–event mapping, or what the data show each event holds), the name of its form
  (``follow_up_visit``, ``baseline_demographics``), the time words of its label ("since
  enrolment", "at the 6-month visit", "date of death", "prior to admission"); fields recorded on
  the target's own later form are recorded with the outcome;
- **identifiers and privacy**: REDCap's ``Identifier?`` = y, a label or validation that names
  personal data (names, dates of birth, record numbers, addresses, phone numbers): never a
  feature, and marked so that none of its values reaches an LLM (:mod:`kernel_tools.privacy`);
- **categories**: coded values outside the codebook's choices, REDCap checkbox columns
  (``field___code``) as one multi-select field;
- **ranges and units**: values outside the validation range, units from labels.

What the codebook says is added to the data's own evidence, never put in its place: a timing
only raises a column's class (the data's evidence stays beside it, and a contradiction lowers the
confidence), an identifier is a gated finding, and a codebook that disagrees with the data (a
field missing from the table, values outside its choices) is a finding, not an error.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from dataclasses import field as dc_field
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from kernel_tools.diagnosis.options import call, keep
from kernel_tools.diagnosis.registry import Context, KindData, detector
from kernel_tools.dictionary import Dictionary, Field
from kernel_tools.findings import Finding, Option
from kernel_tools.plurals import counted
from kernel_tools.privacy import mark_private, personal_data
from kernel_tools.redcap import Layout, blank_by_design, find_layout, is_system_column
from kernel_tools.vocabulary import Basis

if TYPE_CHECKING:
    from kernel_tools.diagnosis.timing import Timing

ORDER = {"baseline": 1, "follow_up": 2, "outcome_derived": 3}
CONFIDENCE = {"event": 0.9, "event_rows": 0.8, "target_form": 0.8, "form": 0.75, "label": 0.7, "label_baseline": 0.6,
              "label_year": 0.6}
YEAR = re.compile(r"\b(1[89]\d\d|20\d\d)\b(?! dollars)")
DERIVED = re.compile(r"\b(recoded|derived|computed|calculated|categori[sz]ed|based on)\b", re.I)
MIN_CONFIDENCE = 0.6  # below this a codebook's timing is a hint, not evidence

_N = r"(?:[1-9]\d*|one|two|three|four|five|six|nine|twelve|eighteen|twenty[- ]four|thirty|sixty|ninety)"
_UNIT = r"(?:day|week|month|year|hour)s?"
OUTCOME_WORDS = re.compile(r"\b(death|died|dead|deceased|mortality|vital status|fatal\w*|autopsy|survival status|"
                           r"cause of death)\b", re.I)
FOLLOW_WORDS = re.compile(
    r"follow[- ]?up|\bsince (the )?(enrol|randomi|baseline|admission|entry|inclusion|diagnosis|surgery|discharge|"
    r"study start|index)|\bafter (the )?(enrol|randomi|baseline|admission|surgery|operation|treatment|discharge|"
    r"inclusion|index|transplant|diagnosis)|\bpost[- ]?(op\b|operative\w*|treatment|randomi\w*|discharge|"
    r"baseline|transplant|intervention)"
    rf"|\b(at|by|within|during|over|in) (the )?(first )?{_N}[- ]{_UNIT}\b|\b{_N}[- ]{_UNIT}\)? (visit|follow|"
    r"assessment|check|review|value|measure)"
    r"|\b(month|week|year|day) ?[1-9]\d*\b|\bvisit ?([2-9]|\d{2,})\b|length of (hospital )?stay|\blos\b|"
    r"days? (in|of) hospital|hospital days|\bduring (the )?(study|follow|hospital|admission|stay|treatment|trial|"
    r"observation)|readmi\w+|re-?admission|\bat discharge|discharge (status|destination|disposition|date)|"
    r"\blast (contact|visit|follow|known|seen)|\btime (to|until) |\bsubsequent|recurren\w+|relapse|progression|"
    r"\b(days|weeks|months|years)\b[^.;]{0,40}\b(until|to) (the )?(diagnosis|death|event|progression|recurrence|"
    r"relapse|transplant|discharge|failure|censoring|last)|\bmediator\b|"
    r"complication|adverse event|end of (treatment|study)|final (visit|assessment|status)", re.I)
BEFORE_WORDS = re.compile(r"\b(prior|before|previous(ly)?|preceding|history|past|pre[- ]existing|ever)\b", re.I)
BASELINE_WORDS = re.compile(
    r"\b(at|on) (the )?(baseline|enrol\w*|randomi\w*|entry|admission|inclusion|screening|diagnosis|presentation|"
    r"intake|registration|index)|\bbaseline\b|\bpre[- ]?(treatment|operative\w*|op\b|randomi\w*|enrol\w*|"
    r"intervention|transplant)|\bprior to\b|\bbefore (the )?(enrol|randomi|admission|treatment|surgery|study|index|"
    r"inclusion)|\bhistory of\b|\bat birth\b|\bage at (diagnosis|entry|enrol\w*|inclusion|admission|randomi\w*)", re.I)
FORM_OUTCOME = re.compile(r"(^|_)(outcome\w*|death|mortality|vital_status|end_of_(study|follow\w*)|study_end|"
                          r"termination|close_?out|exit)(_|$)", re.I)
FORM_FOLLOW = re.compile(r"(^|_)(follow\w*|fu|f_u|visit_?([2-9]|\d{2,})|month_?[1-9]\d*|week_?[1-9]\d*|"
                         r"year_?[1-9]\d*|day_?[1-9]\d*|\d+_?(m|mo|month|wk|week|y|yr|year)s?|post\w*|discharge|"
                         r"readmission|adverse\w*|ae|complications?|hospitali[sz]ation)(_|$)", re.I)
FORM_BASELINE = re.compile(r"(^|_)(baseline|enrol\w*|screening|eligibility|demograph\w*|consent|registration|"
                           r"randomi[sz]ation|medical_history|history|intake|inclusion|admission|pre\w*)(_|$)", re.I)

@dataclass
class TimingSaid:
    """One piece of timing evidence from the codebook."""

    timing: str  # baseline, follow_up, outcome_derived
    confidence: float
    source: str  # event, target_form, form, label
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"timing": self.timing, "confidence": self.confidence, "source": self.source, "reason": self.reason}


@dataclass
class ColumnSaid:
    """What the codebook says about one column of the frame."""

    column: str
    field: Field
    citation: str
    timings: list[TimingSaid] = dc_field(default_factory=list)
    private: str | None = None  # why it identifies a person
    group: str | None = None  # the multi-select field a REDCap checkbox column belongs to
    described: bool = True  # False: not in the codebook, timed by the export's layout only

    @property
    def timing(self) -> TimingSaid | None:
        """The codebook's timing of the column: the latest class any confident source gives (a
        follow-up measure on a baseline form is still follow-up), less sure when another source
        says earlier."""
        sure = [t for t in self.timings if t.confidence >= MIN_CONFIDENCE]
        if not sure:
            return None
        latest = max(sure, key=lambda t: (ORDER[t.timing], t.confidence))
        if latest.timing != "baseline" and any(t.timing == "baseline" for t in sure):
            return TimingSaid(latest.timing, round(latest.confidence * 0.8, 2), latest.source,
                              latest.reason + " (another part of the codebook says earlier)")
        return latest

    def to_dict(self) -> dict[str, Any]:
        said = self.timing
        return {"label": self.field.label, "form": self.field.form, "citation": self.citation,
                "timing": said.to_dict() if said else None, "private": self.private, "units": self.field.units,
                "group": self.group, "choices": len(self.field.choices)}


@dataclass
class Codebook:
    """What a codebook says about one frame: per column, the layout of a REDCap export, and
    where the codebook and the frame disagree on which columns exist."""

    dictionary: Dictionary
    columns: dict[str, ColumnSaid]
    layout: Layout | None = None
    blank_by_design: dict[str, np.ndarray] = dc_field(default_factory=dict)
    absent: list[str] = dc_field(default_factory=list)  # fields of the codebook not in the frame
    undescribed: list[str] = dc_field(default_factory=list)  # columns of the frame it does not describe
    outcome_event: str | None = None

    @property
    def private(self) -> dict[str, str]:
        return {c: s.private for c, s in self.columns.items() if s.private and s.described}

    def timing_evidence(self) -> dict[str, dict[str, Any]]:
        """Per column the codebook times, its class, confidence and the line it rests on: one
        more source for the column timeline."""
        out = {}
        for c, said in self.columns.items():
            t = said.timing
            if t is not None:
                out[c] = {**t.to_dict(), "citation": said.citation}
        return out

    def add_timing(self, timings: dict[str, Timing]) -> None:
        """Add the codebook's timing of each feature to the data's (``timing.Timing``)."""
        for c, evidence in self.timing_evidence().items():
            if c not in timings:
                continue
            decided_by_data = [e["test"] for e in timings[c].evidence]
            data_class = timings[c].timing
            codebook = self.columns[c].described
            extra = {"confidence": evidence["confidence"], "source": "codebook" if codebook else "redcap_layout",
                     "citation": evidence["citation"]}
            if data_class != "unknown" and (data_class == "baseline") != (evidence["timing"] == "baseline"):
                extra["disagrees_with_data"] = {"timing": data_class, "tests": decided_by_data}
            said = f"the codebook says so: {evidence['reason']} — {evidence['citation']}" if codebook else (
                f"the REDCap export's layout says so: {evidence['reason']}")
            timings[c].add(evidence["timing"], f"{extra['source']}_{evidence['source']}", said, **extra)

    def stats(self) -> dict[str, Any]:
        """What the panel and the report show: per column, the layout, what rested on it."""
        groups: dict[str, list[str]] = {}
        for c, s in self.columns.items():
            if s.group:
                groups.setdefault(s.group, []).append(c)
        return {"source": self.dictionary.source, "format": self.dictionary.format,
                "columns": {c: s.to_dict() for c, s in self.columns.items()},
                "layout": self.layout.to_dict() if self.layout else None, "outcome_event": self.outcome_event,
                "multi_select": groups, "absent": self.absent[:100], "undescribed": self.undescribed[:100]}


# -- reading the codebook against the frame ------------------------------------------------------
def as_dictionary(dictionary: Any) -> Dictionary | None:
    """``dictionary`` itself, or the codebook at a path (str or Path), or None."""
    if dictionary is None or isinstance(dictionary, Dictionary):
        return dictionary
    if isinstance(dictionary, (str, PurePath)):
        from kernel_tools.dictionary import read_dictionary

        return read_dictionary(Path(dictionary))
    raise TypeError(f"dictionary must be a Dictionary (kt.read_dictionary) or a path, not {type(dictionary).__name__}")


def read_codebook(df: pd.DataFrame, dictionary: Dictionary | None, target: str | None = None) -> Codebook | None:
    """What ``dictionary`` says about each column of ``df`` (see the module docstring); without a
    codebook, what a REDCap export's layout says (None for any other table)."""
    columns = [str(c) for c in df.columns]
    layout = find_layout(df, dictionary)
    if dictionary is None and layout is None:
        return None
    book = dictionary if dictionary is not None else Dictionary({}, "", "none")
    said: dict[str, ColumnSaid] = {}
    for c in columns:
        f = book.field(c)
        if f is not None:
            said[c] = ColumnSaid(c, f, book.cite(c), private=personal_data(c, f),
                                 group=f.name if f.multi and c != f.name else None)
        elif layout is not None and c in layout.held:  # the export's rows say when it is recorded
            said[c] = ColumnSaid(c, Field(c), f"'{c}' has values on the rows of {', '.join(layout.held[c][:3])}",
                                 described=False)
    outcome_event = _outcome_event(df, layout, target)
    target_said = said.get(target) if target else None
    for c, s in said.items():
        if c != target:
            s.timings = _timings(s, layout, outcome_event, target_said)
    _derived({c: s for c, s in said.items() if c != target})
    present = set(columns)
    absent = [f.name for f in book if not any(col in present for col in f.columns)]
    undescribed = [c for c in columns if book.field(c) is None and not is_system_column(c)]
    blanks = blank_by_design(df, layout, book)
    return Codebook(book, said, layout, blanks, absent, undescribed, outcome_event)


def longitudinal(codebook: Codebook | None) -> bool:
    """Whether the frame is a REDCap export of records over several events: its rows per record
    are events, which the ``redcap_events`` finding (not ``repeated_measurements``) handles."""
    layout = codebook.layout if codebook is not None else None
    return layout is not None and layout.event is not None and len(layout.events) >= 2


def bookkeeping(codebook: Codebook | None, df: pd.DataFrame) -> set[str]:
    """A REDCap export's own columns (event, repeat instrument and instance, ``<form>_complete``):
    structure, never features."""
    if codebook is None or codebook.layout is None:
        return set()
    return {str(c) for c in df.columns if is_system_column(str(c))}


def _outcome_event(df: pd.DataFrame, layout: Layout | None, target: str | None) -> str | None:
    """The event whose rows record the target (REDCap): the latest that records it for most."""
    if layout is None or layout.event is None or target is None or target not in df.columns:
        return None
    recorded = df.loc[df[target].notna(), layout.event].astype("string").value_counts()
    if recorded.empty:
        return None
    common = recorded[recorded >= 0.5 * recorded.max()].index
    return max(common, key=lambda e: layout.events.index(e) if e in layout.events else -1)


def _timings(said: ColumnSaid, layout: Layout | None, outcome_event: str | None,
             target: ColumnSaid | None) -> list[TimingSaid]:
    f = said.field
    out: list[TimingSaid] = []
    by_event = _event_timing(said.column, f, layout, outcome_event)
    if by_event is not None:
        out.append(by_event)
    target_form = target.field.form if target is not None else None
    if f.form and f.form == target_form and _later(target, layout, outcome_event):
        out.append(TimingSaid("outcome_derived", CONFIDENCE["target_form"], "target_form",
                              f"recorded on the outcome's own form {f.form}"))
    elif f.form and by_event is None:
        form = _form_timing(f.form)
        if form is not None:
            out.append(form)
    label = _label_timing(" ".join(x for x in (f.label, f.section or "") if x))
    if label is not None:
        out.append(label)
    if target is not None and target.field.label and f.label:
        out += [t for t in (_same_measure(f.label, target.field.label), _later_year(f.label, target.field.label))
                if t is not None]
    return out


def _words(label: str) -> str:
    """A label's words, without units, codes and punctuation: the measure it names."""
    text = re.sub(r"\([^)]*\)|\[[^]]*\]|\b(in|of|the|a|an)\b|[^a-z ]", " ", label.lower())
    return re.sub(r"\s+", " ", re.sub(r"\b(grams?|kg|cm|mm|days?|years?|months?|numeric|variable|measured)\b", " ",
                                       text)).strip()


def _same_measure(label: str, target_label: str) -> TimingSaid | None:
    """A column whose label is the measure the target's label is made from ("birth weight in
    grams" next to the target "indicator of birth weight less than 2.5 kg")."""
    measure = _words(label)
    if len(measure.split()) < 2 or f" {measure} " not in f" {_words(target_label)} ":
        return None
    return TimingSaid("outcome_derived", CONFIDENCE["label"], "target_label",
                      f"its label names the measure the target is made of ('{measure}')")


def _later_year(label: str, target_label: str) -> TimingSaid | None:
    """A column whose label dates it after the year the target's label names ("wage reported at
    the 1976 interview" next to the target "work in 1975")."""
    years = [int(y) for y in YEAR.findall(label)]
    target_years = [int(y) for y in YEAR.findall(target_label)]
    if not years or not target_years or max(years) <= max(target_years):
        return None
    return TimingSaid("follow_up", CONFIDENCE["label_year"], "label",
                      f"its label dates it {max(years)}, after the target's {max(target_years)}")


def _derived(said: dict[str, ColumnSaid]) -> None:
    """A column the codebook says is recoded from another column takes that column's timing."""
    for c, s in said.items():
        if not DERIVED.search(s.field.label or ""):
            continue
        for other, o in said.items():
            if other != c and re.search(rf"\b{re.escape(other)}\b", s.field.label) and o.timing is not None:
                t = o.timing
                s.timings.append(TimingSaid(t.timing, round(t.confidence * 0.9, 2), "derived",
                                            f"recoded from '{other}', which {t.reason.removeprefix('its ')}"))
                break


def _later(target: ColumnSaid | None, layout: Layout | None, outcome_event: str | None) -> bool:
    """Whether the target is itself recorded after baseline, as the codebook says (then its
    form's other fields are recorded with it)."""
    if target is None:
        return False
    f = target.field
    said = [_event_timing(target.column, f, layout, outcome_event), _form_timing(f.form) if f.form else None,
            _label_timing(f.label)]
    return any(t is not None and t.timing != "baseline" for t in said)


def _event_timing(column: str, f: Field, layout: Layout | None, outcome_event: str | None) -> TimingSaid | None:
    """When the events that hold the column say it is recorded: its form's events (the mapping,
    or the forms the data show at each event), else the events whose rows have its values."""
    if layout is None or not layout.events:
        return None
    if f.form and layout.forms_by_event:
        held = [e for e in layout.events if f.form in layout.forms_by_event.get(e, [])]
        what, source, confidence = f"form {f.form} is", layout.forms_from, CONFIDENCE["event"]
    else:
        held = layout.held.get(column, [])
        what, source, confidence = f"'{column}' is", "the export's rows", CONFIDENCE["event_rows"]
    if not held:
        return None
    names = ", ".join(held[:4]) + (" …" if len(held) > 4 else "")
    if held[0] == layout.baseline_event:
        also = f" (and later at {', '.join(held[1:4])})" if len(held) > 1 else ""
        return TimingSaid("baseline", confidence, "event",
                          f"{what} collected at the baseline event {held[0]}{also}, per {source}")
    if outcome_event in layout.events:
        at = layout.events.index(outcome_event)
        if all(layout.events.index(e) > at for e in held):
            return TimingSaid("outcome_derived", confidence, "event",
                              f"{what} collected only at {names}, after the outcome's event {outcome_event}, "
                              f"per {source}")
    return TimingSaid("follow_up", confidence, "event",
                      f"{what} collected only at {names}, after the baseline event {layout.baseline_event}, "
                      f"per {source}")


def _form_timing(form: str) -> TimingSaid | None:
    if FORM_OUTCOME.search(form):
        return TimingSaid("outcome_derived", CONFIDENCE["form"], "form", f"its form {form} records the outcome")
    if FORM_FOLLOW.search(form):
        return TimingSaid("follow_up", CONFIDENCE["form"], "form", f"its form {form} is a follow-up form")
    if FORM_BASELINE.search(form):
        return TimingSaid("baseline", CONFIDENCE["form"], "form", f"its form {form} is a baseline form")
    return None


def label_timing(label: str) -> str | None:
    """The timing the words of a label name, or None."""
    said = _label_timing(label)
    return said.timing if said else None


def _label_timing(label: str) -> TimingSaid | None:
    if not label:
        return None
    words = OUTCOME_WORDS.search(label)
    if words and not BEFORE_WORDS.search(label):
        return TimingSaid("outcome_derived", CONFIDENCE["label"], "label",
                          f"its label names the outcome ('{words.group(0)}')")
    later = FOLLOW_WORDS.search(label)
    if later and not BEFORE_WORDS.search(label):
        return TimingSaid("follow_up", CONFIDENCE["label"], "label",
                          f"its label places it after the start ('{later.group(0).strip()}')")
    earlier = BASELINE_WORDS.search(label) or BEFORE_WORDS.search(label)
    if earlier:
        return TimingSaid("baseline", CONFIDENCE["label_baseline"], "label",
                          f"its label places it at or before the start ('{earlier.group(0).strip()}')")
    return None


# -- what it finds --------------------------------------------------------------------------------
def entity_id(codebook: Codebook | None, given: str | None) -> str | None:
    """The entity id: the one given, else a REDCap export's record id, else None (to be found)."""
    if given is None and codebook is not None and codebook.layout is not None:
        return codebook.layout.record
    return given


def add_timing(codebook: Codebook | None, timings: dict[str, Timing]) -> None:
    if codebook is not None:
        codebook.add_timing(timings)


def report(codebook: Codebook | None, column_stats: dict[str, Any]) -> None:
    """What the codebook said, in the diagnosis's ``column_stats`` (``codebook``, ``private``), and
    its private columns marked in this kernel (:mod:`kernel_tools.privacy`)."""
    if codebook is None:
        return
    column_stats.update(codebook=codebook.stats(), private=codebook.private)
    mark_private(codebook.private)


def identifier_findings(codebook: Codebook | None, found: list[Finding], skip: set[str | None]) -> list[Finding]:
    """``found`` (the data's ``id_column`` findings) with the codebook's word added, and an
    ``id_column`` finding for each other column the codebook says identifies a person (the
    entity, target and duration are in ``skip``)."""
    if codebook is None:
        return found
    private = codebook.private
    for f in found:
        c = f.columns[0]
        if c in private:
            f.evidence.update(source="data and codebook", citation=codebook.columns[c].citation, private=True)
    known = {f.columns[0] for f in found}
    found = list(found)
    for c, why in private.items():
        if c in skip or c in known:
            continue
        citation = codebook.columns[c].citation
        found.append(Finding(
            "id_column", [c], "critical",
            f"'{c}' identifies a person ({why}): it is never a feature, and none of its values is sent "
            f"to an LLM. The codebook: {citation}.",
            {"looks_like": why, "source": "codebook", "citation": citation, "private": True, "confidence": 0.95
             if codebook.columns[c].field.identifier else 0.8},
            [Option("drop", f"Drop {c}", f"Remove {c} before modelling (personal data, per the codebook).",
                    "none for the model; keep a copy aside if you need it to link records", True,
                    call("drop_columns", columns=[c], reason="identifier (codebook)"))],
            "identifiers"))
    return found


def _outside_choices(df: pd.DataFrame, codebook: Codebook) -> dict[str, dict[str, Any]]:
    out = {}
    for c, said in codebook.columns.items():
        f = said.field
        if not f.choices:
            continue
        allowed = {"0", "1"} if said.group else set(f.choices) | set(f.choices.values())
        values = df[c].dropna()
        if values.empty:
            continue
        counts = values.value_counts()
        text = pd.Index([_code(v) for v in counts.index])
        bad = ~text.isin(list(allowed))
        if bad.any():
            out[c] = {"rows": int(counts[bad].sum()), "values": [str(v) for v in text[bad][:3]],
                      "choices": len(f.choices), "citation": said.citation}
    return out


def _code(value: Any) -> str:
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return str(int(value))
    return str(value)


def _out_of_range(df: pd.DataFrame, codebook: Codebook) -> dict[str, dict[str, Any]]:
    out = {}
    for c, said in codebook.columns.items():
        f = said.field
        if f.minimum is None and f.maximum is None or f.choices:
            continue
        dated = bool(f.validation and f.validation.startswith(("date", "datetime")))
        values = (pd.to_datetime(df[c], errors="coerce") if dated else pd.to_numeric(df[c], errors="coerce"))
        low, high = (_bound(f.minimum, dated), _bound(f.maximum, dated))
        below = int((values < low).sum()) if low is not None else 0
        above = int((values > high).sum()) if high is not None else 0
        if below or above:
            out[c] = {"below_minimum": below, "above_maximum": above, "minimum": f.minimum, "maximum": f.maximum,
                      "dates": dated, "citation": said.citation}
    return out


def _bound(text: str | None, dated: bool) -> Any:
    if text is None or text.lower() in ("today", "now"):
        return None
    try:
        return pd.Timestamp(text) if dated else float(text)
    except (ValueError, TypeError):
        return None


def _absent(n: int, one: str, many: str, where: str) -> str:
    """"1 field of the codebook is not in the table", "3 ... are not": the count and its verb agree."""
    return f"{n} {one} is not in {where}" if n == 1 else f"{n} {many} are not in {where}"


def codebook_findings(df: pd.DataFrame, codebook: Codebook) -> list[Finding]:
    """Where the codebook and the data disagree: values outside its choices or valid range,
    fields it lists that the table lacks, columns it does not describe."""
    findings = []
    name = codebook.dictionary.source.rsplit("/", 1)[-1]
    outside = _outside_choices(df, codebook)
    if outside:
        worst = max(outside, key=lambda c: outside[c]["rows"])
        findings.append(Finding(
            "dictionary_mismatch", list(outside), "warning",
            f"{counted(len(outside), 'coded column')} {'holds' if len(outside) == 1 else 'hold'} values the codebook "
            f"does not list ({'' if len(outside) == 1 else 'up to '}{counted(outside[worst]['rows'], 'row')} in "
            f"'{worst}'): a new code, a typo or another coding.",
            {"outside_choices": outside, "dictionary": name},
            [keep("Keep the values; check them against the codebook.",
                  "an unlisted code may be an error the model learns from", True)]))
    ranges = _out_of_range(df, codebook)
    numeric = {c: r for c, r in ranges.items() if not r["dates"] and pd.api.types.is_numeric_dtype(df[c])}
    if ranges:
        total = sum(r["below_minimum"] + r["above_maximum"] for r in ranges.values())
        bounds = {c: [_bound(r["minimum"], False), _bound(r["maximum"], False)] for c, r in numeric.items()}
        options = [keep("Keep them: the range is a soft check (REDCap lets data entry override it).",
                        "values outside the valid range are often entry errors", not numeric)]
        if numeric:
            options.insert(0, Option("set_missing", "Set them missing",
                                     "Blank the values outside the codebook's valid range (then impute them).",
                                     "loses true extreme values the range did not foresee", True,
                                     call("handle_outliers", columns=list(numeric), action="set_missing",
                                          bounds=bounds)))
        findings.append(Finding(
            "value_out_of_range", list(ranges), "warning",
            f"{counted(total, 'value')} in {counted(len(ranges), 'column')} {'lies' if total == 1 else 'lie'} outside the "
            "valid range the codebook gives.",
            {"columns": ranges, "dictionary": name}, options, "outliers"))
    if codebook.dictionary.format != "none" and (codebook.absent or codebook.undescribed):
        findings.append(Finding(
            "dictionary_mismatch", [], "info",
            f"The codebook {name} and the table differ: "
            + _absent(len(codebook.absent), "field of the codebook", "fields of the codebook", "the table") + ", "
            + _absent(len(codebook.undescribed), "column of the table", "columns of the table", "the codebook") + ".",
            {"absent_fields": codebook.absent[:50], "undescribed_columns": codebook.undescribed[:50],
             "dictionary": name}))
    return findings


def redcap_finding(df: pd.DataFrame, codebook: Codebook, target: str | None) -> Finding | None:
    """A longitudinal REDCap export: records over events, and the step that makes one row per
    record at baseline with the outcome from its event."""
    layout = codebook.layout
    if layout is None or layout.event is None or not longitudinal(codebook):
        return None
    records = int(df[layout.record].nunique())
    blanks = int(sum(int((df[c].isna().to_numpy() & mask).sum()) for c, mask in codebook.blank_by_design.items()))
    order = " → ".join(layout.events[:6]) + (" …" if len(layout.events) > 6 else "")
    repeated = 0
    if layout.repeat_instrument:
        repeated = int(df[layout.repeat_instrument].notna().sum())
    summary = (f"A REDCap export: {records} records of '{layout.record}' over {len(layout.events)} events "
               f"({order}, in the order of {layout.order_from})"
               + (f"; '{target}' is recorded at {codebook.outcome_event}" if codebook.outcome_event else "")
               + (f"; {blanks} blank cells are forms an event does not hold (structure, not missing values)"
                  if blanks else "") + (f"; {repeated} rows are repeated instruments" if repeated else "") + ".")
    given = codebook.dictionary.format != "none"  # else the export's layout alone
    evidence = {**layout.to_dict(), "records": records, "blank_by_design": blanks, "repeating_rows": repeated,
                "outcome_event": codebook.outcome_event,
                "dictionary": PurePath(codebook.dictionary.source).name if given else None}
    options = [keep("Keep a row per record and event.",
                    "later events know more than the baseline: rows of one record are not independent")]
    if target is not None:
        options.insert(0, Option(
            "baseline", "One row per record at baseline",
            f"Keep each record's {layout.baseline_event} row and the columns it holds; take '{target}' from "
            f"{codebook.outcome_event or 'the event that records it'}.",
            "columns collected only at later events are left out (they are not known at baseline)", True,
            call("redcap_baseline", outcome=[target], record=layout.record, event=layout.event,
                 events=layout.events, outcome_event=codebook.outcome_event)))
    else:
        options[0].recommended = True
    return Finding("redcap_events", [layout.record, layout.event], "critical" if target else "warning", summary,
                   evidence, options, "aggregation")


@detector("codebook", order=15, finds=dict.fromkeys(("redcap_events", "dictionary_mismatch", "value_out_of_range"),
                                                    KindData(chart=None, basis=Basis.SAMPLE)))
def find_codebook_issues(ctx: Context) -> list[Finding]:
    """The findings of a codebook given to ``diagnose(..., dictionary=...)``."""
    if ctx.codebook is None:
        return []
    found = codebook_findings(ctx.df, ctx.codebook)
    redcap = redcap_finding(ctx.df, ctx.codebook, ctx.target)
    return ([redcap] if redcap else []) + found


def real_profiles(ctx: Context) -> dict:
    """The column profiles with blanks by design (forms an event does not hold) not counted as
    missing values."""
    if ctx.codebook is None or not ctx.codebook.blank_by_design:
        return ctx.profiles
    from dataclasses import replace

    out = dict(ctx.profiles)
    for c, mask in ctx.codebook.blank_by_design.items():
        if c in out:
            held = ~mask
            missing = int(ctx.df[c].isna().to_numpy()[held].sum())
            out[c] = replace(out[c], n=int(held.sum()), n_missing=missing)
    return out


__all__ = ["Codebook", "ColumnSaid", "TimingSaid", "codebook_findings", "identifier_findings", "label_timing",
           "longitudinal", "read_codebook", "real_profiles", "redcap_finding"]
