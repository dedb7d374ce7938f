"""Model fitting time on a wide table: ``kernel_tools.fit_evaluate`` end to end, per phase.

The table is shaped like a real ICU cohort that once took more than 8 CPU minutes in "Train and
evaluate": about 6,400 rows x 48 columns, a survival target, 32 columns partly missing, a few
categorical columns, repeated stays per patient (grouped folds). Each run is in this process,
one after the other; wall and CPU seconds are printed, and ``--profile`` adds the top of a
cProfile listing so the slow part has a name.

    python benchmarks/bench_models.py                      # survival, 6,400 x 48
    python benchmarks/bench_models.py --task classification --budget 60 --profile
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import pstats
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def wide_frame(n: int = 6400, n_cols: int = 48, n_missing: int = 32, seed: int = 0,
               task: str = "survival") -> pd.DataFrame:
    """``n_cols`` columns: a patient id (1-3 stays each), 6 categorical columns, numeric
    measurements (``n_missing`` of them partly missing, 5-40% of rows, in panels of 4 missing together), and the target: event +
    duration for survival, ``y`` for classification. A few measurements carry the signal."""
    rng = np.random.default_rng(seed)
    patient = np.sort(rng.integers(0, int(n / 1.8), n))
    cols: dict[str, object] = {"patient_id": patient}
    n_target = 2 if task == "survival" else 1
    n_cat = 6
    n_num = n_cols - 1 - n_cat - n_target
    levels = [["medical", "surgical", "trauma"], ["ICU-A", "ICU-B", "ICU-C", "CCU"],
              [f"ward_{i}" for i in range(12)], ["F", "M"], ["elective", "emergency"],
              [f"dx_{i:02d}" for i in range(30)]]
    risk = np.zeros(n)
    for i in range(n_num):
        x = rng.normal(0, 1, n) if i % 3 else rng.lognormal(0, 0.6, n)
        if i < 6:
            risk += (x - x.mean()) / x.std() * (0.6 - 0.08 * i)
        if i == 6:
            risk += 0.4 * np.clip(x, -2, 2) ** 2  # one non-linear effect
        cols[f"lab_{i:02d}"] = x
    for i in range(n_cat):
        values = np.array(levels[i], dtype=object)[rng.integers(0, len(levels[i]), n)]
        if i == 0:
            risk += 0.5 * (values == "trauma")
        cols[f"cat_{i}"] = values
    frame = pd.DataFrame(cols)
    # labs are ordered in panels of 4 and missing together, as in a hospital's records: the
    # missing-value indicators of one panel are identical columns
    numeric = [c for c in frame.columns if c.startswith("lab_")]
    for start in range(0, min(n_missing, len(numeric)), 4):
        share = 0.05 + 0.35 * (start / max(n_missing - 1, 1))
        frame.loc[rng.random(n) < share, numeric[start:min(start + 4, n_missing)]] = np.nan
    if task == "survival":
        event_time = rng.exponential(30 * np.exp(-risk))
        censor = rng.uniform(5, 90, n)
        frame["days"] = np.round(np.minimum(event_time, censor), 2) + 0.01
        frame["died"] = (event_time <= censor).astype(int)
    else:
        frame["y"] = (risk - 0.5 + rng.logistic(size=n) > 0).astype(int)
    return frame


def run(task: str, n: int, n_cols: int, budget: float | None, profile: bool, seed: int = 0) -> dict:
    import kernel_tools as kt

    frame = wide_frame(n, n_cols, seed=seed, task=task)
    cut = int(0.8 * frame["patient_id"].nunique())
    train = frame[frame["patient_id"] < cut]
    test = frame[frame["patient_id"] >= cut]
    kwargs = {"target": "died", "task": "survival", "time": "days"} if task == "survival" else \
        {"target": "y", "task": "classification"}
    profiler = cProfile.Profile() if profile else None
    wall, cpu = time.perf_counter(), time.process_time()
    if profiler:
        profiler.enable()
    report = kt.fit_evaluate(train, groups="patient_id", test=test, budget=budget, **kwargs)
    if profiler:
        profiler.disable()
    out = {
        "task": task, "rows": len(train), "cols": frame.shape[1], "budget": budget,
        "wall_s": round(time.perf_counter() - wall, 2), "cpu_s": round(time.process_time() - cpu, 2),
        "model": report.model_name, "cv": report.cv_score, "holdout": report.holdout_score,
        "holdout_ci": report.holdout_ci, "candidates": report.candidates_tried,
        "degraded": report.degraded, "timings": report.timings,
    }
    if profiler:
        text = io.StringIO()
        pstats.Stats(profiler, stream=text).sort_stats("cumulative").print_stats(40)
        out["profile"] = text.getvalue()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--task", default="survival", choices=["survival", "classification"])
    ap.add_argument("--rows", type=int, default=6400)
    ap.add_argument("--cols", type=int, default=48)
    ap.add_argument("--budget", type=float, default=None, help="seconds (fit_evaluate's budget=)")
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--json", help="write the result here")
    args = ap.parse_args()
    result = run(args.task, args.rows, args.cols, args.budget, args.profile)
    profile = result.pop("profile", None)
    print(json.dumps(result, indent=2, default=str))
    if profile:
        print(profile)
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2, default=str))


if __name__ == "__main__":
    main()
