"""A kernel that dies under a visible co-pilot cell, on a real server and kernel: the panel
never answers that cell, yet the step fails within seconds (not after the 600 s host timeout),
is not retried, and the session stays usable: undo brings the variables back from the
checkpoint spilled to disk, and the run carries on in the restarted kernel."""

from __future__ import annotations

import asyncio
import json
import os
import signal

import pytest
from test_server_sessions import (
    LEAKY_FRAME,
    Frontend,
    get_session,
    kernel_client,
    post,
    start_notebook_kernel,
    wait_for,
)

from jupyter_dcpilot.kernel_bridge import KernelBridge, KernelDiedError, KernelWatch
from jupyter_dcpilot.server_sessions import BrowserNotebookHost, HostError

pytestmark = pytest.mark.timeout(180)
API = ("dcpilot", "api", "sessions")
NO_QUESTIONS = {"*": "recommended", "label_issues": "keep"}


class HangingFrontend(Frontend):
    """A panel that starts its ``hang_at``-th co-pilot cell in the kernel (behind a long sleep)
    and never answers it; every other request is answered as the real panel would."""

    def __init__(self, ws, client, hang_at: int) -> None:
        super().__init__(ws, client)
        self.hang_at = hang_at
        self.hung: dict | None = None

    async def respond(self, message: dict) -> dict | None:
        if message.get("type") == "run_cell" and len(self.requests("run_cell")) == self.hang_at:
            self.hung = message
            self.client.execute("import time\ntime.sleep(600)\n" + message["source"])
            return None  # the cell runs; its answer never comes
        return await super().respond(message)


async def kernel_json(client, expression: str):
    printed: list[str] = []
    await client.execute_interactive(f"import json as _j; print(_j.dumps({expression}))", timeout=120,
                                     output_hook=lambda m: printed.append(m["content"].get("text", "")))
    return json.loads("".join(printed).strip().splitlines()[-1])


@pytest.mark.slow
async def test_a_kernel_killed_mid_cell_fails_the_step_at_once_and_undo_restores_from_disk(
        jp_fetch, jp_ws_fetch, jp_serverapp, registry, no_llm, monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # the kernel's default spill folder
    monkeypatch.delenv("KERNEL_TOOLS_SPILL_DIR", raising=False)
    kernel_id = await start_notebook_kernel(jp_fetch, "dies.ipynb")
    client = kernel_client(jp_serverapp, kernel_id, "panel")
    # the test looks into the kernel on a client of its own: two callers of execute_interactive
    # on one client take each other's replies once the resumed run sends cells again
    probe = kernel_client(jp_serverapp, kernel_id, "probe")
    await client.wait_for_ready(timeout=60)
    await client.execute_interactive(LEAKY_FRAME, timeout=60)
    created = await post(jp_fetch, *API, body={"path": "dies.ipynb", "frame": "df", "target": "churned",
                                               "approve": NO_QUESTIONS})
    sid = created["id"]
    ws = await jp_ws_fetch(*API, sid, "events")
    frontend = HangingFrontend(ws, client, hang_at=2)
    serving = asyncio.create_task(frontend.serve())
    loop = asyncio.get_running_loop()
    try:
        async def hung_step():
            if frontend.hung is None:
                return None
            state = await get_session(jp_fetch, sid)
            step_id = frontend.hung["metadata"]["dcpilot"]["step"]
            step = next(s for s in state["plan"] if s["id"] == step_id)
            return step if step["status"] == "running" else None

        step = await wait_for(hung_step, "the second co-pilot cell to start", timeout=120)
        await asyncio.sleep(1.0)  # the cell is inside time.sleep
        manager = jp_serverapp.kernel_manager.get_kernel(kernel_id)
        spill_folder = tmp_path / "cache" / "kernel_tools" / "checkpoints" / f"kernel-{kernel_id}"
        assert f"{step['checkpoint_id']}.pkl" in os.listdir(spill_folder)
        os.kill(manager.provisioner.pid, signal.SIGKILL)  # as the OOM killer would
        killed = loop.time()

        async def failed():
            state = await get_session(jp_fetch, sid)
            now = next(s for s in state["plan"] if s["id"] == step["id"])
            return (state, now) if now["status"] == "failed" and state["state"] == "idle" else None

        state, dead = await wait_for(failed, "the step to fail", timeout=60)
        elapsed = loop.time() - killed
        assert elapsed < 10, f"noticed after {elapsed:.1f} s"
        assert "the kernel died" in dead["error"] or "the kernel was restarted" in dead["error"]
        assert f"undo to the checkpoint before {step['id']}" in dead["error"]
        assert any("the kernel" in w and step["id"] in w for w in state["warnings"])
        assert [r for r in frontend.requests("run_cell")
                if r["metadata"]["dcpilot"]["step"] == step["id"]] == [frontend.hung]  # never retried
        # the half-made cell is deleted from the notebook, and the plan says what to do next
        assert any(frontend.hung["cell_id"] in r["cell_ids"] for r in frontend.requests("delete_cells"))
        assert "its half-made cell was removed from the notebook" in dead["note"]
        assert "“Undo to here” on this step" in dead["note"] and "then Resume" in dead["note"]

        # the server restarts the dead kernel by itself: empty, but the checkpoint is on disk
        await wait_for(lambda: manager.is_alive(), "the kernel to restart", timeout=60)
        await client.wait_for_ready(timeout=60)
        await probe.wait_for_ready(timeout=60)
        assert await kernel_json(probe, "'df' in globals()") is False
        await post(jp_fetch, *API, sid, "undo", body={"checkpoint": step["checkpoint_id"]})
        assert await kernel_json(probe, "[len(df), 'churned' in df.columns]") == [200, True]

        async def ran_again():  # undo resumes: the step runs again in the new kernel (imports included)
            state = await get_session(jp_fetch, sid)
            again = [s for s in state["plan"] if s["episode"] == step["episode"] and s["status"] == "done"]
            return state if again else None

        await wait_for(ran_again, "the undone step to run again", timeout=120)
        after = frontend.requests("run_cell")[frontend.requests("run_cell").index(frontend.hung) + 1:]
        # the new kernel lost the first cell's imports: the next cell brings them back
        assert after and after[0]["source"].count("import kernel_tools as kt") == 1
        print(f"noticed in {elapsed:.1f} s: {dead['error']}")
    finally:
        serving.cancel()
        ws.close()
        await registry.close()
        client.stop_channels()
        probe.stop_channels()


@pytest.mark.slow
async def test_a_cell_answered_after_a_restart_is_not_taken_as_its_result(jp_fetch, jp_serverapp) -> None:
    """A kernel restarted under the cell (the real panel then answers with empty outputs): the
    answer arrives, but the cell did not run to its end, so the step must fail, not succeed."""
    await start_notebook_kernel(jp_fetch, "restarted.ipynb")
    bridge = KernelBridge(jp_serverapp.session_manager, jp_serverapp.kernel_manager)
    host = BrowserNotebookHost(30.0, watch=KernelWatch(bridge, lambda: "restarted.ipynb"), poll=60.0)
    kernel_id = await bridge.kernel_id_for("restarted.ipynb")

    async def panel(message: dict) -> None:
        await jp_serverapp.kernel_manager.restart_kernel(kernel_id)
        host.answer({"type": "cell_result", "request_id": message["request_id"], "cell_id": "c1",
                     "outputs": [], "error": None})

    host.attach(lambda message: asyncio.ensure_future(panel(message)))
    with pytest.raises(KernelDiedError, match="the kernel was restarted while step s9 ran"):
        await host.run_cell("x = 1", {"dcpilot": {"step": "s9"}})


class DyingWatch:
    """A kernel watch whose kernel dies when the test says so."""

    def __init__(self) -> None:
        self.dead = False

    async def start(self) -> str:
        return "run"

    async def ended(self, run: str) -> str | None:
        return "died" if self.dead else None


async def test_a_half_made_cell_left_with_no_panel_goes_when_a_panel_connects() -> None:
    """The panel took the cell and went away; then the kernel died. Nobody can delete the cell
    now: the step fails at once all the same, and the next panel to connect deletes it."""
    watch = DyingWatch()
    host = BrowserNotebookHost(30.0, watch=watch, poll=0.05, cleanup_timeout=0.5)
    taken: list[dict] = []
    leave = host.attach(taken.append)
    running = asyncio.create_task(host.run_cell("x = 1", {"dcpilot": {"step": "s4"}}))
    await asyncio.sleep(0.2)
    leave()
    watch.dead = True
    with pytest.raises(KernelDiedError, match="the kernel died while step s4 ran") as info:
        await running
    cell_id = taken[0]["cell_id"]
    assert (info.value.step_id, info.value.cell_id, info.value.cell_removed) == ("s4", cell_id, False)
    assert host.orphans == [cell_id]

    later: list[dict] = []

    def panel(message: dict) -> None:
        later.append(message)
        host.answer({"type": "cells_deleted", "request_id": message["request_id"]})

    host.attach(panel)
    await asyncio.sleep(0.1)
    assert [(m["type"], m["cell_ids"]) for m in later] == [("delete_cells", [cell_id])]
    assert host.orphans == []


async def test_a_half_made_cell_is_deleted_at_once_while_the_panel_is_there() -> None:
    watch = DyingWatch()
    host = BrowserNotebookHost(30.0, watch=watch, poll=0.05)
    seen: list[dict] = []

    def panel(message: dict) -> None:  # runs nothing (its kernel is about to die), deletes at once
        seen.append(message)
        if message["type"] == "delete_cells":
            host.answer({"type": "cells_deleted", "request_id": message["request_id"]})

    host.attach(panel)
    running = asyncio.create_task(host.run_cell("x = 1", {"dcpilot": {"step": "s2"}}))
    await asyncio.sleep(0.1)
    watch.dead = True
    with pytest.raises(KernelDiedError) as info:
        await running
    assert info.value.cell_removed is True and host.orphans == []
    assert [m["type"] for m in seen] == ["run_cell", "delete_cells"]
    assert seen[1]["cell_ids"] == [seen[0]["cell_id"]]


async def test_a_panel_that_never_answers_a_living_kernel_still_times_out(jp_fetch, jp_serverapp) -> None:
    await start_notebook_kernel(jp_fetch, "alive.ipynb")
    bridge = KernelBridge(jp_serverapp.session_manager, jp_serverapp.kernel_manager)
    host = BrowserNotebookHost(1.5, watch=KernelWatch(bridge, lambda: "alive.ipynb"), poll=0.2)
    host.attach(lambda message: None)
    with pytest.raises(HostError, match="did not answer run_cell"):
        await host.run_cell("x = 1", {"dcpilot": {"step": "s1"}})


class FakeManager:
    def __init__(self) -> None:
        self.alive = True
        self.ready = object()

    async def is_alive(self) -> bool:
        return self.alive


class FakeKernels:
    def __init__(self, managers: dict) -> None:
        self.managers = managers

    def get_kernel(self, kernel_id: str):
        return self.managers[kernel_id]


class FakeSessions:
    async def list_sessions(self):
        return [{"path": "nb.ipynb", "kernel": {"id": "k1"}}]


async def test_kernel_ended_tells_each_way_a_kernel_run_ends() -> None:
    first = FakeManager()
    kernels = FakeKernels({"k1": first})
    bridge = KernelBridge(FakeSessions(), kernels)
    run = await bridge.kernel_run("nb.ipynb")
    assert await bridge.kernel_ended(run) is None
    first.ready = object()  # the server restarted it (same id, same manager)
    assert await bridge.kernel_ended(run) == "was restarted"
    run = await bridge.kernel_run("nb.ipynb")
    first.alive = False
    assert await bridge.kernel_ended(run) == "died"
    kernels.managers["k1"] = FakeManager()
    assert await bridge.kernel_ended(run) == "was replaced"
    del kernels.managers["k1"]
    assert await bridge.kernel_ended(run) == "was shut down"
