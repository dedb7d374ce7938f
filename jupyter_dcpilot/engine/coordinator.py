"""The coordinator: observe → backtrack? → plan → gate → execute → validate, step by step.

:meth:`Coordinator.run_until_blocked` runs turns until a step needs a human decision (it
returns ``"blocked"``; the step stays ``awaiting_decision``), the plan is finished, or a step
the model cannot do without failed. Record a decision with :meth:`Session.decide` and call it
again to resume. Gates are enforced here, in the only code path that executes steps: a gated
step never reaches the worker before its decision exists.
"""

from __future__ import annotations

import asyncio
import sys
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from jupyter_dcpilot.probe import ProbeError
from kernel_tools.vocabulary import LEAKAGE_SCORE, PENDING, RANKING_METRICS, TASK_KINDS

from . import decisions_file, plan_edits
from . import notebook as nb
from .budgets import Budgets
from .charts import chart_for
from .episodes import Episode, library
from .errors import in_words
from .hosts import KernelProbe, NotebookHost
from .kernel_calls import KernelCalls
from .planners import PlanUpdate, RulePlanner
from .progress import TICK_S, Progress
from .report import build_report
from .session import Decision, Session, Step
from .validation import did_you_mean
from .validity import Check, audit, verdict
from .worker import Stop, Worker

# the other moments a prediction can be made, offered on the task card
INDEX_CHOICES = {
    "index:first": ("Predict at each entity's first record",
                    "Predictions are made at enrolment (the first record of each entity): later "
                    "records are not known then.", "later measurements cannot be used as they are"),
    "index:row": ("Predict at every record",
                  "Each record is a prediction at its own time; the outcome and any duration are "
                  "counted from that record.", "wrong when the outcome or duration counts from the "
                  "first record: later records would know the future"),
}
Prompt = Callable[[Decision, Step], Awaitable[tuple[str, str] | None]]


@dataclass
class ApprovalPolicy:
    """Who answers gates when no one is asked: ``ask``, ``recommended``, ``none`` or a file.

    A decisions file (:mod:`.decisions_file`, checked against its JSON Schema) maps gates and
    columns to option ids, ``"recommended"`` or ``"ask"``, e.g.
    ``{"leakage": "drop", "outliers": {"age": "keep", "*": "clip"}, "columns": {"bmi": "keep"}}``;
    ``"*": "recommended"`` takes the recommended option for every gate the file does not name.
    LLM-written custom code (gate ``custom_code``) is never approved by a policy.
    ``prompt`` (an async callable) asks a human interactively; without it ``ask`` blocks.
    """

    mode: str = "ask"
    choices: dict[str, Any] = field(default_factory=dict)
    prompt: Prompt | None = None

    @classmethod
    def from_spec(cls, spec: str, prompt: Prompt | None = None) -> ApprovalPolicy:
        if spec in ("ask", "recommended", "none"):
            return cls(mode=spec, prompt=prompt)
        if not Path(spec).is_file():
            if spec.lower().endswith(".json"):
                raise ValueError(f"decisions file not found: {spec}")
            raise ValueError(f"--approve must be ask, recommended, none or a JSON file; {spec!r} is none of "
                             f"these{did_you_mean(spec, ['ask', 'recommended', 'none'])}")
        return cls(mode="file", choices=decisions_file.read(spec), prompt=prompt)

    def choose(self, decision: Decision) -> tuple[str, str] | None:
        """``(choice, rationale)`` decided by policy, or None when a human must answer."""
        if decision.gate == "custom_code":
            return ("skip", "custom code is skipped without expert steps") if self.mode == "none" else None
        if self.mode == "recommended" and decision.recommended:
            return decision.recommended, "recommended option (--approve recommended)"
        if self.mode == "none":
            return "skip", "no expert steps (--approve none)"
        if self.mode == "file":
            choice = self._from_file(decision)
            if choice == "recommended":
                return (decision.recommended, "recommended option (decisions file)") if decision.recommended else None
            if choice is not None and choice != "ask":
                if decision.option(choice) is None:
                    ids = [o["id"] for o in decision.options]
                    raise ValueError(f"decisions file: {choice!r} is not an option of the "
                                     f"{decision.gate} decision on {decision.columns} (options: {ids})")
                return choice, "from the decisions file"
        return None

    def _from_file(self, decision: Decision) -> str | None:
        by_column = self.choices.get("columns", {})
        for column in decision.columns:
            if column in by_column:
                return by_column[column]
        entry = self.choices.get(decision.gate)
        if isinstance(entry, dict):
            for column in decision.columns:
                if column in entry:
                    return entry[column]
            entry = entry.get("*")
        if entry is None and self.choices.get("*") == "recommended":
            return decision.recommended
        return entry


class Coordinator:
    """Runs a session's loop on a kernel and a notebook; see the module docstring."""

    def __init__(self, session: Session, kernel: KernelProbe, notebook: NotebookHost, *,
                 planner: Any = None, policy: ApprovalPolicy | None = None,
                 episodes: dict[str, Episode] | None = None, max_attempts: int = 3,
                 max_backtracks: int = 3, suspicious_score: float = LEAKAGE_SCORE,
                 max_turns: int = 200, budgets: Budgets | None = None, stop: Stop | None = None,
                 tick: float | None = None) -> None:
        """``budgets``: seconds per kind of step (default: the session's settings, else
        :data:`~.budgets.DEFAULTS`); ``stop``: interrupts the kernel, so a step far past its
        budget is stopped and rolled back (without it, it only reports being over budget);
        ``tick``: seconds between progress events."""
        if budgets is None:
            budgets = Budgets.from_spec(session.settings.get("budgets"))
        session.settings["budgets"] = budgets.to_dict()
        self.budgets = budgets
        self.tick = tick
        self.session = session
        self.kernel = kernel
        self.calls = KernelCalls(kernel)
        self.notebook = notebook
        self.episodes = episodes if episodes is not None else library()
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
                running = [st for st in self.session.plan if st.status == "running"]
                doing = (f"running step {running[0].id} ({running[0].title})" if running
                         else "planning the next step")
                message = in_words(exc, doing)
                for step in running:  # e.g. the kernel died under it: never left "running"
                    step.status, step.error = "failed", message
                    step.note = "cut short: the kernel or the notebook stopped answering"
                    self.session.changed("step", step=step.id, status="failed", result=None)
                self.session.log("error", f"the co-pilot stopped: {message}")
                self._finish("failed")
                raise

    async def _run(self) -> str:
        s = self.session
        self.interrupted = False
        s.state = "running"
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
                return self._finish("idle")
            await self.observe()
            update = await self.planner.revise(s)
            if await self.maybe_backtrack(update):
                continue
            self.merge_plan(update)
            await self._note_edits()  # a decisions file's edits, applied as the plan was made
            step = next(iter(s.pending_steps()), None)
            charged = step or next((st for st in reversed(s.plan) if st.status == "done"), None)
            for usage in s.llm_usage:  # planning cost is charged to the step it led to
                usage["step_id"] = usage.get("step_id") or (charged.id if charged else None)
            if step is None:
                return self._finish("finished")
            mark = len(s.cells)
            verdict = await self.gate(step)
            if verdict == "blocked":
                await self._warm(step)
                return self._finish("blocked")
            if verdict == "skip":
                await self._decision_cell(step)
                self._close(step, "skipped", "skipped by the approval policy")
                continue
            outcome = await self.execute(step, mark)
            if outcome == "failed":
                return self._finish("failed")
            if outcome == "interrupted":  # usable again: decide, undo or resume
                self.interrupted = False
                return self._finish("idle")
        s.warnings.append(f"stopped after {self.max_turns} turns")
        return self._finish("failed")

    def interrupt(self) -> str | None:
        """Ask the run to stop (the host interrupts the kernel itself); what it stops, or None
        when nothing runs. A running step fails without retry; a diagnosis or planning turn
        stops, and the next run starts it again."""
        step = next((st for st in self.session.plan if st.status == "running"), None)
        if step is None and self.session.state != "running":
            return None
        self.interrupted = True
        return f"{step.id} ({step.title})" if step is not None else "diagnosis and planning"

    async def _stop_interrupted(self) -> str:
        """After an interrupt outside a cell: put a cut-off step's variables back, then idle."""
        s = self.session
        for step in [st for st in s.plan if st.status == "running"]:
            if step.checkpoint_id:
                try:
                    await self.calls.checkpoint_restore(step.checkpoint_id)
                except ProbeError as exc:
                    s.log("error", f"could not restore {step.checkpoint_id} after the interrupt: {exc}")
            step.status, step.note = "failed", "interrupted by the user"
            s.changed("step", step=step.id, status=step.status, note=step.note)
        s.log("interrupt", "the run was interrupted by the user")
        self.interrupted = False
        return self._finish("idle")

    def _finish(self, state: str) -> str:
        self.session.state = state
        self.session.changed("state", state=state)
        return state

    # -- observe -------------------------------------------------------------------------
    async def observe(self) -> None:
        s = self.session
        split_done = any(st.episode == "split" and st.status == "done" for st in s.plan)
        if s.diagnosed_version == s.data_version or split_done:
            return
        source = s.task if s.task.get("confirmed") else s.hints  # the expert's word, once given
        hints = {k: source.get(k) for k in ("target", "time", "id")}
        kind = s.task.get("kind") if s.task.get("confirmed") else s.hints.get("task")
        if kind not in (None, "auto"):
            hints["task"] = kind
        if s.hints.get("index"):
            hints["index"] = s.hints["index"]
        progress = Progress(s, f"diagnosing {s.frame}", budget=self.budgets.of("diagnose"),
                            tick=self.tick or TICK_S)
        try:
            diagnosis = await progress.run(self.calls.diagnose(s.frame, **hints))
        except ProbeError as exc:
            if self.interrupted or exc.ename == "KeyboardInterrupt":
                raise  # not a failed diagnosis: the user stopped it (diagnosed again next run)
            self._diagnosis_failed(exc)
            return
        findings = list(diagnosis.get("findings", []))
        frames = s.hints.get("frames", [])
        if len(frames) > 1 and not any(st.episode == "join_files" and st.status == "done" for st in s.plan):
            try:
                joined = await self.calls.diagnose_join(frames, **hints)
                findings += joined.get("findings", [])
            except ProbeError as exc:
                s.log("error", f"diagnose_join failed: {exc}")
        s.findings = findings + self._timing_kept(findings) + [
            f for f in s.findings if f.get("synthetic") and f.get("id") not in {g.get("id") for g in findings}]
        s.diagnosis = {k: diagnosis.get(k) for k in ("shape", "elapsed_s", "sample_size")}
        stats = diagnosis.get("column_stats") or {}
        # what the diagnosis measured per feature, so a model's too-good score can be read against it
        s.diagnosis.update({"metric": stats.get("metric"), "feature_scores": stats.get("feature_scores") or {},
                            "leakage": stats.get("leakage") or []})
        s.variables.setdefault("initial_shape", diagnosis.get("shape"))
        if not s.variables.get("columns"):
            info = await self.calls.frame_info([s.frame])
            s.variables["columns"] = (info.get(s.frame) or {}).get("columns") or []
            s.variables["frame_library"] = (info.get(s.frame) or {}).get("library")
        if not s.task.get("confirmed"):
            task = dict(diagnosis.get("task") or {})
            for key in ("target", "time", "id"):
                if s.hints.get(key):
                    task[key] = s.hints[key]
            if s.hints.get("task") not in (None, "auto"):
                task["kind"] = s.hints["task"]
            s.task = task
        s.diagnosed_version = s.data_version
        s.log("observe", f"diagnosed {s.frame} {diagnosis.get('shape')}: "
              f"{len(s.findings)} findings in {diagnosis.get('elapsed_s', 0):.1f}s",
              kinds=sorted({f.get("kind") for f in s.findings}))

    def _timing_kept(self, findings: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Follow-up findings of the last diagnosis that this one lost only because the column
        that showed them was dropped since: a column's timing does not change when another
        column goes (a donor-match score filled in only where the transplant date is stays
        recorded after the index once that date is dropped; charges stay so without the stay)."""
        s = self.session
        columns = set(s.variables.get("columns") or [])
        seen = {f.get("id") for f in findings}
        return [f for f in s.findings if f.get("kind") == "target_leakage" and not f.get("synthetic")
                and (f.get("evidence") or {}).get("timing") in ("follow_up", "outcome_derived")
                and f.get("id") not in seen and f.get("id") not in s.handled
                and columns and all(c in columns for c in f.get("columns", []))]

    def _diagnosis_failed(self, exc: ProbeError) -> None:
        """A diagnosis that could not run is a finding: the run goes on, but cannot be valid."""
        s = self.session
        error = " ".join(str(exc).split())[:300]
        s.findings = [{"id": "diagnosis_incomplete:", "kind": "diagnosis_incomplete", "columns": [],
                       "severity": "critical", "gate": None, "options": [],
                       "summary": f"The diagnosis could not run ({error}): nothing was checked, so no "
                                  "model built on this data can be called valid.",
                       "evidence": {"detector": "diagnose", "error": error}}]
        s.warnings.append(f"diagnose failed: {error}")
        s.log("error", f"the diagnosis failed ({error}); the co-pilot carries on, but the result "
              "cannot be valid until the diagnosis runs")
        s.diagnosed_version = s.data_version
        if not s.task:
            s.task = {"kind": s.hints.get("task") or "classification",
                      "target": s.hints.get("target"), "time": s.hints.get("time"),
                      "id": s.hints.get("id"), "reason": "from the command line"}

    # -- backtracking --------------------------------------------------------------------
    async def maybe_backtrack(self, update: PlanUpdate) -> bool:
        s = self.session
        if s.rejections:
            rejection = s.rejections.pop(0)
            step = s.step(rejection["step_id"])
            await self.backtrack(step, f"the expert rejected the result: {rejection['reason']}")
            return True
        if update.backtrack and s.backtracks < self.max_backtracks:
            try:
                step = s.step(update.backtrack.get("step_id", ""))
            except KeyError:
                return False
            if step.status == "done" and step.checkpoint_id:
                await self.backtrack(step, f"{update.planner} planner: {update.backtrack.get('reason', '')}")
                return True
        return False

    async def backtrack(self, step: Step, reason: str) -> None:
        """Restore the checkpoint before ``step``, exclude the option taken, record why."""
        s = self.session
        if not step.checkpoint_id:
            raise ValueError(f"step {step.id} has no checkpoint to go back to")
        choice = s.decision(step.decision_id).choice if step.decision_id else None
        await self._undo(step.checkpoint_id, f"backtracked: {reason}")
        if choice is not None:
            for fid in step.finding_ids:
                s.exclusions.setdefault(fid, []).append(choice)
        elif step.finding_ids:
            s.handled += [f for f in step.finding_ids if f not in s.handled]
        s.backtracks += 1
        cell = await self.notebook.insert_markdown(nb.backtrack_markdown(step, reason),
                                                   {"dcpilot": {"step": step.id, "kind": "backtrack"}})
        s.cells.append({"id": cell, "step": step.id, "kind": "backtrack"})
        s.log("backtrack", f"{step.id} ({step.title}): {reason}", step_id=step.id,
              excluded=choice)

    async def undo(self, checkpoint_id: str, reason: str = "undone by the user") -> None:
        """Go back to before a checkpoint's step and leave the session ready to resume.

        Kernel variables are restored (and those created since, e.g. train/test, unbound), the
        co-pilot cells added since are deleted, the steps since are pending again and their
        decisions reopened: run :meth:`run_until_blocked` to carry on (it asks them again)."""
        # a run in progress stops at its next turn: the undo waits for one step, not the run
        self._pausing = True
        async with self._lock:
            self._pausing = False
            await self._undo(checkpoint_id, reason, reopen=True)
            self._finish("idle")

    async def _undo(self, checkpoint_id: str, reason: str, *, reopen: bool = False) -> None:
        s = self.session
        cp = s.checkpoint(checkpoint_id)
        # e.g. its spill was cut short by a kernel death: say so before anything is restored
        problem = (await self.calls.checkpoint_problem(cp.id)).get("problem")
        if problem:
            raise ValueError(f"cannot undo to {cp.id} ({cp.label}): {problem}")
        later = s.checkpoints[s.checkpoints.index(cp) + 1 :]
        for c in reversed(later):  # newest first: each unbinds what its step created
            try:
                await self.calls.checkpoint_restore(c.id)
            except ProbeError as exc:  # e.g. a spilled snapshot lost with the kernel
                s.log("error", f"could not restore checkpoint {c.id} ({c.label}): {exc}")
        await self.calls.checkpoint_restore(cp.id)
        doomed = s.cells_after(cp.id)
        if doomed:
            await self.notebook.delete_cells(doomed)
        s.cells = s.cells[: cp.cell_count]
        before = {st["id"] for st in cp.snapshot["plan"] if st["status"] not in PENDING}
        undone = [st for st in s.plan if st.id not in before
                  and st.status in ("done", "failed", "running", "skipped")]
        waiting = [st for st in s.plan if st.pending and st.id not in before]
        s.restore_snapshot(cp.snapshot)
        if reopen:
            for st in undone:
                self._reset(st, reason, ask_user=st.id == cp.step_id)
            s.plan = [st for st in s.plan if not st.pending] + undone + waiting
        else:
            for st in undone:
                st.status, st.note, st.cell_ids = "undone", reason, []
            s.plan = [st for st in s.plan if not st.pending] + undone
        for c in [cp, *later]:
            try:
                await self.calls.checkpoint_discard(c.id)
            except ProbeError:
                pass
        s.checkpoints = s.checkpoints[: s.checkpoints.index(cp)]
        s.changed("undo", checkpoint=checkpoint_id, reason=reason, steps=[st.id for st in undone])

    def _reset(self, step: Step, reason: str, ask_user: bool) -> None:
        """An undone step back to proposed. Its decision is reopened for the user when
        ``ask_user`` (the step undone to) or when the user answered it; an approval policy's
        answer is dropped instead, so the policy decides afresh when the step comes up."""
        s = self.session
        step.status, step.note, step.cell_ids = "proposed", reason, []
        step.checkpoint_id, step.attempts, step.error, step.started = None, 0, None, None
        step.result, step.checks = {}, []
        decision = next((d for d in s.decisions if d.id == step.decision_id), None)
        if decision is not None and (ask_user or decision.by == "user"):
            decision.reopen(reason)
            s.changed("decision", decision=asdict(decision))
        else:
            s.decisions = [d for d in s.decisions if d is not decision]
            step.decision_id = None

    # -- planning ------------------------------------------------------------------------
    def merge_plan(self, update: PlanUpdate) -> None:
        """Replace the pending steps with the planner's, keeping ids/decisions of unchanged ones."""
        s = self.session
        previous = [st.id for st in s.plan if st.pending]
        old = {self._key(st): st for st in s.plan if st.pending}
        new: list[Step] = []
        for st in update.steps:
            same = old.pop(self._key(st), None)
            if same is not None:
                if not same.decision_id:  # the latest diagnosis words it best
                    same.title, same.reason, same.columns, same.params = st.title, st.reason, st.columns, st.params
                new.append(same)
            else:
                st.id = s.new_id("s")
                new.append(st)
        # only the expert drops these: custom code, and the steps they added
        custom = [st for st in old.values() if st.episode == "custom" or "added" in st.by_user]
        new = custom + new
        for st in custom:
            old.pop(self._key(st))
        dropped = {st.decision_id for st in old.values() if st.decision_id}
        s.decisions = [d for d in s.decisions if d.decided or d.id not in dropped]
        s.plan = [st for st in s.plan if not st.pending] + new
        plan_edits.after_merge(s, self.episodes, previous,
                               self.policy.choices.get("plan") if self.policy.mode == "file" else None)
        if update.observation:
            s.variables["observation"] = update.observation
        s.changed("plan", steps=[asdict(st) for st in s.plan if st.pending], planner=update.planner)

    async def edit_plan(self, edit: dict[str, Any], source: str = "api") -> dict[str, Any]:
        """Apply one of the expert's plan edits (:mod:`.plan_edits`) between runs, note it in the
        notebook, and leave the session blocked when the next step still waits for its answer,
        else idle (run :meth:`run_until_blocked` to carry on).

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
            record = plan_edits.apply(s, edit, self.episodes, source=source, parameters=parameters)
            if record.get("checkpoint"):
                await self._undo(record["checkpoint"], "reopened by the user", reopen=True)
                plan_edits.note(s, record)
            await self._note_edits()
            # the next step still waiting for its answer keeps the session blocked: a run now would
            # only ask the same question again, and refuse the expert's next edit while it does
            step = next(iter(s.pending_steps()), None)
            waiting = {d.step_id for d in s.open_decisions()}
            self._finish("blocked" if step is not None and step.status == "awaiting_decision"
                         and step.id in waiting else "idle")
            return record

    async def _note_edits(self) -> None:
        """A markdown cell in the notebook for each plan edit not noted there yet."""
        s = self.session
        for record in s.plan_edits:
            if not record.get("cell"):
                cell = await self.notebook.insert_markdown(plan_edits.edit_markdown(record),
                                                           {"dcpilot": {"step": record.get("step"), "kind": "edit"}})
                record["cell"] = cell
                s.cells.append({"id": cell, "step": record.get("step"), "kind": "edit"})

    @staticmethod
    def _key(step: Step) -> tuple[Any, ...]:
        return (step.episode, tuple(step.finding_ids), step.code)

    # -- gates ---------------------------------------------------------------------------
    async def gate(self, step: Step) -> str:
        """``"go"``, ``"skip"`` or ``"blocked"``; a gated step never runs undecided."""
        s = self.session
        if step.code is not None:  # code is always read by the expert, whatever the step says
            step.gate = "custom_code"
        if not step.gate:
            return "go"
        decision = s.decision(step.decision_id) if step.decision_id else self._new_decision(step)
        if not decision.decided:
            # a decision the user undid is theirs to answer again, never the policy's
            picked = None if decision.reopened else self.policy.choose(decision)
            by = "policy"
            if picked is None and self.policy.prompt is not None:
                picked, by = await self.policy.prompt(decision, step), "user"
            if picked is None:
                step.status = "awaiting_decision"
                s.changed("awaiting_decision", step=step.id, decision=asdict(decision))
                return "blocked"
            choice, rationale = picked
            if choice == "skip" and decision.option("skip") is None:
                decision.options.append({"id": "skip", "label": "Skip", "description":
                                         "Do not run this step.", "risk": "", "recommended": False,
                                         "action": None})
            s.decide(decision.id, choice, rationale, by=by)
        if not decision.decided:  # defensive: the executing path re-checks the gate
            return "blocked"
        # the decision's markdown cell is written while the step checkpoints (see _decision_cell)
        self._markdown = asyncio.ensure_future(self.notebook.insert_markdown(
            nb.decision_markdown(decision, step), {"dcpilot": {"step": step.id, "decision": decision.id}}))
        return "skip" if decision.choice == "skip" else "go"

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
        functions = {o["action"]["function"] for o in (decision.options if decision else [])
                     if (o.get("action") or {}).get("function")}
        try:
            await self.calls.warm(sorted(functions | ({step.function} if step.function else set())))
        except ProbeError:
            pass

    def _new_decision(self, step: Step) -> Decision:
        s = self.session
        if step.episode == "confirm_task":
            options, question, evidence = self._task_options()
        elif step.code is not None:
            options = [{"id": "run", "label": "Run this code", "description": step.code,
                        "risk": "custom code: read it before running", "recommended": True, "action": None},
                       {"id": "skip", "label": "Skip", "description": "Do not run it.", "risk": "",
                        "recommended": False, "action": None}]
            question, evidence = f"Run this custom step? {step.reason}", {}
        else:
            finding = s.finding(step.finding_ids[0]) if step.finding_ids else None
            excluded = set()
            for fid in step.finding_ids:
                excluded |= set(s.exclusions.get(fid, []))
            options = [dict(o) for o in (finding or {}).get("options", []) if o.get("id") not in excluded]
            if not options:
                options = [{"id": "run", "label": step.title, "description": step.reason, "risk": "",
                            "recommended": True, "action": {"function": step.function, "params": step.params}}]
            question = (finding or {}).get("summary", step.reason)
            evidence = (finding or {}).get("evidence", {})
        recommended = next((o["id"] for o in options if o.get("recommended")), None)
        if recommended is None:  # the recommended option was excluded: the next one that acts
            recommended = next((o["id"] for o in options if o.get("action")), options[0]["id"])
        finding = s.finding(step.finding_ids[0]) if step.finding_ids and step.code is None else None
        # a random suffix: a decision id of another notebook's session never matches one here
        decision = Decision(id=f"{s.new_id('d')}-{uuid.uuid4().hex[:8]}", step_id=step.id, gate=step.gate or "", question=question,
                            evidence=evidence, options=options, recommended=recommended,
                            columns=list(step.columns), chart=chart_for(finding))
        s.decisions.append(decision)
        step.decision_id = decision.id
        s.changed("decision", decision=asdict(decision))
        return decision

    def _task_options(self) -> tuple[list[dict[str, Any]], str, dict[str, Any]]:
        t = self.session.task
        index = t.get("index") or {}
        desc = (f"{t.get('kind')}: predict '{t.get('target')}'"
                + (f" with duration '{t.get('time')}'" if t.get("time") else "")
                + (f", one entity = '{t.get('id')}'" if t.get("id") else "")
                + (f", at {index['label']}" if index.get("label") else ""))
        options = [{"id": "confirm", "label": "Confirm", "description": desc,
                    "risk": "", "recommended": True, "action": None}]
        for kind in TASK_KINDS:
            if kind != t.get("kind") and (kind != "survival" or t.get("time")):
                options.append({"id": kind, "label": f"It is {kind}",
                                "description": f"Treat '{t.get('target')}' as a {kind} target.",
                                "risk": "a wrong task means a wrong metric", "recommended": False,
                                "action": None})
        for choice, (label, description, risk) in INDEX_CHOICES.items():
            kind = {"index:first": "entity_start", "index:row": "row"}[choice]
            if index.get("kind") != kind and (choice != "index:first" or t.get("id")):
                options.append({"id": choice, "label": label, "description": description,
                                "risk": risk, "recommended": False, "action": None})
        evidence = {k: t.get(k) for k in ("kind", "target", "time", "event", "id", "visit") if t.get(k)}
        if index:
            evidence["prediction_time"] = index.get("label")
            evidence["prediction_time_reason"] = index.get("reason")
        return options, f"Is this the task? {desc}. ({t.get('reason', '')})", evidence

    # -- execution -----------------------------------------------------------------------
    async def execute(self, step: Step, mark: int) -> str:
        s = self.session
        ep = self.episodes[step.episode]
        if step.gate and not (step.decision_id and s.decision(step.decision_id).decided):
            raise RuntimeError(f"gate violated: step {step.id} ({step.gate}) has no decision")
        if ep.id in ("confirm_task", "report"):
            await self._decision_cell(step)
        if ep.id == "confirm_task":
            choice = s.decision(step.decision_id).choice if step.decision_id else "confirm"
            if choice in TASK_KINDS:
                s.task["kind"] = choice
            if choice in INDEX_CHOICES:
                s.hints["index"] = choice.split(":")[1]
                s.diagnosed_version = -1  # diagnosed again: the options follow the prediction time
            s.task["confirmed"] = True
            self._close(step, "done", f"task: {s.task.get('kind')}")
            return "done"
        if ep.id == "report":
            await self.write_report_cell(step)
            self._close(step, "done")
            return "done"
        try:
            outcome = await self.worker.execute(step, mark, before_cell=lambda: self._decision_cell(step))
        except BaseException:
            self._drop_decision_cell(step)
            raise
        await self._decision_cell(step)  # a step that ran no cell still records its decision
        if outcome == "interrupted":  # not handled: the planner proposes it again
            step.status, step.note = "failed", "interrupted by the user"
            s.log("interrupt", f"{step.id} ({step.title}) was interrupted by the user", step_id=step.id)
            s.changed("step", step=step.id, status=step.status, note=step.note)
            return "interrupted"
        if outcome == "kept":
            self._close(step, "done", step.note)
            return "done"
        if outcome == "failed":
            self._close(step, "failed", step.error or "")
            if ep.stage in ("split", "model"):
                s.warnings.append(f"{step.title} failed: {step.error}")
                return "failed"
            s.warnings.append(f"{step.title} failed and was left out: {step.error}")
            return "done"
        self._close(step, "done")
        if ep.stage == "pre_split":
            s.data_version += 1
        errors = [c for c in step.checks if c.get("severity") == "error"]
        if errors:
            reason = "; ".join(c.get("message", c.get("check", "")) for c in errors)
            if s.backtracks < self.max_backtracks:
                await self.backtrack(step, f"checks failed: {reason}")
            else:
                s.warnings.append(f"{step.title}: checks failed ({reason}); no backtracks left")
        if ep.stage == "model":
            await self.check_model(step)
            self.judge()
        return "done"

    def _close(self, step: Step, status: str, note: str = "") -> None:
        s = self.session
        step.status = status
        if note:
            step.note = note
        s.handled += [f for f in step.finding_ids if f not in s.handled]
        s.changed("step", step=step.id, status=status, result=step.result.get("report"))

    async def check_model(self, step: Step) -> None:
        """A suspiciously perfect score: back to before the split, the top feature to the expert."""
        s = self.session
        model = step.result.get("report") or {}
        scores = [v for v in (model.get("cv_score"), model.get("holdout_score")) if isinstance(v, (int, float))]
        perfect = any(v >= self.suspicious_score for v in scores) and model.get("metric") in RANKING_METRICS
        perfect |= any(str(w).startswith("suspect leakage") for w in model.get("warnings", []))
        if not perfect:
            return
        # imported only now: the model module pulls in scikit-learn and lifelines (seconds of a
        # command-line run), which an honest score never needs here
        from kernel_tools.models.evaluate import DOMINANT_SHARE, top_importance_share

        split = next((st for st in s.plan if st.episode == "split" and st.status == "done"), None)
        top = next((i.get("feature") for i in model.get("importance", []) if i.get("feature")), None)
        share = top_importance_share(model.get("importance", []))
        if top is not None and share < DOMINANT_SHARE:
            # many features together can predict a well-defined outcome almost perfectly (a
            # class defined from measured quantities); a leak shows as one feature carrying it
            s.warnings.append(f"high score {scores} spread over several features (top {top!r} "
                              f"carries {share:.0%} of the importance): no single feature gives "
                              "the outcome away")
            return
        cleared = self._cleared_by_diagnosis(top, model.get("metric"))
        if cleared is not None:
            s.handled.append(f"cleared_leakage:{top}")  # the report reads it: not a validity problem
            s.warnings.append(f"high score {scores}: the top feature {top!r} alone scores {cleared:.3f}, "
                              "and the diagnosis examined it: its values overlap between the outcomes "
                              "as a measured predictor's do, not as a recording of the outcome's")
            return
        asked = top is not None and (f"suspected_leakage:{top}" in s.handled
                                     or any(top in st.columns and st.gate == "leakage" for st in s.plan
                                            if st.status in ("done", "skipped")))
        if (split is None or top is None or asked or top not in (s.variables.get("columns") or [])
                or self.policy.mode == "none" or s.backtracks >= self.max_backtracks
                or not split.checkpoint_id):
            s.warnings.append(f"suspiciously high score {scores}: check the top feature {top!r}")
            return
        finding = {
            "id": f"suspected_leakage:{top}", "kind": "suspected_leakage", "columns": [top],
            "severity": "critical", "gate": "leakage", "synthetic": True,
            "summary": f"The model scores {max(scores):.3f} ({model.get('metric')}), too good to be true; "
                       f"its most important feature '{top}' may give the outcome away.",
            "evidence": {"metric": model.get("metric"), "cv_score": model.get("cv_score"),
                         "holdout_score": model.get("holdout_score")},
            "options": [
                {"id": "drop", "label": f"Drop {top}", "description": f"Remove {top} before the split.",
                 "risk": "loses a real predictor if it is known at prediction time", "recommended": True,
                 "action": {"function": "drop_columns",
                            "params": {"columns": [top], "reason": "suspected target leakage"}}},
                {"id": "keep", "label": "Keep it", "description": "It is known before the outcome.",
                 "risk": "a leaked column makes the score meaningless", "recommended": False,
                 "action": None}],
        }
        await self.backtrack(split, f"suspiciously perfect score ({model.get('metric')} "
                             f"{max(scores):.3f}); asking whether '{top}' leaks")
        s.findings.append(finding)
        s.changed("finding", finding=finding)

    def _cleared_by_diagnosis(self, top: str | None, metric: str | None) -> float | None:
        """The top feature's single-feature score when the diagnosis scored it as strong as a
        leak on the same metric and still did not flag it (e.g. petal width for iris species:
        near-perfect, yet the classes overlap where they meet); None otherwise."""
        from kernel_tools.diagnosis.leakage import ABSOLUTE

        d = self.session.diagnosis
        single = (d.get("feature_scores") or {}).get(top)
        if (top is None or single is None or metric not in RANKING_METRICS
                or d.get("metric") != metric or top in (d.get("leakage") or [])):
            return None
        return float(single) if single >= (1 + ABSOLUTE) / 2 else None  # AUROC / C of that strength

    # -- report --------------------------------------------------------------------------
    async def model_summary(self) -> dict[str, Any] | None:
        step = next((st for st in reversed(self.session.plan)
                     if st.episode == "train_evaluate" and st.status == "done"), None)
        return (step.result.get("report") or None) if step else None

    def judge(self) -> list[Check]:
        """The verdict's checks for the current model, kept in the session (panel, report)."""
        checks = audit(self.session)
        self.session.validity = [c.to_dict() for c in checks]
        self.session.changed("validity", checks=self.session.validity, valid=verdict(checks))
        return checks

    async def write_report_cell(self, step: Step) -> None:
        s = self.session
        model = await self.model_summary()
        checks = self.judge()
        source = nb.report_markdown(s, model, checks, s.warnings)
        cell = await self.notebook.insert_markdown(source, {"dcpilot": {"step": step.id, "episode": "report"}})
        s.cells.append({"id": cell, "step": step.id, "kind": "report"})
        step.cell_ids.append(cell)

    def model_report(self) -> dict[str, Any] | None:
        """The last trained model's report (``ModelReport.to_dict``), None before one."""
        return next((st.result.get("report") for st in reversed(self.session.plan)
                     if st.episode == "train_evaluate" and st.status == "done"), None)

    def report(self) -> dict[str, Any]:
        """The report.json content for the session as it stands."""
        return build_report(self.session, self.model_report())


def stdin_prompt(stream_in: Any = None, stream_out: Any = None) -> Prompt:
    """An interactive prompt for ``--approve ask`` on a terminal."""
    stream_in = stream_in or sys.stdin
    stream_out = stream_out or sys.stderr

    async def ask(decision: Decision, step: Step) -> tuple[str, str] | None:
        stream_out.write(f"\n[{decision.gate}] {step.title}\n  {decision.question}\n")
        for i, o in enumerate(decision.options, 1):
            mark = " (recommended)" if o["id"] == decision.recommended else ""
            stream_out.write(f"  {i}. {o['id']}{mark}: {o.get('label', '')} — risk: {o.get('risk', '')}\n")
        while True:
            stream_out.write("choose a number or an option id [Enter = recommended]: ")
            stream_out.flush()
            line = stream_in.readline()
            if not line:
                return None
            answer = line.strip()
            if not answer:
                return decision.recommended or decision.options[0]["id"], "accepted at the prompt"
            if answer.isdigit() and 1 <= int(answer) <= len(decision.options):
                return decision.options[int(answer) - 1]["id"], "chosen at the prompt"
            if decision.option(answer) is not None:
                return answer, "chosen at the prompt"
            stream_out.write(f"  not an option: {answer!r}\n")

    return ask
