"""Engine sessions hosted by the Jupyter server: one per notebook, driven from the panel.

The server runs the :class:`~jupyter_dcpilot.engine.Coordinator` in a background task. The
kernel side is a silent probe on the notebook's kernel (a client of our own, its own session
id); the notebook side is the panel's WebSocket, through which the frontend inserts and runs
the co-pilot's cells in the open notebook (:class:`BrowserNotebookHost`).
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from jupyter_core.utils import ensure_async

from kernel_tools.vocabulary import SessionState, StepStatus

from .config import DCPilot
from .engine import fingerprint, gatekeeping, impact, model_audit, plan_edits, structure, structure_cards
from .engine.budgets import Budgets
from .engine.coordinator import Coordinator
from .engine.factory import Request, build, open_session
from .engine.hosts import CellResult, agent_name, by_the_user
from .engine.session import Decision, EditRecord, Session, move_sidecar, now, sidecar_path
from .engine.task import Given, Inputs, task_kind
from .kernel_bridge import (
    KernelBridge,
    KernelBusyError,
    KernelDiedError,
    KernelRun,
    KernelWatch,
    NotebookKernelProbe,
    died_while,
)

log = logging.getLogger(__name__)
Send = Callable[[dict[str, Any]], None]


class HostError(RuntimeError):
    """The frontend could not do what the engine asked (no panel, timeout, or its error)."""


class SessionExists(RuntimeError):
    """The notebook already has a live co-pilot session (open it, or replace it)."""

    def __init__(self, hosted: HostedSession) -> None:
        super().__init__(f"notebook {hosted.path!r} already has a live co-pilot session {hosted.id}; "
                         "open it, or start again with replace: true")
        self.hosted = hosted


class NothingRunning(RuntimeError):
    """An interrupt arrived while no co-pilot step was running."""


class BrowserNotebookHost:
    """A :class:`~jupyter_dcpilot.engine.NotebookHost` over the panel's WebSocket.

    Each request carries a fresh ``request_id``; the frontend's answer with the same id
    resolves it. With no panel connected a request waits for one (up to ``timeout``), so the
    co-pilot simply pauses while the notebook is closed. Requests go to the panel that
    connected last; a request whose panel went away times out rather than running twice
    (a watched cell has no timeout: its kernel's death fails it, its budget stops it).

    With a ``watch``, a cell's kernel is checked every ``poll`` seconds while the panel runs
    it: a kernel that dies (or is shut down, restarted, replaced) fails the cell at once with
    :class:`KernelDiedError`, instead of a wait for an answer that may never come. The cell it
    left half-run is deleted: the server names every cell it asks for (``cell_id``), so it can
    remove one the panel never answered for, at once (waiting at most ``cleanup_timeout`` s) or,
    with no panel connected, as soon as one connects.
    """

    def __init__(self, timeout: float = 600.0, *, watch: KernelWatch | None = None, poll: float = 1.0,
                 cleanup_timeout: float = 10.0) -> None:
        self.timeout = timeout
        self.watch = watch
        self.poll = poll
        self.cleanup_timeout = cleanup_timeout
        self.orphans: list[str] = []  # half-made cells to delete when a panel connects
        self._senders: list[Send] = []
        self._connected = asyncio.Event()
        self._pending: dict[str, asyncio.Future[dict[str, Any]]] = {}

    def attach(self, send: Send) -> Callable[[], None]:
        """Route requests to ``send`` (the newest panel); returns the function that detaches it."""
        self._senders.append(send)
        self._connected.set()
        if self.orphans:
            asyncio.ensure_future(self._sweep())

        def detach() -> None:
            if send in self._senders:
                self._senders.remove(send)
            if not self._senders:
                self._connected.clear()

        return detach

    @property
    def connected(self) -> bool:
        """Whether a panel is connected to run the co-pilot's cells."""
        return bool(self._senders)

    def answer(self, message: dict[str, Any]) -> bool:
        """Resolve the request ``message["request_id"]`` answers; False if none is waiting."""
        future = self._pending.get(str(message.get("request_id", "")))
        if future is None or future.done():
            return False
        if message.get("type") == "host_error":
            future.set_exception(HostError(f"the notebook refused: {message.get('message', '')}"))
        else:
            future.set_result(message)
        return True

    async def request(self, kind: str, **payload: Any) -> dict[str, Any]:
        """Send one request to the panel and wait for its answer."""
        return await self._request(kind, payload)

    async def _request(self, kind: str, payload: dict[str, Any], step: str | None = None,
                       timeout: float | None = None) -> dict[str, Any]:
        """With ``step`` (a cell runs), the kernel is watched while the panel runs it."""
        loop = asyncio.get_running_loop()
        timeout = self.timeout if timeout is None else timeout
        deadline = loop.time() + timeout
        while not self._senders:  # a panel may also leave while this task waits to resume
            try:
                await asyncio.wait_for(self._connected.wait(), max(deadline - loop.time(), 0.0))
            except asyncio.TimeoutError as error:
                raise HostError(f"no notebook panel connected within {timeout:.0f} s") from error
        run = await self.watch.start() if step is not None and self.watch is not None else None
        request_id = uuid.uuid4().hex
        future: asyncio.Future[dict[str, Any]] = loop.create_future()
        self._pending[request_id] = future
        watching = asyncio.create_task(self._watch(run, future, step or "")) if run is not None else None
        # a watched cell waits as long as its kernel runs it: its step's budget decides when it
        # is stopped, never how long an answer took (a model fit may take many minutes)
        wait = None if run is not None else max(deadline - loop.time(), 0.0)
        try:
            self._senders[-1]({"type": kind, "request_id": request_id, **payload})
            reply = await asyncio.wait_for(future, wait)
        except asyncio.TimeoutError as error:
            raise HostError(f"the notebook did not answer {kind} within {timeout:.0f} s") from error
        finally:
            self._pending.pop(request_id, None)
            if watching is not None:
                watching.cancel()
        if run is not None and self.watch is not None:  # an answer from a kernel that restarted
            how = await self.watch.ended(run)  # under the cell is no result: it never ran to its end
            if how is not None:
                raise died_while(how, step or "")
        return reply

    async def _watch(self, run: KernelRun, future: asyncio.Future[dict[str, Any]], step: str) -> None:
        """Fail ``future`` as soon as the kernel of ``run`` stops: the panel may never answer.
        A cell that runs has no deadline here, but a kernel that sits idle for ``timeout``
        seconds without an answer means the panel never ran the cell: that fails too."""
        assert self.watch is not None
        loop = asyncio.get_running_loop()
        idle_since: float | None = None
        while not future.done():
            await asyncio.sleep(self.poll)
            try:
                how = await self.watch.ended(run)
                idle = how is None and hasattr(self.watch, "idle") and self.watch.idle(run)
            except Exception:  # a check that fails now is tried again at the next poll
                continue
            if how is not None and not future.done():
                future.set_exception(died_while(how, step))
            idle_since = (idle_since or loop.time()) if idle else None
            if idle_since is not None and loop.time() - idle_since >= self.timeout and not future.done():
                future.set_exception(HostError(
                    f"the notebook did not answer run_cell for step {step}: its kernel sat idle for "
                    f"{self.timeout:.0f} s after the cell was sent (is the notebook still open?)"))

    async def run_cell(self, source: str, metadata: dict[str, Any]) -> CellResult:
        step = str((metadata.get("dcpilot") or {}).get("step") or "the co-pilot's cell")
        cell_id = uuid.uuid4().hex  # the panel inserts the cell under this id
        try:
            reply = await self._request("run_cell", {"source": source, "metadata": metadata,
                                                     "cell_id": cell_id}, step)
        except KernelDiedError as error:  # the cell never ran to its end: it goes
            error.cell_id = cell_id
            error.cell_removed = await self._remove_half_made(cell_id)
            raise
        return CellResult(cell_id=str(reply.get("cell_id") or cell_id), outputs=list(reply.get("outputs") or []),
                          error=reply.get("error") or None)

    async def _remove_half_made(self, cell_id: str) -> bool:
        """Delete a cell whose kernel died under it: now, if a panel answers within
        ``cleanup_timeout`` s (True), else when a panel connects next (False)."""
        if self._senders:
            try:
                await self._request("delete_cells", {"cell_ids": [cell_id]}, timeout=self.cleanup_timeout)
                return True
            except HostError as error:
                log.warning("dcpilot: could not delete the half-made cell %s yet: %s", cell_id, error)
        self.orphans.append(cell_id)
        return False

    async def _sweep(self) -> None:
        """Delete the half-made cells left while no panel answered (a panel just connected)."""
        doomed, self.orphans = self.orphans, []
        try:
            await self._request("delete_cells", {"cell_ids": doomed}, timeout=self.cleanup_timeout)
        except HostError as error:
            log.warning("dcpilot: could not delete half-made cells %s: %s", doomed, error)
            self.orphans = doomed + self.orphans

    async def insert_markdown(self, source: str, metadata: dict[str, Any]) -> str:
        reply = await self.request("insert_markdown", source=source, metadata=metadata)
        return str(reply.get("cell_id", ""))

    async def delete_cells(self, cell_ids: list[str]) -> None:
        await self.request("delete_cells", cell_ids=list(cell_ids))


class HostedSession:
    """One notebook's engine session, its two hosts and the tasks driving its coordinator.

    Every run and undo in flight is tracked, so :meth:`close` stops them all: once closed,
    nothing of this session runs or writes its sidecar again (a replaced session's leftover
    run must not overwrite its successor's file)."""

    def __init__(self, id: str, path: str, session: Session, coordinator: Coordinator,
                 host: BrowserNotebookHost, bridge: KernelBridge | None = None) -> None:
        self.id = id
        self.path = path
        self.session = session
        self.coordinator = coordinator
        self.host = host
        self.bridge = bridge  # to interrupt the notebook's kernel
        self.task: asyncio.Task[str] | None = None  # the latest run
        self.closed = False
        self.agent_may_decide: frozenset[str] = frozenset()  # gates an agent's answer decides
        self._work: set[asyncio.Task[Any]] = set()
        self._impacts: dict[str, asyncio.Task[Any]] = {}  # decision id -> its impact estimate
        if bridge is not None and host.watch is None:  # a kernel dying under a cell fails it at once
            host.watch = KernelWatch(bridge, lambda: self.path)
        if bridge is not None and coordinator.worker.stop is None:  # a step far past its budget
            coordinator.worker.stop = self.interrupt_kernel
        session.subscribe(self._on_event)

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "path": self.path, **self.session.to_dict(), "usage": self.usage(),
                "library": plan_edits.library(self.session, self.coordinator.episodes),
                # the column timeline card and the structural choices, as the panel shows them
                "timeline": self.session.structure.card_dict(), "inferences": structure_cards.inferences_view(self.session)}

    # -- decision impact: estimated in the kernel's background while the card waits -----------
    def _on_event(self, event: dict[str, Any]) -> None:
        if event.get("type") == "awaiting_decision" and not self.closed:
            self.estimate(event["decision"]["id"])

    def estimate(self, decision_id: str, restart: bool = False) -> bool:
        """Start estimating the impact of a decision's options (unless it is running or done;
        ``restart`` starts again); False when the decision gets no estimate (see impact.wanted).
        KeyError for an unknown decision."""
        decision = self.session.decision(decision_id)
        if not impact.wanted(self.session, decision):
            return False
        running = self._impacts.get(decision_id)
        if running is not None and not running.done():
            if not restart:
                return True
            running.cancel()
        elif not restart and decision.impact is not None and decision.impact["status"] in ("running", "done"):
            return True
        decision.impact = {"status": "running"}  # at once: the answer to this request says so
        self._impacts[decision_id] = self._track(
            impact.estimate(self.session, self.coordinator.kernel, decision, self.coordinator.episodes))
        return True

    def _stop_stale(self) -> None:
        """Cancel the estimates of decisions that ask nothing any more (skipped, undone)."""
        open_ = {d.id for d in self.session.open_decisions()}
        for decision_id in [d for d in self._impacts if d not in open_]:
            self.stop_estimate(decision_id)

    def stop_estimate(self, decision_id: str) -> bool:
        """Cancel a decision's impact estimate; False when none is running."""
        task = self._impacts.pop(decision_id, None)
        if task is None or task.done():
            return False
        task.cancel()
        return True

    async def edit(self, edit: dict[str, Any], via: str) -> EditRecord:
        """Apply one plan edit (see engine.plan_edits) that came through ``via`` (the panel, the
        chat, ``agent <name>``), then carry on unless the next step still waits for its answer; its
        record. KeyError, ValueError and plan_edits.EditRefused as the coordinator's. An agent
        cannot skip a step behind a gate it may not decide: it proposes "skip" on the step's
        decision instead."""
        if self.closed:
            raise RuntimeError(f"the co-pilot session of {self.path} is closed")
        if agent_name(via) is not None and edit.get("op") == "skip":
            gate = self.session.step(str(edit.get("step"))).gate
            if gate and gate not in self.agent_may_decide:
                raise plan_edits.EditRefused(
                    f"step {edit.get('step')} is behind the {gate} gate: only the person skips it; "
                    "answer its decision with 'skip' to propose that")
        record: EditRecord = await self._track(self.coordinator.edit_plan(edit, via))
        self._stop_stale()
        for decision in self.session.open_decisions():  # e.g. new parameters: estimated again
            if decision.impact is None and decision.step_id in {st.id for st in self.session.plan
                                                                 if st.status == StepStatus.AWAITING_DECISION}:
                self.estimate(decision.id)
        if self.session.state != SessionState.BLOCKED:  # else the waiting question's answer carries on
            self.resume()
        return record

    def summary(self) -> dict[str, Any]:
        """What the panel needs to find a notebook's session again after a reload."""
        s = self.session
        return {"id": self.id, "path": self.path, "frame": s.frame,
                "target": s.task.target or s.task.given.target, "state": s.state,
                "created": s.created}

    def usage(self) -> dict[str, Any]:
        """LLM calls, tokens and cost so far (the panel's usage line)."""
        calls = self.session.llm_usage
        return {"calls": len(calls),
                "input_tokens": sum(int(u.get("input_tokens") or 0) for u in calls),
                "output_tokens": sum(int(u.get("output_tokens") or 0) for u in calls),
                "cost_usd": round(sum(float(u.get("cost_usd") or 0.0) for u in calls), 6)}

    def decide(self, decision_id: str, choice: str, rationale: str = "", *, via: str) -> Decision:
        """Record an answer that came through ``via`` (the panel, the chat, ``agent <name>``) and
        resume, under the rules of :meth:`.engine.session.Session.decide`: KeyError for no such
        decision, DecisionClosed (a ValueError) when it takes no answer now, ValueError for an
        option it does not offer. The person's answer decides. An agent's is a proposal shown
        beside the question for the person to accept, unless the user lets agents decide the
        decision's gate (:attr:`agent_may_decide`): then it decides, by "agent"."""
        agent = agent_name(via)
        decision = self.session.decision(decision_id)
        if agent is not None:
            self.session.propose(decision_id, choice, rationale, agent)
            if decision.gate not in self.agent_may_decide:
                self.note_agent(agent, f"proposed {choice!r} for decision {decision_id} ({decision.gate}); "
                                       "it waits for the person to accept it")
                return decision
        self.session.decide(decision_id, choice, rationale, by="user" if agent is None else "agent", via=via)
        self.stop_estimate(decision_id)  # answered: its estimate would only take the kernel's time
        if agent is not None:
            self.note_agent(agent, f"decided {choice!r} for decision {decision_id} ({decision.gate}), "
                                   "a gate the user lets agents decide")
        self.resume()
        return decision

    def move_column(self, column: str, group: str, rationale: str = "", *, via: str) -> None:
        """A person's move of a column on the timeline (its own group: they confirm it): KeyError
        for a column not on it, ValueError for a place that is not one. A column placed after the
        prediction time gets a leakage finding (its drop is planned and asked); a model already
        judged is judged again (known_at_index reads the moves)."""
        move = self.session.structure.move(column, group, via, now(), rationale)
        structure.moved(self.session, move)
        self._judge_again()

    async def answer_inference(self, inference_id: str, value: Any, rationale: str = "", *, via: str) -> None:
        """A person's answer to a structural question (:meth:`.engine.structure.Structure.answer`):
        the inferred value confirms it; another one is the task card's choice, taken by an open
        question that offers it, else applied after going back to before the first step that ran
        (the data is diagnosed again with it and the steps since are asked again)."""
        s = self.session
        choice = structure_cards.answer(s, inference_id, value, via, now(), rationale)
        s.log("structure", f"{inference_id} {'confirmed' if choice is None else f'set to {value!r}'} "
              f"{by_the_user(via)}" + (f": {rationale}" if rationale else ""), inference=inference_id)
        if choice is None:
            self._judge_again()
            return
        asking = next((d for d in s.open_decisions() if d.option(choice) is not None), None)
        if asking is not None:
            self.decide(asking.id, choice, rationale, via=via)
            return
        if s.checkpoints:  # the structure every step since rests on changes: back to before them
            first = s.checkpoints[0].id
            await self._track(self.coordinator.undo(first, f"{inference_id} set to {value!r} {by_the_user(via)}"))
            self._stop_stale()
        gatekeeping.apply_task_answer(s, choice)
        self.resume()

    def _judge_again(self) -> None:
        if self.session.validity:
            model_audit.judge(self.session, self.coordinator.episodes)

    def note_agent(self, agent: str, text: str) -> None:
        """One line of the transcript (the decision log) for what an agent did."""
        self.session.log("agent", f"agent {agent} {text}", agent=agent)

    async def undo(self, checkpoint_id: str, agent: str | None = None) -> None:
        """Go back to before a checkpoint, then carry on (undone decisions are asked again)."""
        self.session.checkpoint(checkpoint_id)  # KeyError naming it
        if agent is not None:
            self.note_agent(agent, f"undid the work back to checkpoint {checkpoint_id}")
        await self._track(self.coordinator.undo(checkpoint_id))
        self._stop_stale()
        self.resume()

    async def interrupt(self) -> str:
        """Interrupt the notebook's kernel under the running co-pilot step (it becomes failed)
        or diagnosis; the run stops and the session stays usable. Returns what was stopped."""
        stopped = self.coordinator.interrupt()
        if stopped is None or self.bridge is None:
            raise NothingRunning("the co-pilot is not running")
        kernel_id = await self.bridge.kernel_id_for(self.path)
        await ensure_async(self.bridge.kernel_manager.interrupt_kernel(kernel_id))
        self.session.log("interrupt", f"the user interrupted {stopped}")
        return stopped

    async def interrupt_kernel(self) -> None:
        """Interrupt the notebook's kernel (what a step past its budget's limit gets)."""
        assert self.bridge is not None
        kernel_id = await self.bridge.kernel_id_for(self.path)
        await ensure_async(self.bridge.kernel_manager.interrupt_kernel(kernel_id))

    def resume(self) -> None:
        """Run the coordinator until blocked, in the background (runs are serialised by it)."""
        if self.closed:
            raise RuntimeError(f"the co-pilot session of {self.path} is closed")
        self.task = self._track(self._run())

    def _track(self, work: Any) -> asyncio.Task[Any]:
        task = asyncio.ensure_future(work)
        self._work.add(task)
        task.add_done_callback(self._work.discard)
        return task

    async def _run(self) -> str:
        try:
            return await self.coordinator.run_until_blocked()
        except KernelDiedError as error:  # the step failed; the session waits for the user
            s = self.session
            s.warnings.append(str(error))
            step = next((st for st in s.plan if st.id == error.step_id), None)
            if step is not None:
                step.note = after_kernel_death(error)
                s.changed("step", step=step.id, status=step.status, note=step.note)
            s.state = SessionState.IDLE
            s.changed("state", state=s.state)
            log.warning("dcpilot session %s: %s", self.id, error)
            return s.state
        except Exception:  # the coordinator already recorded it in the session
            log.exception("dcpilot session %s stopped", self.id)
            return "failed"

    async def close(self, reason: str = "stopped when the server shut down", wait: float = 5.0) -> None:
        """Stop every run and undo in flight (waiting at most ``wait`` s for them to unwind), then
        save the session to its sidecar for the last time: the next start resumes from there.

        OSError when that save fails; the session is closed all the same."""
        self.closed = True
        pending = [task for task in self._work if not task.done()]
        for task in pending:
            task.cancel()
        if pending:
            _, stuck = await asyncio.wait(pending, timeout=wait)
            if stuck:
                log.warning("dcpilot session %s: %d task(s) still unwinding after %.0f s", self.id,
                            len(stuck), wait)
        s = self.session
        for step in s.plan:  # a step cut off mid-run is retried when the session resumes
            if step.status == StepStatus.RUNNING:
                step.status, step.note = StepStatus.FAILED, reason
        if s.state == SessionState.RUNNING:
            s.state = SessionState.IDLE
        try:
            s.changed("closed", reason=reason)  # saved, and the panel is told
        finally:
            s.path = None  # nothing of this session writes its sidecar again


class SessionRegistry:
    """The server's hosted sessions, by unguessable id (uuid4) and by notebook path."""

    def __init__(self, bridge: KernelBridge, root_dir: str, host_timeout: float = 600.0,
                 settings: DCPilot | None = None) -> None:
        self.bridge = bridge
        self.root = Path(root_dir).resolve()
        self.host_timeout = host_timeout
        self.settings = settings if settings is not None else DCPilot()  # the server's c.DCPilot
        # the server's step budgets (c.DCPilot.budget); a start request may override them
        self.budgets = Budgets.from_spec(self.settings.budget)
        self._by_id: dict[str, HostedSession] = {}
        self._by_path: dict[str, str] = {}

    def os_path(self, path: str) -> Path:
        """The notebook's file under the server root; ValueError for a path outside it."""
        full = (self.root / path.lstrip("/")).resolve()
        if self.root not in full.parents or full.suffix != ".ipynb":
            raise ValueError(f"{path!r} is not a notebook path under the server root")
        return full

    def codebook(self, notebook: Path, dictionary: str | None, events: str | None = None) -> dict[str, str]:
        """The codebook of a request as absolute paths ({} for none): each path relative to the
        notebook's folder (or to the server root when it starts with '/'), a file under the server
        root, and read once here, so a wrong file is one clear error (ValueError) before anything runs."""
        from kernel_tools.dictionary import DictionaryError, read_dictionary

        if dictionary is None:
            if events is not None:
                raise ValueError("events (REDCap's instrument-event mapping) needs a dictionary")
            return {}
        found: dict[str, str] = {}
        for key, given in (("dictionary", dictionary), ("events", events)):
            if given is None:
                continue
            full = ((self.root / given.lstrip("/")) if given.startswith("/") else (notebook.parent / given)).resolve()
            if self.root not in full.parents:
                raise ValueError(f"{key} {given!r} is not a file under the server root")
            if not full.is_file():
                raise ValueError(f"{key} {given!r}: no such file next to {notebook.name}")
            found[key] = str(full)
        try:
            read_dictionary(found["dictionary"], events=found.get("events"))
        except (DictionaryError, ImportError, OSError, ValueError) as exc:
            raise ValueError(f"dictionary {dictionary!r} cannot be read as a codebook: {exc}") from None
        return found

    async def open(self, path: str, *, frame: str, target: str | None = None, task: str | None = None,
                   time: str | None = None, goal: str | None = None, approve: Any = None,
                   planner: str | None = None, model: str | None = None, share: str | None = None,
                   budget: Any = None, replace: bool = False, dictionary: str | None = None,
                   events: str | None = None, join: list[str] | None = None) -> HostedSession:
        """The notebook's session (new, or loaded from its sidecar after a restart), running.

        One live session per notebook: :class:`SessionExists` unless ``replace`` (which closes
        the live one and starts afresh). ``planner`` "rules" (default) or "claude" with
        ``model`` (default: ``c.DCPilot.model``); ``share`` says what Claude may see; ``approve``
        defaults to ``c.DCPilot.default_approve``; ``budget``: seconds per kind of step over the
        server's (see :mod:`.engine.budgets`); ``dictionary``: the study's codebook (``events``:
        REDCap's event mapping), see :meth:`codebook`; ``join``: other DataFrames of the kernel, joined
        with ``frame`` as the command line joins several files (the frame holding the target first)."""
        path = path.lstrip("/")
        request = Request(frame=frame, given=Given(target=target, time=time, kind=task_kind(task)),
                          inputs=Inputs(goal=goal, share=share or "schema",
                                        frames=[frame, *(f for f in join or [] if f != frame)] if join else []),
                          planner=planner or "rules",
                          approve=approve if approve is not None else self.settings.default_approve,
                          budget=budget, model=model)
        policy = request.policy()  # a bad approve (or budget, below) refused before anything starts
        Budgets.from_spec(budget, base=self.budgets)
        llm = planner_config(self.settings, model) if request.planner == "claude" else None
        notebook = self.os_path(path)
        codebook = await asyncio.to_thread(self.codebook, notebook, dictionary, events)  # read off the event loop
        await self.bridge.kernel_id_for(path)  # NoKernelError before anything is written
        for name in [frame, *(join or [])]:
            await self._check_frame(path, name)
        existing = self._by_path.get(path)  # looked up after the await: no duplicate sessions
        if existing is not None:
            if not replace:
                raise SessionExists(self._by_id[existing])
            await self.discard(existing, reason="replaced by a new session")
            sidecar_path(notebook).unlink(missing_ok=True)
        request.inputs.dictionary, request.inputs.events = codebook.get("dictionary"), codebook.get("events")
        # read off the event loop: a sidecar may be anything a shared folder holds (sidecar_io.py)
        session = await asyncio.to_thread(open_session, request, notebook)
        await fingerprint.check_resumed(session, self.bridge.calls(path))  # the data it ran on?
        host = BrowserNotebookHost(self.host_timeout)
        coordinator = build(request, session, NotebookKernelProbe(self.bridge, path), host, policy=policy,
                            llm=llm, base=self.budgets)
        hosted = HostedSession(uuid.uuid4().hex, path, session, coordinator, host, bridge=self.bridge)
        hosted.agent_may_decide = frozenset(self.settings.agent_may_decide)
        self._by_id[hosted.id] = hosted
        self._by_path[path] = hosted.id
        session.save()
        hosted.resume()
        return hosted

    async def notebooks(self) -> list[str]:
        """The notebooks with a running kernel: where a session can start (server-relative)."""
        models = await self.bridge.session_manager.list_sessions()
        return sorted({str(m.get("path", "")).lstrip("/") for m in models
                       if m.get("kernel") and str(m.get("path", "")).endswith(".ipynb")})

    async def frames(self, path: str) -> list[dict[str, Any]]:
        """The DataFrames in the notebook's kernel (``name``, ``rows``, ``columns``, ...), as the
        panel lists them. NoKernelError, KernelBusyError and KernelDiedError as the bridge's."""
        return await self.bridge.calls(path.lstrip("/")).frames()

    async def columns(self, path: str, frame: str) -> list[str]:
        """The column names of one DataFrame in the notebook's kernel ([] if it has none)."""
        info = await self.bridge.calls(path.lstrip("/")).frame_info([frame])
        return list((info.get(frame) or {}).get("columns") or [])

    async def _check_frame(self, path: str, frame: str, wait: float = 5.0) -> None:
        """ValueError unless ``frame`` is a DataFrame in the notebook's kernel. A kernel busy
        with the user's cell for longer than ``wait`` is not waited for: the session's own
        diagnosis then says what is wrong, as before."""
        try:
            info = await asyncio.wait_for(self.bridge.calls(path).frame_info([frame]), wait)
        except (asyncio.TimeoutError, KernelBusyError):
            return
        found = (info or {}).get(frame)
        if found is None:
            raise ValueError(f"no variable named {frame!r} in the notebook's kernel")
        if found.get("columns") is None or found.get("cols") is None:  # a frame has both
            raise ValueError(f"{frame!r} is a {found.get('type')}, not a DataFrame")

    def sessions(self, path: str | None = None) -> list[HostedSession]:
        """The live sessions, of one notebook when ``path`` is given."""
        wanted = None if path is None else path.lstrip("/")
        return [h for h in self._by_id.values() if wanted is None or h.path == wanted]

    async def discard(self, session_id: str, reason: str = "closed") -> None:
        """Close one session (saved to its sidecar) and forget it."""
        hosted = self._by_id.pop(session_id, None)
        if hosted is not None:
            if self._by_path.get(hosted.path) == session_id:
                del self._by_path[hosted.path]
            await hosted.close(reason=reason)

    async def follow_rename(self, source: str, path: str) -> list[HostedSession]:
        """Follow a rename of a notebook, or of a folder holding notebooks, whoever did it.

        A live session moves with its notebook (path, kernel lookups, sidecar, transcript) and
        tells the panel; a sidecar of a notebook with no live session moves beside the new name
        so the session reloads there. The new name never inherits another notebook's session.
        Returns the live sessions moved. Called by the server's contents "rename" event."""
        source, path = source.strip("/"), path.strip("/")
        moves = [(self._by_id[i], new) for old, i in self._by_path.items()
                 if (new := _renamed(old, source, path)) is not None]
        moving = {hosted.id for hosted, _ in moves}
        # a live session at a new name outlived its deleted notebook: it must not save over the move
        stale = [self._by_id[i] for p, i in self._by_path.items()
                 if i not in moving and any(p == new for _, new in moves)]
        for hosted in stale:
            hosted.session.path = None
            del self._by_path[hosted.path]
        for hosted, new in moves:  # before any await: a panel asking next finds the new path
            self._move(hosted, new, source)
        if not moves and (self.root / path).suffix == ".ipynb" and (self.root / path).is_file():
            # signed again for its new name (a copy elsewhere is not); off the loop: it reads the file
            await asyncio.to_thread(move_sidecar, self.root / source, self.root / path)
        for hosted in stale:
            await self.discard(hosted.id, reason="the notebook was deleted")
        await self._follow_kernel_sessions(source, path, {new for _, new in moves})
        return [hosted for hosted, _ in moves]

    async def follow_delete(self, path: str) -> list[str]:
        """Follow the deletion of a notebook, or of a folder holding notebooks, whoever did it.

        Their live sessions close (a run in progress stops; the panel is told) and their
        sidecars are removed, as is the sidecar of a deleted notebook with no live session:
        nothing of a notebook outlives it, and a new notebook of the same name starts afresh.
        Returns the ids of the sessions closed. Called by the server's contents "delete" event."""
        path = path.strip("/")
        gone = [self._by_id[i] for p, i in self._by_path.items() if _within(p, path)]
        for hosted in gone:  # before any await: a panel asking next finds no session
            del self._by_id[hosted.id]
            del self._by_path[hosted.path]
            hosted.session.path = None  # closing must not write the sidecar again
            sidecar_path(self.root / hosted.path).unlink(missing_ok=True)
        if path.endswith(".ipynb"):
            sidecar_path(self.root / path).unlink(missing_ok=True)
        await asyncio.gather(*(hosted.close(reason="the notebook was deleted") for hosted in gone))
        return [hosted.id for hosted in gone]

    def _move(self, hosted: HostedSession, new: str, source: str) -> None:
        """Point a live session at its notebook's new path and save it beside the new name."""
        old = hosted.path
        self._by_path.pop(old, None)
        self._by_path[new] = hosted.id
        hosted.path = new
        if isinstance(hosted.coordinator.kernel, NotebookKernelProbe):
            hosted.coordinator.kernel.path = new  # the Claude planner shares this probe
        s = hosted.session
        old_sidecar = sidecar_path(self.root / old)
        s.notebook, s.path = str(self.root / new), str(sidecar_path(self.root / new))
        s.changed("renamed", path=new, source_path=old)  # saved beside the new name
        if old_sidecar.exists():  # a notebook renamed, or a save raced a folder rename
            old_sidecar.unlink()
            _prune_empty(old_sidecar.parent, self.root / source)
        s.log("rename", f"The notebook was renamed from {old} to {new}; the session moved with it.",
              path=new, source_path=old)

    async def _follow_kernel_sessions(self, source: str, path: str, moved: set[str]) -> None:
        """Rename the server's kernel sessions of the moved notebooks (JupyterLab does so itself;
        another client may not): the co-pilot finds a notebook's kernel by that path."""
        if not moved:
            return
        manager = self.bridge.session_manager
        for model in await manager.list_sessions():
            new = _renamed(str(model.get("path") or ""), source, path)
            if new in moved:
                await manager.update_session(model["id"], path=new)

    def get(self, session_id: str) -> HostedSession:
        try:
            return self._by_id[session_id]
        except KeyError:
            raise KeyError(f"no co-pilot session {session_id!r}") from None

    async def close(self) -> list[str]:
        """Save every session to its sidecar and close it (the server is shutting down).

        Never raises, and takes seconds whatever the sessions are doing: a session that
        cannot be saved must not keep the server (and every kernel) from stopping. Returns
        the failures, one line each."""
        closing = list(self._by_id.values())
        self._by_id.clear()
        self._by_path.clear()
        results = await asyncio.gather(*(hosted.close() for hosted in closing), return_exceptions=True)
        return [f"{hosted.path}: {type(result).__name__}: {result}"
                for hosted, result in zip(closing, results) if isinstance(result, BaseException)]


def _within(path: str, folder_or_file: str) -> bool:
    """Whether ``path`` is ``folder_or_file`` or lies inside it (server-relative paths)."""
    path = path.strip("/")
    return bool(folder_or_file) and (path == folder_or_file or path.startswith(folder_or_file + "/"))


def _renamed(path: str, source: str, target: str) -> str | None:
    """``path`` after ``source`` (a file or a folder) was renamed to ``target``; None if unmoved."""
    path = path.strip("/")
    if source and path == source:
        return target
    if source and path.startswith(source + "/"):
        return target + path[len(source):]
    return None


def _prune_empty(folder: Path, top: Path) -> None:
    """Remove ``folder`` and its parents up to ``top`` while they are empty (a save that raced a
    folder rename re-created them)."""
    if folder != top and top not in folder.parents:
        return
    for directory in (folder, *folder.parents):
        if directory == top.parent or any(directory.iterdir()):
            return
        directory.rmdir()


def pick_frame(frames: list[dict[str, Any]], wanted: str | None = None) -> str | None:
    """The DataFrame a start means: the one named (if the kernel has it), else the only one.
    None when the user must say which: the name is not a DataFrame there, or there are none
    or several to choose from."""
    names = [str(f.get("name")) for f in frames]
    if wanted is not None:
        return wanted if wanted in names else None
    return names[0] if len(names) == 1 else None


def after_kernel_death(error: KernelDiedError) -> str:
    """What the plan says about a step whose kernel died in its cell: where that cell went, and
    what to do next."""
    if error.cell_removed:
        cell = "its half-made cell was removed from the notebook"
    elif error.cell_id:
        cell = "its half-made cell is removed as soon as the notebook's co-pilot panel reconnects"
    else:
        cell = "it wrote no cell"
    return (f"The kernel stopped while this step ran; {cell}. Next: once the kernel runs again, "
            "“Undo to here” on this step brings the variables back from the checkpoint kept on disk, "
            "and the co-pilot carries on. If that checkpoint could not be kept (larger than the disk "
            "limit, or spilling turned off), re-run the cells that make the frame, then Resume.")


def planner_config(settings: DCPilot, model: str | None) -> Any:
    """The LLM configuration the engine uses (``c.DCPilot`` settings, the API key from the
    environment or the keyring) with the requested model; ValueError when there is no key."""
    config = settings.llm_config()
    if not config.available:
        raise ValueError("the claude planner needs an Anthropic API key (ANTHROPIC_API_KEY or the "
                         "system keyring); none is configured")
    if model is not None:
        if not isinstance(model, str) or not model.strip():
            raise ValueError(f"model must be a Claude model id, not {model!r}")
        config.model = model.strip()
    return config
