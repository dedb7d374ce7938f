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

from dataclasses import dataclass, field
from typing import Annotated, Any

from kernel_tools.json_safe import to_json_safe
from kernel_tools.vocabulary import Confidence, InferenceKind, values

CONFIDENCES = values(Confidence)
INFERENCE_KINDS = values(InferenceKind)


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
