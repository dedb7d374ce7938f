"""The co-pilot's MCP tools, called by the real ``mcp`` client over streamable HTTP against a real
Jupyter server running Jupyter AI's MCP extension (``jupyter-server-mcp``) and this extension,
on real kernels; the person's panel is the simulated one of ``test_server_sessions`` on the real
WebSocket. Every tool answer is validated by the client against the tool's output schema."""

from __future__ import annotations

import asyncio
from contextlib import asynccontextmanager
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import test_server_sessions as tss
from mcp import ClientSession
from mcp.client.streamable_http import streamablehttp_client
from mcp.types import Implementation
from test_privacy import FRAME as SENTINEL_FRAME
from test_privacy import SENTINELS

from jupyter_dcpilot.mcp_tools import TOOLS

pytestmark = pytest.mark.timeout(240)
ROOT = Path(__file__).resolve().parents[1]
AGENT = "test-agent"


@pytest.fixture
def jp_server_config():
    # port 0: the OS picks a free port, so parallel test processes never clash on 3001
    return {"ServerApp": {"jpserver_extensions": {"jupyter_dcpilot": True, "jupyter_server_mcp": True}},
            "MCPExtensionApp": {"mcp_port": 0, "use_tool_discovery": False, "mcp_tools": TOOLS}}


class ToolFailed(Exception):
    pass


class Agent:
    """An MCP client session that keeps every answer it got (for the privacy audit)."""

    def __init__(self, session: ClientSession) -> None:
        self.session = session
        self.answers: list[str] = []

    async def call(self, tool: str, **arguments: Any) -> dict[str, Any]:
        result = await self.session.call_tool(tool, arguments)  # the client validates the output schema
        self.answers.append(result.model_dump_json())
        if result.isError:
            raise ToolFailed(" ".join(getattr(c, "text", "") for c in result.content))
        assert result.structuredContent is not None
        return result.structuredContent

    def leaked(self) -> list[str]:
        text = "\n".join(self.answers)
        return [s for s in SENTINELS if s in text]


async def start_mcp(serverapp) -> str:
    """Start the server's extensions (pytest-jupyter does not) and return the MCP server's URL."""
    await serverapp.extension_manager.start_all_extensions()
    (app,) = serverapp.extension_manager.extension_apps["jupyter_server_mcp"]
    assert app.mcp_server_instance is not None, "the MCP server did not start"
    return f"http://127.0.0.1:{app.mcp_server_instance.port}/mcp"


@asynccontextmanager
async def agent(serverapp, name: str = AGENT, headers: dict[str, str] | None = None):
    url = await start_mcp(serverapp)
    async with streamablehttp_client(url, headers=headers) as (read, write, _):
        async with ClientSession(read, write, client_info=Implementation(name=name, version="1")) as session:
            await session.initialize()
            yield Agent(session)


async def notebook_with(jp_fetch, serverapp, path: str, code: str):
    """A notebook whose kernel ran ``code``; returns the panel's kernel client (for the Frontend)."""
    kernel_id = await tss.start_notebook_kernel(jp_fetch, path)
    client = tss.kernel_client(serverapp, kernel_id, "panel")
    await client.wait_for_ready(timeout=60)
    reply = await client.execute_interactive(code, timeout=60)
    assert reply["content"]["status"] == "ok", reply["content"]
    return client


async def test_tools_are_listed_through_the_package_entry_point(jp_serverapp, tmp_path, monkeypatch) -> None:
    """The tools jupyter-server-mcp discovers from this package's entry point (as pyproject.toml
    declares it, installed as a distribution's metadata), next to Jupyter AI's own."""
    tomllib = pytest.importorskip("tomllib")
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]["jupyter_server_mcp.tools"]
    assert declared == {"jupyter_dcpilot": "jupyter_dcpilot.mcp_tools:TOOLS"}
    dist = tmp_path / "dcpilot_mcp_probe-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: dcpilot-mcp-probe\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[jupyter_server_mcp.tools]\n"
                                           + "".join(f"{k} = {v}\n" for k, v in declared.items()))
    monkeypatch.syspath_prepend(str(tmp_path))
    (app,) = jp_serverapp.extension_manager.extension_apps["jupyter_server_mcp"]
    app.use_tool_discovery, app.mcp_tools = True, []
    async with agent(jp_serverapp) as a:
        tools = {t.name: t for t in (await a.session.list_tools()).tools}
    ours = [spec.split(":")[1] for spec in TOOLS]
    assert set(ours) <= set(tools), sorted(tools)
    assert "read_notebook" in tools  # Jupyter AI's notebook tools are served beside them
    for name in ours:
        tool = tools[name]
        assert tool.description and len(tool.description) < 700
        assert tool.outputSchema["type"] == "object" and tool.outputSchema["properties"]
    answer = tools["dcpilot_answer_decision"]
    assert set(answer.inputSchema["required"]) == {"session_id", "decision_id", "choice"}
    decision = answer.outputSchema["properties"]["decision"]
    assert decision["properties"]["by"]["anyOf"][0]["enum"] == ["user", "policy", "agent"]
    assert set(decision["properties"]["proposal"]["anyOf"][0]["required"]) == {"agent", "choice", "rationale", "at"}
    assert tools["dcpilot_edit_plan"].inputSchema["properties"]["op"]["enum"] == ["skip", "move", "add", "params", "reopen"]


async def test_diagnose_a_live_kernel_frame_without_its_values(jp_fetch, jp_serverapp, registry) -> None:
    client = await notebook_with(jp_fetch, jp_serverapp, "private.ipynb", SENTINEL_FRAME)
    try:
        async with agent(jp_serverapp) as a:
            listed = await a.call("dcpilot_notebooks")
            assert listed["notebooks"] == [{"path": "private.ipynb", "session": None}]
            frames = await a.call("dcpilot_list_frames", notebook="private.ipynb")
            (df,) = [f for f in frames["frames"] if f["name"] == "df"]
            assert (df["rows"], df["columns"]) == (240, 6)
            found = await a.call("dcpilot_diagnose", notebook="private.ipynb", frame="df", target="churned")
            assert found["shape"] == [240, 6] and found["share"] == "schema"
            assert found["task"]["kind"] == "classification" and found["task"]["target"] == "churned"
            kinds = {f["kind"]: f for f in found["findings"]}
            assert {"id_column", "inconsistent_categories"} <= set(kinds), sorted(kinds)
            ident = kinds["id_column"]
            assert ident["columns"] == ["member_code"] and ident["gate"] == "identifiers"
            assert ident["evidence"]["distinct"] == 240  # aggregates stay
            assert any(o["recommended"] for o in ident["options"])
            assert "'city'" in kinds["inconsistent_categories"]["summary"]
            assert a.leaked() == []  # the audit: no planted value in any answer under "schema"
            with pytest.raises(ToolFailed, match="no variable named 'nope'"):
                await a.call("dcpilot_diagnose", notebook="private.ipynb", frame="nope")
            with pytest.raises(ToolFailed, match="no running kernel"):
                await a.call("dcpilot_list_frames", notebook="other.ipynb")
            registry.settings.agent_share = "samples"  # the user's explicit choice: then values show
            found = await a.call("dcpilot_diagnose", notebook="private.ipynb", frame="df", target="churned")
            assert found["share"] == "samples" and a.leaked() != []
    finally:
        await registry.close()
        client.stop_channels()


async def panel_accepts(jp_fetch, session_id: str, decision: dict[str, Any]) -> dict[str, Any]:
    """The person accepts the agent's proposal in the panel (the panel's own decision endpoint)."""
    proposal = decision["proposal"]
    return await tss.post(jp_fetch, "dcpilot", "api", "sessions", session_id, "decisions", decision["id"],
                          body={"choice": proposal["choice"], "rationale": f"accepted {proposal['agent']}'s proposal"})


def pick(decision: dict[str, Any]) -> str:
    """The agent's answer: the recommended option, but keep label issues (their search is slow)."""
    return "keep" if decision["gate"] == "label_issues" else decision["recommended"]


@pytest.mark.slow
async def test_an_agent_drives_a_session_to_its_verdict_with_the_person_at_every_gate(
        jp_fetch, jp_ws_fetch, jp_serverapp, registry) -> None:
    client = await notebook_with(jp_fetch, jp_serverapp, "private.ipynb", SENTINEL_FRAME)
    serving = None
    try:
        async with agent(jp_serverapp) as a:
            status = await a.call("dcpilot_start_session", notebook="private.ipynb", frame="df", target="churned")
            sid = status["session_id"]
            ws = await jp_ws_fetch("dcpilot", "api", "sessions", sid, "events")
            frontend = tss.Frontend(ws, client)
            serving = asyncio.create_task(frontend.serve())
            with pytest.raises(ToolFailed, match="already has a live co-pilot session"):
                await a.call("dcpilot_start_session", notebook="private.ipynb", frame="df")
            proposed = 0
            for _ in range(40):
                status = await a.call("dcpilot_status", session_id=sid, wait_s=60)
                if status["state"] in ("finished", "failed"):
                    break
                for decision_id in status["waiting_for"]:
                    decision = next(d for d in status["decisions"] if d["id"] == decision_id)
                    answered = await a.call("dcpilot_answer_decision", session_id=sid, decision_id=decision_id,
                                            choice=pick(decision), rationale="the evidence supports it")
                    assert answered["outcome"] == "proposed" and answered["state"] == "blocked"
                    assert answered["decision"]["choice"] is None
                    assert answered["decision"]["proposal"]["agent"] == AGENT
                    if proposed == 0:  # the panel receives the proposal on the decision, live
                        pushed = [m for m in frontend.received if m.get("type") == "decision"
                                  and (m["decision"].get("proposal") or {}).get("agent") == AGENT]
                        assert pushed and pushed[-1]["decision"]["choice"] is None
                        with pytest.raises(ToolFailed, match="only the person skips it"):
                            step = next(s for s in status["plan"] if s["decision_id"] == decision_id)
                            await a.call("dcpilot_edit_plan", session_id=sid, op="skip", step=step["id"])
                    proposed += 1
                    accepted = await panel_accepts(jp_fetch, sid, answered["decision"])
                    assert next(d for d in accepted["decisions"] if d["id"] == decision_id)["by"] == "user"
            assert status["state"] == "finished", status["log"][-5:]
            assert proposed >= 2
            report = await a.call("dcpilot_report", session_id=sid)
            assert report["valid"] is True, report["validity"]
            assert report["model"]["metric"] == "roc_auc" and report["model"]["holdout_score"] is not None
            assert {d["by"] for d in report["decisions"] if d["choice"]} == {"the user in the panel"}  # where, in words
            assert "member_code" in report["dropped_columns"]
            texts = [e["text"] for e in registry.get(sid).session.transcript]
            assert f"agent {AGENT} started the co-pilot on df for churned" in texts
            assert sum(t.startswith(f"agent {AGENT} proposed ") for t in texts) == proposed
            assert a.leaked() == [], a.leaked()  # the audit over every answer of the whole run
    finally:
        if serving is not None:
            serving.cancel()
        await registry.close()
        client.stop_channels()


def persona_calling(serverapp, name: str) -> dict[str, str]:
    """The identity headers Jupyter AI's persona manager adds to its agents' MCP requests, and
    the persona they name in its registry (as jupyter-ai keeps it in the server's settings)."""
    chat_id, persona_id = "chat-1", "jupyter-ai-personas::some_package::SomePersona"
    managers = serverapp.web_app.settings.setdefault("jupyter-ai", {}).setdefault("persona-managers", {})
    managers[chat_id] = SimpleNamespace(personas={persona_id: SimpleNamespace(name=name, processing_message=None)})
    return {"X-Jupyter-Chat-Id": chat_id, "X-JupyterAI-Persona-Id": persona_id}


@pytest.mark.slow
async def test_a_gate_the_user_lets_agents_decide_is_decided_and_logged_by_the_agent(
        jp_fetch, jp_ws_fetch, jp_serverapp, registry) -> None:
    """Called by a Jupyter AI persona: it is named by the persona's name."""
    registry.settings.agent_may_decide = ["leakage"]
    client = await notebook_with(jp_fetch, jp_serverapp, "churn.ipynb", tss.LEAKY_FRAME)
    serving = None
    persona = "Claude Code"
    try:
        async with agent(jp_serverapp, headers=persona_calling(jp_serverapp, persona)) as a:
            status = await a.call("dcpilot_start_session", notebook="churn.ipynb", frame="df", target="churned")
            sid = status["session_id"]
            assert status["agent_may_decide"] == ["leakage"]
            ws = await jp_ws_fetch("dcpilot", "api", "sessions", sid, "events")
            frontend = tss.Frontend(ws, client)
            serving = asyncio.create_task(frontend.serve())
            leak = None
            for _ in range(20):
                status = await a.call("dcpilot_status", session_id=sid, wait_s=60)
                waiting = [d for d in status["decisions"] if d["id"] in status["waiting_for"]]
                leak = next((d for d in waiting if d["gate"] == "leakage"), None)
                if leak is not None or status["state"] in ("finished", "failed"):
                    break
                for decision in waiting:  # the task card (and any other gate): the person accepts
                    answered = await a.call("dcpilot_answer_decision", session_id=sid, decision_id=decision["id"],
                                            choice=pick(decision))
                    assert answered["outcome"] == "proposed"
                    await panel_accepts(jp_fetch, sid, answered["decision"])
            assert leak is not None and leak["columns"] == ["complained"], status["log"][-5:]
            edited = await a.call("dcpilot_edit_plan", session_id=sid, op="params",
                                  step=next(s["id"] for s in status["plan"] if s["episode"] == "split"),
                                  params={"test_size": 0.25}, reason="a larger holdout")
            assert (edited["edit"]["by"], edited["edit"]["source"]) == ("agent", f"agent {persona}")
            answered = await a.call("dcpilot_answer_decision", session_id=sid, decision_id=leak["id"], choice="drop",
                                    rationale="filed after the churn")
            assert answered["outcome"] == "decided"
            assert (answered["decision"]["by"], answered["decision"]["choice"]) == ("agent", "drop")

            async def leak_step_done():
                state = await a.call("dcpilot_status", session_id=sid)
                step = next(s for s in state["plan"] if s["decision_id"] == leak["id"])
                return state if step["status"] == "done" else None

            status = await tss.wait_for(leak_step_done, "the leakage step to run")
            notes = [m["source"] for m in frontend.requests("insert_markdown")]
            assert any(f"decided by agent {persona}" in n for n in notes), notes
            assert any(f"Plan edited by agent {persona}" in n for n in notes), notes
            checkpoint = next(c["id"] for c in status["checkpoints"] if c["step_id"] == answered["decision"]["step_id"])
            undone = await a.call("dcpilot_undo", session_id=sid, checkpoint_id=checkpoint)
            again = next(d for d in undone["decisions"] if d["id"] == leak["id"])
            assert again["choice"] is None and again["proposal"] is None
            assert again["history"][-1]["by"] == "agent" and again["history"][-1]["proposal"]["agent"] == persona
            texts = [e["text"] for e in registry.get(sid).session.transcript]
            assert any(t.startswith(f"agent {persona} decided 'drop' for decision {leak['id']}") for t in texts)
            assert any(t.startswith(f"agent {persona} set test_size=0.25") for t in texts), texts
            assert f"agent {persona} undid the work back to checkpoint {checkpoint}" in texts
            with pytest.raises(ToolFailed, match="no co-pilot session"):
                await a.call("dcpilot_status", session_id="0" * 32)
    finally:
        if serving is not None:
            serving.cancel()
        await registry.close()
        client.stop_channels()


async def test_an_agent_gives_the_codebook_next_to_the_notebook(jp_fetch, jp_serverapp, jp_root_dir, registry) -> None:
    from codebook_data import redcap_project

    files = redcap_project(jp_root_dir / "study", n=120)
    client = await notebook_with(jp_fetch, jp_serverapp, "study/nb.ipynb",
                                 f"import pandas as pd\ndf = pd.read_csv({str(files['export'])!r})")
    try:
        async with agent(jp_serverapp) as a:
            bare = await a.call("dcpilot_diagnose", notebook="study/nb.ipynb", frame="df", target="death")
            assert "hosp_ref" not in {f["columns"][0] for f in bare["findings"] if f["kind"] == "id_column"}
            found = await a.call("dcpilot_diagnose", notebook="study/nb.ipynb", frame="df", target="death",
                                 dictionary="dictionary.csv", events="mapping.csv")
            ids = {f["columns"][0] for f in found["findings"] if f["kind"] == "id_column"}
            assert {"hosp_ref", "phone", "dob"} <= ids  # only the codebook says so
            with pytest.raises(ToolFailed, match="not a file under the server root"):
                await a.call("dcpilot_start_session", notebook="study/nb.ipynb", frame="df", target="death",
                             dictionary="../../../etc/passwd")
            status = await a.call("dcpilot_start_session", notebook="study/nb.ipynb", frame="df", target="death",
                                  dictionary="dictionary.csv")
            assert registry.get(status["session_id"]).session.inputs.dictionary == str(files["dictionary"])
    finally:
        await registry.close()
        client.stop_channels()
