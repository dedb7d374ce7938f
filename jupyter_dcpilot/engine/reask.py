"""A failed step is a question, not an end: back to the decision that led there.

A model that cannot be cross-validated because a class has two rows is not a broken step but a
task that may be wrong (an ordered 0-10 score taken for eleven classes). When a step the run
cannot do without fails for such a reason, the co-pilot goes back to before the first step that
ran after the task card (as a backtrack does), and asks the task card again: the failure in words
first, the alternative that would not fail recommended (so ``--approve recommended`` takes it).
Where no task would do better (named classes too rare to cross-validate), the run stops with
the failure in words, as before; a backtrack is spent each time, so it never loops.
"""

from __future__ import annotations

from kernel_tools.models.evaluate import AS_A_SCORE, TOO_FEW_TO_CROSS_VALIDATE
from kernel_tools.vocabulary import StepStatus, TaskKind

from . import gatekeeping, history
from . import notebook as nb
from .episodes import Episode
from .hosts import NotebookHost
from .kernel_calls import KernelCalls
from .session import Session, Step


def task_alternative(session: Session, error: str) -> str | None:
    """The task kind that would not fail as ``error`` says, or None when the failure is not the
    task's or no other kind would do (named classes too rare)."""
    if TOO_FEW_TO_CROSS_VALIDATE not in error or session.task.kind != TaskKind.CLASSIFICATION:
        return None
    return TaskKind.REGRESSION.value if AS_A_SCORE in error else None


async def reask_task(session: Session, calls: KernelCalls, notebook: NotebookHost, failed: Step,
                     episodes: dict[str, Episode], max_backtracks: int) -> bool:
    """Go back and ask the task card again because ``failed`` failed for the task (see the module
    docstring); False (nothing done) when the failure is not the task's, no alternative would
    do, or no backtrack is left."""
    s = session
    error = failed.error or ""
    alternative = task_alternative(s, error)
    card = next((st for st in s.plan if st.status == StepStatus.DONE and st.episode in episodes
                 and episodes[st.episode].runs == "task"), None)
    if alternative is None or card is None or s.backtracks >= max_backtracks:
        return False
    reason = f"{failed.title} failed because of the task: {error}"
    if s.checkpoints:  # the steps after the task card are undone; the planner proposes them again
        await history.go_back(s, calls, notebook, s.checkpoints[0].id, f"backtracked: {reason}")
    s.backtracks += 1
    card = s.step(card.id)  # going back put the plan's steps back as they were: the card is another object
    s.diagnosed_version = -1  # findings and options follow the task
    card.status, card.note = StepStatus.PROPOSED, reason
    card.decision_id = None  # the earlier answer stays in the decision log
    decision = gatekeeping.new_decision(s, card, episodes[card.episode])
    decision.question = f"{reason}. {decision.question}"
    for option in decision.options:
        option.recommended = option.id == alternative
    decision.recommended = alternative
    s.changed("decision", decision=decision.to_dict())
    cell = await notebook.insert_markdown(nb.backtrack_markdown(failed, reason),
                                          {"dcpilot": {"step": failed.id, "kind": "backtrack"}})
    s.cells.append({"id": cell, "step": failed.id, "kind": "backtrack"})
    s.log("backtrack", f"{failed.id} ({failed.title}): {reason}; the task is asked again", step_id=failed.id,
          excluded=s.task.kind.value if s.task.kind else None)
    return True
