"""Imputation against its time budget on a wide table, side by side: budget, elapsed, what was cut.

    python benchmarks/bench_budgets.py [--rows 3000] [--budgets 5,15,45] [--method auto] [--unbudgeted]

The table: 96 correlated numeric columns, 30 of them 85% missing and the rest 10%, and a 0/1
target (the kind of wide table whose imputation ran 8 min 43 s against a 3-minute budget, issue 26
item 8). ``kt.impute(df, method, target="y", budget=B)`` for each budget, in one process after a
warm-up on a small frame (a kernel has its imports by then), one OpenMP/BLAS thread. Printed per
budget: the seconds taken, their ratio to the budget (goal: at most 1.1), the imputer's own
estimate of the whole imputation, and what the budget cut, in its words; ``--unbudgeted`` also
runs it without a budget (minutes on a busy machine). The load average is printed beside them.
"""

from __future__ import annotations

import argparse
import os
import time

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402


def wide(n: int, k: int = 96, mostly: int = 30, seed: int = 0) -> pd.DataFrame:
    """``k`` correlated numbers (4 latent factors), the first ``mostly`` 85% missing, the rest 10%."""
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(n, 4))
    df = pd.DataFrame({f"x{i}": z @ rng.normal(size=4) + rng.normal(scale=0.5, size=n) for i in range(k)})
    for i, c in enumerate(df.columns):
        df.loc[rng.random(n) < (0.85 if i < mostly else 0.1), c] = np.nan
    df["y"] = (z[:, 0] > 0).astype(int)
    return df


def run(df: pd.DataFrame, method: str, budget: float | None) -> dict:
    import kernel_tools as kt

    started = time.perf_counter()
    _, report = kt.impute(df, method=method, target="y", budget=budget)
    elapsed = time.perf_counter() - started
    said = [w for w in report.warnings if "model-based imputer" in w]
    return {"budget": budget, "elapsed": elapsed, "method": report.details["method"],
            "estimate": (report.details.get("budget") or {}).get("estimate_s"),
            "cut": said[0] if said else "nothing"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=3000)
    parser.add_argument("--budgets", default="5,15,45")
    parser.add_argument("--method", default="auto")
    parser.add_argument("--unbudgeted", action="store_true")
    args = parser.parse_args()
    df = wide(args.rows)
    run(wide(200, k=12, mostly=4), "iterative", 30)  # imports and first calls
    load_start = os.getloadavg()
    budgets: list[float | None] = [float(b) for b in args.budgets.split(",") if b]
    if args.unbudgeted:
        budgets.append(None)
    rows = [run(df, args.method, b) for b in budgets]
    load_end = os.getloadavg()
    print(f"kt.impute(method={args.method!r}) on {args.rows:,} rows x 96 columns (30 of them 85% missing); "
          "one BLAS thread")
    print("| budget s | elapsed s | elapsed / budget | ran as | estimate of the whole s | what the budget cut |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        ratio = f"{r['elapsed'] / r['budget']:.2f}" if r["budget"] else "-"
        estimate = f"{r['estimate']:.0f}" if r["estimate"] is not None else "-"
        budget = f"{r['budget']:g}" if r["budget"] else "none"
        print(f"| {budget} | {r['elapsed']:.1f} | {ratio} | {r['method']} | {estimate} | {r['cut']} |")
    print(f"load average (1, 5, 15 min): start {load_start[0]:.1f} {load_start[1]:.1f} {load_start[2]:.1f}, "
          f"end {load_end[0]:.1f} {load_end[1]:.1f} {load_end[2]:.1f}")


if __name__ == "__main__":
    main()
