"""History: going back to a checkpoint, by a backtrack or by the expert's undo.

Every step that changes variables ran after a checkpoint of them (see the worker). Going back
restores those variables in the kernel, deletes the co-pilot's cells written since, and puts
the session's plan back as it was: a backtrack marks the steps since ``undone`` and excludes
the option taken, an undo (``reopen``) makes them pending again with their questions reopened.
"""

from __future__ import annotations

from jupyter_dcpilot.probe import ProbeError
from kernel_tools.vocabulary import RAN, StepStatus

from . import notebook as nb
from .hosts import NotebookHost
from .kernel_calls import KernelCalls
from .planners import PlanUpdate
from .session import Session, Step


def backtrack_request(session: Session, update: PlanUpdate, max_backtracks: int) -> tuple[Step, str] | None:
    """``(step, reason)`` to backtrack to before this turn plans: the expert's oldest rejection
    of a result, else the planner's request when backtracks are left and the step can be
    undone; None otherwise. Takes the rejection off the session's list."""
    s = session
    if s.rejections:
        rejection = s.rejections.pop(0)
        return s.step(rejection["step_id"]), f"the expert rejected the result: {rejection['reason']}"
    if update.backtrack and s.backtracks < max_backtracks:
        try:
            step = s.step(update.backtrack.get("step_id", ""))
        except KeyError:
            return None
        if step.status == StepStatus.DONE and step.checkpoint_id:
            return step, f"{update.planner} planner: {update.backtrack.get('reason', '')}"
    return None


async def backtrack(session: Session, calls: KernelCalls, notebook: NotebookHost, step: Step,
                    reason: str) -> None:
    """Restore the checkpoint before ``step``, exclude the option taken, record why (in the
    session's log and a markdown cell)."""
    s = session
    if not step.checkpoint_id:
        raise ValueError(f"step {step.id} has no checkpoint to go back to")
    choice = s.decision(step.decision_id).choice if step.decision_id else None
    await go_back(s, calls, notebook, step.checkpoint_id, f"backtracked: {reason}")
    if choice is not None:
        for fid in step.finding_ids:
            s.exclusions.setdefault(fid, []).append(choice)
    elif step.finding_ids:
        s.handled += [f for f in step.finding_ids if f not in s.handled]
    s.backtracks += 1
    cell = await notebook.insert_markdown(nb.backtrack_markdown(step, reason),
                                          {"dcpilot": {"step": step.id, "kind": "backtrack"}})
    s.cells.append({"id": cell, "step": step.id, "kind": "backtrack"})
    s.log("backtrack", f"{step.id} ({step.title}): {reason}", step_id=step.id,
          excluded=choice)


async def go_back(session: Session, calls: KernelCalls, notebook: NotebookHost, checkpoint_id: str,
                  reason: str, *, reopen: bool = False) -> None:
    """Back to before a checkpoint's step: the kernel's variables, the notebook's cells and the
    session's plan. ``reopen``: the steps since are pending again (an undo), else ``undone``."""
    s = session
    cp = s.checkpoint(checkpoint_id)
    # e.g. its spill was cut short by a kernel death: say so before anything is restored
    problem = (await calls.checkpoint_problem(cp.id)).get("problem")
    if problem:
        raise ValueError(f"cannot undo to {cp.id} ({cp.label}): {problem}")
    later = s.checkpoints[s.checkpoints.index(cp) + 1 :]
    for c in reversed(later):  # newest first: each unbinds what its step created
        try:
            await calls.checkpoint_restore(c.id)
        except ProbeError as exc:  # e.g. a spilled snapshot lost with the kernel
            s.log("error", f"could not restore checkpoint {c.id} ({c.label}): {exc}")
    await calls.checkpoint_restore(cp.id)
    doomed = s.cells_after(cp.id)
    if doomed:
        await notebook.delete_cells(doomed)
    s.cells = s.cells[: cp.cell_count]
    before = {st.id for st in cp.snapshot.plan if not st.pending}
    undone = [st for st in s.plan if st.id not in before and st.status in RAN]
    waiting = [st for st in s.plan if st.pending and st.id not in before]
    s.restore_snapshot(cp.snapshot)
    if reopen:
        for st in undone:
            reset(s, st, reason, ask_user=st.id == cp.step_id)
        s.plan = [st for st in s.plan if not st.pending] + undone + waiting
    else:
        for st in undone:
            st.status, st.note, st.cell_ids = StepStatus.UNDONE, reason, []
        s.plan = [st for st in s.plan if not st.pending] + undone
    for c in [cp, *later]:
        try:
            await calls.checkpoint_discard(c.id)
        except ProbeError:
            pass
    s.checkpoints = s.checkpoints[: s.checkpoints.index(cp)]
    s.changed("undo", checkpoint=checkpoint_id, reason=reason, steps=[st.id for st in undone])


def reset(session: Session, step: Step, reason: str, ask_user: bool) -> None:
    """An undone step back to proposed. Its decision is reopened for the user when
    ``ask_user`` (the step undone to) or when the user answered it; an approval policy's
    answer is dropped instead, so the policy decides afresh when the step comes up."""
    s = session
    step.status, step.note, step.cell_ids = StepStatus.PROPOSED, reason, []
    step.checkpoint_id, step.attempts, step.error, step.started = None, 0, None, None
    step.result, step.checks = {}, []
    step.titled_by(None)  # asked again (or by the policy afresh): the plan's title
    decision = next((d for d in s.decisions if d.id == step.decision_id), None)
    if decision is not None and (ask_user or decision.by == "user"):
        decision.reopen(reason)
        decision.clear_impact()  # estimated on the data before the undo
        s.changed("decision", decision=decision.to_dict())
    else:
        s.decisions = [d for d in s.decisions if d is not decision]
        step.decision_id = None


async def restore_interrupted(session: Session, calls: KernelCalls) -> None:
    """After an interrupt outside a cell: a step cut off while running gets its variables back
    and is failed, so the next run proposes it again."""
    s = session
    for step in [st for st in s.plan if st.status == StepStatus.RUNNING]:
        if step.checkpoint_id:
            try:
                await calls.checkpoint_restore(step.checkpoint_id)
            except ProbeError as exc:
                if exc.ename == "KeyboardInterrupt":  # held by the restore until it was whole (kernel_tools)
                    s.log("restore", f"interrupted again while {step.checkpoint_id} was restored; "
                          "the restore finished first", step_id=step.id)
                else:
                    s.log("error", f"could not restore {step.checkpoint_id} after the interrupt: {exc}")
        step.status, step.note = StepStatus.FAILED, "interrupted by the user"
        s.changed("step", step=step.id, status=step.status, note=step.note)

