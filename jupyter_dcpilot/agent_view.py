"""What an agent sees of a notebook's co-pilot session: the MCP tools' answers, typed, under the
share setting (``c.DCPilot.agent_share``).

Every answer is built field by field from the session (never a dump of it): with ``share="schema"``
(the default) a text written from the data keeps its quoted column names and loses every other
quoted value ('…'), evidence keeps its aggregate numbers, parameters keep column names, flags and
numbers that are not single values of the data, charts and model feature names that are not
columns are left out (one-hot features name category values). The same functions as the Claude
planner's state (:mod:`.engine.sharing`) decide what is a value. With ``share="samples"`` the texts
and evidence go as they are.

The shapes are TypedDicts and the engine's own ``Finding`` and ``Decision``; :func:`output_schema`
exports them with the co-pilot's JSON Schema generator (:mod:`.engine.schema`), so an MCP client
validates every answer against the same schema the panel's types come from.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypedDict, cast

from kernel_tools.findings import Finding, Option
from kernel_tools.vocabulary import Gate, StepGate, StepStatus
from kernel_tools.vocabulary import SessionState as State

from .engine.evidence_lines import evidence_lines
from .engine.session import Decision, EditRecord, Session
from .engine.sharing import check_share, names_a_value, numbers_only, private_columns, redact
from .engine.task import Given, Task
from .engine.wire import AgentProposal, DecisionOption, Impact, ImpactSummary, Wire

Json = dict[str, Any]
SessionState = Literal["idle", "running", "blocked", "finished", "failed"]
Share = Literal["schema", "samples"]


class FrameInfo(TypedDict, total=False):
    """A DataFrame in the notebook's kernel: its size, never its values."""

    name: str
    library: str
    rows: int | None  # None for a lazy (Dask) frame
    columns: int
    memory_bytes: int | None
    dtypes: dict[str, int]  # columns per kind of dtype
    partitions: int


class LiveSession(TypedDict):
    """The co-pilot session of a notebook, if one is live."""

    session_id: str
    frame: str
    state: SessionState


class NotebookInfo(TypedDict):
    path: str
    session: LiveSession | None


class NotebooksAnswer(TypedDict):
    """The notebooks with a running kernel: where the co-pilot can work."""

    notebooks: list[NotebookInfo]


class FramesAnswer(TypedDict):
    """The DataFrames of one notebook's kernel, and its live co-pilot session if any."""

    notebook: str
    frames: list[FrameInfo]
    session: LiveSession | None


class TaskView(TypedDict):
    """What is predicted, from when, for whom (``confirmed`` once the person said so)."""

    kind: str | None
    target: str | None
    time: str | None
    id: str | None
    prediction_time: str | None
    confirmed: bool


class DiagnosisAnswer(TypedDict):
    """The diagnosis of a DataFrame: what makes it not ready for a model, with evidence."""

    notebook: str
    frame: str
    share: Share
    shape: list[int]
    elapsed_s: float | None
    task: TaskView
    findings: Annotated[list[Json], Wire(list[Finding])]


class CheckView(TypedDict):
    check: str
    passed: bool
    detail: str


class StepView(TypedDict):
    """One step of the plan; ``decision_id`` names the question it waits for, if gated."""

    id: str
    episode: str
    title: str
    status: Annotated[str, StepStatus]
    gate: Annotated[str | None, Gate, StepGate]
    columns: list[str]
    params: Json
    decision_id: str | None
    checkpoint_id: str | None
    by_user: list[str]
    note: str
    error: str | None
    failed_checks: list[CheckView]


class CheckpointView(TypedDict):
    """A checkpoint: ``dcpilot_undo`` with its id restores the data, cells and plan before that step."""

    id: str
    step_id: str
    label: str
    created: str


class LogEntry(TypedDict):
    at: str
    kind: str
    text: str


class SessionStatus(TypedDict):
    """A co-pilot session as the person's panel shows it. ``waiting_for``: the decisions the run
    waits for; ``next``: what to do now, in words."""

    session_id: str
    notebook: str
    frame: str
    state: SessionState
    share: Share
    task: TaskView
    plan: list[StepView]
    decisions: Annotated[list[Json], Wire(list[Decision])]
    waiting_for: list[str]
    agent_may_decide: list[str]
    checkpoints: list[CheckpointView]
    valid: bool | None
    validity: list[CheckView]
    warnings: list[str]
    log: list[LogEntry]
    next: str


class AnswerResult(TypedDict):
    """An agent's answer to a decision: ``proposed`` (the person accepts it in the panel or the
    chat) or ``decided`` (a gate the user lets agents decide)."""

    outcome: Literal["proposed", "decided"]
    decision: Annotated[Json, Wire(Decision)]
    state: SessionState
    next: str


class EditView(TypedDict):
    """A plan edit as the decision log records it (``source``: the host it came through, in words)."""

    op: str
    by: str
    source: str
    at: str
    text: str


class EditResult(TypedDict):
    """A plan edit made, as the decision log records it, and the plan after it."""

    edit: EditView
    state: SessionState
    plan: list[StepView]
    next: str


class ModelView(TypedDict):
    name: str | None
    metric: str | None
    cv_score: float | None
    cv_sd: float | None
    holdout_score: float | None
    features: list[str]


class DecisionLogEntry(TypedDict):
    """Who decided what (``by``: the user, the approval policy or agent <name>)."""

    id: str
    gate: str
    columns: list[str]
    question: str
    choice: str | None
    by: str
    at: str | None
    rationale: str


class ReportAnswer(TypedDict):
    """The verdict (``valid``: every named check passed; None before a model was trained), the
    model's scores, the decision log and the plan edits."""

    session_id: str
    state: SessionState
    valid: bool | None
    validity: list[CheckView]
    model: ModelView | None
    decisions: list[DecisionLogEntry]
    plan_edits: list[EditView]
    dropped_columns: list[str]
    warnings: list[str]


class View:
    """The share setting applied to one session's (or one diagnosis') texts, evidence and params.

    ``names``: what may be quoted under ``share="schema"`` (the column names); ``private``: columns a
    codebook says identify a person, whose values are never shown, whatever the share setting."""

    def __init__(self, share: str, names: set[str], private: set[str] | None = None) -> None:
        self.share = check_share(share)
        self.names = {str(n) for n in names}
        self.private = set(private or ())

    @property
    def open(self) -> bool:
        return self.share == "samples"

    def shows(self, columns: Any = None, text: str = "") -> bool:
        """Whether values about ``columns`` (or in ``text``) may be shown as they are. A text about no
        column in particular (``columns`` None: a log line, a warning) may quote any column's values:
        with private columns, it is redacted."""
        if not self.open or (columns is None and self.private):
            return False
        return not self.private & set(columns or ()) and not any(p in text for p in self.private)

    def text(self, value: Any, columns: Any = None) -> str:
        if value is None:
            return ""
        return str(value) if self.shows(columns, str(value)) else redact(str(value), self.names)

    def texts(self, values: list[Any]) -> list[str]:
        return [self.text(v) for v in values]

    def evidence(self, evidence: Json | None, columns: Any = None) -> Json:
        return dict(evidence or {}) if self.shows(columns) else numbers_only(evidence or {})

    def columns(self, values: Any) -> list[str]:
        """Column names only (a model's features include one-hot category values), but for samples:
        then all, less those made from a private column."""
        return [str(v) for v in values or []
                if str(v) in self.names or (self.open and not any(p in str(v) for p in self.private))]

    def value(self, key: str, value: Any) -> Any:
        """A parameter's value, or '…' where it could be a value of the data."""
        if value is None or isinstance(value, bool):
            return value
        if isinstance(value, (int, float)):
            return "…" if names_a_value(key) else value
        if isinstance(value, str):
            return value if value in self.names else "…"
        if isinstance(value, (list, tuple)):
            return [self.value(key, v) for v in value]
        if isinstance(value, dict) and all(str(k) in self.names for k in value):
            return {str(k): self.value(key, v) for k, v in value.items()}
        return "…"

    def params(self, params: Json | None, columns: Any = None) -> Json:
        if self.shows(columns, str(params)):
            return dict(params or {})
        return {str(k): self.value(str(k), v) for k, v in (params or {}).items()}

    def action(self, action: Json | None, columns: Any = None) -> Json | None:
        if not action:
            return None
        return {"function": action.get("function"), "params": self.params(action.get("params"), columns)}

    def option(self, option: Option, columns: Any = None) -> Json:
        out = {"id": option.id, "label": self.text(option.label, columns),
               "description": self.text(option.description, columns), "risk": self.text(option.risk, columns),
               "recommended": bool(option.recommended), "action": self.action(option.action, columns)}
        if isinstance(option, DecisionOption) and option.impact:
            out["impact"] = self.impact(option.impact)
        return out

    def impact(self, impact: Impact | ImpactSummary) -> Json:
        """An impact estimate (a decision's summary or one option's): scores, with its texts
        redacted and its top features kept to column names."""
        out: Json = dict(impact)
        for key in ("note", "error"):
            if key in out:
                out[key] = self.text(out[key])
        if "flags" in out:
            out["flags"] = self.texts(out["flags"])
        if "top_features" in out:
            out["top_features"] = self.columns(out["top_features"])
        return out

    def finding(self, finding: Finding) -> Json:
        return {"id": finding.id, "kind": finding.kind, "columns": list(finding.columns),
                "severity": finding.severity, "summary": self.text(finding.summary, finding.columns),
                "evidence": self.evidence(finding.evidence, finding.columns),
                "options": [self.option(o, finding.columns) for o in finding.options],
                "gate": finding.gate}

    def proposal(self, proposal: AgentProposal | None) -> Json | None:
        if not proposal:
            return None
        return {"agent": proposal["agent"], "choice": proposal["choice"],
                "rationale": self.text(proposal["rationale"]), "at": proposal["at"]}

    def decision(self, d: Decision) -> Json:
        history = []
        for old in d.history:
            entry: Json = {"choice": old.get("choice"), "by": old.get("by"), "at": old.get("at"),
                     "rationale": self.text(old.get("rationale")), "undone": self.text(old.get("undone")),
                     "undone_at": str(old.get("undone_at"))}
            if "proposal" in old:
                entry["proposal"] = self.proposal(old["proposal"])
            history.append(entry)
        evidence = self.evidence(d.evidence, d.columns)
        # the lines of what is shared, so nothing the share setting keeps back is said in words
        lines = [self.text(line, d.columns) for line in evidence_lines(evidence, d.question)]
        return {"evidence_lines": lines, "id": d.id, "step_id": d.step_id, "gate": d.gate,
                "question": self.text(d.question, d.columns), "evidence": evidence, "options": [self.option(o, d.columns) for o in d.options],
                "recommended": d.recommended, "columns": list(d.columns), "choice": d.choice, "by": d.by,
                "at": d.at, "rationale": self.text(d.rationale, d.columns), "chart": d.chart if self.shows(d.columns) else None,
                "history": history, "impact": self.impact(d.impact) if d.impact else None,
                "proposal": self.proposal(d.proposal), "via": d.via}

    def check(self, check: Json, columns: Any = None) -> CheckView:
        return {"check": str(check.get("check")), "passed": bool(check.get("passed")),
                "detail": self.text(check.get("detail") or check.get("message"), columns)}


def column_names(session: Session) -> set[str]:
    """Every column name the session has seen: the frame's now and before each step, the task's,
    and those the findings and steps name."""
    names = set(session.variables.get("columns") or [])
    for cp in session.checkpoints:
        names |= set(cp.snapshot.variables.get("columns") or [])
        names |= {c for f in cp.snapshot.findings for c in f.columns}
    names |= {c for f in session.findings for c in f.columns}
    names |= {c for st in session.plan for c in st.columns}
    t = session.task
    names |= {str(v) for v in (t.target, t.time, t.id, t.event) if v}
    return {str(n) for n in names}


def session_view(session: Session, share: str, names: set[str] | None = None) -> View:
    """The share setting applied to one session: its columns may be named, its private ones never shown."""
    return View(share, column_names(session) | set(names or ()), private_columns(session.diagnosis, session.findings))


def task_view(view: View, task: Task) -> TaskView:
    label = task.index_label
    return {"kind": task.kind.value if task.kind else None, "target": task.target, "time": task.time,
            "id": task.id, "prediction_time": view.text(label) if label else None, "confirmed": task.confirmed}


def diagnosis_answer(notebook: str, frame: str, diagnosis: Json, share: str) -> DiagnosisAnswer:
    """The kernel's diagnosis of ``frame`` (its JSON, decoded here) as an agent may see it."""
    findings = [Finding.from_dict(f) for f in diagnosis.get("findings") or []]
    task = Task.inferred(diagnosis.get("task") or {}, Given())
    names = {c for f in findings for c in f.columns}
    names |= {str(v) for v in (task.target, task.time, task.id, task.event) if v}
    names |= set((diagnosis.get("column_stats") or {}).get("feature_scores") or {})
    view = View(share, names, private_columns(diagnosis, findings))
    return {"notebook": notebook, "frame": frame, "share": cast(Share, view.share),
            "shape": [int(n) for n in diagnosis.get("shape") or []], "elapsed_s": diagnosis.get("elapsed_s"),
            "task": task_view(view, task), "findings": [view.finding(f) for f in findings]}


def step_view(view: View, step: Any) -> StepView:
    return {"id": step.id, "episode": step.episode, "title": view.text(step.title, step.columns), "status": step.status,
            "gate": step.gate, "columns": list(step.columns),
            "params": view.params({**step.params, **step.user_params}, step.columns),
            "decision_id": step.decision_id, "checkpoint_id": step.checkpoint_id, "by_user": list(step.by_user),
            "note": view.text(step.note, step.columns), "error": view.text(step.error, step.columns) if step.error else None,
            "failed_checks": [view.check({**c, "passed": False}, step.columns) for c in step.checks]}


def session_status(session_id: str, notebook: str, session: Session, share: str,
                   agent_may_decide: frozenset[str] | set[str], log_tail: int = 20,
                   panel: bool = True) -> SessionStatus:
    """The session as its panel shows it, under ``share``; the last ``log_tail`` log entries;
    ``panel``: whether the notebook's panel is connected (it writes and runs the cells)."""
    s = session
    view = session_view(s, share)
    waiting = [d.id for d in s.open_decisions() if any(st.id == d.step_id and st.status == StepStatus.AWAITING_DECISION
                                                      for st in s.plan)]
    return {"session_id": session_id, "notebook": notebook, "frame": s.frame, "state": cast(SessionState, str(s.state)),
            "share": cast(Share, view.share), "task": task_view(view, s.task),
            "plan": [step_view(view, st) for st in s.plan],
            "decisions": [view.decision(d) for d in s.decisions],
            "waiting_for": waiting, "agent_may_decide": sorted(agent_may_decide),
            "checkpoints": [{"id": c.id, "step_id": c.step_id, "label": view.text(c.label), "created": c.created}
                            for c in s.checkpoints],
            "valid": all(c.get("passed") for c in s.validity) if s.validity else None,
            "validity": [view.check(c) for c in s.validity], "warnings": view.texts(s.warnings),
            "log": [{"at": str(e.get("at")), "kind": str(e.get("kind")), "text": view.text(e.get("text"))}
                    for e in s.transcript[-log_tail:]],
            "next": next_move(s, waiting, agent_may_decide, panel)}


def next_move(session: Session, waiting: list[str], agent_may_decide: frozenset[str] | set[str],
              panel: bool = True) -> str:
    """What an agent can do now, in one or two sentences."""
    s = session
    if s.state == State.RUNNING and not panel:
        return ("The co-pilot waits for the notebook to be open in JupyterLab: its Data co-pilot panel writes "
                "and runs the cells. Ask the person to open the notebook; then call dcpilot_status again.")
    if s.state == State.RUNNING:
        running = next((st for st in s.plan if st.status == StepStatus.RUNNING), None)
        return ((f"The co-pilot is running {running.id} ({running.episode}). " if running else "The co-pilot is running. ")
                + "Call dcpilot_status again in a few seconds.")
    if waiting:
        d = s.decision(waiting[0])
        if d.proposal:
            return (f"Waiting for the person to answer {d.id} ({d.gate}); agent {d.proposal['agent']}'s proposal "
                    f"{d.proposal['choice']!r} is shown to them. Call dcpilot_status later to see their answer.")
        who = ("your answer decides it" if d.gate in agent_may_decide
               else "your answer is shown to the person as a proposal to accept")
        return (f"Waiting for an answer to {d.id} ({d.gate}): read its question, evidence and options in "
                f"'decisions', then call dcpilot_answer_decision ({who}).")
    if s.state == State.FINISHED:
        return "Finished: dcpilot_report gives the verdict, the model's scores and the decision log."
    if s.state == State.FAILED:
        return "The run failed (see 'log' and 'warnings'): undo to a checkpoint, or edit the plan, then it carries on."
    return "Idle: edit the plan (dcpilot_edit_plan) or undo to a checkpoint (dcpilot_undo); the co-pilot carries on."


def report_answer(session_id: str, session: Session, report: Json, share: str) -> ReportAnswer:
    """``report.json`` (:func:`.engine.report.build_report`) as an agent may see it."""
    view = session_view(session, share, set(report.get("dropped_columns") or []))
    model = report.get("model")
    return {"session_id": session_id, "state": cast(SessionState, str(session.state)),
            "valid": bool(report.get("valid")) if model else None,
            "validity": [view.check(c) for c in report.get("validity") or []],
            "model": None if not model else {
                "name": model.get("name"), "metric": model.get("metric"), "cv_score": model.get("cv_score"),
                "cv_sd": model.get("cv_sd"), "holdout_score": model.get("holdout_score"),
                "features": view.columns(model.get("features"))},
            "decisions": [{"id": d.id, "gate": d.gate, "columns": list(d.columns), "question": view.text(d.question, d.columns),
                           "choice": d.choice, "by": d.decided_by, "at": d.at,
                           "rationale": view.text(d.rationale, d.columns)}
                          for d in session.decisions],
            "plan_edits": [edit_record(view, e) for e in session.plan_edits],
            "dropped_columns": view.columns(report.get("dropped_columns")),
            "warnings": view.texts(report.get("warnings") or [])}


def edit_record(view: View, record: EditRecord) -> EditView:
    return {"op": record.op, "by": record.by, "source": record.via, "at": record.at, "text": view.text(record.text)}
