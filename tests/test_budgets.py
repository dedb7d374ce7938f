"""Time budgets on a real kernel: slow cells run to their end (no transport timeout), report
progress against their budget, are stopped and rolled back far past it, and every error a user
reads is a sentence (never ``Empty:``)."""

from __future__ import annotations

import asyncio
import os
import queue
import re
import signal

import pytest

from jupyter_dcpilot.engine.budgets import DEFAULTS, LAZY_ROWS, Budgets, data_scale
from jupyter_dcpilot.engine.episodes import library
from jupyter_dcpilot.engine.errors import in_words
from jupyter_dcpilot.engine.hosts import HeadlessHost, KernelDiedError
from jupyter_dcpilot.engine.session import Session, Step, sidecar_path
from jupyter_dcpilot.engine.task import Given, Inputs, Task
from jupyter_dcpilot.engine.worker import Worker
from jupyter_dcpilot.probe import ProbeError, parse_reply

pytestmark = pytest.mark.timeout(120)
FRAME = "import pandas as pd\ndf = pd.DataFrame({'x': range(10), 'y': [0, 1] * 5})\n"


# -- budgets as people give them -----------------------------------------------------------
def test_budgets_from_the_command_line_settings_and_defaults():
    assert Budgets().of("train_evaluate") == DEFAULTS["train_evaluate"]
    assert Budgets().of("outliers") == DEFAULTS["*"]  # a kind without its own default
    every = Budgets.from_spec(["90"])
    assert every.of("train_evaluate") == every.of("impute") == every.of("diagnose") == 90
    mixed = Budgets.from_spec(["600", "impute=30"])
    assert mixed.of("impute") == 30 and mixed.of("train_evaluate") == 600
    layered = Budgets.from_spec({"impute": 5}, base=Budgets.from_spec({"train_evaluate": 900}))
    assert (layered.of("impute"), layered.of("train_evaluate")) == (5, 900)
    assert Budgets.from_spec(None).to_dict() == DEFAULTS
    assert Budgets.from_spec({"impute": 10}).stop_after("impute") == 60  # never before a minute
    assert Budgets.from_spec({"impute": 100}).stop_after("impute") == 400


@pytest.mark.parametrize("spec, words", [
    (["imputation=30"], "'imputation' is not a kind of step"),
    (["impute=-1"], "must be a positive number of seconds"),
    (["impute=soon"], "must be a positive number of seconds"),
    ({"train_evaluate": True}, "must be a positive number of seconds"),
    (True, "budget must be seconds or a map"),
])
def test_a_bad_budget_is_a_sentence_naming_it(spec, words):
    with pytest.raises(ValueError, match=words):
        Budgets.from_spec(spec)


# -- errors in words -----------------------------------------------------------------------
def test_transport_timeouts_and_empty_messages_become_sentences():
    text = in_words(queue.Empty(), "running step s9 (Train and evaluate)")
    assert text.startswith("the kernel did not answer while running step s9 (Train and evaluate)")
    assert "Empty" not in text
    assert in_words(RuntimeError(), "planning the next step") == \
        "planning the next step stopped unexpectedly (runtime error)"
    assert in_words(KernelDiedError("the kernel died while ..."), "x") == "the kernel died while ..."
    with pytest.raises(ProbeError) as info:
        parse_reply({"status": "error", "ename": "KeyboardInterrupt", "evalue": ""})
    assert str(info.value) == "the kernel could not run the co-pilot's request: interrupted"


# -- a real kernel -------------------------------------------------------------------------
async def _host(tmp_path, timeout: float = 600.0) -> HeadlessHost:
    host = HeadlessHost(tmp_path / "nb.ipynb", timeout=timeout)
    await host.start()
    loaded = await host.run_cell(FRAME + "import kernel_tools as kt\n", {})
    assert loaded.error is None, loaded.error
    return host


def _worker(tmp_path, host, budgets: Budgets, events: list) -> tuple[Worker, Session]:
    notebook = tmp_path / "nb.ipynb"
    session = Session(notebook=str(notebook), path=str(sidecar_path(notebook)), frame="df",
                      task=Task(given=Given(target="y")), inputs=Inputs(frames=["df"]))
    session.variables["imports"] = True
    session.subscribe(events.append)
    worker = Worker(session, host, host, library(), budgets=budgets, stop=host.interrupt, tick=0.2)
    return worker, session


def _slow_step(seconds: float) -> Step:
    code = f"import time\ntime.sleep({seconds})\ndf = df.iloc[:3]"
    return Step(id="s1", episode="custom", title="Slow custom step", gate="custom_code", code=code)


@pytest.mark.slow
async def test_a_cell_longer_than_the_probe_timeout_runs_to_its_end_with_progress(tmp_path):
    host = await _host(tmp_path, timeout=1.0)  # probes give up after 1 s; a cell does not
    events: list = []
    try:
        worker, session = _worker(tmp_path, host, Budgets.from_spec({"custom": 30}), events)
        assert await worker.execute(_slow_step(2.5), 0) == "done"
        assert session.variables["shape"] == [3, 2]
    finally:
        await host.stop()
    progress = [e for e in events if e["type"] == "progress"]
    assert progress[0]["title"] == "s1 Slow custom step" and progress[0]["elapsed_s"] == 0
    assert progress[0]["budget_s"] == 30 and len(progress) >= 5
    assert progress[-1]["elapsed_s"] >= 2.0


def test_a_lazy_frames_steps_are_stopped_later_the_more_rows_it_has():
    budgets = Budgets.from_spec({"impute": 120})
    assert budgets.stop_after("impute") == 480
    assert data_scale(80_000_000, lazy=True) == 80 and budgets.stop_after("impute", 80) == 480 * 80
    assert data_scale(80_000_000, lazy=False) == data_scale(50_000, lazy=True) == data_scale(None, lazy=True) == 1


@pytest.mark.slow
async def test_a_lazy_frames_step_runs_past_the_in_memory_stop_limit(tmp_path):
    host = await _host(tmp_path)
    try:
        worker, session = _worker(tmp_path, host, Budgets.from_spec({"custom": 0.5}, min_stop_s=1.0), [])
        # a Dask frame of 3 M rows: stopped at 3 x 2 s, not at 2 s
        session.variables.update(frame_library="dask", initial_shape=[3 * LAZY_ROWS, 2])
        outcome = await asyncio.wait_for(worker.execute(_slow_step(3), 0), 30)
    finally:
        await host.stop()
    assert outcome == "done", worker.session.steps


@pytest.mark.slow
async def test_a_step_far_past_its_budget_is_stopped_rolled_back_and_said_so(tmp_path):
    host = await _host(tmp_path)
    events: list = []
    try:
        budgets = Budgets.from_spec({"custom": 0.5}, min_stop_s=1.0)  # stopped at 2 s
        worker, session = _worker(tmp_path, host, budgets, events)
        step = _slow_step(60)
        outcome = await asyncio.wait_for(worker.execute(step, 0), 30)
        rows = await host.evaluate("__import__('json').dumps(len(df))")
    finally:
        await host.stop()
    assert outcome == "failed" and rows == 10  # the checkpoint put df back
    assert re.match(r"stopped after [\d.]+ s, far past its time budget of 0.5 s; its variables are as "
                    r"before it", step.error)
    assert "--budget custom=SECONDS" in step.error
    assert any(e["type"] == "transcript" and e["entry"]["kind"] == "budget"
               and "Slow custom step" in e["entry"]["text"] for e in events)


@pytest.mark.slow
async def test_a_kernel_that_dies_under_a_headless_cell_fails_it_at_once_in_words(tmp_path):
    host = await _host(tmp_path)
    try:
        pid = await host.evaluate("__import__('json').dumps(__import__('os').getpid())")
        running = asyncio.ensure_future(host.run_cell("import time\ntime.sleep(120)", {}))
        await asyncio.sleep(1.0)
        os.kill(pid, signal.SIGKILL)
        with pytest.raises(KernelDiedError, match="the kernel died while a cell ran"):
            await asyncio.wait_for(running, 15)  # not after a reply timeout of minutes
    finally:
        await host.stop()


@pytest.mark.slow
async def test_a_probe_that_outlasts_its_timeout_says_so_in_words(tmp_path):
    host = await _host(tmp_path, timeout=1.0)
    try:
        with pytest.raises(TimeoutError, match="the kernel did not answer the co-pilot's request within 1 s"):
            await host.evaluate("__import__('time').sleep(3) or '1'")
    finally:
        await host.stop()


# -- the server: the panel runs a cell that takes longer than any transport wait --------------
@pytest.mark.slow
async def test_a_panel_cell_slower_than_the_host_timeout_finishes_and_reports_progress(
        jp_fetch, jp_ws_fetch, jp_serverapp, registry, no_llm) -> None:
    from test_server_sessions import (
        LEAKY_FRAME,
        ONLY_LEAKAGE_ASKS,
        Frontend,
        get_session,
        kernel_client,
        post,
        start_notebook_kernel,
        wait_for,
    )

    class SlowFrontend(Frontend):
        async def run(self, source: str) -> dict:  # the co-pilot's cell behind 6 s of work
            return await super().run("import time\ntime.sleep(6)\n" + source)

    registry.host_timeout = 1.0  # the panel's answer to a cell used to be bounded by this
    kernel_id = await start_notebook_kernel(jp_fetch, "slow.ipynb")
    client = kernel_client(jp_serverapp, kernel_id, "panel")
    await client.wait_for_ready(timeout=60)
    await client.execute_interactive(LEAKY_FRAME, timeout=60)
    created = await post(jp_fetch, "dcpilot", "api", "sessions",
                         body={"path": "slow.ipynb", "frame": "df", "target": "churned",
                               "approve": ONLY_LEAKAGE_ASKS, "budget": {"remove_leakage": 2}})
    assert created["settings"]["budgets"]["remove_leakage"] == 2
    ws = await jp_ws_fetch("dcpilot", "api", "sessions", created["id"], "events")
    frontend = SlowFrontend(ws, client)
    serving = asyncio.create_task(frontend.serve())
    try:
        async def leakage_waits():
            state = await get_session(jp_fetch, created["id"])
            return next((d for d in state["decisions"] if d["gate"] == "leakage" and d["choice"] is None
                         and state["state"] == "blocked"), None)

        decision = await wait_for(leakage_waits, "the leakage decision")
        await post(jp_fetch, "dcpilot", "api", "sessions", created["id"], "decisions", decision["id"],
                   body={"choice": "drop"})

        async def leak_step_over():
            state = await get_session(jp_fetch, created["id"])
            step = next(s for s in state["plan"] if s["id"] == decision["step_id"])
            return (state, step) if step["status"] in ("done", "failed") else None

        state, step = await wait_for(leak_step_over, "the slow leakage step", timeout=60)
        assert step["status"] == "done", (step["error"], state["warnings"])
        assert step["budget_s"] == 2 and step["elapsed_s"] >= 6
        ticks = [m for m in frontend.received if m.get("type") == "progress" and m.get("step") == step["id"]]
        assert ticks[0]["elapsed_s"] == 0 and ticks[-1]["budget_s"] == 2 and ticks[-1]["elapsed_s"] >= 5
        assert not any("did not answer" in w for w in state["warnings"])
    finally:
        serving.cancel()
        ws.close()
        await registry.close()
        client.stop_channels()
