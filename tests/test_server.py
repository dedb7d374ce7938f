"""The server extension against a real Jupyter server and a real kernel."""

from __future__ import annotations

import json

import pytest
from jupyter_client.session import Session
from tornado.httpclient import HTTPClientError

from jupyter_dcpilot.probe import execute_request_content, parse_reply

pytestmark = pytest.mark.timeout(120)


async def start_notebook_kernel(jp_fetch, path: str = "analysis.ipynb") -> str:
    response = await jp_fetch(
        "api", "sessions", method="POST",
        body=json.dumps({"path": path, "type": "notebook", "name": path, "kernel": {"name": "python3"}}),
    )
    return json.loads(response.body)["kernel"]["id"]


class UserClient:
    """Stands in for the browser: its own kernel client and session id, running user code."""

    def __init__(self, serverapp, kernel_id: str) -> None:
        manager = serverapp.kernel_manager.get_kernel(kernel_id)
        self.client = manager.client(session=Session(key=manager.session.key, username="browser"))
        self.client.start_channels()

    async def run(self, code: str) -> dict:
        reply = await self.client.execute(code, reply=True, timeout=60)
        assert reply["content"]["status"] == "ok", reply["content"]
        return reply

    async def names(self) -> set[str]:
        content = execute_request_content("__import__('json').dumps(sorted(get_ipython().user_ns))")
        msg = self.client.session.msg("execute_request", content)
        self.client.shell_channel.send(msg)
        while True:
            reply = await self.client.get_shell_msg(timeout=30)
            if reply["parent_header"]["msg_id"] == msg["header"]["msg_id"]:
                return set(parse_reply(reply["content"]))

    def close(self) -> None:
        self.client.stop_channels()


async def test_status_reports_planners(jp_fetch, monkeypatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    body = json.loads((await jp_fetch("dcpilot", "api", "status")).body)
    assert body["planners"] == ["rules"]
    assert body["llm_configured"] is False
    assert body["version"]


async def test_frames_lists_polars_frames_and_profiles_them(jp_fetch, jp_serverapp) -> None:
    kernel_id = await start_notebook_kernel(jp_fetch)
    user = UserClient(jp_serverapp, kernel_id)
    try:
        await user.run("import polars as pl\n"
                       "cohort = pl.DataFrame({'id': [1, 2, 3], 'age': [50.0, None, 61.0], 'sex': ['f', 'm', 'm']})")
        frames = json.loads((await jp_fetch("dcpilot", "api", "frames", params={"path": "analysis.ipynb"})).body)
        assert [(f["name"], f["library"], f["rows"], f["dtypes"]) for f in frames] == \
            [("cohort", "polars", 3, {"number": 2, "text": 1})]
        profile = json.loads(
            (await jp_fetch("dcpilot", "api", "profile", params={"path": "analysis.ipynb", "name": "cohort"})).body)
        assert profile["columns_detail"][1]["missing_share"] == pytest.approx(1 / 3)
        assert await user.names() >= {"cohort", "pl"}
    finally:
        user.close()


@pytest.mark.slow
async def test_frames_lists_dataframes_silently(jp_fetch, jp_serverapp) -> None:
    kernel_id = await start_notebook_kernel(jp_fetch)
    user = UserClient(jp_serverapp, kernel_id)
    try:
        await user.run(
            "import pandas as pd\n"
            "patients = pd.DataFrame({'id': [1, 1, 2], 'age': [50.0, None, 61.0], 'sex': list('fmm')})\n"
            "other = 42"
        )
        count_before = (await user.run("pass"))["content"]["execution_count"]
        names_before = await user.names()

        response = await jp_fetch("dcpilot", "api", "frames", params={"path": "analysis.ipynb"})
        frames = json.loads(response.body)
        assert [f["name"] for f in frames] == ["patients"]
        assert (frames[0]["rows"], frames[0]["columns"]) == (3, 3)
        assert frames[0]["dtypes"] == {"number": 2, "text": 1}

        profile = json.loads(
            (await jp_fetch("dcpilot", "api", "profile", params={"path": "analysis.ipynb", "name": "patients"})).body
        )
        assert profile["columns_detail"][1]["missing_share"] == pytest.approx(1 / 3)

        # no new names, no execution counted; the user's own client still works
        assert await user.names() == names_before
        after = (await user.run("x = patients.shape"))["content"]["execution_count"]
        assert after == count_before + 1
    finally:
        user.close()


@pytest.mark.slow
async def test_unknown_notebook_and_frame_are_clear_errors(jp_fetch) -> None:
    with pytest.raises(HTTPClientError) as info:
        await jp_fetch("dcpilot", "api", "frames", params={"path": "nowhere.ipynb"})
    assert info.value.code == 404
    await start_notebook_kernel(jp_fetch, "other.ipynb")
    with pytest.raises(HTTPClientError) as info:
        await jp_fetch("dcpilot", "api", "profile", params={"path": "other.ipynb", "name": "missing_df"})
    assert info.value.code == 404
    with pytest.raises(HTTPClientError) as info:
        await jp_fetch("dcpilot", "api", "profile", params={"path": "other.ipynb", "name": "a.b"})
    assert info.value.code == 400


@pytest.mark.parametrize("endpoint", ["status", "frames", "profile"])
@pytest.mark.parametrize("authorization", ["", "token not-the-token"])
async def test_requests_without_valid_token_are_refused(jp_fetch, endpoint, authorization) -> None:
    with pytest.raises(HTTPClientError) as info:
        await jp_fetch(
            "dcpilot", "api", endpoint,
            params={"path": "x.ipynb", "name": "df"},
            headers={"Authorization": authorization},
        )
    assert info.value.code == 403
