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
from dataclasses import dataclass, field, replace
from typing import Any

import pandas as pd

from kernel_tools.inferences import Alternative, Inference
from kernel_tools.json_safe import to_json_safe
from kernel_tools.vocabulary import Confidence, EvidenceSource, InferenceKind, TimelineGroup, values

GROUPS = values(TimelineGroup)
SOURCES = values(EvidenceSource)
# a timing of kernel_tools.diagnosis.timing -> its group
GROUP_OF = {"baseline": TimelineGroup.BASELINE, "follow_up": TimelineGroup.DURING_FOLLOW_UP,
            "outcome_derived": TimelineGroup.AT_OR_AFTER_OUTCOME, "unknown": TimelineGroup.UNKNOWN}
TIMING_OF: dict[str, str] = {str(v): k for k, v in GROUP_OF.items()}
ORDER = {TimelineGroup.UNKNOWN: 0, TimelineGroup.BASELINE: 1, TimelineGroup.DURING_FOLLOW_UP: 2,
         TimelineGroup.AT_OR_AFTER_OUTCOME: 3}


@dataclass(frozen=True)
class Placement:
    """One source's word on one column: the group, the test, why, and whether it is decisive
    on its own (``strong``: a test on the data) or only a proposal (a name)."""

    group: str
    source: str
    test: str
    reason: str
    strong: bool = True
    numbers: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"group": self.group, "source": self.source, "test": self.test, "reason": self.reason,
                "strong": self.strong, "numbers": to_json_safe(self.numbers)}

    @classmethod
    def from_dict(cls, d: dict) -> Placement:
        return cls(d["group"], d["source"], d["test"], d["reason"], bool(d.get("strong", True)),
                   dict(d.get("numbers") or {}))


@dataclass(frozen=True)
class TimelineColumn:
    """One column on the timeline: its group, confidence and the evidence behind them."""

    column: str
    group: str
    confidence: str
    evidence: tuple[Placement, ...] = ()

    @property
    def known_at_index(self) -> bool:
        return self.group == TimelineGroup.BASELINE

    def inference(self) -> Inference:
        proposed = {p.group for p in self.evidence if p.group != self.group}
        words = [p.reason for p in self.evidence if p.group == self.group] or [
            "nothing places it after the index"]
        alternatives = [Alternative(g, [p.reason for p in self.evidence if p.group == g],
                                    sum(p.strong for p in self.evidence if p.group == g) + 0.5)
                        for g in sorted(proposed, key=lambda g: -ORDER[TimelineGroup(g)])]
        return Inference(InferenceKind.TIMING, self.group, self.confidence, words, alternatives, subject=self.column,
                         details={"sources": sorted({p.source for p in self.evidence})})

    def to_dict(self) -> dict:
        return {"column": self.column, "group": self.group, "confidence": self.confidence,
                "evidence": [p.to_dict() for p in self.evidence]}

    @classmethod
    def from_dict(cls, d: dict) -> TimelineColumn:
        return cls(d["column"], d["group"], d["confidence"], tuple(Placement.from_dict(p) for p in d.get("evidence") or []))


@dataclass
class ColumnTimeline:
    """Every feature of a diagnosis on the timeline of its task (``index``: when a prediction
    is made, in words)."""

    columns: dict[str, TimelineColumn]
    index: str = ""

    def groups(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {g: [] for g in GROUPS}
        for c in self.columns.values():
            out[c.group].append(c.column)
        return out

    def known_at_index(self, column: str) -> bool:
        """Whether ``column`` is known when a prediction is made (a column not on the timeline
        is not a feature the diagnosis saw: unknown, so not known)."""
        entry = self.columns.get(column)
        return entry is not None and entry.known_at_index

    def unsettled(self) -> list[TimelineColumn]:
        """The columns whose place an expert must confirm."""
        return [c for c in self.columns.values() if c.confidence == Confidence.LOW]

    def inferences(self) -> list[Inference]:
        """A timing inference for each column some evidence speaks about."""
        return [c.inference() for c in self.columns.values() if c.evidence]

    def move(self, column: str, group: str) -> ColumnTimeline:
        """A new timeline with ``column`` moved to ``group`` by a person (confidence ``given``)."""
        if group not in GROUPS:
            raise ValueError(f"group must be one of {GROUPS}, got {group!r}")
        if column not in self.columns:
            raise KeyError(f"{column!r} is not on the timeline")
        moved = replace(self.columns[column], group=group, confidence=Confidence.GIVEN)
        return ColumnTimeline({**self.columns, column: moved}, self.index)

    def to_dict(self) -> dict:
        return {"index": self.index, "groups": self.groups(),
                "columns": {c: e.to_dict() for c, e in self.columns.items()}}

    @classmethod
    def from_dict(cls, d: dict) -> ColumnTimeline:
        return cls({c: TimelineColumn.from_dict(e) for c, e in (d.get("columns") or {}).items()}, d.get("index", ""))


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


Source = Callable[[TimelineContext], dict[str, list[Placement]]]
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


def place(column: str, evidence: list[Placement]) -> TimelineColumn:
    """The group and confidence of one column from all its evidence."""
    strong = [p for p in evidence if p.strong]
    weak = [p for p in evidence if not p.strong]
    if strong:
        group = max((TimelineGroup(p.group) for p in strong), key=ORDER.__getitem__)
        # a name saying later than the data's baseline is a disagreement to ask about
        against = [p for p in weak if ORDER[TimelineGroup(p.group)] > ORDER[group]]
        if against and group == TimelineGroup.BASELINE:
            return TimelineColumn(column, TimelineGroup.UNKNOWN, Confidence.LOW, tuple(evidence))
        return TimelineColumn(column, group, Confidence.HIGH, tuple(evidence))
    if weak:
        group = max((TimelineGroup(p.group) for p in weak), key=ORDER.__getitem__)
        return TimelineColumn(column, group, Confidence.LOW, tuple(evidence))
    return TimelineColumn(column, TimelineGroup.BASELINE, Confidence.HIGH, ())


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
