"""The types of a decision's parts (the sidecar and the panel carry them as JSON).

:class:`~jupyter_dcpilot.engine.session.Decision` holds these; :mod:`.schema` exports them (with
``Finding`` and ``Option``) as the JSON Schema the panel's TypeScript types are generated from.
The small ones are ``TypedDict``s: JSON-shaped already, checked by mypy. A JSON value built to one
of these shapes (the MCP tools' answers) is annotated ``Annotated[dict[str, Any], Wire(Decision)]``:
mypy sees the dict, the schema sees the shape.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, TypedDict

from kernel_tools.findings import Option
from kernel_tools.vocabulary import Confidence, InferenceKind


@dataclass(frozen=True)
class Wire:
    """Marker in ``Annotated[python_type, Wire(shape)]``: on the wire the value has ``shape``."""

    shape: Any


class ChartBar(TypedDict):
    """One bar of a decision's chart."""

    label: str
    value: float


class Chart(TypedDict):
    """A decision's evidence as a small bar chart (engine/charts.py)."""

    title: str
    unit: str
    bars: list[ChartBar]
    threshold: float | None


class _ImpactExtras(TypedDict, total=False):
    scores: list[float | None]  # the score of each perturbed refit
    error: str  # why this option could not be estimated
    elapsed_s: float


class Impact(_ImpactExtras):
    """What one option would do to a refit model, estimated on a sample (engine/impact.py)."""

    metric: str
    mean: float | None
    sd: float | None
    rows: int | None
    columns: int | None
    top_features: list[str]
    flags: list[str]


class _ImpactSummaryExtras(TypedDict, total=False):
    best: str | None  # the option with the best mean score among those without a validity flag
    spread: float | None  # best minus worst mean score
    barely_differ: bool
    note: str
    sample_rows: int | None
    perturbations: int
    elapsed_s: float | None
    options: list[str]  # the options being estimated (while running)
    error: str


class ImpactSummary(_ImpactSummaryExtras):
    """How the options of a decision compare, while and after they are estimated."""

    status: Literal["running", "done", "cancelled", "failed"]


class AgentProposal(TypedDict):
    """An agent's answer to a decision (through the MCP tools): shown beside the question for the
    person to accept, or the answer itself when the user lets agents decide its gate
    (``c.DCPilot.agent_may_decide``; the decision's ``by`` is then "agent")."""

    agent: str  # the agent's name, as its MCP client or jupyter-ai persona gives it
    choice: str
    rationale: str
    at: str


class _PastAnswerExtras(TypedDict, total=False):
    proposal: AgentProposal  # an agent's proposal standing when the answer was undone


class PastAnswer(_PastAnswerExtras):
    """An answer to a decision that was undone (the decision was asked again)."""

    choice: str | None
    by: str | None
    at: str | None
    rationale: str
    undone: str  # why
    undone_at: str


class AlternativeWire(TypedDict):
    """Another value a structural inference could take, with its evidence (``score``: the rank
    within its inference, higher is likelier)."""

    value: Any
    evidence: list[str]
    score: float


class InferenceWire(TypedDict):
    """A structural choice (``kernel_tools.inferences.Inference``): the task, the survival time, the
    entity, the prediction time, a join key or a column's timing, with its confidence, its evidence
    in words and the alternatives ranked best first. A decision lists those it asks about: a
    person's answer confirms them (engine/structure.py)."""

    id: str  # what, or what:subject (timing:los, join_key:df+labs)
    what: Annotated[str, InferenceKind]
    subject: str | None  # the column of a timing, the two frames of a join key
    value: Any
    confidence: Annotated[str, Confidence]
    evidence: list[str]
    alternatives: list[AlternativeWire]
    details: dict[str, Any]


@dataclass
class DecisionOption(Option):
    """One answer a decision offers: a finding's option (or one the engine adds: confirm the task,
    run or skip custom code), with its estimated impact once computed."""

    impact: Impact | None = field(default=None, metadata={"may_be_absent": True})

    def to_dict(self) -> dict[str, Any]:
        out = super().to_dict()
        if self.impact is not None:
            out["impact"] = self.impact
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> DecisionOption:
        option = cls(**vars(Option.from_dict(d)))
        option.impact = d.get("impact")
        return option

    @classmethod
    def of(cls, option: Option) -> DecisionOption:
        """A finding's option, offered by a decision."""
        return cls(**vars(option))


def skip_option() -> DecisionOption:
    """The answer that declines a step: it does not run, and what it would change stays as it is."""
    return DecisionOption(id="skip", label="Skip", description="Do not run this step.",
                          risk="what the step would change stays as it is", recommended=False, action=None)


__all__ = ["Wire", "AgentProposal", "AlternativeWire", "Chart", "ChartBar", "DecisionOption", "Impact", "ImpactSummary",
           "InferenceWire", "PastAnswer", "skip_option"]
