"""An observed time beside the time its observation could last.

Survival tables often keep both: the time observed, the smaller of the time to the event and the
end of follow-up (``durat: min(time until return, follow)``), and the follow-up each subject could
have had (``follow``, set at entry). A name that says "follow" makes the second look like the
duration, yet it is the censoring time: the observed time is never longer, and equals it exactly
on the rows whose follow-up ended without the event — the censored rows, whatever their code is.
So the values tell the duration and which status code is censored, even when 1 marks the censored
(``cens: =1 if duration right censored``).

When the censored code the values show is 0 and the status is named as one (``status``, ``fustat``,
``death``), the data agree with every reader's convention: the reading is earned, not asked.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from kernel_tools.diagnosis.event_codes import Code, Coding

NEVER_LONGER = 0.99  # share of rows on which the observed time is at most the censoring time
ENDS_WITH_ONE_CODE = 0.95  # share of the rows ending at the censoring time that hold one status code...
THAT_CODE_ENDS_THERE = 0.95  # ...and share of that code's rows ending there
MIN_SHARE = 0.05  # rows ending at the censoring time, and rows ending before it
MIN_ROWS = 40
# a name that says status or event: its 0 is conventionally the censored ('cens', 'infection' say neither)
STATUS_NAME = re.compile(r"(^|[_\W])(status|event|delta|dead|death|died|fail|failure)([_\W]|$)|stat(us)?$",
                         re.IGNORECASE)


@dataclass
class ObservedTime:
    observed: str  # the duration: the time observed
    censoring: str  # the time the observation could last
    coding: Coding  # the status read from where the observed time ends


def observed_within(status: np.ndarray, follow: str, times: dict[str, np.ndarray]) -> ObservedTime | None:
    """Among ``times`` (named time columns), one never longer than ``follow`` and equal to it on the
    rows of exactly one ``status`` code (NaN: missing): that time is observed, ``follow`` its censoring,
    that code censored. None when no column is."""
    t = times[follow]
    for name, x in times.items():
        ok = np.isfinite(x) & np.isfinite(t) & ~np.isnan(status)
        if name == follow or ok.sum() < MIN_ROWS or np.mean(x[ok] <= t[ok] + 1e-9) < NEVER_LONGER:
            continue
        ends = np.isclose(x[ok], t[ok])
        if not MIN_SHARE <= ends.mean() <= 1 - MIN_SHARE:
            continue
        codes, counts = np.unique(status[ok][ends], return_counts=True)
        code = codes[np.argmax(counts)]
        if counts.max() / ends.sum() < ENDS_WITH_ONE_CODE or np.mean(ends[status[ok] == code]) < THAT_CODE_ENDS_THERE:
            continue
        others = [c for c in np.unique(status[ok]) if c != code]
        if len(others) != 1:
            continue
        medians: dict[Code, float] = {float(c): float(np.median(x[ok][status[ok] == c])) for c in (code, others[0])}
        n: dict[Code, int] = {float(c): int(np.sum(status[ok] == c)) for c in (code, others[0])}
        words = (f"'{name}' is never longer than '{follow}' and equals it on {ends.mean():.0%} of rows, nearly all "
                 f"with '{code:g}': '{name}' is the time observed, '{follow}' the follow-up each could have had, and "
                 f"'{code:g}' the rows whose follow-up ended without the event (censored)")
        coding = Coding(float(code), [float(others[0])], medians, n, evidence=[words])
        return ObservedTime(name, follow, coding)
    return None


def conventional(found: ObservedTime, target: str) -> bool:
    """Whether the reading ``found`` agrees with the convention its name carries: 0 censored, and
    ``target`` named as a status or an event (then there is nothing to ask)."""
    return found.coding.censored == 0 and STATUS_NAME.search(target) is not None
