"""The column timeline in Jupyter AI's chat (issue 26, item 5): Claude's timing proposals — asked
through the real ``anthropic`` SDK against the fake Messages API — are posted to the chat when
they arrive and shown by ``timeline``, as proposals: nothing moved, nothing confirmed, until the
person places the column (``put `x` in baseline``), the panel's path."""

from __future__ import annotations

import json

import pytest
from fake_anthropic import FakeAnthropic, tool_use
from test_engine_claude import plan_answer
from test_magics_timeline import FRAME  # two columns whose names alone place them later (to confirm)
from test_persona import chat, notebook_running, persona_posts, say  # noqa: F401 (the chat fixture)
from test_server_sessions import wait_for

pytestmark = pytest.mark.timeout(240)

REASONS = {"albumin_at_discharge": ("baseline", "albumin is drawn at admission in this study"),
           "sample_received_min": ("at_or_after_outcome", "the turnaround of the sample behind the result")}


def respond(body: dict) -> dict:
    """Claude's answers: a place for each column it is asked about, an empty plan otherwise."""
    if any(t["name"] == "propose_timings" for t in body.get("tools", [])):
        asked = [c["name"] for c in json.loads(body["messages"][0]["content"])["asked"]]
        return tool_use("propose_timings", {"proposals": [
            {"column": c, "group": REASONS[c][0], "reason": REASONS[c][1]} for c in asked if c in REASONS]})
    return plan_answer()


async def test_the_chat_shows_claudes_timing_proposals_as_proposals(chat, jp_fetch, jp_serverapp, registry,  # noqa: F811
                                                                     monkeypatch) -> None:
    client = await notebook_running(jp_fetch, jp_serverapp, "t.ipynb", FRAME, "panel")
    try:
        with FakeAnthropic(respond=respond) as fake:
            monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
            monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
            reply = await say(chat, "check `df` for `y`", attach="t.ipynb")
            assert "planning with Claude" in reply

            async def posted():
                return next((p for p in persona_posts(chat) if "proposes where" in p), None)

            post = await wait_for(posted, "Claude's proposals in the chat", timeout=180)
            (hosted,) = registry.sessions("t.ipynb")
            s = hosted.session
            assert any(t["name"] == "propose_timings" for r in fake.requests for t in r.get("tools", []))
            assert "`t.ipynb`: Claude proposes where 2 columns of the timeline belong" in post and "nothing is moved" in post
            assert ("- `albumin_at_discharge` (now during follow-up, to confirm): Claude proposes baseline: "
                    "albumin is drawn at admission in this study (a proposal, nothing moved: "
                    "``put `albumin_at_discharge` in baseline`` takes it)") in post
            assert ("`sample_received_min` (now at or after the outcome, to confirm): Claude proposes at or after the "
                    "outcome: the turnaround of the sample behind the result (a proposal, nothing moved: "
                    "``put `sample_received_min` in outcome`` takes it)") in post
            # nothing moved, nothing confirmed
            card = s.structure.card()
            assert s.structure.moves == [] and card.columns["albumin_at_discharge"].group == "during_follow_up"
            assert card.columns["albumin_at_discharge"].confidence == "low"

            shown = await say(chat, "show the timeline", attach="t.ipynb")
            follow_up = shown.split("**During follow-up**")[1].split("**At or after the outcome**")[0]
            assert "`albumin_at_discharge` · ⚠ to confirm" in follow_up
            assert "*Claude proposes baseline: albumin is drawn at admission in this study" in follow_up
            assert "``put `x` in follow-up``" in shown and "%dctimeline" not in shown

            said = await say(chat, "put `albumin_at_discharge` in baseline: drawn at admission", attach="t.ipynb")
            assert "`albumin_at_discharge` is now baseline on the column timeline (confirmed by you)" in said
            shown = await say(chat, "timeline", attach="t.ipynb")
            baseline = shown.split("**Baseline**")[1].split("**During follow-up**")[0]
            assert "`albumin_at_discharge` · moved by you" in baseline
            assert "moved here from during follow-up by you in the chat: drawn at admission" in baseline
            assert "Claude proposes baseline" not in baseline  # the person has said: no proposal left
            assert sum("proposes where" in p for p in persona_posts(chat)) == 1  # posted once
    finally:
        await registry.close()
        client.stop_channels()
