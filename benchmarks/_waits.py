"""Where a run's wall time goes when no process spends CPU: idle waits against waits for a core.

On a shared machine a run's wall time is its CPU time, the time its threads were ready but
waited for a core (the other users' load) and the time none of them was ready at all (polling
sleeps, waits on a reply no one is computing, the file system). Only the last is overhead a
quiet machine still shows. Linux tells them apart: a thread's state (``R``: running or ready)
and its scheduler statistics (``/proc/<pid>/task/<tid>/schedstat``: nanoseconds on a core,
nanoseconds ready in the run queue).
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

PROC = Path("/proc")


def thread_states(pid: int) -> list[tuple[int, str, int]]:
    """(thread id, state letter, run-queue wait in ns) of each thread of ``pid``; none once it is gone."""
    found = []
    try:
        tids = os.listdir(PROC / str(pid) / "task")
    except OSError:
        return []
    for tid in tids:
        try:
            stat = (PROC / str(pid) / "task" / tid / "stat").read_text()
            waited = int((PROC / str(pid) / "task" / tid / "schedstat").read_text().split()[1])
        except (OSError, IndexError, ValueError):
            continue  # the thread ended between the listing and the read
        found.append((int(tid), stat[stat.rindex(")") + 2], waited))
    return found


class TreeWaits:
    """Samples every ``every`` seconds the threads of ``pids()`` (the command line and its kernel):
    ``idle_seconds``, the time none of them was ready to run, and ``queued_seconds``, the time their
    threads waited in the run queue for a core (summed over threads: two threads waiting at once
    count twice). ``idle(start, end)``: the idle seconds within a span."""

    def __init__(self, pids, every: float = 0.02) -> None:
        self.pids = pids
        self.every = every
        self.idle_spans: list[tuple[float, float]] = []  # (sample time, seconds since the last sample)
        self._waited: dict[int, int] = {}  # each thread's run-queue ns so far (all born after the start)
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self._poll, daemon=True)
        self.thread.start()

    def _poll(self) -> None:
        last = time.perf_counter()
        while not self._stop.is_set():
            threads = [t for pid in self.pids() for t in thread_states(pid)]
            now = time.perf_counter()
            if threads and not any(state == "R" for _, state, _ in threads):
                self.idle_spans.append((now, now - last))
            self._waited.update((tid, waited) for tid, _, waited in threads)
            last = now
            self._stop.wait(self.every)

    def stop(self) -> None:
        self._stop.set()
        self.thread.join()

    def idle(self, start: float = float("-inf"), end: float = float("inf")) -> float:
        return sum(dt for t, dt in self.idle_spans if start < t <= end)

    @property
    def idle_seconds(self) -> float:
        return self.idle()

    @property
    def queued_seconds(self) -> float:
        return sum(self._waited.values()) / 1e9
