"""The planner's proposal merged into the session's plan, turn after turn.

A planner proposes all the pending steps again each turn. A step it proposes again keeps its
id and decision (so a question is never asked twice); steps only the expert drops (custom code,
steps the expert added) stay; the expert's plan edits are kept on the merged plan
(:func:`.plan_edits.after_merge`).
"""

from __future__ import annotations

from typing import Any

from . import plan_edits
from .episodes import Episode
from .planners import PlanUpdate
from .session import Session, Step, encode


def merge(session: Session, update: PlanUpdate, episodes: dict[str, Episode], standing: Any = None) -> None:
    """Replace the pending steps with the planner's, keeping ids/decisions of unchanged ones;
    ``standing``: plan edits given ahead of time (a decisions file's ``plan``)."""
    s = session
    previous = [st.id for st in s.plan if st.pending]
    old = {key(st): st for st in s.plan if st.pending}
    new: list[Step] = []
    for st in update.steps:
        same = old.pop(key(st), None)
        if same is not None:
            if not same.decision_id:  # the latest diagnosis words it best
                same.title, same.reason, same.columns, same.params = st.title, st.reason, st.columns, st.params
            new.append(same)
        else:
            st.id = s.new_id("s")
            new.append(st)
    # only the expert drops these: custom code, and the steps they added
    kept = [st for st in old.values() if _only_expert_drops(episodes, st) or "added" in st.by_user]
    new = kept + new
    for st in kept:
        old.pop(key(st))
    dropped = {st.decision_id for st in old.values() if st.decision_id}
    s.decisions = [d for d in s.decisions if d.decided or d.id not in dropped]
    s.plan = [st for st in s.plan if not st.pending] + new
    plan_edits.after_merge(s, episodes, previous, standing)
    if update.observation:
        s.variables["observation"] = update.observation
    s.changed("plan", steps=encode([st for st in s.plan if st.pending]), planner=update.planner)


def key(step: Step) -> tuple[Any, ...]:
    """What makes a proposed step the same step in the next proposal."""
    return (step.episode, tuple(step.finding_ids), step.code)


def _only_expert_drops(episodes: dict[str, Episode], step: Step) -> bool:
    ep = episodes.get(step.episode)
    return ep is not None and ep.only_expert_drops
