"""Re-diagnosis after a step that drops columns: the whole frame again (before) vs only what
changed (after, :mod:`kernel_tools.diagnosis.reuse`), side by side.

    python benchmarks/bench_rediagnose.py [--rows 100000] [--drop 5] [--repeats 3] [--before /path/to/clone]

On ``_frames.mixed_frame(rows)`` (40 mixed columns, a binary target): ``kt.diagnose`` of the frame,
then of the frame without ``drop`` of its columns (as after a "drop columns" step), each timed.
*Before*: a checkout without the reuse (``--before``, a clone of main before this change; default:
this tree with the reuse switched off by forgetting the kept results before the re-diagnosis, which
still pays for the fingerprints). *After*: this tree. Each side runs in its own child process
(imports first, then ``repeats`` rounds of both diagnoses); one OpenMP/BLAS thread; the medians
are printed with the load average. The findings of both re-diagnoses are compared.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

CHILD = r'''
import json, sys, time, warnings
sys.path[:0] = [{tree!r}, {bench!r}]
warnings.simplefilter("ignore")
import kernel_tools as kt
from _frames import mixed_frame
df = mixed_frame({rows})
after = df.drop(columns=list(df.columns[1:1 + {drop}]))
kt.diagnose(df.head(500), target="y")  # imports and first calls, as a warm kernel has them
first, again = [], []
for _ in range({repeats}):
    try:
        from kernel_tools.diagnosis import reuse
        reuse.forget() if {forget} else None
    except ImportError:
        reuse = None
    t = time.perf_counter(); kt.diagnose(df, target="y"); first.append(time.perf_counter() - t)
    if {forget} and reuse is not None:
        reuse.forget()
    t = time.perf_counter(); d = kt.diagnose(after, target="y"); again.append(time.perf_counter() - t)
data = d.to_dict(); data.pop("elapsed_s", None)
print(json.dumps({{"first": first, "again": again, "findings": json.dumps(data, default=str, sort_keys=True)}}))
'''


def side(tree: Path, rows: int, drop: int, repeats: int, forget: bool) -> dict:
    code = CHILD.format(tree=str(tree), bench=str(HERE), rows=rows, drop=drop, repeats=repeats, forget=forget)
    env = {**os.environ, "PYTHONPATH": str(tree), "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
           "MKL_NUM_THREADS": "1"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--drop", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--before", type=Path, default=None, help="a checkout without the reuse")
    args = parser.parse_args()
    load_start = os.getloadavg()
    before = side(args.before or HERE.parent, args.rows, args.drop, args.repeats, forget=args.before is None)
    after = side(HERE.parent, args.rows, args.drop, args.repeats, forget=False)
    load_end = os.getloadavg()
    med = {k: {s: statistics.median(v[s]) for s in ("first", "again")} for k, v in (("before", before), ("after", after))}
    label = f"{args.before}" if args.before else "this tree, kept results forgotten"
    print(f"{args.rows:,} rows x 40 columns, re-diagnosed without {args.drop} of them; median of {args.repeats}")
    print(f"before = {label}; after = this tree")
    print("| | first diagnosis s | re-diagnosis s | each run (re-diagnosis) |")
    print("|---|---|---|---|")
    for k, v in (("before", before), ("after", after)):
        runs = ", ".join(f"{x:.2f}" for x in v["again"])
        print(f"| {k} | {med[k]['first']:.2f} | {med[k]['again']:.2f} | {runs} |")
    print(f"re-diagnosis after / before: {med['after']['again'] / med['before']['again']:.2f}")
    print(f"same findings: {before['findings'] == after['findings']}")
    print(f"load average (1, 5, 15 min): start {load_start[0]:.1f} {load_start[1]:.1f} {load_start[2]:.1f}, "
          f"end {load_end[0]:.1f} {load_end[1]:.1f} {load_end[2]:.1f}")


if __name__ == "__main__":
    main()
