"""The coordinator: observe → backtrack? → plan → gate → execute → validate, step by step.

:meth:`Coordinator.run_until_blocked` runs turns until a step needs a human decision (it
returns ``"blocked"``; the step stays ``awaiting_decision``), the plan is finished, or a step
the model cannot do without failed. Record a decision with :meth:`Session.decide` and call it
again to resume. Gates are enforced here, in the only code path that executes steps: a gated
step never reaches the worker before its decision exists.

The coordinator orchestrates; its parts live in their own modules: :mod:`.observation` (the
diagnosis), :mod:`.plan_merge`, :mod:`.gatekeeping` (decisions and who answers them),
:mod:`.history` (backtrack and undo), :mod:`.model_audit` (a score too good to be true, the
verdict) and the :mod:`.worker` (one step, one cell).
"""

from __future__ import annotations

import asyncio
from typing import Any

from jupyter_dcpilot.probe import ProbeError
from kernel_tools.vocabulary import LEAKAGE_SCORE, SessionState, StepGate, StepStatus

from . import fingerprint, gatekeeping, history, impact, model_audit, plan_edits, reask, structure
from . import notebook as nb
from .budgets import Budgets
from .episodes import Episode, library
from .errors import in_words
from .gatekeeping import ApprovalPolicy, stdin_prompt
from .hosts import KernelProbe, NotebookHost
from .kernel_calls import KernelCalls
from .observation import observe
from .plan_merge import merge
from .planners import RulePlanner
from .report import build_report
from .session import EditRecord, Session, Step
from .validity import NO_FEATURES, Check, approved_by, nothing_to_fit_words
from .worker import Stop, Worker

__all__ = ["ApprovalPolicy", "Coordinator", "stdin_prompt"]  # the policy: its home is .gatekeeping


class Coordinator:
    """Runs a session's loop on a kernel and a notebook; see the module docstring."""

    def __init__(self, session: Session, kernel: KernelProbe, notebook: NotebookHost, *,
                 planner: Any = None, policy: ApprovalPolicy | None = None,
                 episodes: dict[str, Episode] | None = None, max_attempts: int = 3,
                 max_backtracks: int = 3, suspicious_score: float = LEAKAGE_SCORE,
                 max_turns: int = 200, budgets: Budgets | None = None, stop: Stop | None = None,
                 tick: float | None = None, estimate_impact: bool = False) -> None:
        """``budgets``: seconds per kind of step (default: the session's settings, else the
        episodes' defaults, :func:`~.budgets.defaults`); ``stop``: interrupts the kernel, so a
        step far past its budget is stopped and rolled back (without it, it only reports being
        over budget); ``tick``: seconds between progress events; ``estimate_impact``: each gated
        decision's options are estimated (:mod:`.impact`) before anyone answers it (a headless
        run's report then shows what each choice would have done)."""
        self.estimate_impact = estimate_impact
        self.episodes = episodes if episodes is not None else library()
        if budgets is None:
            budgets = Budgets.from_spec(session.settings.get("budgets"), episodes=self.episodes)
        session.settings["budgets"] = budgets.to_dict()
        self.budgets = budgets
        self.tick = tick
        self.session = session
        self.kernel = kernel
        self.calls = KernelCalls(kernel)
        self.notebook = notebook
        self.rules = RulePlanner(self.episodes)
        self.planner = planner if planner is not None else self.rules
        self.policy = policy if policy is not None else ApprovalPolicy()
        repair = getattr(self.planner, "repair", None)
        self.interrupted = False  # set by interrupt(): the running step stops, no retry
        self._pausing = False  # set by undo(): a run in progress stops at its next turn
        self.worker = Worker(session, kernel, notebook, self.episodes, repair=repair,
                             max_attempts=max_attempts, interrupted=lambda: self.interrupted,
                             budgets=budgets, stop=stop, tick=tick)
        self.max_backtracks = max_backtracks
        self.suspicious_score = suspicious_score
        self.max_turns = max_turns
        self._lock = asyncio.Lock()
        self._markdown: asyncio.Future[str] | None = None  # the decision cell being written

    # -- the loop ------------------------------------------------------------------------
    async def run_until_blocked(self) -> str:
        """Run turns until blocked on a decision, finished or failed; returns that state.

        Calls are serialised (a second call waits for the first), so a host may call it from
        several requests."""
        async with self._lock:
            try:
                return await self._run()
            except Exception as exc:  # recorded for the panel and the sidecar, then raised
                running = [st for st in self.session.plan if st.status == StepStatus.RUNNING]
                doing = (f"running step {running[0].id} ({running[0].title})" if running
                         else "planning the next step")
                message = in_words(exc, doing)
                for step in running:  # e.g. the kernel died under it: never left "running"
                    step.status, step.error = StepStatus.FAILED, message
                    step.note = "cut short: the kernel or the notebook stopped answering"
                    self.session.changed("step", step=step.id, status=StepStatus.FAILED, result=None)
                self.session.log("error", f"the co-pilot stopped: {message}")
                self._finish(SessionState.FAILED)
                raise

    async def _run(self) -> str:
        s = self.session
        self.interrupted = False
        s.state = SessionState.RUNNING
        s.changed("state", state=s.state)
        try:
            return await self._turns()
        except ProbeError as exc:  # a probe the user's interrupt cut short (e.g. the diagnosis)
            if not (self.interrupted or exc.ename == "KeyboardInterrupt"):
                raise
            return await self._stop_interrupted()

    async def _turns(self) -> str:
        s = self.session
        for _ in range(self.max_turns):
            if self.interrupted:  # between turns: while planning, or waiting for the notebook
                return await self._stop_interrupted()
            if self._pausing:  # an undo is waiting for this run
                return self._finish(SessionState.IDLE)
            await observe(s, self.calls, self.episodes, budgets=self.budgets, tick=self.tick,
                          interrupted=lambda: self.interrupted)
            await fingerprint.record(s, self.calls)  # which data this sidecar speaks of
            if self.policy.mode == "file":  # the file's word on the timeline, once it exists
                structure.apply_file_timeline(s, self.policy.choices.get("timeline"))
            update = await self.planner.revise(s)
            back = history.backtrack_request(s, update, self.max_backtracks)
            if back is not None:
                await self.backtrack(*back)
                continue
            merge(s, update, self.episodes, self.policy.plan_edits)
            await self._note_edits()  # a decisions file's edits, applied as the plan was made
            step = next(iter(s.pending_steps()), None)
            self._charge_planning(step)
            if step is None:
                return self._finish(SessionState.FINISHED)
            mark = len(s.cells)
            verdict = await self.gate(step)
            if verdict == "blocked":
                await self._warm(step)
                return self._finish(SessionState.BLOCKED)
            if verdict == "skip":
                await self._decision_cell(step)
                restructured = gatekeeping.restructure(s, s.decision(step.decision_id)) if step.decision_id else None
                self._close(step, StepStatus.SKIPPED, restructured or "skipped by the approval policy")
                continue
            outcome = await self.execute(step, mark)
            if outcome == "failed":
                return self._finish(SessionState.FAILED)
            if outcome == "interrupted":  # usable again: decide, undo or resume
                self.interrupted = False
                return self._finish(SessionState.IDLE)
        s.warnings.append(f"stopped after {self.max_turns} turns")
        return self._finish(SessionState.FAILED)

    def _charge_planning(self, step: Step | None) -> None:
        """Planning cost is charged to the step it led to (else the last one done)."""
        s = self.session
        charged = step or next((st for st in reversed(s.plan) if st.status == StepStatus.DONE), None)
        for usage in s.llm_usage:
            usage["step_id"] = usage.get("step_id") or (charged.id if charged else None)

    def interrupt(self) -> str | None:
        """Ask the run to stop (the host interrupts the kernel itself); what it stops, or None
        when nothing runs. A running step fails without retry; a diagnosis or planning turn
        stops, and the next run starts it again."""
        step = next((st for st in self.session.plan if st.status == StepStatus.RUNNING), None)
        if step is None and self.session.state != SessionState.RUNNING:
            return None
        self.interrupted = True
        return f"{step.id} ({step.title})" if step is not None else "diagnosis and planning"

    async def _stop_interrupted(self) -> str:
        """After an interrupt outside a cell: put a cut-off step's variables back, then idle."""
        await history.restore_interrupted(self.session, self.calls)
        self.session.log("interrupt", "the run was interrupted by the user")
        self.interrupted = False
        return self._finish(SessionState.IDLE)

    def _finish(self, state: SessionState) -> str:
        self.session.state = state
        self.session.changed("state", state=state)
        return state

    # -- history -------------------------------------------------------------------------
    async def backtrack(self, step: Step, reason: str) -> None:
        """Restore the checkpoint before ``step``, exclude the option taken, record why."""
        await history.backtrack(self.session, self.calls, self.notebook, step, reason)

    async def undo(self, checkpoint_id: str, reason: str = "undone by the user") -> None:
        """Go back to before a checkpoint's step and leave the session ready to resume.

        Kernel variables are restored (and those created since, e.g. train/test, unbound), the
        co-pilot cells added since are deleted, the steps since are pending again and their
        decisions reopened: run :meth:`run_until_blocked` to carry on (it asks them again)."""
        # a run in progress stops at its next turn: the undo waits for one step, not the run
        self._pausing = True
        async with self._lock:
            self._pausing = False
            await history.go_back(self.session, self.calls, self.notebook, checkpoint_id, reason, reopen=True)
            self._finish(SessionState.IDLE)

    # -- the expert's plan edits -----------------------------------------------------------
    async def edit_plan(self, edit: dict[str, Any], via: str) -> EditRecord:
        """Apply one of the expert's plan edits (:mod:`.plan_edits`) that came through the host
        ``via`` (:class:`.hosts.Via`) between runs, note it in the notebook, and leave the session
        blocked when the next step still waits for its answer, else idle (run
        :meth:`run_until_blocked` to carry on).

        :class:`~.plan_edits.EditRefused` while a run is in progress; KeyError / ValueError for
        an unknown step or a malformed edit. A ``reopen`` of a done step undoes it first."""
        if self._lock.locked():
            raise plan_edits.EditRefused("the co-pilot is running; edit the plan when it waits for you "
                                         "(or interrupt it)")
        async with self._lock:
            s = self.session
            parameters = None
            if edit.get("op") == "params" and "candidates" in (edit.get("params") or {}):
                parameters = await self.calls.parameters("fit_evaluate")
            record = plan_edits.apply(s, edit, self.episodes, via=via, parameters=parameters)
            if record.checkpoint:
                await history.go_back(s, self.calls, self.notebook, record.checkpoint,
                                      "reopened by the user", reopen=True)
                plan_edits.note(s, record)
            await self._note_edits()
            # the next step still waiting for its answer keeps the session blocked: a run now would
            # only ask the same question again, and refuse the expert's next edit while it does
            step = next(iter(s.pending_steps()), None)
            waiting = {d.step_id for d in s.open_decisions()}
            self._finish(SessionState.BLOCKED if step is not None and step.status == StepStatus.AWAITING_DECISION
                         and step.id in waiting else SessionState.IDLE)
            return record

    async def _note_edits(self) -> None:
        """A markdown cell in the notebook for each plan edit not noted there yet, and for each
        edit that lapsed since (a re-plan left nothing it applies to)."""
        s = self.session
        for record in s.plan_edits:
            if not record.cell:
                record.cell = await self.notebook.insert_markdown(
                    plan_edits.edit_markdown(record), {"dcpilot": {"step": record.step, "kind": "edit"}})
                s.cells.append({"id": record.cell, "step": record.step, "kind": "edit"})
            if record.lapsed and not record.lapse_cell:
                record.lapse_cell = await self.notebook.insert_markdown(
                    plan_edits.lapse_markdown(record), {"dcpilot": {"step": record.step, "kind": "edit"}})
                s.cells.append({"id": record.lapse_cell, "step": record.step, "kind": "edit"})

    # -- gates ---------------------------------------------------------------------------
    async def gate(self, step: Step) -> str:
        """``"go"``, ``"skip"`` or ``"blocked"``; a gated step never runs undecided."""
        s = self.session
        if step.code is not None:  # code is always read by the expert, whatever the step says
            step.gate = StepGate.CUSTOM_CODE
        if not step.gate:
            return "go"
        decision = (s.decision(step.decision_id) if step.decision_id
                    else gatekeeping.new_decision(s, step, self.episodes.get(step.episode)))
        if self.estimate_impact and impact.wanted(s, decision) and decision.impact is None:
            await impact.estimate(s, self.kernel, decision, self.episodes)
        if not decision.decided and not await gatekeeping.answer(s, step, decision, self.policy):
            return "blocked"
        if not decision.decided:  # defensive: the executing path re-checks the gate
            return "blocked"
        # the decision's markdown cell is written while the step checkpoints (see _decision_cell)
        self._markdown = asyncio.ensure_future(self.notebook.insert_markdown(
            nb.decision_markdown(decision, step), {"dcpilot": {"step": step.id, "decision": decision.id}}))
        structural = decision.gate != StepGate.TASK and str(decision.choice).startswith("entity:")
        return "skip" if decision.choice == "skip" or structural else "go"

    async def _decision_cell(self, step: Step) -> None:
        """Wait for the decision's markdown cell the gate started writing and record it: before
        the step's own cell, so the notebook reads decision, then code."""
        task, self._markdown = self._markdown, None
        if task is not None:
            cell = await task
            self.session.cells.append({"id": cell, "step": step.id, "kind": "decision"})

    def _drop_decision_cell(self, step: Step) -> None:
        """The step stopped on an error: record the decision cell if it was written (so an undo
        removes it), else stop writing it."""
        task, self._markdown = self._markdown, None
        if task is None:
            return
        if task.done() and not task.cancelled() and task.exception() is None:
            self.session.cells.append({"id": task.result(), "step": step.id, "kind": "decision"})
        else:
            task.cancel()

    async def _warm(self, step: Step) -> None:
        """While the expert reads the question, import what the answer will run (the kernel is
        idle), so the approved cell runs at once. Only a head start: a kernel that cannot do it
        (an older kernel_tools) pays on the step instead."""
        decision = self.session.decision(step.decision_id) if step.decision_id else None
        try:
            await self.calls.warm(gatekeeping.warm_functions(decision, step))
        except ProbeError:
            pass

    # -- execution -----------------------------------------------------------------------
    async def execute(self, step: Step, mark: int) -> str:
        """Carry out a decided step: ``"done"``, ``"failed"`` (the run cannot go on without it)
        or ``"interrupted"``; its episode's ``runs`` says how."""
        s = self.session
        ep = self.episodes[step.episode]
        if step.gate and not (step.decision_id and s.decision(step.decision_id).decided):
            raise RuntimeError(f"gate violated: step {step.id} ({step.gate}) has no decision")
        if ep.runs == "task":
            await self._decision_cell(step)
            gatekeeping.apply_task_answer(s, s.decision(step.decision_id).choice if step.decision_id else "confirm")
            self._close(step, StepStatus.DONE, f"task: {s.task.kind}")
            return "done"
        if ep.runs == "report":
            await self._decision_cell(step)
            await self.write_report_cell(step)
            self._close(step, StepStatus.DONE)
            return "done"
        try:
            outcome = await self.worker.execute(step, mark, before_cell=lambda: self._decision_cell(step))
        except BaseException:
            self._drop_decision_cell(step)
            raise
        await self._decision_cell(step)  # a step that ran no cell still records its decision
        if outcome == "interrupted":  # not handled: the planner proposes it again
            step.status, step.note = StepStatus.FAILED, "interrupted by the user"
            s.log("interrupt", f"{step.id} ({step.title}) was interrupted by the user", step_id=step.id)
            s.changed("step", step=step.id, status=step.status, note=step.note)
            return "interrupted"
        if outcome == "kept":
            self._close(step, StepStatus.DONE, step.note)
            return "done"
        if outcome == "failed":
            if await reask.reask(s, self.calls, self.notebook, step, self.episodes, self.max_backtracks):
                return "done"  # a question again, not an end (:mod:`.reask`)
            if ep.stage == "model" and NO_FEATURES in (step.error or ""):
                return self._nothing_to_fit(step)
            return self._failed(step, ep)
        self._close(step, StepStatus.DONE)
        if ep.stage == "pre_split":
            s.data_version += 1
        await self._after_checks(step)
        if ep.stage == "model":
            await self._audit_model(step)
        return "done"

    def _nothing_to_fit(self, step: Step) -> str:
        """No feature is left for a model (a tiny table whose columns were all identifiers, leaks or
        the outcome's own times): not an error to fix by retrying but an answer. The run ends with
        its verdict, not valid, saying in words what took every column (the model step skipped)."""
        why = nothing_to_fit_words(self.session, step)
        self._close(step, StepStatus.SKIPPED, why)
        for after in list(self.session.pending_steps()):  # what reads the model (its explanation) has none
            ep = self.episodes.get(after.episode)
            if ep is not None and ep.stage == "final" and ep.runs != "report":
                self._close(after, StepStatus.SKIPPED, "no model to explain")
        self.session.log("model", why, step_id=step.id)  # the verdict's model_trained check says it
        return "done"

    def _failed(self, step: Step, ep: Episode) -> str:
        """A failed step is left out, unless the run cannot go on without it (split, model) or
        someone approved it (validity.approved_by): then the run stops at it, for the user to
        change, skip or undo, and no verdict is valid while it has not run."""
        self._close(step, StepStatus.FAILED, step.error or "")
        approved = approved_by(self.session, step)
        if ep.stage in ("split", "model") or approved is not None:
            why = f" ({approved}); the run stops here: change its parameters, skip it or undo" if approved else ""
            self.session.warnings.append(f"{step.title} failed{why}: {step.error}")
            return "failed"
        self.session.warnings.append(f"{step.title} failed and was left out: {step.error}")
        return "done"

    async def _after_checks(self, step: Step) -> None:
        """A post-step check that failed with an error: backtrack while backtracks are left."""
        s = self.session
        errors = [c for c in step.checks if c.get("severity") == "error"]
        if not errors:
            return
        reason = "; ".join(c.get("message", c.get("check", "")) for c in errors)
        if s.backtracks < self.max_backtracks:
            await self.backtrack(step, f"checks failed: {reason}")
        else:
            s.warnings.append(f"{step.title}: checks failed ({reason}); no backtracks left")

    def _close(self, step: Step, status: StepStatus, note: str = "") -> None:
        s = self.session
        step.status = status
        if note:
            step.note = note
        s.handled += [f for f in step.finding_ids if f not in s.handled]
        s.changed("step", step=step.id, status=status, result=step.result.get("report"))

    async def _audit_model(self, step: Step) -> None:
        """A suspiciously perfect score: back to before the split, the top feature to the
        expert (:func:`.model_audit.suspected_leak`); then the verdict."""
        s = self.session
        may_backtrack = self.policy.mode != "none" and s.backtracks < self.max_backtracks
        suspicion = model_audit.suspected_leak(s, step, self.episodes, suspicious_score=self.suspicious_score,
                                               may_backtrack=may_backtrack)
        if suspicion is not None:
            await self.backtrack(suspicion.split, suspicion.reason)
            s.findings.append(suspicion.finding)
            s.changed("finding", finding=suspicion.finding.to_dict())
        self.judge()

    # -- report --------------------------------------------------------------------------
    def judge(self) -> list[Check]:
        """The verdict's checks for the current model, kept in the session (panel, report)."""
        return model_audit.judge(self.session, self.episodes)

    async def write_report_cell(self, step: Step) -> None:
        s = self.session
        checks = self.judge()
        source = nb.report_markdown(s, self.model_report() or None, checks, s.warnings)
        cell = await self.notebook.insert_markdown(source, {"dcpilot": {"step": step.id, "episode": step.episode}})
        s.cells.append({"id": cell, "step": step.id, "kind": "report"})
        step.cell_ids.append(cell)

    def model_report(self) -> dict[str, Any] | None:
        """The last trained model's report (``ModelReport.to_dict``), None before one."""
        return model_audit.model_report(self.session, self.episodes)

    def report(self) -> dict[str, Any]:
        """The report.json content for the session as it stands."""
        return build_report(self.session, self.model_report(), self.episodes)
