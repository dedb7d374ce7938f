"""Work the kernel does behind the user's back — impact estimates, checkpoint spills, warming
imports — in threads that give way to the user's cells and to the step that runs.

On two shared cores a busy background thread next to a cell whose OpenMP team (scikit-learn's
gradient boosting, its k-means, XGBoost) wants both cores does not just take its share: one of
the team's threads is pushed off a core and the others spin at the next barrier waiting for it,
so the cell runs several times slower (``benchmarks/bench_background.py``). So a background
thread lowers its own scheduling priority (Linux, where a thread's niceness is its own: the
user's threads keep theirs) and runs its OpenMP regions on one thread (an OpenMP thread count
set in a thread holds for that thread only). BLAS is left alone: OpenBLAS's thread count is one
setting for the whole process, and setting it from two threads at once can leave the user's
kernel on one thread for good.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

# niceness added to the thread's own: CFS weighs a thread 10 steps nicer about a tenth of the
# user's, so the background takes what the user's cells leave and little of what they need
NICENESS = 10


def yield_the_cpu(niceness: int | None = None) -> bool:
    """Lower the calling thread's scheduling priority by ``niceness`` (default
    :data:`NICENESS`; at most to 19; Linux, elsewhere nothing happens). True if it was lowered.
    It cannot be raised again without privileges: call it only in a thread that does
    background work alone."""
    niceness = NICENESS if niceness is None else niceness
    if not sys.platform.startswith("linux") or niceness <= 0:
        return False
    try:
        tid = threading.get_native_id()
        now = os.getpriority(os.PRIO_PROCESS, tid)
        os.setpriority(os.PRIO_PROCESS, tid, min(now + niceness, 19))
        return os.getpriority(os.PRIO_PROCESS, tid) > now
    except OSError:
        return False


def detach_output() -> None:
    """What this thread prints (a library's warning) is attributed to no cell: in IPython's
    kernel it would otherwise land in whichever cell the user is running."""
    for stream in (sys.stdout, sys.stderr):
        detach = getattr(stream, "set_thread_parent", None)
        if detach is not None:
            detach({})


@contextmanager
def one_openmp_thread() -> Iterator[None]:
    """OpenMP parallel regions started from this thread use one thread while inside (the
    thread count is this thread's own setting: other threads keep theirs)."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="openmp"):
        yield


@contextmanager
def in_the_background() -> Iterator[None]:
    """For the body of a background thread: it yields the CPU to the user's threads, runs its
    OpenMP regions on one thread and prints into no cell."""
    yield_the_cpu()
    detach_output()
    with one_openmp_thread():
        yield
