"""The state bank of one notebook: findings, plan, decisions, checkpoints, transcript, usage.

Everything the co-pilot knows about a notebook lives in a :class:`Session`, which is saved to
a sidecar file next to the notebook after every change, so a restarted server (or a second
``jupyter dcpilot run``) loses nothing. Observers subscribed with :meth:`Session.subscribe`
receive one event per change (the server pushes them to the panel's WebSocket).

Sidecars are signed with a per-user secret (:mod:`.signatures`). A file this user's co-pilot
did not write is loaded as history only (:meth:`Session.as_history`): it is shown, but nothing
in it is approved or acted on.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from datetime import datetime, timezone
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal

from kernel_tools.findings import Finding
from kernel_tools.vocabulary import PENDING, EventType, Gate, SessionState, StepGate, StepStatus

from . import sidecar_io, signatures
from .edit_checks import check_strings
from .evidence_lines import evidence_lines
from .hosts import by_the_user
from .structure import Structure
from .task import Inputs, Task, from_old_sidecar
from .wire import (
    AgentProposal,
    Chart,
    DecisionOption,
    ImpactSummary,
    InferenceWire,
    PastAnswer,
    skip_option,
)

# "agent": an agent the user allowed to decide a gate (its name in the decision's proposal)
Answerer = Literal["user", "policy", "agent"]


class DecisionClosed(ValueError):
    """The decision takes no answer now: answered already (reopen its step to answer it again),
    or its step no longer waits for it (a stale card). The server answers 409."""


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


# the sidecars and the temporary files a save writes them through (see Session.save)
SIDECAR_GLOBS = ("*.dcpilot.json", ".dcpilot-*.tmp")


def sidecar_path(notebook: str | os.PathLike[str]) -> Path:
    """``dir/.name.ipynb.dcpilot.json`` for ``dir/name.ipynb`` (git-ignored by ``*.dcpilot.json``)."""
    path = Path(notebook)
    return path.with_name(f".{path.name}.dcpilot.json")


def answered_title(label: str, planned: str, columns: list[str], why: str = "") -> str:
    """A step's title from its answer's label, with the columns the plan's title named after its
    colon unless the label names one ("Drop 25 columns" of a group names none), then ``why`` (the
    answer's reason) in brackets unless the label says it: "Drop leak (may give the outcome away)"."""
    _, colon, named = planned.partition(": ")
    said = any(re.search(rf"(?<![\w]){re.escape(c)}(?![\w])", label) for c in columns)
    title = label if said or not colon else f"{label}: {named}"
    told = not why or why in label or why.replace(" ", "-") in label
    return title if told else f"{title} ({why})"


@dataclass
class Step:
    """One unit of work: an episode applied to some findings/columns, with its status."""

    id: str
    episode: str
    title: str
    status: StepStatus = StepStatus.PROPOSED
    gate: str | None = None
    finding_ids: list[str] = field(default_factory=list)
    columns: list[str] = field(default_factory=list)
    function: str | None = None
    params: dict[str, Any] = field(default_factory=dict)
    reason: str = ""
    decision_id: str | None = None
    checkpoint_id: str | None = None
    cell_ids: list[str] = field(default_factory=list)
    attempts: int = 0
    code: str | None = None  # custom (LLM-written) code: always gated
    user_params: dict[str, Any] = field(default_factory=dict)  # set by the expert (plan_edits.py)
    by_user: list[str] = field(default_factory=list)  # what the expert did to it: added, moved, ...
    result: dict[str, Any] = field(default_factory=dict)
    checks: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None
    note: str = ""
    started: str | None = None  # when it last began running
    budget_s: float | None = None  # its time budget when it last ran (see .budgets)
    elapsed_s: float | None = None  # how long its last run took
    planned_title: str = ""  # the plan's title while an answer's title stands in its place

    def __post_init__(self) -> None:
        self.status = StepStatus(self.status)

    def titled_by(self, option: DecisionOption | None) -> None:
        """Title the step by what the chosen option does (the plan's title named the question, not
        its answer: "Aggregate repeated measurements" that keeps the rows); None: the plan's title
        again (the question is asked again)."""
        if option is None:
            self.title, self.planned_title = self.planned_title or self.title, ""
            return
        self.planned_title = self.planned_title or self.title
        self.title = answered_title(option.label or option.id, self.planned_title, self.columns, self.why(option))

    def why(self, option: DecisionOption) -> str:
        """The reason of an answer that makes the call the plan proposed (a leak's drop: "may give the
        outcome away"), kept in its title for a reader who scans the plan; "" for another call (a
        drop answered where the plan proposed imputing says only what it drops)."""
        action = option.action or {}
        reason = (action.get("params") or {}).get("reason")
        return reason if action.get("function") == self.function and isinstance(reason, str) else ""

    @property
    def pending(self) -> bool:
        return self.status in PENDING

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Step:
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})


@dataclass
class Decision:
    """A question only a domain expert can answer, and the answer once given."""

    # the Annotated parts name the vocabularies (.schema exports them for the panel's types)
    id: str
    step_id: str
    gate: Annotated[str, Gate, StepGate]
    question: str
    evidence: dict[str, Any] = field(default_factory=dict)
    options: list[DecisionOption] = field(default_factory=list)
    recommended: str | None = None
    columns: list[str] = field(default_factory=list)
    choice: str | None = None
    by: Answerer | None = None
    at: str | None = None
    rationale: str = ""
    # the evidence as a small bar chart (see .charts)
    chart: Chart | None = None
    # earlier answers, undone
    history: list[PastAnswer] = field(default_factory=list)
    # how much the choice matters (engine/impact.py); per option in options[].impact
    impact: ImpactSummary | None = None
    # an agent's answer through the MCP tools, for the person to accept (see Session.propose)
    proposal: AgentProposal | None = None
    # where it was answered, in words: panel, chat, magic, terminal, decisions file, agent <name>
    via: str | None = field(default=None, metadata={"may_be_absent": True})
    # the option that declines the step ("skip", a finding's "keep"); None when nothing declines
    # (the task card is confirmed or corrected, never rejected)
    rejects: str | None = field(default=None, metadata={"may_be_absent": True})
    # the structural inferences it asks about (engine/structure.py): a person's answer confirms them
    inferences: list[InferenceWire] = field(default_factory=list, metadata={"may_be_absent": True})

    wire_properties: ClassVar[tuple[str, ...]] = ("evidence_lines",)

    @property
    def evidence_lines(self) -> list[str]:
        """The evidence as every host shows it to a person: lines in words, without what the
        question says (:mod:`.evidence_lines`); ``evidence`` stays the machine form."""
        return evidence_lines(self.evidence, self.question)

    @property
    def decided(self) -> bool:
        return self.choice is not None

    @property
    def reopened(self) -> bool:
        """Undone by the user, who must answer it again (an approval policy may not)."""
        return bool(self.history)

    @property
    def decided_by(self) -> str:
        """Who answered, in words: the user (and where), the approval policy or the agent named."""
        if self.by == "agent":
            return f"agent {self.proposal['agent'] if self.proposal else '?'}"
        if self.by == "user":
            return by_the_user(self.via).removeprefix("by ")
        return {"policy": "the approval policy"}.get(self.by or "", "nobody yet")

    def reopen(self, reason: str) -> None:
        """Clear the answer and any agent's proposal (kept in :attr:`history` for the decision
        log) so it is asked again: the one way a decided question takes a new answer."""
        if self.choice is not None or self.proposal is not None:
            past = PastAnswer(choice=self.choice, by=self.by, at=self.at, rationale=self.rationale,
                              undone=reason, undone_at=now())
            if self.proposal is not None:
                past["proposal"] = self.proposal
            self.history.append(past)
        self.choice = self.by = self.at = self.via = self.proposal = None
        self.rationale = ""

    def clear_impact(self) -> None:
        """Forget the options' impact estimates: they were made on the data as it was (an undo
        or new parameters change it), so the card asks with a fresh estimate, not an old chart."""
        self.impact = None
        for option in self.options:
            option.impact = None

    def option(self, option_id: str | None = None) -> DecisionOption | None:
        wanted = self.choice if option_id is None else option_id
        return next((o for o in self.options if o.id == wanted), None)

    @property
    def chosen_label(self) -> str | None:
        """The chosen option's label (its id when it has none), None before an answer."""
        option = self.option()
        return (option.label or option.id) if option is not None else self.choice

    def to_dict(self) -> dict[str, Any]:
        return encode(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Decision:
        known = {f.name for f in fields(cls)}
        decision = cls(**{k: v for k, v in data.items() if k in known})
        decision.options = [DecisionOption.from_dict(o) for o in data.get("options") or []]
        return decision


@dataclass
class EditRecord:
    """One of the expert's plan edits, as the decision log keeps it (:mod:`.plan_edits`).

    ``via`` names the host it came through, in words (:class:`.hosts.Via`: panel, chat, magic,
    decisions file, agent <name>); ``lapsed`` says why it no longer applies, once a re-plan
    left nothing it could apply to (the notebook and the transcript say so too)."""

    op: str
    via: str
    text: str
    at: str = field(default_factory=now)
    by: str = "user"
    step: str | None = None
    episode: str | None = None
    title: str | None = None
    reason: str | None = None
    columns: list[str] | None = None
    params: dict[str, Any] | None = None
    before: str | None = None
    after: str | None = None
    checkpoint: str | None = None  # a reopen of a done step: the checkpoint it goes back to
    cell: str | None = None  # the notebook's note of it
    lapsed: str | None = None
    lapse_cell: str | None = None  # the notebook's note that it lapsed

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> EditRecord:
        known = {f.name for f in fields(cls)}
        data = dict(data)
        if "via" not in data:  # a sidecar of before the hosts were named: the REST API was the panel's
            source = data.pop("source", None)
            data["via"] = "panel" if source in (None, "api") else source
        return cls(**{k: v for k, v in data.items() if k in known})


@dataclass
class Snapshot:
    """The parts of a session a checkpoint restores, as they were before its step."""

    task: Task
    findings: list[Finding]
    diagnosis: dict[str, Any]
    plan: list[Step]
    handled: list[str]
    variables: dict[str, Any]
    data_version: int
    diagnosed_version: int
    validity: list[dict[str, Any]]

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Snapshot:
        task = data.get("task") or {}
        return cls(task=Task.from_dict(task) if "given" in task else from_old_sidecar(task, {})[0],
                   findings=[Finding.from_dict(f) for f in data.get("findings") or []],
                   diagnosis=dict(data.get("diagnosis") or {}),
                   plan=[Step.from_dict(st) for st in data.get("plan") or []],
                   handled=list(data.get("handled") or []), variables=dict(data.get("variables") or {}),
                   data_version=int(data.get("data_version", 0)),
                   diagnosed_version=int(data.get("diagnosed_version", -1)),
                   validity=list(data.get("validity") or []))


@dataclass
class Checkpoint:
    """A kernel snapshot taken before a step, with the session state at that moment."""

    id: str  # the kernel store's id
    step_id: str
    label: str
    names: list[str]
    cell_count: int  # co-pilot cells that existed when it was taken
    snapshot: Snapshot  # session state (plan, findings, task, ...) before the step
    created: str = field(default_factory=now)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Checkpoint:
        known = {f.name for f in fields(cls)}
        checkpoint = cls(**{k: v for k, v in data.items() if k in known})
        checkpoint.snapshot = Snapshot.from_dict(data.get("snapshot") or {})
        return checkpoint


@dataclass
class Session:
    """Everything the co-pilot knows about one notebook (see the module docstring)."""

    notebook: str = ""
    frame: str = "df"
    task: Task = field(default_factory=Task)
    inputs: Inputs = field(default_factory=Inputs)
    findings: list[Finding] = field(default_factory=list)
    diagnosis: dict[str, Any] = field(default_factory=dict)  # shape, elapsed_s, sample_size
    # the structural inferences, the column timeline and the expert's moves on it (structure.py)
    structure: Structure = field(default_factory=Structure)
    plan: list[Step] = field(default_factory=list)
    decisions: list[Decision] = field(default_factory=list)
    checkpoints: list[Checkpoint] = field(default_factory=list)
    cells: list[dict[str, Any]] = field(default_factory=list)  # co-pilot cells, in order
    transcript: list[dict[str, Any]] = field(default_factory=list)
    llm_usage: list[dict[str, Any]] = field(default_factory=list)
    llm_payloads: list[dict[str, Any]] = field(default_factory=list)
    exclusions: dict[str, list[str]] = field(default_factory=dict)  # finding id -> option ids
    handled: list[str] = field(default_factory=list)  # finding ids a step has dealt with
    rejections: list[dict[str, Any]] = field(default_factory=list)  # expert rejections to act on
    instructions: list[dict[str, Any]] = field(default_factory=list)  # free-text, with status
    plan_edits: list[EditRecord] = field(default_factory=list)  # the expert's edits (plan_edits.py)
    variables: dict[str, Any] = field(default_factory=dict)  # what the kernel holds now
    warnings: list[str] = field(default_factory=list)
    validity: list[dict[str, Any]] = field(default_factory=list)  # the verdict's checks (validity.py)
    data_version: int = 0
    diagnosed_version: int = -1
    backtracks: int = 0
    state: SessionState = SessionState.IDLE
    settings: dict[str, Any] = field(default_factory=dict)  # planner, model, share (what an LLM may see)
    created: str = field(default_factory=now)
    counter: int = 0
    # False once the session's history came from a sidecar this user's co-pilot did not write
    trusted: bool = True
    trust_note: str = ""  # why not, in words (the panel shows it)
    path: str | None = field(default=None, compare=False)
    # write a burst of changes once (see :meth:`changed`); the headless command line sets it
    coalesce: bool = field(default=False, compare=False, repr=False)
    _observers: list[Callable[[dict[str, Any]], None]] = field(
        default_factory=list, compare=False, repr=False
    )
    _unsaved: bool = field(default=False, compare=False, repr=False)
    _save_error: OSError | None = field(default=None, compare=False, repr=False)
    # each checkpoint's JSON, made once: its snapshot is a copy nothing changes (see snapshot)
    _checkpoint_json: dict[int, tuple[Checkpoint, Any]] = field(default_factory=dict, compare=False, repr=False)
    # the pool keys of those snapshots' entries, by identity (see sidecar_io.compact)
    _pool_keys: dict[int, tuple[Any, str]] = field(default_factory=dict, compare=False, repr=False)

    # -- identity ----------------------------------------------------------------------
    def new_id(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    # -- events ------------------------------------------------------------------------
    def subscribe(self, fn: Callable[[dict[str, Any]], None]) -> Callable[[], None]:
        """Call ``fn(event)`` after every change; returns a function that unsubscribes."""
        self._observers.append(fn)
        return lambda: self._observers.remove(fn) if fn in self._observers else None

    def changed(self, kind: str, **data: Any) -> None:
        """Persist, then tell every observer what changed.

        With :attr:`coalesce`, inside a running event loop, the write waits for the loop's next
        turn: the dozen changes a step makes between two awaits (its status, transcript lines,
        findings, plan) are written once instead of once each (~50 full rewrites of a sidecar
        of ~200 KB in a 10-step run), and still before the kernel work the next await waits for.
        A write that failed then raises at the next change or :meth:`flush`."""
        if self._save_error is not None:
            error, self._save_error = self._save_error, None
            raise error
        loop = _running_loop() if self.coalesce else None
        if loop is None:
            self.save()
        elif not self._unsaved:
            self._unsaved = True
            loop.call_soon(self._save_unsaved)
        self.notify(kind, **data)

    def flush(self) -> None:
        """Write what :meth:`changed` left for the loop's next turn now (or raise its failure)."""
        if self._save_error is not None:
            error, self._save_error = self._save_error, None
            raise error
        if self._unsaved:
            self.save()

    def _save_unsaved(self) -> None:
        if not self._unsaved:  # flushed or saved since
            return
        try:
            self.save()
        except OSError as exc:  # no event loop caller to raise to: the next change raises it
            self._save_error = exc

    def notify(self, kind: str, **data: Any) -> None:
        """Tell every observer something that changes nothing to save (e.g. a step's progress)."""
        EventType(kind)  # an event the hosts do not know of is a bug here, not a silent no-op there
        event = {"type": kind, "at": now(), **data}
        for fn in list(self._observers):
            fn(event)

    def log(self, kind: str, text: str, **data: Any) -> None:
        """Add a transcript entry (what happened and why, in words)."""
        entry = {"at": now(), "kind": kind, "text": text, **data}
        self.transcript.append(entry)
        self.changed("transcript", entry=entry)

    # -- lookups -----------------------------------------------------------------------
    def step(self, step_id: str) -> Step:
        for s in self.plan:
            if s.id == step_id:
                return s
        raise KeyError(f"no step {step_id!r} in this session")

    def decision(self, decision_id: str) -> Decision:
        for d in self.decisions:
            if d.id == decision_id:
                return d
        raise KeyError(f"no decision {decision_id!r} in this session")

    def checkpoint(self, checkpoint_id: str) -> Checkpoint:
        for c in self.checkpoints:
            if c.id == checkpoint_id:
                return c
        raise KeyError(f"no checkpoint {checkpoint_id!r} in this session")

    def finding(self, finding_id: str) -> Finding | None:
        return next((f for f in self.findings if f.id == finding_id), None)

    def pending_steps(self) -> list[Step]:
        return [s for s in self.plan if s.pending]

    def open_decisions(self) -> list[Decision]:
        """Decisions that wait for an answer: undecided, and their step still to run (a
        decision of an undone or replaced step asks nothing any more)."""
        pending = {s.id for s in self.plan if s.pending}
        return [d for d in self.decisions if not d.decided and d.step_id in pending]

    def next_decision(self) -> Decision | None:
        """The one question to ask now, in plan order: the open decision of the step the run waits
        at, else that of the next step to run; None when the next step has none (it runs first:
        after an undo, a reopened question waits for the steps it depends on)."""
        open_ = {d.step_id: d for d in self.open_decisions()}
        pending = [st for st in self.plan if st.pending]
        waiting = next((st for st in pending if st.status == StepStatus.AWAITING_DECISION and st.id in open_), None)
        if waiting is not None:
            return open_[waiting.id]
        return open_.get(pending[0].id) if pending else None

    def cells_after(self, checkpoint_id: str) -> list[str]:
        """Ids of the co-pilot cells added after a checkpoint (never user cells)."""
        return [c["id"] for c in self.cells[self.checkpoint(checkpoint_id).cell_count :]]

    # -- changes -----------------------------------------------------------------------
    def decide(self, decision_id: str, choice: str, rationale: str = "", by: Answerer = "user",
               via: str | None = None) -> Decision:
        """Record the answer to a decision; the coordinator acts on it when run again.

        The one set of rules every host answers through: a decision is answered once, and only
        while its step waits to run (:class:`DecisionClosed` otherwise: a stale card's second
        answer never rewrites the decision log; :meth:`Decision.reopen`, through an undo or a
        plan edit, is how a question is asked again); ``"skip"`` declines any step (the task
        card only by a policy: the user answers it with a task); ValueError for an option the
        decision does not offer. ``via``: the host it came through, in words. An agent
        (``by="agent"``) answers only with the choice it proposed (:meth:`propose`)."""
        decision = self.decision(decision_id)
        check_strings({"choice": choice, "rationale": rationale}, f"decision {decision_id}")
        self.check_open(decision)
        if by not in ("user", "policy", "agent"):
            raise ValueError(f"decision {decision_id}: by must be 'user', 'policy' or 'agent', not {by!r}")
        if by == "agent" and (decision.proposal is None or decision.proposal["choice"] != choice):
            raise ValueError(f"decision {decision_id}: an agent decides only what it proposed")
        if choice == "skip" and decision.option("skip") is None and (decision.gate != StepGate.TASK or by == "policy"):
            decision.options.append(skip_option())
        if decision.option(choice) is None:
            ids = [o.id for o in decision.options]
            raise ValueError(f"decision {decision_id}: unknown option {choice!r}; expected one of {ids}")
        decision.choice, decision.by, decision.at, decision.via = choice, by, now(), via
        decision.rationale = rationale
        step = next((st for st in self.plan if st.id == decision.step_id), None)
        if step is not None and decision.gate != StepGate.TASK and step.code is None:
            step.titled_by(None if choice in ("skip", "run") else decision.option())  # what runs, not what was asked
        self.changed("decision", decision=decision.to_dict())
        return decision

    def check_open(self, decision: Decision) -> None:
        """:class:`DecisionClosed` unless ``decision`` takes an answer now: not answered yet (a new
        answer comes only after :meth:`Decision.reopen`) and its step waiting to run."""
        if decision.decided:
            raise DecisionClosed(f"decision {decision.id} was already answered ({decision.choice}, by "
                                 f"{decision.decided_by}); reopen its step to answer it again")
        if decision not in self.open_decisions():
            raise DecisionClosed(f"decision {decision.id} asks nothing any more: its step is not waiting to run")

    def propose(self, decision_id: str, choice: str, rationale: str, agent: str) -> Decision:
        """Record an agent's answer to an open decision as a proposal beside the question (the
        person accepts it by choosing it); a later proposal replaces it. DecisionClosed as
        :meth:`decide`; ValueError for an option the decision does not offer."""
        decision = self.decision(decision_id)
        self.check_open(decision)
        if choice == "skip" and decision.option("skip") is None and decision.gate != StepGate.TASK:
            decision.options.append(skip_option())
        if decision.option(choice) is None:
            ids = [o.id for o in decision.options]
            raise ValueError(f"decision {decision_id}: unknown option {choice!r}; expected one of {ids}")
        decision.proposal = AgentProposal(agent=agent, choice=choice, rationale=rationale, at=now())
        self.changed("decision", decision=decision.to_dict())
        return decision

    def reject(self, step_id: str, reason: str) -> None:
        """The expert rejects a finished step's result; the coordinator backtracks over it."""
        step = self.step(step_id)
        if step.status != StepStatus.DONE:
            raise ValueError(f"step {step_id} is {step.status}; only a done step can be rejected")
        self.rejections.append({"step_id": step_id, "reason": reason, "at": now()})
        self.changed("rejection", step_id=step_id, reason=reason)

    def instruct(self, text: str) -> None:
        """Queue a free-text instruction (needs the LLM planner to become a custom step)."""
        self.instructions.append({"text": text, "status": "pending", "at": now()})
        self.changed("instruction", text=text)

    def snapshot(self) -> Snapshot:
        """The parts of the state a checkpoint restores (copies: later changes leave it as it is)."""
        return Snapshot.from_dict(json.loads(json.dumps(
            {k: getattr(self, k) for k in SNAPSHOT_KEYS}, default=_encode)))

    def restore_snapshot(self, snap: Snapshot) -> None:
        copy = Snapshot.from_dict(encode(snap))  # the checkpoint keeps its own for a later undo
        for key in SNAPSHOT_KEYS:
            setattr(self, key, getattr(copy, key))

    # -- persistence -------------------------------------------------------------------
    def to_json(self) -> str:
        """The session as compact JSON, in the form :func:`.signatures.serialize` signs."""
        state = {f.name: getattr(self, f.name) for f in fields(self) if f.compare}
        return json.dumps(state, separators=(",", ":"), default=_encode)

    def to_dict(self) -> dict[str, Any]:
        return json.loads(self.to_json())

    @classmethod
    def from_dict(cls, data: dict[str, Any], path: str | None = None) -> Session:
        """A session from its JSON form (the sidecar): its parts decoded into their types, an
        older sidecar's shapes too; fields it does not know (a newer version's) are left out."""
        known = {f.name for f in fields(cls) if f.compare}
        old_task, hints = data.get("task") or {}, data.get("hints")
        data = {k: v for k, v in data.items() if k in known}
        if hints is not None or (old_task and "given" not in old_task):  # before Task and Inputs
            data["task"], data["inputs"] = from_old_sidecar(old_task, hints or {})
        else:
            data["task"] = Task.from_dict(old_task)
            data["inputs"] = Inputs.from_dict(data.get("inputs") or {})
        data["findings"] = [Finding.from_dict(f) for f in data.get("findings") or []]
        data["structure"] = Structure.from_dict(data.get("structure"))
        data["plan"] = [Step.from_dict(s) for s in data.get("plan", [])]
        data["decisions"] = [Decision.from_dict(d) for d in data.get("decisions", [])]
        data["checkpoints"] = [Checkpoint.from_dict(c) for c in data.get("checkpoints", [])]
        data["plan_edits"] = [EditRecord.from_dict(e) for e in data.get("plan_edits", [])]
        data["state"] = SessionState(data.get("state", SessionState.IDLE))
        return cls(**data, path=path)

    def save(self) -> None:
        """Write the sidecar, small (:func:`.sidecar_io.compact`), signed, atomically."""
        self._unsaved = False
        if not self.path:
            return
        state = {f.name: getattr(self, f.name) for f in fields(self) if f.compare}
        state["checkpoints"] = self._checkpoints_json()  # plain JSON: their snapshots are pooled
        compacted = sidecar_io.compact(state, keys=self._pool_keys)
        text = json.dumps(compacted, separators=(",", ":"), default=_stored)
        sidecar_io.write_atomic(self.path, signatures.signed(text))

    def _checkpoints_json(self) -> list[Any]:
        """The checkpoints as plain JSON, each encoded once: re-encoding every snapshot on every
        save was most of a save's time (~60 of ~70 ms with six checkpoints at 10k rows)."""
        cache: dict[int, tuple[Checkpoint, Any]] = {}
        for c in self.checkpoints:
            kept = self._checkpoint_json.get(id(c))
            cache[id(c)] = kept if kept is not None and kept[0] is c else (c, encode(c))
        self._checkpoint_json = cache  # an undone checkpoint's is let go
        return [cache[id(c)][1] for c in self.checkpoints]

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Session:
        """The session saved at ``path``; as history only (:meth:`as_history`) unless this
        user's co-pilot signed it for the notebook it lies beside. ValueError when the file is
        not a session at all (:class:`.sidecar_io.SidecarRefused` when it is not even read:
        a link, a FIFO, a device, too large)."""
        raw = sidecar_io.read_regular(path)
        try:
            data = json.loads(raw)
        except (json.JSONDecodeError, RecursionError, UnicodeDecodeError) as exc:
            raise ValueError(f"{path} is not a co-pilot session file: {exc}") from None
        if not isinstance(data, dict):
            raise ValueError(f"{path} is not a co-pilot session file: not a JSON object")
        distrust = signatures.verify(data)
        try:
            session = cls.from_dict(sidecar_io.expand(data), path=str(path))
        except (TypeError, ValueError, AttributeError, KeyError) as exc:  # hand-made or damaged
            raise ValueError(f"{path} is not a co-pilot session file: {exc}") from None
        name = Path(path).name
        if distrust is not None:
            session.as_history(f"The co-pilot file {name} was not written by this user's co-pilot "
                               f"({distrust}). It is shown as history only: none of its decisions or "
                               "code is approved, every question is asked again.")
        elif (elsewhere := sidecar_io.placed_elsewhere(session.notebook, path)) is not None:
            session.as_history(f"The co-pilot file {name} does not belong to this notebook ({elsewhere}). "
                               "It is shown as history only: none of its decisions or code is approved, "
                               "every question is asked again.")
        return session

    @classmethod
    def for_notebook(cls, notebook: str | os.PathLike[str], **kwargs: Any) -> Session:
        """Load the notebook's sidecar if it exists, else start a new session saved there. A
        sidecar that is not a session file, or is not read at all (a link, a FIFO, too large), is
        replaced by the new session's file (the new session says so; a link's target is never
        touched)."""
        path = sidecar_path(notebook)
        if os.path.lexists(path):
            try:
                return cls.load(path)
            except FileNotFoundError:
                pass
            except ValueError as exc:
                session = cls(notebook=str(notebook), path=str(path), **kwargs)
                session.warnings.append(f"started afresh: {exc}")
                return session
        return cls(notebook=str(notebook), path=str(path), **kwargs)

    def as_history(self, reason: str) -> None:
        """Keep what happened, act on none of it: a sidecar nobody here signed may have been
        planted to claim approvals (custom code marked "run by the user") nobody gave.

        Every decision is reopened (the old answer stays in its history) and every step becomes
        history ("undone"); what the loop would act on starts afresh: no pending steps, task,
        findings, verdict, checkpoints (their snapshots would be restored), cells (undo deletes
        them), rejections, exclusions or pending instructions. The next run diagnoses the kernel's
        data again and asks every question of the new plan."""
        self.trusted, self.trust_note = False, reason
        for decision in self.decisions:
            decision.reopen("not trusted: " + reason)
        for step in self.plan:
            step.status, step.note = StepStatus.UNDONE, "from a file this user's co-pilot did not write"
            step.checkpoint_id, step.cell_ids = None, []
        for instruction in self.instructions:
            if instruction.get("status") == "pending":
                instruction["status"] = "not trusted"
        self.task, self.findings, self.diagnosis, self.validity = Task(), [], {}, []
        self.structure = Structure()
        self.checkpoints, self.cells, self.variables, self.settings = [], [], {}, {}
        self.handled, self.exclusions, self.rejections = [], {}, []
        self.data_version, self.diagnosed_version, self.backtracks = 0, -1, 0
        self.state = SessionState.IDLE
        self.warnings.append(reason)
        self.transcript.append({"at": now(), "kind": "untrusted", "text": reason})


def move_sidecar(old_notebook: str | os.PathLike[str], new_notebook: str | os.PathLike[str]) -> None:
    """Move a notebook's sidecar with it (a rename with no live session): a sidecar this user's
    co-pilot signed for the old name is signed again for the new one; any other file moves as it
    is (and stays untrusted). Nothing to move: a stale sidecar at the new name is removed."""
    old, new = sidecar_path(old_notebook), sidecar_path(new_notebook)
    try:
        session = Session.load(old)
    except FileNotFoundError:
        new.unlink(missing_ok=True)  # left by a deleted notebook of the new name
        return
    except ValueError:  # not a session file (refused or damaged): it goes with its notebook as it is
        old.replace(new)
        return
    if not session.trusted:
        old.replace(new)
        return
    session.notebook, session.path = str(new_notebook), str(new)
    session.save()
    old.unlink(missing_ok=True)


SNAPSHOT_KEYS = ("task", "findings", "diagnosis", "plan", "handled", "variables", "data_version",
                 "diagnosed_version", "validity")


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def _encode(value: Any) -> Any:
    """JSON for the typed parts of a session (without deep-copying them first): a type's own
    ``to_dict`` when it has one (a finding's id, a task's vocabulary), else its fields."""
    if hasattr(value, "to_dict") and not isinstance(value, Decision):
        return value.to_dict()
    if hasattr(value, "__dataclass_fields__"):  # its fields, and the properties it sends with them
        return {**{p: getattr(value, p) for p in getattr(value, "wire_properties", ())},
                **{f.name: getattr(value, f.name) for f in fields(value)}}
    return str(value)


def _stored(value: Any) -> Any:
    """:func:`_encode` without a decision's wire properties: the sidecar keeps the evidence, not
    its lines in words, a view computed from it that a stored copy could contradict after an edit."""
    if isinstance(value, Decision):
        return {f.name: getattr(value, f.name) for f in fields(value)}
    return _encode(value)


def encode(value: Any) -> Any:
    """A session's part (a decision, a step, a finding, a list of them) as plain JSON values:
    what the panel's events and the REST answers carry (the sidecar: :func:`_stored`)."""
    return json.loads(json.dumps(value, default=_encode))
