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
        self._stopping = False  # an interrupt the bridge sent itself (stop), not the user's

    async def stop(self) -> None:
        """Interrupt the shell work going on (a step's cell past its budget's limit), as Kernel →
        Interrupt does: a SIGINT to the kernel's main thread, which serves the calls. Caught there
        outside a cell it is not taken for the user's: the engine is not told."""
        owner = self._owner
        if owner is None or owner != threading.main_thread().ident or not hasattr(signal, "pthread_kill"):
            return  # only the main thread gets a SIGINT's KeyboardInterrupt
        self._stopping = True
        signal.pthread_kill(owner, signal.SIGINT)

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
                    future.set_result(fn())
                    self._stopping = False  # a stop sent during the call was taken in it (the cell)
                except KeyboardInterrupt as exc:
                    interrupted = self._told(exc) or interrupted
                    future.set_exception(Interrupted())
                except Exception as exc:
                    future.set_exception(exc)
        finally:
            self._requests, self._owner, self._stopping = None, None, False
        if interrupted is not None and self.on_interrupt is None:
            raise interrupted
        if "error" in outcome:
            raise outcome["error"]
        return outcome.get("value")

    def _told(self, interrupt: KeyboardInterrupt) -> KeyboardInterrupt | None:
        if self._stopping:  # the bridge's own stop, after the cell it was meant for had ended
            self._stopping = False
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
