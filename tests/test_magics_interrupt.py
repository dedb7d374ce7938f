"""Inline cards beside the user's own work, in a real kernel, the widgets' messages sent on a kernel
subshell as JupyterLab 4.6 sends them to ipykernel 7: Kernel → Interrupt on a run a card's click
started stops the step, the frame is the step's checkpoint, the card says so and the kernel runs
the next cell; a timeline card's Move clicked during a run is applied after it, to the columns picked
when it was clicked (a pick made meanwhile is kept for the next Move)."""

from __future__ import annotations

import queue
import time
from pathlib import Path
from typing import Any

import pytest
from test_magics_subshell import FRAME, Kernel, ends, is_idle, kernel_with_subshell, of


def slow_step(seconds: int, first: str = "", changes: tuple[str, ...] = ("df",)) -> str:
    """A cell that adds a slow custom step to the co-pilot's plan: it runs ``first``, leaves a file
    behind once it has started, then sleeps; its checkpoint holds ``changes``."""
    code = f"{first}open('started', 'w').close()\\nimport time\\ntime.sleep({seconds})"
    return ("from jupyter_dcpilot.engine.session import Step\n"
            "pilot = get_ipython().magics_manager.registry['DCPilotMagics'].pilot\n"
            f"pilot.session.plan.append(Step(id=pilot.session.new_id('s'), episode='custom', title='Slow custom step',\n"
            f"    gate='custom_code', code=\"{code}\", reason='the expert asked', params={{'changes': {list(changes)!r}}}))\n")


# changes the frame before it sleeps: stopped there, only its checkpoint makes the frame whole again
SLOW = slow_step(120, first="df = df.drop(columns=['a'])\\n")


def value(k: Kernel, code: str) -> str:
    """What ``code`` prints, run as the user's next cell (it must succeed)."""
    msg_id = k.kc.execute(code)
    k.idle(msg_id)
    replies = [m for m in of(k.seen, msg_id) if m["msg_type"] in ("stream", "error")]
    assert all(m["msg_type"] == "stream" for m in replies), replies
    return "".join(m["content"]["text"] for m in replies)


FINGERPRINT = "print(list(df.columns), int(pd.util.hash_pandas_object(df).sum()))"


@pytest.mark.slow
@pytest.mark.parametrize("started_by", ["click", "cell"])
def test_interrupt_stops_a_step_restores_the_frame_and_the_kernel_runs_on(tmp_path: Path, started_by: str) -> None:
    """The run started by the card's click on the subshell, or by a cell (``%dcdecide``)."""
    km, kc, k, subshell = kernel_with_subshell(tmp_path, FRAME)
    try:
        before = to_the_slow_step(k, subshell, SLOW)
        run = start_the_slow_step(k, subshell, started_by)
        end = time.monotonic() + 120
        while not (tmp_path / "started").exists():  # the step's cell runs: the frame has lost 'a'
            assert time.monotonic() < end, "the slow step did not start"
            time.sleep(0.2)
        interrupted = time.monotonic()
        km.interrupt_kernel()
        k.run_ended(run)
        stopped_in = time.monotonic() - interrupted
        after = value(k, FINGERPRINT)  # the kernel runs the user's next cell
        step = value(k, "s = pilot.session.plan; st = [x for x in s if x.title == 'Slow custom step'][0]\n"
                        "print(pilot.session.state, st.status, st.note, st.attempts, 'a' in df.columns)")
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    assert stopped_in < 30  # the cell sleeps for 120 s
    assert "'a'" in before and after == before  # the step's checkpoint, restored
    assert step == "idle failed interrupted by the user 1 True\n"  # stopped, not retried
    said = [str(m["content"]["data"]["state"].get("value")) for m in of(k.seen, run)
            if m["msg_type"] == "comm_msg" and "Interrupted by you" in str(m["content"]["data"].get("state"))]
    assert said and "Slow custom step) stopped; nothing it changed is kept" in said[-1]  # the card says so
    # one error: the step's cell's, shown in the card; none from the magic (the run ended as the card says)
    assert len([m for m in of(k.seen, run) if m["msg_type"] == "error"]) == 1


# a 1 s budget for custom steps, stopped at 4 s (4 x its budget), looked at every 0.5 s
SMALL_BUDGET = ("from jupyter_dcpilot.engine.budgets import Budgets\n"
                "pilot.set_budgets(Budgets.from_spec({'custom': 1}, min_stop_s=1))\n"
                "pilot.coordinator.worker.tick = 0.5\n")


def to_the_slow_step(k: Kernel, subshell: str, setup: str) -> str:
    """``setup`` run (it adds the slow step), the questions before the slow step answered on the
    subshell as in JupyterLab; the frame's fingerprint then."""
    k.idle(k.kc.execute(setup))
    answer_until_the_slow_step(k, subshell)
    return value(k, FINGERPRINT)


def answer_until_the_slow_step(k: Kernel, subshell: str) -> None:
    """The questions before the slow step, answered on the subshell as in JupyterLab."""
    for _ in range(6):
        if "Decision (custom_code)" in k.headers[-1]:
            break
        k.run_ended(k.click(k.recommended(), subshell))
    assert "Decision (custom_code)" in k.headers[-1]


def start_the_slow_step(k: Kernel, subshell: str, started_by: str) -> str:
    """The slow step's run started by the card's click on the subshell, or by a cell (``%dcdecide``)."""
    if started_by == "click":
        return k.click(k.recommended(), subshell)  # "Run this code"
    return k.kc.execute(f"%dcdecide {value(k, 'print(pilot.session.next_decision().id)').strip()} run")


@pytest.mark.slow
@pytest.mark.parametrize("started_by", ["click", "cell"])
def test_a_step_past_its_budget_is_stopped_and_rolled_back(tmp_path: Path, started_by: str) -> None:
    """No Kernel → Interrupt: the step's budget stops it, as the server's stop does (the kernel
    interrupts itself), whether a card's click or a cell started the run."""
    km, kc, k, subshell = kernel_with_subshell(tmp_path, FRAME)
    try:
        before = to_the_slow_step(k, subshell, SLOW + SMALL_BUDGET)
        began = time.monotonic()
        run = start_the_slow_step(k, subshell, started_by)
        if started_by == "click":
            k.run_ended(run)
        else:
            k.idle(run)
        took = time.monotonic() - began
        after = value(k, FINGERPRINT)  # the kernel runs the user's next cell
        step = value(k, "st = [x for x in pilot.session.plan if x.title == 'Slow custom step'][0]\n"
                        "print(st.status, '|', st.error, '|', 'a' in df.columns)")
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    assert took < 60  # the cell sleeps for 120 s
    assert "'a'" in before and after == before  # the step's checkpoint, restored
    assert step.startswith("failed | stopped after ") and "far past its time budget of 1 s" in step
    assert step.endswith("| True\n")
    said = [str(m["content"]["data"]["state"].get("value")) for m in of(k.seen, run)
            if m["msg_type"] == "comm_msg" and "Stopped at its budget" in str(m["content"]["data"].get("state"))]
    assert said and "Stopped at its budget of 1 s:</b> s" in said[-1]  # the card says so
    assert "(Slow custom step) had run " in said[-1] and "nothing it changed is kept" in said[-1]
    assert "Interrupted by you" not in said[-1]  # the budget's stop, not the user's


# a variable whose copy takes 3 s, and says when it starts: the checkpoint's restore (which hands
# out a fresh copy) is slow enough for the user to press Interrupt again in the middle of it
SLOW_COPY = ("import glob, time\n"
             "class SlowCopy:\n"
             "    def __deepcopy__(self, memo):\n"
             "        open(f'copy{len(glob.glob(\"copy*\"))}', 'w').close()\n"
             "        time.sleep(3)\n"
             "        return SlowCopy()\n"
             "slow = SlowCopy()\n")


@pytest.mark.slow
def test_interrupts_during_the_rollback_cannot_cut_the_restore_short(tmp_path: Path) -> None:
    """Kernel → Interrupt on the step, then again each time a restore of its checkpoint starts:
    every restore is whole (the interrupt waits for it), the frame is the checkpoint's."""
    km, kc, k, subshell = kernel_with_subshell(tmp_path, FRAME)
    try:
        before = to_the_slow_step(k, subshell, SLOW_COPY + slow_step(120, first="df = df.drop(columns=['a'])\\n",
                                                                     changes=("df", "slow")))
        run = start_the_slow_step(k, subshell, "click")
        end = time.monotonic() + 120
        while not (tmp_path / "started").exists():  # the step's cell runs: the frame has lost 'a'
            assert time.monotonic() < end, "the slow step did not start"
            time.sleep(0.2)
        copies = {p.name for p in tmp_path.glob("copy*")}  # the checkpoint's own, before the step
        km.interrupt_kernel()
        restores = 0
        while not (any(map(ends, of(k.seen, run))) and any(is_idle(m, run) for m in k.seen)):
            assert time.monotonic() < end, "the run did not end"
            for started in sorted({p.name for p in tmp_path.glob("copy*")} - copies):
                copies.add(started)  # a restore has started: interrupt it
                km.interrupt_kernel()
                restores += 1
            try:
                k.seen.append(kc.get_iopub_msg(timeout=0.2))
            except queue.Empty:
                pass
        after = value(k, FINGERPRINT)  # the kernel runs the user's next cell
        step = value(k, "st = [x for x in pilot.session.plan if x.title == 'Slow custom step'][0]\n"
                        "print(pilot.session.state, st.status, st.note)")
        logged = value(k, "print([e['kind'] + ': ' + e['text'] for e in pilot.session.transcript])")
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    assert restores >= 1  # an interrupt reached a restore
    assert "'a'" in before and after == before  # the step's checkpoint, restored whole
    assert step == "idle failed interrupted by the user\n"
    # the log says what happened: no restore failed
    assert "could not restore" not in logged and "the restore finished first" in logged


def opened(k: Kernel, model: str, description: str) -> tuple[str, dict[str, Any]]:
    """The comm id and state of the newest widget of ``model`` with this description."""
    found = [(m["content"]["comm_id"], m["content"]["data"]["state"]) for m in k.seen
             if m["msg_type"] == "comm_open" and m["content"]["data"]["state"].get("_model_name") == model
             and m["content"]["data"]["state"].get("description") == description]
    return found[-1]


def latest(k: Kernel, comm_id: str, key: str) -> Any:
    """A widget's newest value of ``key`` the kernel has sent."""
    states = [m["content"]["data"].get("state", {}) for m in k.seen if m["msg_type"] in ("comm_open", "comm_msg")
              and m["content"]["comm_id"] == comm_id]
    return [st[key] for st in states if key in st][-1]


def send(k: Kernel, comm_id: str, data: dict[str, Any], subshell: str) -> str:
    """A widget message as JupyterLab sends it: on the subshell."""
    msg = k.kc.session.msg("comm_msg", {"comm_id": comm_id, "data": data})
    msg["header"]["subshell_id"] = subshell
    k.kc.shell_channel.send(msg)
    return msg["header"]["msg_id"]


TIMELINE = ("import numpy as np, pandas as pd\n"
            "rng = np.random.default_rng(0); n = 200\n"
            "x1, x2 = rng.normal(size=n), rng.normal(size=n)\n"
            "y = (x1 + rng.normal(size=n) > 0).astype(int)\n"
            "df = pd.DataFrame({'x1': x1, 'x2': x2, 'albumin_at_discharge': rng.normal(size=n),\n"
            "                   'sample_received_min': rng.gamma(2, size=n), 'y': y})\n"
            "%load_ext jupyter_dcpilot\n"
            "%dcplan df --target y --approve ask\n"
            "%dctimeline")


@pytest.mark.slow
def test_a_timeline_move_clicked_during_a_run_is_applied_after_it(tmp_path: Path) -> None:
    km, kc, k, subshell = kernel_with_subshell(tmp_path, TIMELINE)
    try:
        k.idle(kc.execute(slow_step(6)))
        move, _ = opened(k, "ButtonModel", "Move")
        columns, _ = opened(k, "SelectMultipleModel", "columns")
        group, _ = opened(k, "DropdownModel", "move to")
        answer_until_the_slow_step(k, subshell)
        # the frontend asks for the button's state on the subshell (as a restored view does): this
        # ipykernel sends a comm's messages to the thread it last published from, as upstream
        # ipykernel 7 sends every message JupyterLab sends on a subshell, so the click goes there
        k.idle(send(k, move, {"method": "request_state"}, subshell))
        # the expert picks a column and a group (on the subshell; applied before the run starts)
        pick(k, columns, "albumin_at_discharge", subshell)
        send(k, group, {"method": "update", "state": {"index": 0}, "buffer_paths": []}, subshell)
        asked = value(k, "print(pilot.session.next_decision().id)").strip()
        run = kc.execute(f"%dcdecide {asked} run")  # a run the user's cell starts: a 6 s step
        end = time.monotonic() + 120
        while not (tmp_path / "started").exists():
            assert time.monotonic() < end, "the slow step did not start"
            time.sleep(0.2)
        moved = k.click(move, subshell)  # during the run
        # while the move waits for the run, the expert picks another column (the index of what the card shows)
        pick(k, columns, "sample_received_min", subshell)
        settled = lambda _m=None: all(any(is_idle(m, i) for m in k.seen) for i in (run, moved))  # noqa: E731
        if not settled():
            k.pump(settled)
        said = value(k, "print([(m.column, m.group) for m in pilot.session.structure.moves], pilot.session.state)")
        picked = [latest(k, columns, "_options_labels")[i] for i in latest(k, columns, "index")]
        again = k.click(move, subshell)  # the pick made during the run, moved now
        k.idle(again)
        later = value(k, "print([(m.column, m.group) for m in pilot.session.structure.moves])")
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    # Move applied the picks shown when it was clicked, not those made while it waited
    assert said.startswith("[('albumin_at_discharge', 'baseline')]")
    ran = next(i for i, m in enumerate(k.seen) if m["parent_header"].get("msg_id") == run and ends(m))
    statuses = [(i, str(m["content"].get("data", {}).get("state", {}).get("value", ""))) for i, m in enumerate(k.seen)
                if m["parent_header"].get("msg_id") == moved]
    waiting = [i for i, text in statuses if "Moving &#x27;albumin_at_discharge&#x27; to baseline…" in text]
    shown = [i for i, text in statuses if "is now baseline" in text]
    assert waiting and waiting[0] < ran  # the card said at once what it would move
    assert shown and shown[0] > ran  # applied after the run, not in the middle of it
    # the pick made meanwhile is not lost, nor read as another column once the card was drawn again
    assert picked == ["sample_received_min · ⚠ to confirm"]
    assert later.startswith("[('albumin_at_discharge', 'baseline'), ('sample_received_min', 'baseline')]")


def pick(k: Kernel, columns: str, column: str, subshell: str) -> str:
    """The expert picks ``column`` alone, as the frontend sends it: the index of its label as last drawn."""
    labels = latest(k, columns, "_options_labels")
    index = next(i for i, label in enumerate(labels) if label.split(" · ")[0] == column)
    return send(k, columns, {"method": "update", "state": {"index": [index]}, "buffer_paths": []}, subshell)
