"""Which code of a status column means 'censored' when it has several (competing events).

Registries and trials export a status of three to five codes next to the follow-up time:
alive / died of the disease / died of other causes, coded 0/1/2 with 0 not the most common, or
1/2/3 with the censoring code in the middle. The codes do not say which one is censoring; the
follow-up does. A subject still event-free is followed until the study ends, one with an event
only until the event: the censoring code's rows are followed longest. That evidence is stated
and tested (a rank test against the other rows), and a choice made without it is asked.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.stats import mannwhitneyu

MIN_CODES, MAX_CODES = 3, 5  # censored and at most four competing events
STANDOUT_P = 0.05  # the longest-followed code's rows against all others (one-sided rank test; a
# censoring code of a handful of rows still shows, a chance difference between classes seldom)
STANDOUT_RATIO = 1.25  # its median follow-up at least this much above every other code's


@dataclass
class Coding:
    """A reading of a status column: the code taken as censored, the others as events."""

    censored: float
    events: list[float]
    medians: dict[float, float]  # code -> median follow-up of its rows
    counts: dict[float, int]
    standout_p: float | None = None  # the rank test's p when the censoring code stands out
    evidence: list[str] = field(default_factory=list)

    @property
    def stands_out(self) -> bool:
        return self.standout_p is not None

    def ranked(self) -> list[float]:
        """The codes as candidates for censoring, the longest-followed first."""
        return sorted(self.medians, key=lambda c: -self.medians[c])


def status_codes(values: np.ndarray | None) -> np.ndarray | None:
    """The distinct codes of a numeric target that can be a status with competing events
    (3-5 non-negative whole numbers), or None."""
    if values is None:
        return None
    v = values[~np.isnan(values)]
    codes = np.unique(v)
    if not MIN_CODES <= len(codes) <= MAX_CODES or codes[0] < 0 or not np.all(codes == np.round(codes)):
        return None
    return codes


def censoring_code(values: np.ndarray, duration: np.ndarray, named_follow_up: bool) -> Coding | None:
    """The code to read as censored, with its evidence; None when nothing says the column is a
    status (no code is followed clearly longest, and the time is not named as a follow-up or
    there is no conventional 0): then the codes are classes, not events."""
    codes = status_codes(values)
    if codes is None:
        return None
    ok = ~np.isnan(values) & ~np.isnan(duration)
    v, d = values[ok], duration[ok]
    medians = {float(c): float(np.median(d[v == c])) for c in codes if (v == c).any()}
    counts = {float(c): int((v == c).sum()) for c in codes}
    if len(medians) < MIN_CODES:
        return None
    order = sorted(medians, key=lambda c: -medians[c])
    top, runner_up = order[0], order[1]
    p = _standout(d[v == top], d[v != top])
    standing = p < STANDOUT_P and medians[top] >= STANDOUT_RATIO * medians[runner_up]
    if standing:
        censored = top
    elif named_follow_up and 0.0 in counts:
        censored = 0.0
    else:
        return None
    events = [float(c) for c in codes if c != censored]
    others = ", ".join(f"{_code(c)}: {_length(medians[c])}" for c in order if c != top)
    why = (f"the rows coded {_code(top)} were followed longest (median {_length(medians[top])} against {others}; "
           f"rank test p = {p:.2g}): the subjects still event-free when follow-up ended" if standing else
           f"no code's rows were followed clearly longest (medians {_code(top)}: {_length(medians[top])}, {others}); "
           f"0 taken as censored by convention only")
    return Coding(censored, events, medians, counts, p if standing else None, [why])


def _standout(longest: np.ndarray, rest: np.ndarray) -> float:
    if len(longest) == 0 or len(rest) == 0:
        return 1.0
    return float(mannwhitneyu(longest, rest, alternative="greater").pvalue)


def _length(value: float) -> str:
    """A median follow-up as people write it: 2,997 days, not 3e+03; 1.2 years."""
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3g}"


def _code(value: float) -> str:
    return f"{value:g}"


__all__ = ["Coding", "MAX_CODES", "MIN_CODES", "censoring_code", "status_codes"]
