"""One command, one report: ``make bench`` runs this and writes docs/benchmarks.md.

    python benchmarks/run_all.py --out docs/benchmarks.md
    python benchmarks/run_all.py --quick --out /tmp/bench.md      # a smoke run (about a minute)

Runs, one after the other (never two heavy measurements at once): the quality suite
(``quality.py``, every co-pilot run audited by ``audit.py``; with the co-pilot's model against an
external reference, ``reference.py``), the diagnosis precision/recall on shared data
(``diagnose_quality.py``), the speed comparison (``bench_diagnose.py``), the end-to-end scale
benchmark (``bench_scale.py``), the checkpoint benchmark (``bench_checkpoints.py``) and the
decision impact latency (``bench_impact.py``), each detector's time (``bench_detectors.py``), a
cell beside an impact estimate (``bench_background.py``), each speed benchmark in child processes; then renders the report (``report.py``), with the quietly-invalid
counts before → after from the records in ``benchmarks/results/`` (``audit_record.py``: the full
sweep takes hours, so it is recorded, not rerun), and last the Dask benchmark on data larger than
memory (``bench_dask.py``, its own section; ``--no-dask`` keeps the last one). Machine, versions
and load average are read at the start.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import report  # noqa: E402

YDATA_VENV = Path("/tmp/ydata-venv/bin/python")


# issue 31's before -> after record (bench_scale.py --before, installs timed by hand): kept as written
FAST_LOOP = ("<!-- fast-loop:start -->", "<!-- fast-loop:end -->")


def ydata_python(choice: str) -> str | None:
    """The interpreter that has ydata-profiling ('auto': its own venv, else this one), or None."""
    candidates = [choice] if choice != "auto" else [str(YDATA_VENV), sys.executable]
    for python in candidates:
        if Path(python).exists() and subprocess.run([python, "-c", "import ydata_profiling"],
                                                    capture_output=True, timeout=300).returncode == 0:
            return python
    return None


def run_speed(sizes: list[int], *, cols: int, peers: bool, peer_max_rows: int, peer_timeout: float,
              ydata: str | None, tmp: Path) -> dict[str, Any]:
    out = tmp / "speed.json"
    peer_list = ["datalab"] + (["ydata"] if ydata else [])
    cmd = [sys.executable, str(HERE / "bench_diagnose.py"), "--sizes", ",".join(map(str, sizes)),
           "--cols", str(cols), "--peer-timeout", str(peer_timeout), "--peer-max-rows", str(peer_max_rows),
           "--json", str(out)]
    if peers:
        cmd += ["--peers", "--peer-list", ",".join(peer_list)]
    if ydata:
        cmd += ["--ydata-python", ydata]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0 or not out.is_file():
        return {"error": (proc.stderr.strip().splitlines() or ["?"])[-1][:300]}
    rows = json.loads(out.read_text())
    growth = {}
    for tool in ("diagnose", "datalab", "ydata"):
        done = [r for r in rows if r.get(tool) and "seconds" in r[tool]]
        for clock, key in (("wall", "seconds"), ("cpu", "cpu_s")):
            pts = [(r["rows"], r[tool][key]) for r in done]
            growth[f"{tool} ({clock})"] = (report.growth_exponent(*zip(*pts)) if len(pts) >= 2 else None, len(pts))
    return {"rows": rows, "cols": cols, "peer_max_rows": peer_max_rows if peers else 0,
            "peer_timeout": peer_timeout, "growth": growth,
            "ydata": ("available" if ydata else "not available (no interpreter with ydata-profiling; "
                      "create /tmp/ydata-venv, see the Makefile)")}


def run_checkpoints(gb: float, tmp: Path) -> dict[str, Any]:
    out = tmp / "checkpoints.json"
    proc = subprocess.run([sys.executable, str(HERE / "bench_checkpoints.py"), "--gb", str(gb), "--spill",
                           "--json", str(out)], capture_output=True, text=True)
    if proc.returncode != 0 or not out.is_file():
        return {"error": (proc.stderr.strip().splitlines() or ["?"])[-1][:300]}
    return json.loads(out.read_text())


def run_model_fitting(rows: int, budgets: list[float | None], tmp: Path,
                      tasks: tuple[str, ...] = ("survival", "classification")) -> list[dict[str, Any]]:
    """``bench_models.py`` (fit_evaluate on a wide table) per task and budget, each in a child."""
    out = []
    for task in tasks:
        for budget in budgets:
            path = tmp / f"models-{task}-{budget}.json"
            cmd = [sys.executable, str(HERE / "bench_models.py"), "--task", task, "--rows", str(rows),
                   "--json", str(path)] + (["--budget", str(budget)] if budget else [])
            proc = subprocess.run(cmd, capture_output=True, text=True)
            if proc.returncode != 0 or not path.is_file():
                out.append({"task": task, "budget": budget,
                            "error": (proc.stderr.strip().splitlines() or ["?"])[-1][:300]})
            else:
                out.append(json.loads(path.read_text()))
    return out
def run_impact(sizes: list[int], repeats: int, tmp: Path, log: Callable[[str], None]) -> dict[str, Any]:
    """``bench_impact.py``: how long a gate card waits for its options' impact, per frame size."""
    out = tmp / "impact.json"
    proc = subprocess.run([sys.executable, str(HERE / "bench_impact.py"), "--sizes", ",".join(map(str, sizes)),
                           "--repeats", str(repeats), "--json", str(out)],
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    for line in proc.stderr.splitlines():
        if line.startswith("impact: "):
            log(line)
    if proc.returncode != 0 or not out.is_file():
        return {"error": (proc.stderr.strip().splitlines() or ["?"])[-1][:300]}
    return json.loads(out.read_text())


def run_json(script: str, args: list[str], tmp: Path, prefix: str, log: Callable[[str], None]) -> dict[str, Any]:
    """A benchmark script that writes its results with ``--json``; its lines starting with
    ``prefix`` are logged."""
    out = tmp / f"{Path(script).stem}.json"
    proc = subprocess.run([sys.executable, str(HERE / script), *args, "--json", str(out)],
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    for line in proc.stderr.splitlines():
        if line.startswith(prefix):
            log(line)
    if proc.returncode != 0 or not out.is_file():
        return {"error": (proc.stderr.strip().splitlines() or ["?"])[-1][:300]}
    return json.loads(out.read_text())


def run_mcp(rows: int, runs: int, tmp: Path, log: Callable[[str], None]) -> dict[str, Any]:
    """``bench_mcp.py``: what the MCP tool call adds to the diagnosis, and the privacy audit of its answers."""
    out = tmp / "mcp.json"
    proc = subprocess.run([sys.executable, str(HERE / "bench_mcp.py"), "--rows", str(rows), "--runs", str(runs),
                           "--json", str(out)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    for line in proc.stderr.splitlines():
        if line.startswith("mcp: "):
            log(line)
    if proc.returncode != 0 or not out.is_file():
        return {"error": (proc.stderr.strip().splitlines() or ["?"])[-1][:300]}
    return json.loads(out.read_text())


def run_scale(sizes: list[int], tmp: Path, log: Callable[[str], None]) -> dict[str, Any]:
    """``bench_scale.py``: the command line end to end on 1k … 1M rows × 50 columns."""
    out = tmp / "scale.json"
    proc = subprocess.run([sys.executable, str(HERE / "bench_scale.py"), "--sizes", ",".join(map(str, sizes)),
                           "--json", str(out)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    for line in proc.stderr.splitlines():
        if line.startswith("scale: "):
            log(line)
    if proc.returncode != 0 or not out.is_file():
        return {"error": (proc.stderr.strip().splitlines() or ["?"])[-1][:300]}
    return json.loads(out.read_text())


def collect(args: argparse.Namespace, log: Callable[[str], None]) -> dict[str, Any]:
    import audit_record
    import quality

    results: dict[str, Any] = {"machine": report.machine_info(), "versions": report.versions(),
                               "audit_records": audit_record.load_records()}
    started = time.perf_counter()
    cases = [c for c in args.cases.split(",") if c] or None
    with tempfile.TemporaryDirectory(prefix="dcpilot-bench-") as tmp_name:
        tmp = Path(tmp_name)
        if not args.skip_quality:
            keep = Path(args.keep) if args.keep else None
            results["quality"] = quality.run_suite(cases, n=args.quality_n, timeout=args.case_timeout, log=log,
                                                   workdir=keep, reference_seconds=args.reference_seconds or None)
            sizes = [int(x) for x in args.e2e_sizes.split(",") if x]
            results["scaling"] = quality.run_scaling(sizes, timeout=args.case_timeout, log=log)
            pts = [(r["rows"], r["seconds"]) for r in results["scaling"] if r["state"] != "error"]
            results["e2e_growth"] = (report.growth_exponent(*zip(*pts)) if len(pts) >= 2 else None, len(pts))
            if not args.quick:
                import diagnose_quality

                results["diagnose_quality"] = diagnose_quality.collect(list(diagnose_quality.CASES), log=log)
        if not args.skip_speed:
            ydata = ydata_python(args.ydata_python) if args.peers else None
            if ydata:
                version = subprocess.run([ydata, "-c", "import ydata_profiling; print(ydata_profiling.__version__)"],
                                         capture_output=True, text=True).stdout.strip()
                results["versions"]["ydata-profiling"] = f"{version} (own venv: {ydata})"
            results["speed"] = run_speed([int(s) for s in args.sizes.split(",")], cols=args.cols,
                                         peers=args.peers, peer_max_rows=args.peer_max_rows,
                                         peer_timeout=args.peer_timeout, ydata=ydata, tmp=tmp)
            log("speed: done")
            scale = [int(x) for x in args.scale_sizes.split(",") if x]
            if scale:
                results["scale"] = run_scale(scale, tmp, log)
            results["checkpoints"] = run_checkpoints(args.checkpoint_gb, tmp)
            log("checkpoints: done")
            impact = [int(x) for x in args.impact_sizes.split(",") if x]
            if impact:
                results["impact"] = run_impact(impact, 1 if args.quick else 3, tmp, log)
            detectors = [int(x) for x in args.detector_sizes.split(",") if x]
            if detectors:
                results["detectors"] = run_json("bench_detectors.py", ["--sizes", args.detector_sizes, "--repeats",
                                                                       "1" if args.quick else "3"], tmp, "detectors: ", log)
            if not args.quick:
                results["background"] = run_json("bench_background.py", [], tmp, "background: ", log)
            if args.mcp_rows:
                results["mcp"] = run_mcp(args.mcp_rows, 1 if args.quick else 5, tmp, log)
            budgets = [None] + [float(b) for b in args.model_budgets.split(",") if b]
            tasks = ("survival",) if args.quick else ("survival", "classification")
            results["model_fitting"] = run_model_fitting(args.model_rows, budgets, tmp, tasks)
            log("model fitting: done")
    results["elapsed_s"] = time.perf_counter() - started
    results["load_end"] = list(os.getloadavg())
    return results


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=str(HERE.parent / "docs" / "benchmarks.md"))
    ap.add_argument("--json", help="also keep the raw results here")
    ap.add_argument("--keep", help="keep each case's files and co-pilot notebook/report in this folder")
    ap.add_argument("--quick", action="store_true",
                    help="smoke run: tiny cases, 2k rows, no peers, a small checkpoint frame")
    ap.add_argument("--cases", default="", help="quality cases (default: every available one)")
    ap.add_argument("--quality-n", type=int, default=None, help="shrink every quality case to ~n rows")
    ap.add_argument("--case-timeout", type=float, default=900, help="seconds per co-pilot run")
    ap.add_argument("--reference-seconds", type=float, default=120,
                    help="time budget of the external reference model per quality case (0: not run)")
    ap.add_argument("--e2e-sizes", default="2000,20000,100000",
                    help="rows of the synthetic frames the co-pilot runs end to end (growth exponent)")
    ap.add_argument("--sizes", default=None, help="speed frame sizes (default 10000,100000,1000000)")
    ap.add_argument("--cols", type=int, default=40)
    ap.add_argument("--scale-sizes", default="1000,10000,100000,1000000",
                    help="rows of the end-to-end scale benchmark (bench_scale.py; '' skips it)")
    ap.add_argument("--no-peers", dest="peers", action="store_false")
    ap.add_argument("--peer-max-rows", type=int, default=100_000,
                    help="peers run only up to this size; above it: 'not run (budget)'")
    ap.add_argument("--peer-timeout", type=float, default=900, help="time budget per peer run, seconds")
    ap.add_argument("--ydata-python", default="auto", help="interpreter with ydata-profiling (auto: /tmp/ydata-venv)")
    ap.add_argument("--checkpoint-gb", type=float, default=1.0)
    ap.add_argument("--impact-sizes", default="1000,10000,100000",
                    help="rows of the decision impact latency benchmark (bench_impact.py; '' skips it)")
    ap.add_argument("--detector-sizes", default="100000,1000000",
                    help="rows of the per-detector diagnosis benchmark (bench_detectors.py; '' skips it)")
    ap.add_argument("--mcp-rows", type=int, default=100_000,
                    help="rows of the MCP tool-call latency benchmark (bench_mcp.py; 0 skips it)")
    ap.add_argument("--model-rows", type=int, default=6400, help="rows of the wide table fit_evaluate is timed on")
    ap.add_argument("--model-budgets", default="10,30", help="fit_evaluate budgets (seconds) to time besides none")
    ap.add_argument("--skip-quality", action="store_true")
    ap.add_argument("--skip-speed", action="store_true")
    ap.add_argument("--no-dask", dest="dask", action="store_false",
                    help="skip the Dask benchmark on data larger than memory (keeps its last section)")
    ap.add_argument("--dask-args", default="--e2e-rows 400000",
                    help="arguments for bench_dask.py (default: %(default)s)")
    return ap


def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = parser().parse_args(argv)
    if args.quick:
        args.dask = False
        args.cases = args.cases or "rossi-checkins"
        args.quality_n = args.quality_n or 150
        args.reference_seconds = min(args.reference_seconds, 5)
        args.e2e_sizes = ""
        args.sizes, args.peers, args.checkpoint_gb = args.sizes or "2000,4000", False, 0.01
        args.model_rows, args.model_budgets = 400, ""
        args.scale_sizes = ""
        args.impact_sizes = "1000"
        args.detector_sizes = "2000"
        args.mcp_rows = 2000
    args.sizes = args.sizes or "10000,100000,1000000"

    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    results = collect(args, log)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2, default=str))
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    import bench_dask

    previous = out.read_text() if out.is_file() else ""
    out.write_text(report.render(results))
    if FAST_LOOP[0] in previous and FAST_LOOP[1] in previous:  # a record, not re-measured here: kept
        kept = previous[previous.index(FAST_LOOP[0]): previous.index(FAST_LOOP[1]) + len(FAST_LOOP[1])]
        out.write_text(out.read_text().rstrip("\n") + "\n\n" + kept + "\n")
    if args.dask:  # its own section of the same file, written by bench_dask.py (an hour or more)
        log("Dask: running benchmarks/bench_dask.py")
        subprocess.run([sys.executable, str(HERE / "bench_dask.py"), "--out", str(out), *args.dask_args.split()])
    elif bench_dask.START in previous and bench_dask.END in previous:  # keep the last measured one
        kept = previous[previous.index(bench_dask.START): previous.index(bench_dask.END) + len(bench_dask.END)]
        bench_dask.write_section(out, kept)
    import bench_codebook  # its own section too (bench_codebook.py, codebook_real.py): kept as last measured

    for start, end in ((bench_codebook.START, bench_codebook.END), (bench_codebook.REAL_START, bench_codebook.REAL_END)):
        if start in previous and end in previous:
            bench_codebook.write_section(out, previous[previous.index(start): previous.index(end) + len(end)],
                                         start, end)
    log(f"wrote {args.out}")
    return results


if __name__ == "__main__":
    main()
