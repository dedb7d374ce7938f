"""Each detector's time in ``kt.diagnose``, next to the pandas floor and skrub's TableReport.

    python benchmarks/bench_detectors.py --sizes 100000,1000000 [--repeats 3] [--json out.json] [--markdown]
        [--skrub-python /tmp/skrub-venv/bin/python]

The frames are ``bench_diagnose.py``'s (``_frames.mixed_frame``: 40 mixed columns with a binary
target), each size in its own child process that reads the same parquet file, imports first
(a kernel pays for imports once) and then, ``repeats`` times in turn:

- the *pandas floor*: ``describe(include="all")``, ``isna().mean()`` and ``nunique()``, what any
  profile of every column costs at least;
- ``kt.diagnose(df, target="y")``, each detector timed where the runner calls it (the column
  profiles summed into one line);
- skrub's ``TableReport(df)`` with its HTML rendered (when skrub is importable, or in the
  interpreter ``--skrub-python`` names, on the same parquet file, after the other two).

Each is timed in wall and CPU seconds (``floor CPU``, ``diagnose CPU``, ``skrub CPU``): on a
shared machine the CPU seconds are the ones to compare.

Printed: the median seconds of each, diagnose over the floor and over skrub, and the median
seconds of every detector that took at least 1% of the diagnosis. Targets (issue 31):
``diagnose`` on 100k x 40 no slower than skrub's TableReport, and at most 1.25x the floor at 1M.
Timings swing on a shared machine: read them with the load average printed beside them.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE)]
TARGETS = {"vs_skrub_at_100k": 1.0, "vs_floor_at_1m": 1.25}
OUTSIDE = "outside any detector (task inference, samples)"


def timed_detectors() -> dict[str, float]:
    """Make every detector the runner calls add its seconds to the returned dict (by name;
    the per-column profiles under one name)."""
    from kernel_tools.diagnosis import registry

    spent: dict[str, float] = defaultdict(float)
    run = registry.Detectors.run

    def timed(self, name, function, *args, **kwargs):
        started = time.perf_counter()
        try:
            return run(self, name, function, *args, **kwargs)
        finally:
            key = "column profiles" if name.startswith("profile of ") else name
            spent[key] += time.perf_counter() - started

    registry.Detectors.run = timed
    return spent


def worker(path: str, repeats: int) -> dict[str, Any]:
    import warnings

    import pandas as pd

    warnings.simplefilter("ignore")
    from kernel_tools.diagnosis import diagnose, reuse

    try:
        from skrub import TableReport
    except ImportError:
        TableReport = None
    df = pd.read_parquet(path)
    spent = timed_detectors()
    diagnose(df.head(2000), target="y")  # imports the detectors' own libraries, as a kernel has
    times: dict[str, list[float]] = defaultdict(list)
    detectors: dict[str, list[float]] = defaultdict(list)
    for _ in range(repeats):
        started, cpu = time.perf_counter(), time.process_time()
        df.describe(include="all")
        df.isna().mean()
        df.nunique()
        times["floor"].append(time.perf_counter() - started)
        times["floor CPU"].append(time.process_time() - cpu)
        spent.clear()
        reuse.forget()  # a first diagnosis: no column's results kept from the one before
        started, cpu = time.perf_counter(), time.process_time()
        diagnosis = diagnose(df, target="y")
        times["diagnose"].append(time.perf_counter() - started)
        times["diagnose CPU"].append(time.process_time() - cpu)
        for name, seconds in spent.items():
            detectors[name].append(seconds)
        # what the runner does between its detectors (the task's inference, the samples): no
        # detector's line shows it, and no budget stops it
        detectors[OUTSIDE].append(max(0.0, times["diagnose"][-1] - sum(spent.values())))
        if TableReport is not None:
            started, cpu = time.perf_counter(), time.process_time()
            TableReport(df, verbose=0).html()
            times["skrub"].append(time.perf_counter() - started)
            times["skrub CPU"].append(time.process_time() - cpu)
    return {"rows": len(df), "cols": int(df.shape[1]), "findings": len(diagnosis.findings),
            "times": {k: [round(x, 3) for x in v] for k, v in times.items()},
            "detectors": {k: [round(x, 4) for x in v] for k, v in detectors.items()}}


SKRUB_WORKER = """
import sys, time, json, warnings
warnings.simplefilter("ignore")
import pandas as pd
from skrub import TableReport
df = pd.read_parquet(sys.argv[1])
TableReport(df.head(2000), verbose=0).html()  # its imports, as diagnose's warm-up
wall, cpu = [], []
for _ in range(int(sys.argv[2])):
    started, c = time.perf_counter(), time.process_time()
    TableReport(df, verbose=0).html()
    wall.append(round(time.perf_counter() - started, 3)); cpu.append(round(time.process_time() - c, 3))
import skrub
print(json.dumps({"skrub": wall, "skrub CPU": cpu, "version": skrub.__version__}))
"""


def skrub_times(python: str, path: str, repeats: int) -> dict[str, Any]:
    """skrub's TableReport timed in another interpreter (its own venv) on the same file."""
    done = subprocess.run([python, "-c", SKRUB_WORKER, path, str(repeats)], capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(done.stderr.strip().splitlines()[-1])
    return json.loads(done.stdout.strip().splitlines()[-1])


def run(sizes: list[int], repeats: int, log=print, skrub_python: str | None = None) -> dict[str, Any]:
    from _frames import mixed_frame

    results = []
    with tempfile.TemporaryDirectory(prefix="dcpilot-detectors-") as tmp:
        for n in sizes:
            path = os.path.join(tmp, f"frame_{n}.parquet")
            mixed_frame(n, 40, seed=0).to_parquet(path)
            load = round(os.getloadavg()[0], 2)
            done = subprocess.run([sys.executable, __file__, "--worker", path, "--repeats", str(repeats)],
                                  capture_output=True, text=True)
            if done.returncode != 0:
                raise RuntimeError(done.stderr.strip().splitlines()[-1])
            result = json.loads(done.stdout.strip().splitlines()[-1])
            result["load_start"] = load
            if skrub_python:
                found = skrub_times(skrub_python, path, repeats)
                result["skrub_version"] = found.pop("version")
                result["times"].update(found)
            result["load_end"] = round(os.getloadavg()[0], 2)
            medians = {k: statistics.median(v) for k, v in result["times"].items()}
            log(f"detectors: {n:,} rows: " + ", ".join(f"{k} {v:.2f} s" for k, v in medians.items())
                + f" (load {load})")
            results.append(result)
    return {"runs": results, "repeats": repeats, "cores": os.cpu_count(), "load_end": round(os.getloadavg()[0], 2)}


def markdown(result: dict[str, Any]) -> str:
    lines = ["## Diagnosis, detector by detector (`benchmarks/bench_detectors.py`)", "",
             f"`kt.diagnose(df, target='y')` on `_frames.mixed_frame` (40 columns), the median of "
             f"{result['repeats']} runs in one process, next to the pandas floor (`describe`, `isna().mean()`, "
             "`nunique()`) and skrub's `TableReport` with its HTML. Targets: no slower than skrub at 100k, "
             "≤ 1.25× the floor at 1M.", "",
             "| rows | load | floor s (CPU) | diagnose s (CPU) | skrub s (CPU) | diagnose / floor, CPU | "
             "diagnose / skrub, CPU |",
             "|---|---|---|---|---|---|---|"]
    for r in result["runs"]:
        m = {k: statistics.median(v) for k, v in r["times"].items()}
        skrub = f"{m['skrub']:.2f} ({m['skrub CPU']:.2f})" if "skrub CPU" in m else "—"
        vs_skrub = f"{m['diagnose CPU'] / m['skrub CPU']:.2f}" if "skrub CPU" in m else "—"
        lines.append(f"| {r['rows']:,} | {r['load_start']}–{r.get('load_end', '')} | {m['floor']:.2f} "
                     f"({m['floor CPU']:.2f}) | {m['diagnose']:.2f} ({m['diagnose CPU']:.2f}) | {skrub} | "
                     f"{m['diagnose CPU'] / m['floor CPU']:.2f} | {vs_skrub} |")
    lines += ["", "Detectors (median seconds; those under 1% of the diagnosis left out):", "",
              "| detector | " + " | ".join(f"{r['rows']:,}" for r in result["runs"]) + " |",
              "|---|" + "---|" * len(result["runs"])]
    medians = [{k: statistics.median(v) for k, v in r["detectors"].items()} for r in result["runs"]]
    totals = [statistics.median(r["times"]["diagnose"]) for r in result["runs"]]
    names = sorted({k for m in medians for k, v in m.items()}, key=lambda k: -max(m.get(k, 0) for m in medians))
    for name in names:
        if all(m.get(name, 0) < 0.01 * t for m, t in zip(medians, totals)):
            continue
        lines.append(f"| {name} | " + " | ".join(f"{m[name]:.3f}" if name in m else "—" for m in medians) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> dict[str, Any] | None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="100000,1000000")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--json")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--skrub-python", help="an interpreter with skrub installed (e.g. its own venv): "
                    "TableReport timed there on the same file")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args.worker, args.repeats)))
        return None
    result = run([int(s) for s in args.sizes.split(",") if s], args.repeats,
                 log=lambda m: print(m, file=sys.stderr, flush=True), skrub_python=args.skrub_python)
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1))
    if args.markdown:
        print(markdown(result))
    return result


if __name__ == "__main__":
    main()
