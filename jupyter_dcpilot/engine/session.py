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

import json
import os
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields
from datetime import datetime, timezone
from pathlib import Path
from typing import Annotated, Any, Literal

from kernel_tools.vocabulary import PENDING, EventType, Gate, StepGate

from . import sidecar_io, signatures
from .edit_checks import check_strings
from .wire import AgentProposal, Chart, DecisionOption, ImpactSummary, PastAnswer, Wire


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def sidecar_path(notebook: str | os.PathLike[str]) -> Path:
    """``dir/.name.ipynb.dcpilot.json`` for ``dir/name.ipynb`` (git-ignored by ``*.dcpilot.json``)."""
    path = Path(notebook)
    return path.with_name(f".{path.name}.dcpilot.json")


@dataclass
class Step:
    """One unit of work: an episode applied to some findings/columns, with its status."""

    id: str
    episode: str
    title: str
    status: str = "proposed"
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

    @property
    def pending(self) -> bool:
        return self.status in PENDING


@dataclass
class Decision:
    """A question only a domain expert can answer, and the answer once given."""

    # the Annotated parts say what the dicts hold (.wire): the JSON Schema and the panel's types read them
    id: str
    step_id: str
    gate: Annotated[str, Gate, StepGate]
    question: str
    evidence: dict[str, Any] = field(default_factory=dict)
    options: Annotated[list[dict[str, Any]], Wire(list[DecisionOption])] = field(default_factory=list)
    recommended: str | None = None
    columns: list[str] = field(default_factory=list)
    choice: str | None = None
    # "agent": an agent the user allowed to decide this gate (its name is in ``proposal``)
    by: Annotated[str | None, Wire(Literal["user", "policy", "agent"] | None)] = None
    at: str | None = None
    rationale: str = ""
    # the evidence as a small bar chart (see .charts)
    chart: Annotated[dict[str, Any] | None, Wire(Chart | None)] = None
    # earlier answers, undone
    history: Annotated[list[dict[str, Any]], Wire(list[PastAnswer])] = field(default_factory=list)
    # how much the choice matters (engine/impact.py); per option in options[].impact
    impact: Annotated[dict[str, Any] | None, Wire(ImpactSummary | None)] = None
    # an agent's answer through the MCP tools, for the person to accept (see Session.propose)
    proposal: Annotated[dict[str, Any] | None, Wire(AgentProposal | None)] = None

    @property
    def decided(self) -> bool:
        return self.choice is not None

    @property
    def reopened(self) -> bool:
        """Undone by the user, who must answer it again (an approval policy may not)."""
        return bool(self.history)

    @property
    def decided_by(self) -> str:
        """Who answered, in words: the user, the approval policy or the agent named."""
        if self.by == "agent":
            return f"agent {(self.proposal or {}).get('agent', '?')}"
        return {"user": "the user", "policy": "the approval policy"}.get(self.by or "", "nobody yet")

    def reopen(self, reason: str) -> None:
        """Clear the answer and any agent's proposal (kept in :attr:`history` for the decision
        log) so it is asked again."""
        if self.choice is not None or self.proposal is not None:
            self.history.append({"choice": self.choice, "by": self.by, "at": self.at,
                                 "rationale": self.rationale, "undone": reason, "undone_at": now(),
                                 **({"proposal": self.proposal} if self.proposal else {})})
        self.choice = self.by = self.at = self.proposal = None
        self.rationale = ""

    def option(self, option_id: str | None = None) -> dict[str, Any] | None:
        wanted = self.choice if option_id is None else option_id
        return next((o for o in self.options if o.get("id") == wanted), None)


@dataclass
class Checkpoint:
    """A kernel snapshot taken before a step, with the session state at that moment."""

    id: str  # the kernel store's id
    step_id: str
    label: str
    names: list[str]
    cell_count: int  # co-pilot cells that existed when it was taken
    snapshot: dict[str, Any]  # session state (plan, findings, task, ...) before the step
    created: str = field(default_factory=now)


@dataclass
class Session:
    """Everything the co-pilot knows about one notebook (see the module docstring)."""

    notebook: str = ""
    frame: str = "df"
    task: dict[str, Any] = field(default_factory=dict)
    hints: dict[str, Any] = field(default_factory=dict)
    findings: list[dict[str, Any]] = field(default_factory=list)
    diagnosis: dict[str, Any] = field(default_factory=dict)  # shape, elapsed_s, sample_size
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
    plan_edits: list[dict[str, Any]] = field(default_factory=list)  # the expert's edits (plan_edits.py)
    variables: dict[str, Any] = field(default_factory=dict)  # what the kernel holds now
    warnings: list[str] = field(default_factory=list)
    validity: list[dict[str, Any]] = field(default_factory=list)  # the verdict's checks (validity.py)
    data_version: int = 0
    diagnosed_version: int = -1
    backtracks: int = 0
    state: str = "idle"  # idle | running | blocked | finished | failed
    settings: dict[str, Any] = field(default_factory=dict)  # planner, model, share (what an LLM may see)
    created: str = field(default_factory=now)
    counter: int = 0
    # False once the session's history came from a sidecar this user's co-pilot did not write
    trusted: bool = True
    trust_note: str = ""  # why not, in words (the panel shows it)
    path: str | None = field(default=None, compare=False)
    _observers: list[Callable[[dict[str, Any]], None]] = field(
        default_factory=list, compare=False, repr=False
    )

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
        """Persist, then tell every observer what changed."""
        self.save()
        self.notify(kind, **data)

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

    def finding(self, finding_id: str) -> dict[str, Any] | None:
        return next((f for f in self.findings if f.get("id") == finding_id), None)

    def pending_steps(self) -> list[Step]:
        return [s for s in self.plan if s.pending]

    def open_decisions(self) -> list[Decision]:
        """Decisions that wait for an answer: undecided, and their step still to run (a
        decision of an undone or replaced step asks nothing any more)."""
        pending = {s.id for s in self.plan if s.pending}
        return [d for d in self.decisions if not d.decided and d.step_id in pending]

    def cells_after(self, checkpoint_id: str) -> list[str]:
        """Ids of the co-pilot cells added after a checkpoint (never user cells)."""
        return [c["id"] for c in self.cells[self.checkpoint(checkpoint_id).cell_count :]]

    # -- changes -----------------------------------------------------------------------
    def decide(
        self, decision_id: str, choice: str, rationale: str = "", by: str = "user"
    ) -> Decision:
        """Record the answer to a decision; the coordinator acts on it when run again. An agent
        (``by="agent"``) answers only with the choice it proposed (:meth:`propose`)."""
        decision = self.decision(decision_id)
        check_strings({"choice": choice, "rationale": rationale}, f"decision {decision_id}")
        if decision.option(choice) is None:
            ids = [o.get("id") for o in decision.options]
            raise ValueError(f"decision {decision_id}: unknown option {choice!r}; expected one of {ids}")
        if by not in ("user", "policy", "agent"):
            raise ValueError(f"decision {decision_id}: by must be 'user', 'policy' or 'agent', not {by!r}")
        if by == "agent" and (decision.proposal or {}).get("choice") != choice:
            raise ValueError(f"decision {decision_id}: an agent decides only what it proposed")
        decision.choice, decision.by, decision.at = choice, by, now()
        decision.rationale = rationale
        self.changed("decision", decision=asdict(decision))
        return decision

    def propose(self, decision_id: str, choice: str, rationale: str, agent: str) -> Decision:
        """Record an agent's answer to an open decision as a proposal beside the question (the
        person accepts it by choosing it); a later proposal replaces it. ValueError for an
        option the decision does not offer."""
        decision = self.decision(decision_id)
        if decision.option(choice) is None:
            ids = [o.get("id") for o in decision.options]
            raise ValueError(f"decision {decision_id}: unknown option {choice!r}; expected one of {ids}")
        decision.proposal = {"agent": agent, "choice": choice, "rationale": rationale, "at": now()}
        self.changed("decision", decision=asdict(decision))
        return decision

    def reject(self, step_id: str, reason: str) -> None:
        """The expert rejects a finished step's result; the coordinator backtracks over it."""
        step = self.step(step_id)
        if step.status != "done":
            raise ValueError(f"step {step_id} is {step.status}; only a done step can be rejected")
        self.rejections.append({"step_id": step_id, "reason": reason, "at": now()})
        self.changed("rejection", step_id=step_id, reason=reason)

    def instruct(self, text: str) -> None:
        """Queue a free-text instruction (needs the LLM planner to become a custom step)."""
        self.instructions.append({"text": text, "status": "pending", "at": now()})
        self.changed("instruction", text=text)

    def snapshot(self) -> dict[str, Any]:
        """The parts of the state a checkpoint restores."""
        keys = ("task", "findings", "diagnosis", "plan", "handled", "variables",
                "data_version", "diagnosed_version", "validity")
        return json.loads(json.dumps({k: getattr(self, k) for k in keys}, default=_encode))

    def restore_snapshot(self, snap: dict[str, Any]) -> None:
        self.task = snap["task"]
        self.findings = snap["findings"]
        self.diagnosis = snap["diagnosis"]
        self.plan = [Step(**s) for s in snap["plan"]]
        self.handled = snap["handled"]
        self.variables = snap["variables"]
        self.data_version = snap["data_version"]
        self.diagnosed_version = snap["diagnosed_version"]
        self.validity = snap.get("validity", [])

    # -- persistence -------------------------------------------------------------------
    def to_json(self) -> str:
        """The session as compact JSON, in the form :func:`.signatures.serialize` signs."""
        state = {f.name: getattr(self, f.name) for f in fields(self) if f.compare}
        return json.dumps(state, separators=(",", ":"), default=_encode)

    def to_dict(self) -> dict[str, Any]:
        return json.loads(self.to_json())

    @classmethod
    def from_dict(cls, data: dict[str, Any], path: str | None = None) -> Session:
        """A session from its JSON form; fields it does not know (a newer version's) are left out."""
        known = {f.name for f in fields(cls) if f.compare}
        data = {k: v for k, v in data.items() if k in known}
        data["plan"] = [Step(**s) for s in data.get("plan", [])]
        data["decisions"] = [Decision(**d) for d in data.get("decisions", [])]
        data["checkpoints"] = [Checkpoint(**c) for c in data.get("checkpoints", [])]
        return cls(**data, path=path)

    def save(self) -> None:
        """Write the sidecar, small (:func:`.sidecar_io.compact`), signed, atomically."""
        if not self.path:
            return
        state = {f.name: getattr(self, f.name) for f in fields(self) if f.compare}
        state["checkpoints"] = [_encode(c) for c in self.checkpoints]
        text = json.dumps(sidecar_io.compact(state), separators=(",", ":"), default=_encode)
        sidecar_io.write_atomic(self.path, signatures.signed(text))

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
        except (TypeError, ValueError, AttributeError) as exc:  # hand-made or damaged
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
            step.status, step.note = "undone", "from a file this user's co-pilot did not write"
            step.checkpoint_id, step.cell_ids = None, []
        for instruction in self.instructions:
            if instruction.get("status") == "pending":
                instruction["status"] = "not trusted"
        self.task, self.findings, self.diagnosis, self.validity = {}, [], {}, []
        self.checkpoints, self.cells, self.variables, self.settings = [], [], {}, {}
        self.handled, self.exclusions, self.rejections = [], {}, []
        self.data_version, self.diagnosed_version, self.backtracks = 0, -1, 0
        self.state = "idle"
        self.warnings.append(reason)
        self.transcript.append({"at": now(), "kind": "untrusted", "text": reason})


def _encode(value: Any) -> Any:
    """JSON for the dataclasses held in a session (without deep-copying them first)."""
    if hasattr(value, "__dataclass_fields__"):
        return {f.name: getattr(value, f.name) for f in fields(value)}
    return str(value)

