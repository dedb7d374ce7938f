"""A card's click sent on a kernel subshell, as JupyterLab 4.6 sends widget messages to ipykernel 7:
a cell the user runs meanwhile keeps its output and waits for the co-pilot's run (a real kernel)."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest

import jupyter_dcpilot

FRAME = ("import numpy as np, pandas as pd\n"
         "rng = np.random.default_rng(0)\n"
         "y = rng.integers(0, 2, 200)\n"
         "df = pd.DataFrame({'a': rng.normal(size=200), 'b': rng.normal(size=200),\n"
         "                   'leak': y + rng.normal(scale=0.05, size=200), 'y': y})\n"
         "%load_ext jupyter_dcpilot\n"
         "%dcplan df --target y --approve ask")


class Kernel:
    """A real kernel, its iopub messages kept in order, and the widgets' buttons and headers seen."""

    def __init__(self, kc: Any) -> None:
        self.kc = kc
        self.seen: list[dict[str, Any]] = []
        self.buttons: dict[str, str] = {}  # comm id -> description
        self.headers: list[str] = []  # the decision cards' headers, newest last

    def pump(self, until: Any, timeout: float = 180) -> None:
        """Read iopub until ``until(message)`` holds for one message."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            try:
                m = self.kc.get_iopub_msg(timeout=1)
            except Exception:  # queue.Empty: nothing yet
                continue
            self.seen.append(m)
            state = m["content"].get("data", {}).get("state", {}) if m["msg_type"] in ("comm_open", "comm_msg") else {}
            if state.get("_model_name", "ButtonModel") == "ButtonModel" and "description" in state:
                self.buttons[m["content"]["comm_id"]] = state["description"]
            if str(state.get("value", "")).startswith("<b>Decision ("):
                self.headers.append(state["value"])
            if until(m):
                return
        raise TimeoutError("the kernel did not answer in time")

    def idle(self, msg_id: str) -> None:
        self.pump(lambda m: is_idle(m, msg_id))

    def run_ended(self, click: str) -> None:
        """Until the run a click started has ended and the click's handler is idle (in either order:
        the run goes on on the main thread, the handler returns on the subshell's)."""
        def done(_m: Any = None) -> bool:
            return any(map(ends, of(self.seen, click))) and any(is_idle(m, click) for m in self.seen)

        if not done():
            self.pump(done)

    def click(self, comm_id: str, subshell: str) -> str:
        """A button's click as the frontend sends it: a comm message on the subshell."""
        msg = self.kc.session.msg("comm_msg", {"comm_id": comm_id,
                                               "data": {"method": "custom", "content": {"event": "click"}}})
        msg["header"]["subshell_id"] = subshell
        self.kc.shell_channel.send(msg)
        return msg["header"]["msg_id"]

    def recommended(self) -> str:
        return [c for c, d in self.buttons.items() if d.startswith("★")][-1]


def kernel_with_subshell(tmp_path: Path, code: str) -> tuple[Any, Any, Kernel, str]:
    """A real kernel in ``tmp_path`` that has run ``code`` (the co-pilot asking its first question),
    and a subshell for the clicks, as JupyterLab 4.6 opens one for widget messages; the caller
    stops both (``kc.stop_channels()``, ``km.shutdown_kernel(now=True)``)."""
    from jupyter_client.manager import start_new_kernel

    root = str(Path(jupyter_dcpilot.__file__).resolve().parent.parent)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])}
    km, kc = start_new_kernel(kernel_name="python3", cwd=str(tmp_path), env=env)
    k = Kernel(kc)
    k.idle(kc.execute(code))
    kc.control_channel.send(kc.session.msg("create_subshell_request", {}))
    subshell = kc.get_control_msg(timeout=30)["content"]["subshell_id"]
    return km, kc, k, subshell


def is_idle(m: dict[str, Any], msg_id: str) -> bool:
    return (m["msg_type"] == "status" and m["content"]["execution_state"] == "idle"
            and m["parent_header"].get("msg_id") == msg_id)


def ends(m: dict[str, Any]) -> bool:
    """The co-pilot's widget output stops capturing: its run has ended."""
    return m["msg_type"] == "comm_msg" and m["content"]["data"].get("state", {}).get("msg_id") == ""


def of(messages: list[dict[str, Any]], msg_id: str) -> list[dict[str, Any]]:
    return [m for m in messages if m["parent_header"].get("msg_id") == msg_id]


def text(m: dict[str, Any]) -> str:
    return m["content"].get("text", "") + str(m["content"].get("data", {}).get("text/markdown", ""))


@pytest.mark.slow
def test_a_users_cell_run_during_a_click_driven_run_keeps_its_output_and_waits(tmp_path: Path) -> None:
    km, kc, k, subshell = kernel_with_subshell(tmp_path, FRAME)
    try:
        for _ in range(5):  # approve what comes before the leakage question (confirming the task)
            if "Decision (leakage)" in k.headers[-1]:
                break
            k.run_ended(k.click(k.recommended(), subshell))
        assert "Decision (leakage)" in k.headers[-1]
        click = k.click(k.recommended(), subshell)
        # the user's own cell, sent once the run shows its first cell
        k.pump(lambda m: m["msg_type"] == "display_data" and m["parent_header"].get("msg_id") == click)
        mine = kc.execute("print('my own output', 'leak' in df.columns)")
        k.idle(mine)
        k.run_ended(click)
        ended = next(i for i, m in enumerate(k.seen) if m["parent_header"].get("msg_id") == click and ends(m))
        started = next(i for i, m in enumerate(k.seen) if m["parent_header"].get("msg_id") == mine
                       and m["msg_type"] == "execute_input")
        run = of(k.seen, click)
        assert any("kt.drop_columns" in text(m) for m in run)  # the co-pilot's cells are shown in its widget
        assert not any("my own output" in text(m) for m in run)  # never the user's output
        streams = [m["content"]["text"] for m in of(k.seen, mine) if m["msg_type"] == "stream"]
        assert "".join(streams) == "my own output False\n"  # in the user's cell, after the drop
        assert started > ended  # it waited for the run, as for a running cell
        # the click stays busy until its run ends: JupyterLab drops the outputs of a message once idle
        assert next(i for i, m in enumerate(k.seen) if is_idle(m, click)) > ended
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
