"""Planners revise the next steps of a session: a deterministic rule planner and Claude."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from ..session import Session, Step


@dataclass
class PlanUpdate:
    """What a planner proposes: the pending steps in order, and whether to backtrack first."""

    steps: list[Step]
    observation: str = ""
    backtrack: dict[str, Any] | None = None  # {"step_id": ..., "reason": ...}
    planner: str = "rules"
    notes: list[str] = field(default_factory=list)


class Planner(Protocol):
    name: str

    async def revise(self, session: Session) -> PlanUpdate: ...


from .claude import ClaudePlanner  # noqa: E402
from .rules import RulePlanner  # noqa: E402

__all__ = ["PlanUpdate", "Planner", "RulePlanner", "ClaudePlanner"]
