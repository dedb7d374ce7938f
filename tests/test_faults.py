"""Fault tolerance: the kernel interrupted or killed mid-step, the Jupyter server restarted
mid-session, the LLM failing in ways the planner tests do not already cover.

Real kernels throughout (HeadlessHost, or the Jupyter server's own via pytest-jupyter); the
LLM is the real ``anthropic`` SDK against the fake Messages API on 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import json
import socket
from pathlib import Path

import pytest
import test_engine_claude as tec
import test_server_sessions as tss
import tornado.httpclient
from copilot_runs import kernel_value, start_host
from fake_anthropic import FakeAnthropic, status, text, tool_use

from jupyter_dcpilot.engine.coordinator import ApprovalPolicy, Coordinator
from jupyter_dcpilot.engine.hosts import KernelDiedError
from jupyter_dcpilot.engine.session import Session, Step, sidecar_path
from jupyter_dcpilot.engine.task import Given, Task
from jupyter_dcpilot.server_sessions import SessionRegistry

pytestmark = pytest.mark.timeout(150)

FRAME = """
import numpy as np, pandas as pd
import kernel_tools as kt
rng = np.random.default_rng(0)
n = 150
df = pd.DataFrame({"age": rng.normal(45, 12, n).round(), "tenure": rng.integers(0, 20, n),
                   "churned": rng.integers(0, 2, n)})
"""


def with_custom_step(session: Session, code: str) -> Step:
    """A custom (expert-approved) step at the front of the plan, as a free-text instruction makes."""
    step = Step(id=session.new_id("s"), episode="custom", title="Custom step", gate="custom_code",
                code=code, reason="the expert asked", params={"changes": ["df"]})
    session.plan.append(step)
    return step


async def approve_custom_and_run(coord: Coordinator, session: Session, step: Step) -> asyncio.Task:
    assert await coord.run_until_blocked() == "blocked"
    decision = session.decision(step.decision_id)
    assert decision.gate == "custom_code"
    session.decide(decision.id, "run", "checked it")
    task = asyncio.ensure_future(coord.run_until_blocked())
    for _ in range(300):  # until the cell is running in the kernel
        if step.status == "running" and step.checkpoint_id:
            break
        await asyncio.sleep(0.05)
    await asyncio.sleep(1.0)  # the cell has started: `df` is already rebound
    return task


def coordinator(tmp_path, host) -> tuple[Coordinator, Session]:
    notebook = tmp_path / "nb.ipynb"
    session = Session(notebook=str(notebook), path=str(sidecar_path(notebook)), frame="df",
                      task=Task(given=Given(target="churned", kind="classification")))
    session.variables["imports"] = True
    return Coordinator(session, host, host, policy=ApprovalPolicy(mode="ask")), session


@pytest.mark.slow
async def test_kernel_interrupted_mid_step_fails_the_step_and_keeps_the_session(tmp_path):
    host = await start_host(tmp_path, FRAME)
    try:
        coord, session = coordinator(tmp_path, host)
        step = with_custom_step(session, "df = df.drop(columns=['age'])\nimport time\ntime.sleep(60)")
        task = await approve_custom_and_run(coord, session, step)
        await host._km.interrupt_kernel()
        state = await asyncio.wait_for(task, 30)
        columns = await kernel_value(host, "list(df.columns)")
        # the session is usable: run again, it carries on to the next question
        again = await coord.run_until_blocked()
    finally:
        await host.stop()
    assert state in ("idle", "blocked", "failed")
    assert step.status == "failed" and "interrupt" in (step.error or step.note).lower()
    assert step.attempts <= 1  # an interrupt is not retried
    assert columns == ["age", "tenure", "churned"]  # the checkpoint was restored
    assert again == "blocked" and session.open_decisions()[0].gate == "task"
    reloaded = Session.load(session.path)
    assert reloaded.step(step.id).status == "failed"


@pytest.mark.slow
async def test_kernel_death_mid_step_fails_the_step_and_spilled_checkpoints_restore_after_restart(tmp_path, monkeypatch):
    # checkpoints spill by default, to a per-kernel folder of the user's cache (the kernel inherits this)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("KERNEL_TOOLS_SPILL_DIR", raising=False)
    host = await start_host(tmp_path, FRAME)  # its reply timeout stays 600 s: the death is noticed, not waited out
    spill = tmp_path / "cache" / "kernel_tools" / "checkpoints" / Path(host._km.connection_file).stem
    try:
        coord, session = coordinator(tmp_path, host)
        step = with_custom_step(session, "df = df.drop(columns=['age'])\nimport os, time\ntime.sleep(1.5)\nos._exit(1)")
        task = await approve_custom_and_run(coord, session, step)
        with pytest.raises(KernelDiedError, match=f"the kernel died while step {step.id} ran"):
            await asyncio.wait_for(task, 60)
        assert session.state == "failed" and step.status == "failed"
        assert not await host._km.is_alive()
        spilled = sorted(p.name for p in spill.iterdir())
        assert f"{step.checkpoint_id}.pkl" in spilled
        # the user restarts the kernel: variables are gone, the checkpoint on disk brings them back
        await host._km.restart_kernel(now=True)
        await host._kc.wait_for_ready(timeout=60)
        assert await kernel_value(host, "'df' in globals()") is False
        await coord.undo(step.checkpoint_id)
        columns = await kernel_value(host, "list(df.columns)")
        rows = await kernel_value(host, "len(df)")
        resumed = await coord.run_until_blocked()
    finally:
        await host.stop()
    assert columns == ["age", "tenure", "churned"] and rows == 150
    reloaded = Session.load(session.path)  # the sidecar stayed consistent throughout
    # undone: its decision is asked again, the step is never re-run silently
    assert reloaded.step(step.id).status == "awaiting_decision"
    assert reloaded.decision(step.decision_id).choice is None
    assert resumed == "blocked" and {d.gate for d in session.open_decisions()} <= {"custom_code", "task"}


async def test_a_probe_on_a_dead_kernel_fails_at_once_not_after_the_reply_timeout(tmp_path):
    host = await start_host(tmp_path, FRAME)
    try:
        with pytest.raises(KernelDiedError, match="the kernel died while the co-pilot waited"):
            await asyncio.wait_for(host.evaluate("__import__('os')._exit(1)"), 60)  # timeout: 600 s
        with pytest.raises(KernelDiedError):  # and every later one, until it is restarted
            await asyncio.wait_for(host.evaluate("1"), 60)
    finally:
        await host.stop()


@pytest.mark.slow
async def test_server_restart_mid_session_reloads_the_sidecar_and_carries_on(jp_fetch, jp_ws_fetch, jp_serverapp):
    settings = jp_serverapp.web_app.settings
    kernel_id = await tss.start_notebook_kernel(jp_fetch, "churn.ipynb")
    client = tss.kernel_client(jp_serverapp, kernel_id, "panel")
    tasks, sockets = [], []
    checker = None
    try:
        await client.wait_for_ready(timeout=60)
        await client.execute_interactive(tss.LEAKY_FRAME, timeout=60)
        body = {"path": "churn.ipynb", "frame": "df", "target": "churned", "approve": tss.ONLY_LEAKAGE_ASKS}
        first = await tss.post(jp_fetch, "dcpilot", "api", "sessions", body=body)
        ws = await jp_ws_fetch("dcpilot", "api", "sessions", first["id"], "events")
        sockets.append(ws)
        tasks.append(asyncio.create_task(tss.Frontend(ws, client).serve()))

        async def leak_waits(sid):
            state = await tss.get_session(jp_fetch, sid)
            open_ = [d for d in state["decisions"] if d["gate"] == "leakage" and d["choice"] is None]
            return (state, open_[0]) if open_ and state["state"] == "blocked" else None

        before, leak = await tss.wait_for(lambda: leak_waits(first["id"]), "the leakage decision", timeout=120)
        # the server goes down (its shutdown saves and closes every session) and comes back
        old = settings["dcpilot_sessions"]
        await old.close()
        ws.close()
        settings["dcpilot_sessions"] = SessionRegistry(old.bridge, str(old.root), old.host_timeout)
        with pytest.raises(tornado.httpclient.HTTPClientError) as gone:
            await tss.get_session(jp_fetch, first["id"])  # the old id died with the old server
        assert gone.value.code == 404
        again = await tss.post(jp_fetch, "dcpilot", "api", "sessions", body=body)
        assert again["id"] != first["id"]
        ws2 = await jp_ws_fetch("dcpilot", "api", "sessions", again["id"], "events")
        sockets.append(ws2)
        frontend = tss.Frontend(ws2, client)
        tasks.append(asyncio.create_task(frontend.serve()))
        after, leak_again = await tss.wait_for(lambda: leak_waits(again["id"]), "the reloaded decision", timeout=60)
        assert leak_again["id"] == leak["id"]  # the same question, not a new one
        assert [d["id"] for d in after["decisions"]] == [d["id"] for d in before["decisions"]]
        assert [(s["id"], s["status"]) for s in after["plan"] if s["status"] == "done"] == \
               [(s["id"], s["status"]) for s in before["plan"] if s["status"] == "done"]
        await tss.post(jp_fetch, "dcpilot", "api", "sessions", again["id"], "decisions", leak["id"],
                       body={"choice": "drop"})

        # a client of its own: sharing the panel's would swallow its cells' iopub messages
        checker = tss.kernel_client(jp_serverapp, kernel_id, "checker")
        await checker.wait_for_ready(timeout=60)

        async def dropped():
            printed: list[str] = []
            await checker.execute_interactive("print(list(df.columns))", timeout=30,
                                             output_hook=lambda m: printed.append(m["content"].get("text", "")))
            return "complained" not in "".join(printed)

        await tss.wait_for(dropped, "the leakage step to run after the restart")
    finally:
        for task in tasks:
            task.cancel()
        for ws in sockets:
            ws.close()
        await settings["dcpilot_sessions"].close()
        client.stop_channels()
        if checker is not None:
            checker.stop_channels()


# -- LLM faults beyond test_engine_claude (the SDK's retries, bounded corrections, then the rule planner,
# visibly) ------------------------------------------------------------------------------------------


def fallback_note(session: Session) -> str:
    return next(w for w in session.warnings if "Claude planner unavailable" in w)


async def test_malformed_answers_forever_are_bounded_then_fall_back(tmp_path):
    with FakeAnthropic(respond=lambda body: text("I'd rather chat.")) as fake:
        coord, kernel, notebook, session = tec.setup(tmp_path, fake.url, retries=2, corrections=2)
        assert await coord.run_until_blocked() == "finished"
        calls = len(fake.requests)
    assert calls == 3  # 1 + 2 corrections, then never again this run
    assert "malformed: no tool call in the answer" in fallback_note(session)
    assert any(s.episode == "remove_leakage" and s.status == "done" for s in session.plan)


async def test_unreachable_api_falls_back_after_bounded_retries(tmp_path):
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    coord, kernel, notebook, session = tec.setup(tmp_path, f"http://127.0.0.1:{port}", retries=1, timeout=2)
    assert await coord.run_until_blocked() == "finished"
    assert "APIConnectionError after 1 retries" in fallback_note(session)
    assert len(session.llm_payloads) == 1  # one call (the SDK retried it), in the audit log


async def test_a_client_error_is_not_retried(tmp_path):
    with FakeAnthropic([status(400)]) as fake:
        coord, kernel, notebook, session = tec.setup(tmp_path, fake.url, retries=3)
        assert await coord.run_until_blocked() == "finished"
        assert len(fake.requests) == 1
    assert "API error 400" in fallback_note(session)


async def test_the_llm_failing_mid_run_hands_over_and_the_run_stays_valid(tmp_path):
    good = [tec.plan_answer([{"episode": "confirm_task", "reason": "first"}])] * 2

    def respond(body):
        return status(503)

    with FakeAnthropic(list(good), respond=respond) as fake:
        coord, kernel, notebook, session = tec.setup(tmp_path, fake.url, retries=1)
        assert await coord.run_until_blocked() == "finished"
        calls = len(fake.requests)
    assert calls == 2 + 2  # two good plans, then one call and the SDK's retry, both failing
    assert "API error 503" in fallback_note(session)
    done = [s.episode for s in session.plan if s.status == "done"]
    assert {"confirm_task", "remove_leakage", "split", "train_evaluate"} <= set(done)
    assert "complained" not in kernel.columns
    assert any(t["kind"] == "fallback" for t in session.transcript)


async def test_a_failing_repair_call_falls_back_to_the_episode_fallback(tmp_path):
    def respond(body):
        if any(t["name"] == "repair_step" for t in body.get("tools", [])):
            return status(500)
        state = json.loads(body["messages"][0]["content"])
        return tec.plan_answer([{"episode": c["episode"], "finding_ids": c["finding_ids"], "reason": "r"}
                                for c in state["candidates"]])

    with FakeAnthropic(respond=respond) as fake:
        coord, kernel, notebook, session = tec.setup(tmp_path, fake.url, retries=1,
                                                     fail_on=("method='median'",))
        assert await coord.run_until_blocked() == "finished"
        repairs = [r for r in fake.requests if tec.tools_of(r) == ["repair_step"]]
    assert len(repairs) == 2  # one repair call + the SDK's retry, then no more LLM
    impute = next(s for s in session.plan if s.episode == "impute")
    assert impute.status == "done"  # the episode's safer parameters worked
    assert any("retrying with safer parameters" in t["text"] for t in session.transcript)
    assert "Claude planner unavailable" in fallback_note(session)


async def test_schema_invalid_tool_input_is_never_acted_on(tmp_path):
    # update_plan with an unknown episode (not in the enum) and backtrack without a boolean
    bad = [tool_use("update_plan", {"steps": [{"episode": "rm_rf", "reason": "x"}]}),
           tool_use("decide_backtrack", {"backtrack": "yes", "reason": 1})]
    with FakeAnthropic(bad * 2) as fake:
        coord, kernel, notebook, session = tec.setup(tmp_path, fake.url, retries=1, corrections=1)
        assert await coord.run_until_blocked() == "finished"
        assert len(fake.requests) == 2
    assert "malformed" in fallback_note(session)
    assert all(s.episode != "rm_rf" for s in session.plan)


async def test_a_probe_into_a_kernel_that_dies_fails_fast(jp_fetch, jp_serverapp):
    """The engine's bridge waits up to 600 s for a busy kernel, but not for a dead one."""
    from jupyter_dcpilot.kernel_bridge import KernelBridge, KernelDiedError

    await tss.start_notebook_kernel(jp_fetch, "doomed.ipynb")
    bridge = KernelBridge(jp_serverapp.session_manager, jp_serverapp.kernel_manager, timeout=120.0, poll=0.5)
    assert await bridge.evaluate_expression("doomed.ipynb", "'\"ok\"'") == "ok"
    loop = asyncio.get_running_loop()
    started = loop.time()
    with pytest.raises(KernelDiedError, match="the kernel died"):
        await bridge.evaluate_expression("doomed.ipynb", "__import__('os')._exit(1)")
    assert loop.time() - started < 15


@pytest.mark.slow
async def test_the_frames_endpoint_answers_503_naming_a_kernel_that_died(jp_fetch, jp_serverapp):
    """The panel's REST probes say the kernel died (503, retry later) rather than a bare 500."""
    kernel_id = await tss.start_notebook_kernel(jp_fetch, "dies.ipynb")
    client = tss.kernel_client(jp_serverapp, kernel_id, "test")
    try:  # the user's own code makes the next probe take the kernel down
        await client.wait_for_ready(timeout=60)
        reply = await client.execute_interactive(
            "import os, kernel_tools.probes as p\np.frames_json = lambda: os._exit(1)", timeout=60)
        assert reply["content"]["status"] == "ok"
    finally:
        client.stop_channels()
    with pytest.raises(tornado.httpclient.HTTPClientError) as caught:
        await jp_fetch("dcpilot", "api", "frames", params={"path": "dies.ipynb"})
    assert caught.value.code == 503
    assert "the kernel died" in caught.value.response.body.decode()
    # the server restarts a kernel that died: let that settle before the fixture shuts the server
    # down (a restart still pending there makes jupyter_client's shutdown_all raise, and the
    # server's teardown fail for every later test on this worker)
    kernel = jp_serverapp.kernel_manager.get_kernel(kernel_id)
    deadline = asyncio.get_running_loop().time() + 60
    while asyncio.get_running_loop().time() < deadline:
        if kernel.ready.done() and await kernel.is_alive():
            break
        await asyncio.sleep(0.2)
    await jp_serverapp.kernel_manager.shutdown_kernel(kernel_id, now=True)
