"""Dates out of range: placeholder dates and dates no record can have.

Systems fill a date they do not know with a placeholder: the start of a calendar (1900-01-01,
Excel's 1899-12-30, the Unix epoch 1970-01-01) or its far end (2099-12-31, 9999-12-31). Read as
dates they become real-looking extremes (a patient born in 1900, an admission in 1970), and any
duration computed from them is nonsense. A placeholder is flagged only where it stands out from
the column's other dates (many rows on one placeholder day); a date before 1850 or after the day
of the diagnosis is flagged when few of the column's dates are like it (a column of future dates
is a schedule, not an error).
"""

from __future__ import annotations

import datetime as dt
import re

import numpy as np

from kernel_tools.diagnosis.columns import numeric_values
from kernel_tools.diagnosis.options import call, keep
from kernel_tools.diagnosis.registry import Context, KindData, detector
from kernel_tools.findings import Finding, Option
from kernel_tools.plurals import counted
from kernel_tools.vocabulary import Basis

# numbers that count days: a spreadsheet's serial dates, SAS's and Stata's dates, Unix days
DAY_ORIGINS = {"1899-12-30": "Excel's serial dates", "1960-01-01": "SAS's and Stata's dates",
               "1970-01-01": "days since 1970"}
DATE_NAME = re.compile(r"date|(^|[_\W])(dt|dob|doa|dod)([_\W]|$)", re.IGNORECASE)
PLACEHOLDERS = ("1800-01-01", "1899-12-30", "1899-12-31", "1900-01-01", "1901-01-01", "1970-01-01",
                "2099-12-31", "2999-12-31", "3000-01-01")
EARLIEST = "1850-01-01"
SPIKE = 5.0  # a placeholder day holds this many times the rows of an ordinary day of the column
MAX_SHARE = 0.05  # out-of-range dates are an error only while they are this rare
MAX_LISTED = 20  # distinct bad dates an option can list as missing-value codes


def _days(iso: str) -> float:
    return float((np.datetime64(iso, "D") - np.datetime64("1970-01-01", "D")).astype(int))


def _iso(days: float) -> str:
    return str(np.datetime64("1970-01-01", "D") + np.timedelta64(int(days), "D"))


def today_days() -> float:
    """Today, in days since 1970 (the unit these checks compare dates in)."""
    return float((np.datetime64(dt.date.today(), "D") - np.datetime64("1970-01-01", "D")).astype(int))


def day_number_origin(name: str, values: np.ndarray, today: float) -> str | None:
    """The origin a column named as a date counts its days from, when exactly one origin puts
    every value between 1900 and a year from ``today`` (days since 1970); else None."""
    present = values[np.isfinite(values)]
    if not DATE_NAME.search(name) or present.size < 5 or np.ptp(present) == 0:
        return None
    low, high = float(present.min()), float(present.max())
    fits = [origin for origin in DAY_ORIGINS
            if low + _days(origin) >= _days("1900-01-01") and high + _days(origin) <= today + 366]
    return fits[0] if len(fits) == 1 else None


def out_of_range_days(days: np.ndarray, today: float) -> dict[str, list[float]]:
    """The bad days of one column (days since 1970, NaN for missing), by reason."""
    present = days[~np.isnan(days)]
    if present.size < 10:
        return {}
    whole = np.floor(present)
    values, counts = np.unique(whole, return_counts=True)
    ordinary = float(np.median(counts))
    known = {_days(p) for p in PLACEHOLDERS}  # once: parsed per distinct date it took 0.7 s at 100k rows
    placeholders = [v for v, n in zip(values, counts) if v in known and n >= 3 and n >= SPIKE * ordinary]
    early = whole < _days(EARLIEST)
    late = whole > today
    bad: dict[str, list[float]] = {}
    if placeholders:
        bad["placeholder"] = placeholders
    for reason, mask in (("before 1850", early), ("after today", late)):
        share = mask.mean()
        if 0 < share <= MAX_SHARE:
            bad[reason] = [v for v in np.unique(whole[mask]) if v not in placeholders]
    return {k: v for k, v in bad.items() if v}


@detector("dates out of range", order=65, finds={"date_out_of_range": KindData(chart=None, basis=Basis.SAMPLE)})
def find_dates_out_of_range(ctx: Context) -> list[Finding]:
    today = today_days()
    findings = []
    for c, prof in ctx.profiles.items():
        if c in ctx.structural or not (prof.kind == "datetime" or prof.parsed_as == "datetime"):
            continue
        days = numeric_values(ctx.df[c], prof)
        bad = out_of_range_days(days, today)
        if not bad:
            continue
        dates = sorted({d for values in bad.values() for d in values})
        rows = int(np.isin(np.floor(days), dates).sum())
        listed = ", ".join(_iso(d) for d in dates[:5]) + (" ..." if len(dates) > 5 else "")
        why = " and ".join(f"{reason} ({len(values)} date{'s' if len(values) > 1 else ''})"
                           for reason, values in bad.items())
        options = [keep("Keep the dates as they are.",
                        "a placeholder reads as a real, extreme date: ages, durations and trends "
                        "computed from it are wrong", recommended=len(dates) > MAX_LISTED)]
        if len(dates) <= MAX_LISTED:
            options.insert(0, Option(
                "fix_dtypes", "Read them as missing",
                f"Replace {listed} in '{c}' by missing values.",
                "a date that was real but odd is lost (kept as missing)", True,
                call("fix_dtypes", columns=[c], na_tokens=[], sentinels={c: [_iso(d) for d in dates]})))
        rest = days[~np.isnan(days) & ~np.isin(np.floor(days), dates)]
        findings.append(Finding(
            "date_out_of_range", [c], "warning",
            f"'{c}' has {counted(rows, 'row')} on dates no record can have: {why}: {listed}.",
            {"rows": rows, "dates": [_iso(d) for d in dates[:MAX_LISTED]],
             "reasons": {k: [_iso(d) for d in v[:MAX_LISTED]] for k, v in bad.items()},
             "range_of_the_rest": [_iso(rest.min()), _iso(rest.max())] if rest.size else None},
            options,
            None,
        ))
    return findings
