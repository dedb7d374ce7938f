"""A step's budget stops its cell with a SIGINT to the kernel's main thread (``MainThreadBridge.stop``).
Python handles a signal when it gets to it: one sent as the cell ends may be handled microseconds
later, when the cell is over. It must then stop nothing and never be taken for the user's interrupt
(Kernel → Interrupt), which would roll the step back and tell the user they stopped it. Real signals
on the real main thread; the delay is made certain by blocking SIGINT in the cell until the next call."""

from __future__ import annotations

import asyncio
import signal
import threading

import pytest

from jupyter_dcpilot.kernel_thread import Interrupted, MainThreadBridge

pytestmark = pytest.mark.skipif(not hasattr(signal, "pthread_sigmask"), reason="POSIX signals")


def test_a_stop_handled_after_its_cell_ended_is_not_the_users_interrupt():
    told: list[str] = []
    bridge = MainThreadBridge(on_interrupt=lambda: told.append("the user interrupted"))
    blocked, sent = threading.Event(), threading.Event()

    def cell() -> str:  # the budget's stop arrives as it ends: its signal is handled after it
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        blocked.set()
        assert sent.wait(10)
        return "cell ended"

    def next_call() -> str:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})  # the pending SIGINT is handled here
        return "next call"

    async def engine() -> list[str]:
        running = asyncio.ensure_future(bridge.call(cell))
        while not blocked.is_set():
            await asyncio.sleep(0.001)
        await bridge.stop()
        sent.set()
        return [await running, await bridge.call(next_call)]

    try:
        assert bridge.run(engine) == ["cell ended", "next call"]
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    assert told == []


def test_a_stop_stops_the_call_it_was_sent_to_and_the_users_interrupt_is_still_the_users():
    told: list[str] = []
    bridge = MainThreadBridge(on_interrupt=lambda: told.append("the user interrupted"))
    started = threading.Event()

    def long_cell() -> str:
        started.set()
        for _ in range(1000):  # a cell past its budget: a SIGINT ends it
            threading.Event().wait(0.01)
        return "ran to the end"

    def users_interrupt() -> None:
        signal.pthread_kill(threading.get_ident(), signal.SIGINT)
        threading.Event().wait(1)

    async def engine() -> list[str]:
        running = asyncio.ensure_future(bridge.call(long_cell))
        while not started.is_set():
            await asyncio.sleep(0.001)
        await bridge.stop()
        seen = []
        for call in (running, bridge.call(users_interrupt)):
            try:
                await call
            except Interrupted:
                seen.append(f"interrupted; told {list(told)}")
        return seen

    assert bridge.run(engine) == ["interrupted; told []", "interrupted; told ['the user interrupted']"]
