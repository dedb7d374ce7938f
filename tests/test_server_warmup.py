"""The panel's warm-up (POST /dcpilot/api/warmup) against a real Jupyter server and kernel: the
kernel imports what the first diagnosis and the model step need in a background thread, answers
the user's requests meanwhile, and its user namespace and execution count stay as they were."""

from __future__ import annotations

import asyncio
import json

import pytest
from test_server import UserClient, start_notebook_kernel
from tornado.httpclient import HTTPClientError

from jupyter_dcpilot.probe import execute_request_content, parse_reply

pytestmark = pytest.mark.timeout(180)

WARM = ("kernel_tools.models", "kernel_tools.diagnosis.labels", "sklearn.ensemble", "sksurv.linear_model", "xgboost")
LOADED = f"__import__('json').dumps([m for m in {WARM!r} if m in __import__('sys').modules])"
WARMING = ("__import__('json').dumps(any(t.name == 'dcpilot-warm-up' and t.is_alive() "
           "for t in __import__('threading').enumerate()))")


async def silently(user: UserClient, expression: str):
    """``expression``'s value, evaluated as the co-pilot's probes are (nothing bound or counted)."""
    msg = user.client.session.msg("execute_request", execute_request_content(expression))
    user.client.shell_channel.send(msg)
    while True:
        reply = await user.client.get_shell_msg(timeout=30)
        if reply["parent_header"]["msg_id"] == msg["header"]["msg_id"]:
            return parse_reply(reply["content"])


async def warm_up(jp_fetch, **params) -> dict:
    response = await jp_fetch("dcpilot", "api", "warmup", method="POST", body="",
                              params={"path": "analysis.ipynb", **params})
    return json.loads(response.body)


async def test_the_panels_warm_up_imports_in_the_background_and_binds_nothing(jp_fetch, jp_serverapp) -> None:
    kernel_id = await start_notebook_kernel(jp_fetch)
    user = UserClient(jp_serverapp, kernel_id)
    try:
        await user.run("rows = [1, 2, 3]")
        count_before = (await user.run("pass"))["content"]["execution_count"]
        names_before = await user.names()
        assert await silently(user, LOADED) == []  # a fresh kernel: none of it yet

        state = await warm_up(jp_fetch, task="survival")
        assert state["running"] is True and state["pending"] == []
        # the kernel answers while the imports run: they are in a thread, not in its queue
        assert await silently(user, WARMING) is True
        for _ in range(240):
            state = await warm_up(jp_fetch, task="survival")  # a second call starts nothing new
            if not state["running"]:
                break
            await asyncio.sleep(0.5)
        assert state["running"] is False
        assert set(WARM) - {"kernel_tools.diagnosis.labels"} <= set(state["warmed"])
        assert await silently(user, LOADED) == list(WARM)

        assert await user.names() == names_before  # no new user variable
        assert (await user.run("pass"))["content"]["execution_count"] == count_before + 1
    finally:
        user.close()


async def test_warm_up_refuses_an_unknown_task_and_a_notebook_without_kernel(jp_fetch) -> None:
    with pytest.raises(HTTPClientError) as info:
        await warm_up(jp_fetch)
    assert info.value.code == 404  # no kernel for that notebook (yet): the panel tries again later
    await start_notebook_kernel(jp_fetch)
    with pytest.raises(HTTPClientError) as info:
        await warm_up(jp_fetch, task="clustering")
    assert info.value.code == 400 and "task must be one of" in info.value.response.body.decode()
