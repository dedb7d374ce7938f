"""IPython magics: the co-pilot inline, hosted in the kernel itself (no panel needed).

``%load_ext jupyter_dcpilot`` registers ``%dccheck``, ``%dcplan``, ``%dcstatus``,
``%dccheckpoints``, ``%dcundo``, ``%dcreport``, ``%dcdecide`` and ``%dctimeline``, and the plan edits
``%dcskip``, ``%dcmove``, ``%dcadd``, ``%dcparams`` and ``%dcreopen``. They work wherever IPython
does (Notebook 7, JupyterLab without the panel, a terminal): the engine's two interfaces are
implemented on the shell itself — probes are evaluated with ``eval`` in the user namespace
(same process) and cells run with ``shell.run_cell``.

How the async engine is driven: a magic already runs inside the kernel's event loop, so
``asyncio.run`` cannot be called there, and nesting loops (nest_asyncio) would patch the kernel's
own loop for everyone. The IPython shell and ipykernel's output routing are not thread-safe (an
output belongs to the message the kernel thread is handling), so shell work must stay on the
kernel thread. :class:`~.kernel_thread.MainThreadBridge` therefore runs the coroutine on a private event loop in
a worker thread while the kernel thread blocks serving the shell calls the engine sends it. The
same code runs in ipykernel, in a terminal and in tests, and a planner doing real network
I/O (the LLM) would work unchanged.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import traceback
import uuid
from pathlib import Path
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring
from IPython.display import Markdown, display

from jupyter_dcpilot.probe import ProbeError
from kernel_tools.plurals import counted
from kernel_tools.vocabulary import SessionState, StepStatus, TimelineGroup

from .engine import model_audit, structure
from .engine.budgets import Budgets, minutes
from .engine.episodes import Episode
from .engine.factory import Request, build, open_session
from .engine.hosts import CellResult, Via
from .engine.notebook import md_text, plan_edits_markdown, score_text, validity_markdown
from .engine.plan_edits import EditRefused, parse_pairs
from .engine.plan_edits import library as plan_library
from .engine.session import Decision, DecisionClosed, EditRecord, Session, now
from .engine.structure import timeline_group
from .engine.task import Given, Inputs
from .engine.timeline_text import NONE_YET, timeline_markdown, to_confirm
from .engine.validation import did_you_mean
from .engine.validity import audit
from .inputs import INDEX_WORDS
from .kernel_thread import Interrupted, MainThreadBridge, on_kernel_thread
from .widget_cards import DecisionCard, TimelineCard

INLINE_NOTEBOOK = ".dcpilot-inline.ipynb"


class ShellProbe:
    """A :class:`~jupyter_dcpilot.engine.hosts.KernelProbe` on the shell of this very process."""

    def __init__(self, shell: Any, bridge: MainThreadBridge) -> None:
        self.shell = shell
        self.bridge = bridge

    async def evaluate(self, expression: str) -> Any:
        try:
            return await self.bridge.call(lambda: self._evaluate(expression))
        except Interrupted:  # as the kernel says it to the other hosts: the coordinator stops the run
            raise ProbeError("the kernel could not run the co-pilot's request: interrupted",
                             "KeyboardInterrupt", "") from None

    def _evaluate(self, expression: str) -> Any:
        try:
            text = eval(expression, self.shell.user_ns)  # the engine's probe expression, no user input
        except Exception as exc:
            raise ProbeError(f"{type(exc).__name__}: {exc}", type(exc).__name__, str(exc)) from exc
        return json.loads(text)


class ShellNotebook:
    """A :class:`~jupyter_dcpilot.engine.hosts.NotebookHost` that runs cells with ``shell.run_cell``.

    There is no notebook document to edit from a kernel: outputs are shown under the magic
    (or in ``output``, an ipywidgets Output) and the cells are kept in :attr:`cells`.
    """

    def __init__(self, shell: Any, bridge: MainThreadBridge, output: Any = None) -> None:
        self.shell = shell
        self.bridge = bridge
        self.output = output
        self.cells: list[dict[str, Any]] = []

    async def run_cell(self, source: str, metadata: dict[str, Any]) -> CellResult:
        return await self.bridge.call(lambda: self._run_cell(source, metadata))

    async def insert_markdown(self, source: str, metadata: dict[str, Any]) -> str:
        return await self.bridge.call(lambda: self._insert_markdown(source, metadata))

    async def delete_cells(self, cell_ids: list[str]) -> None:
        doomed = set(cell_ids)
        self.cells = [c for c in self.cells if c["id"] not in doomed]

    def _shown(self) -> Any:
        return self.output if self.output is not None else contextlib.nullcontext()

    def _run_cell(self, source: str, metadata: dict[str, Any]) -> CellResult:
        from IPython.utils.capture import capture_output

        real = self.shell.display_pub
        with capture_output() as captured:
            # ipykernel calls display_pub.set_parent for every shell message it dispatches; one
            # dispatched while this capture is in place (a widget's message) met a publisher
            # without it and was lost with an AttributeError, leaving its cell waiting forever
            self.shell.display_pub.set_parent = getattr(real, "set_parent", lambda *args, **kwargs: None)
            result = self.shell.run_cell(source, store_history=False)
        with self._shown():
            display(Markdown(f"```python\n{source}\n```"))
            captured.show()
        outputs: list[dict[str, Any]] = []
        for name, text in (("stdout", captured.stdout), ("stderr", captured.stderr)):
            if text:
                outputs.append({"output_type": "stream", "name": name, "text": text})
        outputs += [{"output_type": "display_data", "data": dict(o.data), "metadata": dict(o.metadata or {})}
                    for o in captured.outputs]
        error = None
        exc = result.error_before_exec or result.error_in_exec
        if exc is not None:
            error = {"ename": type(exc).__name__, "evalue": str(exc),
                     "traceback": traceback.format_exception(exc)}
            with self._shown():
                display(Markdown(f"**Error:** `{type(exc).__name__}: {exc}`"))
        cell_id = uuid.uuid4().hex[:12]
        self.cells.append({"id": cell_id, "cell_type": "code", "source": source, "metadata": dict(metadata),
                           "outputs": outputs})
        return CellResult(cell_id=cell_id, outputs=outputs, error=error)

    def _insert_markdown(self, source: str, metadata: dict[str, Any]) -> str:
        cell_id = uuid.uuid4().hex[:12]
        self.cells.append({"id": cell_id, "cell_type": "markdown", "source": source, "metadata": dict(metadata)})
        with self._shown():
            display(Markdown(source))
        return cell_id


def _esc(text: Any) -> str:
    import html

    return html.escape(str(text))


class Pilot:
    """One co-pilot session hosted in this kernel: session, coordinator, the shell hosts, widgets."""

    def __init__(self, shell: Any, session: Session, request: Request, tick: float | None = None) -> None:
        import ipywidgets as w

        self.shell = shell
        self.session = session
        # Kernel → Interrupt: the step stops and is rolled back, the run ends as the card says
        self.bridge = MainThreadBridge(on_interrupt=lambda: self.coordinator.interrupt())
        self.output = w.Output()
        self.status = w.HTML()
        self.progress = w.HTML()  # what runs now, for how long, against its budget
        self.cards_box = w.VBox()
        self.widget = w.VBox([self.status, self.progress, self.output, self.cards_box])
        self.probe = ShellProbe(shell, self.bridge)
        self.notebook = ShellNotebook(shell, self.bridge, self.output)
        # a step far past its budget is stopped as the server's are: the kernel interrupts itself
        self.coordinator = build(request, session, self.probe, self.notebook,
                                 policy=request.policy(files=True), stop=self.bridge.stop, tick=tick)
        self.cards: list[DecisionCard] = []
        session.subscribe(self._on_event)

    def _on_event(self, event: dict[str, Any]) -> None:
        """Progress events update the widget's progress line (from the engine's thread: a
        widget's state is sent on the kernel's iopub channel, which is safe from any thread)."""
        if event["type"] == "progress":
            elapsed, budget = float(event["elapsed_s"]), event.get("budget_s")
            of = f" of its {minutes(budget)} budget" if budget else ""
            over = " — over budget" if budget and elapsed > budget else ""
            self.progress.value = (f"Running <b>{_esc(event['title'])}</b> · {minutes(elapsed)}{of}{over}")
        elif event["type"] == "state" and event.get("state") != SessionState.RUNNING:
            self.progress.value = ""
        elif event["type"] == "decision" and event["decision"].get("choice") is not None:
            for card in self.cards:  # answered, wherever: its card takes no second answer
                if card.decision.id == event["decision"]["id"]:
                    card.close()
        elif event["type"] == "impact":  # estimated before the card shows (see Request.impact)
            info, options = event["impact"], event.get("options") or []
            done = sum(1 for o in options if o.get("impact"))
            self.progress.value = ("" if info.get("status") != "running" else
                                   f"Estimating what each option does to the model · {done}/{len(options)}")
            for card in self.cards:
                if card.decision.id == event["decision_id"]:
                    card.show_impact()

    def set_budgets(self, budgets: Budgets) -> None:
        """New time budgets for the steps still to run."""
        self.coordinator.budgets = self.coordinator.worker.budgets = budgets
        self.session.settings["budgets"] = budgets.to_dict()

    def run(self) -> str:
        """Run the coordinator until blocked, finished or failed; refresh the cards."""
        state: str | None = None
        seen = len(self.session.transcript)
        try:
            with self.output:
                state = self.bridge.run(self.coordinator.run_until_blocked)
        finally:
            self.refresh()
            self._say_stopped(self.session.transcript[seen:])
        if state is None:  # in a kernel the widget's output area shows the error and swallows it
            raise RuntimeError("the co-pilot stopped on an error, shown in its card above; nothing was lost: "
                               "%dcstatus says where it stands, %dcundo goes back")
        return state

    def _say_stopped(self, entries: list[dict[str, Any]]) -> None:
        """The card's status line says what Kernel → Interrupt, or a step's budget, stopped
        during this run."""
        stopped = [e for e in entries if e.get("kind") == "interrupt"]
        if stopped:
            what = stopped[0]["text"].removesuffix(" was interrupted by the user")
            self.status.value += (f"<br><b>Interrupted by you:</b> {_esc(what)} stopped; nothing it changed is kept. "
                                  "<code>%dcplan</code> carries on.")
        over = {e.get("step_id") for e in entries if e.get("kind") == "budget"}
        for step in (st for st in self.session.plan if st.id in over):
            self.status.value += (
                f"<br><b>Stopped at its budget of {minutes(step.budget_s or 0)}:</b> {_esc(step.id)} "
                f"({_esc(step.title)}) had run {minutes(step.elapsed_s or 0)}; nothing it changed is kept. "
                f"More time: <code>%dcplan {_esc(self.session.frame)} --budget {_esc(step.episode)}=SECONDS</code>")

    def decide(self, decision_id: str, choice: str, rationale: str = "") -> str:
        """Record the user's answer and resume the run, under the one set of rules
        (:meth:`.engine.session.Session.decide`): a decision already answered, or whose step no
        longer waits (a stale card), raises DecisionClosed and changes nothing."""
        self.session.decide(decision_id, choice, rationale, by="user", via=Via.MAGIC)
        return self.run()

    def edit(self, edit: dict[str, Any]) -> EditRecord:
        """Apply one plan edit (skip, move, add, params, reopen), then carry on; its record."""
        record = self.bridge.run(lambda: self.coordinator.edit_plan(edit, via=Via.MAGIC))
        self.run()
        return record

    def move_columns(self, columns: list[str], group: str, rationale: str = "") -> str:
        """A person's moves on the column timeline, by the path the panel and the chat take
        (:func:`.engine.structure.moved`: a column placed after the index gets a finding asking
        to drop it; a model already judged is judged again). Every column and the place are
        checked before any move is recorded: KeyError or ValueError, and nothing moved."""
        s = self.session
        place = timeline_group(group)
        if not columns:
            raise ValueError("name the columns to move")
        for column in columns:
            s.structure.on_card(column)
        for column in columns:
            structure.moved(s, s.structure.move(column, place, Via.MAGIC, now(), rationale))
        if s.validity:
            model_audit.judge(s, self.coordinator.episodes)
        names = ", ".join(f"'{c}'" for c in columns)
        late = "" if place == TimelineGroup.BASELINE else " A step that drops what is recorded late is planned and asked."
        return f"{names} {'is' if len(columns) == 1 else 'are'} now {place.replace('_', ' ')} (set by you).{late}"

    def timeline_card(self) -> TimelineCard:
        """The column timeline card; its Move and Confirm change the session's records on the
        kernel's main thread (:func:`.kernel_thread.on_kernel_thread`), after a run going on there,
        never in the middle of it (a run's diagnosis replaces the records a move is written to)."""
        return TimelineCard(
            self.session,
            lambda columns, group: on_kernel_thread(self.shell, lambda: self.move_columns(columns, group)),
            lambda: on_kernel_thread(self.shell, self.confirm_columns))

    def confirm_columns(self, columns: list[str] | None = None, rationale: str = "") -> str:
        """Confirm columns where the card has them (default: every column to confirm that is not
        unknown); a column on *unknown* needs a place, a ValueError says so."""
        s = self.session
        card = s.structure.card()
        if card is None:
            raise ValueError(NONE_YET)
        named = columns is not None
        chosen = list(columns) if columns is not None else to_confirm(s.structure)
        for column in chosen:
            s.structure.on_card(column)
        unknown = [c for c in chosen if card.columns[c].group == TimelineGroup.UNKNOWN]
        if named and unknown:
            raise ValueError(f"{', '.join(repr(c) for c in unknown)} {'is' if len(unknown) == 1 else 'are'} "
                             "unknown on the timeline: say where with '%dctimeline move COL to baseline|follow-up|outcome'")
        chosen = [c for c in chosen if c not in unknown]
        for column in chosen:
            structure.moved(s, s.structure.move(column, card.columns[column].group, Via.MAGIC, now(), rationale))
        if chosen and s.validity:
            model_audit.judge(s, self.coordinator.episodes)
        said = (f"Confirmed {', '.join(repr(c) for c in chosen)} where {'it is' if len(chosen) == 1 else 'they are'}."
                if chosen else "Nothing to confirm.")
        return said + (f" Still to place (unknown): {', '.join(repr(c) for c in unknown)}." if unknown else "")

    def undo(self, checkpoint_id: str | None = None) -> str:
        """Undo back to a checkpoint (default: the last one); returns its id."""
        if checkpoint_id is None:
            if not self.session.checkpoints:
                raise ValueError("nothing to undo: this session has no checkpoints")
            checkpoint_id = self.session.checkpoints[-1].id
        self.session.checkpoint(checkpoint_id)  # KeyError naming it when unknown
        self.bridge.run(lambda: self.coordinator.undo(checkpoint_id))
        self.refresh()
        return checkpoint_id

    def refresh(self) -> None:
        s = self.session
        asked = s.next_decision()
        kept = [c for c in self.cards if c.decision is asked]  # the same question: its card stays live
        for card in self.cards:  # the cards shown before: live buttons only on the question asked now
            if card not in kept:
                card.close(still_open=card.decision in s.open_decisions())
        self.status.value = (f"<b>dcpilot</b> on <code>{_esc(s.frame)}</code>: {_esc(s.state)} — "
                             f"{sum(st.status == StepStatus.DONE for st in s.plan)} steps done, "
                             f"{len(s.open_decisions())} decisions open")
        # one question at a time, in plan order (as the panel asks)
        for card in kept:  # its estimate may have changed meanwhile (new parameters, estimated again)
            card.show_impact()
        self.cards = kept or [DecisionCard(d, self._title(d), self._choose) for d in [asked] if d is not None]
        self.cards_box.children = [c.widget for c in self.cards]

    def _title(self, decision: Decision) -> str:
        try:
            return self.session.step(decision.step_id).title
        except KeyError:
            return decision.step_id

    def _choose(self, decision_id: str, option_id: str, rationale: str) -> None:
        on_kernel_thread(self.shell, lambda: self._answer(decision_id, option_id, rationale))

    def _answer(self, decision_id: str, option_id: str, rationale: str) -> None:
        with self.output:
            try:
                self.decide(decision_id, option_id, rationale)
            except DecisionClosed as closed:  # a stale card: said, and nothing changes
                display(Markdown(f"**Not recorded:** {md_text(closed)}."))
                for card in self.cards:
                    if card.decision.id == decision_id:
                        card.close()


def status_markdown(session: Session) -> str:
    """The plan with step statuses, then the open decisions."""
    lines = [f"**dcpilot** on `{session.frame}` — state: **{session.state}**", "",
             "| step | title | status | decision |", "|---|---|---|---|"]
    for st in session.plan:
        d = next((x for x in session.decisions if x.id == st.decision_id), None)
        choice = f"{d.choice} (by {d.by})" if d is not None and d.decided else ("open" if d else "")
        lines.append(f"| {st.id} | {md_text(st.title)} | {st.status} | {choice} |")
    open_ = session.open_decisions()
    if open_:
        lines += ["", "**Waiting for a decision:**"]
        for d in open_:
            options = ", ".join(f"`{o.id}`" + (" (recommended)" if o.id == d.recommended else "")
                                for o in d.options)
            lines.append(f"- `{d.id}` ({d.gate}): {md_text(d.question)} — options: {options}")
    unsure = to_confirm(session.structure)
    if unsure:
        lines += ["", f"**Column timeline:** {counted(len(unsure), 'column')} to confirm "
                  f"({', '.join(f'`{md_text(c)}`' for c in unsure[:6])}{' …' if len(unsure) > 6 else ''}): `%dctimeline`"]
    if session.warnings:
        lines += ["", "**Warnings:**", *[f"- {md_text(w)}" for w in session.warnings[-10:]]]
    return "\n".join(lines)


def checkpoints_markdown(session: Session) -> str:
    if not session.checkpoints:
        return "No checkpoints yet."
    lines = ["| checkpoint | before step | label | variables | taken |", "|---|---|---|---|---|"]
    for c in session.checkpoints:
        lines.append(f"| `{c.id}` | {c.step_id} | {md_text(c.label)} | {', '.join(c.names)} | {c.created} |")
    return "\n".join(lines)


def decision_log_markdown(session: Session, model: dict[str, Any] | None,
                          episodes: dict[str, Episode] | None = None) -> str:
    """What was decided, by whom, on what evidence: ready to adapt for a methods section
    (``episodes``: the library the steps come from, default the built-in one)."""
    task = session.task
    lines = ["## Data preparation decisions", "",
             f"Task: {task.kind} — outcome `{task.target}`"
             + (f", duration `{task.time}`" if task.time else "")
             + (f", entity `{task.id}`" if task.id else "")
             + f". Data: `{session.frame}` {session.diagnosis.get('shape') or ''}.", ""]
    decided = [d for d in session.decisions if d.decided]
    if not decided:
        lines.append("No decisions have been made yet.")
    who = {"user": "the analyst", "policy": "the approval policy (recommended option)"}
    for i, d in enumerate(decided, 1):
        step = next((st for st in session.plan if st.id == d.step_id), None)
        title = step.title if step else d.step_id
        columns = f" on {', '.join(f'`{c}`' for c in d.columns)}" if d.columns else ""
        lines.append(f"{i}. **{md_text(title)}**{columns} ({d.gate}). {md_text(d.question)}")
        if d.evidence_lines:  # in words, as the card says it
            lines.append(f"   - Evidence: {md_text('; '.join(d.evidence_lines))}")
        lines.append(f"   - Decision: **{md_text(d.chosen_label)}** (`{d.choice}`"
                     + (", the recommended option" if d.choice == d.recommended else "")
                     + f"), decided by {who.get(d.by or '', d.by)} at {d.at}"
                     + (f". Rationale: {md_text(d.rationale)}" if d.rationale else "") + ".")
        if step is not None:
            lines.append(f"   - Step status: {step.status}")
    lines += plan_edits_markdown(session)
    if model:
        lines += ["", f"Model: {model.get('model_name') or model.get('name')}, {score_text(model)}"
                  + (" (grouped by entity)." if model.get("grouped") else "."),
                  "", validity_markdown(audit(session, model, episodes))]
    return "\n".join(lines)


@magics_class
class DCPilotMagics(Magics):
    """The co-pilot's line magics; one co-pilot session per kernel (see the module docstring)."""

    def __init__(self, shell: Any) -> None:
        super().__init__(shell)
        self.pilot: Pilot | None = None
        self.token = f"{os.getpid()}:{uuid.uuid4().hex[:8]}"  # tells this kernel's sidecar apart

    @magic_arguments()
    @argument("frame", help="a DataFrame expression")
    @argument("--target", default=None)
    @argument("--time", default=None)
    @argument("--id", dest="entity", default=None)
    @argument("--index", default=None, help="when a prediction is made: first | row | a date column")
    @argument("--dictionary", default=None, help="the study's codebook (docs/codebooks.md)")
    @argument("--events", default=None, help="with a REDCap --dictionary: its instrument-event mapping CSV")
    @line_magic
    def dccheck(self, line: str) -> None:
        """Diagnose a DataFrame: ``%dccheck df [--target y] [--time t] [--id c] [--index first]
        [--dictionary codebook.csv]``."""
        import kernel_tools as kt

        args = parse_argstring(self.dccheck, line)
        codebook = read_codebook("%dccheck", args.dictionary, args.events)
        try:
            frame = self._shell.ev(args.frame)
        except Exception as exc:  # the user's expression: say what it raised, not where
            raise UsageError(f"%dccheck: cannot evaluate {args.frame!r}: {type(exc).__name__}: {exc}") from None
        if not hasattr(frame, "columns"):
            raise UsageError(f"%dccheck needs a DataFrame; {args.frame!r} is a {type(frame).__name__}")
        check_columns("%dccheck", args.frame, frame, target=args.target, time=args.time, id=args.entity,
                      index=None if args.index in INDEX_WORDS else args.index)
        book = kt.read_dictionary(codebook["dictionary"], events=codebook.get("events")) if codebook else None
        display(kt.diagnose(frame, target=args.target, time=args.time, id=args.entity, index=args.index,
                            dictionary=book))

    @magic_arguments()
    @argument("frame", help="the name of a DataFrame variable")
    @argument("--target", required=True)
    @argument("--task", default="auto", choices=["auto", "classification", "regression", "survival"])
    @argument("--time", default=None)
    @argument("--id", dest="entity", default=None)
    @argument("--index", default=None, help="when a prediction is made: first | row | a date column")
    @argument("--approve", default=None,
              help="ask | recommended | none | decisions.json (default: c.DCPilot.default_approve, ask)")
    @argument("--dictionary", default=None, help="the study's codebook: a REDCap data dictionary, a Table Schema, "
              "a CSV/Markdown codebook or a labelled Stata/SPSS/SAS file (docs/codebooks.md)")
    @argument("--events", default=None, help="with a REDCap --dictionary: its instrument-event mapping CSV")
    @argument("--notebook", default=None, help=f"where the session sidecar goes (default {INLINE_NOTEBOOK})")
    @argument("--new", action="store_true", help="start over even if a session exists")
    @argument("--budget", action="append", default=None, metavar="[STEP=]SECONDS",
              help="time budget per step, e.g. --budget train_evaluate=900 (repeatable)")
    @argument("--no-impact", dest="impact", action="store_false",
              help="with --approve ask, do not estimate what each option does to the model before a card asks")
    @line_magic
    def dcplan(self, line: str) -> None:
        """Start (or show and resume) the co-pilot on a DataFrame in this kernel."""
        import pandas as pd

        from kernel_tools.frames import is_arrow_frame

        args = parse_argstring(self.dcplan, line)
        if not args.frame.isidentifier():
            raise UsageError(f"%dcplan needs the name of a DataFrame variable, not {args.frame!r}")
        from kernel_tools.lazy import is_lazy

        value = self._shell.user_ns.get(args.frame)
        if not (isinstance(value, pd.DataFrame) or is_arrow_frame(value) or is_lazy(value)):  # polars: converted; Dask: lazy
            frames = [n for n, v in self._shell.user_ns.items()
                      if (isinstance(v, pd.DataFrame) or is_arrow_frame(v) or is_lazy(v)) and not n.startswith("_")]
            raise UsageError(f"%dcplan: no DataFrame named {args.frame!r} in this kernel{did_you_mean(args.frame, frames)}")
        check_columns("%dcplan", args.frame, value, target=args.target, time=args.time, id=args.entity,
                      index=None if args.index in INDEX_WORDS else args.index)
        codebook = read_codebook("%dcplan", args.dictionary, args.events)
        if codebook and is_lazy(value):
            raise UsageError("%dcplan: a codebook is not read for Dask frames yet: diagnose a pandas frame")
        if args.approve is None:
            from .config import load_settings

            args.approve = load_settings().default_approve
        notebook = Path(args.notebook or INLINE_NOTEBOOK).resolve()
        try:
            # the cards show each option's impact when a person answers them (as the panel does)
            request = Request(frame=args.frame, approve=args.approve, budget=args.budget,
                              impact=args.impact and args.approve == "ask",
                              given=Given(target=args.target, time=args.time, id=args.entity, kind=args.task,
                                          index=args.index),
                              inputs=Inputs(frames=[args.frame], kernel=self.token,
                                            dictionary=codebook.get("dictionary"), events=codebook.get("events")))
            policy = request.policy(files=True)
            budgets = Budgets.from_spec(args.budget) if args.budget else None
        except ValueError as exc:
            raise UsageError(f"%dcplan: {exc}") from None
        pilot = self.pilot
        if (pilot is not None and not args.new and Path(pilot.session.notebook) == notebook
                and request.resumed_by(pilot.session)):
            pilot.coordinator.policy = policy
            pilot.coordinator.estimate_impact = request.impact
            if budgets is not None:
                pilot.set_budgets(budgets)
        else:
            pilot = self.pilot = Pilot(self.shell, open_session(request, notebook, fresh=args.new), request)
        display(pilot.widget)
        pilot.run()

    @line_magic
    def dcstatus(self, line: str = "") -> None:
        """The plan with step statuses and the decisions waiting for an answer."""
        pilot = self._pilot()
        display(Markdown(status_markdown(pilot.session)))
        for card in pilot.cards:
            display(card)

    @magic_arguments()
    @argument("decision", help="decision id, e.g. d3")
    @argument("option", help="option id, e.g. drop")
    @argument("--why", default="", help="rationale for the decision log")
    @line_magic
    def dcdecide(self, line: str) -> None:
        """Answer a decision without widgets (e.g. in a terminal): ``%dcdecide d3 drop --why "..."``."""
        args = parse_argstring(self.dcdecide, line)
        pilot = self._pilot()
        try:
            pilot.decide(args.decision, args.option, args.why.strip("\"'"))
        except DecisionClosed as closed:
            raise UsageError(f"%dcdecide: {closed}") from None
        display(Markdown(status_markdown(pilot.session)))

    @magic_arguments()
    @argument("step", help="step id, e.g. s5 (see %%dcstatus)")
    @argument("--why", default="", help="reason for the decision log")
    @line_magic
    def dcskip(self, line: str) -> None:
        """Skip a proposed step: ``%dcskip s5 [--why "..."]``."""
        args = parse_argstring(self.dcskip, line)
        self._edit("%dcskip", {"op": "skip", "step": args.step, "reason": args.why.strip("\"'")})

    @magic_arguments()
    @argument("step", help="step id, e.g. s7")
    @argument("--before", default=None, help="the step it goes before")
    @argument("--after", default=None, help="the step it goes after")
    @line_magic
    def dcmove(self, line: str) -> None:
        """Move a proposed step among those of its stage: ``%dcmove s7 --before s6``."""
        args = parse_argstring(self.dcmove, line)
        edit = {"op": "move", "step": args.step}
        edit.update({k: v for k, v in (("before", args.before), ("after", args.after)) if v})
        self._edit("%dcmove", edit)

    @magic_arguments()
    @argument("episode", help="an episode of the library, e.g. outliers (%%dcadd --list lists them)", nargs="?")
    @argument("params", nargs="*", help="key=value parameters, e.g. threshold=3")
    @argument("--columns", nargs="+", default=None, help="the columns it works on")
    @argument("--list", action="store_true", help="list the episodes, one line each")
    @argument("--why", default="", help="reason for the decision log")
    @line_magic
    def dcadd(self, line: str) -> None:
        """Add a step from the episode library: ``%dcadd outliers --columns age bmi threshold=3``."""
        args = parse_argstring(self.dcadd, line)
        pilot = self._pilot()
        if args.list or not args.episode:
            display(Markdown(library_markdown(pilot.session, pilot.coordinator.episodes)))
            return
        edit: dict[str, Any] = {"op": "add", "episode": args.episode, "reason": args.why.strip("\"'")}
        # --columns takes every word after it: key=value words there are parameters
        columns = [c for c in args.columns or [] if "=" not in c]
        pairs = list(args.params) + [c for c in args.columns or [] if "=" in c]
        if columns:
            edit["columns"] = columns
        if pairs:
            edit["params"] = parse_params("%dcadd", args.episode, pairs, pilot.coordinator.episodes)
        self._edit("%dcadd", edit)

    @magic_arguments()
    @argument("step", help="step id, e.g. s7")
    @argument("params", nargs="+", help="key=value, e.g. threshold=3 method=mad columns=age,bmi")
    @line_magic
    def dcparams(self, line: str) -> None:
        """Set parameters of a proposed step: ``%dcparams s7 threshold=3 method=mad``."""
        args = parse_argstring(self.dcparams, line)
        pilot = self._pilot()
        try:
            episode = pilot.session.step(args.step).episode
        except KeyError as error:
            raise UsageError(f"%dcparams: {error.args[0]}") from None
        self._edit("%dcparams", {"op": "params", "step": args.step,
                                 "params": parse_params("%dcparams", episode, args.params,
                                                        pilot.coordinator.episodes)})

    @magic_arguments()
    @argument("step", help="step id, e.g. s4")
    @line_magic
    def dcreopen(self, line: str) -> None:
        """Reopen a done (or skipped) step: undo to its checkpoint, then plan again."""
        args = parse_argstring(self.dcreopen, line)
        self._edit("%dcreopen", {"op": "reopen", "step": args.step})

    def _edit(self, magic: str, edit: dict[str, Any]) -> None:
        pilot = self._pilot()
        if not edit.get("reason"):
            edit.pop("reason", None)
        try:
            record = pilot.edit(edit)
        except KeyError as error:
            raise UsageError(f"{magic}: {error.args[0]}") from None
        except (ValueError, EditRefused) as error:  # malformed, or not allowed now: nothing changed
            raise UsageError(f"{magic}: {error}") from None
        display(Markdown(f"The user {md_text(record.text)}.\n\n{status_markdown(pilot.session)}"))

    @line_magic
    def dctimeline(self, line: str = "") -> None:
        """The column timeline, and the expert's word on it: ``%dctimeline`` shows it;
        ``%dctimeline move COL [COL ...] to follow-up|baseline|outcome|unknown [--why "..."]`` puts
        columns in a group; ``%dctimeline confirm [COL ...]`` confirms columns where they are
        (default: every column to confirm)."""
        pilot = self._pilot()
        try:
            words = shlex.split(line)
        except ValueError as error:
            raise UsageError(f"%dctimeline: {error}") from None
        why = ""
        if "--why" in words:
            at = words.index("--why")
            why, words = " ".join(words[at + 1:at + 2]), words[:at] + words[at + 2:]
        if not words:
            self._show_timeline(pilot)
            return
        verb, rest = words[0], words[1:]
        try:
            if verb == "move":
                if "to" not in rest:
                    raise ValueError("say where: %dctimeline move COL [COL ...] to baseline|follow-up|outcome|unknown")
                at = len(rest) - 1 - rest[::-1].index("to")
                said = pilot.move_columns(rest[:at], " ".join(rest[at + 1:]), why)
            elif verb == "confirm":
                said = pilot.confirm_columns(rest or None, why)
            else:
                raise ValueError(f"say 'move' or 'confirm', not {verb!r}{did_you_mean(verb, ['move', 'confirm'])}")
        except KeyError as error:  # a column not on the timeline: nothing moved
            raise UsageError(f"%dctimeline: {error.args[0]}") from None
        except ValueError as error:  # a place that is not one, a line that says neither
            raise UsageError(f"%dctimeline: {error}") from None
        display(Markdown(md_text(said)))
        self._show_timeline(pilot)

    def _show_timeline(self, pilot: Pilot) -> None:
        """The card: a widget where ipywidgets is installed (its text where no frontend draws
        widgets), else the Markdown."""
        try:
            import ipywidgets  # noqa: F401
        except ImportError:
            display(Markdown(timeline_markdown(pilot.session.structure)))
            return
        display(pilot.timeline_card())

    @line_magic
    def dccheckpoints(self, line: str = "") -> None:
        """The checkpoints of this session (what ``%dcundo`` can go back to)."""
        display(Markdown(checkpoints_markdown(self._pilot().session)))

    @line_magic
    def dcundo(self, line: str = "") -> None:
        """Restore a checkpoint (default: the last one): variables, plan and co-pilot cells.

        The steps since become pending and their decisions open again; ``%dcplan`` resumes."""
        pilot = self._pilot()
        checkpoint = pilot.undo(line.strip() or None)
        display(Markdown(f"Restored checkpoint `{checkpoint}`; the steps since are pending again "
                         f"(`%dcplan` carries on).\n\n{status_markdown(pilot.session)}"))

    @line_magic
    def dcreport(self, line: str = "") -> None:
        """The decision log as Markdown (what was decided, by whom, on what evidence)."""
        pilot = self._pilot()
        model = pilot.coordinator.report().get("model")
        display(Markdown(decision_log_markdown(pilot.session, model, pilot.coordinator.episodes)))

    @property
    def _shell(self) -> Any:
        """The IPython shell the magics were registered on (always set once they are)."""
        assert self.shell is not None
        return self.shell

    def _pilot(self) -> Pilot:
        if self.pilot is None:
            raise RuntimeError("no co-pilot session in this kernel yet: start one with %dcplan df --target y")
        return self.pilot


def parse_params(magic: str, episode: str, pairs: list[str], episodes: dict[str, Episode]) -> dict[str, Any]:
    """``key=value`` words as a params edit (:func:`.plan_edits.parse_pairs`), or a UsageError."""
    try:
        return parse_pairs(episode, pairs, episodes)
    except ValueError as error:
        raise UsageError(f"{magic}: {error}") from None


def library_markdown(session: Session, episodes: dict[str, Any]) -> str:
    """The episode library, one line each, with what can be added now (``%dcadd``)."""
    lines = ["| episode | what it does | gate | parameters | add now? |", "|---|---|---|---|---|"]
    for entry in plan_library(session, episodes):
        lines.append(f"| `{entry['id']}` | {md_text(entry['line'])} | {entry['gate'] or ''} | "
                     f"{', '.join(entry['params']) or ''} | "
                     + ("yes" if entry["addable"] else f"no: {md_text(entry['why_not'])}") + " |")
    return "\n".join(lines)


def read_codebook(magic: str, dictionary: str | None, events: str | None) -> dict[str, str]:
    """The codebook a magic was given, as absolute paths (``{}`` for none), read once here so a
    file that is not a codebook is one UsageError before anything runs."""
    from kernel_tools.dictionary import DictionaryError, read_dictionary

    if dictionary is None:
        if events is not None:
            raise UsageError(f"{magic}: --events (REDCap's instrument-event mapping) needs --dictionary")
        return {}
    found = {"dictionary": str(Path(dictionary).expanduser().resolve())}
    if events is not None:
        found["events"] = str(Path(events).expanduser().resolve())
    try:
        read_dictionary(found["dictionary"], events=found.get("events"))
    except (DictionaryError, FileNotFoundError, ImportError, ValueError) as exc:
        raise UsageError(f"{magic}: --dictionary {dictionary}: {exc}") from None
    return found


def check_columns(magic: str, name: str, frame: Any, **options: str | None) -> None:
    """UsageError (one line, close names suggested) for an option naming no column of ``frame``."""
    columns = [str(c) for c in frame.columns]
    for option, column in options.items():
        if column is not None and column not in columns:
            raise UsageError(f"{magic}: --{option} {column!r} is not a column of {name}"
                             f"{did_you_mean(column, columns)}")


def load_ipython_extension(ipython: Any) -> None:
    ipython.register_magics(DCPilotMagics)


__all__ = ["DCPilotMagics", "DecisionCard", "MainThreadBridge", "Pilot", "ShellNotebook", "ShellProbe",
           "decision_log_markdown", "library_markdown", "load_ipython_extension", "parse_params",
           "status_markdown"]
