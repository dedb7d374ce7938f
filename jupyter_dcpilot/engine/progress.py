"""Long work says what it is doing: progress events against a time budget, and the stop.

:class:`Progress` awaits one piece of work (a step's cell, the diagnosis) and tells the
session's observers what runs, for how long and against which budget: once when it starts and
then every ``tick`` seconds (the panel's progress line, the command line's lines and the
``%dcplan`` widget read these ``progress`` events). Given a ``stop`` it also enforces the
budget's hard limit: past ``stop_after`` seconds it interrupts the kernel once; work that still
has not ended ``grace`` seconds later is abandoned with :class:`~.errors.StepOverBudget`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from .budgets import minutes
from .errors import StepOverBudget
from .session import Session

T = TypeVar("T")
TICK_S = 5.0
GRACE_S = 30.0


class Progress:
    """Awaits work while reporting it; see the module docstring. ``stopped`` tells afterwards
    whether the budget's limit interrupted it, ``elapsed`` how long it took."""

    def __init__(self, session: Session, title: str, *, step: str | None = None,
                 budget: float | None = None, tick: float = TICK_S, stop_after: float | None = None,
                 stop: Callable[[], Awaitable[Any]] | None = None, grace: float = GRACE_S) -> None:
        self.session = session
        self.title = title
        self.step = step
        self.budget = budget
        self.tick = tick
        self.stop_after = stop_after
        self.stop = stop
        self.grace = grace
        self.stopped = False
        self.elapsed = 0.0

    async def run(self, work: Awaitable[T]) -> T:
        loop = asyncio.get_running_loop()
        task = asyncio.ensure_future(work)
        started = loop.time()
        stopped_at: float | None = None
        self._tell(0.0)
        try:
            while True:
                done, _ = await asyncio.wait({task}, timeout=self.tick)
                self.elapsed = loop.time() - started
                if done:
                    return task.result()
                self._tell(self.elapsed)
                if stopped_at is None and self.stop is not None and self.stop_after is not None \
                        and self.elapsed >= self.stop_after:
                    stopped_at, self.stopped = self.elapsed, True
                    self.session.log("budget", f"{self.title} has run {minutes(self.elapsed)}, far past "
                                     f"its budget of {minutes(self.budget or self.stop_after)}: "
                                     "stopping it", step_id=self.step)
                    await self.stop()
                elif stopped_at is not None and self.elapsed - stopped_at >= self.grace:
                    raise StepOverBudget(
                        f"{self.title} ran {minutes(self.elapsed)} and did not stop when interrupted "
                        f"{minutes(self.grace)} ago; the kernel may still be busy with it. Interrupt "
                        "or restart the kernel, then undo to the checkpoint before it.")
        finally:
            if not task.done():
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)

    def _tell(self, elapsed: float) -> None:
        self.session.notify("progress", step=self.step, title=self.title,
                            elapsed_s=round(elapsed, 1), budget_s=self.budget)
