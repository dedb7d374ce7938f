"""A user's cell beside an impact estimate in the same kernel: does the background collapse it?

    python benchmarks/bench_background.py [--repeats 5] [--json out.json] [--markdown]

One process stands for the kernel. The user's cells are what a notebook runs: a gradient
boosting fit (scikit-learn's HistGradientBoosting: an OpenMP team on every core, the kind that
collapses when a core is taken from under it), a matrix product (BLAS) and a pandas group-by
(one thread). Each is timed ``repeats`` times:

- *alone*;
- *beside a plain thread*: an impact estimate (``option_impacts`` on the leakage card of
  ``bench_impact.py``, 10k rows, restarted as soon as it ends) in an ordinary thread under
  ``threadpool_limits(limits=1)``, as the kernel ran it before ``kernel_tools.background``;
- *beside ImpactJob*: the same estimate as the kernel runs it now
  (:class:`kernel_tools.impact.ImpactJob`: a thread at lower priority, one OpenMP thread).

Printed side by side: each cell's median seconds and the slow-down against alone, and how long
one estimate took meanwhile. The thread counts are the machine's defaults (the user's cells use
every core), so the numbers depend on the load: run it on a quiet machine, and read the load
average printed with them.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE)]


def cells(seed: int = 0) -> dict[str, Callable[[], Any]]:
    """The user's cells, each about a second on an idle 2-core machine."""
    from sklearn.ensemble import HistGradientBoostingClassifier

    rng = np.random.default_rng(seed)
    X = rng.normal(size=(100_000, 20))
    y = (X[:, 0] + X[:, 1] ** 2 + rng.normal(size=len(X)) > 1).astype(int)
    a = rng.normal(size=(1500, 1500))
    frame = pd.DataFrame({"key": rng.integers(0, 50_000, 2_000_000), "value": rng.normal(size=2_000_000)})
    return {
        "gradient boosting fit (OpenMP)": lambda: HistGradientBoostingClassifier(
            max_iter=30, early_stopping=False, random_state=0).fit(X, y),
        "matrix product (BLAS)": lambda: a @ a @ a,
        "group-by (one thread)": lambda: frame.groupby("key")["value"].agg(["mean", "std", "max"]),
    }


class Background:
    """Impact estimates one after another until stopped, the old way or the new (``ImpactJob``
    at the niceness ``how`` names: "ImpactJob" is the default one, "ImpactJob, nice N" another)."""

    def __init__(self, how: str) -> None:
        from bench_impact import cards, frame

        self.how = how
        self.df = frame(10_000)
        self.card = cards()["leakage"]
        self.durations: list[float] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _estimate(self) -> None:
        from threadpoolctl import threadpool_limits

        from kernel_tools.impact import ImpactJob, option_impacts

        kwargs = {"target": "y", "task": "classification", "stage": self.card["stage"],
                  "flagged": self.card["flagged"]}
        started = time.perf_counter()
        if self.how == "plain thread":  # what ImpactJob did before: a global limit, no priority
            with threadpool_limits(limits=1):
                option_impacts(self.df, self.card["options"], cancel=self._stop.is_set, **kwargs)
        else:
            job = ImpactJob(self.df, self.card["options"], **kwargs).start()
            while not job.wait(0.05):
                if self._stop.is_set():
                    job.cancel()
        if not self._stop.is_set():
            self.durations.append(time.perf_counter() - started)

    def _loop(self) -> None:
        from kernel_tools.impact import ImpactCancelled

        while not self._stop.is_set():
            try:
                self._estimate()
            except ImpactCancelled:
                return

    def __enter__(self) -> Background:
        import kernel_tools.background as background

        self._default = background.NICENESS
        if ", nice " in self.how:  # read by each job's thread when it starts
            background.NICENESS = int(self.how.rsplit(" ", 1)[1])
        # "plain thread" runs the estimate in this thread; ImpactJob starts its own and waits
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()
        time.sleep(1.0)  # the estimate is under way before the cell starts
        return self

    def __exit__(self, *exc: object) -> None:
        import kernel_tools.background as background

        self._stop.set()
        if self._thread is not None:
            self._thread.join(60)
        background.NICENESS = self._default


def time_cells(repeats: int, log: Callable[[str], None], niceness: tuple[int, ...] = ()) -> dict[str, Any]:
    from bench_impact import time_card  # noqa: F401  (imports scikit-learn and the transforms once)

    import kernel_tools.impact  # noqa: F401

    work = cells()
    for run in work.values():  # warm: the first call pays for imports and page faults
        run()
    scenarios = ("alone", "plain thread", "ImpactJob", *(f"ImpactJob, nice {n}" for n in niceness))
    seconds: dict[str, dict[str, list[float]]] = {s: {c: [] for c in work} for s in scenarios}
    estimates: dict[str, list[float]] = {}
    for scenario in scenarios:
        background = Background(scenario) if scenario != "alone" else None
        if background is not None:
            background.__enter__()
        try:
            for _ in range(repeats):
                for name, run in work.items():
                    started = time.perf_counter()
                    run()
                    seconds[scenario][name].append(time.perf_counter() - started)
        finally:
            if background is not None:
                background.__exit__()
                estimates[scenario] = background.durations
        log(f"background: {scenario}: " + ", ".join(
            f"{name} {statistics.median(s):.2f} s" for name, s in seconds[scenario].items()))
    return {"cells": {s: {c: [round(x, 3) for x in v] for c, v in by.items()} for s, by in seconds.items()},
            "estimates": {s: [round(x, 2) for x in v] for s, v in estimates.items()}}


def markdown(result: dict[str, Any]) -> str:
    cells_ = result["cells"]
    names = list(cells_["alone"])
    lines = ["## A cell beside an impact estimate (`benchmarks/bench_background.py`)", "",
             f"One process for the kernel; each cell {result['repeats']} times, median seconds (× alone). "
             "*Plain thread*: the estimate as the kernel ran it before (an ordinary thread, "
             "`threadpool_limits(1)` for the whole process); *ImpactJob*: as it runs now "
             "(`kernel_tools.background`: the thread's priority lowered by `NICENESS`, one OpenMP thread for it "
             "alone; *nice N*: lowered by N instead). "
             f"Load average at start {result['load_start']}, at the end {result['load_end']}; {result['cores']} cores.",
             ""]
    others = [s for s in cells_ if s != "alone"]
    lines += ["| cell | alone | " + " | ".join(f"beside {s}" for s in others) + " |",
              "|---|---|" + "---|" * len(others)]
    for name in names:
        alone = statistics.median(cells_["alone"][name])
        row = [f"{alone:.2f}"]
        for scenario in others:
            s = statistics.median(cells_[scenario][name])
            row.append(f"{s:.2f} (×{s / alone:.1f})")
        lines.append(f"| {name} | " + " | ".join(row) + " |")
    done = {s: v for s, v in result["estimates"].items() if v}
    lines += ["", "One impact estimate (2 options, 10k rows) meanwhile: " + "; ".join(
        f"{s} {statistics.median(v):.1f} s (median of {len(v)})" for s, v in done.items()) + "."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--niceness", default="", help="also ImpactJob at these nicenesses (e.g. 5,19)")
    ap.add_argument("--json")
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args(argv)
    load_start = [round(x, 2) for x in os.getloadavg()]
    result = time_cells(args.repeats, log=lambda m: print(m, file=sys.stderr, flush=True),
                        niceness=tuple(int(n) for n in args.niceness.split(",") if n))
    result.update({"repeats": args.repeats, "cores": os.cpu_count(), "load_start": load_start,
                   "load_end": [round(x, 2) for x in os.getloadavg()]})
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1))
    if args.markdown:
        print(markdown(result))
    return result


if __name__ == "__main__":
    main()
