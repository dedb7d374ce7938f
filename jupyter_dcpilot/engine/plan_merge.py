"""The planner's proposal merged into the session's plan, turn after turn.

A planner proposes all the pending steps again each turn. A step it proposes again keeps its
id and decision (so a question is never asked twice); steps only the expert drops (custom code,
steps the expert added) stay; the expert's plan edits are kept on the merged plan
(:func:`.plan_edits.after_merge`).

A step the expert edited (new parameters, moved) that the planner does not propose again as
such — its finding changed with the data, say after an aggregation — hands its edits and its id
to the step of the same episode the planner proposes now; when there is none, its edits lapse,
and the notebook and the transcript say which and why (never a silent loss).
"""

from __future__ import annotations

from typing import Any

from kernel_tools.vocabulary import StepStatus

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
    fresh: list[Step] = []  # proposed for the first time
    for st in update.steps:
        same = old.pop(key(st), None)
        if same is not None:
            if not same.decision_id:  # the latest diagnosis words it best
                same.title, same.reason, same.columns, same.params = st.title, st.reason, st.columns, st.params
            new.append(same)
        else:
            st.id = s.new_id("s")
            new.append(st)
            fresh.append(st)
    # only the expert drops these: custom code, and the steps they added
    kept = [st for st in old.values() if _only_expert_drops(episodes, st) or "added" in st.by_user]
    new = kept + new
    for st in kept:
        old.pop(key(st))
    for st in [st for st in old.values() if st.by_user]:
        heir = _heir(st, fresh)
        if heir is not None:
            _inherit(heir, st)
            fresh.remove(heir)
        else:
            plan_edits.lapse(s, st, _why_lapsed(s, st, episodes))
    dropped = {st.decision_id for st in old.values() if st.decision_id}
    s.decisions = [d for d in s.decisions if d.decided or d.id not in dropped]
    s.plan = plan_edits.keep_places(s.plan, new)
    plan_edits.after_merge(s, episodes, previous, standing)
    if update.observation:
        s.variables["observation"] = update.observation
    s.changed("plan", steps=encode([st for st in s.plan if st.pending]), planner=update.planner)


def key(step: Step) -> tuple[Any, ...]:
    """What makes a proposed step the same step in the next proposal."""
    return (step.episode, tuple(step.finding_ids), step.code)


def _heir(step: Step, fresh: list[Step]) -> Step | None:
    """The newly proposed step an edited step's edits go to: of the same episode, sharing a
    column when both name some."""
    same = [st for st in fresh if st.episode == step.episode]
    sharing = [st for st in same if set(st.columns) & set(step.columns)]
    candidates = sharing or (same if not step.columns or len(same) == 1 else [])
    return candidates[0] if candidates else None


def _inherit(heir: Step, step: Step) -> None:
    """The expert's edits (and the id they named) go to the step that replaces ``step``."""
    heir.id, heir.by_user, heir.user_params = step.id, list(step.by_user), dict(step.user_params)
    heir.note = "re-planned on the data as it is now; your edits kept"


def _why_lapsed(session: Session, step: Step, episodes: dict[str, Episode]) -> str:
    """In words: the re-plan after the last done step has no step of this kind any more."""
    last = next((st for st in reversed(session.plan) if st.status == StepStatus.DONE), None)
    after = f" after {last.id} ({last.title})" if last is not None else ""
    ep = episodes.get(step.episode)
    what = ep.name.lower() if ep is not None else step.episode
    on = f" on {', '.join(step.columns)}" if step.columns else ""
    return (f"the plan made again{after} has no '{what}' step{on}: the diagnosis of the data as it is now "
            f"no longer finds what {step.id} ({step.title}) was to fix")


def _only_expert_drops(episodes: dict[str, Episode], step: Step) -> bool:
    ep = episodes.get(step.episode)
    return ep is not None and ep.only_expert_drops
