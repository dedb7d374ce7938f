"""When each column is known, relative to the moment a prediction is made (the *index*).

A valid model uses only what is known at its index: the first record of an entity (enrolment,
the first visit), a date column (admission, acceptance into a programme), or each row's own
time. Survival time counts from the index. Every column gets a timing — ``baseline``,
``follow_up``, ``outcome_derived`` or ``unknown`` — from generic tests on the data, never from a
data set's column names:

- bounded by the duration: X <= T on >= 99% of rows (or all but one), rising with T and reaching it on a share
  of rows (a visit day, a length of stay, a time to another event) — or, short next to a long
  follow-up, equal to T on that share (a hospital stay that ended the follow-up: died in hospital);
- equal to the duration on most rows (the follow-up time recorded twice);
- present only where an event happened and then at or below the row's own duration, far more
  often than chance pairing gives (time to transplant, missing where there was none;
  :mod:`.event_times`); or, named as a time, at or below it on every row where chance pairing
  would not be (time to a response that came early for most);
- filled only while a row is followed: missing exactly on the rows whose follow-up ended sooner
  (employment in week 30 of a year after release, missing once a person was re-arrested);
- a (time, indicator) pair whatever its names: the time never exceeds the duration and the
  indicator says where it ran to the end (censored) and where it ended earlier — both go;
- implies the event: a value whose rows all had the event — improbable by chance (binomial
  tail) — covering >= 5% of the events (in-hospital death, "died before the 2-month interview");
  for a yes/no classification, the rarer class, when the name or the value also says so (a
  discharge location 'DIED' next to one-year mortality);
- dated after the index date (discharge, transplant, last contact), or the end of follow-up
  (a date whose distance from the index is the duration; a number that is another plus the
  duration: an age at exit beside the age at entry);
- recorded together with a follow-up column (filled exactly where it is, or a yes/no saying
  whether it happened), or tracking one closely (charges that rise with the length of stay);
- changes within an entity after its first record (time-varying: only its value at the index
  is known at prediction time);
- the same on every record of an entity but a summary of them all: the number of its records,
  or a length or total that rises with the time they span (a length of stay next to hourly rows);
- a later wave of the target itself in a wide table (``bdi.4m`` next to the target ``bdi.2m``):
  the names give the order, the data that it is one measurement (see :mod:`.waves`);
- the value of the alternative chosen: equal, within each class of the outcome, to another
  column that changes with the class (``price`` is ``pbeach`` on beach trips; :mod:`.choices`);
- another level of the target's own variable: 0/1 columns that, with a 0/1 target, have exactly one
  1 on (nearly) every row (``censor1`` ... ``censor4``: re-employed full time, part time, ...,
  still jobless) — one variable coded one column per level, the target among them.
A name only ever supports a weak statistical signal; it is never evidence on its own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy.stats import binom, spearmanr

from kernel_tools.diagnosis import event_times, intervals, stacked
from kernel_tools.diagnosis.choices import chosen_alternative
from kernel_tools.diagnosis.columns import ColumnProfile, category_codes, numeric_values
from kernel_tools.diagnosis.outcome_counts import counts_of_the_outcome
from kernel_tools.diagnosis.waves import later_waves
from kernel_tools.inferences import Alternative, Inference
from kernel_tools.vocabulary import Confidence, InferenceKind, TaskKind

TIMINGS = ("baseline", "follow_up", "outcome_derived", "unknown")
INDEX_KINDS = ("entity_start", "date", "row")

MIN_ROWS = 20
BOUND_SHARE = 0.99  # X <= T on this share of rows
REACH = 0.9  # X >= 0.9 T counts as reaching the bound...
MIN_REACH_SHARE = 0.05  # ...on at least this share of rows
MIN_RISE = 0.1  # Spearman correlation with T
EQUAL_SHARE = 0.5  # equal to the duration on this share of rows
EVENT_SUPPORT = 0.05  # a value implying the event covers this share of the events
EVENT_PURITY = 0.99
EVENT_P_VALUE = 1e-6  # binomial tail of that many events by chance (Bonferroni over values)
AFTER_SHARE = 0.97  # dates on or after the index on this share of rows...
STRICTLY_AFTER = 0.5  # ...and strictly after it on at least this share
DURATION_MATCH = 0.9  # end date - index date == duration (± 1 day) on this share of rows
TRACK_STRONG = 0.9  # rank correlation with a follow-up column that makes a column one
TRACK_NAMED = 0.6  # ...enough when its name also says follow-up
RECORDS_COUNTED = 0.95  # equal to the entity's number of records on this share of entities
SPAN_TRACK = 0.9  # rank correlation with the time an entity's records span
ONLY_WHERE = 0.98  # share of a column's values on rows where a follow-up column is filled
YEARS_BEFORE = 365.25 * 18  # a date this far before every other is a birth date
MAX_LEVELS = 10  # a number with at most this many values is tested value by value
MAX_CATEGORIES = 50

# the start of a subject's time at risk on the duration's clock ((entry, futime]: left truncation)
ENTRY_NAME = re.compile(r"^(t[._ ]?)?(start|entry|enter|begin)([._ ]?(time|t|day|days))?$", re.IGNORECASE)
BIRTH_NAME = re.compile(r"birth|(^|[_\W])dob([_\W]|$)|born", re.IGNORECASE)
FOLLOW_UP_WORDS = re.compile(
    r"(^|[_\W])(los|stay|discharg\w*|charges?|costs?|totcst|final|post\w*|follow\w*|last|end|exit|"
    r"after|outcome|dead|death|died)([_\W]|$)|length.?of.?stay|hosp.?days|\d+\s?(mo|month|months)$",
    re.IGNORECASE,
)
OUTCOME_VALUE = re.compile(r"died|dead|death|deceas|expired|mort", re.IGNORECASE)
OUTCOME_DATE_NAME = re.compile(r"death|died|dead|deceas|exit|discharg|end|censor|recur|relaps|last|fu\b|"
                               r"follow", re.IGNORECASE)


@dataclass
class PredictionIndex:
    """The moment a prediction is made: ``entity_start`` (each entity's first record, ordered
    by ``column``), ``date`` (the date in ``column``) or ``row`` (each row's own time)."""

    kind: str
    column: str | None = None
    reason: str = ""
    given: bool = False
    start: str | None = None  # start of each row's interval (counting-process layout)
    sure: bool = True  # clear evidence; False: a default among fair alternatives (asked)
    others: list[tuple[str, str]] = field(default_factory=list)  # (alternative, why) when not sure

    def to_dict(self) -> dict:
        return {"kind": self.kind, "column": self.column, "reason": self.reason,
                "given": self.given, "start": self.start, "label": self.label,
                "confidence": self.inference.confidence}

    @property
    def inference(self) -> Inference:
        confidence = Confidence.GIVEN if self.given else Confidence.HIGH if self.sure else Confidence.LOW
        return Inference(InferenceKind.INDEX, self.label, confidence, [self.reason],
                         [Alternative(value, [why], 0.5) for value, why in self.others],
                         details={"kind": self.kind, "column": self.column, "start": self.start})

    @property
    def label(self) -> str:
        if self.kind == "entity_start":
            return "each entity's first record" + (f" (by '{self.column}')" if self.column else "")
        if self.kind == "date":
            return f"the date in '{self.column}'"
        return "each row's own time"


@dataclass
class Timing:
    """When one column is known: its class and the tests that decided it."""

    timing: str = "unknown"
    evidence: list[dict] = field(default_factory=list)

    def add(self, timing: str, test: str, reason: str, **numbers) -> None:
        # outcome-derived outranks follow-up, which outranks baseline
        order = {"unknown": 0, "baseline": 1, "follow_up": 2, "outcome_derived": 3}
        if order[timing] > order[self.timing]:
            self.timing = timing
        self.evidence.append({"timing": timing, "test": test, "reason": reason, **numbers})

    @property
    def reason(self) -> str:
        decisive = [e["reason"] for e in self.evidence if e["timing"] == self.timing]
        return "; ".join(decisive)

    def to_dict(self) -> dict:
        return {"timing": self.timing, "evidence": self.evidence}


def _is_date(prof: ColumnProfile) -> bool:
    return prof.kind == "datetime" or prof.parsed_as == "datetime"


def _is_number(prof: ColumnProfile) -> bool:
    return prof.kind in ("numeric", "bool") or prof.parsed_as in ("numeric", "bool")


# -- the index -------------------------------------------------------------------------------
def _duration_constant(df: pd.DataFrame, entity_id: str, duration: str) -> float:
    """Share of multi-record entities whose duration is the same on every record."""
    sizes = df.groupby(entity_id, sort=False)[duration].transform("size")
    multi = df[sizes > 1]
    if multi.empty:
        return 1.0
    return float((multi.groupby(entity_id, sort=False)[duration].nunique(dropna=True) <= 1).mean())


def _start_stop(df: pd.DataFrame, entity_id: str, visit: str | None, duration: str) -> bool:
    """Counting-process rows: each record is an interval (start, stop] and the next record of
    the entity starts where the previous one stopped."""
    if visit is None or visit == duration:
        return False
    return intervals.is_chained(df, entity_id, pd.to_numeric(df[visit], errors="coerce"),
                                pd.to_numeric(df[duration], errors="coerce"))


def _date_days(df: pd.DataFrame, profiles: dict[str, ColumnProfile], columns: list[str]) -> dict[str, np.ndarray]:
    return {c: numeric_values(df[c], profiles[c]) for c in columns}


def _birth_dates(days: dict[str, np.ndarray]) -> set[str]:
    """Dates of birth: named so, or lying decades before every other date."""
    medians = {c: np.nanmedian(v) for c, v in days.items() if np.isfinite(v).any()}
    out = set()
    for c, m in medians.items():
        others = [o for k, o in medians.items() if k != c]
        if others and (BIRTH_NAME.search(c) or all(o - m >= YEARS_BEFORE for o in others)):
            out.add(c)
    return out


def index_date(df: pd.DataFrame, profiles: dict[str, ColumnProfile], dates: list[str],
               duration: np.ndarray | None) -> tuple[str | None, str | None, str]:
    """The date predictions are made at, the end-of-follow-up date when one is evident, and why.

    A pair of dates whose distance is the duration says it outright (time counts from the first
    to the second); otherwise the earliest date most rows have, births aside."""
    if not dates:
        return None, None, ""
    days = _date_days(df, profiles, dates)
    present = [c for c in dates if np.isfinite(days[c]).mean() >= 0.5]
    if duration is not None:
        for start in present:
            for end in dates:
                if end == start:
                    continue
                gap = days[end] - days[start]
                both = np.isfinite(gap) & np.isfinite(duration)
                if both.sum() < MIN_ROWS:
                    continue
                if np.mean(np.abs(gap[both] - duration[both]) <= 1.0) >= DURATION_MATCH:
                    return start, end, (f"the duration is the time from '{start}' to '{end}' "
                                        "on most rows")
    births = _birth_dates(days)
    candidates = [c for c in present if c not in births]
    if not candidates:
        return None, None, ""
    first = min(candidates, key=lambda c: np.nanmedian(days[c]))
    return first, None, f"'{first}' is the earliest date recorded for most rows"


def find_index(df: pd.DataFrame, frame: pd.DataFrame, profiles: dict[str, ColumnProfile], outcome,
               sampled, entity, given: str | None = None, personal: frozenset[str] = frozenset()) -> PredictionIndex:
    """Infer the index (see :class:`PredictionIndex`), or check and describe the given one.

    ``df`` and ``outcome`` are all rows (entity tests); ``frame`` and ``sampled`` the sampled rows
    (date tests). ``given``: ``"first"`` (each entity's first record), ``"row"`` or a column of
    dates or times. ``personal``: columns a codebook says identify a person (a date of birth is
    never the moment of prediction).
    """
    visit = entity.visit if entity is not None else None
    entity_id = entity.id if entity is not None else None
    duration = outcome.time if outcome.kind == TaskKind.SURVIVAL else None
    if given is not None:
        if given == "first":
            if entity_id is None:
                raise ValueError("index='first' needs an entity with several records (pass id=)")
            return PredictionIndex("entity_start", visit, "given", True)
        if given == "row":
            return PredictionIndex("row", None, "given", True)
        if given not in profiles:
            raise KeyError(f"index column {given!r} is not in the frame")
        if not _is_date(profiles[given]) and profiles[given].kind != "numeric":
            raise ValueError(f"index column {given!r} must hold dates or times, not "
                             f"{profiles[given].kind} values")
        if entity_id is not None and given == visit:
            return PredictionIndex("entity_start", given, "given", True)
        return PredictionIndex("date", given, "given", True)
    if entity_id is not None and entity.evidence.get("share_entities_with_several_rows", 0) > 0:
        if duration is not None and _duration_constant(df, entity_id, duration) < 0.95:
            start = outcome.start or visit  # the task may have found the intervals from the data
            if not _start_stop(df, entity_id, start, duration):  # the visit column may not be the start
                start = intervals.find_start(df, profiles, entity_id, duration, {outcome.target or ""}) or start
            if _start_stop(df, entity_id, start, duration):
                return PredictionIndex("row", start, f"records are intervals ('{start}', '{duration}'] "
                                       "of one entity: each counts from its own start", start=start)
            endpoint = stacked.endpoint_column(df, entity_id, {duration, outcome.target or ""})
            if endpoint is not None:
                return PredictionIndex(
                    "row", visit, f"the records of an entity are its endpoints: each has another '{endpoint}' "
                    "and its own event and time, the rest repeats; pooled, one model mixes the endpoints",
                    sure=False, others=[(f"one endpoint: the records of one '{endpoint}' value",
                                         "the outcome is one endpoint; its records, one per entity")])
            return PredictionIndex("row", visit, f"'{duration}' changes between the records of an "
                                   "entity: it counts from each record's own time")
        constant = entity.evidence.get("target_constant_within_entity")
        if outcome.kind != TaskKind.SURVIVAL and constant is not None and constant < 0.5:
            return PredictionIndex("row", visit, "the outcome changes from record to record: each "
                                   "record is a prediction at its own time")
        why = (f"'{duration}' is the same on every record of an entity: it counts from a fixed "
               "start, the first record" if duration is not None
               else "one outcome per entity: predicted from its first record, as at enrolment")
        # with a follow-up time the start is fixed; without one, any record could be the moment
        others = [] if duration is not None else [
            ("each row's own time", "every record a prediction, the rows grouped by entity")]
        return PredictionIndex("entity_start", visit, why, sure=duration is not None, others=others)
    dates = [c for c, p in profiles.items() if _is_date(p) and c != outcome.target and c not in personal]
    start, end, why = index_date(frame, profiles, dates, sampled.duration if duration else None)
    if start is not None:
        # the duration spanning two dates says it; the earliest of several dates is a guess
        others = [(f"the date in '{d}'", "another date of the table") for d in dates if d != start]
        return PredictionIndex("date", start, why, sure=end is not None or not others, others=others)
    return PredictionIndex("row", None, "no dates or repeated entities: each row is one "
                           "prediction at its own time")


# -- the tests -------------------------------------------------------------------------------
def _bounded_by_duration(x: np.ndarray, t: np.ndarray) -> dict | None:
    ok = np.isfinite(x) & np.isfinite(t) & (x >= 0)
    if ok.sum() < MIN_ROWS or np.isfinite(x).sum() == 0:
        return None
    xs, ts = x[ok], t[ok]
    if np.nanstd(xs) == 0:
        return None
    # a day's rounding and one odd record do not unbind a bound
    above = int(np.sum(xs > ts * 1.01 + 1e-9))
    below = 1.0 - above / len(xs)
    reach = float(np.mean(xs >= REACH * ts))
    # a time counted from the index spans the follow-up from its start; an age at entry next to
    # an age at exit (delayed entry) sits near the end of it on every row
    ratio = np.divide(xs, ts, out=np.ones_like(xs), where=ts > 0)
    spans = np.quantile(ratio, 0.1) <= 0.5
    if above > max(1, (1 - BOUND_SHARE) * len(xs)) or reach < MIN_REACH_SHARE or not spans:
        return None
    rho = float(spearmanr(xs, ts).statistic)
    # a stay of days next to years of follow-up need not rise with it, but where it ended the
    # follow-up (the patient died in hospital) it equals the duration
    equal = float(np.mean(np.isclose(xs, ts, rtol=0.01, atol=0) & (ts > 0)))
    if not (rho >= MIN_RISE or equal >= MIN_REACH_SHARE):
        return None
    return {"share_below_duration": round(below, 4), "share_reaching_duration": round(reach, 4),
            "spearman_with_duration": round(rho, 4), "share_equal_to_duration": round(equal, 4)}


def _equal_to_duration(x: np.ndarray, t: np.ndarray) -> float:
    ok = np.isfinite(x) & np.isfinite(t)
    if ok.sum() < MIN_ROWS:
        return 0.0
    return float(np.mean(np.isclose(x[ok], t[ok])))


def _implied_event(s: pd.Series, prof: ColumnProfile, event: np.ndarray,
                   calendar: np.ndarray | None = None) -> dict | None:
    """A value whose rows (almost) all had the event, far beyond chance, covering >= 5% of them.

    With index dates (``calendar``, in days), chance is the event rate of the rows that entered
    by the latest entry among that value's rows: a category of early entrants (a party of the
    last century) has seen every event simply because its follow-up is long over."""
    if prof.kind == "numeric" and prof.nunique > MAX_LEVELS:
        return None
    if prof.kind not in ("numeric", "bool", "categorical") or prof.parsed_as in ("datetime", "numeric"):
        return None
    if prof.nunique > MAX_CATEGORIES:  # a name, a date or a code: not a value shared by many rows
        return None
    codes = category_codes(s, max_levels=MAX_CATEGORIES)
    present = codes >= 0
    n_events = int(event.sum())
    if n_events < MIN_ROWS or present.sum() < MIN_ROWS:
        return None
    # over every row: a value recorded only for the rows with the event (a cause of death)
    # implies it as much as one recorded for everyone
    rate = n_events / len(event)
    if rate >= 0.995:
        return None
    levels = np.unique(codes[present])
    for level in levels:
        rows = codes == level
        size, hits = int(rows.sum()), int(event[rows].sum())
        if size < 10 or hits < EVENT_SUPPORT * n_events or hits < EVENT_PURITY * size:
            continue
        chance = rate
        if calendar is not None:
            latest = np.nanmax(calendar[rows]) if np.isfinite(calendar[rows]).any() else np.nan
            cohort = np.isfinite(calendar) & (calendar <= latest)
            if cohort.sum() > size:
                chance = max(rate, float(event[cohort].mean()))
        if chance >= 0.995:
            continue
        p_value = float(binom.sf(hits - 1, size, chance)) * len(levels)
        if p_value <= EVENT_P_VALUE:
            value = s[rows].iloc[0]
            return {"value": value if not isinstance(value, (np.generic,)) else value.item(),
                    "rows_with_value": size, "events_among_them": hits,
                    "share_of_events": round(hits / n_events, 4), "event_rate": round(chance, 4),
                    "p_value": p_value}
    return None


def _present(s: pd.Series) -> np.ndarray:
    return s.notna().to_numpy()


def _co_recorded(frame: pd.DataFrame, follow: str, other: str, prof: ColumnProfile) -> str | None:
    """Why ``other`` is recorded together with the follow-up column ``follow``, or None."""
    a = _present(frame[follow])
    if not 0.05 <= a.mean() <= 0.95:
        return None
    b = _present(frame[other])
    if b.mean() < 0.99 and b.sum() >= 10:
        inside = (a & b).sum() / b.sum()
        if inside >= ONLY_WHERE and b.sum() >= 0.8 * a.sum():
            return f"filled in only where '{follow}' is"
    if prof.kind in ("bool", "numeric", "categorical") and prof.nunique == 2 and b.all():
        codes = category_codes(frame[other])
        agree = max(np.mean(codes == a), np.mean(codes == ~a))
        if agree >= 0.98:
            return f"says whether '{follow}' happened"
    return None


def classify_columns(df: pd.DataFrame, frame: pd.DataFrame, profiles: dict[str, ColumnProfile],
                     outcome, index: PredictionIndex, entity, features: list[str]) -> dict[str, Timing]:
    """The timing of every feature (see the module docstring); ``frame`` is the (sampled) rows
    ``outcome`` describes, ``df`` the whole data (for entity-level tests)."""
    timings = {c: Timing() for c in features}
    survival = outcome.kind == TaskKind.SURVIVAL and outcome.duration is not None
    t = outcome.duration if survival else None
    event, happened = (outcome.y.astype(bool), "the event") if survival else _rarer_class(outcome)
    ranks = event_times.follow_up_ranks(t) if t is not None else None
    calendar = (numeric_values(frame[index.column], profiles[index.column])
                if index.kind == "date" and index.column in profiles else None)
    for c in features:
        prof = profiles[c]
        if survival and _is_number(prof) and not _is_date(prof) and prof.nunique >= 5:
            assert t is not None  # survival means a duration
            _duration_tests(c, numeric_values(frame[c], prof), t, outcome.time, timings[c], prof.nunique >= 10,
                            start=c == index.start)
        if survival and 0 < prof.n_missing < len(df):
            assert t is not None
            _followed_test(c, _present(frame[c]), t, outcome.time, timings[c], ranks)
        if event is not None:
            implied = _implied_event(frame[c], prof, event, calendar)
            # a classification has no follow-up to place a value in: an extreme value of a
            # strong predictor (a cytology score of 10) also comes only with the rare class, so
            # the name or the value must also say it records the outcome (discharge: 'DIED')
            if implied is not None and not survival and not (
                    FOLLOW_UP_WORDS.search(c) or OUTCOME_VALUE.search(str(implied["value"]))):
                implied = None
            if implied is not None:
                timings[c].add("outcome_derived", "implies_event",
                               f"every row with {c}={implied['value']!s} had {happened} "
                               f"({implied['events_among_them']} of {implied['rows_with_value']}, "
                               f"{implied['share_of_events']:.0%} of all of them): it is recorded "
                               "because of the outcome", **implied)
    if outcome.target is not None:
        for c, wave in later_waves(frame, profiles, outcome.target, features).items():
            # a bare number gives the order only: 'brood3' after 'brood2' (a later brood, a later visit)
            later = ("numbered after the target in one series" if wave["numbered_only"]
                     else "the target's own measurement taken later")
            timings[c].add("follow_up", "later_wave",
                           f"{later} ('{wave['wave']}' after '{wave['target_wave']}', Spearman "
                           f"{wave['spearman']:.2f} with it): it is measured after the outcome", **wave,
                           **({"confidence": "low"} if wave["numbered_only"] else {}))  # the order only: asked
    for c, chosen in chosen_alternative(frame, profiles, outcome, features).items():
        pairs = ", ".join(f"'{col}' when {outcome.target}={k}" for k, col in list(chosen["equals_by_class"].items())[:4])
        timings[c].add("outcome_derived", "chosen_alternative",
                       f"equal to {pairs}: the value of the alternative chosen, known once the outcome is",
                       **chosen)
    for c, levels in _levels_of_the_target(frame, profiles, outcome, features).items():
        timings[c].add("outcome_derived", "level_of_target",
                       f"with '{outcome.target}', exactly one of {', '.join(repr(x) for x in levels['levels'])} is 1 "
                       f"on {levels['share_one_of_them']:.0%} of rows: one variable coded a column per level, the "
                       "target one of them: known once the outcome is", **levels)
    _date_tests(frame, profiles, outcome, index, features, timings)
    if survival:
        assert t is not None
        _end_as_start_plus_duration(frame, profiles, features, t, outcome.time, timings)
    _entity_tests(df, profiles, entity, index, features, timings, outcome.target)
    _event_pairs(frame, profiles, features, timings, t, outcome.time)
    _propagate(frame, profiles, features, timings)
    return timings


def _duration_tests(c: str, x: np.ndarray, t: np.ndarray, time: str, timing: Timing, many: bool,
                    start: bool = False) -> None:
    """The tests of a number against the survival time ``t``: equal to it, bounded by it
    (``many``: at least 10 values), or a time present only where an event during follow-up
    happened (:mod:`.event_times`). ``start``: the column starts each (start, stop] interval (the
    index found it from the data, whatever its name): known when the interval begins, and equal to
    its stop where several events fell at one time."""
    if start:
        return
    equal = _equal_to_duration(x, t) if many else 0.0
    if equal >= EQUAL_SHARE:
        timing.add("outcome_derived", "equals_duration", f"equal to the duration '{time}' on {equal:.0%} of rows",
                   share_equal=round(equal, 4))
        return
    if ENTRY_NAME.match(c.strip()):
        return  # the start of the time at risk (delayed entry): below the duration, known when the subject enters
    bound = _bounded_by_duration(x, t) if many else None
    if bound is not None:
        timing.add("follow_up", "bounded_by_duration",
                   f"never exceeds the duration '{time}' and reaches it on "
                   f"{bound['share_reaching_duration']:.0%} of rows: it is measured during follow-up", **bound)
        return
    only = event_times.time_only_where_happened(x, t)
    if only is not None:
        timing.add("follow_up", "time_only_where_happened",
                   f"present on {only['share_present']:.0%} of rows, and there at or below the row's own "
                   f"duration '{time}' on {only['share_below_own_duration']:.0%} of them (by chance "
                   f"{only['share_below_by_chance']:.0%}, {event_times.p_words(only['p_value'])}): the time of an event "
                   f"during follow-up, recorded where it happened{event_times.named_as_time(c)}", **only)
        return
    within = event_times.time_within_follow_up(c, x, t)
    # moderate evidence is the names source's question (kernel_tools.diagnosis.structure)
    if within is not None and within["p_value"] <= event_times.P_VALUE:
        timing.add("follow_up", "time_within_follow_up", event_times.within_words(c, within, time), **within)


APART_SHARE = 0.99  # rows on which two levels are not both 1
ONE_HOT_SHARE = 0.95  # rows on which exactly one of the target and its sibling levels is 1 (a few unknown)


def _zero_one(s: pd.Series, prof: ColumnProfile) -> np.ndarray | None:
    """A column's 0/1 values (nan where missing), or None when it holds anything else."""
    if not (prof.holds_numbers or prof.kind == "bool") or prof.nunique != 2:
        return None
    v = numeric_values(s, prof)
    return v if set(np.unique(v[np.isfinite(v)]).tolist()) == {0.0, 1.0} else None


def _levels_of_the_target(frame, profiles, outcome, features) -> dict[str, dict]:
    """The other 0/1 columns of a variable coded one column per level, the 0/1 target one of them:
    each (nearly) never 1 with the target or with another, exactly one of them all 1 on >= 95% of rows."""
    target = outcome.target
    if target is None or target not in frame or target not in profiles or outcome.kind == TaskKind.REGRESSION:
        return {}
    y = _zero_one(frame[target], profiles[target])
    if y is None:
        return {}
    apart = {}
    for c in features:
        v = _zero_one(frame[c], profiles[c]) if c in frame else None
        if v is not None and np.nanmean(v * y) <= 1 - APART_SHARE and np.nansum(v) >= MIN_ROWS / 4:
            apart[c] = v
    # the largest levels first: a rare 0/1 column apart from the target by chance adds no rows
    cols: list[str] = []
    covered = np.nan_to_num(y)
    for c in sorted(apart, key=lambda k: -np.nansum(apart[k])):
        v = np.nan_to_num(apart[c])
        if np.mean(v * covered) <= 1 - APART_SHARE:
            cols.append(c)
            covered = covered + v
        if np.mean(covered[np.isfinite(y)] == 1) >= ONE_HOT_SHARE:
            break
    share = float(np.mean(covered[np.isfinite(y)] == 1))
    if len(cols) < 2 or share < ONE_HOT_SHARE:
        return {}
    evidence = {"levels": [target, *cols], "share_one_of_them": round(share, 4)}
    return {c: evidence for c in cols}


END_SHARE = 0.95  # rows on which a number equals another plus the duration (within 1%)
END_ROWS = 2000  # rows enough to see it


def _end_as_start_plus_duration(frame, profiles, features, t: np.ndarray, time: str, timings) -> None:
    """A number that is another number plus the duration on nearly every row (an age at exit next
    to the age at entry, a discharge day next to the admission day): the end of follow-up. Only
    the columns whose median is near the would-be start's are compared row by row, so a wide
    table costs a pass over its columns per candidate, not a pass over all its cells."""
    numbers = [c for c in features if _is_number(profiles[c]) and not _is_date(profiles[c]) and profiles[c].nunique >= 10]
    dur = t[:END_ROWS]
    if len(numbers) < 2 or not np.nanstd(dur) > 0:
        return
    rows = frame.iloc[:END_ROWS]
    values = np.column_stack([numeric_values(rows[c], profiles[c]) for c in numbers])
    with np.errstate(all="ignore"):
        medians = np.nanmedian(values, axis=0)
    for i, c in enumerate(numbers):
        start = values[:, i] - dur  # what the start would be, were c the end
        if not np.nanmean(start >= -1e-9) >= BOUND_SHARE or timings[c].timing == "outcome_derived":
            continue
        m = float(np.nanmedian(start))
        spread = float(np.subtract(*np.nanpercentile(start, [75, 25])))
        near = np.flatnonzero(np.abs(medians - m) <= 0.05 * abs(m) + 0.05 * spread + 1e-6)
        near = near[near != i]
        if not len(near):
            continue
        other = values[:, near]
        close = np.abs(other - start[:, None]) <= 0.01 * np.abs(other) + 1e-6
        shares = np.nanmean(np.where(np.isfinite(other) & np.isfinite(start)[:, None], close, np.nan), axis=0)
        k = int(np.nanargmax(shares)) if np.isfinite(shares).any() else -1
        if k >= 0 and shares[k] >= END_SHARE:
            j = int(near[k])
            timings[c].add("outcome_derived", "end_of_follow_up",
                           f"'{c}' minus '{numbers[j]}' is the duration '{time}' on {shares[k]:.0%} of rows: it is "
                           "the end of follow-up", start_column=numbers[j], share_equal=round(float(shares[k]), 4))


def _followed_test(c: str, present: np.ndarray, t: np.ndarray, time: str, timing: Timing,
                   ranks: np.ndarray | None) -> None:
    """A column filled only on the rows still followed (:func:`.event_times.present_while_followed`)."""
    followed = event_times.present_while_followed(present, t, ranks)
    if followed is not None:
        timing.add("follow_up", "present_while_followed",
                   f"filled only while a row is still followed: missing on {followed['rows_missing']} rows whose "
                   f"'{time}' is at most {followed['longest_missing_follow_up']:g} (the filled rows' median "
                   f"{followed['median_present_follow_up']:g}; shorter in {followed['share_pairs_present_longer']:.0%}"
                   f" of pairs, {event_times.p_words(followed['p_value'])}): measured during follow-up, its presence "
                   "alone says how long a row was followed", **followed)


def _rarer_class(outcome) -> tuple[np.ndarray | None, str]:
    """The rows of a yes/no outcome's rarer class (the event of a classification: death, churn),
    and its words; (None, "") for other targets. Only the rarer class: a value that nearly always
    comes with the common one (survivors of the youngest age group) is a strong predictor, one
    that always comes with the rare one at this significance is recorded because of it."""
    if outcome.kind != TaskKind.CLASSIFICATION or outcome.n_classes != 2 or outcome.y is None:
        return None, ""
    y = np.asarray(outcome.y)
    counts = [int((y == k).sum()) for k in (0, 1)]
    rare = int(np.argmin(counts))
    return y == rare, f"'{outcome.target}' = {outcome.classes[rare]!s}"


def _date_tests(frame, profiles, outcome, index: PredictionIndex, features, timings) -> None:
    dates = [c for c in features if _is_date(profiles[c])]
    if index.kind == "date" and index.column in profiles and index.column not in dates:
        dates.append(index.column)
    if not dates:
        return
    duration = outcome.duration if outcome.kind == TaskKind.SURVIVAL else None
    start = index.column if index.kind == "date" else None
    end = None
    if start is not None:
        _, end, _ = index_date(frame, profiles, [start] + [d for d in dates if d != start], duration)
    days = _date_days(frame, profiles, dates)
    births = _birth_dates(days)
    for c in dates:
        if c not in timings:
            continue
        if c == start:
            timings[c].add("baseline", "is_index", "it is the index date")
            continue
        if c in births:
            timings[c].add("baseline", "before_index", "a date years before the others (birth)")
            continue
        if c == end:
            timings[c].add("outcome_derived", "end_of_follow_up",
                           f"'{c}' minus '{start}' is the duration: it is the end of follow-up",
                           index_date=start)
            continue
        if start is None:
            if len(dates) == 1 and OUTCOME_DATE_NAME.search(c) and outcome.target is not None:
                timings[c].add("follow_up", "named_outcome_date",
                               "the only date, and its name says it records the outcome")
            continue
        offset = days[c] - days[start]
        ok = np.isfinite(offset)
        if ok.sum() < 10:
            continue
        on_or_after = float(np.mean(offset[ok] >= 0))
        after = float(np.mean(offset[ok] > 0.5))
        if on_or_after >= AFTER_SHARE and after >= STRICTLY_AFTER:
            evidence = {"index_date": start, "share_after_index": round(after, 4)}
            if duration is not None:
                both = ok & np.isfinite(duration)
                if both.sum() > 2:
                    evidence["spearman_with_duration"] = round(float(
                        spearmanr(offset[both], duration[both]).statistic), 4)
            timings[c].add("follow_up", "dated_after_index",
                           f"dated after the index date '{start}' on {after:.0%} of rows: not known "
                           "when a prediction is made", **evidence)
        elif on_or_after <= 1 - AFTER_SHARE:
            timings[c].add("baseline", "before_index", f"dated before the index date '{start}'")


def _entity_tests(df, profiles, entity, index: PredictionIndex, features, timings, target: str | None) -> None:
    if entity is None or entity.id is None:
        return
    constant = [c for c in entity.evidence.get("baseline_columns", []) if c in timings]
    for c in constant:
        timings[c].add("baseline", "constant_within_entity",
                       f"the same on every record of a '{entity.id}'")
    # whatever the index, a count of the outcome over all the records is known only at the last
    for c, counted in counts_of_the_outcome(df, profiles, entity.id, target, constant).items():
        timings[c].add("outcome_derived", "counts_outcome",
                       f"equals the number of records of its '{entity.id}' with {target}={counted['target_value']} "
                       f"on {counted['share_of_entities']:.0%} of them: the outcome counted over the whole follow-up",
                       **counted)
    if index.kind not in ("entity_start", "row"):
        return
    # at the first record, or at each record's own time, a summary of them all is not known yet
    for c, (test, reason, numbers) in _summaries_of_records(df, profiles, entity, constant).items():
        timings[c].add("follow_up", test, reason, **numbers)
    if index.kind != "entity_start":
        return
    for c in entity.varying:
        if c in timings and c != index.column:
            # a measurement repeated at each visit: known at the index only as its first value;
            # the aggregation decides which value a model sees (see repeated_measurements)
            timings[c].evidence.append({"timing": "time_varying", "test": "changes_within_entity",
                                        "reason": f"changes between the records of a '{entity.id}': "
                                                  "only its first value is known at the index"})


def _summaries_of_records(df, profiles, entity, constant: list[str]) -> dict[str, tuple[str, str, dict]]:
    """Columns the same on every record of an entity that are known only once its last record
    is: the number of its records, or a length that rises with the time its records span (a
    length of stay next to hourly vitals, a total dose). Constant within the entity, they look
    like baseline attributes; a model at the first record would see the end of the stay."""
    visit = entity.visit
    if visit is None or visit not in profiles or not constant:
        return {}
    frame = pd.DataFrame({"id": df[entity.id].to_numpy(),
                          "t": numeric_values(df[visit], profiles[visit])})
    numbers = {c: numeric_values(df[c], profiles[c]) for c in constant
               if _is_number(profiles[c]) and not _is_date(profiles[c]) and c != visit}
    if not numbers:
        return {}
    for c, x in numbers.items():
        frame[c] = x
    per = frame.groupby("id", sort=False).agg(n=("t", "size"), first=("t", "min"), last=("t", "max"),
                                              **{c: (c, "first") for c in numbers})
    per = per[per["n"] >= 2]
    if len(per) < MIN_ROWS:
        return {}
    span = (per["last"] - per["first"]).to_numpy(dtype=float)
    records = per["n"].to_numpy()
    out: dict[str, tuple[str, str, dict]] = {}
    for c in numbers:
        x = per[c].to_numpy(dtype=float)
        ok = np.isfinite(x)
        if ok.sum() < MIN_ROWS:
            continue
        counted = float(np.mean(x[ok] == records[ok]))
        if counted >= RECORDS_COUNTED and np.ptp(records[ok]) > 0:  # not a fixed schedule
            out[c] = ("counts_records", f"equals the number of records of its '{entity.id}' on "
                      f"{counted:.0%} of them: known only once the last is",
                      {"share_equal_to_records": round(counted, 4)})
            continue
        both = ok & np.isfinite(span)
        if both.sum() < MIN_ROWS or np.unique(x[both]).size < max(20, 0.1 * both.sum()) or np.ptp(span[both]) == 0:
            continue
        rho = float(spearmanr(x[both], span[both]).statistic)
        if rho >= SPAN_TRACK:
            out[c] = ("spans_records", f"rises with the time the records of its '{entity.id}' span "
                      f"('{visit}', Spearman {rho:.2f}): a length or total known only at the last record",
                      {"spearman_with_record_span": round(rho, 4)})
    return out


def _event_pairs(frame, profiles, features, timings, duration: np.ndarray | None, time: str | None) -> None:
    """(time, indicator) pairs of an event during follow-up, found by the data whatever their
    names (:func:`.event_times.event_pairs`): the time never exceeds the duration and the
    indicator is its event flag. Both go to follow-up, together, whether or not the time was
    recognised on its own (an event most rows had, or one that came early, does not reach the
    follow-up)."""
    if duration is None:
        return
    times = [c for c in features if _is_number(profiles[c]) and not _is_date(profiles[c]) and profiles[c].nunique >= 5]
    flags = [c for c in features if profiles[c].nunique == 2]
    after = ("follow_up", "outcome_derived")
    for c, f, evidence in event_times.event_pairs(frame, profiles, times, flags, duration):
        if timings[c].timing not in after:
            timings[c].add("follow_up", "event_pair",
                           f"with '{f}', a (time, indicator) pair: never exceeds the duration '{time}', and equals "
                           f"it on {evidence['share_censored_at_duration']:.0%} of the rows '{f}' marks censored, "
                           f"on {evidence['share_events_at_duration']:.0%} of the others ("
                           f"{event_times.p_words(evidence['p_value'])}): the time of an event during follow-up"
                           f"{event_times.named_as_time(c)}", flag=f, **evidence)
        if timings[f].timing not in after:
            timings[f].add("follow_up", "recorded_with_follow_up",
                           f"says whether '{c}' ended before the follow-up did (its event flag): recorded "
                           "during follow-up", follows=c, **evidence)


def _propagate(frame, profiles, features, timings) -> None:
    """Columns recorded with, or tracking, a follow-up column are follow-up too."""
    followed = [c for c, tm in timings.items() if tm.timing in ("follow_up", "outcome_derived")]
    for follow in followed:
        for c in features:
            if c == follow or timings[c].timing in ("follow_up", "outcome_derived"):
                continue
            computed = _computed_from(frame, profiles, follow, c)
            if computed is not None:  # a ratio, a scaled copy or a shifted copy: its source's timing
                timing = timings[follow].timing
                timings[c].add(timing, "computed_from_follow_up", f"'{c}' is '{follow}' {computed['relation']} on "
                               f"{computed['share']:.0%} of rows: computed from it, known when it is",
                               follows=follow, **computed)
                continue
            why = _co_recorded(frame, follow, c, profiles[c])
            if why is not None:
                timings[c].add("follow_up", "recorded_with_follow_up",
                               f"{why}: recorded during follow-up", follows=follow)
                continue
            rho = _tracks(frame, profiles, follow, c)
            if rho is not None and (rho >= TRACK_STRONG or (rho >= TRACK_NAMED and FOLLOW_UP_WORDS.search(c))):
                timings[c].add("follow_up", "tracks_follow_up",
                               f"rises with the follow-up column '{follow}' (Spearman {rho:.2f})"
                               + ("" if rho >= TRACK_STRONG else " and is named as one"),
                               follows=follow, spearman=round(rho, 4))


COMPUTED_SHARE = 0.95  # of rows on which a column is an exact ratio or linear function of another
MAX_RATIOS = 3  # distinct ratios ('LEN.T' divided by 90 or 180 by the arm's planned stay)
EXACT = 0.9999  # Pearson of a linear copy (a change of units, a shift by a constant)


def _computed_from(frame, profiles, source: str, other: str, min_rows: int = MIN_ROWS) -> dict | None:
    """How ``other`` is computed from ``source`` on most rows: divided by one of a few constants,
    or a linear function of it; None when neither holds. Value relations, not names: a compliance
    fraction 'FRAC' is 'LEN.T' / 90 or / 180."""
    if not (_is_number(profiles[source]) and _is_number(profiles[other])) or profiles[other].nunique < 10:
        return None
    x = numeric_values(frame[source], profiles[source])
    y = numeric_values(frame[other], profiles[other])
    ok = np.isfinite(x) & np.isfinite(y) & (x != 0) & (y != 0)
    if ok.sum() < min_rows or np.ptp(x[ok]) == 0 or np.ptp(y[ok]) == 0:
        return None
    ratios, counts = np.unique(np.round(x[ok] / y[ok], 6), return_counts=True)
    top = np.argsort(counts)[::-1][:MAX_RATIOS]
    share = counts[top].sum() / ok.sum()
    if share >= COMPUTED_SHARE:
        said = " or ".join(f"{r:g}" for r in sorted(ratios[top]))
        return {"relation": f"divided by {said}", "share": round(float(share), 4)}
    if abs(np.corrcoef(x[ok], y[ok])[0, 1]) >= EXACT:
        return {"relation": "up to a linear change (units or a constant shift)", "share": 1.0}
    return None


PROBE_ROWS = 64  # rows a pair is tried on before the whole sample


def computed_relations(frame: pd.DataFrame, profiles: dict[str, ColumnProfile], features: list[str]) -> list[dict]:
    """Every feature computed from another (:func:`_computed_from`: a ratio by a few constants, a
    linear copy), whatever their timing: a person who moves the source moves what was computed from
    it (:meth:`kernel_tools.inferences.ColumnTimeline.move`). Pairs are tried on a few rows first."""
    numbers = [c for c in features if _is_number(profiles[c]) and profiles[c].nunique >= 10]
    if len(numbers) < 2:
        return []
    probe = frame.iloc[:: max(1, len(frame) // PROBE_ROWS)]
    out = []
    for source in numbers:
        for other in numbers:
            if other != source and _computed_from(probe, profiles, source, other, min_rows=PROBE_ROWS // 4):
                computed = _computed_from(frame, profiles, source, other)
                if computed is not None:
                    out.append({"column": other, "source": source, **computed})
    return out


def _tracks(frame, profiles, follow: str, other: str) -> float | None:
    if not (_is_number(profiles[follow]) and _is_number(profiles[other])) or profiles[other].nunique < 10:
        return None
    x = numeric_values(frame[follow], profiles[follow])
    y = numeric_values(frame[other], profiles[other])
    ok = np.isfinite(x) & np.isfinite(y)
    if ok.sum() < MIN_ROWS:
        return None
    return float(spearmanr(x[ok], y[ok]).statistic)


def timing_leaks(timings: dict[str, Timing]) -> dict[str, dict]:
    """Leakage evidence for the follow-up and outcome-derived columns: the class, why, and the
    numbers of the tests that decided it."""
    out = {}
    for c, tm in timings.items():
        if tm.timing not in ("follow_up", "outcome_derived"):
            continue
        decisive = [e for e in tm.evidence if e["timing"] == tm.timing]
        numbers = {k: v for e in decisive for k, v in e.items() if k not in ("timing", "test", "reason")}
        out[c] = {**numbers, "timing": tm.timing, "reason": tm.reason,
                  "timing_tests": [e["test"] for e in decisive]}
    return out
