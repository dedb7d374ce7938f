"""``kt.diagnose`` against its time budget on wide tables below the column sample's threshold.

    python benchmarks/bench_diagnose_budget.py [--shapes 5000x1000,2000x1900] [--budgets 0,10,30]

The table: numeric columns with 20% missing values and a 0/1 target (budget 0: no budget). In one
process after a warm-up on a small frame, one OpenMP/BLAS thread. Printed per shape and budget:
the seconds taken, their ratio to the budget (goal: at most 1.1, issue 31), the slowest checks,
and what the ``diagnosis_incomplete`` finding says was not checked. To compare with another
source tree, run it with that tree first on PYTHONPATH.
"""

from __future__ import annotations

import argparse
import os
import time

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from bench_detectors import timed_detectors  # noqa: E402


def frame(rows: int, columns: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(rows, columns))
    X[rng.random(X.shape) < 0.2] = np.nan
    df = pd.DataFrame(X, columns=[f"c{i}" for i in range(columns)])
    return df.assign(y=rng.integers(0, 2, rows))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shapes", default="5000x1000", help="ROWSxCOLUMNS, comma-separated")
    ap.add_argument("--budgets", default="0,10", help="seconds, comma-separated (0: no budget)")
    args = ap.parse_args()
    import kernel_tools as kt

    seconds = timed_detectors()
    kt.diagnose(frame(200, 5), target="y")  # warm-up: imports
    print(f"load average {os.getloadavg()[0]:.2f}; kernel_tools from {os.path.dirname(kt.__file__)}")
    for shape in args.shapes.split(","):
        rows, columns = map(int, shape.split("x"))
        df = frame(rows, columns)
        for budget in map(float, args.budgets.split(",")):
            seconds.clear()
            started = time.perf_counter()
            d = kt.diagnose(df, target="y", budget=budget or None)
            took = time.perf_counter() - started
            ratio = f"{took / budget:.2f}" if budget else "-"
            slow = ", ".join(f"{k} {v:.1f}" for k, v in sorted(seconds.items(), key=lambda kv: -kv[1])[:4])
            print(f"{rows:>7,} x {columns:>5,}  budget {budget or '-':>5}  took {took:6.1f} s  ratio {ratio:>5}  "
                  f"slowest: {slow}")
            for f in d.findings:
                if f.kind == "diagnosis_incomplete":
                    print(f"    not checked: {f.summary[:300]}")


if __name__ == "__main__":
    main()
