"""Columns filled only for the rows (or entities) whose outcome took a given level.

A column whose presence is decided by the outcome — filled exactly for the events (the subtype
of a malignancy the subject progressed to, a cause of death) — is recorded at or after the
outcome, whatever its values. The outcome here is the target (its classes, a survival event) or a
column already found to give it away (an event type: 'censor' / 'death' / 'pcm'). In a long table
the pattern shows per entity: the subtype is then filled on every record of a subject who ever
progressed, including the records before it. Presence must be (almost) decided: a column missing
at random, or for a whole baseline group that merely correlates with the outcome, is not; a
pattern strong but not total is asked, not decided.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from kernel_tools.diagnosis.timeline import Placement, TimelineContext
from kernel_tools.vocabulary import EvidenceSource, TaskKind, TimelineGroup

DECIDED = 0.98  # share of units on each side whose presence the outcome's level gives: decided
ASKED = 0.9  # ...on each side: strong but not total, asked
MIN_SIDE = 10  # units on each side (filled, missing) for the pattern to count
MAX_LEVELS = 10  # a decider of more levels is a measurement, not an outcome


@dataclass
class Pattern:
    """Presence split by a decider's level: ``levels`` are the filled side."""

    decider: str
    levels: list[str]
    filled_in: int  # units on the filled side that are filled
    side: int  # units on the filled side
    filled_out: int  # units on the other side that are filled
    rest: int
    unit: str  # 'rows' or the entity's name

    @property
    def purity(self) -> float:
        return min(self.filled_in / self.side, 1 - self.filled_out / self.rest)

    def words(self, during: bool) -> str:
        levels = " or ".join(repr(v) for v in self.levels)
        per = "rows with" if self.unit == "rows" else f"'{self.unit}' values with a row of"
        when = "that event, during follow-up" if during else "the outcome, at or after it"
        return (f"filled for {self.filled_in:,} of {self.side:,} {per} '{self.decider}' equal to {levels} and "
                f"{self.filled_out:,} of {self.rest:,} others: recorded because of {when}")


@dataclass
class Decider:
    """A column of the outcome's levels, coded once: per row (-1 missing) and, with an entity, whether
    each entity has a row of each level."""

    name: str
    codes: np.ndarray
    labels: list[str]
    has: np.ndarray | None = None  # entities x levels


def _decider(name: str, values: pd.Series, entities: np.ndarray | None, n_entities: int) -> Decider:
    codes, labels = pd.factorize(values.astype("string"))
    out = Decider(name, codes, [str(v) for v in labels])
    if entities is not None:
        ok = codes >= 0
        out.has = np.zeros((n_entities, len(labels)), dtype=bool)
        out.has[entities[ok], codes[ok]] = True
    return out


def _deciders(ctx: TimelineContext, entities: np.ndarray | None, n_entities: int) -> list[Decider]:
    """The outcome's levels per row: the target's classes or event, and the leaked columns of a
    few levels (an event type)."""
    out: list[Decider] = []
    o = ctx.outcome
    if o is not None and o.target is not None and o.y is not None and o.kind in (TaskKind.CLASSIFICATION,
                                                                                  TaskKind.SURVIVAL):
        y = pd.Series(np.asarray(o.y), index=ctx.df.index)
        out.append(_decider(o.target, y.where(y >= 0).astype("Int64"), entities, n_entities))
    for c in sorted(ctx.leaks):
        if c in ctx.df and c in ctx.profiles and 2 <= ctx.profiles[c].nunique <= MAX_LEVELS:
            out.append(_decider(c, ctx.df[c], entities, n_entities))
    return out


def _row_pattern(filled: np.ndarray, d: Decider) -> Pattern | None:
    """Rows: the levels whose rows are mostly filled against the others."""
    ok = d.codes >= 0
    rows = np.bincount(d.codes[ok], minlength=len(d.labels))
    hits = np.bincount(d.codes[ok], weights=filled[ok], minlength=len(d.labels)).astype(int)
    side = hits > rows - hits
    if side.all() or not side.any():
        return None
    return Pattern(d.name, sorted(lbl for lbl, inside in zip(d.labels, side) if inside), int(hits[side].sum()),
                   int(rows[side].sum()), int(hits[~side].sum()), int(rows[~side].sum()), "rows")


def _entity_patterns(any_filled: np.ndarray, d: Decider, unit: str) -> list[Pattern]:
    """Entities: filled on some record against having a record of each level."""
    assert d.has is not None
    return [Pattern(d.name, [label], int((any_filled & has).sum()), int(has.sum()), int((any_filled & ~has).sum()),
                    int((~has).sum()), unit) for label, has in zip(d.labels, d.has.T)]


def _patterns(filled: np.ndarray, deciders: list[Decider], entities: np.ndarray | None, unit: str) -> list[Pattern]:
    found = []
    any_filled = (np.bincount(entities, weights=filled) > 0) if entities is not None else None
    for d in deciders:
        row = _row_pattern(filled, d)
        found += [row] if row is not None else []
        if any_filled is not None:
            found += _entity_patterns(any_filled, d, unit)
    return [p for p in found if min(p.side, p.rest) >= MIN_SIDE
            and min(p.filled_in, p.side - p.filled_in + p.rest - p.filled_out) >= MIN_SIDE]


def filled_by_outcome(ctx: TimelineContext) -> dict[str, Placement]:
    """Per feature not yet placed after the index: at or after the outcome when its presence is
    decided by the outcome's level (strong), or asked when it is nearly so (weak)."""
    entity = ctx.entity
    unit = entity.id if entity is not None and entity.id is not None and entity.id in ctx.df else None
    entities = pd.factorize(ctx.df[unit])[0] if unit is not None else None
    if entities is not None and (entities < 0).any():  # rows without an id: judged row by row only
        entities, unit = None, None
    deciders = _deciders(ctx, entities, int(entities.max()) + 1 if entities is not None else 0)
    if not deciders:
        return {}
    placed = {c for c, tm in ctx.timings.items() if tm.timing in ("follow_up", "outcome_derived")} | ctx.leaks
    out: dict[str, Placement] = {}
    for c in ctx.features:
        if c in placed or c not in ctx.df:
            continue
        filled = ctx.df[c].notna().to_numpy()
        if filled.all() or not filled.any():
            continue
        best = max(_patterns(filled, [d for d in deciders if d.name != c], entities, unit or "rows"),
                   key=lambda p: p.purity, default=None)
        if best is None or best.purity < ASKED:
            continue
        strong = best.purity >= DECIDED
        # decided by an event during follow-up (a relapse's indicator), it is recorded with that event
        decider = ctx.timings.get(best.decider)
        during = decider is not None and decider.timing == "follow_up"
        numbers = {"decider": best.decider, "levels": best.levels, "filled_with_level": best.filled_in,
                   "with_level": best.side, "filled_others": best.filled_out, "others": best.rest,
                   "unit": best.unit, "purity": round(best.purity, 4)}
        group = TimelineGroup.DURING_FOLLOW_UP if during else TimelineGroup.AT_OR_AFTER_OUTCOME
        words = best.words(during) + ("" if strong else " (nearly always: an expert confirms)")
        out[c] = Placement(group, EvidenceSource.STRUCTURE, "filled_by_outcome", words, strong, numbers)
    return out
