"""kernel_tools.background: the kernel's background threads give way to the user's cells."""

from __future__ import annotations

import os
import sys
import threading

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import HistGradientBoostingClassifier  # noqa: F401  (loads scikit-learn's OpenMP)
from threadpoolctl import threadpool_info, threadpool_limits

import kernel_tools.impact as impact
from kernel_tools.background import in_the_background, one_openmp_thread, yield_the_cpu

linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a thread's own niceness is Linux's")


def openmp_threads() -> int:
    return max(lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "openmp")


def in_a_thread(work):
    out = {}
    thread = threading.Thread(target=lambda: out.update(work()))
    thread.start()
    thread.join(60)
    return out


def me() -> int:
    return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())


@linux
def test_a_background_thread_yields_the_cpu_and_the_callers_priority_stays():
    before = me()
    seen = in_a_thread(lambda: {"lowered": yield_the_cpu(), "priority": me()})
    assert seen["lowered"] and seen["priority"] == min(before + 10, 19)
    assert me() == before


def test_one_openmp_thread_holds_in_the_background_thread_only():
    with threadpool_limits(limits=2, user_api="openmp"):  # the user's cells: two threads
        inside, go_on = threading.Event(), threading.Event()

        def background():
            # a new thread starts from the process's default (OMP_NUM_THREADS, or one per core), not
            # from the caller's limit: its own limit, apart from 1 and 2, is the one to come back to
            threadpool_limits(limits=3, user_api="openmp")
            with one_openmp_thread():
                seen = {"inside": openmp_threads()}
                inside.set()
                go_on.wait(30)
            return {**seen, "after": openmp_threads()}

        out = {}
        thread = threading.Thread(target=lambda: out.update(background()))
        thread.start()
        assert inside.wait(30)
        main_meanwhile = openmp_threads()  # while the background thread is inside its limit
        go_on.set()
        thread.join(30)
        assert out["inside"] == 1 and main_meanwhile == 2 and out["after"] == 3


@linux
def test_an_impact_estimate_runs_below_the_users_priority_on_one_openmp_thread(monkeypatch):
    seen = []
    one_option = impact._one_option

    def watched(*args, **kwargs):
        seen.append((me(), openmp_threads()))
        return one_option(*args, **kwargs)

    monkeypatch.setattr(impact, "_one_option", watched)
    rng = np.random.default_rng(0)
    x = rng.normal(size=300)
    df = pd.DataFrame({"x": x, "noise": rng.normal(size=300), "y": (x > 0).astype(int)})
    before = me()
    with threadpool_limits(limits=2, user_api="openmp"):
        job = impact.ImpactJob(df, [{"id": "keep", "action": None}], target="y", task="classification").start()
        assert job.wait(120) and job.state()["status"] == "done"
        assert openmp_threads() == 2
    assert seen and all(priority > before and threads == 1 for priority, threads in seen)
    assert me() == before


def test_in_the_background_prints_into_no_cell():
    class Stream:
        parent = {"header": {"msg_id": "the user's cell"}}

        def set_thread_parent(self, parent):
            self.parent = parent

    streams = Stream(), Stream()
    old = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = streams
    try:
        def background():
            with in_the_background():
                return {}

        in_a_thread(background)
    finally:
        sys.stdout, sys.stderr = old
    assert [s.parent for s in streams] == [{}, {}]
