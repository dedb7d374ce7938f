"""Beyond one machine's memory: the co-pilot on a Dask frame, against pandas on a tenth of it.

    python benchmarks/bench_dask.py --rows 80000000 --data /tmp/dcpilot-scale --out docs/benchmarks.md

Generates (once, :mod:`dask_data`) a folder of Parquet files whose pandas frame would take at
least 1.5x this machine's memory, and a folder linking its first tenth. Then, one at a time,
each in its own process while this one samples the memory of that process and its children
(the kernel, its Dask threads) every 0.2 s:

1. pandas on the tenth: read, ``diagnose``, undo (a checkpoint restore) — and the frame's
   memory, times ten, is what the whole data set would take in pandas;
2. Dask on the whole: ``diagnose`` — time, peak memory, how many times it read the data (the
   column-chunk bytes Dask's Parquet reader was asked for over those of the files,
   :mod:`parquet_reads`; and, apart, every byte the process read, ``/proc/<pid>/io``'s
   ``rchar``, which adds the shuffles' files and spilled partitions) — and undo on the lazy frame;
3. ``jupyter dcpilot run --approve recommended`` end to end, Dask on the whole and pandas on
   the tenth (skip with ``--no-e2e``).

The findings (kind and columns) of 1 and 2 are compared. The numbers go into a section of
``--out`` between ``<!-- dask:start -->`` and ``<!-- dask:end -->`` (replaced when present).
``--only PART ...`` runs some of these again on the data already written, into the results of
an earlier ``--json``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

START, END = "<!-- dask:start -->", "<!-- dask:end -->"
TARGET = "outcome"


# -- measured in a child process -----------------------------------------------------------------

def _rchar() -> int:
    with open("/proc/self/io") as f:
        return int(next(line for line in f if line.startswith("rchar")).split()[1])


def _findings(diagnosis: Any) -> list[dict[str, Any]]:
    return [{"kind": f.kind, "columns": sorted(f.columns), "severity": f.severity,
             "basis": f.evidence.get("basis")} for f in diagnosis.findings]


def child_pandas(data: str) -> dict[str, Any]:
    import pandas as pd
    import psutil

    import kernel_tools as kt
    from kernel_tools.checkpoints import CheckpointStore

    rss0 = psutil.Process().memory_info().rss
    t0 = time.perf_counter()
    df = pd.read_parquet(data)
    read_s = time.perf_counter() - t0
    rss = psutil.Process().memory_info().rss - rss0
    deep = int(df.memory_usage(deep=True).sum())
    t0 = time.perf_counter()
    diagnosis = kt.diagnose(df, target=TARGET)
    diagnose_s = time.perf_counter() - t0
    namespace = {"df": df}
    store = CheckpointStore(namespace)
    cp = store.save(["df"], "before drop")
    namespace["df"], _ = kt.drop_columns(df, ["discharge_code"])
    t0 = time.perf_counter()
    store.restore(cp)
    undo_s = time.perf_counter() - t0
    return {"rows": len(df), "columns": df.shape[1], "read_s": read_s, "rss_bytes": rss, "deep_bytes": deep,
            "diagnose_s": diagnose_s, "undo_s": undo_s, "findings": _findings(diagnosis)}


def child_dask(data: str) -> dict[str, Any]:
    import dask.dataframe as dd
    from parquet_reads import ParquetReads

    import kernel_tools as kt
    from kernel_tools.checkpoints import CheckpointStore

    client = kt.dask_client()
    df = dd.read_parquet(data)
    before = _rchar()
    t0 = time.perf_counter()
    with ParquetReads() as reads:
        diagnosis = kt.diagnose(df, target=TARGET)
    diagnose_s = time.perf_counter() - t0
    read = _rchar() - before
    namespace = {"df": df}
    store = CheckpointStore(namespace)
    cp = store.save(["df"], "before drop")
    namespace["df"], _ = kt.drop_columns(df, ["discharge_code"])
    namespace["df"], _ = kt.deduplicate(namespace["df"])
    t0 = time.perf_counter()
    store.restore(cp)
    undo_s = time.perf_counter() - t0
    restored = list(namespace["df"].columns) == list(df.columns)
    client.close()
    return {"rows": diagnosis.shape[0], "columns": diagnosis.shape[1], "diagnose_s": diagnose_s,
            "bytes_read": read, "parquet_reads": reads.times(data), "file_reads_max": reads.most_per_file(),
            "undo_s": undo_s, "undo_restored": restored,
            "lazy": diagnosis.column_stats.get("lazy"), "findings": _findings(diagnosis)}


# -- the parent: runs the children one at a time and samples their memory -------------------------

def _tree_rss(pid: int) -> int:
    import psutil

    try:
        root = psutil.Process(pid)
        procs = [root] + root.children(recursive=True)
    except psutil.NoSuchProcess:
        return 0
    total = 0
    for p in procs:
        try:
            total += p.memory_info().rss
        except psutil.NoSuchProcess:
            pass
    return total


def measured(cmd: list[str], timeout: float, cwd: str | None = None, log: Path | None = None) -> dict[str, Any]:
    """Run ``cmd`` (niced), sampling the peak memory of it and its children; its stdout's last line.
    With ``log``, its stderr (a CLI run's progress lines) goes there as it comes and the peak so
    far to ``<log>.peak`` every few seconds: a run stopped before its end still shows how far it got."""
    started = time.perf_counter()
    err_to = open(log, "w") if log else subprocess.PIPE  # noqa: SIM115 (closed below)
    proc = subprocess.Popen(["nice", "-n", "10", *cmd], stdout=subprocess.PIPE, stderr=err_to, text=True, cwd=cwd)
    peak = [0, 0.0]  # bytes, and when (seconds from the start: which step, by the log's clock)
    done = threading.Event()

    def sample() -> None:
        ticks = 0
        while not done.is_set():
            now = _tree_rss(proc.pid)
            if now > peak[0]:
                peak[0], peak[1] = now, round(time.perf_counter() - started, 1)
            ticks += 1
            if log and ticks % 25 == 0:
                Path(f"{log}.peak").write_text(json.dumps({"seconds": round(time.perf_counter() - started),
                                                           "peak_bytes": peak[0], "peak_at_s": peak[1]}))
            time.sleep(0.2)

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        done.set()
        return {"error": f"timed out after {timeout:.0f} s", "peak_bytes": peak[0], "peak_at_s": peak[1]}
    finally:
        if log:
            err_to.close()
    done.set()
    thread.join()
    if log:
        err = Path(log).read_text()
    last = (out.strip().splitlines() or [""])[-1]
    result: dict[str, Any] = {"seconds": time.perf_counter() - started, "peak_bytes": peak[0],
                              "peak_at_s": peak[1], "returncode": proc.returncode}
    try:
        result.update(json.loads(last))
    except ValueError:
        result["error"] = (err.strip().splitlines() or ["no output"])[-1][:300]
    return result


def e2e(data: Path, engine: str, timeout: float, log: Path | None = None) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix=f"dcpilot-dask-{engine}-") as out:
        result = measured([sys.executable, "-m", "jupyter_dcpilot.cli", "run", str(data), "--target", TARGET,
                           "--engine", engine, "--approve", "recommended", "--out", out,
                           # the default budgets are set for in-memory tables (a step at 4x its
                           # budget is stopped): at this size every step gets the whole timeout
                           "--budget", str(int(timeout / 4))], timeout, log=log)
        report = Path(out) / "report.json"
        if report.is_file():
            r = json.loads(report.read_text())
            result["checks_failed"] = [c["check"] for c in r.get("validity", []) if not c["passed"]]
            model = r.get("model") or {}
            result["model_note"] = next((w for w in r.get("warnings", []) if "in-memory sample" in w), None)
            result["model"] = {k: model.get(k) for k in ("name", "metric", "cv_score", "holdout_score")}
            result["steps"] = [s.get("title") for s in r.get("steps", []) if s.get("status") == "done"] \
                if isinstance(r.get("steps"), list) else None
    return result


def compare(small: list[dict[str, Any]], full: list[dict[str, Any]]) -> dict[str, Any]:
    key = lambda f: (f["kind"], tuple(f["columns"]))  # noqa: E731
    a, b = {key(f) for f in small}, {key(f) for f in full}
    return {"same": sorted(map(str, a & b)), "only_pandas": sorted(map(str, a - b)),
            "only_dask": sorted(map(str, b - a)), "match": a == b}


def render(r: dict[str, Any]) -> str:
    gib = lambda b: f"{b / 2**30:.1f} GiB" if b else "n/a"  # noqa: E731
    sec = lambda s: "n/a" if not isinstance(s, (int, float)) else (  # noqa: E731
        f"{s:,.0f} s" if s >= 10 else f"{s:.2f} s" if s >= 0.01 else f"{s * 1000:.2f} ms")
    p, d = r.get("pandas") or {}, r.get("dask") or {}
    data = r["data"]
    lines = [START, "## Beyond one machine's memory: Dask", "",
             f"*Written by `benchmarks/bench_dask.py` on {r['when']}, load average at start "
             f"{r['load'][0]:.1f} (2 cores shared with other work: times are upper bounds).*", "",
             f"Data: {data['rows']:,} visits × {data['columns']} columns in {data['files']} Parquet files "
             f"({gib(data['disk_bytes'])} on disk) — patients with 1–9 visits, missing values, a leaked "
             "column, outliers, inconsistent categories, duplicated rows. As a pandas frame it would take "
             f"about **{gib(r['pandas_equivalent_bytes'])}** (ten times the first tenth's "
             f"`memory_usage(deep=True)`; {gib(r['pandas_equivalent_rss'])} by the reading process's memory), "
             f"{r['pandas_equivalent_bytes'] / r['machine_bytes']:.2f}× this machine's {gib(r['machine_bytes'])}.",
             "", "| | pandas, first tenth | Dask, whole data |", "|---|---|---|",
             f"| rows | {p.get('rows', 0):,} | {d.get('rows', 0):,} |",
             f"| `diagnose` | {sec(p.get('diagnose_s'))} | {sec(d.get('diagnose_s'))} |",
             f"| peak memory of the diagnosing process | {gib(p.get('peak_bytes'))} | {gib(d.get('peak_bytes'))} |",
             f"| times `diagnose` read the data (column-chunk bytes the Parquet reader was asked for / "
             f"bytes of every column chunk; the most reads of one file) | 1 (in memory) | "
             f"{d.get('parquet_reads', 0):.2f}; {d.get('file_reads_max', 0)} |",
             f"| bytes the diagnosing process read from disk, over the files' size (adds the shuffles' and "
             f"spilled partitions' files) | | {d.get('bytes_read', 0) / data['disk_bytes']:.2f} |",
             f"| undo (restore the checkpoint before a step) | {sec(p.get('undo_s'))} | {sec(d.get('undo_s'))} |"]
    for engine, label in (("e2e_pandas", "pandas"), ("e2e_dask", "Dask")):
        e = r.get(engine)
        if e:
            state = e.get("state") or e.get("error")
            at = f" at {e['peak_at_s']:,.0f} s" if e.get("peak_at_s") else ""
            lines.append(f"| `jupyter dcpilot run --approve recommended` ({label}) | {sec(e.get('seconds'))}, "
                         f"peak {gib(e.get('peak_bytes'))}{at}, {state}, valid: {e.get('valid')} | |"
                         if engine == "e2e_pandas" else
                         f"| `jupyter dcpilot run --engine dask --approve recommended` | | {sec(e.get('seconds'))}, "
                         f"peak {gib(e.get('peak_bytes'))}{at}, {state}, valid: {e.get('valid')} |")
    c = r.get("comparison") or {}
    lines += ["", f"Findings, pandas on the tenth vs Dask on the whole (kind and columns): "
              f"{'**the same**' if c.get('match') else 'they differ'} — {len(c.get('same', []))} in common"
              + (f"; only pandas: {', '.join(c['only_pandas'])}" if c.get("only_pandas") else "")
              + (f"; only Dask: {', '.join(c['only_dask'])}" if c.get("only_dask") else "") + ".",
              "Basis of each Dask finding: " + ", ".join(f"{f['kind']} ({f['basis']})" for f in d.get("findings", [])) + ".",
              "", "Goals: peak memory under 8 GB, `diagnose` reads the data at most three times, the findings "
              "match the pandas run on the tenth. The end-to-end runs step by step: "
              "[scale.md](scale.md#measured-this-machine-2-cores-236-gib)."]
    if r.get("e2e_data"):
        ed = r["e2e_data"]
        lines += ["", f"The end-to-end runs used a smaller set of the same kind: {ed['rows']:,} visits in "
                  f"{ed['files']} files (Dask) and its first tenth (pandas)."]
    if r.get("measured_again"):
        lines += ["", "Measured again later: " + "; ".join(f"{part} on {when}" for part, when
                                                          in sorted(r["measured_again"].items())) + "."]
    if r.get("e2e_load"):
        lines += ["", f"The end-to-end runs started at load average {r['e2e_load'][0]:.1f}."]
    e = r.get("e2e_dask") or {}
    if e.get("model_note"):
        lines += ["", f"The model: {e['model_note']}."]
    if e.get("checks_failed"):
        lines += ["", f"Validity checks that failed in the Dask run: {', '.join(e['checks_failed'])}."]
    lines += [END]
    return "\n".join(lines)


def write_section(out: Path, text: str) -> None:
    old = out.read_text() if out.is_file() else ""
    if START in old and END in old:
        new = old[: old.index(START)] + text + old[old.index(END) + len(END):]
    else:
        new = old.rstrip("\n") + ("\n\n" if old else "") + text + "\n"
    out.write_text(new)


PARTS = ["diagnose-pandas", "diagnose-dask", "e2e-pandas", "e2e-dask"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=80_000_000)
    ap.add_argument("--chunk-rows", type=int, default=500_000, help="rows per Parquet file")
    ap.add_argument("--data", type=Path, default=Path(tempfile.gettempdir()) / "dcpilot-scale")
    ap.add_argument("--out", type=Path, default=HERE.parent / "docs" / "benchmarks.md")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--no-e2e", dest="e2e", action="store_false")
    ap.add_argument("--only", nargs="+", choices=PARTS,
                    help="run only these parts, replacing them in the results already in --json")
    ap.add_argument("--e2e-rows", type=int, default=0,
                    help="run the end-to-end runs on a generated set of this many rows instead (0: the same data)")
    ap.add_argument("--timeout", type=float, default=4 * 3600)
    ap.add_argument("--child", choices=["pandas", "dask"])
    args = ap.parse_args()
    if args.child:
        result = child_pandas(str(args.data)) if args.child == "pandas" else child_dask(str(args.data))
        print(json.dumps(result, default=str))
        return
    import dask_data
    import psutil

    full, small = args.data / "full", args.data / "small"
    parts = set(args.only or (PARTS if args.e2e else PARTS[:2]))
    if args.only:
        if not (args.json and args.json.is_file()):
            ap.error("--only adds to the results of an earlier run: give its --json")
        results = json.loads(args.json.read_text())
        when = time.strftime("%Y-%m-%d %H:%M")
        results["measured_again"] = {**results.get("measured_again", {}),
                                     **{part: f"{when}, load {os.getloadavg()[0]:.1f}" for part in args.only}}
    else:
        results = {"when": time.strftime("%Y-%m-%d %H:%M"), "load": list(os.getloadavg()),
                   "machine_bytes": psutil.virtual_memory().total}
        results["data"] = dask_data.write(args.rows, full, args.chunk_rows, small)
    me = [sys.executable, str(Path(__file__).resolve())]
    if "diagnose-pandas" in parts:
        results["pandas"] = measured([*me, "--child", "pandas", "--data", str(small)], args.timeout)
        results["pandas_equivalent_bytes"] = 10 * results["pandas"].get("deep_bytes", 0)
        results["pandas_equivalent_rss"] = 10 * results["pandas"].get("rss_bytes", 0)
    if "diagnose-dask" in parts:
        results["dask"] = measured([*me, "--child", "dask", "--data", str(full)], args.timeout)
    if "pandas" in results and "dask" in results:
        results["comparison"] = compare(results["pandas"].get("findings", []), results["dask"].get("findings", []))
    if parts & {"e2e-pandas", "e2e-dask"}:
        logs = (args.json or args.out).parent
        e2e_full, e2e_small = full, small
        if args.e2e_rows:  # a smaller data set of the same kind for the end-to-end runs
            chunk = min(args.chunk_rows, max(1000, args.e2e_rows // 10))
            e2e_full, e2e_small = args.data / "e2e-full", args.data / "e2e-small"
            results["e2e_data"] = dask_data.write(args.e2e_rows, e2e_full, chunk, e2e_small)
        results["e2e_load"] = list(os.getloadavg())
        if "e2e-pandas" in parts:
            results["e2e_pandas"] = e2e(e2e_small, "pandas", args.timeout, logs / "e2e-pandas.log")
        if "e2e-dask" in parts:
            results["e2e_dask"] = e2e(e2e_full, "dask", args.timeout, logs / "e2e-dask.log")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2, default=str))
    write_section(args.out, render(results))
    print(json.dumps({k: v for k, v in results.items() if k in ("dask", "pandas", "comparison")}, default=str)[:3000])


if __name__ == "__main__":
    main()
