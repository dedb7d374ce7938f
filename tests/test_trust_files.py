"""Sidecars on a real Jupyter server with real kernels: a FIFO or a link under a sidecar's name
is refused while the server keeps answering; a genuine sidecar copied beside another notebook,
or resumed over other data in the kernel, opens as history only and says why."""

from __future__ import annotations

import asyncio
import os
import shutil
import time

import pytest
import test_server_sessions as tss
from test_trust import serve_panel, start_kernel_with_frame

from jupyter_dcpilot.engine.session import Session, sidecar_path

pytestmark = pytest.mark.timeout(180)
API = ("dcpilot", "api", "sessions")


async def blocked(jp_fetch, sid: str) -> dict:
    """The session's state once it waits for its leakage question (no panel needed before it)."""

    async def waiting():
        state = await tss.get_session(jp_fetch, sid)
        return state if state["state"] == "blocked" else None

    return await tss.wait_for(waiting, "the session's leakage question", timeout=120)


@pytest.mark.parametrize("kind", ["FIFO", "link to /dev/zero"])
async def test_a_fifo_or_a_device_link_sidecar_is_refused_and_the_server_keeps_answering(
        kind, jp_fetch, jp_ws_fetch, jp_serverapp, jp_root_dir, registry, no_llm) -> None:
    sidecar = sidecar_path(jp_root_dir / "shared.ipynb")
    if kind == "FIFO":
        os.mkfifo(sidecar)
    else:
        sidecar.symlink_to("/dev/zero")
    client = await start_kernel_with_frame(jp_fetch, jp_serverapp, "shared.ipynb")
    try:
        started = time.perf_counter()
        post = asyncio.ensure_future(tss.post(jp_fetch, *API, body={
            "path": "shared.ipynb", "frame": "df", "target": "churned", "approve": tss.ONLY_LEAKAGE_ASKS}))
        status = await jp_fetch("dcpilot", "api", "status")  # while the session starts
        assert status.code == 200
        created = await asyncio.wait_for(post, 30)
        took = time.perf_counter() - started
        _, serving = await serve_panel(jp_ws_fetch, created["id"], client)
        state = await blocked(jp_fetch, created["id"])
        serving.cancel()
    finally:
        client.stop_channels()
        await registry.close()
    assert took < 10, took  # before: never answered (FIFO: the whole server froze)
    said = "a FIFO (named pipe)" if kind == "FIFO" else "a symbolic link"
    assert any(said in w and "started afresh" in w for w in created["warnings"]), created["warnings"]
    assert state["trusted"] is True  # the session's own file replaced the name, not what it points to
    assert Session.load(sidecar).trusted and os.path.isfile(sidecar) and not os.path.islink(sidecar)


async def test_a_genuine_sidecar_copied_beside_another_notebook_is_history(
        jp_fetch, jp_ws_fetch, jp_serverapp, jp_root_dir, registry, no_llm) -> None:
    client = await start_kernel_with_frame(jp_fetch, jp_serverapp, "a.ipynb")
    other = await start_kernel_with_frame(jp_fetch, jp_serverapp, "b.ipynb")
    try:
        first = await tss.post(jp_fetch, *API, body={"path": "a.ipynb", "frame": "df", "target": "churned",
                                                     "approve": "recommended"})
        _, serving = await serve_panel(jp_ws_fetch, first["id"], client)

        async def finished():
            state = await tss.get_session(jp_fetch, first["id"])
            return state if state["state"] in ("finished", "failed") else None

        done = await tss.wait_for(finished, "a's run to its end", timeout=150)
        serving.cancel()
        await registry.discard(first["id"])
        shutil.copy(sidecar_path(jp_root_dir / "a.ipynb"), sidecar_path(jp_root_dir / "b.ipynb"))
        replayed = await tss.post(jp_fetch, *API, body={"path": "b.ipynb", "frame": "df", "target": "churned"})
        state = await blocked(jp_fetch, replayed["id"])
    finally:
        client.stop_channels()
        other.stop_channels()
        await registry.close()
    assert done["validity"] and done["state"] == "finished"
    assert replayed["trusted"] is False and "does not belong to this notebook" in replayed["trust_note"]
    assert "a.ipynb" in replayed["trust_note"]
    assert state["validity"] == [] and not any(s["status"] == "done" and s["episode"] == "train_evaluate"
                                               for s in state["plan"])


async def test_a_session_resumed_over_other_data_is_history(jp_fetch, jp_ws_fetch, jp_serverapp, jp_root_dir,
                                                             registry, no_llm) -> None:
    client = await start_kernel_with_frame(jp_fetch, jp_serverapp, "nb.ipynb")
    try:
        body = {"path": "nb.ipynb", "frame": "df", "target": "churned", "approve": tss.ONLY_LEAKAGE_ASKS}
        first = await tss.post(jp_fetch, *API, body=body)
        _, serving = await serve_panel(jp_ws_fetch, first["id"], client)
        asked = await blocked(jp_fetch, first["id"])
        serving.cancel()
        await registry.discard(first["id"])  # as a server restart: saved, then reloaded
        same = await tss.post(jp_fetch, *API, body=body)
        await registry.discard(same["id"])
        await client.execute_interactive("df = df.assign(extra=1)", timeout=60)
        changed = await tss.post(jp_fetch, *API, body=body)
    finally:
        client.stop_channels()
        await registry.close()
    assert same["trusted"] is True and [d["id"] for d in same["decisions"]] == [d["id"] for d in asked["decisions"]]
    assert changed["trusted"] is False and "written for other data" in changed["trust_note"]
    assert "with 'extra'" in changed["trust_note"]
