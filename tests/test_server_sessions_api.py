"""The session API additions on a real server and kernel: settings, one live session per notebook,
interrupt, undo that resumes, decision charts, and sessions saved when the server shuts down."""

from __future__ import annotations

import asyncio
import json

import pytest
from fake_anthropic import FakeAnthropic
from test_server_sessions import (
    LEAKY_FRAME,
    Frontend,
    get_session,
    kernel_client,
    post,
    start_notebook_kernel,
    wait_for,
)
from tornado.httpclient import HTTPClientError

from jupyter_dcpilot.engine.budgets import DEFAULTS
from jupyter_dcpilot.engine.session import Session

pytestmark = pytest.mark.timeout(240)
API = ("dcpilot", "api", "sessions")
# the policy answers every gate before the split (leakage included); label issues, after it, ask
RECOMMENDED = {"*": "recommended", "label_issues": "ask"}


async def notebook_with_frame(jp_fetch, jp_serverapp, path: str, username: str = "panel"):
    kernel_id = await start_notebook_kernel(jp_fetch, path)
    client = kernel_client(jp_serverapp, kernel_id, username)
    await client.wait_for_ready(timeout=60)
    await client.execute_interactive(LEAKY_FRAME, timeout=60)
    return client


async def kernel_names(client) -> set[str]:
    printed: list[str] = []
    await client.execute_interactive(
        "print(sorted(k for k in ('df', 'train', 'test', 'model', 'leakage_drop', 'split_report') "
        "if k in globals()))", timeout=30,
        output_hook=lambda m: printed.append(m["content"].get("text", "")))
    return set(json.loads("".join(printed).replace("'", '"')))


class SlowFrontend(Frontend):
    """A panel whose first cell of one episode hangs (a long-running step the user interrupts)."""

    def __init__(self, ws, client, slow_episode: str) -> None:
        super().__init__(ws, client)
        self.slow_episode = slow_episode

    async def serve(self) -> None:
        real_run = self.run

        async def run(source: str) -> dict:
            episodes = [(m.get("metadata") or {}).get("dcpilot", {}).get("episode")
                        for m in self.requests("run_cell")]
            if episodes and episodes[-1] == self.slow_episode and episodes.count(self.slow_episode) == 1:
                source = "import time\ntime.sleep(120)\n" + source
            return await real_run(source)

        self.run = run
        await super().serve()


@pytest.mark.parametrize("method,parts,body", [("GET", (), None), ("POST", ("0" * 32, "interrupt"), {})])
async def test_new_endpoints_refuse_requests_without_valid_token(jp_fetch, method, parts, body) -> None:
    with pytest.raises(HTTPClientError) as info:
        await jp_fetch(*API, *parts, method=method, body=json.dumps(body) if body is not None else None,
                       params={"path": "a.ipynb"} if method == "GET" else None,
                       headers={"Authorization": "token not-the-token"})
    assert info.value.code == 403


async def test_interrupt_of_an_unknown_session_is_404(jp_fetch) -> None:
    with pytest.raises(HTTPClientError) as info:
        await post(jp_fetch, *API, "0" * 32, "interrupt", body={})
    assert info.value.code == 404


def step_of(state: dict, episode: str) -> list[dict]:
    return [s for s in state["plan"] if s["episode"] == episode]


@pytest.mark.slow
async def test_settings_are_validated_and_echoed(jp_fetch, jp_serverapp, registry, no_llm) -> None:
    client = await notebook_with_frame(jp_fetch, jp_serverapp, "s.ipynb")
    try:
        for body, message in (({"planner": "gpt"}, "planner must be"), ({"share": "rows"}, "share must be"),
                              ({"planner": "claude"}, "needs an Anthropic API key"), ({"replace": "yes"}, "replace"),
                              ({"model": 5}, "'model' must be")):
            with pytest.raises(HTTPClientError) as info:
                await post(jp_fetch, *API, body={"path": "s.ipynb", "frame": "df", **body})
            assert info.value.code == 400 and message in json.loads(info.value.response.body)["message"], body
        created = await post(jp_fetch, *API, body={"path": "s.ipynb", "frame": "df", "target": "churned"})
        assert created["settings"] == {"planner": "rules", "model": None, "share": "schema", "approve": "ask",
                                   "budgets": DEFAULTS}
        assert created["usage"] == {"calls": 0, "input_tokens": 0, "output_tokens": 0, "cost_usd": 0.0}
        status = json.loads((await jp_fetch("dcpilot", "api", "status")).body)
        assert status["planners"] == ["rules"] and status["default_model"].startswith("claude")
    finally:
        await registry.close()
        client.stop_channels()


@pytest.mark.slow
async def test_the_panel_joins_the_other_frames_it_names(jp_fetch, jp_serverapp, registry, no_llm) -> None:
    # the panel could start a session on one frame only: the questions of several files (the window of
    # records stamped with clock times) were the command line's alone
    client = await notebook_with_frame(jp_fetch, jp_serverapp, "j.ipynb")
    try:
        await client.execute_interactive("visits = df[['age']].drop_duplicates()", timeout=60)
        for body, message in (({"join": ["nope"]}, "no variable named 'nope'"), ({"join": "visits"}, "'join'")):
            with pytest.raises(HTTPClientError) as info:
                await post(jp_fetch, *API, body={"path": "j.ipynb", "frame": "df", **body})
            assert info.value.code == 400 and message in json.loads(info.value.response.body)["message"], body
        created = await post(jp_fetch, *API, body={"path": "j.ipynb", "frame": "df", "target": "churned",
                                                   "join": ["visits"]})
        assert registry._by_id[created["id"]].session.inputs.frames == ["df", "visits"]
    finally:
        await registry.close()
        client.stop_channels()


@pytest.mark.slow
async def test_claude_planner_gets_the_model_and_share_setting(jp_fetch, jp_serverapp, registry,
                                                                monkeypatch, tmp_path) -> None:
    client = await notebook_with_frame(jp_fetch, jp_serverapp, "c.ipynb")
    with FakeAnthropic() as fake:  # answers 500: the rule planner takes over, visibly
        settings = jp_serverapp.web_app.settings["dcpilot_settings"]  # the server's c.DCPilot
        monkeypatch.setattr(settings, "base_url", fake.url)
        monkeypatch.setattr(settings, "max_retries", 0)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
        try:
            created = await post(jp_fetch, *API, body={"path": "c.ipynb", "frame": "df", "target": "churned",
                                                       "planner": "claude", "model": "claude-test-1",
                                                       "share": "samples"})
            assert created["settings"]["planner"] == "claude" and created["settings"]["share"] == "samples"
            planner = registry.get(created["id"]).coordinator.planner
            assert (type(planner).__name__, planner.config.model, planner.share) == \
                ("ClaudePlanner", "claude-test-1", "samples")

            async def fell_back():
                state = await get_session(jp_fetch, created["id"])
                return state if state["state"] == "blocked" else None

            state = await wait_for(fell_back, "the session to block after the LLM failed")
            assert fake.requests and fake.requests[0]["model"] == "claude-test-1"
            assert any("rule planner takes over" in w for w in state["warnings"])
        finally:
            await registry.close()
            client.stop_channels()


@pytest.mark.slow
async def test_one_live_session_per_notebook_unless_replaced(jp_fetch, jp_serverapp, jp_root_dir, registry,
                                                             no_llm) -> None:
    client = await notebook_with_frame(jp_fetch, jp_serverapp, "r.ipynb")
    try:
        first = await post(jp_fetch, *API, body={"path": "r.ipynb", "frame": "df", "target": "churned"})
        with pytest.raises(HTTPClientError) as info:
            await post(jp_fetch, *API, body={"path": "/r.ipynb", "frame": "df", "target": "age"})
        body = json.loads(info.value.response.body)
        assert info.value.code == 409 and body["id"] == first["id"] and "replace" in body["message"]
        await wait_for(lambda: _state_is(jp_fetch, first["id"], "blocked"), "the first session to block")
        second = await post(jp_fetch, *API, body={"path": "r.ipynb", "frame": "df", "target": "churned",
                                                  "approve": "recommended", "replace": True})
        assert second["id"] != first["id"]
        assert second["decisions"] == [] and second["settings"]["approve"] == "recommended"  # afresh
        with pytest.raises(HTTPClientError) as info:
            await get_session(jp_fetch, first["id"])
        assert info.value.code == 404
        listed = json.loads((await jp_fetch(*API, params={"path": "r.ipynb"})).body)["sessions"]
        assert [s["id"] for s in listed] == [second["id"]]
    finally:
        await registry.close()
        client.stop_channels()


async def _state_is(jp_fetch, session_id: str, state: str):
    current = await get_session(jp_fetch, session_id)
    return current if current["state"] == state else None


@pytest.mark.slow
async def test_interrupt_then_undo_resumes_and_deletes_later_variables(jp_fetch, jp_ws_fetch, jp_serverapp,
                                                                       registry, no_llm) -> None:
    client = await notebook_with_frame(jp_fetch, jp_serverapp, "i.ipynb")
    created = await post(jp_fetch, *API, body={"path": "i.ipynb", "frame": "df", "target": "churned",
                                               "approve": RECOMMENDED})
    sid = created["id"]
    ws = await jp_ws_fetch(*API, sid, "events")
    frontend = SlowFrontend(ws, client, slow_episode="split")
    serving = asyncio.create_task(frontend.serve())
    try:
        async def split_running():
            state = await get_session(jp_fetch, sid)
            return state if [s for s in step_of(state, "split") if s["status"] == "running"] \
                and frontend.requests("run_cell")[-1]["metadata"]["dcpilot"]["episode"] == "split" else None

        state = await wait_for(split_running, "the split cell to run")
        assert step_of(state, "split")[0]["started"]
        leak = step_of(state, "remove_leakage")[0]
        leak_decision = next(d for d in state["decisions"] if d["id"] == leak["decision_id"])
        assert leak_decision["by"] == "policy" and leak_decision["chart"]["bars"][0]["label"] == "complained"
        await asyncio.sleep(1.0)  # the kernel is inside time.sleep
        answered = await post(jp_fetch, *API, sid, "interrupt", body={})
        assert answered["id"] == sid

        async def interrupted():
            state = await get_session(jp_fetch, sid)
            split = step_of(state, "split")[0]
            return state if state["state"] == "idle" and split["status"] == "failed" else None

        state = await wait_for(interrupted, "the interrupted split to fail", timeout=60)
        assert step_of(state, "split")[0]["note"] == "interrupted by the user"
        with pytest.raises(HTTPClientError) as info:  # nothing runs now
            await post(jp_fetch, *API, sid, "interrupt", body={})
        assert info.value.code == 409
        assert len([r for r in frontend.requests("run_cell")
                    if r["metadata"]["dcpilot"]["episode"] == "split"]) == 1  # not retried
        assert await kernel_names(client) == {"df", "leakage_drop"}  # the kernel answers; no train/test

        # the session stays usable: undo to before the leakage step, which is asked again
        undone = await post(jp_fetch, *API, sid, "undo", body={"checkpoint": leak["checkpoint_id"]})
        assert next(s for s in undone["plan"] if s["id"] == leak["id"])["status"] == "proposed"
        reopened = next(d for d in undone["decisions"] if d["id"] == leak_decision["id"])
        assert reopened["choice"] is None and reopened["history"][0]["choice"] == "drop"

        async def asked_again():
            state = await get_session(jp_fetch, sid)
            waiting = [s for s in state["plan"] if s["id"] == leak["id"] and s["status"] == "awaiting_decision"]
            return state if waiting and state["state"] == "blocked" else None

        await wait_for(asked_again, "the reopened leakage decision")
        await post(jp_fetch, *API, sid, "decisions", leak_decision["id"], body={"choice": "drop"})

        async def split_done():  # then the label-issues gate (after the split) asks
            state = await get_session(jp_fetch, sid)
            return state if state["state"] == "blocked" and step_of(state, "split")[-1]["status"] == "done" \
                else None

        state = await wait_for(split_done, "the split to run again", timeout=120)
        assert next(s for s in state["plan"] if s["id"] == leak["id"])["status"] == "done"
        assert {"train", "test", "leakage_drop", "split_report"} <= await kernel_names(client)

        # undo to before the leakage step again: train/test and the reports made since leave the kernel
        leak_checkpoint = next(s for s in state["plan"] if s["id"] == leak["id"])["checkpoint_id"]
        await post(jp_fetch, *API, sid, "undo", body={"checkpoint": leak_checkpoint})
        await wait_for(asked_again, "the leakage decision once more")
        assert await kernel_names(client) == {"df"}
    finally:
        serving.cancel()
        ws.close()
        await registry.close()
        client.stop_channels()


SLOW_DIAGNOSIS = (
    "import time, kernel_tools.probes as probes\n"
    "fast_diagnose = probes.diagnose_json\n"
    "def slow_diagnose(*args, **kwargs):\n"
    "    time.sleep(60)\n"
    "    return fast_diagnose(*args, **kwargs)\n"
    "probes.diagnose_json = slow_diagnose\n"
)


@pytest.mark.slow
async def test_interrupting_the_diagnosis_stops_the_run_and_resume_starts_it_again(jp_fetch, jp_serverapp,
                                                                                    registry, no_llm) -> None:
    client = await notebook_with_frame(jp_fetch, jp_serverapp, "d.ipynb")
    await client.execute_interactive(SLOW_DIAGNOSIS, timeout=30)  # a diagnosis as slow as on 1M rows
    try:
        created = await post(jp_fetch, *API, body={"path": "d.ipynb", "frame": "df", "target": "churned"})
        sid = created["id"]
        await wait_for(lambda: _state_is(jp_fetch, sid, "running"), "the diagnosis to start")
        await asyncio.sleep(1.0)
        await post(jp_fetch, *API, sid, "interrupt", body={})
        state = await wait_for(lambda: _state_is(jp_fetch, sid, "idle"), "the run to stop", timeout=30)
        assert state["findings"] == [] and state["plan"] == [] and state["warnings"] == []
        assert any(e["kind"] == "interrupt" for e in state["transcript"])
        await client.execute_interactive("probes.diagnose_json = fast_diagnose", timeout=30)
        await post(jp_fetch, *API, sid, "resume", body={})
        state = await wait_for(lambda: _state_is(jp_fetch, sid, "blocked"), "the task gate after resuming")
        assert state["findings"] and [d["gate"] for d in state["decisions"]] == ["task"]
        with pytest.raises(HTTPClientError) as info:
            await post(jp_fetch, *API, "0" * 32, "resume", body={})
        assert info.value.code == 404
    finally:
        await registry.close()
        client.stop_channels()


@pytest.mark.slow
async def test_every_decision_accepts_skip_but_the_task(jp_fetch, jp_serverapp, registry, no_llm) -> None:
    client = await notebook_with_frame(jp_fetch, jp_serverapp, "k.ipynb")
    try:
        created = await post(jp_fetch, *API, body={"path": "k.ipynb", "frame": "df", "target": "churned"})
        state = await wait_for(lambda: _state_is(jp_fetch, created["id"], "blocked"), "the task gate")
        (task,) = state["decisions"]
        with pytest.raises(HTTPClientError) as info:
            await post(jp_fetch, *API, created["id"], "decisions", task["id"], body={"choice": "skip"})
        assert info.value.code == 409
        assert task["chart"] is None
    finally:
        await registry.close()
        client.stop_channels()


@pytest.mark.slow
async def test_server_shutdown_saves_and_closes_every_session(jp_fetch, jp_serverapp, jp_root_dir, registry,
                                                             no_llm) -> None:
    client = await notebook_with_frame(jp_fetch, jp_serverapp, "z.ipynb")
    try:
        created = await post(jp_fetch, *API, body={"path": "z.ipynb", "frame": "df", "target": "churned"})
        await wait_for(lambda: _state_is(jp_fetch, created["id"], "blocked"), "the task gate")
        hosted = registry.get(created["id"])
        hosted.session.warnings.append("unsaved note")  # changed in memory only
        sidecar = jp_root_dir / ".z.ipynb.dcpilot.json"
        assert "unsaved note" not in sidecar.read_text()
        await jp_serverapp.cleanup_extensions()  # what the server runs when it shuts down
        assert registry.sessions() == [] and hosted.task.done()
        saved = Session.load(sidecar)
        assert saved.warnings == ["unsaved note"] and saved.state == "blocked"
        assert [d.gate for d in saved.decisions] == ["task"]
        # a server started again picks the session up from its sidecar (the kernel lived on)
        again = await post(jp_fetch, *API, body={"path": "z.ipynb", "frame": "df", "target": "churned"})
        assert again["id"] != created["id"] and again["decisions"][0]["id"] == saved.decisions[0].id
        assert "unsaved note" in again["warnings"]
        await registry.close()
    finally:
        client.stop_channels()
