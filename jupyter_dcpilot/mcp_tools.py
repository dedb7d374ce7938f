"""The co-pilot's tools for any agent in Jupyter, over the Model Context Protocol.

Jupyter AI 3's ``jupyter-server-mcp`` extension serves the tools of the entry point group
``jupyter_server_mcp.tools`` to every agent of the user's JupyterLab (its personas, coding agents
brought in through its agent client, desktop MCP clients); this package lists :data:`TOOLS` there.

A tool is a thin host over the same session registry and engine calls as the panel's REST
handlers (:mod:`.server_sessions`): an agent's session is the person's session, its cells are
written in the same notebook, the panel shows it and undoes it the same way. The gates stay the
person's: an agent's answer to a gated decision is a proposal they accept in the panel or the
chat, unless ``c.DCPilot.agent_may_decide`` lists the gate. Every agent action is logged as made
"by agent <name>" (the jupyter-ai persona's name, else the MCP client's). What the tools answer
follows ``c.DCPilot.agent_share``: by default schema and aggregate statistics, never a value of
the data (:mod:`.agent_view`).
"""

import asyncio
from collections.abc import Awaitable, Callable
from functools import wraps
from typing import Annotated, Any, TypeVar, cast

from pydantic import Field, WithJsonSchema

from kernel_tools.vocabulary import TASK_KINDS

from . import agent_view
from .engine import hosts
from .engine.plan_edits import OPS, EditRefused
from .engine.schema import schema_of
from .engine.validation import problem
from .kernel_bridge import KernelBusyError, KernelDiedError, NoKernelError, ProbeError
from .request_limits import MAX_ID, MAX_NAME, MAX_PATH, MAX_TEXT, PLAN_BODY
from .server_sessions import HostedSession, SessionExists, SessionRegistry

T = TypeVar("T")
Json = dict[str, Any]
MAX_WAIT_S = 120.0  # the longest dcpilot_status waits for a run to stop


def _inline(node: Any, defs: dict[str, Any]) -> Any:
    """``node`` with every ``$ref`` replaced by its definition (the types hold no cycle): pydantic
    takes a ready-made schema only without references."""
    if isinstance(node, dict):
        if "$ref" in node:
            return _inline(defs[node["$ref"].rsplit("/", 1)[1]], defs)
        return {k: _inline(v, defs) for k, v in node.items() if k != "$defs"}
    if isinstance(node, list):
        return [_inline(v, defs) for v in node]
    return node


def shaped(shape: type) -> WithJsonSchema:
    """The output schema of a tool answering ``shape`` (a TypedDict of :mod:`.agent_view`), from the
    co-pilot's schema generator; MCP clients validate the answers against it. A tool returns
    ``Annotated[Json, shaped(...)]``."""
    schema = schema_of(shape)
    return WithJsonSchema(_inline(schema, schema["$defs"]))


Notebook = Annotated[str, Field(min_length=1, max_length=MAX_PATH,
                                description="The notebook's path relative to the Jupyter server's root, e.g. 'study.ipynb'.")]
FrameName = Annotated[str, Field(min_length=1, max_length=MAX_ID, description="A DataFrame variable of the notebook's kernel.")]
SessionId = Annotated[str, Field(pattern="^[0-9a-f]{32}$", description="A co-pilot session id (from dcpilot_start_session, "
                                                                        "dcpilot_notebooks or dcpilot_list_frames).")]
Column = Annotated[str | None, Field(max_length=MAX_NAME)]
# the study's codebook and REDCap's event mapping: files relative to the notebook's folder (docs/codebooks.md)
CodebookFile = Annotated[str | None, Field(max_length=MAX_PATH, description=(
    "The study's codebook next to the notebook (a REDCap data dictionary, a Table Schema, a CSV or Markdown "
    "codebook, a labelled Stata/SPSS/SAS file), relative to the notebook's folder."))]
EventsFile = Annotated[str | None, Field(max_length=MAX_PATH, description=(
    "With a REDCap dictionary: its instrument-event mapping CSV, relative to the notebook's folder."))]
# annotations are read at run time (FastMCP builds the tools' input schemas from them): no
# ``from __future__ import annotations`` here. Choices listed in the schema are checked by the
# engine, as for the panel's requests (one place each)
Task = Annotated[str | None, Field(json_schema_extra={"enum": ["auto", *TASK_KINDS, None]},
                                   description="The kind of prediction; auto infers it.")]


class ToolFailure(Exception):
    """What the agent is told when a tool cannot do what it asked (an MCP tool error)."""


def _tool_error(error: Exception) -> Exception:
    """The MCP error for an engine or kernel error: its message, which says what to do."""
    from fastmcp.exceptions import ToolError

    message = str(error.args[0]) if isinstance(error, KeyError) and error.args else str(error)
    return ToolError(message)


def tool(fn: Callable[..., Awaitable[T]]) -> Callable[..., Awaitable[T]]:
    """A tool whose known failures (no kernel, busy kernel, unknown id, refused edit, bad value)
    reach the agent as tool errors with their message."""

    @wraps(fn)
    async def run(*args: Any, **kwargs: Any) -> T:
        try:
            return await fn(*args, **kwargs)
        except (ToolFailure, KeyError, ValueError, EditRefused, NoKernelError, KernelBusyError,
                KernelDiedError, ProbeError) as error:
            raise _tool_error(error) from error

    return run


# -- where the server's sessions are, and who is asking ----------------------------------------------

def registry() -> SessionRegistry:
    """The running Jupyter server's co-pilot sessions (the panel's and the chat's too)."""
    from jupyter_server.serverapp import ServerApp

    found = ServerApp.instance().web_app.settings.get("dcpilot_sessions")
    if found is None:
        raise ToolFailure("the jupyter_dcpilot server extension is not enabled in this Jupyter server")
    return found


def agent_name() -> str:
    """The agent calling: its jupyter-ai persona's name (from the identity headers the persona
    manager adds), else the name its MCP client gave when it connected."""
    from fastmcp.server.dependencies import get_context, get_http_headers

    headers = get_http_headers()
    persona_id, chat_id = headers.get("x-jupyterai-persona-id"), headers.get("x-jupyter-chat-id")
    if persona_id:
        return _persona_name(chat_id, persona_id)
    try:
        client = get_context().session.client_params
        name = client.clientInfo.name if client is not None else ""
    except (RuntimeError, AttributeError):
        name = ""
    return " ".join(str(name).split())[:MAX_ID] or "unnamed"


def _persona_name(chat_id: str | None, persona_id: str) -> str:
    from jupyter_server.serverapp import ServerApp

    managers = ServerApp.instance().web_app.settings.get("jupyter-ai", {}).get("persona-managers", {})
    persona = getattr(managers.get(chat_id), "personas", {}).get(persona_id) if chat_id else None
    return str(getattr(persona, "name", "") or persona_id.rsplit("::", 1)[-1])[:MAX_ID]


def _share() -> str:
    return registry().settings.agent_share


def _status(hosted: HostedSession) -> dict[str, Any]:
    return dict(agent_view.session_status(hosted.id, hosted.path, hosted.session, _share(), hosted.agent_may_decide,
                                          panel=hosted.host.connected))


def _live(path: str) -> agent_view.LiveSession | None:
    found = registry().sessions(path)
    if not found:
        return None
    hosted = found[0]
    return {"session_id": hosted.id, "frame": hosted.session.frame,
            "state": cast(agent_view.SessionState, hosted.session.state)}


# -- the tools --------------------------------------------------------------------------------------

@tool
async def dcpilot_notebooks() -> Annotated[Json, shaped(agent_view.NotebooksAnswer)]:
    """List the notebooks with a running kernel, each with its live data co-pilot session if any.
    Start here: the co-pilot works on a DataFrame in a notebook's kernel."""
    paths = await registry().notebooks()
    return {"notebooks": [{"path": p, "session": _live(p)} for p in paths]}


@tool
async def dcpilot_list_frames(notebook: Notebook) -> Annotated[Json, shaped(agent_view.FramesAnswer)]:
    """List the DataFrames in a notebook's kernel (name, rows, columns, memory), and the notebook's
    live co-pilot session if any."""
    path = notebook.lstrip("/")
    frames = await registry().frames(path)
    return {"notebook": path, "frames": frames, "session": _live(path)}


@tool
async def dcpilot_diagnose(notebook: Notebook, frame: FrameName, target: Column = None, time: Column = None,
                           task: Task = None, dictionary: CodebookFile = None,
                           events: EventsFile = None) -> Annotated[Json, shaped(agent_view.DiagnosisAnswer)]:
    """Diagnose a DataFrame without changing anything: what keeps it from a valid model (leaked
    columns, repeated entities, identifiers, outliers, label issues, missing values, dtypes...),
    each finding with its evidence and options. Name the target (and the duration column for
    survival) for the checks that need one. Values of the data are not shown unless the user set
    c.DCPilot.agent_share = 'samples'."""
    path = notebook.lstrip("/")
    if not frame.isidentifier():
        raise ToolFailure(f"frame must be a Python variable name, not {frame!r}")
    if task not in (None, "auto", *TASK_KINDS):
        raise ToolFailure(f"task must be auto or one of {list(TASK_KINDS)}, not {task!r}")
    hints = {"target": target, "time": time, "task": None if task in (None, "auto") else task}
    hub = registry()
    if dictionary is not None or events is not None:
        hints.update(hub.codebook(hub.os_path(path), dictionary, events))
    diagnosis = await hub.bridge.calls(path).diagnose(frame, **hints)
    return dict(agent_view.diagnosis_answer(path, frame, diagnosis, _share()))


@tool
async def dcpilot_start_session(
        notebook: Notebook, frame: FrameName, target: Column = None, time: Column = None, task: Task = None,
        goal: Annotated[str | None, Field(max_length=MAX_TEXT, description="What the model is for, in words.")] = None,
        dictionary: CodebookFile = None, events: EventsFile = None,
) -> Annotated[Json, shaped(agent_view.SessionStatus)]:
    """Start the data co-pilot on a DataFrame of a notebook: it diagnoses, plans, asks the person
    at each expert gate, writes and runs readable cells in the notebook (shown in its Data
    co-pilot panel), checkpoints before each change and ends with a verdict. A notebook has one
    session: when it already has one, use it (its id is in the error)."""
    hub, agent = registry(), agent_name()
    try:
        hosted = await hub.open(notebook, frame=frame, target=target, time=time, task=task, goal=goal,
                                dictionary=dictionary, events=events)
    except SessionExists as error:
        raise ToolFailure(f"{notebook!r} already has a live co-pilot session {error.hosted.id}: use it "
                          "(dcpilot_status), or ask the person to start again") from error
    hosted.note_agent(agent, f"started the co-pilot on {frame}" + (f" for {target}" if target else ""))
    return _status(hosted)


@tool
async def dcpilot_status(
        session_id: SessionId,
        wait_s: Annotated[float, Field(ge=0, le=MAX_WAIT_S, description="Seconds to wait while the co-pilot "
                                                                         "runs (0: answer at once).")] = 0,
) -> Annotated[Json, shaped(agent_view.SessionStatus)]:
    """A session's state, task, plan, decisions (with any agent's proposal), checkpoints, verdict
    and recent log, and what to do next. With wait_s, waits until the run stops (it waits for a
    decision, finished or failed) or wait_s passes."""
    hosted = registry().get(session_id)
    run = hosted.task
    if wait_s > 0 and run is not None and not run.done():
        try:
            await asyncio.wait_for(asyncio.shield(run), wait_s)
        except asyncio.TimeoutError:
            pass
    return _status(hosted)


@tool
async def dcpilot_answer_decision(
        session_id: SessionId,
        decision_id: Annotated[str, Field(min_length=1, max_length=MAX_ID, description="A decision id from 'decisions'.")],
        choice: Annotated[str, Field(min_length=1, max_length=MAX_ID, description="One of its options' ids, or "
                                                                                  "'skip' (not the task's).")],
        rationale: Annotated[str, Field(max_length=MAX_TEXT, description="Why, in a sentence the person reads.")] = "",
) -> Annotated[Json, shaped(agent_view.AnswerResult)]:
    """Answer a decision the co-pilot waits for. The gates are the person's: your answer is shown
    to them in the panel and the chat as a proposal to accept (outcome 'proposed'), unless the
    user lets agents decide this gate (agent_may_decide; outcome 'decided', logged by agent)."""
    hosted, agent = registry().get(session_id), agent_name()
    decision = hosted.decide(decision_id, choice, rationale, via=hosts.agent(agent))
    status = _status(hosted)
    return {"outcome": "decided" if decision.decided else "proposed",
            "decision": next(d for d in status["decisions"] if d["id"] == decision.id),
            "state": status["state"], "next": status["next"]}


@tool
async def dcpilot_edit_plan(
        session_id: SessionId,
        op: Annotated[str, Field(json_schema_extra={"enum": list(OPS)}, description="skip, move, add, params or reopen.")],
        step: Annotated[str | None, Field(max_length=MAX_ID, description="The step edited, e.g. 's4'.")] = None,
        episode: Annotated[str | None, Field(max_length=MAX_ID, description="For add: an episode id, e.g. 'outliers'.")] = None,
        columns: Annotated[list[str] | None, Field(description="For add: the columns the new step works on.")] = None,
        params: Annotated[dict[str, Any] | None, Field(description="For params (or add): parameter names and values.")] = None,
        before: Annotated[str | None, Field(max_length=MAX_ID, description="For move: the step to go before.")] = None,
        after: Annotated[str | None, Field(max_length=MAX_ID, description="For move: the step to go after.")] = None,
        reason: Annotated[str | None, Field(max_length=MAX_TEXT, description="Why, for the decision log.")] = None,
) -> Annotated[Json, shaped(agent_view.EditResult)]:
    """Edit the plan as the person can in the panel: skip a step, move it, add one from the
    library, set a step's parameters, or reopen a done or skipped step (undoing it). Logged as
    yours. A step behind a gate you may not decide cannot be skipped: answer its decision 'skip'
    (a proposal) instead."""
    hosted, agent = registry().get(session_id), agent_name()
    edit = {k: v for k, v in {"op": op, "step": step, "episode": episode, "columns": columns, "params": params,
                              "before": before, "after": after, "reason": reason}.items() if v is not None}
    found = problem(edit, PLAN_BODY, what="the edit")
    if found is not None:
        raise ToolFailure(found)
    record = await hosted.edit(edit, via=hosts.agent(agent))
    view = agent_view.session_view(hosted.session, _share())
    status = _status(hosted)
    return {"edit": dict(agent_view.edit_record(view, record)), "state": status["state"], "plan": status["plan"],
            "next": status["next"]}


@tool
async def dcpilot_undo(
        session_id: SessionId,
        checkpoint_id: Annotated[str, Field(min_length=1, max_length=MAX_ID, description="A checkpoint id from 'checkpoints'.")],
) -> Annotated[Json, shaped(agent_view.SessionStatus)]:
    """Undo the work back to a checkpoint: the notebook's variables, the co-pilot's cells after it
    and the plan return to before that step; its decisions are asked again. Logged as yours."""
    hosted, agent = registry().get(session_id), agent_name()
    await hosted.undo(checkpoint_id, agent=agent)
    return _status(hosted)


@tool
async def dcpilot_report(session_id: SessionId) -> Annotated[Json, shaped(agent_view.ReportAnswer)]:
    """The session's verdict (valid only when every named check passed: known at prediction time,
    entities kept together, the task's metric, the holdout untouched...), the model's scores, the
    decision log (who decided what: the user, the policy or an agent) and the plan edits."""
    hosted = registry().get(session_id)
    report = hosted.coordinator.report()
    return dict(agent_view.report_answer(hosted.id, hosted.session, report, _share()))


# the entry point jupyter-server-mcp reads (pyproject.toml: [project.entry-points."jupyter_server_mcp.tools"])
TOOLS = [f"{__name__}:{fn.__name__}" for fn in (
    dcpilot_notebooks, dcpilot_list_frames, dcpilot_diagnose, dcpilot_start_session, dcpilot_status,
    dcpilot_answer_decision, dcpilot_edit_plan, dcpilot_undo, dcpilot_report)]
