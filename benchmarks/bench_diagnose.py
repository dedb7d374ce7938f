"""Time kernel_tools.diagnose against cleanlab's Datalab and ydata-profiling (minimal) on the
same synthetic mixed-type frames, in the same run.

    python benchmarks/bench_diagnose.py --sizes 10000,100000,1000000 --peers --peer-timeout 600

Every tool runs in its own child process on the same parquet file, so peak memory (RSS above
the level right after the frame was loaded) is measured per tool and a peer that runs too long
is stopped and reported as '>T'. ydata-profiling pins an older numpy than this project, so it
may live in another interpreter: pass --ydata-python /path/to/python (default: this one).
Targets (2 cores): 100k x 40 in < 5 s and >= 3x faster than either peer; 1M x 40 in < 45 s
with peak memory < 3x the frame's in-memory size.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def _rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _cpu_seconds() -> float:
    """User + system CPU time of this process and its finished children: unlike wall time it
    barely moves when other work competes for the two cores."""
    import resource

    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


class PeakRSS:
    """Polls the resident set size every 5 ms; ``peak - baseline`` is what the work added."""

    def __enter__(self):
        gc.collect()
        self.baseline = self.peak = _rss_bytes()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)
        self._thread.start()
        return self

    def _poll(self):
        while not self._stop.is_set():
            self.peak = max(self.peak, _rss_bytes())
            time.sleep(0.005)

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, _rss_bytes())


def _run_diagnose(df):
    sys.path.insert(0, os.path.dirname(HERE))
    from kernel_tools.diagnosis import diagnose

    d = diagnose(df, target="y")
    return {"findings": len(d.findings), "kinds": sorted({f.kind for f in d.findings}),
            "sample_size": d.sample_size}


def _run_datalab(df):
    import numpy as np
    from cleanlab import Datalab

    sys.path.insert(0, os.path.dirname(HERE))
    from kernel_tools.diagnosis.columns import profile_columns
    from kernel_tools.diagnosis.labels import model_matrix, out_of_fold_probabilities

    profiles = profile_columns(df)
    features = [c for c in df.columns if c != "y"]
    X, is_cat = model_matrix(df, profiles, features)
    X = np.where(np.isfinite(X), X, np.nanmedian(X, axis=0))
    probs = out_of_fold_probabilities(X, is_cat, df["y"].to_numpy(), 2)
    lab = Datalab(data=df, label_name="y", verbosity=0)
    lab.find_issues(features=X, pred_probs=probs)
    return {"issue_types": int(len(lab.get_issue_summary()))}


def _run_ydata(df):
    from ydata_profiling import ProfileReport

    report = ProfileReport(df, minimal=True, progress_bar=False)
    report.get_description()
    return {}


WORKERS = {"diagnose": _run_diagnose, "datalab": _run_datalab, "ydata": _run_ydata}
# imported before the clock starts: a kernel pays for imports once, not per call
IMPORTS = {
    "diagnose": ["kernel_tools.diagnosis", "sklearn.ensemble", "cleanlab.filter", "lifelines.utils",
                 "scipy.stats"],
    "datalab": ["cleanlab", "sklearn.ensemble", "kernel_tools.diagnosis.labels", "cleanlab.filter"],
    "ydata": ["ydata_profiling"],
}


def worker(tool: str, path: str) -> None:
    import importlib
    import warnings

    import pandas as pd

    warnings.simplefilter("ignore")
    sys.path.insert(0, os.path.dirname(HERE))
    for module in IMPORTS[tool]:
        importlib.import_module(module)
    df = pd.read_parquet(path)
    frame_bytes = int(df.memory_usage(deep=True).sum())
    with PeakRSS() as mem:
        t0, c0 = time.perf_counter(), _cpu_seconds()
        extra = WORKERS[tool](df)
        seconds, cpu = time.perf_counter() - t0, _cpu_seconds() - c0
    print(json.dumps({"tool": tool, "seconds": seconds, "cpu_s": cpu,
                      "peak_added_mb": (mem.peak - mem.baseline) / 1e6,
                      "frame_mb": frame_bytes / 1e6, **extra}))


def run_child(python: str, tool: str, path: str, timeout: float) -> dict:
    cmd = [python, os.path.abspath(__file__), "--worker", tool, "--path", path]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"tool": tool, "timeout": timeout}
    if out.returncode != 0:
        return {"tool": tool, "error": (out.stderr.strip().splitlines() or ["?"])[-1][:200]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def _fmt_s(r: dict | None) -> str:
    if r is None:
        return "skipped"
    if "timeout" in r:
        return f">{r['timeout']:.0f}"
    if "error" in r:
        return "error"
    return f"{r['seconds']:.2f} (cpu {r['cpu_s']:.2f})"


def _ratio(peer: dict | None, ours: dict) -> str:
    if peer is None or "error" in peer or "seconds" not in ours:
        return "-"
    t = peer.get("seconds", peer.get("timeout"))
    return (">" if "timeout" in peer else "") + f"{t / ours['seconds']:.1f}x"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--cols", type=int, default=40)
    ap.add_argument("--peers", action="store_true", help="also run Datalab and ydata-profiling")
    ap.add_argument("--peer-list", default="datalab,ydata", help="which peers --peers runs")
    ap.add_argument("--peer-timeout", type=float, default=600.0)
    ap.add_argument("--peer-max-rows", type=int, default=100_000,
                    help="run peers only up to this size (they take minutes to hours beyond)")
    ap.add_argument("--ydata-python", default=sys.executable)
    ap.add_argument("--json", help="also write the measurements to this file (for the report)")
    ap.add_argument("--worker", choices=sorted(WORKERS), help=argparse.SUPPRESS)
    ap.add_argument("--path", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker(args.worker, args.path)
        return

    sys.path.insert(0, HERE)
    from _frames import frame_bytes, mixed_frame

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in [int(s) for s in args.sizes.split(",")]:
            df = mixed_frame(n, args.cols, seed=0)
            path = os.path.join(tmp, f"frame_{n}.parquet")
            df.to_parquet(path)
            size_mb = frame_bytes(df) / 1e6
            del df
            ours = run_child(sys.executable, "diagnose", path, 3600)
            peers = {"datalab": None, "ydata": None}
            chosen = args.peer_list.split(",") if args.peers and n <= args.peer_max_rows else []
            if "datalab" in chosen:
                peers["datalab"] = run_child(sys.executable, "datalab", path, args.peer_timeout)
            if "ydata" in chosen:
                peers["ydata"] = run_child(args.ydata_python, "ydata", path, args.peer_timeout)
            rows.append((n, size_mb, ours, peers))
            peak = ours.get("peak_added_mb")
            print(f"rows={n} frame={size_mb:.0f}MB diagnose={_fmt_s(ours)}s "
                  f"peak+={peak:.0f}MB ({peak / size_mb:.2f}x frame) "
                  f"datalab={_fmt_s(peers['datalab'])}s ydata={_fmt_s(peers['ydata'])}s "
                  f"speedup vs datalab={_ratio(peers['datalab'], ours)} vs ydata={_ratio(peers['ydata'], ours)}",
                  flush=True)
            for name, r in peers.items():
                if r and "error" in r:
                    print(f"  {name} failed: {r['error']}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump([{"rows": n, "frame_mb": size_mb, "diagnose": ours, **peers} for n, size_mb, ours, peers in rows],
                      f, indent=2)
    print("\nwall seconds (CPU seconds in brackets: steadier when other processes share the cores)")
    print("| rows | frame MB | diagnose s | peak added MB (x frame) | Datalab s | ydata minimal s "
          "| vs Datalab | vs ydata |")
    print("|---|---|---|---|---|---|---|---|")
    for n, size_mb, ours, peers in rows:
        peak = ours.get("peak_added_mb", float("nan"))
        print(f"| {n} | {size_mb:.0f} | {_fmt_s(ours)} | {peak:.0f} ({peak / size_mb:.2f}x) | "
              f"{_fmt_s(peers['datalab'])} | {_fmt_s(peers['ydata'])} | {_ratio(peers['datalab'], ours)} | "
              f"{_ratio(peers['ydata'], ours)} |")


if __name__ == "__main__":
    main()
