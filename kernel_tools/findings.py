"""Typed, JSON-serialisable results of :func:`kernel_tools.diagnose`.

A :class:`Finding` is one data-centric problem (its kind is a name of the issue taxonomy), the
numbers behind it and what could be done about it. Each :class:`Option` carries the exact
``kernel_tools`` call it stands for, so the co-pilot never has to invent code for a decision.

Their fields are the JSON Schema the panel's types are generated from
(``jupyter_dcpilot/engine/schema.py``): ``Annotated[str, Gate]`` says the string is one of that
vocabulary's, and ``wire_properties`` names the properties ``to_dict`` writes besides the fields.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Annotated, Any, ClassVar

from kernel_tools.json_safe import to_json_safe
from kernel_tools.vocabulary import GATES, SEVERITIES, Chart, FindingKind, Gate, Severity, finding_kinds, values

CHARTS = values(Chart)


@dataclass
class Option:
    """One thing that could be done about a finding; ``action`` is the kernel_tools call."""

    id: str
    label: str
    description: str
    risk: str
    recommended: bool = False
    action: dict | None = None

    def to_dict(self) -> dict:
        return {
            "id": self.id,
            "label": self.label,
            "description": self.description,
            "risk": self.risk,
            "recommended": bool(self.recommended),
            "action": to_json_safe(self.action),
        }

    @classmethod
    def from_dict(cls, d: dict) -> Option:
        return cls(
            id=d["id"],
            label=d["label"],
            description=d["description"],
            risk=d["risk"],
            recommended=bool(d.get("recommended", False)),
            action=d.get("action"),
        )


@dataclass
class Finding:
    """One problem in the data, the evidence for it and the options (one recommended)."""

    kind: Annotated[str, FindingKind]
    columns: list[str]
    severity: Annotated[str, Severity]
    summary: str
    evidence: dict = field(default_factory=dict)
    options: list[Option] = field(default_factory=list)
    gate: Annotated[str | None, Gate] = None
    # the decision card's chart of its evidence, as its kind's detector declared it: diagnose sends
    # it with the finding from the kernel, where the detectors are loaded, so a host draws it without
    # loading them (and pandas). None: not said (e.g. a finding of an old sidecar).
    chart: Annotated[str | None, Chart] = field(default=None, metadata={"may_be_absent": True})

    wire_properties: ClassVar[tuple[str, ...]] = ("id",)

    def __post_init__(self) -> None:
        kinds = finding_kinds()
        if self.kind not in kinds:
            raise ValueError(f"unknown finding kind {self.kind!r}; expected one of {kinds}")
        if self.chart is not None and self.chart not in CHARTS:  # (one read from JSON is not refused:
            raise ValueError(f"chart must be None or one of {CHARTS}, got {self.chart!r}")  # it is not drawn)
        self._check()

    def _check(self) -> None:
        if self.severity not in SEVERITIES:
            raise ValueError(f"severity must be one of {SEVERITIES}, got {self.severity!r}")
        if self.gate is not None and self.gate not in GATES:
            raise ValueError(f"gate must be None or one of {GATES}, got {self.gate!r}")
        self.columns = [str(c) for c in self.columns]
        if self.options and sum(o.recommended for o in self.options) != 1:
            raise ValueError(f"finding {self.kind} needs exactly one recommended option")

    @property
    def id(self) -> str:
        return f"{self.kind}:{','.join(self.columns)}"

    @property
    def recommended(self) -> Option | None:
        return next((o for o in self.options if o.recommended), None)

    def to_dict(self) -> dict:
        return {
            "id": self.id,
            "kind": self.kind,
            "columns": list(self.columns),
            "severity": self.severity,
            "summary": self.summary,
            "evidence": to_json_safe(self.evidence),
            "options": [o.to_dict() for o in self.options],
            "gate": self.gate,
            **({"chart": self.chart} if self.chart is not None else {}),
        }

    @classmethod
    def from_dict(cls, d: dict) -> Finding:
        """A finding from its JSON (the kernel's, a sidecar's). Its kind is not checked against
        this process's vocabulary: a detector of the kernel that wrote it may have declared it
        (the co-pilot's server never loads the detectors); the rest is checked as always."""
        kind = d["kind"]
        if not isinstance(kind, str) or not kind:
            raise ValueError(f"a finding's kind must be a name, not {kind!r}")
        finding = cls.__new__(cls)
        finding.kind, finding.columns, finding.severity = kind, list(d["columns"]), d["severity"]
        finding.summary, finding.evidence = d["summary"], dict(d.get("evidence") or {})
        finding.options = [Option.from_dict(o) for o in d.get("options") or []]
        finding.gate, finding.chart = d.get("gate"), d.get("chart")
        finding._check()
        return finding


@dataclass
class Diagnosis:
    """All findings for one frame, the inferred task and per-column numbers for the plots, the
    structural inferences (:class:`kernel_tools.inferences.Inference`: task, entity, index ...
    each with its confidence) and the column timeline
    (:class:`kernel_tools.inferences.ColumnTimeline`)."""

    findings: list[Finding]
    task: dict
    shape: list[int]
    elapsed_s: float = 0.0
    sample_size: int = 0
    column_stats: dict = field(default_factory=dict)
    inferences: list[Any] = field(default_factory=list)
    timeline: Any = None

    def by_kind(self, kind: str) -> list[Finding]:
        return [f for f in self.findings if f.kind == kind]

    def inference(self, what: str, subject: str | None = None) -> Any:
        """The inference of this kind (about ``subject``), or None."""
        return next((i for i in self.inferences if i.what == what and i.subject == subject), None)

    def to_dict(self) -> dict:
        return {
            "findings": [f.to_dict() for f in self.findings],
            "task": to_json_safe(self.task),
            "shape": [int(x) for x in self.shape],
            "elapsed_s": float(self.elapsed_s),
            "sample_size": int(self.sample_size),
            "column_stats": to_json_safe(self.column_stats),
            "inferences": [i.to_dict() for i in self.inferences],
            "timeline": self.timeline.to_dict() if self.timeline is not None else None,
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict())

    @classmethod
    def from_dict(cls, d: dict) -> Diagnosis:
        # both modules build on this one: imported here, not at the top
        from kernel_tools.inferences import ColumnTimeline, Inference

        return cls(
            findings=[Finding.from_dict(f) for f in d.get("findings", [])],
            task=dict(d.get("task") or {}),
            shape=list(d.get("shape") or [0, 0]),
            elapsed_s=float(d.get("elapsed_s", 0.0)),
            sample_size=int(d.get("sample_size", 0)),
            column_stats=dict(d.get("column_stats") or {}),
            inferences=[Inference.from_dict(i) for i in d.get("inferences") or []],
            timeline=ColumnTimeline.from_dict(d["timeline"]) if d.get("timeline") else None,
        )

    def __repr__(self) -> str:
        kinds = ", ".join(f.id for f in self.findings) or "no findings"
        return f"Diagnosis(task={self.task.get('kind')!r}, shape={self.shape}, findings=[{kinds}])"

    def _repr_html_(self) -> str:
        from kernel_tools.diagnosis.display import diagnosis_html

        return diagnosis_html(self)

