"""REST and WebSocket handlers of the server extension, all behind Jupyter's authentication."""

from __future__ import annotations

import json
from collections.abc import Awaitable
from typing import Any

import tornado
from jupyter_core.utils import ensure_async
from jupyter_server.auth.decorator import ws_authenticated
from jupyter_server.base.handlers import APIHandler, JupyterHandler
from jupyter_server.utils import url_path_join
from tornado import websocket

from kernel_tools.vocabulary import SessionState, TaskKind

from . import __version__
from .config import DCPilot
from .engine.hosts import Via
from .engine.plan_edits import EditRefused
from .engine.session import encode
from .kernel_bridge import KernelBridge, KernelBusyError, KernelDiedError, NoKernelError, ProbeError
from .request_limits import (
    DECISION_BODY,
    IMPACT_BODY,
    INFERENCE_BODY,
    MAX_PATH,
    PLAN_BODY,
    SESSION_BODY,
    TIMELINE_BODY,
    UNDO_BODY,
    check_size,
    parse_body,
)
from .server_sessions import HostedSession, NothingRunning, SessionExists, SessionRegistry

API = "dcpilot/api"


class BaseHandler(APIHandler):
    """Common plumbing: the shared kernel bridge and uniform JSON errors."""

    @property
    def bridge(self) -> KernelBridge:
        return self.settings["dcpilot_bridge"]

    def required_argument(self, name: str) -> str:
        value = self.get_argument(name, default="")
        if not value:
            raise tornado.web.HTTPError(400, f"missing query argument {name!r}")
        if len(value) > MAX_PATH:
            raise tornado.web.HTTPError(400, f"query argument {name!r} is longer than {MAX_PATH} characters")
        return value

    async def probe(self, answer: Awaitable[Any]) -> Any:
        """A probe's answer (``self.bridge.calls(path).<probe>(...)``), its failures as HTTP errors."""
        try:
            return await answer
        except NoKernelError as error:
            raise tornado.web.HTTPError(404, str(error)) from error
        except (KernelBusyError, KernelDiedError) as error:  # try again once it answers (or restarts)
            raise tornado.web.HTTPError(503, str(error)) from error
        except ProbeError as error:  # not a variable (404), not a DataFrame (400), or a failure
            status = {"KeyError": 404, "TypeError": 400}.get(error.ename, 500)
            raise tornado.web.HTTPError(status, str(error)) from error


class StatusHandler(BaseHandler):
    @tornado.web.authenticated
    def get(self) -> None:
        settings: DCPilot = self.settings["dcpilot_settings"]
        llm = settings.llm_config()
        planners = ["rules"] + (["claude"] if llm.available else [])
        self.finish(
            json.dumps(
                {
                    "version": __version__,
                    "planners": planners,
                    "llm_configured": llm.available,
                    "model": llm.model if llm.available else None,
                    "default_model": llm.model,
                    "default_approve": settings.default_approve,
                    "budget": settings.budget,
                }
            )
        )


class FramesHandler(BaseHandler):
    """GET /dcpilot/api/frames?path=<notebook> → the DataFrames in its kernel."""

    @tornado.web.authenticated
    async def get(self) -> None:
        path = self.required_argument("path")
        self.finish(json.dumps(await self.probe(self.bridge.calls(path).frames())))


class ProfileHandler(BaseHandler):
    """GET /dcpilot/api/profile?path=<notebook>&name=<variable> → its compact profile."""

    @tornado.web.authenticated
    async def get(self) -> None:
        path = self.required_argument("path")
        name = self.required_argument("name")
        if not name.isidentifier():
            raise tornado.web.HTTPError(400, f"{name!r} is not a Python variable name")
        self.finish(json.dumps(await self.probe(self.bridge.calls(path).profile(name))))


class WarmUpHandler(BaseHandler):
    """POST /dcpilot/api/warmup?path=<notebook>[&task=<task>] → the notebook's kernel starts
    importing what the first diagnosis and the model step need, in a background thread
    (:func:`kernel_tools.warmup.warm_up_in_background`); answers at once with what is warm.
    The panel sends it when it opens on a notebook and when the notebook's kernel changes."""

    @tornado.web.authenticated
    async def post(self) -> None:
        path = self.required_argument("path")
        task = self.get_argument("task", default="") or None
        tasks = [kind.value for kind in TaskKind]
        if task is not None and task not in tasks:
            raise tornado.web.HTTPError(400, f"task must be one of {tasks}, got {task[:40]!r}")
        self.finish(json.dumps(await self.probe(self.bridge.calls(path).warm_up(task))))


class SessionsBase(BaseHandler):
    """Plumbing shared by the session endpoints: the registry, the JSON body, the session."""

    @property
    def registry(self) -> SessionRegistry:
        return self.settings["dcpilot_sessions"]

    async def prepare(self) -> None:  # type: ignore[override]
        await super().prepare()
        # also the POSTs that read no body; after authentication, which answers strangers first
        if self.request.method == "POST" and self.current_user is not None:
            check_size(self.request.body)

    def body(self, schema: dict[str, Any]) -> dict[str, Any]:
        """The JSON body within the API's limits (413/400 with a message otherwise)."""
        return parse_body(self.request.body, schema)

    def hosted(self, session_id: str) -> HostedSession:
        try:
            return self.registry.get(session_id)
        except KeyError as error:
            raise tornado.web.HTTPError(404, str(error.args[0])) from error

    def send(self, hosted: HostedSession) -> None:
        self.finish(json.dumps(hosted.to_dict()))


class SessionsHandler(SessionsBase):
    """POST /dcpilot/api/sessions {path, frame, target?, task?, time?, goal?, approve?, planner?,
    model?, share?, replace?, join?} → a new session for the notebook, its coordinator running in the
    background; 409 (with the live session's ``id``) when the notebook has one, unless replace.

    GET /dcpilot/api/sessions?path=<notebook> → {"sessions": [{id, path, frame, target, state,
    created}]}: the panel finds a notebook's session again after a reload."""

    @tornado.web.authenticated
    def get(self) -> None:
        path = self.get_argument("path", default=None)
        found = self.registry.sessions(path or None)
        self.finish(json.dumps({"sessions": [h.summary() for h in found]}))

    @tornado.web.authenticated
    async def post(self) -> None:
        data = self.body(SESSION_BODY)
        names = ("target", "task", "time", "goal", "approve", "planner", "model", "share", "budget", "dictionary",
                 "events", "join")
        options = {k: data.get(k) for k in names}
        replace = data.get("replace", False)
        try:
            hosted = await self.registry.open(data["path"], frame=data["frame"], replace=replace, **options)
        except SessionExists as error:
            self.set_status(409)
            self.finish(json.dumps({"message": str(error), "id": error.hosted.id,
                                    "session": error.hosted.summary()}))
            return
        except NoKernelError as error:
            raise tornado.web.HTTPError(404, str(error)) from error
        except ValueError as error:
            raise tornado.web.HTTPError(400, str(error)) from error
        self.send(hosted)


class SessionHandler(SessionsBase):
    """GET /dcpilot/api/sessions/{id} → findings, plan, decisions, checkpoints, usage."""

    @tornado.web.authenticated
    def get(self, session_id: str) -> None:
        self.send(self.hosted(session_id))


class DecisionHandler(SessionsBase):
    """POST /dcpilot/api/sessions/{id}/decisions/{decision_id} {choice, rationale?} → record the
    expert's answer and resume the co-pilot."""

    @tornado.web.authenticated
    def post(self, session_id: str, decision_id: str) -> None:
        hosted = self.hosted(session_id)
        data = self.body(DECISION_BODY)
        choice, rationale = data["choice"], data.get("rationale", "")
        try:
            hosted.decide(decision_id, choice, rationale, via=Via.PANEL)
        except KeyError as error:
            raise tornado.web.HTTPError(404, str(error.args[0])) from error
        except ValueError as error:
            raise tornado.web.HTTPError(409, str(error)) from error
        self.send(hosted)


class TimelineHandler(SessionsBase):
    """POST /dcpilot/api/sessions/{id}/timeline {column, group, rationale?} → the expert places a
    column on the column timeline (its own group: confirms it); 404 for a column not on it, 400
    for a place that is not one."""

    @tornado.web.authenticated
    def post(self, session_id: str) -> None:
        hosted = self.hosted(session_id)
        data = self.body(TIMELINE_BODY)
        try:
            hosted.move_column(data["column"], data["group"], data.get("rationale", ""), via=Via.PANEL)
        except KeyError as error:
            raise tornado.web.HTTPError(404, str(error.args[0])) from error
        except ValueError as error:
            raise tornado.web.HTTPError(400, str(error)) from error
        self.send(hosted)


class InferenceHandler(SessionsBase):
    """POST /dcpilot/api/sessions/{id}/inferences/{inference_id} {value, rationale?} → the expert
    answers a structural question: the inferred value confirms it, an alternative changes it (the
    data is diagnosed again); 404 for no such inference, 409 for a value it does not offer."""

    @tornado.web.authenticated
    async def post(self, session_id: str, inference_id: str) -> None:
        hosted = self.hosted(session_id)
        data = self.body(INFERENCE_BODY)
        try:
            await hosted.answer_inference(inference_id, data["value"], data.get("rationale", ""), via=Via.PANEL)
        except KeyError as error:
            raise tornado.web.HTTPError(404, str(error.args[0])) from error
        except ValueError as error:
            raise tornado.web.HTTPError(409, str(error)) from error
        self.send(hosted)


class UndoHandler(SessionsBase):
    """POST /dcpilot/api/sessions/{id}/undo {checkpoint} → restore the state before that step."""

    @tornado.web.authenticated
    async def post(self, session_id: str) -> None:
        hosted = self.hosted(session_id)
        checkpoint = self.body(UNDO_BODY)["checkpoint"]
        try:
            await hosted.undo(checkpoint)
        except KeyError as error:
            raise tornado.web.HTTPError(404, str(error.args[0])) from error
        except ValueError as error:  # the checkpoint's values are gone (a kernel death): nothing undone
            raise tornado.web.HTTPError(409, str(error)) from error
        self.send(hosted)


class PlanHandler(SessionsBase):
    """POST /dcpilot/api/sessions/{id}/plan {op, step?, episode?, columns?, params?, before?, after?,
    reason?} → apply one plan edit (skip, move, add, params, reopen) and carry on; the session
    with the edit's record under ``edit``. 404 unknown step, 400 malformed edit, 409 when the
    session's state does not allow it (a running step, a step already done, ...)."""

    @tornado.web.authenticated
    async def post(self, session_id: str) -> None:
        hosted = self.hosted(session_id)
        edit = self.body(PLAN_BODY)
        try:
            record = await hosted.edit(edit, via=Via.PANEL)
        except KeyError as error:
            raise tornado.web.HTTPError(404, str(error.args[0])) from error
        except EditRefused as error:
            raise tornado.web.HTTPError(409, str(error)) from error
        except ValueError as error:
            raise tornado.web.HTTPError(400, str(error)) from error
        self.finish(json.dumps({**hosted.to_dict(), "edit": encode(record)}))


class ImpactHandler(SessionsBase):
    """POST /dcpilot/api/sessions/{id}/decisions/{decision_id}/impact {action: start|cancel} →
    start (again) or stop estimating what each option of the decision does to the model; 409
    when the decision gets no estimate (answered, or not a data gate) or none runs to cancel."""

    @tornado.web.authenticated
    def post(self, session_id: str, decision_id: str) -> None:
        hosted = self.hosted(session_id)
        action = self.body(IMPACT_BODY)["action"]
        try:
            done = (hosted.estimate(decision_id, restart=True) if action == "start"
                    else hosted.stop_estimate(decision_id))
        except KeyError as error:
            raise tornado.web.HTTPError(404, str(error.args[0])) from error
        if not done:
            raise tornado.web.HTTPError(409, f"decision {decision_id}: " + (
                "its options get no impact estimate (answered, or not a data gate)" if action == "start"
                else "no impact estimate is running"))
        self.send(hosted)


class InterruptHandler(SessionsBase):
    """POST /dcpilot/api/sessions/{id}/interrupt → interrupt the kernel under the running
    co-pilot step: the step fails ("interrupted by the user"), the session stays usable."""

    @tornado.web.authenticated
    async def post(self, session_id: str) -> None:
        hosted = self.hosted(session_id)
        try:
            await hosted.interrupt()
        except NothingRunning as error:
            raise tornado.web.HTTPError(409, str(error)) from error
        except NoKernelError as error:
            raise tornado.web.HTTPError(404, str(error)) from error
        self.send(hosted)


class ResumeHandler(SessionsBase):
    """POST /dcpilot/api/sessions/{id}/resume → run the co-pilot again after an interrupt or a
    failure (409 while it runs)."""

    @tornado.web.authenticated
    def post(self, session_id: str) -> None:
        hosted = self.hosted(session_id)
        if hosted.session.state == SessionState.RUNNING:
            raise tornado.web.HTTPError(409, "the co-pilot is already running")
        hosted.resume()
        self.send(hosted)


class SessionEventsHandler(JupyterHandler, websocket.WebSocketHandler):
    """WS /dcpilot/api/sessions/{id}/events: session events to the panel, and the notebook-host
    protocol both ways (the server's run_cell / insert_markdown / delete_cells requests, the
    frontend's answers carrying the same request_id)."""

    auth_resource = "kernels"  # the co-pilot executes code in the notebook's kernel

    async def pre_get(self) -> None:
        authorized = await ensure_async(
            self.authorizer.is_authorized(self, self.current_user, "execute", self.auth_resource)
        )
        if not authorized:
            raise tornado.web.HTTPError(403)

    @ws_authenticated
    async def get(self, session_id: str) -> None:
        await self.pre_get()
        try:
            self._hosted = self.settings["dcpilot_sessions"].get(session_id)
        except KeyError as error:
            raise tornado.web.HTTPError(404, str(error.args[0])) from error
        result = super().get(session_id)
        if result is not None:
            await result

    def open(self, *args: Any, **kwargs: Any) -> None:
        self._unsubscribe = self._hosted.session.subscribe(self.push)
        self._detach = self._hosted.host.attach(self.push)
        self.push({"type": "session", "session": self._hosted.to_dict()})

    def push(self, message: dict[str, Any]) -> None:
        try:
            self.write_message(json.dumps(message, default=str))
        except websocket.WebSocketClosedError:
            self.on_close()

    def on_message(self, message: str | bytes) -> None:
        try:
            data = json.loads(message)
        except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
            self.log.warning("dcpilot: ignoring a WebSocket message that is not JSON (or nests too deeply)")
            return
        if isinstance(data, dict) and data.get("request_id"):
            self._hosted.host.answer(data)

    def on_close(self) -> None:
        for name in ("_unsubscribe", "_detach"):
            undo = getattr(self, name, None)
            if undo is not None:
                undo()
                setattr(self, name, None)


def setup_handlers(web_app: Any, dcpilot: DCPilot) -> None:
    """Mount the handlers under the server's base URL and create the shared kernel bridge."""
    settings = web_app.settings
    settings["dcpilot_settings"] = dcpilot
    settings["dcpilot_bridge"] = KernelBridge(settings["session_manager"], settings["kernel_manager"])
    # engine steps (diagnosis, model fits) may take minutes: a longer wait than the panel's probes
    engine_bridge = KernelBridge(settings["session_manager"], settings["kernel_manager"], timeout=600.0)
    settings["dcpilot_sessions"] = SessionRegistry(engine_bridge, settings["contents_manager"].root_dir,
                                                      settings=dcpilot)
    base_url = settings["base_url"]
    sessions = url_path_join(base_url, API, "sessions")
    web_app.add_handlers(
        ".*$",
        [
            (url_path_join(base_url, API, "status"), StatusHandler),
            (url_path_join(base_url, API, "frames"), FramesHandler),
            (url_path_join(base_url, API, "profile"), ProfileHandler),
            (url_path_join(base_url, API, "warmup"), WarmUpHandler),
            (sessions, SessionsHandler),
            (sessions + r"/(?P<session_id>[0-9a-f]{32})", SessionHandler),
            (sessions + r"/(?P<session_id>[0-9a-f]{32})/decisions/(?P<decision_id>[\w-]+)", DecisionHandler),
            (sessions + r"/(?P<session_id>[0-9a-f]{32})/decisions/(?P<decision_id>[\w-]+)/impact", ImpactHandler),
            (sessions + r"/(?P<session_id>[0-9a-f]{32})/plan", PlanHandler),
            (sessions + r"/(?P<session_id>[0-9a-f]{32})/undo", UndoHandler),
            (sessions + r"/(?P<session_id>[0-9a-f]{32})/timeline", TimelineHandler),
            (sessions + r"/(?P<session_id>[0-9a-f]{32})/inferences/(?P<inference_id>[^/]+)", InferenceHandler),
            (sessions + r"/(?P<session_id>[0-9a-f]{32})/interrupt", InterruptHandler),
            (sessions + r"/(?P<session_id>[0-9a-f]{32})/resume", ResumeHandler),
            (sessions + r"/(?P<session_id>[0-9a-f]{32})/events", SessionEventsHandler),
        ],
    )
