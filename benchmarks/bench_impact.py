"""Decision impact latency: how long a gate card waits for the impact of its options.

    python benchmarks/bench_impact.py --sizes 1000,10000,100000 [--repeats 3] [--json out.json]

For each size, a frame of ``rows`` × 20 columns (numeric with missing values and extreme values,
categorical, a leaked column, a binary target) and three gate cards as the co-pilot asks them:

- ``leakage``: drop the leaked column / keep it (2 options, before the split);
- ``outliers``: clip / remove / keep (3 options, learned on the training rows);
- ``imputation``: median / most frequent / as is (3 options).

Each card's estimate runs as the co-pilot runs it in the kernel: :class:`kernel_tools.impact.ImpactJob`
(a background thread; the frame sampled to at most 20,000 rows, 5 bootstrap perturbations per
option), polled every 50 ms. Timed: ``first`` = until the first option's bar can be drawn,
``total`` = until every option is done. Prints one line per card and size, the median of
``repeats`` runs; the target is ≤ 5 s at 10k rows on 2 cores.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from typing import Any

import numpy as np
import pandas as pd

COLUMNS = 20
TARGET_S = 5.0  # at 10k rows, 2 cores


def frame(rows: int, seed: int = 0) -> pd.DataFrame:
    """``rows`` × 20: 14 numeric (missing values in 4, extreme values in 2), 4 categorical, a
    leaked column and the target (the outliers and imputation cards see it without the leak)."""
    rng = np.random.default_rng(seed)
    numeric = rng.normal(size=(rows, 14))
    signal = numeric[:, 0] + 0.5 * numeric[:, 1] - 0.5 * numeric[:, 2]
    y = (signal + rng.normal(size=rows) > 0).astype(int)
    df = pd.DataFrame(numeric, columns=[f"x{i}" for i in range(14)])
    for i in range(4):
        df.loc[rng.random(rows) < 0.1, f"x{i + 3}"] = np.nan
    for i in range(2):
        extreme = rng.random(rows) < 0.01
        df.loc[extreme, f"x{i + 7}"] = rng.normal(40, 5, extreme.sum())
    for i in range(4):
        df[f"c{i}"] = rng.choice(["a", "b", "c", "d", "e"], rows)
    df["leak"] = y + rng.normal(scale=0.3, size=rows)
    df["y"] = y
    assert df.shape[1] == COLUMNS
    return df


def cards() -> dict[str, dict[str, Any]]:
    """The options of three gate cards, as a finding offers them (None: leave the data as it is)."""
    outlying, missing = ["x7", "x8"], ["x3", "x4", "x5", "x6"]
    return {
        "leakage": {"stage": "pre_split", "flagged": {"leakage": ["leak"]}, "options": [
            {"id": "drop", "action": {"function": "drop_columns", "params": {"columns": ["leak"]}}},
            {"id": "keep", "action": None}]},
        "outliers": {"stage": "post_split", "flagged": {}, "options": [
            {"id": "clip", "action": {"function": "handle_outliers",
                                      "params": {"columns": outlying, "action": "clip", "target": "y"}}},
            {"id": "remove", "action": {"function": "handle_outliers",
                                        "params": {"columns": outlying, "action": "remove", "target": "y"}}},
            {"id": "keep", "action": None}]},
        "imputation": {"stage": "post_split", "flagged": {}, "options": [
            {"id": "median", "action": {"function": "impute",
                                        "params": {"columns": missing, "method": "median", "target": "y"}}},
            {"id": "most_frequent", "action": {"function": "impute",
                                               "params": {"columns": missing, "method": "most_frequent",
                                                          "target": "y"}}},
            {"id": "keep", "action": None}]},
    }


def time_card(df: pd.DataFrame, card: dict[str, Any], poll: float = 0.05) -> dict[str, Any]:
    """One estimate, as the engine polls it: seconds to the first option and to the last."""
    from kernel_tools.impact import ImpactJob

    started = time.perf_counter()
    job = ImpactJob(df, card["options"], target="y", task="classification", stage=card["stage"],
                    flagged=card["flagged"]).start()
    first = None
    while True:
        state = job.state()
        if first is None and state["results"]:
            first = time.perf_counter() - started
        if state["status"] != "running":
            break
        time.sleep(poll)
    total = time.perf_counter() - started
    if state["status"] != "done":
        raise RuntimeError(f"the estimate ended {state['status']}: {state['error']}")
    means = {k: v.get("mean") for k, v in state["results"].items()}
    return {"first_s": first if first is not None else total, "total_s": total,
            "sample_rows": state["sample_rows"], "means": means}


def run(sizes: list[int], repeats: int, log=print) -> dict[str, Any]:
    rows_out = []
    for rows in sizes:
        df = frame(rows)
        for name, card in cards().items():
            # only the leakage card keeps the leaked column: elsewhere it would hide every difference
            data = df if name == "leakage" else df.drop(columns="leak")
            runs = [time_card(data, card) for _ in range(repeats)]
            row = {"rows": rows, "card": name, "options": len(card["options"]),
                   "sample_rows": runs[0]["sample_rows"],
                   "first_s": round(statistics.median(r["first_s"] for r in runs), 2),
                   "total_s": round(statistics.median(r["total_s"] for r in runs), 2),
                   "means": runs[0]["means"], "repeats": repeats}
            rows_out.append(row)
            log(f"impact: {rows:>7,} rows  {name:<10} {row['options']} options  sample {row['sample_rows']:>6,}  "
                f"first {row['first_s']:5.2f} s  all {row['total_s']:5.2f} s  "
                + "  ".join(f"{k} {v:.3f}" for k, v in row["means"].items() if v is not None))
    at_10k = [r["total_s"] for r in rows_out if r["rows"] == 10_000]
    return {"cores": os.cpu_count(), "rows": rows_out, "target_s": TARGET_S,
            "max_at_10k_s": max(at_10k) if at_10k else None}


def markdown(result: dict[str, Any]) -> str:
    """The docs/benchmarks.md section."""
    if result.get("error"):
        return ("## Decision impact latency (`benchmarks/bench_impact.py`)\n\n"
                f"Not run: {result['error']}.\n")
    lines = ["## Decision impact latency (`benchmarks/bench_impact.py`)", "",
             f"How long a gate card waits for its impact chart: each option applied to a sample of at most "
             f"20,000 rows and a small gradient boosting refit over 5 bootstrap perturbations, in the kernel's "
             f"background thread (`kernel_tools.impact.ImpactJob`), on {result['cores']} cores; a frame of 20 "
             f"columns; median of {result['rows'][0]['repeats'] if result['rows'] else '?'} runs. *First* = the "
             f"first bar can be drawn; *all* = every option estimated. Target: ≤ {result['target_s']:.0f} s at "
             f"10k rows.", "",
             "| rows | card | options | sampled rows | first (s) | all (s) |", "|---|---|---|---|---|---|"]
    for r in result["rows"]:
        lines.append(f"| {r['rows']:,} | {r['card']} | {r['options']} | {r['sample_rows']:,} | "
                     f"{r['first_s']:.2f} | {r['total_s']:.2f} |")
    worst = result.get("max_at_10k_s")
    if worst is not None:
        lines += ["", f"At 10k rows the slowest card took {worst:.2f} s: "
                  + ("within the target." if worst <= result["target_s"] else "over the target.")]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--markdown", action="store_true", help="print the docs/benchmarks.md section")
    args = ap.parse_args(argv)
    result = run([int(s) for s in args.sizes.split(",") if s], args.repeats,
                 log=lambda m: print(m, file=sys.stderr, flush=True))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(result, fh, indent=2)
    if args.markdown:
        print(markdown(result))
    return result


if __name__ == "__main__":
    main()
