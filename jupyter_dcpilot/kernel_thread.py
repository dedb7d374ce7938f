"""The kernel's main thread, where the shell and its outputs live, and the threads that need it.

The IPython shell and ipykernel's output routing are not thread-safe (an output belongs to the
message the kernel thread is handling), so the magics' shell work stays on the kernel's main
thread: :class:`MainThreadBridge` serves it there for the engine's own thread, and
:func:`on_kernel_thread` brings a widget's click there from a kernel subshell's thread.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import queue
import signal
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class Interrupted(RuntimeError):
    """A shell call cut short by the user's interrupt (Kernel → Interrupt: SIGINT)."""

    def __init__(self) -> None:
        super().__init__("interrupted by the user")


class MainThreadBridge:
    """Run a coroutine on a private loop in a worker thread; shell work returns to this thread.

    The user's interrupt is a KeyboardInterrupt on this thread, raised in a shell call or while
    it waits for the engine. With ``on_interrupt`` the engine is told (it stops the step and
    puts its variables back), the call cut short raises :class:`Interrupted` and later calls are
    served as before, so that rollback can run. Without it nobody tells the engine: later calls
    raise :class:`Interrupted` and the KeyboardInterrupt reaches the user once the engine has
    unwound."""

    def __init__(self, on_interrupt: Callable[[], object] | None = None) -> None:
        self.on_interrupt = on_interrupt
        self._requests: queue.Queue[Any] | None = None
        self._owner: int | None = None
        self._calls = 0  # shell calls served so far
        self._calling = 0  # the number of the call running on the kernel thread (0: none)
        self._stop_for: int | None = None  # the call a stop's SIGINT was sent to, until it is handled
        self._stopped: KeyboardInterrupt | None = None  # what that SIGINT raised: not the user's

    async def stop(self) -> None:
        """Interrupt the shell work going on (a step's cell past its budget's limit), as Kernel →
        Interrupt does: a SIGINT to the kernel's main thread, which serves the calls. The signal is
        handled when Python gets to it, maybe after the call it was sent to has ended: then it
        stops nothing and is not taken for the user's (see :meth:`_on_sigint`)."""
        owner = self._owner
        if owner is None or owner != threading.main_thread().ident or not hasattr(signal, "pthread_kill"):
            return  # only the main thread gets a SIGINT's KeyboardInterrupt
        if not self._calling:
            return  # no shell call running: nothing to stop
        self._stop_for = self._calling
        signal.pthread_kill(owner, signal.SIGINT)

    def _on_sigint(self, signum: int, frame: Any) -> None:
        """SIGINT on the kernel thread while the engine runs: the bridge's own stop stops the call
        it was sent to if that call still runs, else nothing (it came late, microseconds after the
        cell ended); any other SIGINT is the user's interrupt."""
        target, self._stop_for = self._stop_for, None
        if target is None:
            raise KeyboardInterrupt
        if target == self._calling:
            self._stopped = KeyboardInterrupt()
            raise self._stopped

    def run(self, factory: Callable[[], Coroutine[Any, Any, Any]]) -> Any:
        """Block until ``factory()`` completes, serving :meth:`call` requests meanwhile."""
        if self._requests is not None:
            raise RuntimeError("the co-pilot is already running in this kernel")
        requests: queue.Queue[Any] = queue.Queue()
        outcome: dict[str, Any] = {}

        def work() -> None:
            try:
                outcome["value"] = asyncio.run(factory())
            except BaseException as exc:  # handed back to the kernel thread below
                outcome["error"] = exc
            finally:
                requests.put(None)

        self._requests, self._owner = requests, threading.get_ident()
        interrupted: BaseException | None = None
        on_main = threading.current_thread() is threading.main_thread()
        previous = signal.signal(signal.SIGINT, self._on_sigint) if on_main else None
        try:
            threading.Thread(target=work, name="dcpilot-engine", daemon=True).start()
            while True:  # serve until the engine is done, even after an interrupt (no orphan thread)
                try:
                    item = requests.get()
                except KeyboardInterrupt as exc:
                    interrupted = self._told(exc) or interrupted
                    continue
                if item is None:
                    break
                fn, future = item
                if interrupted is not None and self.on_interrupt is None:
                    future.set_exception(Interrupted())
                    continue
                try:
                    self._calling = self._calls = self._calls + 1
                    value = fn()
                    self._calling = 0
                    future.set_result(value)
                except KeyboardInterrupt as exc:
                    self._calling = 0
                    interrupted = self._told(exc) or interrupted
                    future.set_exception(Interrupted())
                except Exception as exc:
                    self._calling = 0
                    future.set_exception(exc)
        finally:
            if on_main:
                signal.signal(signal.SIGINT, previous if previous is not None else signal.SIG_DFL)
            self._requests, self._owner, self._calling, self._stop_for, self._stopped = None, None, 0, None, None
        if interrupted is not None and self.on_interrupt is None:
            raise interrupted
        if "error" in outcome:
            raise outcome["error"]
        return outcome.get("value")

    def _told(self, interrupt: KeyboardInterrupt) -> KeyboardInterrupt | None:
        if interrupt is self._stopped:  # the bridge's own stop, not the user's
            self._stopped = None
            return None
        if self.on_interrupt is not None:
            self.on_interrupt()
        return interrupt

    async def call(self, fn: Callable[[], Any]) -> Any:
        """``fn()`` on the kernel thread (directly when already there or not bridged)."""
        requests = self._requests
        if requests is None or threading.get_ident() == self._owner:
            return fn()
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        requests.put((fn, future))
        return await asyncio.wrap_future(future)


def on_kernel_thread(shell: Any, fn: Callable[[], T]) -> T:
    """``fn()`` on the kernel's main thread, waited for: at once when already there (or outside a
    kernel), else queued on the kernel's event loop with the caller's context.

    JupyterLab 4.6 sends widget messages on a kernel subshell (ipykernel 7): a card's click is
    handled on the subshell's thread while the main thread goes on running the user's cells. A run
    driven from there took the output of a cell run meanwhile (``capture_output`` swaps sys.stdout
    and the display publisher for the whole process) and changed the frame under it; a timeline
    move changed the records a run was reading. Queued on the main loop, the call blocks it as a
    running cell does, so the user's next cell waits its turn. The click's context (its parent
    message) goes along and the click's handler waits for the call: the frontend routes a
    message's outputs to the card's widget only until that message is idle. Kernel → Interrupt
    reaches it as it reaches a cell: ipykernel ignores SIGINT between messages and raises
    KeyboardInterrupt only while it handles one, so the call installs that handler for itself."""
    loop = getattr(getattr(shell, "kernel", None), "io_loop", None)
    if loop is None or threading.current_thread() is threading.main_thread():
        return fn()
    done: concurrent.futures.Future[T] = concurrent.futures.Future()

    def call() -> None:
        try:
            before = signal.signal(signal.SIGINT, signal.default_int_handler)
            try:
                done.set_result(fn())
            finally:
                signal.signal(signal.SIGINT, before)
        except BaseException as exc:  # raised again in the caller's thread
            done.set_exception(exc)

    loop.add_callback(contextvars.copy_context().run, call)
    return done.result()
