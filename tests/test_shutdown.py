"""A real ``jupyter server`` process stops on SIGTERM within seconds, whatever its co-pilot
sessions are doing, and writes every session to its sidecar first.

The server runs as a subprocess on a free port (never 8888), with every server extension of
this environment loaded (jupyter-ai included), as a user runs it. A simulated panel drives
the session over the events WebSocket and closes it in the middle of a run; then SIGTERM.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from jupyter_client.asynchronous import AsyncKernelClient
from jupyter_client.session import Session
from test_server_sessions import LEAKY_FRAME, Frontend
from tornado.httpclient import AsyncHTTPClient, HTTPRequest
from tornado.websocket import websocket_connect

pytestmark = pytest.mark.timeout(300)
TOKEN = "shutdown-test-token"
STOP_WITHIN = 10.0  # seconds from SIGTERM to exit (busy kernels get 5 s to stop); the issue saw more than 20
NO_QUESTIONS = {"*": "recommended", "label_issues": "keep"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """``jupyter server`` in a subprocess, with its own root, runtime and config folders."""

    def __init__(self, tmp: Path) -> None:
        self.root = tmp / "root"
        self.root.mkdir()
        self.runtime = tmp / "runtime"
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = tmp / "server.log"
        env = {**os.environ, "JUPYTER_RUNTIME_DIR": str(self.runtime),
               "JUPYTER_CONFIG_DIR": str(tmp / "config"), "JUPYTER_DATA_DIR": str(tmp / "data"),
               "XDG_CACHE_HOME": str(tmp / "cache")}
        command = [str(Path(sys.executable).with_name("jupyter-server")), "--no-browser",
                   f"--port={self.port}", "--ip=127.0.0.1", f"--ServerApp.root_dir={self.root}",
                   f"--IdentityProvider.token={TOKEN}", "--allow-root",
                   "--ServerApp.jpserver_extensions=jupyter_dcpilot=True",
                   f"--MCPExtensionApp.mcp_port={free_port()}"]
        self._log = open(self.log, "w")
        self.process = subprocess.Popen(command, env=env, stdout=self._log, stderr=subprocess.STDOUT)
        self.http = AsyncHTTPClient()

    async def fetch(self, path: str, method: str = "GET", body: dict | None = None) -> dict:
        response = await self.http.fetch(
            f"{self.url}/{path}", method=method, headers={"Authorization": f"token {TOKEN}"},
            body=None if body is None else json.dumps(body), raise_error=True, request_timeout=60)
        return json.loads(response.body or b"{}")

    async def ready(self, timeout: float = 120.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"the server exited: {self.log.read_text()[-3000:]}")
            try:
                await self.fetch("dcpilot/api/status")
                return
            except Exception:
                await asyncio.sleep(0.5)
        raise AssertionError(f"the server did not start: {self.log.read_text()[-3000:]}")

    async def kernel_client(self, path: str) -> AsyncKernelClient:
        """Start the notebook's kernel through the server; a client of our own on it."""
        model = await self.fetch("api/sessions", "POST", {"path": path, "type": "notebook", "name": path,
                                                          "kernel": {"name": "python3"}})
        client = AsyncKernelClient(session=Session(username="panel"))
        client.load_connection_file(str(self.runtime / f"kernel-{model['kernel']['id']}.json"))
        client.start_channels(hb=False)  # a heartbeat missed on a loaded machine is no dead kernel
        await client.wait_for_ready(timeout=60)
        return client

    async def events(self, session_id: str):
        request = HTTPRequest(f"ws://127.0.0.1:{self.port}/dcpilot/api/sessions/{session_id}/events",
                              headers={"Authorization": f"token {TOKEN}"})
        return await websocket_connect(request)

    def stop(self) -> float:
        """SIGTERM; the seconds until the process exited (killed after 30 s)."""
        start = time.monotonic()
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        return time.monotonic() - start

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self._log.close()


class LeavingPanel(Frontend):
    """Runs the co-pilot's cells until its ``leave_at``-th one: that cell starts in the kernel
    (behind a long sleep) and the panel closes its socket before answering."""

    def __init__(self, ws, client, leave_at: int) -> None:
        super().__init__(ws, client)
        self.leave_at = leave_at
        self.left = asyncio.Event()

    async def respond(self, message: dict) -> dict | None:
        if message.get("type") == "run_cell" and len(self.requests("run_cell")) == self.leave_at:
            self.client.execute("import time\ntime.sleep(600)\n" + message["source"])
            self.ws.close()
            self.left.set()
            return None
        return await super().respond(message)


@pytest.fixture
def server(tmp_path):
    running = Server(tmp_path)
    yield running
    running.close()


async def until(predicate, what: str, timeout: float = 120.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = await predicate()
        if value:
            return value
        await asyncio.sleep(0.3)
    raise AssertionError(f"timed out waiting for {what}")


async def blocked(server: Server, session_id: str) -> dict | None:
    state = await server.fetch(f"dcpilot/api/sessions/{session_id}")
    return state if state["state"] == "blocked" else None


@pytest.mark.slow
async def test_sigterm_stops_the_server_within_seconds_whatever_its_sessions_are_doing(server) -> None:
    """Three notebooks, three states, one SIGTERM:

    - ``cell``: its panel closed the socket in the middle of a co-pilot cell (the kernel runs it);
    - ``queued``: its diagnosis probe waits behind the user's long cell in a busy kernel;
    - ``unwritable``: blocked on a question, and its sidecar can no longer be written (a full
      disk, a read-only folder: here a folder took the file's place).

    The server stops within seconds; the first two are saved as stopped by the shutdown, the
    third one's failure is logged and stops nothing."""
    await server.ready()
    clients = {name: await server.kernel_client(f"{name}.ipynb") for name in ("cell", "queued", "unwritable")}
    for client in clients.values():
        await client.execute_interactive(LEAKY_FRAME, timeout=60)
    start = {name: await server.fetch("dcpilot/api/sessions", "POST",
                                      {"path": f"{name}.ipynb", "frame": "df", "target": "churned",
                                       "approve": NO_QUESTIONS if name == "cell" else "ask"})
             for name in ("cell", "unwritable")}
    panel = LeavingPanel(await server.events(start["cell"]["id"]), clients["cell"], leave_at=2)
    serving = asyncio.create_task(panel.serve())
    try:
        await until(lambda: blocked(server, start["unwritable"]["id"]), "the question of 'unwritable'")
        sidecar = server.root / ".unwritable.ipynb.dcpilot.json"
        sidecar.unlink()
        sidecar.mkdir()  # from now on every save of that session fails

        await asyncio.wait_for(panel.left.wait(), 120)
        step_id = panel.requests("run_cell")[-1]["metadata"]["dcpilot"]["step"]

        async def cell_running():
            state = await server.fetch(f"dcpilot/api/sessions/{start['cell']['id']}")
            return any(s["id"] == step_id and s["status"] == "running" for s in state["plan"])

        await until(cell_running, "the cell to run with its panel gone")

        clients["queued"].execute("import time\ntime.sleep(600)")
        await asyncio.sleep(0.5)
        start["queued"] = await server.fetch("dcpilot/api/sessions", "POST",
                                             {"path": "queued.ipynb", "frame": "df", "target": "churned"})
        await asyncio.sleep(2.0)  # the diagnosis probe is queued behind the sleep
        state = await server.fetch(f"dcpilot/api/sessions/{start['queued']['id']}")
        assert state["state"] == "running" and not state["findings"]
        elapsed = server.stop()
    finally:
        serving.cancel()
        for client in clients.values():
            client.stop_channels()
    log = server.log.read_text()
    assert elapsed < STOP_WITHIN, f"stopped after {elapsed:.1f} s:\n{log[-4000:]}"
    assert "could not save co-pilot session" in log and "unwritable.ipynb" in log
    assert "saved and closed 2 of 3 co-pilot session(s)" in log
    cell = json.loads((server.root / ".cell.ipynb.dcpilot.json").read_text())
    assert cell["state"] == "idle"
    step = next(s for s in cell["plan"] if s["id"] == step_id)
    assert step["status"] == "failed" and "shut down" in step["note"]
    queued = json.loads((server.root / ".queued.ipynb.dcpilot.json").read_text())
    assert queued["state"] == "idle" and not queued["findings"]
    print(f"stopped {elapsed:.2f} s after SIGTERM")


async def test_closing_stops_every_run_in_flight_and_nothing_writes_the_sidecar_after(
        jp_fetch, jp_serverapp, jp_root_dir, registry, no_llm) -> None:
    """A second run queued behind the first (an answer given while the co-pilot still ran):
    closing stops both, and neither writes the sidecar once it is closed."""
    from test_server_sessions import kernel_client, start_notebook_kernel

    kernel_id = await start_notebook_kernel(jp_fetch, "two.ipynb")
    client = kernel_client(jp_serverapp, kernel_id, "panel")
    await client.wait_for_ready(timeout=60)
    await client.execute_interactive(LEAKY_FRAME, timeout=60)
    client.execute("import time\ntime.sleep(600)")  # the first run's diagnosis waits in the kernel
    hosted = await registry.open("two.ipynb", frame="df", target="churned")
    first = hosted.task
    hosted.resume()
    second = hosted.task
    await asyncio.sleep(1.0)
    assert not first.done() and not second.done()
    assert await registry.close() == []
    assert first.done() and second.done()
    sidecar = jp_root_dir / ".two.ipynb.dcpilot.json"
    written = sidecar.read_text()
    assert json.loads(written)["state"] == "idle" and hosted.session.path is None
    with pytest.raises(RuntimeError, match="is closed"):
        hosted.resume()
    hosted.session.changed("state", state="running")  # a late event of a closed session
    assert sidecar.read_text() == written
    await jp_serverapp.kernel_manager.interrupt_kernel(kernel_id)
    client.stop_channels()
