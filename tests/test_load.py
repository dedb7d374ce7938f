"""Load: 20 notebooks, each with its own real kernel and co-pilot session, on one Jupyter server.

Every session diagnoses its own (distinct) frame, blocks on its leakage question, streams its
events to its own panel WebSocket, and after the expert's answer runs its cell in its own
kernel only. Nothing of one session shows up in another. Timings are printed (pytest -s) and
reported in docs/reliability.md. ``DCPILOT_LOAD_SESSIONS`` changes the number of notebooks.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

import pytest
import test_server_sessions as tss

N = int(os.environ.get("DCPILOT_LOAD_SESSIONS", "20"))
# the task by policy, every data gate asked; after its leakage step a session waits on its panel
# (see Panel): without that, a session whose next steps ask nothing (a split has no gate, and
# whether label issues are found depends on each frame) fit its models while the others waited
POLICY = {"task": "recommended"}
pytestmark = [pytest.mark.slow, pytest.mark.serial, pytest.mark.timeout(900)]


@pytest.fixture
def jp_server_config(jp_server_config):
    """Kernels on Unix sockets, not TCP ports: twenty kernels starting at once over TCP, a port
    given to one could be taken before it bound (ZMQError: Address already in use) and the test
    then waited out its timeout. Each kernel's sockets are named after its connection file."""
    jp_server_config.setdefault("KernelManager", {})["transport"] = "ipc"
    return jp_server_config


@pytest.fixture
def jp_runtime_dir():
    """A short runtime folder: a Unix socket's path holds at most 107 characters, and the kernels'
    sockets are '<runtime>/kernel-<uuid>-ipc-<n>'."""
    with tempfile.TemporaryDirectory(prefix="dcl-", dir="/tmp") as folder:
        yield Path(folder)


def frame_code(i: int) -> str:
    """The leaky churn frame, with a row count and a column of its own per notebook."""
    return tss.LEAKY_FRAME.replace("n = 200", f"n = {120 + i}") + f"df['own_{i}'] = np.arange(len(df)) % 7\n"


class Panel(tss.Frontend):
    """A panel that also timestamps every event it receives. Once ``stop_after`` (a step id) is
    set, it runs that step's cell and holds every later one: its session waits there instead of
    going on to split and fit models, which in 20 kernels at once on 2 cores once stretched the
    test from about a minute to 11 minutes (652 s)."""

    def __init__(self, ws, client) -> None:
        super().__init__(ws, client)
        self.stamps: list[tuple[float, dict]] = []
        self.stop_after: str | None = None
        self.held: list[dict] = []

    async def respond(self, message: dict) -> dict | None:
        step = ((message.get("metadata") or {}).get("dcpilot") or {}).get("step")
        if message.get("type") == "run_cell" and self.stop_after is not None and step != self.stop_after:
            self.held.append(message)
            return None
        return await super().respond(message)

    async def serve(self) -> None:
        original = self.ws.read_message

        async def read():
            message = await original()
            if message is not None:
                self.stamps.append((time.monotonic(), json.loads(message)))
            return message

        self.ws.read_message = read
        await super().serve()


async def test_twenty_notebooks_with_sessions_at_once(jp_fetch, jp_ws_fetch, jp_serverapp, capsys) -> None:
    registry = jp_serverapp.web_app.settings["dcpilot_sessions"]
    clients, sockets, tasks, panels = [], [], [], []
    timings: dict[str, float] = {}
    try:
        t0 = time.monotonic()
        paths = [f"nb{i:02d}.ipynb" for i in range(N)]
        kernel_ids = await asyncio.gather(*(tss.start_notebook_kernel(jp_fetch, p) for p in paths))
        assert {jp_serverapp.kernel_manager.get_kernel(k).transport for k in kernel_ids} == {"ipc"}
        for kernel_id in kernel_ids:
            clients.append(tss.kernel_client(jp_serverapp, kernel_id, "panel"))
        await asyncio.gather(*(c.wait_for_ready(timeout=300) for c in clients))
        timings["kernels_started_s"] = time.monotonic() - t0
        await asyncio.gather(*(c.execute_interactive(frame_code(i), timeout=300) for i, c in enumerate(clients)))
        timings["frames_built_s"] = time.monotonic() - t0

        t1 = time.monotonic()
        created = await asyncio.gather(*(tss.post(jp_fetch, "dcpilot", "api", "sessions",
                                                  body={"path": p, "frame": "df", "target": "churned",
                                                        "approve": POLICY}) for p in paths))
        ids = [c["id"] for c in created]
        assert len(set(ids)) == N
        for sid, client in zip(ids, clients):
            ws = await jp_ws_fetch("dcpilot", "api", "sessions", sid, "events")
            sockets.append(ws)
            panel = Panel(ws, client)
            panels.append(panel)
            tasks.append(asyncio.create_task(panel.serve()))

        async def all_blocked():
            states = await asyncio.gather(*(tss.get_session(jp_fetch, sid) for sid in ids))
            waiting = [next((d for d in s["decisions"] if d["gate"] == "leakage" and d["choice"] is None), None)
                       for s in states]
            failed = [s["id"] for s in states if s["state"] == "failed"]
            assert not failed, f"sessions failed: {failed}"
            return (states, waiting) if all(waiting) and all(s["state"] == "blocked" for s in states) else None

        states, leaks = await tss.wait_for(all_blocked, f"{N} sessions to block on their leakage question", timeout=600)
        timings["all_blocked_s"] = time.monotonic() - t1

        # no state bleeds between sessions: each saw its own frame and only its own ids
        for i, (state, leak, panel) in enumerate(zip(states, leaks, panels)):
            assert state["path"] == paths[i] and state["diagnosis"]["shape"] == [120 + i, 5]
            assert f"own_{i}" in state["variables"]["columns"]
            assert not any(f"own_{j}" in state["variables"]["columns"] for j in range(N) if j != i)
            assert leak["columns"] == ["complained"]
            others = {d["id"] for j, s in enumerate(states) if j != i for d in s["decisions"]}
            seen = json.dumps([m for _, m in panel.stamps])
            assert not any(other in seen for other in others)
            assert any(m.get("type") == "awaiting_decision" and m["decision"]["id"] == leak["id"]
                       for _, m in panel.stamps)

        # the experts answer everywhere at once; each panel is told its step finished
        for panel, leak in zip(panels, leaks):
            panel.stop_after = leak["step_id"]
        t2 = time.monotonic()
        decided_at = {}
        for sid, leak in zip(ids, leaks):
            decided_at[sid] = time.monotonic()
            await tss.post(jp_fetch, "dcpilot", "api", "sessions", sid, "decisions", leak["id"], body={"choice": "drop"})

        def step_done_at(panel, step_id):
            return next((t for t, m in panel.stamps if m.get("type") == "step" and m.get("step") == step_id
                         and m.get("status") == "done"), None)

        async def all_dropped():
            return all(step_done_at(p, leak["step_id"]) for p, leak in zip(panels, leaks)) or None

        await tss.wait_for(all_dropped, "every leakage step to finish", timeout=600)
        timings["all_decided_steps_done_s"] = time.monotonic() - t2
        latencies = [step_done_at(p, leak["step_id"]) - decided_at[sid] for p, leak, sid in zip(panels, leaks, ids)]
        timings["decision_to_done_event_median_s"] = statistics.median(latencies)
        timings["decision_to_done_event_max_s"] = max(latencies)
        timings["events_per_panel_min"] = min(len(p.stamps) for p in panels)

        # no kernel went on past its leakage step: the panels held the next cells
        timings["cells_held"] = sum(len(p.held) for p in panels)
        # stop the panels and the sessions, then look at each kernel on a client of its own:
        # each was changed by its own session only
        for task in tasks:
            task.cancel()
        t3 = time.monotonic()
        await registry.close()
        timings["registry_closed_s"] = time.monotonic() - t3
        for client in clients:
            client.stop_channels()
        t4 = time.monotonic()
        clients = [tss.kernel_client(jp_serverapp, k, "checker") for k in kernel_ids]
        for i, client in enumerate(clients):
            printed: list[str] = []
            await client.execute_interactive("print(list(df.columns), len(df))", timeout=60,
                                             output_hook=lambda m, printed=printed: printed.append(m["content"].get("text", "")))
            out = "".join(printed)
            assert "complained" not in out and f"own_{i}" in out
            assert not any(f"own_{j}'" in out for j in range(N) if j != i)
            cells = [r for r in panels[i].requests("run_cell")]
            assert all(r["metadata"]["dcpilot"]["step"] in {s["id"] for s in states[i]["plan"]} | {leaks[i]["step_id"]}
                       for r in cells)
        timings["kernels_checked_s"] = time.monotonic() - t4
        timings["total_s"] = time.monotonic() - t0
    finally:
        for task in tasks:
            task.cancel()
        for ws in sockets:
            ws.close()
        await registry.close()
        for client in clients:
            client.stop_channels()
    with capsys.disabled():
        print(f"\nload with {N} notebooks: " + json.dumps({k: round(v, 2) for k, v in timings.items()}))
