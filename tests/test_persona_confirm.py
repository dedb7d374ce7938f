"""The chat never ends a session on words alone: a start on a notebook not attached to the
message, that would end a live session (or one saved for another DataFrame), asks first and names
it; only the same person's "yes" carries it out."""

from __future__ import annotations

import pytest
from test_persona import chat, say  # noqa: F401 (the chat fixture)
from test_server_sessions_api import API, notebook_with_frame
from tornado.httpclient import HTTPClientError

from jupyter_dcpilot.engine.session import Session, sidecar_path
from jupyter_dcpilot.engine.task import Given, Task

pytestmark = pytest.mark.timeout(240)


async def answers(jp_fetch, sid: str) -> int:
    try:
        return (await jp_fetch(*API, sid)).code
    except HTTPClientError as error:
        return error.code


async def test_replacing_a_session_on_a_notebook_not_attached_asks_first(chat, jp_fetch, jp_serverapp,  # noqa: F811
                                                                          jp_root_dir, registry) -> None:
    client = await notebook_with_frame(jp_fetch, jp_serverapp, "other.ipynb")
    try:
        assert "Started the co-pilot" in await say(chat, "check `df` for `churned`", attach="other.ipynb")
        (first,) = registry.sessions("other.ipynb")
        asked = await say(chat, "start over on `df` for `churned` in `other.ipynb`")
        assert "`other.ipynb` is not attached to your message" in asked
        assert f"its live co-pilot session `{first.id[:8]}` (on df, predicting churned:" in asked
        assert "Say `yes` to end it" in asked
        assert registry.sessions("other.ipynb") == [first] and await answers(jp_fetch, first.id) == 200

        await say(chat, "no, keep it")  # anything but yes: nothing ends, and the question is gone
        assert registry.sessions("other.ipynb") == [first]
        await say(chat, "yes")
        assert registry.sessions("other.ipynb") == [first] and await answers(jp_fetch, first.id) == 200

        await say(chat, "start over on `df` for `churned` in `other.ipynb`")
        done = await say(chat, "yes")
        assert "Started the co-pilot on **df** in `other.ipynb`" in done
        (second,) = registry.sessions("other.ipynb")
        assert second.id != first.id and await answers(jp_fetch, first.id) == 404

        # attached: the user pointed at it, so it is replaced at once, as before
        assert "Started the co-pilot" in await say(chat, "start over on `df` for `churned`", attach="other.ipynb")
        assert registry.sessions("other.ipynb")[0].id != second.id
    finally:
        await registry.close()
        client.stop_channels()


async def test_a_session_saved_for_another_frame_is_named_before_it_is_replaced(chat, jp_fetch, jp_serverapp,  # noqa: F811
                                                                                jp_root_dir, registry) -> None:
    notebook = jp_root_dir / "saved.ipynb"
    Session(notebook=str(notebook), path=str(sidecar_path(notebook)), frame="visits",
            task=Task(given=Given(target="death"))).save()
    client = await notebook_with_frame(jp_fetch, jp_serverapp, "saved.ipynb")
    try:
        asked = await say(chat, "check `df` for `churned` in `saved.ipynb`")
        assert "the session saved beside it (on visits, predicting death: idle" in asked
        assert registry.sessions() == [] and Session.load(sidecar_path(notebook)).frame == "visits"
    finally:
        await registry.close()
        client.stop_channels()
