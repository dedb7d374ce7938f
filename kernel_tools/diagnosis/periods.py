"""Person-period rows: one row per (entity, period t), the event 0 on every row but possibly the
entity's last (discrete-time survival; lifelines' 'panel' layout ``id, t, E, var...``).

Told from the data, not the names: an entity has several rows, a whole-number period rises by
one from each row of an entity to its next, and the target is 0 on every row before an entity's
last. The evidence scales with the size: ten entities or more may break the rise on 1% of rows;
five to nine must hold it on every row and all start at the same period (small exports of this
layout exist: a few subjects followed for a few periods), and fewer are never read so. At any
size the events must be too many to have fallen on last rows by luck (at most 1%, hypergeometric),
and the entities' last periods must differ (all followed to the same period, the 0/1 is an outcome
read at the study's end). A layout that holds but misses only the chance or the common start
(``WEAK_CHANCE``) is a hint: the rows stay a classification, asked, with survival over the periods
as the alternative. Read as rows of a classification, one subject counts as many and the
question asked of each row is whether it is the last; read as survival, each row is the interval
(t-1, t] and the entity's follow-up ends at its last period, with or without the event.

The model step takes one row per entity (follow-up = the last period, event = the last row's,
covariates from the first period, as known at its start), not (t-1, t] intervals: the interval
model needs a start column the table does not have, and the period-by-period values would be
used before they were recorded. Repeated measures whose target varies (1 then 0) are not this.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.stats import hypergeom

from kernel_tools.diagnosis.columns import ColumnProfile, numeric_values
from kernel_tools.diagnosis.options import call, keep
from kernel_tools.findings import Finding, Option
from kernel_tools.vocabulary import FindingKind

MIN_ENTITIES = 5  # below this no layout is evidence of anything
BY_CHANCE = 0.01  # events this many, all on last rows, by chance at most this often
WEAK_CHANCE = 0.05  # ...and up to this often, a layout that is only a hint: asked, not read
SMALL = 10  # below this many entities the layout must hold on every row: all start together, no gap
MIN_REPEATED = 0.5  # share of rows that follow an earlier period of their entity (two periods each on average)
MIN_PERIODS = 3  # a period takes several values: a 0/1 flag that turns on (a transplant) is a covariate
STEP_SHARE = 0.99  # share of an entity's next rows whose period is one more (all of them below 100 steps)
MAX_IDS = 3  # entity candidates tried, the most distinct first (the entity is the finest repeated column)
MAX_PERIOD_LEVELS = 1000  # a period column holds a few hundred periods at most (weeks over years)


@dataclass
class PersonPeriods:
    """A person-period layout found in the data: the entity, its period and the evidence."""

    id: str
    period: str
    entities: int
    rows: int
    events: int
    starts_at: float  # the most common first period
    same_start: int  # entities whose first period is ``starts_at``
    steps: int  # rows that follow an earlier period of their entity
    steps_by_one: int  # of those, the rows whose period is one more than the row before
    chance: float  # probability that ``events`` events on rows at random all fall on last rows
    strong: bool = True  # False: a hint only (too few events, or a handful of entities not started together)

    @property
    def doubt(self) -> str:
        """Why a weak layout is only a hint ('' for a strong one)."""
        if self.strong:
            return ""
        if self.chance > BY_CHANCE:
            return f"{self.events} event{'s' if self.events != 1 else ''} too few to tell that from chance"
        return (f"only {self.same_start} of {self.entities} entities start at {self.starts_at:g}: too few entities "
                "to read the layout when they are not all counted from the same first period")

    @property
    def reason(self) -> str:
        return (f"rows are periods of each '{self.id}' ({self.rows} rows, {self.entities} entities): '{self.period}' "
                f"rises by one from each row of an entity to its next ({self.steps_by_one} of {self.steps} steps), "
                f"{self.same_start} of {self.entities} entities from {self.starts_at:g}; the target is 0 on every "
                f"row before an entity's last and {self.events} entities end with the event (were {self.events} "
                f"events on rows at random, all would be on the {self.entities} last rows of {self.rows} with "
                f"probability {_probability(self.chance)}"
                + (f", above the {BY_CHANCE:g} a layout is read from" if self.chance > BY_CHANCE else "") + ")")


def _probability(p: float) -> str:
    return f"{p:.2g}" if p >= 1e-4 else "below 0.0001"


def find_person_periods(df: pd.DataFrame, profiles: dict[str, ColumnProfile], target: str,
                        event: np.ndarray) -> PersonPeriods | None:
    """The entity and period column of a person-period table whose 0/1 ``event`` (per row, NaN
    where missing) is the target, or None: a strong layout, else one that is only a hint (``strong``
    False: events that could fall on last rows by chance up to ``WEAK_CHANCE``, or a handful of
    entities not all counted from the same first period). One search serves both readings."""
    if np.isnan(event).any() or len(df) < MIN_ENTITIES * 2:
        return None
    periods = {c: numeric_values(df[c], p) for c, p in profiles.items()
               if c != target and p.kind == "numeric" and p.is_integer and p.missing_rate == 0
               and MIN_PERIODS <= p.nunique <= MAX_PERIOD_LEVELS}
    # the profiles' counts first (no pass over the data), then a group-by for the few left
    events = int(event.sum())  # at most one per entity
    ids = [c for c, p in profiles.items() if c != target and _id_like(p) and p.nunique >= events]
    ids = [c for c in sorted(ids, key=lambda c: -profiles[c].nunique)[:MAX_IDS] if _may_hold(df[c], event)]
    found = [f for entity_id in ids for period, values in periods.items() if period != entity_id
             if (f := _layout(df[entity_id], values, event, entity_id, period)) is not None]
    # a strong layout first; a period counted from each entity's start beats one that merely rises
    # with it (an age in years)
    return min(found, key=lambda f: (not f.strong, f.starts_at), default=None)


def _id_like(profile: ColumnProfile) -> bool:
    """Codes or whole numbers, never missing, repeated on half the rows or more."""
    kind_ok = profile.kind in ("categorical", "text") or profile.kind == "numeric" and bool(profile.is_integer)
    return kind_ok and profile.n_missing == 0 and MIN_ENTITIES <= profile.nunique <= profile.n * (1 - MIN_REPEATED)


def _may_hold(ids: pd.Series, event: np.ndarray) -> bool:
    """Cheap necessary conditions before any sort: enough entities, enough later rows, at most
    one event per entity and at least one event."""
    entities = ids.nunique()
    if entities < MIN_ENTITIES or 1 - entities / len(ids) < MIN_REPEATED or not event.any():
        return False
    return bool(pd.Series(event).groupby(ids.to_numpy()).sum().max() <= 1)


def _layout(ids: pd.Series, period: np.ndarray, event: np.ndarray, entity_id: str, name: str) -> PersonPeriods | None:
    """The layout of (entity, period) rows with its evidence (``strong`` False when it is only a
    hint: see :func:`find_person_periods`), or None. The evidence scales with the
    size: a few entities must each show it (the same first period, every step one), and the events'
    fall on last rows must be unlikely by chance (hypergeometric: ``events`` rows drawn at random
    from all rows, all of them last rows), which on a small table asks for several events."""
    frame = pd.DataFrame({"id": ids.to_numpy(), "t": period, "e": event}).sort_values(["id", "t"], kind="stable")
    t, e = frame["t"].to_numpy(), frame["e"].to_numpy()
    entities = frame["id"].nunique()
    later = frame["id"].duplicated().to_numpy()
    if entities < MIN_ENTITIES or later.mean() < MIN_REPEATED:
        return None
    steps, by_one = int(later.sum()), int((np.diff(t, prepend=np.nan)[later] == 1).sum())
    # a period that skips (visits every other month) is not a count of periods
    if by_one < (steps if entities < SMALL else STEP_SHARE * steps):
        return None
    last = ~frame["id"].duplicated(keep="last").to_numpy()
    events = int(e[last].sum())
    # every entity followed to the same period: an outcome read at the study's end, not an event ending follow-up
    if e[~last].any() or events == 0 or len(np.unique(t[last])) < 2:
        return None
    first = t[~later]
    starts_at = float(pd.Series(first).mode().iloc[0])
    same_start = int((first == starts_at).sum())
    # events on rows drawn at random would all be last rows this often: a rare 0/1 outcome of a small
    # panel lands there by luck (2 events on the 7 last rows of 28: 5.6%)
    chance = float(hypergeom.pmf(events, len(frame), entities, events))
    # a handful of entities (lifelines' panel example: 7 of 3-5 periods) is evidence only when
    # every one of them was counted from the same first period
    if chance > WEAK_CHANCE:
        return None
    strong = not (entities < SMALL and same_start < entities or chance > BY_CHANCE)
    return PersonPeriods(entity_id, name, int(entities), int(len(frame)), events, starts_at, same_start, steps,
                         by_one, chance, strong)


def person_period_finding(found: PersonPeriods, target: str) -> Finding:
    """The aggregation question of a person-period table: one row per entity (recommended)."""
    ev = {"entity": found.id, "visit": found.period, "entities": found.entities, "rows": found.rows,
          "rows_per_entity_mean": round(found.rows / found.entities, 2), "events": found.events,
          "person_period": True, "reason": found.reason}
    summary = (f"Person-period rows: {found.reason}. Each entity is one subject followed until its last period: "
               f"one row per '{found.id}' with its follow-up '{found.period}' and event '{target}' from its last row.")
    return Finding(FindingKind.REPEATED_MEASUREMENTS, [found.id, found.period], "critical", summary, ev, [
        Option("aggregate_periods", "One row per entity (follow-up to its last period)",
               f"Each '{found.id}' becomes one row: '{found.period}' and '{target}' from its last period (the "
               "follow-up and whether it ended in the event), the other columns from its first (known at the start).",
               "ignores values that change from period to period", True,
               call("aggregate_per_entity", id=found.id, time=found.period, how="baseline",
                    outcome=[target, found.period])),
        keep(f"Keep every period as a row, grouped by '{found.id}'.",
             "each period would count as a subject followed until that period, and later periods know the "
             "entity survived until then: not valid", label="Keep rows, group by entity"),
    ], "aggregation")


__all__ = ["PersonPeriods", "find_person_periods", "person_period_finding"]
