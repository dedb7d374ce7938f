"""Which learning task the data poses (classification, regression or survival), and why."""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pandas.api.types as ptypes

from kernel_tools.diagnosis.columns import ColumnProfile, numeric_values, profile_column
from kernel_tools.diagnosis.event_codes import (
    CENSOR_WORDS,
    EVENT_WORDS,
    Coding,
    censoring_code,
    code_text,
    label_coding,
    status_codes,
    two_code_reading,
)
from kernel_tools.diagnosis.intervals import find_intervals
from kernel_tools.diagnosis.level_order import level_order
from kernel_tools.diagnosis.multistate import find_multistate
from kernel_tools.diagnosis.observed_times import ObservedTime, conventional, observed_within
from kernel_tools.diagnosis.onset import find_age_at_event
from kernel_tools.diagnosis.pair_names import time_of_flag
from kernel_tools.diagnosis.periods import PersonPeriods, find_person_periods
from kernel_tools.diagnosis.scoring import auroc
from kernel_tools.diagnosis.stays import end_of_stay_alternative
from kernel_tools.inferences import Alternative, Inference, status_reading
from kernel_tools.plurals import counted
from kernel_tools.time_names import DURATION_NAME, all_events_status
from kernel_tools.vocabulary import Confidence, InferenceKind, TaskKind

FOLLOW_UP_NAME = re.compile(r"follow|futime|last|surv|stop|end|exit|censor|event|death|lenfol|(^|[_\W])fu([_\W]|$)",
                            re.IGNORECASE)
MAX_CLASSES = 20
MIN_ROWS_PER_CLASS = 5  # an integer target with fewer rows per value is a quantity, not classes
MAX_EVENT_CODES = 4  # 0 = censored and at most three competing events


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
    inference: Inference | None = None  # the task, its confidence and evidence
    duration_inference: Inference | None = None  # survival: the follow-up time chosen
    start: str | None = None  # survival over (start, stop] intervals found in the data: their start
    periods: PersonPeriods | None = None  # survival over person-period rows found in the data
    coding: Coding | None = None  # survival on a status of several codes: which is censored
    levels: list[str] | None = None  # regression on the ranks of ordered labels: the labels, lowest first
    transitions: dict | None = None  # multi-state rows (see .multistate): their layout

    @property
    def n_classes(self) -> int:
        return len(self.classes or [])

    def take(self, positions: np.ndarray) -> Outcome:
        """The same outcome restricted to some rows (e.g. the sample for model-based checks)."""
        return Outcome(self.kind, self.target, None if self.y is None else self.y[positions],
                       None if self.valid is None else self.valid[positions], self.classes,
                       None if self.duration is None else self.duration[positions], self.time,
                       self.event_values, self.reason, self.inference, self.duration_inference, self.start,
                       self.periods, self.coding, self.levels, self.transitions)


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


def event_indicator(s: pd.Series) -> tuple[np.ndarray, list] | None:
    """0/1 events from an event column, NaN where it is missing, and its distinct values; None
    when it cannot be read as events. 0 = censored and any other code an event (R's 0/1/2,
    competing events merged), or of two codes the larger is the event (R's 1/2)."""
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


def status_events(s: pd.Series) -> tuple[np.ndarray, list] | None:
    """:func:`event_indicator`, or every row the event when the status has the single value of an
    event code (every patient died): what a survival model of a chosen status fits on."""
    read = event_indicator(s)
    present = s.dropna()
    if read is None and len(present) and present.nunique() == 1 and all_events_status(present.iloc[0], "", []):
        return np.where(s.isna(), np.nan, 1.0), [str(present.iloc[0])]
    return read


def quantity_reason(values: np.ndarray) -> str | None:
    """Why an integer target with a few distinct values is a count or a score, not class codes.

    Class codes are few and each is shared by many rows; a count (visits, claims, days) has
    gaps between its values or piles up at the smallest values with a thin long tail.
    """
    v = values[~np.isnan(values)]
    distinct, counts = np.unique(v, return_counts=True)
    k = len(distinct)
    if k < 3:
        return None
    if np.median(counts) < MIN_ROWS_PER_CLASS:
        return f"{k} values with a median of {np.median(counts):g} rows each: too few to be classes"
    if k >= 6 and distinct[0] >= 0:
        span = distinct[-1] - distinct[0] + 1
        if span >= 1.5 * k:
            return f"a count: {k} values spread over {span:g} with gaps"
        upper = v > distinct[0] + (distinct[-1] - distinct[0]) / 2
        if upper.mean() < 0.05 and np.argmax(counts) <= 1:
            return f"a count: mostly small values, {upper.mean():.1%} in the upper half of the range"
    return None


def _event_codes(values: np.ndarray | None) -> bool:
    """A numeric target that can be an event indicator at the end of (start, stop] intervals:
    two codes (0/1, 1/2, False/True), or 0 = censored (the most common code) next to a few
    event codes (competing events)."""
    if values is None:
        return False
    v = values[~np.isnan(values)]
    distinct, counts = np.unique(v, return_counts=True)
    if len(distinct) == 2:
        return True
    return (2 < len(distinct) <= MAX_EVENT_CODES and np.array_equal(distinct, np.arange(len(distinct)))
            and np.argmax(counts) == 0)


def _found_events(df, profiles, s: pd.Series, target: str, values: np.ndarray, plain_number: bool,
                  layout: PersonPeriods | None) -> Outcome | None:
    """Survival found from the target's codes: person-period rows of a strong ``layout`` (asked), two
    codes next to a follow-up time (high confidence) or next to a time at whose common end most rows
    without the event stop (asked), a status of several codes next to one (competing events: asked),
    or event codes at the end of chained intervals (asked)."""
    two = len(np.unique(values[~np.isnan(values)])) == 2
    if two:
        strong = layout if layout is not None and layout.strong else None
        found = ((_found_periods(df, profiles, s, target, strong) if strong is not None else None)
                 or _found_survival(df, profiles, s, target) or _found_end_of_study(df, profiles, s, target)
                 or _found_age_at_event(df, profiles, s, target))
    else:
        found = _found_competing(df, profiles, s, target, values) if plain_number else None
    if found is None and _event_codes(values):
        found = _found_intervals(df, profiles, s, target)
    return found


MAX_NEGATIVE_SHARE = 0.05  # of the values of a column named as the follow-up
CALENDAR_YEARS = (1800, 2100)  # every value in this range: a calendar year, whatever the name says


def duration_candidates(df: pd.DataFrame, profiles: dict[str, ColumnProfile], exclude: set[str]) -> list[str]:
    """Columns named and behaving like a follow-up time (positive numbers, mostly present); named
    as the time of an excluded indicator (the target) counts as named."""
    return [name for name, _ in _duration_values(df, profiles, exclude)]


def _duration_values(df, profiles, exclude) -> list[tuple[str, np.ndarray]]:
    candidates = []
    for name, prof in profiles.items():
        if name in exclude or prof.kind != "numeric" or prof.nunique < 10:
            continue
        # named as a time, or as the time of the target's own indicator ('srv' beside 'srvstat')
        if not DURATION_NAME.search(name) and not any(time_of_flag(flag, name) for flag in exclude):
            continue
        v = numeric_values(df[name], prof)
        # a few negative times of a column named as the follow-up are slips the survival setup asks
        # about; more, or under another name (a calendar year), make it another quantity
        negative = np.mean(v[np.isfinite(v)] < 0)
        if negative > (MAX_NEGATIVE_SHARE if FOLLOW_UP_NAME.search(name) else 0) or prof.missing_rate > 0.2:
            continue
        if CALENDAR_YEARS[0] <= np.nanmin(v) and np.nanmax(v) <= CALENDAR_YEARS[1]:
            continue  # 'year' of birth or of entry: a calendar year, not a time since the index
        candidates.append((name, v))
    return candidates


def find_duration(df: pd.DataFrame, profiles: dict[str, ColumnProfile], exclude: set[str]) -> str | None:
    """A column named and behaving like a follow-up time (positive numbers); the longest wins."""
    candidates = _duration_values(df, profiles, exclude)
    if not candidates:
        return None
    if len(candidates) == 1:
        return candidates[0][0]
    # a name that says "until the last observation / the event" beats a time before baseline
    # (time from onset to diagnosis), whatever the units
    named = [c for c in candidates if FOLLOW_UP_NAME.search(c[0])]
    if named:
        candidates = named
    if len(candidates) == 1:
        return candidates[0][0]
    # several time columns (e.g. time to recurrence and time to death): the overall follow-up
    # is the one at least as long as the others on most rows
    def dominance(item):
        _, v = item
        return np.mean([np.nanmean(v >= w) for _, w in candidates])

    return max(candidates, key=dominance)[0]


def blank_as_missing(s: pd.Series) -> pd.Series:
    """Blank or whitespace-only text (``''``, ``'   '``) is a missing value, not a class."""
    if s.dtype.kind not in "OSU" and not pd.api.types.is_string_dtype(s.dtype):
        return s
    text = s.astype(str).str.strip()
    blank = s.notna() & text.eq("")
    return s.mask(blank) if blank.any() else s


def infer_task(
    df: pd.DataFrame,
    profiles: dict[str, ColumnProfile],
    target: str | None,
    task: str | None,
    time: str | None,
) -> Outcome:
    """Decide the task from the target's values and a duration column, given or evident; the
    outcome carries the :class:`Inference` of the task (and of the duration, for survival)."""
    if target is None:
        return Outcome("classification" if task is None else task, None,
                       reason="no target given: only target-free checks ran")
    raw = df[target]
    s = blank_as_missing(raw)
    prof = profiles[target] if s is raw else profile_column(target, s)
    if s.nunique(dropna=True) < 2:  # the values, not the profile (a placeholder when the budget ran out)
        return _all_events(df, profiles, s, target, task, time)
    if task in (None, TaskKind.SURVIVAL) and (states := find_multistate(df, profiles, target)) is not None:
        return _multistate(df, profiles, s, target, task, time, states)
    if task == TaskKind.SURVIVAL or (time is not None and task is None):
        return _given_survival(df, profiles, s, target, task, time)
    numeric = prof.kind in ("numeric", "bool") or prof.parsed_as in ("numeric", "bool")
    values = numeric_values(s, prof) if numeric else None
    plain_number = task is None and numeric and prof.kind != "bool" and prof.parsed_as != "bool"
    hint = None
    if task is None and values is None:
        survival = _found_text_status(df, profiles, s, target)
        if survival is not None:
            return survival
    if task is None and values is not None:
        # one search, weak layouts included: a strong one is read as survival, a weak one only asked
        layout = _person_periods(df, profiles, s, target)
        survival = _found_events(df, profiles, s, target, values, plain_number, layout)
        if survival is not None:
            return survival
        hint = layout
    if values is None and task in (None, TaskKind.REGRESSION):
        ordered = level_order(s, _class_codes(s)[1])
        if ordered is not None:  # no < perhaps < yes: a score whose labels say its order
            return _ordered_levels(s, target, task, ordered)
    # plain_number implies numeric values
    quantity = quantity_reason(values) if plain_number and values is not None and prof.is_integer else None
    score = (ordered_score(values, target) if plain_number and values is not None and prof.is_integer
             and not quantity else None)
    if plain_number and values is not None and prof.is_integer and not quantity and not score:
        score = ordered_codes(df, profiles, values, target)
    distinct = prof.nunique
    if task == TaskKind.REGRESSION or (plain_number and (
            distinct > MAX_CLASSES or not prof.is_integer and distinct > 2 or quantity or score)):
        return _regression(values, target, task, distinct, quantity, score)
    outcome = _classification(s, target, task, distinct, numeric and prof.is_integer)
    if hint is not None and outcome.inference is not None:
        _ask_periods(outcome.inference, hint, target)
    return outcome


def _person_periods(df, profiles, s: pd.Series, target: str) -> PersonPeriods | None:
    """The person-period layout of the rows, strong or only a hint (see :mod:`.periods`), or None."""
    event = event_indicator(s)
    return find_person_periods(df, profiles, target, event[0]) if event is not None else None


def _ask_periods(inference: Inference, hint: PersonPeriods, target: str) -> None:
    """The rows' classification asked, with survival over the periods ranked first: the layout is
    there, but too weak to decide alone."""
    inference.confidence = Confidence.LOW
    inference.evidence[1:1] = [f"the rows may be periods of each '{hint.id}' ('{hint.period}' rises by one, "
                               f"'{target}' is 1 only on last rows), but {hint.doubt}"]
    inference.evidence.append(f"the layout: {hint.reason}")
    inference.alternatives.insert(0, Alternative(
        "survival", [f"one row per '{hint.id}', followed until its last '{hint.period}'"], 0.4))
    inference.details.update({"periods_hint": True, "id": hint.id, "period": hint.period})


def _given_survival(df, profiles, s: pd.Series, target: str, task: str | None, time: str | None) -> Outcome:
    candidates = []
    if time is None:
        # a named follow-up time makes one row per subject even if ids repeat (the entity is asked
        # later); the rows are periods only when no column but the period itself is a duration
        layout = _person_periods(df, profiles, s, target)
        exclude = {target} if layout is None else {target, layout.period}
        candidates = duration_candidates(df, profiles, exclude)
        time = find_duration(df, profiles, exclude)
        periods = _given_periods(df, profiles, s, target, layout) if time is None and layout is not None else None
        if periods is not None:
            return periods
        if time is None:
            raise ValueError("task='survival' needs the duration column: pass time='<follow-up column>'")
    coded = _given_status(df, profiles, s, target, time)
    if coded is not None:
        coded.duration_inference = _duration_inference(time, candidates, given=not candidates)
        return coded
    event = event_indicator(s)
    if event is None:
        raise ValueError(f"survival target {target!r} must be an event indicator (0 = censored, 1 = event)")
    coded = _two_codes(df, profiles, s, target, time, given=True)
    if coded is not None:
        coded.duration_inference = _duration_inference(time, candidates, given=not candidates)
        return coded
    reason = (f"survival: duration column {time!r} with event indicator {target!r}"
              + (" (given)" if task == TaskKind.SURVIVAL else ""))
    outcome = _survival(df, profiles, target, time, event, reason)
    outcome.inference = Inference(InferenceKind.TASK, "survival", Confidence.GIVEN, [reason],
                                  details={"event_codes": event[1]})
    outcome.duration_inference = _duration_inference(time, candidates, given=not candidates)
    return outcome


def _all_events(df, profiles, s: pd.Series, target: str, task: str | None, time: str | None) -> Outcome:
    """Survival on a status whose one value is the event (every patient died: no one censored),
    over the time given or the one named as the follow-up; asked unless survival was given, since
    an export of the dead only looks the same. Nothing to predict without such a time."""
    value = s.dropna().iloc[0]
    candidates = [] if time is not None else duration_candidates(df, profiles, {target})
    time = time or find_duration(df, profiles, {target})
    if task not in (None, TaskKind.SURVIVAL) or time is None or not all_events_status(value, time, []):
        raise ValueError(f"target {target!r} has a single value: there is nothing to predict")
    event = np.where(s.isna(), np.nan, 1.0)
    reason = (f"survival: every known row of {target!r} is the event ('{value}': no one censored), over the "
              f"time {time!r}")
    outcome = _survival(df, profiles, target, time, (event, [str(value)]), reason)
    given = task == TaskKind.SURVIVAL
    outcome.inference = Inference(
        InferenceKind.TASK, "survival", Confidence.GIVEN if given else Confidence.LOW,
        [reason, "a status with a single value: every row an event, or an export of the events only?"],
        details={"event_codes": [str(value)], "all_events": True})
    outcome.duration_inference = _duration_inference(time, candidates, given=not candidates)
    return outcome


def _given_status(df, profiles, s: pd.Series, target: str, time: str) -> Outcome | None:
    """Survival given on a status of 3-8 numeric codes: read as when inferred (the longest-followed
    code censored, else 0), so the recode step and every diagnosis agree on it; None for a 0/1
    event or codes not read as a status."""
    prof = profile_column(target, s)
    if prof.kind not in ("numeric", "bool") and prof.parsed_as != "numeric":
        return None
    values = numeric_values(s, prof)
    if status_codes(values) is None:
        return None
    coding = censoring_code(values, numeric_values(df[time], profiles[time]), named_follow_up=True)
    return None if coding is None else _status_survival(df, profiles, target, time, values, coding, given=True)


def _found_survival(df, profiles, s: pd.Series, target: str) -> Outcome | None:
    duration = find_duration(df, profiles, {target})
    event = event_indicator(s)
    if duration is None or event is None:
        return None
    observed = _observed_time(df, profiles, s, target, duration)
    if observed is not None:  # the named follow-up is the censoring time of another: asked, as a status is
        values = pd.to_numeric(s, errors="coerce").to_numpy(dtype=float)
        outcome = _status_survival(df, profiles, target, observed.observed, values, observed.coding)
        if conventional(observed, target) and outcome.inference is not None:
            outcome.inference.confidence = Confidence.HIGH  # the data show the reading the name implies
            outcome.inference.evidence.append(f"'{target}' is named as a status, and the data show what its "
                                              "name implies: 0 censored")
        return outcome
    candidates = duration_candidates(df, profiles, {target})
    coded = _two_codes(df, profiles, s, target, duration, given=False)
    if coded is not None:
        coded.duration_inference = _duration_inference(duration, candidates, given=False)
        return coded
    reason = f"survival: event codes {target!r} next to follow-up time {duration!r}"
    outcome = _survival(df, profiles, target, duration, event, reason)
    outcome.inference = Inference(
        InferenceKind.TASK, "survival", Confidence.HIGH,
        [f"'{target}' holds event codes {event[1]} and '{duration}' is named and behaves as a follow-up time"],
        [Alternative("classification", [f"'{target}' as classes, ignoring the follow-up time: censored rows "
                                         "would count as 'no event'"], 0.2)],
        details={"event_codes": event[1]})
    outcome.duration_inference = _duration_inference(duration, candidates, given=False)
    stay = end_of_stay_alternative(target, duration)
    if stay is not None:  # a status at the end of a stay: survival over the stay, or classes at discharge
        outcome.inference.confidence = Confidence.LOW
        outcome.inference.evidence.append(f"'{duration}' is named as the length of a stay: '{target}' may be "
                                          "recorded when the stay ends, not followed over time")
        outcome.inference.alternatives = [stay]
    return outcome


def _two_codes(df, profiles, s: pd.Series, target: str, duration: str, given: bool) -> Outcome | None:
    """A numeric status of two codes whose usual reading (the higher the event) the name or the
    follow-up puts in doubt (:func:`.event_codes.two_code_reading`): read as a status, and asked;
    None when the usual reading stands (a logical TRUE/FALSE always does)."""
    if ptypes.is_bool_dtype(s.dtype):
        return None
    values = pd.to_numeric(s, errors="coerce").to_numpy(dtype=float)
    coding = two_code_reading(values, numeric_values(df[duration], profiles[duration]), target)
    return None if coding is None else _status_survival(df, profiles, target, duration, values, coding, given=given)


def _observed_time(df, profiles, s: pd.Series, target: str, duration: str) -> ObservedTime | None:
    """A numeric status whose rows end at ``duration`` on one code only, beside a time never longer
    (:mod:`.observed_times`), or None."""
    values = pd.to_numeric(s, errors="coerce").to_numpy(dtype=float)
    if np.isnan(values).all() or len(np.unique(values[~np.isnan(values)])) != 2:
        return None
    # the observed time need not be named as one ('durat'): any column of many positive numbers
    times = {c: numeric_values(df[c], p) for c, p in profiles.items()
             if c != target and p.kind == "numeric" and p.nunique >= 10}
    return observed_within(values, duration, times) if duration in times else None


SHORTER_FOR_EVENTS = 0.9  # AUROC of a leak's shortness for the event that reads as a time to it...
THRESHOLD = 0.99  # ...short of a cut that defines the classes (a birth weight under 2500 g)


def ask_unnamed_follow_up(outcome: Outcome, frame: pd.DataFrame, profiles: dict[str, ColumnProfile],
                          leaks: list[str]) -> str | None:
    """A 0/1 classification whose leak is a positive number far shorter on the rows with the event
    ('edrel' beside 'rel'), yet not a cut between them: a time to the event or to the end of
    follow-up no name calls a time.
    Classes would count the censored as 'no event', so the task is asked with survival on that
    column ranked first. The column, or None."""
    inference = outcome.inference
    if outcome.kind != TaskKind.CLASSIFICATION or inference is None or outcome.n_classes != 2 or outcome.y is None:
        return None
    if inference.confidence != Confidence.HIGH or event_indicator(frame[outcome.target]) is None:
        return None
    valid = outcome.y >= 0
    for c in leaks:
        prof = profiles.get(c)
        if prof is None or prof.kind != "numeric" or prof.nunique < 10:
            continue
        v = numeric_values(frame[c], prof)
        ok = valid & np.isfinite(v)
        # events and censored overlap in time (an event late in follow-up outlasts an early censoring)
        if ok.sum() < 20 or np.nanmin(v) < 0 or not SHORTER_FOR_EVENTS <= auroc(-v[ok], outcome.y[ok] == 1) < THRESHOLD:
            continue
        inference.confidence = Confidence.LOW
        inference.evidence.append(f"'{c}' is far shorter on the rows with the event: it may be the time to the "
                                  "event or to the end of follow-up (survival), though no name says so")
        inference.alternatives.insert(0, Alternative("survival", [f"'{outcome.target}' as events followed for "
                                                                  f"'{c}': the censored are not 'no event'"], 0.4))
        return c
    return None


def _found_text_status(df, profiles, s: pd.Series, target: str) -> Outcome | None:
    """Survival found on a text target next to a follow-up time: as a classification the follow-up
    would be dropped as a leak and events during it kept as baseline. Two values whose words name the
    event as the later of the two ('alive'/'dead') are read directly: confident when the time is named
    as a follow-up too, asked when only one of them says so. Otherwise (several labels, competing
    events; the censored label sorted last; short labels like 'A'/'D') the labels are a status read
    from their words and the follow-up (:func:`.event_codes.label_coding`), recoded, and asked."""
    found = _found_survival(df, profiles, s, target)
    if found is None or found.inference is None or found.event_values is None or found.time is None:
        return _found_labelled_status(df, profiles, s, target)
    censored, event = found.event_values
    words = bool(EVENT_WORDS.search(event) and CENSOR_WORDS.search(censored) and not EVENT_WORDS.search(censored))
    named = bool(FOLLOW_UP_NAME.search(found.time))
    if not words and (not named or CENSOR_WORDS.search(event)):
        return _found_labelled_status(df, profiles, s, target)
    if words:
        found.inference.evidence.append(f"its values name the event: '{event}', the censored: '{censored}'")
    else:
        found.inference.evidence.append(f"its values are text: '{event}' (the later of the two) is read as the "
                                        f"event and '{censored}' as censored; no word of theirs says which is which")
    if not (words and named):
        found.inference.confidence = Confidence.LOW
    return found


def _found_labelled_status(df, profiles, s: pd.Series, target: str) -> Outcome | None:
    """A status stored as labels next to a follow-up time, read as :func:`_status_survival` reads
    numeric codes (the censored label recoded to 0, every other to 1), asked; None when neither the
    labels' words nor the follow-up say which label is censored (they stay classes)."""
    duration = find_duration(df, profiles, {target})
    if duration is None:
        return None
    coding = label_coding(s, numeric_values(df[duration], profiles[duration]))
    if coding is None:
        return None
    labels = s.to_numpy(dtype=object)
    outcome = _status_survival(df, profiles, target, duration, labels, coding)
    outcome.duration_inference = _duration_inference(duration, duration_candidates(df, profiles, {target}),
                                                     given=False)
    return outcome


END_OF_STUDY = 0.5  # share of the rows without the event at a column's maximum...
END_EVENTS = 0.02  # ...where at most this share of the events are
MIN_END_ROWS = 10


def _found_end_of_study(df, profiles, s: pd.Series, target: str) -> Outcome | None:
    """Survival asked when a 0/1 target sits beside a number no name calls a time, at whose maximum
    at least half the rows without the event stop and (nearly) no event does: the end of the study,
    where those still event-free were censored ('chldage' 12 months for children never hospitalised
    by then; their hospitalised peers spread below it). A classification of the same rows would
    count the censored as 'no event' and learn the follow-up time itself."""
    event = event_indicator(s)
    if event is None:
        return None
    e = event[0]
    ends = []
    for name, prof in profiles.items():
        if name == target or prof.kind != "numeric" or prof.nunique < 5 or prof.missing_rate > 0.2:
            continue
        v = numeric_values(df[name], prof)
        if np.nanmin(v) < 0:
            continue
        at_end = v == np.nanmax(v)
        without, with_event = at_end[e == 0], at_end[e == 1]
        if (min(len(without), len(with_event)) >= MIN_END_ROWS and without.sum() >= MIN_END_ROWS
                and without.mean() >= END_OF_STUDY and with_event.mean() <= END_EVENTS):
            ends.append((float(without.mean()), float(with_event.mean()), name))
    if not ends:
        return None
    share, events_there, time = max(ends)
    end = np.nanmax(numeric_values(df[time], profiles[time]))
    reason = (f"survival: '{target}' is 0 on {share:.0%} of rows at '{time}' = {end:g}, its maximum, where "
              f"{events_there:.0%} of the events are: the end of the study, where those still event-free were "
              "censored")
    outcome = _survival(df, profiles, target, time, event, reason)
    outcome.inference = Inference(
        InferenceKind.TASK, "survival", Confidence.LOW,
        [f"'{target}' holds event codes {event[1]} and '{time}' behaves as a follow-up time cut at a common end "
         f"({share:.0%} of the rows without the event stop at {end:g}, {events_there:.0%} of the events), though no "
         "name says so", reason],
        [Alternative("classification", [f"'{target}' as classes, '{time}' a feature: censored rows would count as "
                                         "'no event', and the follow-up time would predict it"], 0.3)],
        details={"event_codes": event[1]})
    outcome.duration_inference = Inference(InferenceKind.DURATION, time, Confidence.LOW, [reason],
                                           [Alternative(c, [f"'{c}' also stops at its maximum"], 0.2)
                                            for _, _, c in sorted(ends, reverse=True)[1:]])
    return outcome


def _found_age_at_event(df, profiles, s: pd.Series, target: str) -> Outcome | None:
    """Survival asked when a 0/1 target sits beside an age at the event or at censoring (see
    :mod:`.onset`): the age the time, the target whether it happened; classification the alternative."""
    event = event_indicator(s)
    if event is None:
        return None
    found = find_age_at_event(df, profiles, target, event[0])
    if found is None:
        return None
    age = found.age
    reason = (f"survival: '{age}' is the age at the event or at censoring and '{target}' whether it happened "
              "(time to event, counted from birth)")
    outcome = _survival(df, profiles, target, age, event, reason)
    entry = (f"; '{found.entry}' is the age at entry: the time at risk starts there (delayed entry), so a subject "
             "is counted only from it" if found.entry else "")
    outcome.inference = Inference(
        InferenceKind.TASK, "survival", Confidence.LOW,
        [f"'{target}' holds event codes {event[1]} beside '{age}', an age at the event or at censoring{entry}",
         *found.evidence],
        [Alternative("classification", [f"'{target}' as classes, '{age}' a baseline feature: right when '{age}' was "
                                         "measured at enrolment, for everyone alike"], 0.4)],
        details={"event_codes": event[1], "age_at_event": age, "entry_age": found.entry})
    outcome.duration_inference = Inference(
        InferenceKind.DURATION, age, Confidence.LOW,
        [f"'{age}': the age at the event or at censoring (from its name and values; no column is named as a "
         "follow-up time)"])
    return outcome


def _found_competing(df, profiles, s: pd.Series, target: str, values: np.ndarray) -> Outcome | None:
    """A status of 3-8 codes next to a follow-up time: survival with the censoring code chosen
    from the follow-up (see :mod:`.event_codes`) and the other codes merged as 'any event',
    always asked (low confidence): the codes do not say which is censoring. None when nothing
    says the codes are a status (they stay classes)."""
    duration = find_duration(df, profiles, {target})
    if duration is None or status_codes(values) is None:
        return None
    coding = censoring_code(values, numeric_values(df[duration], profiles[duration]),
                            bool(FOLLOW_UP_NAME.search(duration)))
    if coding is None:
        return None
    outcome = _status_survival(df, profiles, target, duration, values, coding)
    outcome.duration_inference = _duration_inference(duration, duration_candidates(df, profiles, {target}),
                                                     given=False)
    return outcome


def _status_survival(df, profiles, target: str, duration: str, values: np.ndarray, coding: Coding,
                     given: bool = False) -> Outcome:
    """Survival on a status of several codes read as ``coding``: the event is any code but the
    censored one (the recode step makes it the 0/1 column the models read). Inferred, it is
    asked with the other codes as censored and the codes as classes as the alternatives."""
    missing = pd.isna(values)
    event = np.where(missing, np.nan, (values != coding.censored).astype(float))
    codes = sorted(coding.medians)
    censored = code_text(coding.censored)
    events = ", ".join(code_text(c) for c in coding.events)
    reason = (f"survival: status '{target}' next to follow-up time '{duration}', {censored} censored, "
              f"codes {events} as one event")
    outcome = _survival(df, profiles, target, duration, (event, [code_text(c) for c in codes]), reason)
    outcome.coding = coding
    reading = (f"'{target}' is a status of {len(codes)} codes next to the follow-up time '{duration}': "
               + (f"{censored} censored, {events} the event" if len(codes) == 2 else
                  f"{censored} censored, codes {events} merged as 'any event' (follow-up ends at the first)"))
    others = [c for c in coding.ranked() if c != coding.censored]
    alternatives = [Alternative(status_reading(c), [f"its rows were followed {coding.medians[c]:.3g} (median) against "
                                                    f"{coding.medians[coding.censored]:.3g} for {censored}"],
                                round(0.4 / (n + 1), 3)) for n, c in enumerate(others)]
    alternatives.append(Alternative("classification", [f"the {len(codes)} codes as classes, ignoring the follow-up: "
                                                       "a row's class would depend on how long it was followed"],
                                    0.1))
    # survival given, the code read as censored is still a guess unless it is 0 (every reader's) and
    # the follow-up does not speak against it
    sure = given and coding.censored == 0 and not coding.uncertain
    outcome.inference = Inference(
        InferenceKind.TASK, "survival", Confidence.GIVEN if sure else Confidence.LOW,
        [reading, *coding.evidence], [] if sure else alternatives,
        details={"event_codes": [code_text(c) for c in codes], "censored": censored,
                 "events": [code_text(c) for c in coding.events], "competing": "any event",
                 "follow_up_medians": {code_text(c): m for c, m in coding.medians.items()},
                 "censoring_stands_out": coding.stands_out, "censoring_uncertain": coding.uncertain})
    return outcome


def _found_periods(df, profiles, s: pd.Series, target: str, found: PersonPeriods) -> Outcome | None:
    """A 0/1 target on the person-period rows ``found`` (see :mod:`.periods`): survival until each
    entity's last period, found from the data's structure alone, so asked (low confidence) with
    classification of the rows as the alternative."""
    event = event_indicator(s)
    if event is None:
        return None
    reason = f"survival over person-period rows: each '{found.id}' followed until its last '{found.period}'"
    outcome = _survival(df, profiles, target, found.period, event, reason)
    outcome.periods = found
    outcome.inference = Inference(
        InferenceKind.TASK, "survival", Confidence.LOW,
        [f"'{target}' holds event codes {event[1]} and the {found.reason}: discrete-time survival, each row the "
         f"period ({found.period}-1, {found.period}], modelled as one row per '{found.id}' followed until its last"],
        [Alternative("classification", [f"'{target}' as classes with each row a unit: the periods of one "
                                         f"'{found.id}' would count as many subjects, and a row's class would say "
                                         "whether it is the last"], 0.3)],
        details={"event_codes": event[1], "id": found.id, "period": found.period, "person_period": True})
    outcome.duration_inference = Inference(
        InferenceKind.DURATION, found.period, Confidence.LOW,
        [f"each '{found.id}' is followed until its last '{found.period}' (from the data's layout)"])
    return outcome


def _given_periods(df, profiles, s: pd.Series, target: str, layout: PersonPeriods) -> Outcome | None:
    """Survival given with no time, on the person-period rows ``layout`` (even a weak one: the user
    said the rows are survival, the layout says how): followed until each entity's last period."""
    found = _found_periods(df, profiles, s, target, layout)
    if found is None or found.inference is None or found.duration_inference is None:
        return None
    found.inference.confidence, found.inference.alternatives = Confidence.GIVEN, []
    found.duration_inference.confidence = Confidence.HIGH
    return found


def _found_intervals(df, profiles, s: pd.Series, target: str) -> Outcome | None:
    """Event codes at the end of chained (start, stop] intervals of an entity, with no column
    named as a follow-up time: survival with time-varying covariates, found from the data's
    structure alone, so asked (low confidence) with classification as the alternative."""
    event = event_indicator(s)
    found = find_intervals(df, profiles, {target}) if event is not None else None
    if event is None or found is None:
        return None
    reason = f"survival over (start, stop] intervals: event codes {target!r} at the end of each interval"
    outcome = _survival(df, profiles, target, found.stop, event, reason)
    outcome.start = found.start
    outcome.inference = Inference(
        InferenceKind.TASK, "survival", Confidence.LOW,
        [f"'{target}' holds event codes {event[1]} and the {found.reason}: survival with time-varying "
         "covariates (each interval's values in force until its end)"],
        [Alternative("classification", [f"'{target}' as classes with each row a unit: the rows of one "
                                         f"'{found.id}' would count as many subjects, and an interval's "
                                         "length would decide its class"], 0.3)],
        details={"event_codes": event[1], "start": found.start, "stop": found.stop, "id": found.id})
    outcome.duration_inference = Inference(
        InferenceKind.DURATION, found.stop, Confidence.LOW,
        [f"'{found.stop}' ends each interval ('{found.start}', '{found.stop}'] (from the data; no column is "
         "named as a follow-up time)"])
    return outcome


def _multistate(df, profiles, s: pd.Series, target: str, task: str | None, time: str | None,
                layout: dict) -> Outcome:
    """Survival on multi-state rows (see :mod:`.multistate`): asked whatever was given, the rows
    as they are being no valid survival data; the readings are the task card's."""
    stop = time if time is not None else layout["stop"]
    event = event_indicator(s)
    assert event is not None  # a 0/1 status: find_multistate read it
    outcome = _survival(df, profiles, target, stop, event, f"survival on multi-state rows: {layout['reason'].removeprefix('multi-state rows: ')}")
    outcome.transitions = layout
    initial, out_of = layout["initial"], ", ".join(map(str, layout["out_of_initial"]))
    outcome.inference = Inference(
        InferenceKind.TASK, "survival", Confidence.LOW,
        [outcome.reason,
         f"fitted as they are, each row would count from 0 and each '{layout['id']}' once per possible transition, "
         f"with '{layout['from']}', '{layout['to']}' and '{layout['start']}' as features: not a valid survival model",
         f"readings: the time in state {initial} until the first transition out of it, whichever ({out_of}: one row "
         f"per '{layout['id']}'); the time until one of them, the others censoring; or the rows with their start "
         "for a multi-state model"],
        details={"event_codes": event[1], "multistate": layout})
    outcome.duration_inference = Inference(
        InferenceKind.DURATION, stop, Confidence.LOW,
        [f"'{stop}' ends the time in each state ('{layout['start']}', '{stop}']: counted from '{layout['start']}'"])
    return outcome


def _survival(df, profiles, target: str, time: str, event, reason: str) -> Outcome:
    ind, ev_values = event
    dur = numeric_values(df[time], profiles[time])
    valid = ~np.isnan(ind) & ~np.isnan(dur)
    return Outcome("survival", target, np.nan_to_num(ind).astype(np.int64), valid, [0, 1], dur, time,
                   ev_values, reason)


def _duration_inference(time: str, candidates: list[str], given: bool) -> Inference:
    """The survival time: given, the only candidate (high), or one of several (low: asked)."""
    if given:
        return Inference(InferenceKind.DURATION, time, Confidence.GIVEN, [f"'{time}' given as the duration"])
    others = [c for c in candidates if c != time]
    if not others:
        return Inference(InferenceKind.DURATION, time, Confidence.HIGH,
                         [f"'{time}' is the only column named and behaving as a follow-up time"])
    named = [c for c in candidates if FOLLOW_UP_NAME.search(c)]
    if named == [time]:  # the one named as the end of follow-up (futime next to a time to progression)
        return Inference(InferenceKind.DURATION, time, Confidence.HIGH,
                         [f"'{time}' is the one time named as the follow-up (until the last contact or the event)"],
                         [Alternative(c, [f"'{c}' is a time to another event"], 0.2) for c in others])
    return Inference(
        InferenceKind.DURATION, time, Confidence.LOW,
        [f"'{time}' is one of {len(candidates)} columns named and behaving as a follow-up time; chosen as "
         "the overall follow-up (named so, or at least as long as the others)"],
        [Alternative(c, [f"'{c}' is also named and behaves as a time to an event"], 0.5) for c in others])


def _regression(values: np.ndarray | None, target: str, task: str | None, distinct: int,
                quantity: str | None, score: str | None) -> Outcome:
    if values is None:
        raise ValueError(f"regression target {target!r} is not numeric")
    valid = ~np.isnan(values)
    reason = ("regression (given)" if task == TaskKind.REGRESSION
              else f"regression: numeric target, {quantity}" if quantity
              else f"regression: {score}" if score
              else f"regression: numeric target with {distinct} distinct values")
    outcome = Outcome("regression", target, np.nan_to_num(values), valid, reason=reason)
    if task == TaskKind.REGRESSION:
        confidence, alternatives = Confidence.GIVEN, []
    elif score:
        # an ordered score is a regression by default, but classes are a fair reading too: asked
        confidence = Confidence.LOW
        alternatives = [Alternative("classification", [f"{distinct} classes, one per value, unordered "
                                                       "(needs enough rows in every class)"], 0.4)]
    else:
        confidence, alternatives = Confidence.HIGH, []
    outcome.inference = Inference(InferenceKind.TASK, "regression", confidence, [reason], alternatives,
                                  details={"distinct_values": distinct})
    return outcome


def _ordered_levels(s: pd.Series, target: str, task: str | None, levels: list[str]) -> Outcome:
    """Regression on the ranks of labels that read as ordered levels (see :mod:`.level_order`):
    recommended, with classes the alternative, and asked unless the user said regression."""
    ranks = {label.strip().lower(): i for i, label in enumerate(levels, 1)}
    text = s.astype(str).str.strip().str.lower().where(s.notna())
    y = text.map(ranks).astype(float).to_numpy()
    valid = ~np.isnan(y)
    order = " < ".join(levels)
    reason = f"regression on ordered levels: '{target}' reads as an ordered score ({order}), ranked 1 to {len(levels)}"
    outcome = Outcome("regression", target, np.nan_to_num(y), valid, reason=reason, levels=list(levels))
    given = task == TaskKind.REGRESSION
    outcome.inference = Inference(
        InferenceKind.TASK, "regression", Confidence.GIVEN if given else Confidence.LOW,
        [reason, f"a regression on the ranks ({order}) keeps the levels' order, which a classifier throws away; "
                 "the ranks are written in a cell and replayed on new data"],
        [] if given else [Alternative("classification", [f"{len(levels)} unordered classes ({', '.join(levels)}): "
                                                          "the order thrown away"], 0.4)],
        details={"distinct_values": len(levels), "levels": list(levels)})
    return outcome


ORDER_SAMPLE = 5000  # rows the order of a few codes is read on
MAX_ORDER_COLUMNS = 200
MIN_TREND = 0.8  # of a column's differences between the codes that follow their order
# a visit's time or number: outcomes drift over visits whether their codes are ordered or not (a
# housing status moves towards independence over months), so a trend over it says nothing of the order
VISIT_NAME = re.compile(r"(^|[_\W])(time|day|week|month|year|visit|wave|occasion|period|hour|minute|tag|dia|jour|"
                        r"semaine|mois|jahr|ano|anno|monat|woche)s?_?\d*([_\W]|$)|^(t|rownames|row_?names)$",
                        re.IGNORECASE)


def ordered_codes(df: pd.DataFrame, profiles: dict[str, ColumnProfile], values: np.ndarray, name: str) -> str | None:
    """Why 3 or 4 whole-number codes (1 < 2 < 3) are an ordered score, or None.

    The codes run unbroken, are not named as classes, and the data follow their order: the
    numeric column that differs most between the codes rises (or falls) with them, its means by
    code in order and most of its differences between codes along the order (a linear trend of
    the codes explains at least 80% of them). Codes of unordered classes seldom line up so. Columns
    named as a visit's time are not read: an outcome drifts over visits whatever its codes mean."""
    present = ~np.isnan(values)
    distinct = np.unique(values[present])
    k = len(distinct)
    if not 3 <= k < SCORE_MIN_LEVELS or distinct[-1] - distinct[0] + 1 != k:
        return None
    if NOMINAL_NAME.search(name) and not GENERIC_RESPONSE.match(name):
        return None
    rows = np.flatnonzero(present)
    if len(rows) > ORDER_SAMPLE:
        rows = np.sort(np.random.default_rng(0).choice(rows, ORDER_SAMPLE, replace=False))
    codes = values[rows]
    best: tuple[float, str, float, np.ndarray] | None = None
    numeric = [c for c, p in profiles.items() if c != name and p.kind == "numeric" and c in df.columns
               and not VISIT_NAME.search(str(c)) and not DURATION_NAME.search(str(c))]
    for column in numeric[:MAX_ORDER_COLUMNS]:
        x = numeric_values(df[column], profiles[column])[rows]
        ok = ~np.isnan(x)
        if ok.sum() < 20 or len(np.unique(codes[ok])) < k or np.var(x[ok]) == 0:
            continue
        xs, cs = x[ok], codes[ok]
        means = np.array([xs[cs == c].mean() for c in distinct])
        counts = np.array([(cs == c).sum() for c in distinct])
        eta2 = float((counts * (means - xs.mean()) ** 2).sum() / (len(xs) * np.var(xs)))
        if best is None or eta2 > best[0]:
            trend = float(np.corrcoef(xs, cs)[0, 1] ** 2 / eta2) if eta2 > 0 else 0.0
            best = (eta2, column, trend, means)
    if best is None or best[0] < 0.01:
        return None
    eta2, column, trend, means = best
    steps = np.diff(means)
    if not (np.all(steps > 0) or np.all(steps < 0)) or trend < MIN_TREND:
        return None
    way = "rises" if steps[0] > 0 else "falls"
    return (f"an ordered score: {k} codes from {distinct[0]:g} to {distinct[-1]:g}, and '{column}', the column that "
            f"differs most between them, {way} with them in order ({trend:.0%} of its differences follow the "
            "order; regression keeps it; asked)")


MIN_CLASS_ROWS = 2  # a class with fewer rows cannot be on both sides of a split


def _classification(s: pd.Series, target: str, task: str | None, distinct: int, integer_codes: bool) -> Outcome:
    codes, classes = _class_codes(s)
    valid = codes >= 0
    reason = (f"classification (given): {distinct} classes" if task == TaskKind.CLASSIFICATION
              else f"classification: target has {distinct} classes")
    outcome = Outcome("classification", target, codes, valid, classes, reason=reason)
    counts = np.bincount(codes[valid], minlength=len(classes)) if len(classes) else np.array([], int)
    tiny = [classes[i] for i in np.flatnonzero(counts < MIN_CLASS_ROWS)]
    evidence = [reason]
    alternatives: list[Alternative] = []
    ordered = None if integer_codes else level_order(s, classes)
    if task == TaskKind.CLASSIFICATION:
        confidence = Confidence.GIVEN
    elif ordered is not None:
        # levels in an order (no < perhaps < yes): classes throw it away; the expert says which reading
        confidence = Confidence.LOW
        evidence.append(f"the classes read as ordered levels ({' < '.join(ordered)}): a classifier ignores their "
                        "order; confirm classes, or recode the levels as a score")
    elif distinct == 2 or not tiny and (not integer_codes or NOMINAL_NAME.search(target)):
        # yes/no, named classes, or codes under a name that says classes, each seen often enough
        confidence = Confidence.HIGH
        evidence.append("two values" if distinct == 2 else "named classes" if not integer_codes
                        else f"whole-number codes under a name that says classes ('{target}')")
    else:
        confidence = Confidence.LOW
        if integer_codes:
            evidence.append(f"{distinct} whole-number codes: classes, or an ordered score?")
            alternatives.append(Alternative("regression", ["the codes in order, as a score"], 0.4))
    if tiny:
        evidence.append(f"{counted(len(tiny), 'class', 'classes')} with fewer than {MIN_CLASS_ROWS} rows ({', '.join(map(str, tiny[:5]))}): "
                        "they cannot be cross-validated; merge or drop them")
    outcome.inference = Inference(InferenceKind.TASK, "classification", confidence, evidence, alternatives,
                                  details={"classes": len(classes), "classes_below_min_rows": [str(t) for t in tiny],
                                           # words in an order can be ranked (kt.rank_levels); other words cannot
                                           "labels": "codes" if integer_codes else "ordered" if ordered else "words"})
    return outcome


SCORE_MIN_LEVELS = 5  # a 5-point Likert item, 0-10 ratings
NOMINAL_NAME = re.compile(r"class|label|type|categor|digit|cluster|group|species|kind|code|cat$|^y$|target",
                          re.IGNORECASE)
# R's bare response name: a few codes under it are classes, but it names scores as often (a five-level
# self-assessment), so it does not veto an ordered score
GENERIC_RESPONSE = re.compile(r"^y$", re.IGNORECASE)


def ordered_score(values: np.ndarray, name: str) -> str | None:
    """Why an integer target is an ordered score (a Likert item, a 0-10 rating), or None.

    At least five whole numbers in an unbroken run (at most one value unused), not named as
    classes: the values are ordered, so a classifier that treats them as unrelated throws the
    order away and fails on the sparse extremes (a class of a single row)."""
    v = values[~np.isnan(values)]
    distinct = np.unique(v)
    k = len(distinct)
    if not SCORE_MIN_LEVELS <= k <= MAX_CLASSES or NOMINAL_NAME.search(name) and not GENERIC_RESPONSE.match(name):
        return None
    span = distinct[-1] - distinct[0] + 1
    if span > k + 1:
        return None
    return (f"an ordered score: {k} whole numbers from {distinct[0]:g} to {distinct[-1]:g} in an unbroken run "
            "(regression keeps their order; asked)")
