"""The two interfaces the engine talks through, and the headless host that implements them.

The engine never touches a kernel or a notebook directly: it evaluates silent probes through
a :class:`KernelProbe` and inserts visible cells through a :class:`NotebookHost`. The Jupyter
server extension, the command line and the tests each provide their own host, so the same
engine runs everywhere.
"""

from __future__ import annotations

import asyncio
import os
import queue
import shutil
import sys
import tempfile
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from jupyter_dcpilot.probe import execute_request_content, parse_reply, probe_expression
from kernel_tools.vocabulary import StrEnum
from kernel_tools.warmup import start_up_line

from .budgets import minutes

# seconds a probe (a silent request to the kernel) may take before it is given up
PROBE_TIMEOUT_S = 600.0


class Via(StrEnum):
    """The hosts an answer or a plan edit comes through, in words (the decision log says them).
    An agent (an MCP client, say) is named: :func:`agent`."""

    PANEL = "panel"
    CHAT = "chat"
    MAGIC = "magic"
    TERMINAL = "terminal"
    DECISIONS_FILE = "decisions file"
    POLICY = "approval policy"


def agent(name: str) -> str:
    """The ``via`` of an agent's answers and edits: ``agent <name>``."""
    name = " ".join(str(name).split())
    if not name:
        raise ValueError("an agent needs a name")
    return f"agent {name}"


def agent_name(via: str | None) -> str | None:
    """The agent's name when ``via`` is an agent's (``agent <name>``), else None."""
    return via[len("agent "):] if via and via.startswith("agent ") else None


def by_whom(via: str | None) -> str:
    """"by agent X" for an agent's action, else :func:`by_the_user`."""
    name = agent_name(via)
    return f"by agent {name}" if name is not None else by_the_user(via)


def by_the_user(via: str | None, who: str = "the user") -> str:
    """"by the user in the panel", "... in the chat", "... with a magic", "... through agent X"
    (``who="you"``: the same, said to the person)."""
    where = {Via.PANEL: "in the panel", Via.CHAT: "in the chat", Via.MAGIC: "with a magic",
             Via.TERMINAL: "at the terminal", Via.DECISIONS_FILE: "in the decisions file"}
    if via is None:
        return f"by {who}"
    return f"by {who} {where.get(via, f'through {via}')}"  # type: ignore[call-overload]


@dataclass
class CellResult:
    """What running one visible cell produced: nbformat outputs and the error, if any."""

    cell_id: str
    outputs: list[dict[str, Any]] = field(default_factory=list)
    error: dict[str, Any] | None = None  # {ename, evalue, traceback}

    def text(self) -> str:
        """The plain-text rendering of the outputs (what a human would read)."""
        parts: list[str] = []
        for out in self.outputs:
            if out.get("output_type") == "stream":
                parts.append(str(out.get("text", "")))
            elif out.get("output_type") in ("execute_result", "display_data"):
                parts.append(str(out.get("data", {}).get("text/plain", "")))
        return "".join(parts)


class KernelDiedError(RuntimeError):
    """The kernel stopped (crashed, killed, shut down or restarted) while a probe or a
    co-pilot cell waited for it."""

    step_id: str | None = None  # the step whose cell the kernel died in (None: a probe)
    cell_id: str | None = None  # that half-made cell,
    cell_removed: bool = False  # and whether it is gone from the notebook already


Alive = Callable[[], Awaitable[bool]]


@runtime_checkable
class KernelProbe(Protocol):
    """Evaluate one expression silently in the kernel and return its JSON value."""

    async def evaluate(self, expression: str) -> Any: ...


@runtime_checkable
class NotebookHost(Protocol):
    """Insert and execute visible cells in the notebook the co-pilot works in."""

    async def run_cell(self, source: str, metadata: dict[str, Any]) -> CellResult: ...

    async def insert_markdown(self, source: str, metadata: dict[str, Any]) -> str: ...

    async def delete_cells(self, cell_ids: list[str]) -> None: ...


class ClientProbe:
    """A :class:`KernelProbe` on any ``AsyncKernelClient`` (give it its own session id when the
    browser also talks to that kernel). Shell replies and iopub messages of other requests are
    skipped, so it can share a kernel with the user. ``alive`` (async, optional) is asked while
    waiting, so a dead kernel fails the probe at once instead of after ``timeout``."""

    def __init__(self, client: Any, timeout: float = PROBE_TIMEOUT_S, lock: asyncio.Lock | None = None,
                 alive: Alive | None = None) -> None:
        self.client = client
        self.timeout = timeout
        self.lock = lock or asyncio.Lock()
        self.alive = alive

    async def evaluate(self, expression: str) -> Any:
        async with self.lock:
            msg_id = self.client.execute(**execute_request_content(expression))
            wait = Waiting(self.timeout, self.alive, "the co-pilot's request")
            reply = await shell_reply(self.client, msg_id, wait)
            await collect_outputs(self.client, msg_id, wait)  # drain its busy/idle
        return parse_reply(reply["content"])


POLL_S = 1.0


class Waiting:
    """How long to wait for a kernel's messages: while it lives, and at most ``timeout``
    seconds in all when one is given (None: no limit, for a cell that runs within its budget).
    Errors are sentences: the kernel stopped, or did not answer ``what`` in time."""

    def __init__(self, timeout: float | None, alive: Alive | None, what: str) -> None:
        self.timeout = timeout
        self.alive = alive
        self.what = what
        self.deadline: float | None = None

    async def next(self, get: Callable[..., Awaitable[Any]]) -> Any:
        loop = asyncio.get_running_loop()
        if self.deadline is None and self.timeout is not None:
            self.deadline = loop.time() + self.timeout
        while True:
            remaining = None if self.deadline is None else self.deadline - loop.time()
            if remaining is not None and remaining <= 0:
                raise TimeoutError(f"the kernel did not answer {self.what} within {minutes(self.timeout or 0)}; "
                                   "it may be busy or stuck: interrupt it, then resume")
            try:
                return await get(timeout=POLL_S if remaining is None else min(POLL_S, remaining))
            except queue.Empty:
                if self.alive is not None and not await self.alive():
                    raise KernelDiedError(f"the kernel died while the co-pilot waited for {self.what}; "
                                          "restart it, then undo to the last checkpoint (checkpoints "
                                          "kept on disk bring the variables back)") from None


IOPUB_JOINED_S = 0.5  # how long a kernel_info request's idle status may take to come back on iopub


async def kernel_ready(client: Any, wait: Waiting) -> None:
    """Return once the kernel answers a kernel_info request on shell and that request's idle status
    has come back on iopub (the iopub subscription reaches the kernel: later outputs are not lost);
    sent again while iopub stays silent. jupyter_client's ``wait_for_ready`` does the same, then
    waits 0.2 s more for iopub messages no one sent: idle time on every start (issue 31)."""
    while True:
        msg_id = client.kernel_info()
        reply = await shell_reply(client, msg_id, wait)
        client._handle_kernel_info_reply(reply)  # the protocol version to speak
        try:
            while True:
                msg = await client.get_iopub_msg(timeout=IOPUB_JOINED_S)
                if msg["parent_header"].get("msg_id") == msg_id and msg["msg_type"] == "status" \
                        and msg["content"].get("execution_state") == "idle":
                    return
        except queue.Empty:
            continue  # not subscribed yet when the kernel published: ask again


async def shell_reply(client: Any, msg_id: str, wait: Waiting) -> dict[str, Any]:
    """The shell reply to one request (replies to other requests are skipped)."""
    while True:
        msg = await wait.next(client.get_shell_msg)
        if msg["parent_header"].get("msg_id") == msg_id:
            return msg


async def collect_outputs(client: Any, msg_id: str, wait: Waiting) -> list[Any]:
    """The nbformat outputs one request produced, read from iopub until the kernel is idle."""
    from nbformat.v4 import output_from_msg

    outputs: list[Any] = []
    while True:
        msg = await wait.next(client.get_iopub_msg)
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        kind = msg["msg_type"]
        if kind == "status" and msg["content"].get("execution_state") == "idle":
            return outputs
        if kind == "clear_output":
            outputs.clear()
        elif kind in ("stream", "display_data", "execute_result", "error"):
            out = output_from_msg(msg)
            last = outputs[-1] if outputs else None
            if kind == "stream" and last is not None and last.get("output_type") == "stream" \
                    and last.get("name") == out.get("name"):
                last["text"] += out["text"]
            else:
                outputs.append(out)


def _kernel_env(extra_paths: list[str]) -> dict[str, str]:
    env = dict(os.environ)
    if extra_paths:
        current = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
        env["PYTHONPATH"] = os.pathsep.join(extra_paths + current)
    return env


# a Unix socket's path must fit in sockaddr_un (108 bytes on Linux, 104 on macOS), with the
# "-N" suffix jupyter_client adds for each channel
SOCKET_PATH_MAX = 100


def socket_folder() -> str | None:
    """A new folder (mode 0700) for a kernel's Unix sockets, in the temporary folder or, when
    that path is too long for a socket, in /tmp; None where there is none (not POSIX): the
    kernel then talks TCP on localhost."""
    if os.name != "posix":
        return None
    for parent in (None, "/tmp"):
        if parent is not None and not os.path.isdir(parent):
            continue
        folder = tempfile.mkdtemp(prefix="dcpilot-kernel-", dir=parent)
        if len(os.path.join(folder, "kernel-99")) <= SOCKET_PATH_MAX:
            return folder
        os.rmdir(folder)
    return None


def import_nbformat() -> None:
    """Import nbformat without jsonschema's RFC 3987 grammar when jsonschema is not imported yet.

    nbformat validates with jsonschema, whose import builds ~40 parsers for the "iri" formats
    (rfc3987_syntax, when installed): ~1.3 s CPU of nbformat's ~1.5 s, on the command line's path
    to its first step. No notebook schema uses those formats, nor does anything else the
    command line's process validates (fastjsonschema checks the co-pilot's own files:
    :mod:`.validation`), so there jsonschema goes without them: it skips a format checker whose
    module cannot be imported. A process that imported jsonschema before keeps it as it is."""
    if "nbformat" in sys.modules or "jsonschema" in sys.modules or "rfc3987_syntax" in sys.modules:
        return
    sys.modules["rfc3987_syntax"] = None  # type: ignore[assignment]  # "cannot be imported"
    try:
        import nbformat  # noqa: F401
    finally:
        del sys.modules["rfc3987_syntax"]


def _new_notebook(kernel_name: str) -> Any:
    import_nbformat()
    from nbformat.v4 import new_notebook

    notebook = new_notebook()
    notebook.metadata["kernelspec"] = {"name": kernel_name, "display_name": "Python 3", "language": "python"}
    notebook.metadata["language_info"] = {"name": "python"}
    return notebook


def _kernel_tools_root() -> str:
    """The directory that holds the ``kernel_tools`` package the engine itself imports."""
    import kernel_tools

    return str(Path(kernel_tools.__file__).resolve().parent.parent)


class HeadlessHost:
    """A real kernel (jupyter_client) plus an nbformat notebook written to ``path``.

    Implements both :class:`KernelProbe` and :class:`NotebookHost`. The kernel is started with
    ``kernel_tools`` importable (the engine's own copy is put on ``PYTHONPATH``), so a notebook
    can be produced before the package is installed. ``timeout`` bounds a silent probe; a cell
    runs as long as the kernel lives (its step's budget decides when it is stopped, see
    :meth:`interrupt`); a kernel that dies under a cell or a probe fails it within a second
    with :class:`KernelDiedError`. ``warm``: the kernel imports what the first steps need
    (:mod:`kernel_tools.warmup`) as it starts, and those of the model step of ``task`` in the
    background; :meth:`launch` starts it ahead of :meth:`start`.
    """

    def __init__(
        self,
        notebook_path: str | os.PathLike[str],
        *,
        kernel_name: str = "python3",
        cwd: str | os.PathLike[str] | None = None,
        timeout: float = PROBE_TIMEOUT_S,
        warm: bool = False,
        task: str | None = None,
    ) -> None:
        self.path = Path(notebook_path)
        self.kernel_name = kernel_name
        self.cwd = str(cwd) if cwd is not None else str(self.path.parent)
        self.timeout = timeout
        self.warm = warm
        self.task = task
        self.notebook: Any = None  # made in start(): nbformat pulls in jsonschema, slow to import
        self._km: Any = None
        self._kc: Any = None
        self._sockets: str | None = None
        self._launched_in = self.cwd
        self._lock = asyncio.Lock()

    async def launch(self) -> None:
        """Start the kernel's process and return without waiting for it, so the caller's own
        work (the command line's input checks) overlaps the kernel's start-up. ``cwd`` may not
        exist yet (an output folder made after the checks): the kernel moves there in start()."""
        if self._km is not None:
            return
        from jupyter_client.manager import AsyncKernelManager

        # Unix sockets in a folder only this user can open, not TCP ports on localhost: no other
        # user can connect, and ipykernel has no plain-text warning to print into the CLI's output.
        # An absolute path: the kernel runs in another working directory than this process.
        self._sockets = socket_folder()
        transport = {} if self._sockets is None else {"transport": "ipc",
                                                      "ip": os.path.join(self._sockets, "kernel")}
        self._km = AsyncKernelManager(kernel_name=self.kernel_name, **transport)
        self._launched_in = self.cwd if os.path.isdir(self.cwd) else os.getcwd()
        # warm: IPython runs the start-up line before the kernel answers (kernel_tools.warmup)
        extra = [f"--IPKernelApp.exec_lines={start_up_line(self.task)}"] if self.warm else []
        await self._km.start_kernel(cwd=self._launched_in, env=_kernel_env([_kernel_tools_root()]),
                                    extra_arguments=extra)

    async def start(self) -> None:
        await self.launch()
        self.notebook = _new_notebook(self.kernel_name)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._kc = self._km.client()
        self._kc.session.session = uuid.uuid4().hex  # our own session id
        self._kc.start_channels()
        await kernel_ready(self._kc, Waiting(120 if self.warm else 60, self._alive, "a first request"))
        if self._launched_in != self.cwd:
            await self.evaluate(probe_expression("chdir_json", self.cwd))
        self._write()

    async def stop(self) -> None:
        if self._kc is not None:
            self._kc.stop_channels()
            self._kc = None
        if self._km is not None:
            await self._km.shutdown_kernel(now=True)
            self._km = None
        if self._sockets is not None:
            shutil.rmtree(self._sockets, ignore_errors=True)
            self._sockets = None

    async def __aenter__(self) -> HeadlessHost:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    # -- KernelProbe -------------------------------------------------------------------
    async def evaluate(self, expression: str) -> Any:
        return await ClientProbe(self._kc, self.timeout, self._lock, self._alive).evaluate(expression)

    async def interrupt(self) -> None:
        """Interrupt what the kernel runs (a step past its budget's limit)."""
        if self._km is not None:
            await self._km.interrupt_kernel()

    async def _alive(self) -> bool:
        return self._km is not None and bool(await self._km.is_alive())

    # -- NotebookHost ------------------------------------------------------------------
    async def run_cell(self, source: str, metadata: dict[str, Any]) -> CellResult:
        from nbformat.v4 import new_code_cell, new_output

        cell = new_code_cell(source, metadata=dict(metadata))
        self.notebook.cells.append(cell)
        step = (metadata.get("dcpilot") or {}).get("step")
        what = f"step {step}" if step else "a cell"
        async with self._lock:
            msg_id = self._kc.execute(source, store_history=True, allow_stdin=False)
            wait = Waiting(None, self._alive, "a cell")
            try:
                outputs = await collect_outputs(self._kc, msg_id, wait)
                reply = await shell_reply(self._kc, msg_id, wait)
            except KernelDiedError:
                cell.outputs = [new_output("error", ename="KernelDied", evalue="the kernel died", traceback=[])]
                self._write()
                raise KernelDiedError(f"the kernel died while {what} ran: its variables are gone. "
                                      f"The notebook so far is {self.path}") from None
        content = reply["content"]
        cell.outputs = outputs
        cell.execution_count = content.get("execution_count")
        error = None
        if content.get("status") != "ok":
            error = {
                "ename": content.get("ename", ""),
                "evalue": content.get("evalue", ""),
                "traceback": content.get("traceback", []),
            }
        self._write()
        return CellResult(cell_id=cell.id, outputs=[dict(o) for o in outputs], error=error)

    async def insert_markdown(self, source: str, metadata: dict[str, Any]) -> str:
        from nbformat.v4 import new_markdown_cell

        cell = new_markdown_cell(source, metadata=dict(metadata))
        self.notebook.cells.append(cell)
        self._write()
        return cell.id

    async def delete_cells(self, cell_ids: list[str]) -> None:
        doomed = set(cell_ids)
        self.notebook.cells = [c for c in self.notebook.cells if c.get("id") not in doomed]
        self._write()

    # -- internals ---------------------------------------------------------------------
    def _write(self) -> None:
        import nbformat

        nbformat.write(self.notebook, str(self.path))
