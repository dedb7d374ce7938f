"""How long does the diagnosis of a person-period table take, and how many person-period searches
does it run (issue 26: a two-code target without a strong layout was searched twice, strong then weak)?

Generated frames of about ``--rows`` rows (subjects followed 3-8 periods each, a covariate and a
dose): a weak layout (two events: too few to tell from chance, the rows stay a classification
asked with survival first), a strong one (a fifth of the subjects end in the event) and no layout
(the event on a random row). For each: the median of ``--repeats`` ``diagnose`` wall times, and
the calls to ``find_person_periods`` in one diagnosis and their time (counted by wrapping the module
attribute).

    python benchmarks/bench_periods.py --rows 10000 --repeats 5
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings

import numpy as np
import pandas as pd

import kernel_tools as kt
from kernel_tools.diagnosis import task as task_module


def frame(rows: int, events: int | None, seed: int = 0) -> pd.DataFrame:
    """Person-period rows of ~``rows`` rows, ``events`` subjects ending in the event (None: the
    event on a random row instead, no layout)."""
    rng = np.random.default_rng(seed)
    n = round(rows / 5.5)  # 3-8 periods, 5.5 on average
    k = rng.integers(3, 9, n)
    df = pd.DataFrame({"id": np.repeat(np.arange(n), k), "age": np.repeat(rng.normal(50, 10, n).round(), k),
                       "dose": np.repeat(rng.choice(["a", "b"], n), k)})
    df["t"] = df.groupby("id").cumcount() + 1
    last = ~df["id"].duplicated(keep="last").to_numpy()
    df["E"] = 0
    if events is None:
        df.loc[rng.choice(len(df), n // 5, replace=False), "E"] = 1
    else:
        df.loc[np.flatnonzero(last)[rng.choice(n, events, replace=False)], "E"] = 1
    return df.sample(frac=1, random_state=seed).reset_index(drop=True)


def measure(df: pd.DataFrame, repeats: int) -> tuple[float, int, float, str]:
    """Median diagnose seconds, searches in one diagnosis and their seconds, the task read."""
    calls, searching = 0, 0.0
    search = task_module.find_person_periods

    def counted(*args, **kw):
        nonlocal calls, searching
        calls += 1
        start = time.perf_counter()
        try:
            return search(*args, **kw)
        finally:
            searching += time.perf_counter() - start

    times = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(repeats):
            start = time.perf_counter()
            d = kt.diagnose(df, target="E")
            times.append(time.perf_counter() - start)
        task_module.find_person_periods = counted
        try:
            kt.diagnose(df, target="E")
        finally:
            task_module.find_person_periods = search
    return statistics.median(times), calls, searching, d.task["kind"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    print(f"{'frame':<8} {'rows':>6} {'task':<15} {'searches':>8} {'search s':>9} {'diagnose s (median)':>20}")
    for name, events in (("weak", 2), ("strong", args.rows // 30), ("none", None)):
        df = frame(args.rows, events)
        seconds, calls, searching, kind = measure(df, args.repeats)
        print(f"{name:<8} {len(df):>6} {kind:<15} {calls:>8} {searching:>9.3f} {seconds:>20.3f}")


if __name__ == "__main__":
    main()
