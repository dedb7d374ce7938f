"""The column timeline: every feature placed relative to the prediction index — *baseline*,
*during follow-up*, *at or after the outcome*, or *unknown* — with its evidence and confidence.

Evidence comes from pluggable sources (:func:`timeline_source`), each a function of a
:class:`TimelineContext` returning placements per column:

- ``values``: the tests on the data of :mod:`.timing` (bounded by the duration, dated after the
  index, implies the event, ...): strong;
- ``structure``: the shape of the table (:mod:`.structure`): the partner of a column placed
  after the index (a (time, indicator) pair, the bounds of one quantity) and the later members of
  a series of times go with it: strong;
- ``names``: what names say (:mod:`.structure`): a time later than the target's own, the steps
  of the process that produced the target, the outcome event itself: weak — a proposal an expert
  confirms, never a decision on its own;
- later, a study's codebook (``dictionary``) or an LLM's proposal from the schema (``proposal``).

A column placed by strong evidence is placed with high confidence; by weak evidence only, or
against the data's placement, with low confidence (asked). A column nothing places is baseline
("nothing says it was recorded after the index"), high. The expert moves columns
(:meth:`ColumnTimeline.move`): a moved column is ``given``; the verdict reads
:meth:`ColumnTimeline.known_at_index`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

# the timeline's data types live with the other structural inferences (light: the engine reads them)
from kernel_tools.inferences import (  # noqa: F401  (re-exported: where the sources find them)
    GROUP_OF,
    GROUPS,
    ORDER,
    TIMING_OF,
    ColumnTimeline,
    Placement,
    TimelineColumn,
    place,
)
from kernel_tools.vocabulary import EvidenceSource, values


@dataclass
class TimelineContext:
    """What a source reads: the data, its profiles, the task, the features and what the value
    tests decided (``timings``: :class:`kernel_tools.diagnosis.timing.Timing` per feature)."""

    df: pd.DataFrame
    profiles: dict[str, Any]
    outcome: Any
    features: list[str]
    timings: dict[str, Any]
    index: Any = None
    leaks: set[str] = field(default_factory=set)  # columns the leakage check found giving the outcome away
    entity: Any = None  # the entity (:class:`kernel_tools.diagnosis.entities.Entity`) whose records rows are


Source = Callable[[TimelineContext], dict[str, list[Placement]]]
SOURCES = values(EvidenceSource)
TIMELINE_SOURCES: dict[str, Source] = {}


def timeline_source(name: str) -> Callable[[Source], Source]:
    """Register ``propose(ctx) -> {column: [Placement, ...]}`` as the evidence source ``name``
    (one of :class:`kernel_tools.vocabulary.EvidenceSource`)."""
    if name not in SOURCES:
        raise ValueError(f"unknown evidence source {name!r}; expected one of {SOURCES}")

    def register(propose: Source) -> Source:
        TIMELINE_SOURCES[name] = propose
        return propose

    return register


# what else adds to the timings of timing.py: a study's codebook (kernel_tools.diagnosis.codebook)
# and a REDCap export's layout are the dictionary's word
TIMING_SOURCES = {"codebook": EvidenceSource.DICTIONARY, "redcap_layout": EvidenceSource.DICTIONARY,
                  "structure": EvidenceSource.STRUCTURE}


@timeline_source(EvidenceSource.VALUES)
def value_evidence(ctx: TimelineContext) -> dict[str, list[Placement]]:
    """The timings of :func:`kernel_tools.diagnosis.timing.classify_columns`: the tests on the
    data, and what a codebook added to them (its own source; weak when it said so with low
    confidence)."""
    out: dict[str, list[Placement]] = {}
    for c, tm in ctx.timings.items():
        for e in tm.evidence:
            if e["timing"] not in GROUP_OF:
                continue  # time-varying: a note on a baseline column, not a placement
            numbers = {k: v for k, v in e.items() if k not in ("timing", "test", "reason")}
            source = TIMING_SOURCES.get(str(e.get("source")), EvidenceSource.VALUES)
            strong = e.get("confidence") != "low"
            out.setdefault(c, []).append(Placement(GROUP_OF[e["timing"]], source, e["test"], e["reason"], strong,
                                                   numbers))
    return out


def build_timeline(ctx: TimelineContext, sources: dict[str, Source] | None = None) -> ColumnTimeline:
    """The timeline of ``ctx.features`` from every registered source (or ``sources``): the
    structure and names sources register when :mod:`.structure` is imported (the runner does)."""
    evidence: dict[str, list[Placement]] = {c: [] for c in ctx.features}
    for propose in (sources if sources is not None else TIMELINE_SOURCES).values():
        for c, placements in propose(ctx).items():
            if c in evidence:
                evidence[c] += placements
    label = ctx.index.label if ctx.index is not None else ""
    return ColumnTimeline({c: place(c, e) for c, e in evidence.items()}, label)
