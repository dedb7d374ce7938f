"""Times of events during follow-up that the bound tests of :mod:`.timing` miss.

An event during follow-up (a transplant, a response, a relapse, a recovery) is exported in two
ways the "never exceeds the duration and reaches it" test does not see when the event comes early
or to nearly everyone:

- **a time present only where the event happened** (no indicator: "time to transplant", missing
  for the patients never transplanted): its present values lie at or below the row's own
  follow-up time on >= 99% of rows, far more often than chance pairing of values and follow-up
  times would give (each value against every follow-up time; binomial tail), and on a few rows
  reach half of it (events also come late; a value far below every follow-up is no time);
- **a (time, indicator) pair**, whatever its names: the time never exceeds the follow-up, and the
  indicator says where it ran to the end of follow-up (censored: equal to it) and where it ended
  earlier (the event) — so plainly that a chance labelling would not (hypergeometric tail).

Both are name-free; a time word in the name is only said in the evidence. A third kind needs the
name: **a time present on most rows that never exceeds its row's follow-up** (a response that
comes early for most patients, missing only where there was none) — chance pairing also puts most
early values below the follow-up, so the bound alone is weak; named as a time, on the follow-up's
scale and not named as a time before entry, it is the time of an event during follow-up: decided
where chance pairing would have broken the bound (p <= 1e-6), asked where only moderately
(:func:`time_within_follow_up`).

Not a time, but as telling: **a column recorded only while a row is still followed** (employment
in each week after release, a lab of day 3 of a stay): missing exactly on the rows whose
follow-up ended sooner, present on those followed longer — the missing rows' follow-up times rank
below the present rows' in (nearly) every pair (:func:`present_while_followed`). A measurement
taken at baseline has no reason to be there only for the rows followed long; its presence alone
tells how long a row was followed.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
from scipy.stats import binom, hypergeom, norm, rankdata

from kernel_tools.diagnosis.columns import ColumnProfile, category_codes, numeric_values

MIN_ROWS = 20  # present values needed to test a time
MIN_SHARE, MAX_SHARE = 0.05, 0.95  # a time present only where the event happened is partly missing
BOUND_SHARE = 0.99  # at or below the row's own follow-up (a day's rounding: 1%) on this share
P_VALUE = 1e-6  # chance of the bound (or of the flag) under independent pairing
RAN_OUT = 0.99  # share of the censored code's rows whose time equals the follow-up
ENDED_EARLY = 0.5  # at most this share of the event code's rows equal to the follow-up
MIN_FLAG_ROWS = 5  # rows of each code of an indicator
NEAR, MIN_NEAR_SHARE = 0.5, 0.02  # a time reaches half its row's follow-up on this share (and 5 rows)
FOLLOWED_RANK = 0.98  # share of (missing, present) row pairs where the present row was followed longer
MIN_MISSING_ROWS = 10  # rows of each side (missing, present) before presence can tell anything
MODERATE_P = 1e-3  # a bound this unlikely by chance, with a time's name, is asked about
ON_SCALE = 0.05  # the upper decile of a time during follow-up reaches a twentieth of the median follow-up
# (a time in years next to a follow-up in days does not: not comparable)
SPANS = 0.5  # ...and on a tenth of rows it is at most half its row's follow-up (it counts from entry)
# a time before entry (since diagnosis, delayed entry, onset) is baseline however it compares
BEFORE_ENTRY = re.compile(r"entry|enter|start|since|onset|diag|prior|before|(^|[_\W])pre|birth|age", re.IGNORECASE)
TIME_WORD = re.compile(r"time|days?|weeks?|months?|years?|hours?|dur|wait|(^|[_\W])t([_\W\d]|$)", re.IGNORECASE)


def _at_or_below(x: np.ndarray, t: np.ndarray) -> np.ndarray:
    return x <= t * 1.01 + 1e-9


def p_words(p_value: float) -> str:
    """A p-value in words a reader takes in at a glance (no 5.5e-149)."""
    return "p < 1e-12" if p_value < 1e-12 else f"p = {p_value:.0e}"


def named_as_time(name: str) -> str:
    """Words for the evidence: whether the name carries a time word (never decisive)."""
    return f"; its name '{name}' carries a time word" if TIME_WORD.search(name) else ""


def follow_up_ranks(t: np.ndarray) -> np.ndarray:
    """``t``'s ranks among its finite values (ties averaged; nan elsewhere)."""
    out = np.full(len(t), np.nan)
    ok = np.isfinite(t)
    out[ok] = rankdata(t[ok])
    return out


def present_while_followed(present: np.ndarray, t: np.ndarray, ranks: np.ndarray | None = None) -> dict | None:
    """Evidence that a column is filled only while its row is still followed (see the module
    docstring): the rank-based share of (missing, present) row pairs in which the present row
    has the longer follow-up ``t`` (ties count half: the Mann-Whitney U over the pairs) reaches
    ``FOLLOWED_RANK``; None otherwise. ``ranks``: ``t``'s ranks among its finite values (nan
    elsewhere), computed once for a table's many columns."""
    ok = np.isfinite(t)
    ranks = follow_up_ranks(t) if ranks is None else ranks
    filled, times = present[ok], t[ok]
    n_filled, n_missing = int(filled.sum()), int((~filled).sum())
    if min(n_filled, n_missing) < MIN_MISSING_ROWS or np.ptp(times) == 0:
        return None
    u = float(ranks[ok][filled].sum()) - n_filled * (n_filled + 1) / 2
    share = u / (n_filled * n_missing)
    if share < FOLLOWED_RANK:
        return None
    n = n_filled + n_missing
    z = (u - n_filled * n_missing / 2) / np.sqrt(n_filled * n_missing * (n + 1) / 12)
    return {"rows_missing": n_missing, "share_missing": round(n_missing / len(times), 4),
            "longest_missing_follow_up": float(np.max(times[~filled])),
            "median_present_follow_up": float(np.median(times[filled])),
            "share_pairs_present_longer": round(share, 4), "p_value": float(norm.sf(z))}


def time_only_where_happened(x: np.ndarray, t: np.ndarray) -> dict | None:
    """Evidence that ``x`` is the time of an event during follow-up recorded only where it
    happened (see the module docstring), or None. ``x`` and ``t`` are aligned, NaN for missing."""
    has_t = np.isfinite(t)
    present = np.isfinite(x)
    share_present = float(present[has_t].mean()) if has_t.any() else 0.0
    ok = present & has_t & (x >= 0)
    n = int(ok.sum())
    if n < MIN_ROWS or not MIN_SHARE <= share_present <= MAX_SHARE or np.ptp(x[ok]) == 0:
        return None
    below = _at_or_below(x[ok], t[ok])
    hits = int(below.sum())
    # all but one odd record, or 99%: a bound a typo does not undo
    if n - hits > max(1, (1 - BOUND_SHARE) * n):
        return None
    # an event can happen any time during follow-up: on some rows late in it. A value far below
    # every follow-up (a lab value next to days) is below it too, but never near it
    near = int(np.sum(x[ok] >= NEAR * t[ok]))
    if near < max(MIN_FLAG_ROWS, MIN_NEAR_SHARE * n):
        return None
    chance = _chance_below(x[ok], t)
    if chance >= 1.0:
        return None
    p_value = float(binom.sf(hits - 1, n, chance))
    if p_value > P_VALUE:
        return None
    return {"share_present": round(share_present, 4), "rows_present": n,
            "share_below_own_duration": round(hits / n, 4),
            "share_below_by_chance": round(chance, 4), "p_value": p_value, "rows_near_duration": near}


def _chance_below(x: np.ndarray, t: np.ndarray) -> float:
    """Share of values at or below the follow-up under independent pairing (each value against
    every follow-up time)."""
    ts = np.sort(t[np.isfinite(t)])
    return float(np.mean(1.0 - np.searchsorted(ts * 1.01 + 1e-9, x, side="left") / ts.size))


def time_within_follow_up(name: str, x: np.ndarray, t: np.ndarray) -> dict | None:
    """Evidence that the column ``name`` (values ``x``) is the time of an event during follow-up
    present on most rows (see the module docstring), or None: named as a time (not as one
    before entry), at or below its row's follow-up ``t`` on all rows but one (or 99%), on the
    follow-up's scale, and that bound unlikely under chance pairing (binomial p <= 1e-3)."""
    if not TIME_WORD.search(name) or BEFORE_ENTRY.search(name):
        return None
    ok = np.isfinite(x) & np.isfinite(t) & (x >= 0)
    n = int(ok.sum())
    if n < MIN_ROWS or np.ptp(x[ok]) == 0:
        return None
    xs, ts = x[ok], t[ok]
    hits = int(_at_or_below(xs, ts).sum())
    if n - hits > max(1, (1 - BOUND_SHARE) * n):
        return None
    ratio = np.divide(xs, ts, out=np.ones_like(xs), where=ts > 0)
    if np.quantile(xs, 0.9) < ON_SCALE * np.median(t[np.isfinite(t)]) or np.quantile(ratio, 0.1) > SPANS:
        return None
    chance = _chance_below(xs, t)
    p_value = float(binom.sf(hits - 1, n, chance)) if chance < 1.0 else 1.0
    if p_value > MODERATE_P:
        return None
    return {"rows_present": n, "share_present": round(float(np.isfinite(x)[np.isfinite(t)].mean()), 4),
            "share_below_own_duration": round(hits / n, 4), "share_below_by_chance": round(chance, 4),
            "p_value": p_value}


def within_words(name: str, evidence: dict, time: str) -> str:
    """The evidence of :func:`time_within_follow_up` in words."""
    return (f"named as a time ('{name}'), on {evidence['share_below_own_duration']:.0%} of its "
            f"{evidence['rows_present']} rows at or below the row's own duration '{time}' (by chance pairing "
            f"{evidence['share_below_by_chance']:.0%}, {p_words(evidence['p_value'])}), on its scale: the time of an "
            "event during follow-up")


def flag_of_time(x: np.ndarray, codes: np.ndarray, t: np.ndarray) -> dict | None:
    """Evidence that the yes/no ``codes`` (0/1, -1 missing) is the event flag of the time ``x``:
    on one code's rows ``x`` ran to the end of follow-up (censored), on the other's it mostly
    ended earlier, beyond what a chance labelling gives; None otherwise."""
    ok = np.isfinite(x) & np.isfinite(t) & (codes >= 0)
    if ok.sum() < MIN_ROWS:
        return None
    ran_out = np.isclose(x, t, rtol=0.01, atol=0) & ok
    for code in (0, 1):
        censored, events = ok & (codes == code), ok & (codes == 1 - code)
        if censored.sum() < MIN_FLAG_ROWS or events.sum() < MIN_FLAG_ROWS:
            continue
        k = int(ran_out[censored].sum())
        if k < RAN_OUT * censored.sum() or ran_out[events].mean() > ENDED_EARLY:
            continue
        # the censored rows drawn at random from all: how likely that this many ran out
        p_value = float(hypergeom.sf(k - 1, int(ok.sum()), int(ran_out.sum()), int(censored.sum())))
        if p_value <= P_VALUE:
            return {"censored_code_rows": int(censored.sum()), "share_censored_at_duration":
                    round(k / censored.sum(), 4), "share_events_at_duration":
                    round(float(ran_out[events].mean()), 4), "p_value": p_value}
    return None


def _is_flag(s: pd.Series) -> bool:
    return bool(s.notna().all()) and s.nunique() == 2


def event_pairs(frame: pd.DataFrame, profiles: dict[str, ColumnProfile], times: list[str], flags: list[str],
                t: np.ndarray) -> list[tuple[str, str, dict]]:
    """(time, indicator, evidence) of every pair whose time is bounded by the follow-up ``t``
    and whose indicator is its event flag (:func:`flag_of_time`)."""
    out = []
    flag_codes = {f: category_codes(frame[f]) for f in flags if _is_flag(frame[f])}
    for c in times:
        x = numeric_values(frame[c], profiles[c])
        ok = np.isfinite(x) & np.isfinite(t)
        if ok.sum() < MIN_ROWS:
            continue
        above = int((~_at_or_below(x[ok], t[ok])).sum())
        if above > max(1, (1 - BOUND_SHARE) * ok.sum()):
            continue
        for f, codes in flag_codes.items():
            if f != c and (evidence := flag_of_time(x, codes, t)) is not None:
                out.append((c, f, {**evidence, "share_below_duration": round(1 - above / ok.sum(), 4)}))
    return out
