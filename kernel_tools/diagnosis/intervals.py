"""Counting-process rows: one row per (entity, interval (start, stop]), the event column saying
whether the interval ends in the event (R's ``survival::cgd``, lifelines' Stanford heart
transplants).

Told from the data, not the names: on every row stop > start, and the intervals of one entity
chain — each starts where the entity's previous one stopped. Read as rows of a classification,
such a table counts one patient many times and asks, of each interval, whether it ends in the
event: a question about the length of the interval as much as about the patient.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from kernel_tools.diagnosis.columns import ColumnProfile, numeric_values

MIN_ROWS = 20
ORDERED = 0.99  # share of rows with stop > start
CHAINED = 0.9  # share of an entity's later intervals that start where its previous one stopped
MIN_REPEATED = 0.1  # share of rows that follow an earlier interval of their entity
MAX_COLUMNS = 40  # numeric columns tried as start or stop (the pairs grow as their square)


@dataclass
class Intervals:
    """A (start, stop] layout found in the data, with the entity whose intervals chain."""

    start: str
    stop: str
    id: str
    chained: float  # share of later intervals that start where the previous stopped
    entities: int

    @property
    def reason(self) -> str:
        return (f"rows are intervals ('{self.start}', '{self.stop}'] of each '{self.id}' ({self.entities} entities; "
                f"'{self.stop}' > '{self.start}' on every row, {self.chained:.0%} of later intervals start where "
                "the previous one stopped)")


def chain_share(df: pd.DataFrame, entity_id: str, start: pd.Series, stop: pd.Series) -> tuple[float, float]:
    """``(chained, repeated)``: the share of an entity's later intervals that start where its
    previous one stopped, and the share of rows that are such later intervals."""
    frame = pd.DataFrame({"id": df[entity_id].to_numpy(), "start": start.to_numpy(), "stop": stop.to_numpy()})
    frame = frame.dropna().sort_values(["id", "start"], kind="stable")
    previous = frame.groupby("id", sort=False)["stop"].shift()
    follows = previous.notna().to_numpy()
    if not follows.any():
        return 0.0, 0.0
    share = float(np.isclose(frame["start"].to_numpy()[follows], previous.to_numpy()[follows]).mean())
    return share, float(follows.mean())


def is_chained(df: pd.DataFrame, entity_id: str, start: pd.Series, stop: pd.Series) -> bool:
    """Whether ``(start, stop]`` are intervals of ``entity_id`` that chain (see the module)."""
    ok = start.notna() & stop.notna()
    if ok.sum() < MIN_ROWS or (start[ok] < stop[ok]).mean() < ORDERED:
        return False
    chained, repeated = chain_share(df[ok], entity_id, start[ok], stop[ok])
    return chained >= CHAINED and repeated > 0


def find_intervals(df: pd.DataFrame, profiles: dict[str, ColumnProfile], exclude: set[str]) -> Intervals | None:
    """The (start, stop] pair and entity of a counting-process table, or None.

    Start and stop: numeric, never negative, stop > start on 99% of rows; the entity: a column
    with repeated values (not a measurement: whole numbers or codes) whose later intervals chain
    on 90% of them, for at least a tenth of the rows."""
    if len(df) < MIN_ROWS:
        return None
    times = {c: pd.Series(numeric_values(df[c], p), index=df.index) for c, p in profiles.items()
             if c not in exclude and p.kind == "numeric" and p.missing_rate < 0.05}
    times = {c: v for c, v in list(times.items())[:MAX_COLUMNS] if v.min() >= 0}
    pairs = [(a, b) for a in times for b in times if a != b and (times[a] < times[b]).mean() >= ORDERED]
    ids = [c for c, p in profiles.items() if c not in exclude and _entity_like(df[c], p)]
    found = []
    for start, stop in pairs:
        for entity_id in ids:
            if entity_id in (start, stop):
                continue
            chained, repeated = chain_share(df, entity_id, times[start], times[stop])
            if chained >= CHAINED and repeated >= MIN_REPEATED:
                found.append(Intervals(start, stop, entity_id, chained, int(df[entity_id].nunique())))
    # the tightest chain wins; among equals the coarser entity (a finer split of one also chains)
    return max(found, key=lambda f: (f.chained, -f.entities), default=None)


def _entity_like(values: pd.Series, profile: ColumnProfile) -> bool:
    """Repeated values that can name an entity: codes or whole numbers, a few rows each."""
    distinct = values.nunique(dropna=True)
    if not 2 <= distinct <= len(values) * 0.9 or values.isna().any():
        return False
    if profile.kind == "numeric":
        return bool(profile.is_integer)
    return profile.kind in ("categorical", "text")
