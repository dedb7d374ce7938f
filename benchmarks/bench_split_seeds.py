"""Does the shipped demo's verdict depend on the split's luck? The demo over split seeds.

    python benchmarks/bench_split_seeds.py --seeds 20 [--json out.json]

Runs ``jupyter dcpilot demo --approve FILE`` once per seed, headless, with real kernels; the
decisions file takes every recommended answer and sets the split step's ``random_state`` to the
seed (a plan edit, as a person would in the panel). Prints one line per seed (valid, the checks
that failed, cross-validated and holdout scores with their intervals, the holdout check's
probability) and, at the end, how often the verdict differs from the most common one. Beside it,
the rule this check replaced (fail when the holdout is at most 0.55 while cross-validation claims
0.60 or more), applied to the same runs' scores.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

OLD_FLOOR, OLD_CLAIM = 0.55, 0.60  # the fixed rule holdout_confirms_cv had before


def run_seed(seed: int, work: Path) -> dict[str, Any]:
    """One headless demo run with the split seeded by ``seed``; its report's verdict and scores."""
    decisions = work / f"decisions_{seed}.json"
    decisions.write_text(json.dumps({"*": "recommended", "plan": [
        {"op": "params", "episode": "split", "params": {"random_state": seed}}]}))
    out = work / f"run_{seed}"
    began = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "jupyter_dcpilot.cli", "demo", "--approve", str(decisions),
                           "--out", str(out)], capture_output=True, text=True)
    elapsed = time.perf_counter() - began
    if done.returncode != 0:
        return {"seed": seed, "valid": None, "error": (done.stderr.strip().splitlines() or ["?"])[-1],
                "seconds": elapsed}
    report = json.loads((out / "report.json").read_text())
    model = report.get("model") or {}
    checks = {c["check"]: c for c in report["validity"]}
    holdout = checks.get("holdout_confirms_cv", {}).get("detail", "")
    p = re.search(r"\(p = ([<\d. ]+)\)", holdout)
    cv, held = model.get("cv_score"), model.get("holdout_score")
    return {"seed": seed, "valid": report["valid"], "seconds": elapsed,
            "failed": [name for name, c in checks.items() if not c["passed"]],
            "cv": cv, "cv_interval": model.get("cv_interval"), "cv_repeats": model.get("cv_repeats"),
            "holdout": held, "holdout_ci": model.get("holdout_ci"), "p": p.group(1) if p else None,
            "old_rule_fails": held is not None and cv is not None and held <= OLD_FLOOR and cv >= OLD_CLAIM}


def _interval(ci: Any) -> str:
    return f"[{ci[0]:.3f}, {ci[1]:.3f}]" if isinstance(ci, list) and None not in ci else "[n/a]"


def line(r: dict[str, Any]) -> str:
    if r["valid"] is None:
        return f"seed {r['seed']:>2}: run failed ({r['error']}) in {r['seconds']:.0f} s"
    return (f"seed {r['seed']:>2}: valid={str(r['valid']):5} cv {r['cv']:.3f} {_interval(r['cv_interval'])} "
            f"x{r['cv_repeats']}  holdout {r['holdout']:.3f} {_interval(r['holdout_ci'])}  p={r['p']}  "
            f"failed={','.join(r['failed']) or '-'}  old rule fails={r['old_rule_fails']}  {r['seconds']:.0f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--json", type=Path, help="also write every run's numbers here")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="dcpilot_seeds_") as tmp:
        for seed in range(args.seeds):
            rows.append(run_seed(seed, Path(tmp)))
            print(line(rows[-1]), flush=True)
    verdicts = Counter(r["valid"] for r in rows)
    usual, _ = verdicts.most_common(1)[0]
    changed = sum(r["valid"] != usual for r in rows)
    old = sum(r["old_rule_fails"] for r in rows if r["valid"] is not None)
    print(f"\nverdict over {len(rows)} split seeds: valid {verdicts[True]}, not valid {verdicts[False]}, "
          f"run failed {verdicts[None]}; differs from the usual verdict ({usual}) on {changed} of {len(rows)}")
    print(f"holdout_confirms_cv failed on {sum('holdout_confirms_cv' in r.get('failed', []) for r in rows)}; "
          f"the fixed rule it replaced would fail on {old} of the same runs")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
