"""Other endpoints beside the chosen follow-up: the times the duration rules would also have offered.

A table often holds several time-to-event outcomes, each a (time, indicator) pair: a progression
time beside overall survival, a relapse-free time beside both. Once one is the follow-up, the
others are events during it, not baseline. A pair whose time never exceeds the follow-up is found
by the data (:func:`.event_times.event_pairs`); this module finds the others — a time that goes
on after the chosen one ends (survival after progression), on the same follow-up:

- the time is one the duration rules offer (:func:`.task.duration_candidates`: named and behaving
  as a follow-up time), not named as a time before entry, and not a probability (values in [0, 1]:
  a model's estimated survival at 2 months is known at baseline, its name's duration is a horizon);
- its indicator is a yes/no column named with it (``pfs``/``pfs_status``, ``ptime``/``pstat``), or
  named as an event whose censored rows were followed longer beyond chance (``futime``/``death``);
- decided (strong) when the data shows the two times on one follow-up: where the target is
  censored, the other time ends with it (the same last contact) on most rows; asked (weak) when it
  does not (another origin, or the indicator only by name).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.stats import mannwhitneyu

from kernel_tools.diagnosis.columns import ColumnProfile, numeric_values, unit_interval
from kernel_tools.diagnosis.event_times import BEFORE_ENTRY, MIN_ROWS
from kernel_tools.diagnosis.task import duration_candidates, event_indicator
from kernel_tools.vocabulary import TaskKind

EVENT_NAME = re.compile(r"stat|event|dead|death|died|cens|fail|relaps|recur|progr|delta", re.IGNORECASE)
FLAG_P = 1e-3  # an event-named flag's censored rows followed longer than its events (one-sided rank test)
SAME_END = 0.5  # the other time ends with the follow-up on this share of the target's censored rows


@dataclass
class Endpoint:
    """Another endpoint's (time, indicator) and the evidence: ``same_end`` is the share of the
    target's censored rows where its time ends with the follow-up (``strong`` when enough)."""

    time: str
    flag: str
    how_paired: str
    same_end: float
    strong: bool

    def words(self, follow_up: str, target: str) -> str:
        end = (f"where '{target}' is censored it ends with '{follow_up}' on {self.same_end:.0%} of rows (one "
               "follow-up)" if self.strong else f"it ends with '{follow_up}' on only {self.same_end:.0%} of the rows "
               f"where '{target}' is censored (another origin?)")
        return (f"'{self.time}' with '{self.flag}' is another endpoint's (time, indicator): the target's "
                f"alternatives — '{self.time}' is named and behaves as a follow-up time, '{self.flag}' is its "
                f"indicator ({self.how_paired}); {end}: recorded during follow-up, not at baseline")


def other_endpoints(df: pd.DataFrame, profiles: dict[str, ColumnProfile], outcome, features: list[str],
                    named_pairs: set[tuple[str, str]]) -> list[Endpoint]:
    """The (time, indicator) pairs among ``features`` of endpoints other than the survival
    outcome's (see the module docstring); ``named_pairs``: (time, flag) pairs named alike."""
    if outcome.kind != TaskKind.SURVIVAL or outcome.time is None or outcome.duration is None:
        return []
    feats = set(features)
    times = [c for c in duration_candidates(df, profiles, {outcome.time, outcome.target or ""})
             if c in feats and not BEFORE_ENTRY.search(str(c))]
    flags = {c: ev[0] for c in features if profiles[c].nunique == 2 and (ev := event_indicator(df[c])) is not None}
    t = outcome.duration
    valid = np.ones(len(t), bool) if outcome.valid is None else np.asarray(outcome.valid, bool)
    censored = (np.asarray(outcome.y) == 0) & valid & np.isfinite(t)
    out = []
    for c in times:
        x = numeric_values(df[c], profiles[c])
        if unit_interval(x):
            continue  # a probability at a horizon ('surv2m': estimated survival at 2 months), not a time
        flag, how = _indicator(c, x, flags, named_pairs)
        if flag is None:
            continue
        both = censored & np.isfinite(x)
        same = float(np.mean(np.isclose(x[both], t[both], rtol=0.01, atol=0))) if both.sum() >= MIN_ROWS else 0.0
        out.append(Endpoint(c, flag, how, round(same, 4), same >= SAME_END))
    return out


def _indicator(time: str, x: np.ndarray, flags: dict[str, np.ndarray],
               named_pairs: set[tuple[str, str]]) -> tuple[str | None, str]:
    """The flag that is ``time``'s event indicator, and how it was paired; (None, "") if none."""
    for f in flags:
        if (time, f) in named_pairs:
            return f, "named with it"
    best: tuple[float, str | None] = (FLAG_P, None)
    for f, event in flags.items():
        if not EVENT_NAME.search(str(f)):
            continue
        ok = np.isfinite(x) & np.isfinite(event)
        kept, ended = x[ok & (event == 0)], x[ok & (event == 1)]
        if min(len(kept), len(ended)) < 5:
            continue
        p = float(mannwhitneyu(kept, ended, alternative="greater").pvalue)
        if p < best[0]:
            best = (p, f)
    if best[1] is None:
        return None, ""
    return best[1], f"named as an event; its censored rows followed longer on '{time}', rank test p = {best[0]:.0e}"
