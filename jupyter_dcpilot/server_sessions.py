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
from pathlib import Path
from typing import Any, Callable

from .engine.coordinator import TASK_KINDS, ApprovalPolicy, Coordinator
from .engine.hosts import CellResult
from .engine.session import Decision, Session
from .kernel_bridge import KernelBridge

log = logging.getLogger(__name__)
Send = Callable[[dict[str, Any]], None]


class HostError(RuntimeError):
    """The frontend could not do what the engine asked (no panel, timeout, or its error)."""


class BrowserNotebookHost:
    """A :class:`~jupyter_dcpilot.engine.NotebookHost` over the panel's WebSocket.

    Each request carries a fresh ``request_id``; the frontend's answer with the same id
    resolves it. With no panel connected a request waits for one (up to ``timeout``), so the
    co-pilot simply pauses while the notebook is closed. Requests go to the panel that
    connected last; a request whose panel went away times out rather than running twice.
    """

    def __init__(self, timeout: float = 600.0) -> None:
        self.timeout = timeout
        self._senders: list[Send] = []
        self._connected = asyncio.Event()
        self._pending: dict[str, asyncio.Future[dict[str, Any]]] = {}

    def attach(self, send: Send) -> Callable[[], None]:
        """Route requests to ``send`` (the newest panel); returns the function that detaches it."""
        self._senders.append(send)
        self._connected.set()

        def detach() -> None:
            if send in self._senders:
                self._senders.remove(send)
            if not self._senders:
                self._connected.clear()

        return detach

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
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.timeout
        while not self._senders:  # a panel may also leave while this task waits to resume
            try:
                await asyncio.wait_for(self._connected.wait(), max(deadline - loop.time(), 0.0))
            except asyncio.TimeoutError as error:
                raise HostError(f"no notebook panel connected within {self.timeout:.0f} s") from error
        request_id = uuid.uuid4().hex
        future: asyncio.Future[dict[str, Any]] = loop.create_future()
        self._pending[request_id] = future
        try:
            self._senders[-1]({"type": kind, "request_id": request_id, **payload})
            return await asyncio.wait_for(future, max(deadline - loop.time(), 0.0))
        except asyncio.TimeoutError as error:
            raise HostError(f"the notebook did not answer {kind} within {self.timeout:.0f} s") from error
        finally:
            self._pending.pop(request_id, None)

    async def run_cell(self, source: str, metadata: dict[str, Any]) -> CellResult:
        reply = await self.request("run_cell", source=source, metadata=metadata)
        return CellResult(cell_id=str(reply.get("cell_id", "")), outputs=list(reply.get("outputs") or []),
                          error=reply.get("error") or None)

    async def insert_markdown(self, source: str, metadata: dict[str, Any]) -> str:
        reply = await self.request("insert_markdown", source=source, metadata=metadata)
        return str(reply.get("cell_id", ""))

    async def delete_cells(self, cell_ids: list[str]) -> None:
        await self.request("delete_cells", cell_ids=list(cell_ids))


class NotebookKernelProbe:
    """The :class:`~jupyter_dcpilot.engine.KernelProbe` of one notebook's kernel, found by path
    at every probe (so a restarted or changed kernel is picked up)."""

    def __init__(self, bridge: KernelBridge, path: str) -> None:
        self.bridge = bridge
        self.path = path

    async def evaluate(self, expression: str) -> Any:
        return await self.bridge.evaluate_expression(self.path, expression)


class PanelPolicy(ApprovalPolicy):
    """An :class:`ApprovalPolicy` whose choices may also say ``"ask"`` or ``"recommended"``
    per gate or column, e.g. ``{"*": "recommended", "leakage": "ask"}``."""

    def choose(self, decision: Decision) -> tuple[str, str] | None:
        if self.mode == "file" and decision.gate != "custom_code":
            wanted = self._from_file(decision)
            if wanted == "ask":
                return None
            if wanted == "recommended":
                return (decision.recommended, "recommended option (panel policy)") if decision.recommended else None
        return super().choose(decision)


def policy_from(approve: Any) -> PanelPolicy:
    """``"ask"`` (default), ``"recommended"``, ``"none"`` or a mapping of gates/columns to choices."""
    if approve is None:
        return PanelPolicy()
    if isinstance(approve, str) and approve in ("ask", "recommended", "none"):
        return PanelPolicy(mode=approve)
    if isinstance(approve, dict):
        return PanelPolicy(mode="file", choices=approve)
    raise ValueError(f"approve must be 'ask', 'recommended', 'none' or an object of choices, not {approve!r}")


class HostedSession:
    """One notebook's engine session, its two hosts and the task running its coordinator."""

    def __init__(self, id: str, path: str, session: Session, coordinator: Coordinator,
                 host: BrowserNotebookHost) -> None:
        self.id = id
        self.path = path
        self.session = session
        self.coordinator = coordinator
        self.host = host
        self.task: asyncio.Task[str] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "path": self.path, **self.session.to_dict()}

    def resume(self) -> None:
        """Run the coordinator until blocked, in the background (runs are serialised by it)."""
        self.task = asyncio.create_task(self._run())

    async def _run(self) -> str:
        try:
            return await self.coordinator.run_until_blocked()
        except Exception:  # the coordinator already recorded it in the session
            log.exception("dcpilot session %s stopped", self.id)
            return "failed"

    async def close(self) -> None:
        if self.task is not None and not self.task.done():
            self.task.cancel()
            await asyncio.gather(self.task, return_exceptions=True)


class SessionRegistry:
    """The server's hosted sessions, by unguessable id (uuid4) and by notebook path."""

    def __init__(self, bridge: KernelBridge, root_dir: str, host_timeout: float = 600.0) -> None:
        self.bridge = bridge
        self.root = Path(root_dir).resolve()
        self.host_timeout = host_timeout
        self._by_id: dict[str, HostedSession] = {}
        self._by_path: dict[str, str] = {}

    def os_path(self, path: str) -> Path:
        """The notebook's file under the server root; ValueError for a path outside it."""
        full = (self.root / path.lstrip("/")).resolve()
        if self.root not in full.parents or full.suffix != ".ipynb":
            raise ValueError(f"{path!r} is not a notebook path under the server root")
        return full

    async def open(self, path: str, *, frame: str, target: str | None = None, task: str | None = None,
                   time: str | None = None, goal: str | None = None, approve: Any = None) -> HostedSession:
        """The notebook's session (created, or loaded from its sidecar, on first use), running."""
        path = path.lstrip("/")
        if not frame.isidentifier():
            raise ValueError(f"frame must be a Python variable name, not {frame!r}")
        if task not in (None, "auto", *TASK_KINDS):
            raise ValueError(f"task must be auto or one of {list(TASK_KINDS)}, not {task!r}")
        policy = policy_from(approve)
        notebook = self.os_path(path)
        await self.bridge.kernel_id_for(path)  # NoKernelError before anything is written
        existing = self._by_path.get(path)  # looked up after the await: no duplicate sessions
        if existing is not None:
            hosted = self._by_id[existing]
            if hosted.session.state == "failed":  # asking again retries a run that stopped
                hosted.resume()
            return hosted
        hints = {"target": target, "time": time, "task": task or "auto", "id": None, "goal": goal}
        session = Session.for_notebook(notebook, frame=frame, hints=hints)
        host = BrowserNotebookHost(self.host_timeout)
        coordinator = Coordinator(session, NotebookKernelProbe(self.bridge, path), host, policy=policy)
        hosted = HostedSession(uuid.uuid4().hex, path, session, coordinator, host)
        self._by_id[hosted.id] = hosted
        self._by_path[path] = hosted.id
        hosted.resume()
        return hosted

    def get(self, session_id: str) -> HostedSession:
        try:
            return self._by_id[session_id]
        except KeyError:
            raise KeyError(f"no co-pilot session {session_id!r}") from None

    async def close(self) -> None:
        await asyncio.gather(*(h.close() for h in self._by_id.values()))
