"""Structural inferences: what a diagnosis decided about the table's structure, how sure it is,
and why.

The task kind, the survival time, the entity, the prediction index, a join key and each
column's timing are not findings (nothing is wrong) but choices every later step rests on. Each
is an :class:`Inference`: the chosen value, a confidence that is *earned* (``high`` only on
clear evidence; ``low`` when alternatives are close or the evidence is weak; ``given`` when the
user said so), the evidence in words, and the alternatives ranked with theirs. A low-confidence
inference is data the co-pilot turns into a question at its gate, never a silent default.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Annotated, Any

from kernel_tools.json_safe import to_json_safe
from kernel_tools.vocabulary import Confidence, EvidenceSource, InferenceKind, TimelineGroup, values

CONFIDENCES = values(Confidence)
INFERENCE_KINDS = values(InferenceKind)
# the task read as survival on a status of several codes with another code censored: an
# alternative's value, which the task card offers as ``censored:<code>``
STATUS_READING = re.compile(r"^survival with (\S+) censored$")


def status_reading(code: float | str) -> str:
    """The value of the task read as survival with ``code`` (a number, or a label of a status
    stored as text) censored (see :data:`STATUS_READING`)."""
    return f"survival with {code if isinstance(code, str) else format(code, 'g')} censored"


@dataclass
class Alternative:
    """Another value the inference could have taken, with its evidence (``score``: the rank,
    higher is more likely; comparable within one inference only)."""

    value: Any
    evidence: list[str] = field(default_factory=list)
    score: float = 0.0

    def to_dict(self) -> dict:
        return {"value": to_json_safe(self.value), "evidence": list(self.evidence), "score": round(float(self.score), 4)}

    @classmethod
    def from_dict(cls, d: dict) -> Alternative:
        return cls(d.get("value"), list(d.get("evidence") or []), float(d.get("score", 0.0)))


@dataclass
class Inference:
    """One structural choice: ``what`` (an :class:`InferenceKind`), about ``subject`` (the column
    of a timing, the pair of frames of a join key; None for the table), its ``value``, its
    ``confidence``, its ``evidence`` and the ``alternatives`` ranked best first. ``details``
    holds structured facts the evidence sentences state (event codes, counts)."""

    what: Annotated[str, InferenceKind]
    value: Any
    confidence: Annotated[str, Confidence]
    evidence: list[str] = field(default_factory=list)
    alternatives: list[Alternative] = field(default_factory=list)
    subject: str | None = None
    details: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.what not in INFERENCE_KINDS:
            raise ValueError(f"unknown inference {self.what!r}; expected one of {INFERENCE_KINDS}")
        if self.confidence not in CONFIDENCES:
            raise ValueError(f"confidence must be one of {CONFIDENCES}, got {self.confidence!r}")

    @property
    def id(self) -> str:
        return f"{self.what}:{self.subject}" if self.subject else self.what

    @property
    def settled(self) -> bool:
        """Given by the user or inferred on clear evidence: nothing an expert must confirm."""
        return self.confidence in (Confidence.GIVEN, Confidence.HIGH)

    def to_dict(self) -> dict:
        return {"id": self.id, "what": self.what, "subject": self.subject, "value": to_json_safe(self.value),
                "confidence": self.confidence, "evidence": list(self.evidence),
                "alternatives": [a.to_dict() for a in self.alternatives], "details": to_json_safe(self.details)}

    @classmethod
    def from_dict(cls, d: dict) -> Inference:
        return cls(d["what"], d.get("value"), d["confidence"], list(d.get("evidence") or []),
                   [Alternative.from_dict(a) for a in d.get("alternatives") or []], d.get("subject"),
                   dict(d.get("details") or {}))


def unsettled(inferences: list[Inference]) -> list[Inference]:
    """The inferences an expert must confirm (neither given nor of high confidence)."""
    return [i for i in inferences if not i.settled]


# -- the column timeline's data (built by kernel_tools.diagnosis.timeline from its evidence sources)
GROUPS = values(TimelineGroup)
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
    # columns computed from another (a ratio by a few constants, a linear copy): each a dict of its
    # ``column``, ``source``, ``relation`` in words and ``share`` of rows; a move of the source moves them
    derived: list[dict] = field(default_factory=list)

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
        columns = {**self.columns, column: replace(self.columns[column], group=group, confidence=Confidence.GIVEN)}
        for d in self.derived:
            follower = columns.get(d["column"])
            if d["source"] != column or follower is None or follower.confidence == Confidence.GIVEN:
                continue
            # computed from the moved column, known when it is: it follows, asked (a person moved only the source)
            why = Placement(group, EvidenceSource.STRUCTURE, "computed_from_moved",
                            f"'{d['column']}' is '{column}' {d['relation']} on {d['share']:.0%} of rows: computed from "
                            f"it, known when it is; '{column}' was moved to {group}", False, dict(d))
            columns[d["column"]] = replace(follower, group=group, confidence=Confidence.LOW,
                                           evidence=(*follower.evidence, why))
        return ColumnTimeline(columns, self.index, self.derived)

    def to_dict(self) -> dict:
        return {"index": self.index, "groups": self.groups(),
                "columns": {c: e.to_dict() for c, e in self.columns.items()},
                "derived": to_json_safe(self.derived)}

    @classmethod
    def from_dict(cls, d: dict) -> ColumnTimeline:
        return cls({c: TimelineColumn.from_dict(e) for c, e in (d.get("columns") or {}).items()}, d.get("index", ""),
                   list(d.get("derived") or []))


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
