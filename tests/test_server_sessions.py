"""Co-pilot sessions hosted by a real Jupyter server, driven by a simulated panel over the WebSocket."""

from __future__ import annotations

import asyncio
import json
import uuid
from pathlib import Path

import pytest
from jupyter_client.session import Session
from nbformat.v4 import output_from_msg
from tornado.httpclient import HTTPClientError

from jupyter_dcpilot.engine.gatekeeping import ApprovalPolicy
from jupyter_dcpilot.engine.session import Decision
from jupyter_dcpilot.engine.wire import DecisionOption
from jupyter_dcpilot.server_sessions import BrowserNotebookHost, HostError

policy_from = ApprovalPolicy.from_spec  # what the server reads a start request's approve with

pytestmark = pytest.mark.timeout(150)

LEAKY_FRAME = (
    "import numpy as np, pandas as pd\n"
    "rng = np.random.default_rng(0)\n"
    "n = 200\n"
    "age = rng.normal(45, 12, n).round()\n"
    "tenure = rng.integers(0, 20, n)\n"
    "y = (rng.random(n) < 1 / (1 + np.exp(0.05 * (age - 45) + 0.1 * (tenure - 10)))).astype(int)\n"
    "df = pd.DataFrame({'age': age, 'tenure': tenure,\n"
    "                   'complained': np.where(rng.random(n) < 0.03, 1 - y, y), 'churned': y})\n"
)
# every gate takes the recommended option except leakage, which waits for the expert
ONLY_LEAKAGE_ASKS = {"*": "recommended", "leakage": "ask", "label_issues": "keep"}


async def start_notebook_kernel(jp_fetch, path: str) -> str:
    response = await jp_fetch(
        "api", "sessions", method="POST",
        body=json.dumps({"path": path, "type": "notebook", "name": path, "kernel": {"name": "python3"}}),
    )
    return json.loads(response.body)["kernel"]["id"]


def kernel_client(serverapp, kernel_id: str, username: str):
    manager = serverapp.kernel_manager.get_kernel(kernel_id)
    client = manager.client(session=Session(key=manager.session.key, username=username))
    client.start_channels()
    return client


async def post(jp_fetch, *parts: str, body: dict) -> dict:
    return json.loads((await jp_fetch(*parts, method="POST", body=json.dumps(body))).body)


async def get_session(jp_fetch, session_id: str) -> dict:
    return json.loads((await jp_fetch("dcpilot", "api", "sessions", session_id)).body)


async def wait_for(predicate, what: str, timeout: float = 90.0):
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while loop.time() < deadline:
        value = await predicate()
        if value:
            return value
        await asyncio.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


class Frontend:
    """Stands in for the panel: answers the server's notebook requests, running cells in the
    notebook's kernel on a client of its own."""

    def __init__(self, ws, client) -> None:
        self.ws = ws
        self.client = client
        self.received: list[dict] = []
        self.cells: dict[str, dict] = {}

    async def serve(self) -> None:
        while True:
            text = await self.ws.read_message()
            if text is None:
                return
            message = json.loads(text)
            self.received.append(message)
            answer = await self.respond(message)
            if answer is None:
                continue
            if answer.get("cell_id"):
                self.cells[answer["cell_id"]] = {"type": message["type"], "metadata": message.get("metadata")}
            await self.ws.write_message(json.dumps({**answer, "request_id": message["request_id"]}))

    async def respond(self, message: dict) -> dict | None:
        """The answer to one notebook request, as the real panel gives it (None: no answer)."""
        kind = message.get("type")
        if kind == "run_cell":  # inserted under the id the server gives, as the real panel does
            return {**await self.run(message["source"]), "cell_id": message.get("cell_id") or uuid.uuid4().hex}
        if kind == "insert_markdown":
            return {"type": "cell_inserted", "cell_id": uuid.uuid4().hex}
        if kind == "delete_cells":
            return {"type": "cells_deleted"}
        return None

    async def run(self, source: str) -> dict:
        outputs: list[dict] = []

        def keep(msg: dict) -> None:
            if msg["msg_type"] in ("stream", "display_data", "execute_result", "error"):
                outputs.append(dict(output_from_msg(msg)))

        reply = await self.client.execute_interactive(source, output_hook=keep, timeout=120)
        content = reply["content"]
        error = None
        if content["status"] != "ok":
            error = {k: content.get(k) for k in ("ename", "evalue", "traceback")}
        return {"type": "cell_result", "cell_id": uuid.uuid4().hex, "outputs": outputs, "error": error}

    def requests(self, kind: str) -> list[dict]:
        return [m for m in self.received if m.get("type") == kind]


def cell_ids_of(frontend: Frontend, step_id: str) -> set[str]:
    return {cid for cid, cell in frontend.cells.items()
            if cell["type"] == "run_cell" and (cell["metadata"] or {}).get("dcpilot", {}).get("step") == step_id}


SESSION_ID = "0" * 32


@pytest.mark.parametrize(
    "method,parts,body",
    [
        ("POST", ("sessions",), {"path": "a.ipynb", "frame": "df"}),
        ("GET", ("sessions", SESSION_ID), None),
        ("POST", ("sessions", SESSION_ID, "decisions", "d1"), {"choice": "drop"}),
        ("POST", ("sessions", SESSION_ID, "undo"), {"checkpoint": "c1"}),
    ],
)
@pytest.mark.parametrize("authorization", ["", "token not-the-token"])
async def test_rest_endpoints_refuse_requests_without_valid_token(jp_fetch, method, parts, body, authorization) -> None:
    with pytest.raises(HTTPClientError) as info:
        await jp_fetch("dcpilot", "api", *parts, method=method,
                       body=json.dumps(body) if body is not None else None,
                       headers={"Authorization": authorization})
    assert info.value.code == 403


@pytest.mark.parametrize("authorization", ["", "token not-the-token"])
async def test_events_socket_refuses_connections_without_valid_token(jp_ws_fetch, authorization) -> None:
    with pytest.raises(HTTPClientError) as info:
        await jp_ws_fetch("dcpilot", "api", "sessions", SESSION_ID, "events",
                          headers={"Authorization": authorization})
    assert info.value.code == 403


async def test_unknown_session_and_bad_requests(jp_fetch, jp_ws_fetch, registry) -> None:
    with pytest.raises(HTTPClientError) as info:
        await jp_fetch("dcpilot", "api", "sessions", SESSION_ID)
    assert info.value.code == 404
    for parts, body in ((("decisions", "d1"), {"choice": "drop"}), (("undo",), {"checkpoint": "c1"})):
        with pytest.raises(HTTPClientError) as info:
            await post(jp_fetch, "dcpilot", "api", "sessions", SESSION_ID, *parts, body=body)
        assert info.value.code == 404
    with pytest.raises(HTTPClientError) as info:
        await jp_ws_fetch("dcpilot", "api", "sessions", SESSION_ID, "events")
    assert info.value.code == 404
    with pytest.raises(HTTPClientError) as info:  # no kernel runs that notebook
        await post(jp_fetch, "dcpilot", "api", "sessions", body={"path": "none.ipynb", "frame": "df"})
    assert info.value.code == 404
    for body in ({"frame": "df"}, {"path": "../outside.ipynb", "frame": "df"},
                 {"path": "a.ipynb", "frame": "df.x"}, {"path": "a.ipynb", "frame": "df", "approve": "always"},
                 {"path": "a.ipynb", "frame": "df", "task": "clustering"}, {"path": "a.ipynb", "frame": "df", "target": 3}):
        with pytest.raises(HTTPClientError) as info:
            await post(jp_fetch, "dcpilot", "api", "sessions", body=body)
        assert info.value.code == 400, body


@pytest.mark.slow
async def test_two_notebooks_get_independent_sessions(jp_fetch, jp_serverapp, jp_root_dir, registry) -> None:
    try:
        await check_two_sessions(jp_fetch, jp_serverapp, jp_root_dir)
    finally:
        await registry.close()


async def check_two_sessions(jp_fetch, jp_serverapp, jp_root_dir) -> None:
    sessions = {}
    for path in ("a.ipynb", "b.ipynb"):
        kernel_id = await start_notebook_kernel(jp_fetch, path)
        client = kernel_client(jp_serverapp, kernel_id, "browser")
        try:
            await client.execute(LEAKY_FRAME, reply=True, timeout=60)
        finally:
            client.stop_channels()
        sessions[path] = await post(jp_fetch, "dcpilot", "api", "sessions",
                                    body={"path": path, "frame": "df", "target": "churned"})
    a, b = sessions["a.ipynb"], sessions["b.ipynb"]
    assert a["id"] != b["id"] and len(a["id"]) == 32
    assert (a["path"], b["path"]) == ("a.ipynb", "b.ipynb")
    with pytest.raises(HTTPClientError) as info:  # one live session per notebook
        await post(jp_fetch, "dcpilot", "api", "sessions", body={"path": "a.ipynb", "frame": "df"})
    assert info.value.code == 409 and json.loads(info.value.response.body)["id"] == a["id"]
    listed = json.loads((await jp_fetch("dcpilot", "api", "sessions", params={"path": "a.ipynb"})).body)
    assert [(s["id"], s["path"], s["frame"], s["target"]) for s in listed["sessions"]] == \
        [(a["id"], "a.ipynb", "df", "churned")]
    assert listed["sessions"][0]["created"] and listed["sessions"][0]["state"] in ("running", "blocked")
    everything = json.loads((await jp_fetch("dcpilot", "api", "sessions")).body)
    assert {s["id"] for s in everything["sessions"]} == {a["id"], b["id"]}
    assert json.loads((await jp_fetch("dcpilot", "api", "sessions", params={"path": "c.ipynb"})).body) \
        == {"sessions": []}

    async def both_blocked():  # approve defaults to "ask": the task confirmation waits
        states = [await get_session(jp_fetch, s["id"]) for s in (a, b)]
        return states if all(s["state"] == "blocked" for s in states) else None

    state_a, state_b = await wait_for(both_blocked, "both sessions to block on the task gate")
    for state, path in ((state_a, "a.ipynb"), (state_b, "b.ipynb")):
        assert state["notebook"] == str(jp_root_dir / path)
        assert [d["gate"] for d in state["decisions"]] == ["task"]
        assert (jp_root_dir / f".{path}.dcpilot.json").is_file()
    # deciding in one session does not touch the other
    decided = await post(jp_fetch, "dcpilot", "api", "sessions", a["id"], "decisions",
                         state_a["decisions"][0]["id"], body={"choice": "confirm"})
    assert decided["decisions"][0]["choice"] == "confirm" and decided["decisions"][0]["by"] == "user"
    assert (await get_session(jp_fetch, b["id"]))["decisions"][0]["choice"] is None


@pytest.mark.slow
async def test_panel_drives_session_through_the_leakage_gate(jp_fetch, jp_ws_fetch, jp_serverapp, registry) -> None:
    kernel_id = await start_notebook_kernel(jp_fetch, "churn.ipynb")
    client = kernel_client(jp_serverapp, kernel_id, "panel")
    await client.wait_for_ready(timeout=60)
    await client.execute_interactive(LEAKY_FRAME, timeout=60)
    # the test looks into the kernel on a client of its own: two executions sharing one client
    # would each swallow the other's iopub messages while the panel runs the co-pilot's cells
    inspector = kernel_client(jp_serverapp, kernel_id, "inspector")
    await inspector.wait_for_ready(timeout=60)
    created = await post(jp_fetch, "dcpilot", "api", "sessions",
                         body={"path": "churn.ipynb", "frame": "df", "target": "churned",
                               "approve": ONLY_LEAKAGE_ASKS})
    sid = created["id"]
    ws = await jp_ws_fetch("dcpilot", "api", "sessions", sid, "events")  # connects after the start
    frontend = Frontend(ws, client)
    serving = asyncio.create_task(frontend.serve())
    try:
        async def leakage_waits():
            state = await get_session(jp_fetch, sid)
            open_ = [d for d in state["decisions"] if d["gate"] == "leakage" and d["choice"] is None]
            return (state, open_[0]) if open_ and state["state"] == "blocked" else None

        state, decision = await wait_for(leakage_waits, "the leakage decision")
        assert decision["columns"] == ["complained"]
        assert decision["recommended"] == "drop"
        leak_step = next(s for s in state["plan"] if s["id"] == decision["step_id"])
        assert leak_step["status"] == "awaiting_decision"
        assert frontend.received[0]["type"] == "session"

        async def pushed():  # the event reaches the panel without polling
            return [m for m in frontend.received if m.get("type") == "awaiting_decision"]

        event = (await wait_for(pushed, "the awaiting_decision event", timeout=10))[0]
        assert event["decision"]["id"] == decision["id"]
        # the task gate was decided by the policy and written as a markdown cell, nothing ran
        assert [d["by"] for d in state["decisions"] if d["gate"] == "task"] == ["policy"]
        assert not any(r["metadata"]["dcpilot"].get("step") == leak_step["id"]
                       for r in frontend.requests("run_cell"))

        base = ("dcpilot", "api", "sessions", sid, "decisions")
        for decision_id, choice, code in (("d999", "drop", 404),  # a later gate cannot be pre-decided
                                          (decision["id"], "shred", 409)):
            with pytest.raises(HTTPClientError) as info:
                await post(jp_fetch, *base, decision_id, body={"choice": choice})
            assert info.value.code == code
        assert (await get_session(jp_fetch, sid))["decisions"][-1]["choice"] is None

        approved = await post(jp_fetch, *base, decision["id"], body={"choice": "drop", "rationale": "filed after churn"})
        assert next(d for d in approved["decisions"] if d["id"] == decision["id"])["by"] == "user"
        with pytest.raises(HTTPClientError) as info:
            await post(jp_fetch, *base, decision["id"], body={"choice": "keep"})
        assert info.value.code == 409

        async def leak_cell_ran():
            return [r for r in frontend.requests("run_cell")
                    if r["metadata"].get("dcpilot", {}).get("step") == leak_step["id"]]

        (cell,) = (await wait_for(leak_cell_ran, "the leakage step's cell"))[:1]
        assert "kt.drop_columns(" in cell["source"] and "'complained'" in cell["source"]

        async def step_done():
            state = await get_session(jp_fetch, sid)
            step = next(s for s in state["plan"] if s["id"] == leak_step["id"])
            return state if step["status"] == "done" else None

        state = await wait_for(step_done, "the leakage step to finish")
        assert any(c["step_id"] == leak_step["id"] for c in state["checkpoints"])
        printed: list[str] = []
        await inspector.execute_interactive("print(list(df.columns))", timeout=30,
                                         output_hook=lambda m: printed.append(m["content"].get("text", "")))
        columns = "".join(printed)
        assert "complained" not in columns and "churned" in columns

        undo = ("dcpilot", "api", "sessions", sid, "undo")
        with pytest.raises(HTTPClientError) as info:
            await post(jp_fetch, *undo, body={"checkpoint": "no-such-checkpoint"})
        assert info.value.code == 404
        checkpoint = next(c["id"] for c in state["checkpoints"] if c["step_id"] == leak_step["id"])
        undone = await post(jp_fetch, *undo, body={"checkpoint": checkpoint})
        assert next(s for s in undone["plan"] if s["id"] == leak_step["id"])["status"] == "proposed"
        assert checkpoint not in [c["id"] for c in undone["checkpoints"]]
        (deleted,) = frontend.requests("delete_cells")[-1:]
        leak_cells = cell_ids_of(frontend, leak_step["id"])
        assert leak_cells and leak_cells <= set(deleted["cell_ids"])
        printed.clear()
        await inspector.execute_interactive("print(list(df.columns))", timeout=30,
                                         output_hook=lambda m: printed.append(m["content"].get("text", "")))
        assert "complained" in "".join(printed)
    finally:
        serving.cancel()
        ws.close()
        await registry.close()
        client.stop_channels()
        inspector.stop_channels()


async def test_browser_host_waits_for_a_panel_then_times_out() -> None:
    host = BrowserNotebookHost(timeout=0.2)
    with pytest.raises(HostError, match="no notebook panel connected"):
        await host.run_cell("1", {})
    sent: list[dict] = []
    detach = host.attach(sent.append)
    with pytest.raises(HostError, match="did not answer run_cell"):
        await host.run_cell("1", {})
    assert sent[0]["type"] == "run_cell" and host.answer(sent[0]) is False  # too late: nobody waits
    detach()
    with pytest.raises(HostError, match="no notebook panel connected"):
        await host.delete_cells(["c1"])


async def sent_count(sent: list, n: int) -> None:
    for _ in range(100):
        if len(sent) >= n:
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"expected {n} requests, got {len(sent)}")


async def test_browser_host_resolves_answers_by_request_id() -> None:
    host = BrowserNotebookHost(timeout=5)
    sent: list[dict] = []
    host.attach(sent.append)
    running = asyncio.ensure_future(host.run_cell("x = 1", {"dcpilot": {"step": "s1"}}))
    await sent_count(sent, 1)
    assert sent[0]["source"] == "x = 1" and sent[0]["metadata"] == {"dcpilot": {"step": "s1"}}
    assert host.answer({"type": "cell_result", "request_id": "other"}) is False
    host.answer({"type": "cell_result", "request_id": sent[0]["request_id"], "cell_id": "c7",
                 "outputs": [{"output_type": "stream", "name": "stdout", "text": "hi"}], "error": None})
    result = await running
    assert (result.cell_id, result.text(), result.error) == ("c7", "hi", None)
    refused = asyncio.ensure_future(host.insert_markdown("# x", {}))
    await sent_count(sent, 2)
    host.answer({"type": "host_error", "request_id": sent[1]["request_id"], "message": "read-only notebook"})
    with pytest.raises(HostError, match="read-only notebook"):
        await refused


def test_panel_policy_asks_or_recommends_per_gate() -> None:
    def decision(gate, columns=("x",)):
        return Decision(id="d1", step_id="s1", gate=gate, question="?", columns=list(columns), recommended="drop",
                        options=[DecisionOption("drop", "Drop", "", ""), DecisionOption("keep", "Keep", "", "")])

    policy = policy_from({"*": "recommended", "leakage": "ask", "columns": {"bmi": "keep"}})
    assert policy.choose(decision("leakage")) is None
    assert policy.choose(decision("outliers"))[0] == "drop"
    assert policy.choose(decision("leakage", ["bmi"]))[0] == "keep"
    assert policy.choose(decision("custom_code")) is None  # never approved by a policy
    assert policy_from(None).choose(decision("outliers")) is None
    assert policy_from("recommended").choose(decision("leakage"))[0] == "drop"
    with pytest.raises(ValueError, match="approve must be"):
        policy_from(["drop"])
    decisions = Path(__file__).resolve()  # a start request never names a file on the server
    with pytest.raises(ValueError, match="approve must be"):
        policy_from(str(decisions))
