"""Plan edits from Jupyter AI's chat: the persona reads them by rules and applies them through the
same path as the panel's POST /plan (same checks, same record)."""

from __future__ import annotations

import asyncio

import pytest
from test_persona import chat, say  # noqa: F401 (the chat fixture)
from test_server_sessions import Frontend, get_session, post, wait_for
from test_server_sessions_api import API, notebook_with_frame

from jupyter_dcpilot.engine.session import Session, Step
from jupyter_dcpilot.jupyter_ai_persona import parse_edit

pytestmark = pytest.mark.timeout(240)


def test_plan_edits_are_read_by_rules_and_other_words_are_not():
    session = Session()
    session.plan = [Step(id="s7", episode="outliers", title="Handle outliers")]
    session.variables["columns"] = ["age", "bmi"]
    assert parse_edit(session, "skip s5") == {"op": "skip", "step": "s5"}
    assert parse_edit(session, "skip step `s5`") == {"op": "skip", "step": "s5"}
    assert parse_edit(session, "skip") is None and parse_edit(session, "skip d3") is None  # answers a decision
    assert parse_edit(session, "reopen s4") == {"op": "reopen", "step": "s4"}
    assert parse_edit(session, "move s7 after s6") == {"op": "move", "step": "s7", "after": "s6"}
    assert parse_edit(session, "add outliers on `age`, bmi") == {"op": "add", "episode": "outliers",
                                                                 "columns": ["age", "bmi"]}
    assert parse_edit(session, "set threshold=3 for s7") == {"op": "params", "step": "s7", "params": {"threshold": 3}}
    assert parse_edit(session, "set threshold to 2.5 on s7") == {"op": "params", "step": "s7",
                                                                 "params": {"threshold": 2.5}}
    assert parse_edit(session, "params s7: method=mad columns=age,bmi")["params"] == {"method": "mad",
                                                                                      "columns": ["age", "bmi"]}
    assert "must be a number" in parse_edit(session, "set threshold=high for s7")["error"]
    assert parse_edit(session, "please drop the outliers") is None


async def test_the_chat_edits_the_plan_like_the_panel(chat, jp_fetch, jp_ws_fetch, jp_serverapp,  # noqa: F811
                                                       registry) -> None:
    client = await notebook_with_frame(jp_fetch, jp_serverapp, "c.ipynb")
    created = await post(jp_fetch, *API, body={"path": "c.ipynb", "frame": "df", "target": "churned"})
    sid = created["id"]
    ws = await jp_ws_fetch(*API, sid, "events")
    serving = asyncio.create_task(Frontend(ws, client).serve())
    try:
        async def blocked():
            state = await get_session(jp_fetch, sid)
            return state if state["state"] == "blocked" else None

        state = await wait_for(blocked, "the task question")
        split = next(s for s in state["plan"] if s["episode"] == "split")
        explain = next(s for s in state["plan"] if s["episode"] == "explain")
        reply = await say(chat, f"skip {split['id']}")
        assert "Could not edit the plan" in reply and "a valid model needs it" in reply
        assert "Done: skipped" in await say(chat, f"skip {explain['id']}")
        reply = await say(chat, "add outliers on `age`")
        assert "Done: added" in reply
        session = registry.get(sid).session
        added = session.step(session.plan_edits[-1].step)
        assert added.columns == ["age"] and added.gate == "outliers"
        assert "Done: set threshold=2" in await say(chat, f"set threshold=2 for {added.id}")
        assert added.user_params == {"threshold": 2}
        assert [e.via for e in session.plan_edits] == ["chat", "chat", "chat"]
        assert all(e.by == "user" for e in session.plan_edits)
        assert "edit the plan" in await say(chat, "help")
    finally:
        serving.cancel()
        ws.close()
        await registry.close()
        client.stop_channels()
