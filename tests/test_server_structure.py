"""The structure endpoints on a real server and kernel (issue 26): the session JSON's column
timeline and structural inferences, a column moved on the timeline, a structural question
answered by keeping the inferred value or taking an alternative."""

from __future__ import annotations

import json

import pytest
from test_persona import chat, say  # noqa: F401 (the chat fixture)
from test_server_sessions import get_session, kernel_client, post, start_notebook_kernel, wait_for
from tornado.httpclient import HTTPClientError

pytestmark = pytest.mark.timeout(240)
API = ("dcpilot", "api", "sessions")
# an ordered 0-10 score: regression by default, with low confidence (classification the alternative)
ORDINAL_FRAME = (
    "import numpy as np, pandas as pd\n"
    "rng = np.random.default_rng(1)\n"
    "n = 800\n"
    "x = rng.normal(size=n)\n"
    "df = pd.DataFrame({'x': x, 'z': rng.normal(size=n),\n"
    "                   'ideology': np.clip(np.round(5 + 2 * x + rng.normal(size=n)), 0, 10).astype(int)})\n"
)


async def notebook_kernel(jp_fetch, jp_serverapp, notebook: str, code: str):
    """The notebook's kernel, started as JupyterLab starts it, that has run ``code``; a client on it
    with the panel's session id (the caller stops its channels)."""
    client = kernel_client(jp_serverapp, await start_notebook_kernel(jp_fetch, notebook), "panel")
    await client.wait_for_ready(timeout=60)
    await client.execute_interactive(code, timeout=60)
    return client


async def refused(jp_fetch, *parts: str, body: dict) -> tuple[int, str]:
    with pytest.raises(HTTPClientError) as info:
        await post(jp_fetch, *parts, body=body)
    return info.value.code, json.loads(info.value.response.body)["message"]


@pytest.mark.slow
async def test_the_timeline_and_the_structural_questions_over_rest(jp_fetch, jp_serverapp, registry, no_llm) -> None:
    client = await notebook_kernel(jp_fetch, jp_serverapp, "o.ipynb", ORDINAL_FRAME)
    try:
        created = await post(jp_fetch, *API, body={"path": "o.ipynb", "frame": "df", "target": "ideology",
                                                   "approve": {"*": "recommended", "task": "ask"}})
        sid = created["id"]

        async def task_card():
            state = await get_session(jp_fetch, sid)
            return state if state["state"] == "blocked" and state["decisions"] else None

        state = await wait_for(task_card, "the task card")
        task = {i["id"]: i for i in state["inferences"]}["task"]
        assert task["value"] == "regression" and task["confidence"] == "low"
        assert [a["value"] for a in task["alternatives"]] == ["classification"]
        (card,) = state["decisions"]
        assert "Unsure of the task" in card["question"] and card["options"][1]["id"] == "classification"
        assert set(state["timeline"]["columns"]) >= {"x", "z"} and state["timeline"]["moves"] == []

        # a column moved on the timeline: given, in its group, and a finding asks to drop it
        moved = await post(jp_fetch, *API, sid, "timeline",
                           body={"column": "z", "group": "during_follow_up", "rationale": "measured a year later"})
        z = moved["timeline"]["columns"]["z"]
        assert (z["group"], z["confidence"]) == ("during_follow_up", "given")
        assert "z" in moved["timeline"]["groups"]["during_follow_up"]
        assert moved["timeline"]["moves"][0]["via"] == "panel"
        (late,) = [f for f in moved["findings"] if f["evidence"].get("source") == "timeline"]
        assert late["columns"] == ["z"] and late["options"][0]["id"] == "drop"
        assert (await refused(jp_fetch, *API, sid, "timeline", body={"column": "zz", "group": "baseline"}))[0] == 404
        code, message = await refused(jp_fetch, *API, sid, "timeline", body={"column": "x", "group": "later"})
        assert code == 400 and "not a place on the timeline" in message

        # a structural question: a value it does not offer, an inference that is not one
        code, message = await refused(jp_fetch, *API, sid, "inferences", "task", body={"value": "ordinal"})
        assert code == 409 and "say one of" in message
        assert (await refused(jp_fetch, *API, sid, "inferences", "nosuch", body={"value": 1}))[0] == 404
        # keeping the inferred value confirms it (the card still waits)
        kept = await post(jp_fetch, *API, sid, "inferences", "task", body={"value": "regression"})
        task = {i["id"]: i for i in kept["inferences"]}["task"]
        assert task["confidence"] == "given" and "Confirmed by the user in the panel" in task["evidence"][0]
        assert kept["decisions"][0]["choice"] is None
        # an alternative is the task card's option for it: the open card takes it, by the user
        taken = await post(jp_fetch, *API, sid, "inferences", "task",
                           body={"value": "classification", "rationale": "ordered classes"})
        decision = taken["decisions"][0]
        assert (decision["choice"], decision["by"], decision["via"]) == ("classification", "user", "panel")
        assert {i["id"]: i for i in taken["inferences"]}["task"]["value"] == "classification"
    finally:
        await registry.close()
        client.stop_channels()


@pytest.mark.slow
async def test_the_chat_places_a_column_on_the_timeline(chat, jp_fetch, jp_serverapp, registry) -> None:  # noqa: F811
    client = await notebook_kernel(jp_fetch, jp_serverapp, "c.ipynb", ORDINAL_FRAME)
    try:
        created = await post(jp_fetch, *API, body={"path": "c.ipynb", "frame": "df", "target": "ideology"})
        await wait_for(lambda: _blocked(jp_fetch, created["id"]), "the task card")
        reply = await say(chat, "put `z` in follow-up: measured a year later")
        assert "Done: `z` is now during follow up on the column timeline" in reply
        (move,) = registry.get(created["id"]).session.structure.moves
        assert (move.column, move.group, move.via, move.rationale) == ("z", "during_follow_up", "chat",
                                                                        "measured a year later")
        assert "Could not place it" in await say(chat, "put `zz` in follow-up")
        assert "not a place on the timeline" in await say(chat, "put `x` in limbo")
    finally:
        await registry.close()
        client.stop_channels()


async def _blocked(jp_fetch, sid: str):
    state = await get_session(jp_fetch, sid)
    return state if state["state"] == "blocked" else None


@pytest.mark.slow
async def test_the_structure_section_groups_a_hidden_panels_blocks_as_the_task_card_does(
        jp_fetch, jp_serverapp, registry, no_llm, tmp_path) -> None:
    """A hidden panel (issue 26): the entity's question in the structure section offers the task
    card's own block options (one definition), and answering there is the card's answer, by the user."""
    from test_block_ids import households

    households(n=40).to_csv(tmp_path / "households.csv", index=False)
    client = await notebook_kernel(jp_fetch, jp_serverapp, "h.ipynb",
                                   f"import pandas as pd\ndf = pd.read_csv({str(tmp_path / 'households.csv')!r})")
    try:
        created = await post(jp_fetch, *API, body={"path": "h.ipynb", "frame": "df", "target": "income",
                                                   "approve": {"*": "recommended", "task": "ask"}})
        sid = created["id"]

        async def task_card():
            state = await get_session(jp_fetch, sid)
            return state if state["state"] == "blocked" and state["decisions"] else None

        state = await wait_for(task_card, "the task card")
        (card,) = state["decisions"]
        entity = {i["id"]: i for i in state["inferences"]}["entity"]
        assert entity["value"] is None and entity["confidence"] == "low"
        on_card = [o for o in card["options"] if o["id"] in ("blocks", "entity:none")]
        assert [{k: v for k, v in o.items() if k != "value"} for o in entity["options"]] == on_card
        assert [o["value"] for o in entity["options"]] == ["blocks", None]
        assert entity["options"][0]["label"] == "Group the rows in blocks of 6 consecutive records (one entity each)"

        taken = await post(jp_fetch, *API, sid, "inferences", "entity", body={"value": "blocks"})
        decision = taken["decisions"][0]
        assert (decision["choice"], decision["by"], decision["via"]) == ("blocks", "user", "panel")
        entity = {i["id"]: i for i in taken["inferences"]}["entity"]
        assert entity["value"] == "blocks" and entity["confidence"] == "given"
        assert "Confirmed by the user in the panel" in entity["evidence"][0]
    finally:
        await registry.close()
        client.stop_channels()
