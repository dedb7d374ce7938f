"""The DCPilot persona in a real Jupyter AI chat (YChat + PersonaManager) over a real server session."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from importlib.metadata import entry_points

import pytest
from jupyter_ai_persona_manager import PersonaManager
from jupyterlab_chat.models import Message, NewMessage, NotebookAttachment
from jupyterlab_chat.ychat import YChat

from jupyter_dcpilot.jupyter_ai_persona import DCPilotPersona
from test_server_sessions import Frontend, get_session, post, wait_for
from test_server_sessions_api import API, notebook_with_frame

pytestmark = pytest.mark.timeout(240)
# everything before the split by policy except leakage; label issues (after the split) ask too
LEAKAGE_ASKS = {"*": "recommended", "leakage": "ask", "label_issues": "ask"}


def test_the_persona_entry_point_resolves() -> None:
    (point,) = [e for e in entry_points(group="jupyter_ai.personas") if e.name == "dcpilot"]
    assert point.load() is DCPilotPersona


@pytest.fixture
def chat(jp_serverapp, jp_root_dir, no_llm):
    """A real YChat whose PersonaManager (parent: the server app) loads personas by entry point."""
    ychat = YChat()
    ychat.initial_path = "copilot.chat"
    manager = PersonaManager(parent=jp_serverapp, chat=ychat, root_dir=str(jp_root_dir),
                             event_loop=asyncio.get_event_loop())
    (persona,) = [p for p in manager.personas.values() if isinstance(p, DCPilotPersona)]
    return ychat, persona


async def say(chat, text: str, attach: str | None = None) -> str:
    """Send a user message to the persona; return its reply."""
    ychat, persona = chat
    message_id = ychat.add_message(NewMessage(body=f"@DCPilot {text}", sender="analyst"))
    message: Message = ychat.get_message(message_id)
    if attach is not None:
        message = dataclasses.replace(message, attachments=[ychat.set_attachment(NotebookAttachment(value=attach))])
    await persona.process_message(message)
    reply = ychat.get_messages()[-1]
    assert reply.sender == persona.id and reply.id != message_id
    return reply.body


async def test_persona_explains_and_answers_decisions_through_the_session(chat, jp_fetch, jp_ws_fetch,
                                                                          jp_serverapp, registry) -> None:
    ychat, persona = chat
    assert persona.name == "DCPilot" and persona.defaults.model_uid is None
    assert "No co-pilot session is running" in await say(chat, "status")
    client = await notebook_with_frame(jp_fetch, jp_serverapp, "p.ipynb")
    created = await post(jp_fetch, *API, body={"path": "p.ipynb", "frame": "df", "target": "churned",
                                               "approve": LEAKAGE_ASKS})
    sid = created["id"]
    ws = await jp_ws_fetch(*API, sid, "events")
    serving = asyncio.create_task(Frontend(ws, client).serve())
    try:
        async def leakage_waits():
            state = await get_session(jp_fetch, sid)
            open_ = [d for d in state["decisions"] if d["gate"] == "leakage" and d["choice"] is None]
            return open_[0] if open_ and state["state"] == "blocked" else None

        decision = await wait_for(leakage_waits, "the leakage decision")
        status = await say(chat, "what is the plan?")
        assert "Waiting for you" in status and f"`{decision['id']}` (leakage: complained)" in status
        assert "`drop` (recommended)" in status
        assert "still open" in await say(chat, "why did you drop `complained`?")
        assert "not an option" in await say(chat, "choose shred")
        assert registry.get(sid).session.decision(decision["id"]).choice is None

        reply = await say(chat, "approve complained")
        assert "Recorded **" in reply and f"for decision `{decision['id']}` (leakage)" in reply
        answered = registry.get(sid).session.decision(decision["id"])
        assert (answered.choice, answered.by) == ("drop", "user")
        assert answered.rationale == "from the chat: approve complained"
        assert "was already answered: `drop` by the analyst" in await say(chat, f"choose keep for {decision['id']}")
        assert answered.choice == "drop"

        async def leak_step_done():
            state = await get_session(jp_fetch, sid)
            return any(s["id"] == decision["step_id"] and s["status"] == "done" for s in state["plan"])

        await wait_for(leak_step_done, "the leakage step to run", timeout=120)
        why = await say(chat, "Why did you drop complained?")
        assert "**Drop" in why and "chosen by the analyst" in why and "Evidence:" in why and "score" in why

        reply = await say(chat, "please also report the calibration of the model")
        assert "rule planner" in reply
        assert registry.get(sid).session.instructions[-1]["text"] == "please also report the calibration of the model"

        # a second notebook's session: the persona asks which, unless the message names it
        other = await notebook_with_frame(jp_fetch, jp_serverapp, "q.ipynb", username="other")
        second = await post(jp_fetch, *API, body={"path": "q.ipynb", "frame": "df", "target": "churned"})
        await wait_for(lambda: _blocked(jp_fetch, second["id"]), "the second session's task gate")
        assert "Which notebook do you mean?" in await say(chat, "approve")
        reply = await say(chat, "approve", attach="q.ipynb")
        assert "Recorded **Confirm** (`confirm`)" in reply
        task = registry.get(second["id"]).session.decisions[0]
        assert (task.gate, task.choice, task.by) == ("task", "confirm", "user")
        assert all(d.by != "user" or d.id == decision["id"] for d in registry.get(sid).session.decisions)
        assert "No co-pilot session runs on `none.ipynb`" in await say(chat, "status", attach="none.ipynb")
        other.stop_channels()
    finally:
        serving.cancel()
        ws.close()
        await registry.close()
        client.stop_channels()


async def _blocked(jp_fetch, session_id: str):
    state = await get_session(jp_fetch, session_id)
    return state if state["state"] == "blocked" else None


def test_reject_maps_to_skip_and_the_summary_lists_the_plan() -> None:
    from jupyter_dcpilot.engine.session import Decision, Session, Step
    from jupyter_dcpilot.jupyter_ai_persona import find_decision, option_id, summary_markdown

    session = Session(frame="df")
    session.plan = [Step(id="s1", episode="remove_leakage", title="Remove leakage: x", status="awaiting_decision",
                         gate="leakage", columns=["x"], decision_id="d1-0a1b2c3d")]
    session.decisions = [Decision(id="d1-0a1b2c3d", step_id="s1", gate="leakage", question="Does x leak?", columns=["x"],
                                  options=[{"id": "drop", "label": "Drop x"}, {"id": "keep", "label": "Keep"}],
                                  recommended="drop")]
    decision, problem = find_decision(session, "")
    assert decision.id == "d1-0a1b2c3d" and problem is None
    assert find_decision(session, "d1")[0] is decision and find_decision(session, "`x`")[0] is decision
    assert find_decision(session, "y")[0] is None and "No open decision matches" in find_decision(session, "y")[1]
    assert option_id(decision, "Drop X") == "drop" and option_id(decision, "reject") == "skip"
    assert option_id(decision, "clip") is None
    text = summary_markdown(session)
    assert "1 awaiting_decision" in text and "`d1-0a1b2c3d` (leakage: x)" in text and "`drop` (recommended)" in text


def test_persona_uses_the_engine_model_configuration(chat, monkeypatch, tmp_path) -> None:
    _, persona = chat
    config = tmp_path / "dcpilot.json"
    config.write_text(json.dumps({"api_key": "sk-test", "model": "claude-test-2"}))
    monkeypatch.setenv("DCPILOT_CONFIG", str(config))
    defaults = persona.defaults
    assert defaults.model_uid == "anthropic:claude-test-2" and defaults.name == "DCPilot"
    assert defaults.avatar_path.endswith(".svg") and open(defaults.avatar_path).read().startswith("<svg")


def test_why_answers_per_column_from_the_decision_log() -> None:
    from jupyter_dcpilot.engine.session import Decision, Session, Step
    from jupyter_dcpilot.jupyter_ai_persona import why_markdown

    session = Session(frame="df")
    session.variables["columns"] = ["x", "uid", "z"]
    session.plan = [Step(id="s1", episode="remove_leakage", title="Remove leakage: x", status="done",
                         gate="leakage", columns=["x"], decision_id="d1-aa"),
                    Step(id="s2", episode="drop_identifiers", title="Drop identifiers: uid", status="done",
                         columns=["uid"], reason="'uid' is an identifier")]
    session.decisions = [Decision(id="d1-aa", step_id="s1", gate="leakage", question="Does x leak?", columns=["x"],
                                  evidence={"score": 0.99}, options=[{"id": "drop", "label": "Drop x"}],
                                  recommended="drop", choice="drop", by="policy", at="t",
                                  history=[{"choice": "keep", "by": "user", "undone": "undone by the user"}])]
    text = why_markdown(session, "why did you drop x, uid and `z`?")
    assert "**Drop x** was chosen by the approval policy at t (the recommended option)" in text
    assert "Evidence: score" in text and "0.99" in text
    assert "Earlier answer `keep` by the analyst was undone" in text
    assert "Drop identifiers: uid** (done) needed no decision (no gate): 'uid' is an identifier" in text
    assert "Nothing has been decided about `z` yet." in text
    assert "Which column" in why_markdown(session, "why?")
