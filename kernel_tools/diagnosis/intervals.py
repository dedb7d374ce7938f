"""Counting-process rows: one row per (entity, interval (start, stop]), the event column saying
whether the interval ends in the event (R's ``survival::cgd``, lifelines' Stanford heart
transplants).

Told from the data, not the names: on every row stop > start, and the intervals of one entity
chain — each starts where the entity's previous one stopped. Read as rows of a classification,
such a table counts one patient many times and asks, of each interval, whether it ends in the
event: a question about the length of the interval as much as about the patient. Exports differ:
rows unsorted, the first interval not at 0, the next interval starting a unit after the last stop
((0, 30], (31, 62]), several events at one time (recurrent events: tumours found at one
examination) written as the same interval twice or as an interval that spans no time ((60, 60]):
none of these changes what the rows are. The names say nothing here (``time1``/``time2``,
``t0``/``t1``, ``debut``/``fin``): the values do.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from kernel_tools.diagnosis.columns import ColumnProfile, numeric_values

MIN_ROWS = 20
ORDERED = 0.99  # share of rows with stop >= start
SPANNING = 0.5  # share of rows with stop > start (the rest: several events at one time, (60, 60])
MAX_REPEATED = 0.5  # share of rows that repeat an earlier (entity, start, stop) exactly
CHAINED = 0.9  # share of an entity's later intervals that start where its previous one stopped
GAP_SHARE = 0.05  # a later interval may start this share of the median interval after the previous stop
MIN_REPEATED = 0.1  # share of rows that follow an earlier interval of their entity
MAX_COLUMNS = 40  # numeric columns tried as start or stop (the pairs grow as their square)
MAX_IDS = 10  # entity candidates whose rows tell which columns vary
MAX_ROWS_PER_ENTITY = 50  # intervals per entity on average, at most, for a column to tell which columns vary
# intervals per entity on average, at most, for a column to be the entity of a counting process (a code of
# a few levels would make each pair's screen nearly the whole table)
MAX_INTERVALS_PER_ENTITY = 200
SCREEN_ROWS = 5_000  # above this many rows, each pair is tried first on the rows of a sample of entities
SCREEN_SLACK = 0.15  # how far below CHAINED a sample's share may fall before the pair is left out


@dataclass
class Intervals:
    """A (start, stop] layout found in the data, with the entity whose intervals chain."""

    start: str
    stop: str
    id: str
    chained: float  # share of later intervals that start where the previous stopped
    entities: int
    several: int = 0  # entities with several intervals
    whole: int = 0  # of them, those whose every later interval starts where the previous one stopped
    at_or_after: float = 1.0  # share of rows whose stop is at or after their start

    @property
    def reason(self) -> str:
        each = (f"for {self.whole} of {self.several} '{self.id}' with several rows each row starts where the last "
                "one stopped; " if self.several else "")
        return (f"rows are intervals ('{self.start}', '{self.stop}'] of each '{self.id}' ({self.entities} entities; "
                f"{each}'{self.stop}' ≥ '{self.start}' on "
                f"{'every row' if self.at_or_after == 1 else f'{self.at_or_after:.0%} of rows'}, {self.chained:.0%} "
                "of later intervals start where the previous one stopped)")


def ordered(start: np.ndarray, stop: np.ndarray) -> bool:
    """Stop at or after start on :data:`ORDERED` of the rows, after it on :data:`SPANNING`: an interval
    that spans no time is an event at the same time as the one before, not a reversed pair."""
    both = ~np.isnan(start) & ~np.isnan(stop)
    if not both.any():
        return False
    a, b = start[both], stop[both]
    return bool((b >= a).mean() >= ORDERED and (b > a).mean() >= SPANNING)


def chain_share(df: pd.DataFrame, entity_id: str, start: pd.Series, stop: pd.Series) -> tuple[float, float]:
    """``(chained, repeated)``: the share of an entity's later intervals that start where its
    previous one stopped, and the share of rows that are such later intervals."""
    return _chain_share(pd.factorize(df[entity_id])[0], _floats(start), _floats(stop))


def entities_chained(df: pd.DataFrame, entity_id: str, start: str, stop: str) -> tuple[int, int]:
    """``(whole, several)``: the entities with several intervals, and those of them whose every later
    interval starts where the previous one stopped (the evidence said in words)."""
    codes, a, b = _unique_intervals(pd.factorize(df[entity_id])[0], _floats(df[start]), _floats(df[stop]))
    follows = codes[1:] == codes[:-1]
    gap = a[1:] - b[:-1]
    allowed = GAP_SHARE * float(np.median(b - a)) if len(a) else 0.0
    broken = follows & ~((gap >= 0) & (gap <= allowed) | np.isclose(gap, 0))
    counts = np.bincount(codes, minlength=int(codes.max()) + 1 if len(codes) else 0)
    several = np.flatnonzero(counts > 1)
    bad = np.unique(codes[1:][broken])
    return int(len(several) - np.isin(several, bad).sum()), int(len(several))


def _unique_intervals(codes: np.ndarray, start: np.ndarray, stop: np.ndarray
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distinct (entity, start, stop) intervals with all three known, by entity, start and stop:
    two events at one time written as the same interval twice are one stretch of follow-up."""
    keep = (codes >= 0) & ~np.isnan(start) & ~np.isnan(stop)
    codes, start, stop = codes[keep], start[keep], stop[keep]
    order = np.lexsort((stop, start, codes))  # by entity, then start, then stop
    codes, start, stop = codes[order], start[order], stop[order]
    if len(codes) > 1:
        new = np.ones(len(codes), dtype=bool)
        new[1:] = (codes[1:] != codes[:-1]) | (start[1:] != start[:-1]) | (stop[1:] != stop[:-1])
        codes, start, stop = codes[new], start[new], stop[new]
    return codes, start, stop


def _floats(values: pd.Series) -> np.ndarray:
    return pd.to_numeric(values, errors="coerce").to_numpy(dtype=float, na_value=np.nan)


def _chain_share(codes: np.ndarray, start: np.ndarray, stop: np.ndarray) -> tuple[float, float]:
    """:func:`chain_share` on the entity's integer codes (-1: missing): numpy's sort of integers,
    not pandas' of the labels (a diagnosis tries this for every pair of times and every entity)."""
    rows = int(((codes >= 0) & ~np.isnan(start) & ~np.isnan(stop)).sum())
    codes, start, stop = _unique_intervals(codes, start, stop)
    # events at one time repeat a few intervals; pairs of codes (0/1 beside 0/1) repeat most of theirs
    if len(codes) < (1 - MAX_REPEATED) * rows:
        return 0.0, 0.0
    follows = codes[1:] == codes[:-1]
    if not follows.any():
        return 0.0, 0.0
    # an export may start the next interval a unit after the last one stopped ((0, 30], (31, 62]):
    # a gap small beside the intervals still leaves the entity observed almost throughout
    gap = start[1:][follows] - stop[:-1][follows]
    allowed = GAP_SHARE * float(np.median(stop - start))
    share = float(((gap >= 0) & (gap <= allowed) | np.isclose(gap, 0)).mean())
    return share, float(follows.sum() / len(codes))


def _row_sample(n: int, random_state: int = 0) -> np.ndarray | slice:
    """The positions of about :data:`SCREEN_ROWS` random rows (every row of a small table)."""
    if n <= SCREEN_ROWS:
        return slice(None)
    return np.random.default_rng(random_state).choice(n, SCREEN_ROWS, replace=False)


def _screen(codes: np.ndarray, random_state: int = 0) -> np.ndarray | None:
    """The rows of a random set of whole entities, about :data:`SCREEN_ROWS` of them (None: the
    table is small enough to try every pair on every row)."""
    if len(codes) <= SCREEN_ROWS:
        return None
    entities = int(codes.max()) + 1
    chosen = np.random.default_rng(random_state).choice(
        entities, max(1, entities * SCREEN_ROWS // len(codes)), replace=False)
    return np.isin(codes, chosen)


def is_chained(df: pd.DataFrame, entity_id: str, start: pd.Series, stop: pd.Series) -> bool:
    """Whether ``(start, stop]`` are intervals of ``entity_id`` that chain (see the module)."""
    ok = start.notna() & stop.notna()
    if ok.sum() < MIN_ROWS or not ordered(_floats(start[ok]), _floats(stop[ok])):
        return False
    chained, repeated = chain_share(df[ok], entity_id, start[ok], stop[ok])
    return chained >= CHAINED and repeated > 0


def find_intervals(df: pd.DataFrame, profiles: dict[str, ColumnProfile], exclude: set[str]) -> Intervals | None:
    """The (start, stop] pair and entity of a counting-process table, or None.

    Start and stop: numeric, never negative, stop >= start on 99% of rows (> on half); the entity: a column
    with repeated values (not a measurement: whole numbers or codes) whose later intervals chain
    on 90% of them, for at least a tenth of the rows."""
    if len(df) < MIN_ROWS:
        return None
    ids = [c for c, p in profiles.items() if c not in exclude and _entity_like(df[c], p)]
    times = {c: pd.Series(numeric_values(df[c], p), index=df.index) for c, p in profiles.items()
             if c not in exclude and p.kind == "numeric" and p.missing_rate < 0.05}
    # a start or a stop changes between an entity's rows: those are tried first, so the cap leaves
    # out baseline columns (however many, wherever they stand), not the times
    varying = _varying(df, ids, [c for c, v in times.items() if v.min() >= 0])
    times = {c: times[c] for c in varying[:MAX_COLUMNS]}
    values = {c: _floats(v) for c, v in times.items()}
    rows = _row_sample(len(df))  # a pair far from ordered on a sample is not ordered on every row
    pairs = [(a, b) for a in values for b in values if a != b
             and (values[a][rows] <= values[b][rows]).mean() >= ORDERED - SCREEN_SLACK
             and ordered(values[a], values[b])]
    found = []
    for entity_id in ids:
        codes = pd.factorize(df[entity_id])[0]
        sample = _screen(codes)
        few = {c: v[sample] for c, v in values.items()} if sample is not None else {}
        for start, stop in pairs:
            if entity_id in (start, stop):
                continue
            # most pairs of a large table are no intervals: a few thousand rows of whole entities tell
            if sample is not None:
                chained, repeated = _chain_share(codes[sample], few[start], few[stop])
                if chained < CHAINED - SCREEN_SLACK or repeated < MIN_REPEATED / 2:
                    continue
            chained, repeated = _chain_share(codes, values[start], values[stop])
            if chained >= CHAINED and repeated >= MIN_REPEATED:
                found.append(Intervals(start, stop, entity_id, chained, int(df[entity_id].nunique())))
    # the tightest chain wins; among equals the coarser entity (a finer split of one also chains)
    best = max(found, key=lambda f: (f.chained, -f.entities), default=None)
    if best is not None:
        best.whole, best.several = entities_chained(df, best.id, best.start, best.stop)
        a, b = values[best.start], values[best.stop]
        both = ~np.isnan(a) & ~np.isnan(b)
        best.at_or_after = float((b[both] >= a[both]).mean())
    return best


def _varying(df: pd.DataFrame, ids: list[str], columns: list[str]) -> list[str]:
    """``columns``, those that change between the rows of one entity first: the entity taken as
    the candidate of ``ids`` whose rows share the most columns (a subject keeps its baseline; an
    age or a centre shared by chance by several subjects does not)."""
    # a yes/no or a handful of levels groups everything: every column varies within it
    units = [c for c in ids if df[c].nunique() >= 3 and len(df) / df[c].nunique() <= MAX_ROWS_PER_ENTITY]
    best: list[str] | None = None
    for entity_id in sorted(units, key=lambda c: -df[c].nunique())[:MAX_IDS]:
        sizes = df.groupby(entity_id, sort=False)[entity_id].transform("size")
        multi = df.loc[sizes.to_numpy() > 1, [entity_id, *[c for c in columns if c != entity_id]]]
        if multi.empty:
            continue
        changing = (multi.groupby(entity_id, sort=False).nunique() > 1).mean()
        found = [c for c, share in changing.items() if share >= 0.5]
        if len(found) >= 2 and (best is None or len(found) < len(best)):
            best = found
    first = [c for c in columns if c in (best or [])]
    return first + [c for c in columns if c not in first]


def find_start(df: pd.DataFrame, profiles: dict[str, ColumnProfile], entity_id: str, stop: str,
               exclude: set[str]) -> str | None:
    """The column whose values start each interval of ``entity_id`` that ``stop`` ends (the
    intervals chain, see :func:`is_chained`), whatever its name; None when none does."""
    end = pd.to_numeric(df[stop], errors="coerce")
    for name, prof in profiles.items():
        if name in exclude or name in (stop, entity_id) or prof.kind != "numeric" or prof.missing_rate >= 0.05:
            continue
        start = pd.Series(numeric_values(df[name], prof), index=df.index)
        if start.min() >= 0 and is_chained(df, entity_id, start, end):
            return name
    return None


def _entity_like(values: pd.Series, profile: ColumnProfile) -> bool:
    """Repeated values that can name an entity: codes or whole numbers, a few rows each (at most
    :data:`MAX_INTERVALS_PER_ENTITY` on average). The profile's kind first: it costs nothing."""
    if not (profile.kind in ("categorical", "text") or profile.kind == "numeric" and profile.is_integer):
        return False
    if profile.n == len(values) and profile.n_inf == 0:  # its own column's counts: no pass over it
        missing, distinct = profile.n_missing > 0, profile.nunique
    else:
        missing, distinct = bool(values.isna().any()), int(values.nunique(dropna=True))
    if missing:
        return False
    return 2 <= distinct <= len(values) * 0.9 and len(values) <= MAX_INTERVALS_PER_ENTITY * distinct
