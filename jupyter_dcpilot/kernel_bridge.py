"""Reach the kernel behind a notebook from inside the Jupyter server.

The bridge finds the notebook's kernel through the server's session manager and talks to it
on a kernel client of its own, with its own session id, so the browser's connection to the
same kernel is never disturbed. It only sends silent probes (see :mod:`jupyter_dcpilot.probe`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from jupyter_client.session import Session
from jupyter_core.utils import ensure_async

from .engine.hosts import KernelDiedError
from .engine.kernel_calls import KernelCalls
from .probe import ProbeError, execute_request_content, parse_reply


class NoKernelError(LookupError):
    """The notebook has no running kernel the server knows of."""


class KernelBusyError(TimeoutError):
    """The kernel did not answer in time, usually because a long cell is still running."""


@dataclass(frozen=True, eq=False)
class KernelRun:
    """One run of a notebook's kernel: from a (re)start until it dies, is shut down or restarted."""

    kernel_id: str
    manager: Any
    started: Any  # the manager's ``ready`` future of this start; every restart makes a new one


class KernelBridge:
    """Silent probes into the kernels of a Jupyter server.

    Parameters
    ----------
    session_manager, kernel_manager
        The server's ``SessionManager`` and ``MappingKernelManager``.
    timeout : float
        Seconds to wait for a probe's reply. The kernel runs requests one at a time, so a
        probe waits behind a cell the user is running.
    poll : float
        Seconds between checks that the kernel is still alive while waiting.
    """

    def __init__(self, session_manager: Any, kernel_manager: Any, timeout: float = 10.0,
                 poll: float = 1.0) -> None:
        self.session_manager = session_manager
        self.kernel_manager = kernel_manager
        self.timeout = timeout
        self.poll = poll
        self._locks: dict[str, asyncio.Lock] = {}

    async def kernel_id_for(self, path: str) -> str:
        """The id of the kernel running the notebook at ``path`` (server-relative)."""
        path = path.lstrip("/")
        sessions = await self.session_manager.list_sessions()
        for model in sessions:
            if model.get("path", "").lstrip("/") == path and model.get("kernel"):
                return model["kernel"]["id"]
        known = sorted(m.get("path", "") for m in sessions)
        raise NoKernelError(f"no running kernel for notebook {path!r}; open it and start its kernel (known: {known})")

    async def kernel_run(self, path: str) -> KernelRun:
        """The run of the kernel behind the notebook at ``path`` now (see :meth:`kernel_ended`)."""
        kernel_id = await self.kernel_id_for(path)
        manager = self.kernel_manager.get_kernel(kernel_id)
        return KernelRun(kernel_id, manager, getattr(manager, "ready", None))

    async def kernel_ended(self, run: KernelRun) -> str | None:
        """How the kernel run ``run`` ended ("died", "was restarted", ...), or None while it lasts.

        The server restarts a dead kernel by itself within seconds, under the same id: so a
        living kernel is only the same run if its manager still holds the same ``ready``
        future (a new one is made at every start)."""
        try:
            manager = self.kernel_manager.get_kernel(run.kernel_id)
        except KeyError:
            return "was shut down"
        if manager is not run.manager:
            return "was replaced"
        if getattr(manager, "execution_state", None) == "dead" or not await ensure_async(manager.is_alive()):
            return "died"
        if getattr(manager, "ready", None) is not run.started:
            return "was restarted"
        return None

    def _open_client(self, kernel_id: str) -> Any:
        manager = self.kernel_manager.get_kernel(kernel_id)
        # A separate jupyter_client Session gives this client its own session id: replies
        # and status messages for our probes are never mistaken for the browser's.
        own_session = Session(
            key=manager.session.key,
            signature_scheme=manager.session.signature_scheme,
            username="dcpilot",
        )
        client = manager.client(session=own_session)
        client.start_channels(shell=True, iopub=False, stdin=False, hb=False, control=False)
        return client

    def calls(self, path: str) -> KernelCalls:
        """The probes of the notebook's kernel, typed (:class:`~.engine.kernel_calls.KernelCalls`)."""
        return KernelCalls(NotebookKernelProbe(self, path))

    async def evaluate_expression(self, path: str, expression: str) -> Any:
        """Evaluate a ready-made probe expression (see :mod:`jupyter_dcpilot.probe`) silently."""
        kernel_id = await self.kernel_id_for(path)
        content = execute_request_content(expression)
        lock = self._locks.setdefault(kernel_id, asyncio.Lock())
        async with lock:  # one probe per kernel at a time keeps the kernel's queue short
            # A client per probe: connecting costs a few milliseconds, and no socket outlives
            # the request (an open one would block the server's shutdown).
            client = self._open_client(kernel_id)
            try:
                manager = self.kernel_manager.get_kernel(kernel_id)
                # the run that must answer: a kernel the server restarted meanwhile never will
                run = KernelRun(kernel_id, manager, getattr(manager, "ready", None))
                msg = client.session.msg("execute_request", content)
                client.shell_channel.send(msg)
                reply = await self._reply_to(client, msg["header"]["msg_id"], run)
            except asyncio.TimeoutError as error:
                raise KernelBusyError(
                    f"the kernel did not answer within {self.timeout:.0f} s (is a cell still running?)"
                ) from error
            finally:
                client.stop_channels()
        return parse_reply(reply["content"])

    async def _reply_to(self, client: Any, msg_id: str, run: KernelRun | None = None) -> dict[str, Any]:
        """The shell reply to ``msg_id``; every ``poll`` seconds without one, check that the
        kernel run still lasts, so a crashed kernel fails the probe at once, not after
        ``timeout`` (also when the server restarted it between two checks: the new process
        lives, but it never got the request)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.timeout
        while True:
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise asyncio.TimeoutError
            try:
                reply = await client.get_shell_msg(timeout=min(remaining, self.poll))
            except Exception as error:  # queue.Empty from jupyter_client on timeout
                if run is not None and await self.kernel_ended(run) is not None:
                    raise KernelDiedError("the kernel died while the co-pilot waited for it; "
                                          "restart it (checkpoints spilled to disk can be restored)") from error
                continue
            if reply.get("parent_header", {}).get("msg_id") == msg_id:
                return reply


class KernelWatch:
    """Notices that the kernel of one notebook stopped while a cell ran: it died (crash, OOM
    kill), was shut down, restarted or replaced. ``path`` is called at each start, so a
    renamed notebook is followed."""

    def __init__(self, bridge: KernelBridge, path: Callable[[], str]) -> None:
        self.bridge = bridge
        self.path = path

    async def start(self) -> KernelRun:
        return await self.bridge.kernel_run(self.path())

    async def ended(self, run: KernelRun) -> str | None:
        return await self.bridge.kernel_ended(run)

    def idle(self, run: KernelRun) -> bool:
        """Whether the kernel runs nothing now (as the server last heard from it)."""
        return getattr(run.manager, "execution_state", None) in ("idle", "starting")


def died_while(how: str, step: str) -> KernelDiedError:
    """The error of a step whose kernel stopped under it: what happened and what to do next."""
    error = KernelDiedError(
        f"the kernel {how} while step {step} ran: its variables are gone. Once the kernel runs "
        f"again (Kernel > Restart if it did not restart by itself), undo to the checkpoint before "
        f"{step}: checkpoints are also kept on disk (by default each up to 512 MiB, the latest "
        "2 GiB in all) and bring the variables back in the new kernel.")
    error.step_id = step
    return error


__all__ = ["KernelBridge", "KernelBusyError", "KernelDiedError", "KernelRun", "KernelWatch",
           "NoKernelError", "ProbeError", "died_while"]


class NotebookKernelProbe:
    """The :class:`~jupyter_dcpilot.engine.KernelProbe` of one notebook's kernel, found by path
    at every probe (so a restarted or changed kernel is picked up)."""

    def __init__(self, bridge: KernelBridge, path: str) -> None:
        self.bridge = bridge
        self.path = path

    async def evaluate(self, expression: str) -> Any:
        return await self.bridge.evaluate_expression(self.path, expression)
