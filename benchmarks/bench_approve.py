"""Approve → output: how long from the expert's answer to the co-pilot's cell output.

    python benchmarks/bench_approve.py --runs 9 [--json out.json]

Starts a real Jupyter server (this environment, a free port), and for each run: a notebook
kernel holding the frame of the browser test (200 rows, a leaked column), a co-pilot session
that confirms the task by policy and waits on the leakage question, and a simulated panel on
the session's real WebSocket that runs the co-pilot's cells in the kernel (a client of its
own, as the browser's). Then it POSTs "drop" and times:

- ``to_cell``: answer posted → the server asks the panel to run the cell;
- ``to_output``: answer posted → the cell's first output arrived from the kernel
  (what the browser test logs, without the page's rendering);
- ``to_done``: answer posted → the step's "done" event (checks and reports read after the cell).

Prints one line per run and the medians.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

FRAME = "\n".join([
    "import numpy as np, pandas as pd",
    "rng = np.random.default_rng(0)",
    "y = rng.integers(0, 2, 200)",
    'df = pd.DataFrame({"a": rng.normal(size=200), "b": rng.normal(size=200),',
    '                   "leak": y + rng.normal(scale=0.05, size=200), "y": y})',
])


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """A Jupyter server in a child process, with this extension and a token."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.port = free_port()
        self.token = uuid.uuid4().hex
        self.url = f"http://127.0.0.1:{self.port}"
        env = dict(os.environ, JUPYTER_RUNTIME_DIR=str(root / ".runtime"))
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "jupyter_server", f"--port={self.port}", "--no-browser", "--allow-root",
             f"--ServerApp.token={self.token}", f"--ServerApp.root_dir={root}",
             "--ServerApp.jpserver_extensions={'jupyter_dcpilot': True}"],
            stdout=subprocess.DEVNULL, stderr=open(root / "server.log", "w"), env=env)

    async def request(self, method: str, path: str, body: Any = None) -> Any:
        from tornado.httpclient import AsyncHTTPClient

        response = await AsyncHTTPClient().fetch(
            f"{self.url}/{path}", method=method, headers={"Authorization": f"token {self.token}"},
            body=json.dumps(body) if body is not None else None, request_timeout=600)
        return json.loads(response.body) if response.body else None

    async def wait_ready(self, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                await self.request("GET", "dcpilot/api/status")
                return
            except Exception:
                await asyncio.sleep(0.3)
        raise RuntimeError(f"the server did not start; see {self.root / 'server.log'}")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def kernel_client(server: Server, kernel_id: str) -> Any:
    from jupyter_client.asynchronous.client import AsyncKernelClient

    client = AsyncKernelClient(connection_file=str(server.root / ".runtime" / f"kernel-{kernel_id}.json"))
    client.load_connection_file()
    client.session.session = uuid.uuid4().hex  # its own session id, as the browser has
    client.start_channels(hb=False)
    return client


async def one_run(server: Server, i: int) -> dict[str, float]:
    from tornado.httpclient import HTTPRequest
    from tornado.websocket import websocket_connect

    path = f"approve{i}.ipynb"
    (server.root / path).write_text(json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    nb_session = await server.request("POST", "api/sessions", {"path": path, "type": "notebook", "name": path,
                                                             "kernel": {"name": "python3"}})
    client = kernel_client(server, nb_session["kernel"]["id"])
    await client.kernel_info(reply=True, timeout=120)  # ready (no heartbeat: no kernel manager here)
    await client.execute_interactive(FRAME, timeout=120)
    created = await server.request("POST", "dcpilot/api/sessions", {
        "path": path, "frame": "df", "target": "y", "approve": {"task": "recommended", "*": "ask"}})
    sid = created["id"]
    ws = await websocket_connect(HTTPRequest(f"ws://127.0.0.1:{server.port}/dcpilot/api/sessions/{sid}/events",
                                             headers={"Authorization": f"token {server.token}"}))
    stamps: dict[str, float] = {}
    leak: dict[str, Any] = {}
    blocked = asyncio.Event()
    done = asyncio.Event()

    async def run_cell(message: dict[str, Any]) -> dict[str, Any]:
        outputs: list[dict[str, Any]] = []

        def hook(msg: dict[str, Any]) -> None:
            if msg["msg_type"] in ("stream", "display_data", "execute_result", "error"):
                stamps.setdefault("output", time.perf_counter())
                outputs.append({"output_type": msg["msg_type"], **msg["content"]})

        reply = await client.execute_interactive(message["source"], output_hook=hook, timeout=600)
        error = None if reply["content"]["status"] == "ok" else {
            k: reply["content"].get(k) for k in ("ename", "evalue", "traceback")}
        return {"type": "cell_result", "cell_id": uuid.uuid4().hex, "outputs": [], "error": error}

    async def serve() -> None:
        while True:
            text = await ws.read_message()
            if text is None:
                return
            message = json.loads(text)
            kind = message.get("type")
            if kind == "awaiting_decision" and message["decision"]["gate"] == "leakage":
                leak.update(message["decision"])
                blocked.set()
            elif kind == "step" and leak and message.get("step") == leak["step_id"] and message.get("status") == "done":
                stamps.setdefault("done", time.perf_counter())
                done.set()
            if kind == "run_cell":
                stamps.setdefault("cell", time.perf_counter())
                answer = await run_cell(message)
            elif kind == "insert_markdown":
                answer = {"type": "cell_inserted", "cell_id": uuid.uuid4().hex}
            elif kind == "delete_cells":
                answer = {"type": "cells_deleted"}
            else:
                continue
            await ws.write_message(json.dumps({**answer, "request_id": message["request_id"]}))

    serving = asyncio.create_task(serve())
    try:
        await asyncio.wait_for(blocked.wait(), 300)
        await asyncio.sleep(1.0)  # let the session settle, as a person reads the card
        t0 = time.perf_counter()
        await server.request("POST", f"dcpilot/api/sessions/{sid}/decisions/{leak['id']}", {"choice": "drop"})
        await asyncio.wait_for(done.wait(), 300)
        return {k: round(stamps[k] - t0, 3) for k in ("cell", "output", "done")}
    finally:
        serving.cancel()
        ws.close()
        client.stop_channels()
        await server.request("DELETE", f"api/sessions/{nb_session['id']}")


async def main_async(runs: int) -> list[dict[str, float]]:
    with tempfile.TemporaryDirectory(prefix="dcpilot-approve-") as tmp:
        server = Server(Path(tmp))
        try:
            await server.wait_ready()
            results = []
            for i in range(runs):
                result = await one_run(server, i)
                print(f"run {i + 1}: answer -> cell request {result['cell'] * 1000:.0f} ms, "
                      f"-> output {result['output'] * 1000:.0f} ms, -> step done {result['done'] * 1000:.0f} ms",
                      flush=True)
                results.append(result)
            return results
        finally:
            server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--json", help="also write the runs and medians here")
    args = parser.parse_args()
    results = asyncio.run(main_async(args.runs))
    medians = {k: statistics.median(r[k] for r in results) for k in ("cell", "output", "done")}
    print(f"median over {len(results)} runs: answer -> cell request {medians['cell'] * 1000:.0f} ms, "
          f"-> output {medians['output'] * 1000:.0f} ms, -> step done {medians['done'] * 1000:.0f} ms "
          f"(load average {os.getloadavg()[0]:.1f})")
    if args.json:
        Path(args.json).write_text(json.dumps({"runs": results, "median_s": medians,
                                               "load_average": os.getloadavg()[0]}, indent=1))


if __name__ == "__main__":
    main()
