"""Access control and gate integrity of the co-pilot's REST and WebSocket API on a real Jupyter
server with real kernels.

- every endpoint refuses a request without valid credentials (no token, a wrong token, a
  forged cookie), a POST authenticated by the login cookie but without the XSRF header, and
  the event socket opened with the login cookie from another origin;
- one notebook's session cannot be read or driven through another's: session ids are uuid4,
  decision ids carry a random part, so another session's decision id is a 404;
- no call order, replay or forged id makes a gated step run without its decision: asserted on
  the kernel (the leaked column is still there) and on the cells the panel was asked to run.
"""

from __future__ import annotations

import asyncio
import json
import re
import uuid

import pytest
import test_server_sessions as tss
from jupyter_server.utils import url_path_join
from tornado.httpclient import HTTPClientError
from tornado.web import RequestHandler

pytestmark = pytest.mark.timeout(180)

SID = "0" * 32
# (method, path parts under /dcpilot/api, query, body) of every endpoint; the new ones are
# checked once their handler is mounted (see `mounted`)
ENDPOINTS = [
    ("GET", ("status",), {}, None),
    ("GET", ("frames",), {"path": "a.ipynb"}, None),
    ("GET", ("profile",), {"path": "a.ipynb", "name": "df"}, None),
    ("POST", ("sessions",), {}, {"path": "a.ipynb", "frame": "df"}),
    ("GET", ("sessions",), {"path": "a.ipynb"}, None),
    ("GET", ("sessions", SID), {}, None),
    ("POST", ("sessions", SID, "decisions", "d1"), {}, {"choice": "drop"}),
    ("POST", ("sessions", SID, "undo"), {}, {"checkpoint": "c1"}),
    ("POST", ("sessions", SID, "interrupt"), {}, {}),
    ("POST", ("sessions", SID, "resume"), {}, {}),
]


def handler_for(app, path: str):
    """The handler class the server routes ``path`` to (None: no route)."""
    def search(router):
        for rule in getattr(router, "rules", []):
            target = rule.target
            if hasattr(target, "rules"):
                found = search(target)
                if found is not None:
                    return found
            elif isinstance(target, type) and issubclass(target, RequestHandler):
                regex = getattr(rule.matcher, "regex", None)
                if regex is not None and regex.fullmatch(path):
                    return target
        return None

    return search(app.default_router)


def mounted(app, method: str, parts: tuple[str, ...]) -> bool:
    handler = handler_for(app, url_path_join(app.settings["base_url"], "dcpilot/api", *parts))
    if handler is None:
        return False
    own = getattr(handler, method.lower())
    return own is not getattr(RequestHandler, method.lower())


def url_parts(parts, query):
    if not query:
        return parts
    *head, last = parts
    return (*head, last + "?" + "&".join(f"{k}={v}" for k, v in query.items()))


@pytest.mark.parametrize("method,parts,query,body", ENDPOINTS, ids=lambda v: "/".join(v) if isinstance(v, tuple) else None)
@pytest.mark.parametrize("credentials", ["none", "wrong-token", "forged-cookie"])
async def test_every_endpoint_refuses_requests_without_valid_credentials(
        jp_fetch, jp_serverapp, method, parts, query, body, credentials) -> None:
    if not mounted(jp_serverapp.web_app, method, parts):
        pytest.skip(f"{method} /dcpilot/api/{'/'.join(parts)} is not mounted yet")
    headers = {"Authorization": "token not-the-token" if credentials == "wrong-token" else ""}
    if credentials == "forged-cookie":
        headers["Cookie"] = f"username-127-0-0-1-{jp_serverapp.port}=forged|value; _xsrf=abc"
        headers["X-XSRFToken"] = "abc"
    with pytest.raises(HTTPClientError) as info:
        await jp_fetch("dcpilot", "api", *parts, method=method, params=query or None,
                       body=json.dumps(body) if body is not None else None, headers=headers)
    assert info.value.code == 403


@pytest.mark.parametrize("credentials", ["none", "wrong-token", "forged-cookie"])
async def test_events_socket_refuses_connections_without_valid_credentials(jp_ws_fetch, jp_serverapp, credentials) -> None:
    headers = {"Authorization": "token not-the-token" if credentials == "wrong-token" else ""}
    if credentials == "forged-cookie":
        headers["Cookie"] = f"username-127-0-0-1-{jp_serverapp.port}=forged|value"
    with pytest.raises(HTTPClientError) as info:
        await jp_ws_fetch("dcpilot", "api", "sessions", SID, "events", headers=headers)
    assert info.value.code == 403


async def login_cookies(jp_fetch) -> dict[str, str]:
    """The cookies a browser holds after logging in with the token: the login cookie the server
    sets, and an ``_xsrf`` cookie (the double-submit token; any value the page echoes works)."""
    response = await jp_fetch("dcpilot", "api", "status")
    cookies = {}
    for header in response.headers.get_list("Set-Cookie"):
        name, _, rest = header.partition("=")
        if name.startswith("username-"):
            cookies[name] = rest.split(";", 1)[0]
    assert cookies, "no login cookie set"
    cookies["_xsrf"] = uuid.uuid4().hex
    return cookies


@pytest.mark.parametrize("method,parts,query,body", [e for e in ENDPOINTS if e[0] == "POST"],
                         ids=lambda v: "/".join(v) if isinstance(v, tuple) else None)
async def test_cookie_authenticated_posts_need_the_xsrf_header(jp_fetch, jp_serverapp, method, parts, query, body) -> None:
    if not mounted(jp_serverapp.web_app, method, parts):
        pytest.skip(f"{method} /dcpilot/api/{'/'.join(parts)} is not mounted yet")
    cookies = await login_cookies(jp_fetch)
    cookie = "; ".join(f"{k}={v}" for k, v in cookies.items())
    with pytest.raises(HTTPClientError) as info:  # the login cookie alone: a cross-site request
        await jp_fetch("dcpilot", "api", *parts, method="POST", body=json.dumps(body),
                       headers={"Authorization": "", "Cookie": cookie})
    assert info.value.code == 403
    with pytest.raises(HTTPClientError) as info:  # a wrong XSRF header
        await jp_fetch("dcpilot", "api", *parts, method="POST", body=json.dumps(body),
                       headers={"Authorization": "", "Cookie": cookie, "X-XSRFToken": "2|forged|token|1"})
    assert info.value.code == 403
    # control: the same request with the XSRF header passes authentication (then fails on
    # its content: no kernel for a.ipynb / no such session)
    with pytest.raises(HTTPClientError) as info:
        await jp_fetch("dcpilot", "api", *parts, method="POST", body=json.dumps(body),
                       headers={"Authorization": "", "Cookie": cookie, "X-XSRFToken": cookies["_xsrf"]})
    assert info.value.code in (404, 409)


async def test_cookie_authenticated_gets_work_without_xsrf(jp_fetch) -> None:
    cookies = await login_cookies(jp_fetch)
    cookie = "; ".join(f"{k}={v}" for k, v in cookies.items())
    response = await jp_fetch("dcpilot", "api", "status", headers={"Authorization": "", "Cookie": cookie})
    assert "planners" in json.loads(response.body)


# -- one notebook cannot drive another's session, and gates hold under any call order ------------


async def start_blocked_session(jp_fetch, serverapp, path: str):
    kernel_id = await tss.start_notebook_kernel(jp_fetch, path)
    client = tss.kernel_client(serverapp, kernel_id, "panel")
    await client.wait_for_ready(timeout=60)
    await client.execute_interactive(tss.LEAKY_FRAME, timeout=60)
    created = await tss.post(jp_fetch, "dcpilot", "api", "sessions",
                             body={"path": path, "frame": "df", "target": "churned",
                                   "approve": tss.ONLY_LEAKAGE_ASKS})
    return created["id"], client, tss.kernel_client(serverapp, kernel_id, "checker")


async def columns_in_kernel(client) -> list[str]:
    printed: list[str] = []
    await client.execute_interactive("print(list(df.columns))", timeout=30,
                                     output_hook=lambda m: printed.append(m["content"].get("text", "")))
    return eval("".join(printed))  # the kernel printed a list of strings


@pytest.mark.slow
async def test_sessions_are_isolated_and_gates_hold_under_forged_and_replayed_calls(
        jp_fetch, jp_ws_fetch, jp_serverapp, registry) -> None:
    clients, checkers, serving, sockets = [], [], [], []
    try:
        sessions = {}
        for path in ("a.ipynb", "b.ipynb"):
            sid, client, checker = await start_blocked_session(jp_fetch, jp_serverapp, path)
            clients.append(client)
            checkers.append(checker)  # looks at the kernel without racing the panel's client
            sessions[path] = sid
            ws = await jp_ws_fetch("dcpilot", "api", "sessions", sid, "events")
            sockets.append(ws)
            frontend = tss.Frontend(ws, client)
            serving.append((frontend, asyncio.create_task(frontend.serve())))
        a, b = sessions["a.ipynb"], sessions["b.ipynb"]
        assert uuid.UUID(a).version == 4 and uuid.UUID(b).version == 4 and a != b

        async def leakage_waits(sid):
            state = await tss.get_session(jp_fetch, sid)
            open_ = [d for d in state["decisions"] if d["gate"] == "leakage" and d["choice"] is None]
            return (state, open_[0]) if open_ and state["state"] == "blocked" else None

        state_a, leak_a = await tss.wait_for(lambda: leakage_waits(a), "A's leakage decision", timeout=120)
        state_b, leak_b = await tss.wait_for(lambda: leakage_waits(b), "B's leakage decision", timeout=120)
        assert re.fullmatch(r"d\d+-[0-9a-f]{8}", leak_a["id"]) and leak_a["id"] != leak_b["id"]
        base = ("dcpilot", "api", "sessions")
        # a page on another origin, riding the user's login cookie, cannot open the event socket
        cookies = await login_cookies(jp_fetch)
        cookie = "; ".join(f"{k}={v}" for k, v in cookies.items())
        with pytest.raises(HTTPClientError) as info:
            await jp_ws_fetch("dcpilot", "api", "sessions", a, "events",
                              headers={"Authorization": "", "Cookie": cookie, "Origin": "http://evil.example"})
        assert info.value.code == 403

        async def refused(sid, decision_id, body, code):
            with pytest.raises(HTTPClientError) as info:
                await tss.post(jp_fetch, *base, sid, "decisions", decision_id, body=body)
            assert info.value.code == code, (decision_id, body)

        # another notebook's decision id, with the same counter or even the same text
        await refused(b, leak_a["id"], {"choice": "drop"}, 404)
        await refused(a, leak_b["id"], {"choice": "drop"}, 404)
        counter = leak_a["id"].split("-")[0]
        for forged in (counter, f"{counter}-00000000", "d999", "d1", "D" + leak_a["id"][1:], "..%2F" + leak_a["id"]):
            with pytest.raises(HTTPClientError) as info:
                await tss.post(jp_fetch, *base, a, "decisions", forged, body={"choice": "drop"})
            assert info.value.code == 404, forged
        # choices that are not options, a decided decision replayed, malformed bodies
        await refused(a, leak_a["id"], {"choice": "shred"}, 409)
        await refused(a, leak_a["id"], {"choice": "run"}, 409)
        await refused(a, leak_a["id"], {"choice": ["drop"]}, 400)
        await refused(a, leak_a["id"], {"choice": None}, 400)
        task_a = next(d for d in state_a["decisions"] if d["gate"] == "task")
        await refused(a, task_a["id"], {"choice": "confirm"}, 409)  # replay of a decided one
        with pytest.raises(HTTPClientError) as info:  # undo to a checkpoint that is not this session's
            await tss.post(jp_fetch, *base, a, "undo", body={"checkpoint": "cp-0000000000"})
        assert info.value.code == 404
        # interrupting while nothing runs is refused; resuming re-runs the loop, which asks again
        with pytest.raises(HTTPClientError) as info:
            await tss.post(jp_fetch, *base, a, "interrupt", body={})
        assert info.value.code == 409
        for _ in range(3):
            try:
                await tss.post(jp_fetch, *base, a, "resume", body={})
            except HTTPClientError as error:
                assert error.code == 409  # already running (the previous resume)
        # an unknown session id (a valid uuid4) reads and drives nothing
        with pytest.raises(HTTPClientError) as info:
            await tss.get_session(jp_fetch, uuid.uuid4().hex)
        assert info.value.code == 404
        # a forged answer to a notebook request (no request of that id is waiting) is ignored
        await sockets[0].write_message(json.dumps({"type": "cell_result", "request_id": uuid.uuid4().hex,
                                                   "cell_id": "x", "outputs": [], "error": None}))
        # asking again for the session (e.g. a reloaded panel) does not run the gated step
        # (with a laxer policy: it must not approve the open gate)
        try:
            again = await tss.post(jp_fetch, *base, body={"path": "a.ipynb", "frame": "df", "approve": "recommended"})
            assert again["id"] == a  # before the one-live-session contract: the same session back
        except HTTPClientError as error:
            assert error.code == 409  # the contract: the notebook already has a live session
        await asyncio.sleep(1.0)  # give any wrongly resumed coordinator time to act

        for sid, leak, client, (frontend, _) in ((a, leak_a, checkers[0], serving[0]), (b, leak_b, checkers[1], serving[1])):
            state = await tss.get_session(jp_fetch, sid)
            step = next(s for s in state["plan"] if s["id"] == leak["step_id"])
            assert step["status"] == "awaiting_decision" and state["state"] == "blocked"
            assert next(d for d in state["decisions"] if d["id"] == leak["id"])["choice"] is None
            assert not [r for r in frontend.requests("run_cell")
                        if r["metadata"].get("dcpilot", {}).get("step") == step["id"]]
            assert "complained" in await columns_in_kernel(client)

        # deciding A's gate runs A's step only: B's kernel keeps its column, B stays blocked
        await tss.post(jp_fetch, *base, a, "decisions", leak_a["id"], body={"choice": "drop"})

        async def dropped_in_a():
            return "complained" not in await columns_in_kernel(checkers[0])

        await tss.wait_for(dropped_in_a, "A's leakage step to run")
        assert "complained" in await columns_in_kernel(checkers[1])
        state_b = await tss.get_session(jp_fetch, b)
        assert state_b["state"] == "blocked"
        assert next(d for d in state_b["decisions"] if d["id"] == leak_b["id"])["choice"] is None
    finally:
        for _, task in serving:
            task.cancel()
        for ws in sockets:
            ws.close()
        await registry.close()
        for client in clients + checkers:
            client.stop_channels()

