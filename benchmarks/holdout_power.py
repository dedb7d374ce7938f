"""How many sweep runs have a holdout too small to confirm? (issue 26 item 6)

Written when such a holdout failed the verdict outright; it now passes unless it shows no skill
where the cross-validation claims some (``jupyter_dcpilot.engine.holdout``), which only a run can
tell: the counts here say how many runs rest on their cross-validation alone.

For every run of a sweep record (``--record``, e.g. results/structure-dev-session3.json) that was
valid with the audit passed, the table is loaded and a holdout drawn as the co-pilot draws it
(20% of its entities, rounded up, ``--draws`` seeds); each draw is counted
(:func:`kernel_tools.models.uncertainty.holdout_size`) and called too small when even a perfect
ranking of it happens by chance at least 1 time in 1,000 (``jupyter_dcpilot.engine.holdout``).
A run is counted when most draws are too small. Prints counts only: the sealed half may be counted,
never read row by row.

    python benchmarks/holdout_power.py --record benchmarks/results/structure-dev-session3.json
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sweep import catalog  # noqa: E402

from jupyter_dcpilot.engine.holdout import IMPLAUSIBLE  # noqa: E402
from kernel_tools.diagnosis.task import event_indicator  # noqa: E402
from kernel_tools.models.uncertainty import holdout_size  # noqa: E402

HOLDOUT_SHARE = 0.2  # the split step's test_size


def _target(run: dict, df: pd.DataFrame) -> np.ndarray | None:
    if run["task"] != "survival":
        return df[run["target"]].to_numpy()
    read = event_indicator(df[run["target"]])
    if read is None or run.get("task_time") not in df.columns:
        return None
    return np.column_stack([pd.to_numeric(df[run["task_time"]], errors="coerce"), read[0]])


def too_small(run: dict, df: pd.DataFrame, draws: int) -> int | None:
    """In how many of ``draws`` holdouts of the run's table even a perfect ranking is not implausible."""
    df = df[df[run["target"]].notna()]
    entity = run.get("task_id") if run.get("task_id") in df.columns else None
    units = df[entity].to_numpy() if entity else np.arange(len(df))
    y = _target(run, df)
    if y is None:
        return None
    ids = pd.unique(units)
    count = 0
    for seed in range(draws):
        held = np.random.default_rng(seed).choice(ids, math.ceil(len(ids) * HOLDOUT_SHARE), replace=False)
        rows = np.isin(units, held)
        size = holdout_size(run["task"], y[rows], units[rows] if entity else None)
        count += size.get("holdout_perfect_by_chance", 0.0) >= IMPLAUSIBLE
    return count


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--record", required=True, action="append", help="a sweep's --json output (repeatable)")
    ap.add_argument("--draws", type=int, default=5)
    args = ap.parse_args(argv)
    tables = {d.name: d for d in catalog()}
    warnings.filterwarnings("ignore")
    for record in args.record:
        runs = json.loads(Path(record).read_text())
        kept = [r for r in runs if r.get("valid") and (r.get("audit") or {}).get("passed")]
        counts = [too_small(r, tables[r["name"]].load(), args.draws) for r in kept]
        flips = sum(c is not None and c > args.draws / 2 for c in counts)
        some = sum(c is not None and 0 < c <= args.draws / 2 for c in counts)
        print(f"{Path(record).name}: {len(kept)} runs valid with the audit passed; too small to confirm in most "
              f"draws: {flips}; in some: {some}; stay valid: {len(kept) - flips}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
