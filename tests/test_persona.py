"""The DCPilot persona in a real Jupyter AI chat (YChat + PersonaManager) over real server sessions:
it answers, explains and takes instructions, starts the co-pilot from a chat message, and plans
with the model jupyter-ai is configured with."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from importlib.metadata import entry_points

import pytest
from fake_anthropic import FakeAnthropic
from jupyter_ai_persona_manager import PersonaManager
from jupyterlab_chat.models import Message, NewMessage, NotebookAttachment
from jupyterlab_chat.ychat import YChat
from test_engine_claude import plan_answer
from test_server_sessions import Frontend, get_session, kernel_client, post, start_notebook_kernel, wait_for
from test_server_sessions_api import API, notebook_with_frame

from jupyter_dcpilot.jupyter_ai_persona import DCPilotPersona

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
    await persona.on_message(message)  # as the PersonaManager routes it: specs applied, then processed
    reply = ychat.get_messages()[-1]
    assert reply.sender == persona.id and reply.id != message_id
    return reply.body


@pytest.mark.slow
async def test_persona_explains_and_answers_decisions_through_the_session(chat, jp_fetch, jp_ws_fetch,
                                                                          jp_serverapp, registry) -> None:
    ychat, persona = chat
    assert persona.name == "DCPilot" and persona.defaults.model_uid is None
    assert "No co-pilot session is running. Say `` check `<frame>` for `<target>` ``" in await say(chat, "status")
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
    from jupyter_dcpilot.engine.wire import DecisionOption
    from jupyter_dcpilot.jupyter_ai_persona import find_decision, option_id, session_words, summary_markdown

    session = Session(frame="df")
    session.plan = [Step(id="s1", episode="remove_leakage", title="Remove leakage: x", status="awaiting_decision",
                         gate="leakage", columns=["x"], decision_id="d1-0a1b2c3d")]
    session.decisions = [Decision(id="d1-0a1b2c3d", step_id="s1", gate="leakage", question="Does x leak?", columns=["x"],
                                  options=[DecisionOption("drop", "Drop x", "", ""), DecisionOption("keep", "Keep", "", "")],
                                  recommended="drop")]
    decision, problem = find_decision(session, "")
    assert decision.id == "d1-0a1b2c3d" and problem is None
    assert find_decision(session, "d1")[0] is decision and find_decision(session, "`x`")[0] is decision
    assert find_decision(session, "y")[0] is None and "No open decision matches" in find_decision(session, "y")[1]
    assert option_id(decision, "Drop X") == "drop" and option_id(decision, "reject") == "skip"
    assert option_id(decision, "clip") is None
    text = summary_markdown(session)
    assert "1 awaiting_decision" in text and "`d1-0a1b2c3d` (leakage: x)" in text and "`drop` (recommended)" in text
    assert "Valid model" not in text  # no model yet, no verdict
    assert session_words(session) == "on df: idle, 0 decisions answered, 0 steps done"
    session.decide("d1-0a1b2c3d", "drop", by="user")
    session.plan[0].status = "done"
    assert session_words(session) == "on df: idle, 1 decision answered, 1 step done"
    session.validity = [{"check": "known_at_index", "passed": False, "detail": "the 'last' of all records"}]
    assert "❌ **known_at_index**: the 'last' of all records" in summary_markdown(session)


def test_persona_uses_the_engine_model_configuration(chat, monkeypatch, tmp_path) -> None:
    _, persona = chat
    # the settings the server reads: c.DCPilot in the Jupyter config folder; the key from the environment
    (tmp_path / "jupyter_server_config.json").write_text(json.dumps({"DCPilot": {"model": "claude-test-2"}}))
    monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(tmp_path))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    defaults = persona.defaults
    assert defaults.model_uid == "anthropic:claude-test-2" and defaults.name == "DCPilot"
    assert defaults.avatar_path.endswith(".svg") and open(defaults.avatar_path).read().startswith("<svg")


def test_why_answers_per_column_from_the_decision_log() -> None:
    from jupyter_dcpilot.engine.session import Decision, Session, Step
    from jupyter_dcpilot.engine.wire import DecisionOption
    from jupyter_dcpilot.jupyter_ai_persona import why_markdown

    session = Session(frame="df")
    session.variables["columns"] = ["x", "uid", "z"]
    session.plan = [Step(id="s1", episode="remove_leakage", title="Remove leakage: x", status="done",
                         gate="leakage", columns=["x"], decision_id="d1-aa"),
                    Step(id="s2", episode="drop_identifiers", title="Drop identifiers: uid", status="done",
                         columns=["uid"], reason="'uid' is an identifier")]
    session.decisions = [Decision(id="d1-aa", step_id="s1", gate="leakage", question="Does x leak?", columns=["x"],
                                  evidence={"score": 0.99}, options=[DecisionOption("drop", "Drop x", "", "")],
                                  recommended="drop", choice="drop", by="policy", at="t",
                                  history=[{"choice": "keep", "by": "user", "undone": "undone by the user"}])]
    text = why_markdown(session, "why did you drop x, uid and `z`?")
    assert "**Drop x** was chosen by the approval policy at t (the recommended option)" in text
    assert "Evidence: Score: 0.99." in text
    assert "Earlier answer `keep` by the analyst was undone" in text
    assert "Drop identifiers: uid** (done) needed no decision (no gate): 'uid' is an identifier" in text
    assert "Nothing has been decided about `z` yet." in text
    assert "Which column" in why_markdown(session, "why?")


# a follow-up study: a survival target with its time, missing values in one lab value
VISITS = (
    "import numpy as np, pandas as pd\n"
    "rng = np.random.default_rng(1)\n"
    "n = 160\n"
    "age = rng.normal(60, 10, n).round()\n"
    "bili = rng.gamma(2, 1, n).round(2)\n"
    "risk = 0.04 * (age - 60) + 0.3 * (bili - 2)\n"
    "futime = np.maximum(30, (rng.exponential(1500, n) * np.exp(-risk)).round()).astype(int)\n"
    "death = (rng.random(n) < 1 / (1 + np.exp(-risk))).astype(int)\n"
    "visits = pd.DataFrame({'age': age, 'bili': np.where(rng.random(n) < 0.2, np.nan, bili),\n"
    "                       'futime': futime, 'death': death})\n"
    "other = pd.DataFrame({'x': range(5)})\n"
)


async def notebook_running(jp_fetch, jp_serverapp, path: str, code: str, username: str):
    kernel_id = await start_notebook_kernel(jp_fetch, path)
    client = kernel_client(jp_serverapp, kernel_id, username)
    await client.wait_for_ready(timeout=60)
    await client.execute_interactive(code, timeout=60)
    return client


def persona_posts(chat) -> list[str]:
    ychat, persona = chat
    return [m.body for m in ychat.get_messages() if m.sender == persona.id]


def reloaded(jp_serverapp, jp_root_dir, persona):
    """The chat after a page reload: its persona manager was stopped, a new one serves the chat."""
    ychat = YChat()
    ychat.initial_path = "copilot.chat"
    manager = PersonaManager(parent=jp_serverapp, chat=ychat, root_dir=str(jp_root_dir),
                             event_loop=asyncio.get_event_loop())
    (new,) = [p for p in manager.personas.values() if isinstance(p, DCPilotPersona)]
    assert new is not persona
    return ychat, new


async def test_chat_starts_the_copilot_and_its_questions_are_answered_in_chat_and_panel(
        chat, jp_fetch, jp_ws_fetch, jp_serverapp, jp_root_dir, registry) -> None:
    ychat, persona = chat
    study = await notebook_running(jp_fetch, jp_serverapp, "study.ipynb", VISITS, "panel")
    single = await notebook_with_frame(jp_fetch, jp_serverapp, "single.ipynb", username="other")
    serving = None
    try:
        # which notebook, which DataFrame, which column: asked back, nothing started
        assert "Which notebook?" in await say(chat, "check for `death`")
        reply = await say(chat, "check for `death` in `study.ipynb`")
        assert "Which DataFrame of `study.ipynb`?" in reply
        assert "`visits` (160 rows × 4 columns)" in reply and "`other` (5 rows × 1 columns)" in reply
        assert "has no DataFrame `vists`" in await say(chat, "check `vists` for `death`", attach="study.ipynb")
        reply = await say(chat, "check `visits` for `deth`", attach="study.ipynb")
        assert "**visits** has no column `deth`" in reply and "Did you mean `death`?" in reply
        assert registry.sessions() == []

        reply = await say(chat, "check `visits` for `death` with time `futime`", attach="study.ipynb")
        assert ("Started the co-pilot on **visits** in `study.ipynb`, predicting `death` with time `futime`, "
                "planning with the rule planner") in reply
        (hosted,) = registry.sessions("study.ipynb")
        s = hosted.session
        assert (s.frame, s.task.given.target, s.task.given.time) == ("visits", "death", "futime")
        assert s.settings["approve"] == "ask" and s.settings["planner"] == "rules"
        assert "A co-pilot session already runs on `study.ipynb`" in await say(
            chat, "check `visits` for `death`", attach="study.ipynb")

        # the panel finds the session the chat started (as it looks for one) and connects
        listed = json.loads((await jp_fetch(*API, params={"path": "study.ipynb"})).body)["sessions"]
        assert [x["id"] for x in listed] == [hosted.id]
        ws = await jp_ws_fetch(*API, hosted.id, "events")
        frontend = Frontend(ws, study)
        serving = asyncio.create_task(frontend.serve())

        async def card(gate: str):
            waiting = [d for d in s.open_decisions() if d.gate == gate]
            posts = [p for p in persona_posts(chat) if waiting and f"(`{waiting[0].id}`, {gate}" in p]
            return (waiting[0], posts[-1]) if posts else None

        # the task question comes to the chat, and is answered there
        task, text = await wait_for(lambda: card("task"), "the task question in the chat", timeout=120)
        assert "asks" in text and "`confirm` **Confirm** (recommended)" in text and "Say `approve`" in text
        assert "Recorded **Confirm** (`confirm`)" in await say(chat, "approve", attach="study.ipynb")
        assert (task.choice, task.by) == ("confirm", "user")

        # issue 29, 5: the page is reloaded ("Chat ... stopped. Shutting down persona manager"): the
        # chat's new persona follows on, later questions and the verdict included
        await persona.shutdown()
        chat = reloaded(jp_serverapp, jp_root_dir, persona)

        # the imputation question comes to the chat too, and is answered in the panel
        impute, text = await wait_for(lambda: card("imputation"), "the imputation question", timeout=180)
        assert "`impute_median`" in text and "(recommended)" in text
        await post(jp_fetch, *API, hosted.id, "decisions", impute.id, body={"choice": "impute_median"})
        assert (impute.choice, impute.by) == ("impute_median", "user")

        async def finished():
            return any("has finished" in p and "`study.ipynb`" in p for p in persona_posts(chat))

        await wait_for(finished, "the end of the run in the chat", timeout=240)
        assert s.state == "finished" and all(d.by == "user" for d in s.decisions)
        end = next(p for p in persona_posts(chat) if "has finished" in p)
        assert "*Valid model:*" in end and "**holdout_confirms_cv**" in end  # the verdict, check by check
        assert sum(f"(`{impute.id}`" in p for p in persona_posts(chat)) == 1  # each question once
        # issue 29, 8: an answer given in the chat has its markdown cell in the notebook, as the panel's
        noted = {(c["metadata"] or {}).get("dcpilot", {}).get("decision") for c in frontend.cells.values()
                 if c["type"] == "insert_markdown"}
        assert {task.id, impute.id} <= noted and task.via == "chat" and impute.via == "panel"

        # a notebook with a single DataFrame: that one, without naming it
        reply = await say(chat, "check for `churned` with rules", attach="single.ipynb")
        assert "Started the co-pilot on **df** in `single.ipynb`, predicting `churned`" in reply
        assert registry.sessions("single.ipynb")[0].session.frame == "df"

        # issue 29, 6: two live sessions; "approve" in the chat answers the one of this chat that
        # asks, and a notebook named in words is the session meant (no paperclip needed)
        s = registry.sessions("single.ipynb")[0].session
        await wait_for(lambda: card("task"), "the task question of single.ipynb", timeout=120)
        assert "Co-pilot on **visits** in `study.ipynb`" in await say(chat, "status in `study.ipynb`")
        assert "Recorded **Confirm** (`confirm`)" in await say(chat, "approve")
        assert s.decisions[0].choice == "confirm" and s.decisions[0].via == "chat"
    finally:
        if serving is not None:
            serving.cancel()
        await registry.close()
        study.stop_channels()
        single.stop_channels()


def test_start_messages_are_read_by_rules() -> None:
    from jupyter_dcpilot.jupyter_ai_persona import START, claude_id, parse_start

    def parsed(text: str) -> dict | None:
        match = START.match(text)
        return parse_start(match) if match else None

    assert parsed("check `visits` for `death` with time `futime`") == {
        "frame": "visits", "target": "death", "time": "futime", "notebook": None, "replace": False,
        "rules": False, "dictionary": None, "events": None}
    assert parsed("start over on df predicting churned in `a/b c.ipynb` without the LLM") == {
        "frame": "df", "target": "churned", "time": None, "notebook": "a/b c.ipynb", "replace": True,
        "rules": True, "dictionary": None, "events": None}
    assert parsed("analyse the frame `my visits` for y")["frame"] is None  # not a variable name
    assert parsed("check for `death`")["frame"] is None
    assert parsed("please check visits") is None and parsed("checkout df") is None
    assert claude_id("anthropic/claude-sonnet-4-5") == "claude-sonnet-4-5"
    assert claude_id("anthropic:claude-3-5-haiku") == "claude-3-5-haiku" == claude_id("claude-3-5-haiku")
    assert claude_id("openai/gpt-4o") is None and claude_id("bedrock/anthropic.claude-v2") is None


class ChatModelConfig:
    """Where jupyter-ai 3 keeps the chat model the user configured (the ``chat_model`` property of
    jupyter_ai_jupyternaut's ConfigManager, in the server settings under
    ``jupyternaut.config_manager``); that extension is not installed here."""

    def __init__(self, chat_model: str | None) -> None:
        self.chat_model = chat_model


async def test_the_chat_plans_with_the_model_jupyter_ai_is_configured_with(
        chat, jp_fetch, jp_serverapp, registry, monkeypatch, tmp_path) -> None:
    ychat, persona = chat
    client = await notebook_with_frame(jp_fetch, jp_serverapp, "m.ipynb")
    settings = jp_serverapp.web_app.settings
    with FakeAnthropic(respond=lambda body: plan_answer()) as fake:
        # the co-pilot's own settings (c.DCPilot, read by the server and the persona) name another model
        (tmp_path / "jupyter_server_config.json").write_text(json.dumps({"DCPilot": {"model": "claude-own-1"}}))
        monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(tmp_path))
        monkeypatch.setattr(settings["dcpilot_settings"], "model", "claude-own-1")
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        try:
            monkeypatch.setitem(settings, "jupyternaut.config_manager", ChatModelConfig("anthropic/claude-jai-2"))
            assert persona.defaults.model_uid == "anthropic:claude-jai-2"
            reply = await say(chat, "check `df` for `churned`", attach="m.ipynb")
            assert "planning with Claude (`claude-jai-2`)" in reply
            await wait_for(lambda: _asked(fake), "the first plan request")
            assert {r["model"] for r in fake.requests} == {"claude-jai-2"}
            assert all(t["strict"] for t in fake.requests[0]["tools"])

            # a model picked for this persona in the chat (message metadata) wins
            await persona.prepare()
            offered = [o.id for o in persona.get_model_configuration().options]
            assert offered[:2] == ["anthropic/claude-jai-2", "anthropic/claude-own-1"]
            ychat_id = ychat.add_message(NewMessage(body="@DCPilot start over on `df` for `churned`",
                                                    sender="analyst"))
            picked = dataclasses.replace(ychat.get_message(ychat_id),  # attached: replaced without asking
                                         attachments=[ychat.set_attachment(NotebookAttachment(value="m.ipynb"))],
                                         metadata={"model": {"id": "anthropic/claude-picked-3"}})
            sent = len(fake.requests)
            await persona.on_message(picked)
            assert "planning with Claude (`claude-picked-3`)" in ychat.get_messages()[-1].body
            await wait_for(lambda: _asked(fake, sent), "the replaced session's plan request")
            assert fake.requests[sent]["model"] == "claude-picked-3"
            assert persona.get_model() == "anthropic/claude-picked-3"

            # jupyter-ai configured with another provider's model: the co-pilot's own, and it says so
            unpicked = persona.get_model_configuration()
            unpicked.current = None  # back to the persona's default
            persona.report_model_configuration(unpicked)
            settings["jupyternaut.config_manager"] = ChatModelConfig("openai/gpt-4o")
            reply = await say(chat, "start over on `df` for `churned`", attach="m.ipynb")
            assert "planning with Claude (`claude-own-1`)" in reply
            assert "jupyter-ai's model `openai/gpt-4o` is not a Claude model" in reply
            # and a non-Claude model picked for this persona is refused, visibly
            refused = ychat.add_message(NewMessage(body="@DCPilot status", sender="analyst"))
            await persona.on_message(dataclasses.replace(ychat.get_message(refused),
                                                         metadata={"model": {"id": "openai/gpt-4o"}}))
            assert "not a Claude model" in ychat.get_messages()[-1].body
        finally:
            await registry.close()
            client.stop_channels()


async def _asked(fake: FakeAnthropic, after: int = 0) -> bool:
    return len(fake.requests) > after
