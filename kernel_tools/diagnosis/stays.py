"""Hospital and ICU stays: an outcome recorded at the end of a stay, beside the stay's length.

The classic ICU table holds in-hospital death, a discharge status or ICU mortality next to the
length of the stay (``los``, ``length_of_stay``, ``icu_days``, ``days_in_hospital``). At admission,
the usual prediction index, neither is known: the stay ends when the outcome is recorded. So with
the outcome as the target, the stay's length is *at the outcome*; with the stay as the target, the
outcome recorded at its end is. Names are the only evidence (a stay's length does not look like
a leak in its values), so both are proposals an expert confirms.

The survival reading of a 0/1 status next to a follow-up time stays what :mod:`.task` says; when
that follow-up is a stay, the end-of-stay reading (classes, the stay at the outcome) is offered as
its alternative (:func:`end_of_stay_alternative`), not decided by a second rule.
"""

from __future__ import annotations

import re

from kernel_tools.inferences import Alternative
from kernel_tools.vocabulary import TaskKind, TimelineGroup

STAY_NAME = re.compile(
    r"(^|[_\W])(los|stay|stays|icu_?los|hosp_?los|hospital_?los)([_\W]|$)|length_?of_?stay|lengthofstay|"
    r"days_?(in|at)_?(the_?)?(hosp|hospital|icu|ward)|(hosp|hospital|icu|ward)_?(days|stay)",
    re.IGNORECASE)
# what is recorded when a stay ends: death or survival to discharge, the discharge status
END_OUTCOME_NAME = re.compile(
    r"died|dead|death|mort|expire|surviv|alive|vital|discharg|dispos|(^|[_\W])(outcome|status)([_\W]|$)",
    re.IGNORECASE)
# when a stay ends: a discharge or ICU-out time, known at the end of the stay like its length
STAY_END_NAME = re.compile(
    r"disch\w*?_?(time|date|dt|day)|(^|[_\W])out_?(time|date)|(end|exit)_?of_?stay|stay_?end", re.IGNORECASE)
# a feature named as what a stay's end records (a death, its date, an expire flag, a discharge):
# a parent file's date of death joins in beside the stay's own (narrower than END_OUTCOME_NAME:
# 'status' or 'vital' name baseline features too)
RECORDED_AT_END_NAME = re.compile(r"died|dead|death|expire|discharg|(^|[_\W])dod([_\W]|$)", re.IGNORECASE)
MAX_END_CLASSES = 5  # a discharge status has a few values (home, transfer, death...), not a measure


def stay_columns(columns: list[str], profiles: dict) -> list[str]:
    """Columns named as a stay's length that hold numbers."""
    return [c for c in columns if STAY_NAME.search(c) and profiles[c].holds_numbers and profiles[c].nunique > 2]


def stay_end_times(columns: list[str], profiles: dict) -> list[str]:
    """Dates or times named as the moment a stay ends (discharge time, ICU out-time)."""
    return [c for c in columns if STAY_END_NAME.search(c)
            and (profiles[c].kind == "datetime" or profiles[c].parsed_as == "datetime")]


def recorded_at_end(columns: list[str], profiles: dict) -> list[str]:
    """A few classes or a date named as what a stay's end records (``dod``, ``expire_flag``, ``deathtime``)."""
    return [c for c in columns if RECORDED_AT_END_NAME.search(c) and not STAY_NAME.search(c) and (
        2 <= profiles[c].nunique <= MAX_END_CLASSES or profiles[c].kind == "datetime"
        or profiles[c].parsed_as == "datetime")]


def _end_outcomes(columns: list[str], profiles: dict) -> list[str]:
    return [c for c in columns if END_OUTCOME_NAME.search(c) and not STAY_NAME.search(c)
            and 2 <= profiles[c].nunique <= MAX_END_CLASSES]


def end_of_stay(outcome, features: list[str], profiles: dict) -> dict[str, tuple[TimelineGroup, str, dict]]:
    """Columns at the outcome because a stay ends with it: ``{column: (group, reason, numbers)}``.
    With an end-of-stay outcome as the target (a few classes, named as death, survival or discharge),
    the stay's length; with a stay's length as the target, the outcome recorded at its end."""
    target = outcome.target if outcome is not None else None
    if target is None or target not in profiles:
        return {}
    out: dict[str, tuple[TimelineGroup, str, dict]] = {}
    if outcome.kind == TaskKind.CLASSIFICATION and _end_outcomes([target], profiles):
        for c in stay_end_times(features, profiles):
            out[c] = (TimelineGroup.AT_OR_AFTER_OUTCOME,
                      f"'{c}' is named as the time a stay ends, and '{target}' as what is recorded when the stay "
                      "ends: both are known at discharge, not at admission", {"stay_end": c, "end_outcome": target})
        for c in stay_columns(features, profiles):
            out[c] = (TimelineGroup.AT_OR_AFTER_OUTCOME,
                      f"'{c}' is named as the length of a stay, and '{target}' as what is recorded when the stay "
                      "ends (death, survival to discharge, a discharge status): the stay's length is known at "
                      "discharge, with the outcome, not at admission", {"stay": c, "end_outcome": target})
        for c in recorded_at_end(features, profiles):
            out.setdefault(c, (TimelineGroup.AT_OR_AFTER_OUTCOME,
                               f"'{c}' is named as what a stay's end records (a death, its date, a discharge), "
                               f"like '{target}': known then, not at admission", {"recorded_at_end": c,
                                                                                   "end_outcome": target}))
    elif outcome.kind == TaskKind.REGRESSION and stay_columns([target], profiles):
        for c in _end_outcomes(features, profiles) + stay_end_times(features, profiles):
            out[c] = (TimelineGroup.AT_OR_AFTER_OUTCOME,
                      f"'{c}' is named as what is recorded when a stay ends (death, survival to discharge, a "
                      f"discharge status), and '{target}' as the stay's length: known at discharge, with the "
                      "outcome, not at admission", {"stay": target, "end_outcome": c})
    return out


def end_of_stay_alternative(target: str, duration: str) -> Alternative | None:
    """The end-of-stay reading of a status next to a follow-up named as a stay ('died' beside
    'icu_days'): classes recorded at discharge, the stay at the outcome; None for another follow-up."""
    if not STAY_NAME.search(duration) or not END_OUTCOME_NAME.search(target):
        return None
    return Alternative("classification", [
        f"'{target}' as the outcome recorded at the end of the stay (in-hospital death, survival to discharge), "
        f"predicted at admission: '{duration}' is then known only at the outcome, not a feature"], 0.4)

