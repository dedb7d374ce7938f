"""Repeated measurements in wide format: one column per time point (``bdi.pre``, ``bdi.2m``,
``bdi.4m``; ``wt71``, ``wt82``; ``hba1c_v1``, ``hba1c_v2``), the time before the measure too
(``preOp_pain``, ``pacu30min_cough``, ``postOp4hour_cough``, ``pod1am_cough``: post-operative day 1).

A cohort exported one row per person keeps each follow-up wave as its own column. When the
target is one of those waves, the waves after it are measured after the outcome: as features
they leak. The name gives only the order; the data must show the columns are one measurement
(same scale, moving together with the target) before a later wave counts as follow-up.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
from scipy.stats import spearmanr

from kernel_tools.diagnosis.columns import ColumnProfile, numeric_values

# days in one unit; ordinal units (a visit, a wave) compare only with themselves
# a month is a twelfth of a year exactly: "12m" and "1y" name one time
DAYS = {"min": 1 / 1440, "h": 1 / 24, "d": 1.0, "w": 7.0, "m": 365.25 / 12, "y": 365.25}
UNIT_WORDS = {
    "min": "min|mins|minute|minutes", "h": "h|hr|hrs|hour|hours", "d": "d|day|days", "w": "w|wk|wks|week|weeks",
    "m": "m|mo|mos|mon|month|months", "y": "y|yr|yrs|year|years",
}
_ANY_UNIT = "|".join(UNIT_WORDS.values())
START = re.compile(r"^(?P<stem>.*?[A-Za-z])[._ -]?(?P<tok>pre|baseline|base|bl)$", re.IGNORECASE)
AFTER = re.compile(r"^(?P<stem>.*?[A-Za-z])[._ -]?(?P<tok>post)$", re.IGNORECASE)
AMOUNT = re.compile(rf"^(?P<stem>.*?[A-Za-z])[._ -]?(?P<num>\d+)\s?(?P<unit>{_ANY_UNIT})$", re.IGNORECASE)
UNIT_AMOUNT = re.compile(rf"^(?P<stem>.*?[A-Za-z])[._ -](?P<unit>{_ANY_UNIT})[._ -]?(?P<num>\d+)$", re.IGNORECASE)
ORDINAL = re.compile(r"^(?P<stem>.*?[A-Za-z])[._ -](?P<unit>t|v|visit|wave|round|fu|followup)[._ -]?(?P<num>\d+)$",
                     re.IGNORECASE)
YEAR = re.compile(r"^(?P<stem>.*?[A-Za-z])[._ -]?(?P<num>(19|20)\d\d|\d\d)$")
# a bare time word and its number (day1 ... day7, week_2): the word is the series
BARE = re.compile(r"^(?P<unit>hours?|days?|weeks?|months?|years?)[._ -]?(?P<num>\d{1,3})$", re.IGNORECASE)
# the time first (a form's section, a REDCap event): 'preOp_', 'pacu30min_' (a place, then the time), 'postOp4hour_',
# 'pod1am_' (post-operative day 1, morning), 'day3_', 'week12_'; the rest of the name is the measure
_MEASURE = r"[._ -]+(?P<stem>[^._ -].*[A-Za-z].*|[A-Za-z])$"
FIRST_START = re.compile(rf"^(?P<tok>pre[._ -]?op|pre|baseline|base|bl){_MEASURE}", re.IGNORECASE)
FIRST_AMOUNT = re.compile(rf"^(?P<tok>[A-Za-z]*?(?P<num>\d+)\s?(?P<unit>{_ANY_UNIT})(?P<half>am|pm)?){_MEASURE}",
                          re.IGNORECASE)
FIRST_UNIT_AMOUNT = re.compile(
    rf"^(?P<tok>[A-Za-z]*?(?P<unit>pod|day|week|wk|month|mo|year|yr|hour|hr)(?P<num>\d+)(?P<half>am|pm)?){_MEASURE}",
    re.IGNORECASE)
# a visit or wave first ('V3.GE', 'visit2_sbp', 'fu1_weight'); not 't1_' (an MRI sequence as often as a time)
FIRST_ORDINAL = re.compile(rf"^(?P<tok>(?P<unit>v|visit|wave|round|fu|followup)[._ -]?(?P<num>\d+)){_MEASURE}",
                           re.IGNORECASE)
ONE_DIGIT = re.compile(r"^(?P<stem>.*?[A-Za-z])[._ -]?\d$")
# a bare number in a sequence ('y1' ... 'y4', 'brood1', 'post.test.2', 'score_3'): an order, no unit; read
# only beside a target of the same stem (items of a scale are numbered too, and have no time)
SEQUENCE = re.compile(r"^(?P<stem>.*?[A-Za-z])[._ -]?(?P<num>[1-9])$")
YEARS_SPAN = 30  # years of one series: emp10 ... emp52 (weeks counted) would span a century

MAX_MONTHS = 120  # "800m" next to "200m" is a distance, not months
SAME_MEASURE = 0.3  # |Spearman| with the target: the columns move together
SCALE_RATIO = 5.0  # medians of |values| within this factor: one measurement, one scale
MIN_ROWS = 20


@dataclass(frozen=True)
class Wave:
    """One column of a wide-format series: its ``stem`` and its time (``unit``, ``at``)."""

    column: str
    stem: str
    unit: str  # "days", "year", or an ordinal unit ("visit", "t")
    at: float
    token: str

    def comparable(self, other: Wave) -> bool:
        # a baseline (at 0 days) comes before any later time, whatever that time's unit
        return self.unit == other.unit or 0.0 in (self.at, other.at) and "days" in (self.unit, other.unit)


def parse_wave(column: str, sequence: bool = False) -> Wave | None:
    """The series and time point a column name stands for, or None (``sequence``: a bare number,
    'y3', is a time point in the order 'sequence')."""
    name = column.strip()
    if m := START.match(name):
        return Wave(column, _stem(m["stem"]), "days", 0.0, m["tok"])
    if m := AFTER.match(name):
        return Wave(column, _stem(m["stem"]), "days", float("inf"), m["tok"])
    for pattern in (AMOUNT, UNIT_AMOUNT):
        if m := pattern.match(name):
            unit = next(u for u, words in UNIT_WORDS.items() if re.fullmatch(words, m["unit"], re.IGNORECASE))
            if unit == "m" and int(m["num"]) > MAX_MONTHS:
                return None
            return Wave(column, _stem(m["stem"]), "days", int(m["num"]) * DAYS[unit], _token(name, m))
    if m := BARE.match(name):
        unit = m["unit"].lower()[0]
        return Wave(column, m["unit"].lower().rstrip("s"), "days", int(m["num"]) * DAYS[unit], name)
    if m := ORDINAL.match(name):
        unit = m["unit"].lower()
        return Wave(column, _stem(m["stem"]), "fu" if unit == "followup" else unit, float(m["num"]), _token(name, m))
    if m := YEAR.match(name):
        year = int(m["num"])
        if year < 100:  # two digits: 71 and 82 are 1971 and 1982, 05 is 2005
            year += 2000 if year < 30 else 1900
        return Wave(column, _stem(m["stem"]), "year", float(year), m["num"])
    wave = _time_first(name, column)
    if wave is None and sequence and (m := SEQUENCE.match(name)):
        return Wave(column, _stem(m["stem"]), "sequence", float(m["num"]), m["num"])
    return wave


def _time_first(name: str, column: str) -> Wave | None:
    """The wave of a name that gives its time before the measure (``pod1am_cough``), or None."""
    if m := FIRST_START.match(name):
        return Wave(column, _stem(m["stem"]), "days", 0.0, m["tok"])
    for pattern in (FIRST_AMOUNT, FIRST_UNIT_AMOUNT):
        if m := pattern.match(name):
            word = m["unit"].lower()
            unit = "d" if word == "pod" else next(
                u for u, words in UNIT_WORDS.items() if re.fullmatch(words, word, re.IGNORECASE))
            if unit == "m" and int(m["num"]) > MAX_MONTHS:
                return None
            if unit == "y" and 1900 <= int(m["num"]) <= 2100:  # 'year2010_income': a calendar year
                return Wave(column, _stem(m["stem"]), "year", float(m["num"]), m["tok"])
            # the afternoon of a day comes after its morning
            part = 0.5 if (m["half"] or "").lower() == "pm" and unit == "d" else 0.0
            return Wave(column, _stem(m["stem"]), "days", (int(m["num"]) + part) * DAYS[unit], m["tok"])
    if m := FIRST_ORDINAL.match(name):
        unit = m["unit"].lower()
        return Wave(column, _stem(m["stem"]), "fu" if unit == "followup" else unit, float(m["num"]), m["tok"])
    return None


def named_series(columns: list[str]) -> list[list[Wave]]:
    """Columns sharing a stem whose names carry comparable times (``re74``, ``re75``, ``re78``;
    ``wt_1m``, ``wt_6m``; ``day1`` ... ``day7``), each series in time order. Two-digit endings
    are years only when no column of the stem ends in one digit and they span a few decades
    (``emp1`` ... ``emp52`` count weeks)."""
    stems: dict[str, list[Wave]] = {}
    for c in columns:
        if (wave := parse_wave(c)) is not None:
            stems.setdefault(wave.stem, []).append(wave)
    out = []
    for stem, waves in stems.items():
        times = {w.at for w in waves}
        if len(waves) < 2 or len(times) < len(waves) or not all(a.comparable(b) for a in waves for b in waves):
            continue
        if waves[0].unit == "year" and (max(times) - min(times) > YEARS_SPAN or any(
                (m := ONE_DIGIT.match(c)) is not None and _stem(m["stem"]) == stem for c in columns)):
            continue
        out.append(sorted(waves, key=lambda w: w.at))
    return out


def _token(name: str, m: re.Match) -> str:
    return name[m.end("stem"):].lstrip("._ -")


def _stem(text: str) -> str:
    return re.sub(r"[._ -]+$", "", text).lower()


def later_waves(frame, profiles: dict[str, ColumnProfile], target: str, features: list[str]) -> dict[str, dict]:
    """The features that are the target's own measurement taken after it: for each, the
    evidence (the two time points, the rank correlation, the scales)."""
    own = parse_wave(target, sequence=True)
    if own is None or target not in frame.columns or target not in profiles:
        return {}
    y = numeric_values(frame[target], profiles[target])
    out = {}
    for c in features:
        wave = parse_wave(c, sequence=True)
        if wave is None or wave.stem != own.stem or not wave.comparable(own) or wave.at <= own.at:
            continue
        if not (profiles[c].holds_numbers or profiles[c].kind == "bool"):
            continue
        x = numeric_values(frame[c], profiles[c])
        support = same_measurement(x, y)
        if support is not None:
            out[c] = {"target_wave": own.token, "wave": wave.token, "numbered_only": wave.unit == "sequence",
                      **support}
    return out


def same_measurement(x: np.ndarray, y: np.ndarray) -> dict | None:
    """Evidence that ``x`` and ``y`` are one measurement (rank correlation and scale), or None."""
    ok = np.isfinite(x) & np.isfinite(y)
    if ok.sum() < MIN_ROWS or np.ptp(x[ok]) == 0 or np.ptp(y[ok]) == 0:
        return None
    rho = float(spearmanr(x[ok], y[ok]).statistic)
    scale_x, scale_y = float(np.median(np.abs(x[ok]))), float(np.median(np.abs(y[ok])))
    low, high = sorted((scale_x, scale_y))
    same_scale = high == 0 or (low > 0 and high / low <= SCALE_RATIO)
    if abs(rho) < SAME_MEASURE or not same_scale:
        return None
    return {"spearman": round(rho, 4), "median_abs": round(scale_x, 4), "target_median_abs": round(scale_y, 4)}


def one_hot_levels(columns: list[np.ndarray]) -> bool:
    """Whether numbered 0/1 columns are the levels of one category (``educ1``, ``educ2``, ``educ3``
    dummies of ``educ``): never two of them 1 on a row where all are present. A yes/no measure taken
    again is often 1 at both times; levels of one category exclude each other, so they are known
    together and are not waves (their ranks move against each other, which reads as one scale)."""
    stacked = np.column_stack(columns)
    rows = stacked[np.isfinite(stacked).all(axis=1)]
    if len(rows) < MIN_ROWS or not np.isin(rows, (0.0, 1.0)).all():
        return False
    return bool((rows.sum(axis=1) <= 1).all() and (rows == 1).any(axis=0).all())
