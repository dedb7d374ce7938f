"""End to end at scale: ``jupyter dcpilot run --approve recommended`` on 1k … 1M rows × 50 columns.

    python benchmarks/bench_scale.py --sizes 1000,10000,100000,1000000 --json scale.json --md scale.md

Each size gets two generated tables of 50 columns (mixed types: numbers, counts, categories,
booleans, a date; 30% of the columns partly missing; repeated entities, ~3 rows each, with
one outcome per entity): one with a classification target, one with a survival target
(duration and event). The command line runs on each as a user would, in a child process;
this script reads its progress lines as they come (each stamped on its own clock) and polls
the memory of the process tree (the command line and its kernel) every 0.2 s, so every step
gets its time and the peak memory while it ran. Peak memory is the kernel's resident memory
above what it held right after start (imports), set against the frame's own size in memory.
The growth exponent is the slope of log(time) over log(rows).

Beside each run, the *hand baseline* (``--hand``, on by default up to 100k rows): what a data
scientist writes by hand for the same file, in a fresh Python process: read it, ordinal-encode
the text columns and cross-validate a default HistGradientBoosting model over 5 folds grouped
by the entity (survival: the event as the label). Both sides get the same OpenMP and BLAS thread
count (``--threads``, default 1: on a shared 2-core machine spinning OpenMP threads make timings
swing 5-10x at random), and the ratio co-pilot / hand is printed.

Bytecode (``--bytecode``, on by default): where Python is told to write none
(``PYTHONDONTWRITEBYTECODE``, as on the project's machines, whose venv ships none), every process
compiles its imports from source, and the co-pilot (a command line and a kernel, each importing
pandas) pays it twice: seconds a user's install never pays (pip compiles at install, Python on
first import). Both sides then share one bytecode cache for the run, filled by an untimed first
run of each side on a 1,000-row table of each task.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _waits import TreeWaits  # noqa: E402

TARGETS = {"10000": 30, "100000": 120, "1000000": 600}  # seconds end to end (issue targets)
HAND_MAX_ROWS = 100_000  # the hand baseline's default reach (--hand-max-rows)
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
CATEGORIES = [["a", "b", "c"], ["north", "south", "east", "west"], ["basic", "silver", "gold"],
              [f"site_{i:02d}" for i in range(30)], ["x", "y"], [f"ward_{i}" for i in range(12)]]


def make_tables(n: int, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(classification table, survival table), each ``n`` rows × 50 columns."""
    rng = np.random.default_rng(seed)
    entities = max(1, n // 3)
    ids = np.sort(rng.integers(0, entities, n))
    visit = pd.Series(ids).groupby(ids).cumcount().to_numpy() + 1
    cols: dict[str, Any] = {"patient_id": np.char.add("P", ids.astype(str)).astype(object), "visit": visit}
    person = rng.normal(size=entities)[ids]  # what stays with a person across visits
    n_float, n_int, n_cat, n_bool = 27, 8, 6, 5  # + patient_id, visit, admitted (date) = 49
    signal = np.zeros(n)
    for i in range(n_float):
        x = rng.normal(size=n) + (0.6 * person if i < 6 else 0)
        if i % 4 == 3:
            x = np.exp(x)  # skewed, a few far values
        cols[f"lab_{i:02d}"] = x
        if i < 6:
            signal += (0.5 if i % 2 else -0.4) * (x if i % 4 != 3 else np.log(x))
    for i in range(n_int):
        cols[f"count_{i}"] = rng.poisson(2 + i, n)
    for i in range(n_cat):
        levels = CATEGORIES[i]
        cols[f"cat_{i}"] = np.asarray(levels, dtype=object)[rng.integers(0, len(levels), n)]
    for i in range(n_bool):
        cols[f"flag_{i}"] = rng.random(n) < 0.3 + 0.08 * i
    cols["admitted"] = (pd.Timestamp("2020-01-01") + pd.to_timedelta(rng.integers(0, 1500, n), unit="D")).strftime("%Y-%m-%d")
    frame = pd.DataFrame(cols)
    features = [c for c in frame.columns if c.startswith(("lab_", "count_", "cat_"))]
    for c in features[:: max(1, len(features) // 15)][:15]:  # 15 of 50 columns partly missing
        share = rng.uniform(0.05, 0.4)
        frame.loc[rng.random(n) < share, c] = np.nan
    # one outcome per entity: from the person's first-visit signal
    first = pd.Series(signal).groupby(ids).transform("first").to_numpy() + 0.8 * person
    label = (first + rng.normal(scale=0.8, size=n) > 0.3).astype(int)
    label = pd.Series(label).groupby(ids).transform("first").to_numpy()
    hazard = np.exp(0.7 * first)
    duration = rng.exponential(365 / hazard)
    censor = rng.uniform(30, 900, n)
    duration = pd.Series(np.minimum(duration, censor)).groupby(ids).transform("first").to_numpy()
    event = pd.Series((rng.exponential(365 / hazard) <= censor).astype(int)).groupby(ids).transform("first").to_numpy()
    classification = frame.assign(outcome=label)
    survival = frame.drop(columns=["flag_4"]).assign(days=np.round(duration, 1), died=event)
    return classification, survival


class TreeMemory:
    """Polls the resident memory of a process and its children every ``every`` seconds, and their
    CPU seconds (user + system): the kernel's CPU per step and the command line's own."""

    def __init__(self, pid: int, every: float = 0.2) -> None:
        import psutil

        self.root = psutil.Process(pid)
        self.every = every
        self.samples: list[tuple[float, int, int]] = []  # (time, whole tree, largest child = kernel)
        self.cpu: list[tuple[float, float, float]] = []  # (time, the command line's, its children's = kernel)
        self.pids = [pid]  # the tree's processes as last seen (read by TreeWaits between polls)
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self._poll, daemon=True)
        self.thread.start()

    def _poll(self) -> None:
        import psutil

        while not self._stop.is_set():
            try:
                children = self.root.children(recursive=True)
                self.pids = [self.root.pid, *(c.pid for c in children)]
                kernel = max((c.memory_info().rss for c in children), default=0)
                total = self.root.memory_info().rss + sum(c.memory_info().rss for c in children)
                now = time.perf_counter()
                self.samples.append((now, total, kernel))
                self.cpu.append((now, _cpu(self.root.cpu_times()), sum(_cpu(c.cpu_times()) for c in children)))
            except psutil.Error:
                pass
            self._stop.wait(self.every)

    def stop(self) -> None:
        self._stop.set()
        self.thread.join()

    def peak_kernel(self, start: float, end: float) -> int:
        return max((k for t, _, k in self.samples if start <= t <= end), default=0)

    def kernel_cpu(self, start: float, end: float) -> float:
        """The kernel's CPU seconds between the last samples before ``start`` and before ``end``
        (0.2 s apart: a step's CPU to within what it did in one poll)."""
        def at(when: float) -> float:
            return max((k for t, _, k in self.cpu if t <= when), default=0.0)

        return at(end) - at(start)

    def last_kernel_cpu(self) -> float:
        return max((k for _, _, k in self.cpu), default=0.0)


def _cpu(times: Any) -> float:
    return times.user + times.system


STARTED = re.compile(r"^\[\s*[\d.]+s\] (?P<what>.+?): started")
ENDED = re.compile(r"^\[\s*[\d.]+s\] (?P<what>s\d+ .+?): (?P<how>done|FAILED|skipped)")
OBSERVED = re.compile(r"^\[\s*[\d.]+s\] observe: diagnosed")


def thread_env(threads: int | None) -> dict[str, str]:
    """This process's environment with ``threads`` OpenMP / BLAS threads (None: as it is)."""
    env = dict(os.environ)
    if threads is not None:
        env.update({name: str(threads) for name in THREAD_VARIABLES})
    return env


# What a data scientist writes by hand: read, encode the text, grouped 5-fold CV of a default
# gradient boosting model. argv: path, label, entity column, columns to leave out (comma-separated).
HAND = """
import sys
import numpy as np
import pandas as pd
from sklearn.compose import make_column_transformer
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.model_selection import GroupKFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OrdinalEncoder

path, label, entity, drop = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
df = pd.read_parquet(path) if path.endswith(".parquet") else pd.read_csv(path)
X = df.drop(columns=[label, entity, *[c for c in drop.split(",") if c]])
text = X.select_dtypes(exclude=["number", "bool"]).columns
encode = OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=np.nan, encoded_missing_value=np.nan)
model = make_pipeline(make_column_transformer((encode, text), remainder="passthrough"),
                      HistGradientBoostingClassifier(random_state=0))
scores = cross_val_score(model, X, df[label], groups=df[entity], cv=GroupKFold(5), scoring="roc_auc")
print(round(float(scores.mean()), 4))
"""


def children_cpu() -> float:
    """CPU seconds (user + system) of this process's finished children and theirs (the kernel is
    the command line's child, waited for when it shuts down): on a shared machine the wall time
    swings with the load, the CPU time much less."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_hand(path: Path, label: str, drop: list[str], threads: int | None, timeout: float) -> dict[str, Any]:
    """The hand baseline on ``path`` in a fresh process: wall seconds, from start to exit, and CPU seconds."""
    started, cpu = time.perf_counter(), children_cpu()
    try:
        done = subprocess.run([sys.executable, "-c", HAND, str(path), label, "patient_id", ",".join(drop)],
                              capture_output=True, text=True, timeout=timeout, env=thread_env(threads))
    except subprocess.TimeoutExpired:
        return {"seconds": None, "state": f"over {timeout:.0f} s"}
    seconds, cpu = round(time.perf_counter() - started, 1), round(children_cpu() - cpu, 1)
    if done.returncode != 0:
        return {"seconds": seconds, "cpu_seconds": cpu,
                "state": f"exit {done.returncode}: {done.stderr.strip().splitlines()[-1:]}"}
    return {"seconds": seconds, "cpu_seconds": cpu, "state": "finished",
            "roc_auc": float(done.stdout.strip().splitlines()[-1])}


def run_one(path: Path, target: str, time_col: str | None, out: Path, timeout: float,
            budget: list[str], threads: int | None = None, tree: Path | None = None) -> dict[str, Any]:
    cmd = [sys.executable, "-m", "jupyter_dcpilot.cli", "run", str(path), "--target", target,
           "--approve", "recommended", "--out", str(out)]
    if tree is None:  # an older tree's command line may not know it: its output folder is cleared instead
        cmd.append("--force")
    else:
        shutil.rmtree(out, ignore_errors=True)
    if time_col:
        cmd += ["--time", time_col, "--task", "survival"]
    for b in budget:
        cmd += ["--budget", b]
    t0, cpu = time.perf_counter(), children_cpu()
    env = thread_env(threads)
    if tree is not None:  # another source tree's co-pilot (--before): its packages come first
        env["PYTHONPATH"] = os.pathsep.join([str(tree), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1,
                            env=env, cwd=tree)
    memory = TreeMemory(proc.pid)
    waits = TreeWaits(lambda: memory.pids)
    lines: list[tuple[float, str]] = []

    def read() -> None:
        for line in proc.stderr:
            lines.append((time.perf_counter(), line.rstrip("\n")))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:  # stderr belongs to the reader thread: communicate() would take lines from it
        proc.wait(timeout=timeout)
        stdout = proc.stdout.read()  # one line of JSON: never fills the pipe
        state = "finished" if proc.returncode == 0 else f"exit {proc.returncode}"
    except subprocess.TimeoutExpired:
        proc.kill()
        stdout, state = "", f"over {timeout:.0f} s"
    reader.join(10)
    end = time.perf_counter()
    memory.stop()
    waits.stop()
    # the kernel's memory once started and loaded nothing yet: the first samples after it appeared
    kernel_samples = [(t, k) for t, _, k in memory.samples if k > 0]
    baseline = kernel_samples[min(2, len(kernel_samples) - 1)][1] if kernel_samples else 0
    loading = next((t for t, text in lines if "loading " in text), None)
    if loading is not None:
        baseline = max((k for t, k in kernel_samples if t <= loading), default=baseline)
    steps = step_times(lines, lambda start, end: max(memory.peak_kernel(start, end) - baseline, 0),
                       memory.kernel_cpu)
    report = {}
    if (out / "report.json").is_file():
        report = json.loads((out / "report.json").read_text())
    summary = json.loads(stdout.strip().splitlines()[-1]) if stdout.strip() else {}
    cpu = children_cpu() - cpu
    first = next((t for t, text in lines if STARTED.match(text)), end)
    return {"seconds": round(end - t0, 1), "cpu_seconds": round(cpu, 1),
            # the command line's own: all but its kernel's (sampled to its last 0.2 s)
            "command_line_cpu_seconds": round(cpu - memory.last_kernel_cpu(), 1),
            "kernel_cpu_seconds": round(memory.last_kernel_cpu(), 1),
            "kernel_start_cpu_seconds": round(memory.kernel_cpu(t0, first), 1),  # start, imports, load
            # wall time no process was ready to run (a quiet machine's too), and waits for a core (the load's)
            "idle_seconds": round(waits.idle_seconds, 2), "kernel_start_idle_seconds": round(waits.idle(t0, first), 2),
            "queued_seconds": round(waits.queued_seconds, 1),
            "state": summary.get("state", state), "valid": summary.get("valid"),
            "metric": summary.get("metric"), "score": summary.get("holdout_score") or summary.get("cv_score"),
            "steps": steps, "peak_kernel_mb": round(max(memory.peak_kernel(t0, end) - baseline, 0) / 2**20),
            "kernel_baseline_mb": round(baseline / 2**20),
            "warnings": [w for w in report.get("warnings", []) if "budget" in w.lower()][:3],
            "lines": [f"{t - t0:7.1f} {text}" for t, text in lines]}


def step_times(lines: list[tuple[float, str]], peak: Any, cpu: Any = None) -> list[dict[str, Any]]:
    """Each step's (and diagnosis's) time from the command line's progress lines, stamped on
    arrival, with ``peak(start, end)``: the memory it took (bytes), and ``cpu(start, end)``: the
    kernel's CPU seconds meanwhile."""
    steps: list[dict[str, Any]] = []
    open_: dict[str, float] = {}

    def close(key: str, t: float, how: str) -> None:
        start = open_.pop(key)
        steps.append({"step": key, "status": how, "seconds": round(t - start, 2),
                      "peak_mb": round(peak(start, t) / 2**20),
                      **({"kernel_cpu": round(cpu(start, t), 2)} if cpu is not None else {})})

    for t, text in lines:
        if m := STARTED.match(text):
            open_[m["what"]] = t
        elif m := ENDED.match(text):
            if m["what"] in open_:
                close(m["what"], t, m["how"])
        elif OBSERVED.match(text):
            for key in [k for k in open_ if k.startswith("diagnosing")]:
                close(key, t, "done")
    return steps


def growth_exponent(rows: list[int], seconds: list[float]) -> float | None:
    pts = [(math.log(r), math.log(s)) for r, s in zip(rows, seconds) if s and s > 0]
    if len(pts) < 2:
        return None
    xs, ys = zip(*pts)
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    return sum((x - mx) * (y - my) for x, y in pts) / sum((x - mx) ** 2 for x in xs)


def add_data_ratios(results: list[dict[str, Any]]) -> None:
    """Set ``libraries_mb`` and ``data_peak_ratio`` on each finished run: what the libraries take
    (scikit-learn, lifelines, cleanlab, torch: loaded by the run, not at kernel start) is the
    peak of the same task's smallest run (≤ 2,000 rows, a frame of ~1 MB); the rest of a peak
    scales with the data."""
    for task in {r["task"] for r in results}:
        done = sorted((r for r in results if r["task"] == task and r["state"] == "finished"), key=lambda r: r["rows"])
        if not done or done[0]["rows"] > 2000:
            continue
        libraries = max(done[0]["peak_kernel_mb"] - done[0]["frame_mb"], 0)
        for r in done:
            r["libraries_mb"] = round(libraries)
            r["data_peak_ratio"] = round(max(r["peak_kernel_mb"] - libraries, 0) / r["frame_mb"], 2)


def median_run(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The run of median wall time (its steps with it), with every run's seconds and the median
    CPU seconds."""
    ordered = sorted(runs, key=lambda r: r["seconds"] if r["seconds"] is not None else math.inf)
    cpu = [r["cpu_seconds"] for r in runs if r.get("cpu_seconds") is not None]
    return {**ordered[(len(ordered) - 1) // 2], "all_seconds": [r["seconds"] for r in runs],
            "all_cpu_seconds": cpu, "cpu_seconds": round(float(np.median(cpu)), 2) if cpu else None}


def run_case(path: Path, target: str, time_col: str | None, out: Path, timeout: float, budget: list[str],
             threads: int | None, hand: bool, before: Path | None, repeats: int) -> dict[str, Any]:
    """The co-pilot (and the ``before`` tree's, and the hand baseline) on one table, ``repeats``
    times in turn: each the run of median time."""
    mine, theirs, hands = [], [], []
    for _ in range(repeats):
        if before is not None:
            theirs.append(run_one(path, target, time_col, out.with_name(out.name + "-before"), timeout, budget,
                                  threads, tree=before))
        mine.append(run_one(path, target, time_col, out, timeout, budget, threads))
        if hand:
            hands.append(run_hand(path, target, [time_col] if time_col else [], threads, timeout))
    result = median_run(mine)
    if theirs:
        result["before"] = {k: v for k, v in median_run(theirs).items() if k != "lines"}
    if hands:
        result["hand"] = median_run(hands)
    return result


@contextlib.contextmanager
def shared_bytecode(folder: Path, wanted: bool) -> Iterator[bool]:
    """Within it, this process's children write and read bytecode in ``folder`` when Python was
    told to write none (and ``wanted``); yields whether it does."""
    if not wanted or not os.environ.get("PYTHONDONTWRITEBYTECODE") or os.environ.get("PYTHONPYCACHEPREFIX"):
        yield False
        return
    told = os.environ.pop("PYTHONDONTWRITEBYTECODE")
    os.environ["PYTHONPYCACHEPREFIX"] = str(folder)
    try:
        yield True
    finally:
        os.environ["PYTHONDONTWRITEBYTECODE"] = told
        os.environ.pop("PYTHONPYCACHEPREFIX", None)


def fill_bytecode(tmp: Path, tasks: tuple[str, ...], timeout: float, budget: list[str], threads: int | None,
                  before: Path | None, log=print) -> None:
    """One untimed run of each side (this tree, the ``before`` tree, the hand baseline) on a
    1,000-row table of each task: every module they import is compiled once, before any timing."""
    for task, frame, target, time_col in tables(1000, seed=1):
        if task not in tasks:
            continue
        path = tmp / f"bytecode-{task}.parquet"
        frame.to_parquet(path, index=False)
        log(f"scale: compiling what the {task} runs import (untimed)...")
        for side in ([before] if before is not None else []) + [None]:
            run_one(path, target, time_col, tmp / f"bytecode-out-{task}", timeout, budget, threads, tree=side)
        run_hand(path, target, [time_col] if time_col else [], threads, timeout)


def tables(n: int, seed: int = 0) -> list[tuple[str, pd.DataFrame, str, str | None]]:
    """(task, frame, target, duration column) of the two generated tables of ``n`` rows."""
    classification, survival = make_tables(n, seed)
    return [("classification", classification, "outcome", None), ("survival", survival, "died", "days")]


def run(sizes: list[int], timeout: float, budget: list[str], log=print, keep: Path | None = None,
        tasks: tuple[str, ...] = ("classification", "survival"), threads: int | None = 1,
        hand_max_rows: int = HAND_MAX_ROWS, before: Path | None = None, repeats: int = 1,
        bytecode: bool = True) -> dict[str, Any]:
    results: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="dcpilot-scale-") as tmp_name, \
            shared_bytecode(Path(tmp_name) / "pycache", bytecode) as cached:
        tmp = keep or Path(tmp_name)
        if cached:
            fill_bytecode(tmp, tasks, timeout, budget, threads, before, log)
        for n in sizes:
            for task, frame, target, time_col in tables(n):
                if task not in tasks:
                    continue
                path = tmp / f"{task}-{n}.parquet"
                frame.to_parquet(path, index=False)
                frame_mb = frame.memory_usage(deep=True).sum() / 2**20
                log(f"scale: {task} {n:,} rows × {frame.shape[1]} columns ({frame_mb:.0f} MB in memory)...")
                load = round(os.getloadavg()[0], 2)
                result = run_case(path, target, time_col, tmp / f"out-{task}-{n}", timeout, budget, threads,
                                  n <= hand_max_rows, before, repeats)
                result.update({"rows": n, "cols": int(frame.shape[1]), "task": task, "frame_mb": round(frame_mb, 1),
                               "peak_ratio": round(result["peak_kernel_mb"] / frame_mb, 2) if frame_mb else None,
                               "load_start": load})
                log(f"scale: {task} {n:,}: {result['seconds']} s, {result['state']}, peak "
                    f"{result['peak_kernel_mb']} MB ({result['peak_ratio']}x the frame); "
                    f"by hand {(result.get('hand') or {}).get('seconds', '—')} s; "
                    f"before {(result.get('before') or {}).get('seconds', '—')} s; load {load}")
                results.append(result)
    add_data_ratios(results)
    growth = {}
    for task in ("classification", "survival"):
        done = [r for r in results if r["task"] == task and r["state"] == "finished"]
        growth[task] = growth_exponent([r["rows"] for r in done], [r["seconds"] for r in done])
    return {"runs": results, "growth": growth, "load_end": list(os.getloadavg()), "threads": threads,
            "repeats": repeats, "before": str(before) if before else None, "bytecode_cached": cached}


def markdown(result: dict[str, Any]) -> str:
    lines = ["## End to end at scale (`benchmarks/bench_scale.py`)", "",
             "`jupyter dcpilot run --approve recommended` on generated tables of 50 columns (numbers, counts, "
             "categories, booleans, a date; 15 columns partly missing; ~3 rows per entity with one outcome per "
             "entity), once with a classification target and once with a survival target. Time is wall time "
             "of the whole command (kernel start to report); memory is the kernel's peak resident memory above "
             "its size after start, against the frame's size in memory; *above libraries* takes away what the "
             "1,000-row run of the same task peaked at (its frame is ~1 MB: that is scikit-learn, lifelines, "
             "cleanlab and the rest, loaded once). Targets: 10k < 30 s, 100k < 2 min, 1M < 10 min, peak ≤ 3× "
             "the frame.", "",
             f"*By hand*: a fresh Python process reading the same file and cross-validating a default "
             f"HistGradientBoosting model over 5 grouped folds (its AUROC in brackets); both sides with "
             f"{result.get('threads') or 'the default number of'} OpenMP / BLAS thread(s); "
             + ("one bytecode cache shared by both sides, filled by an untimed run of each first."
                if result.get("bytecode_cached") else "bytecode as the environment has it."), "",
             "| rows | task | seconds | target | by hand s | co-pilot / hand | state | valid | score | frame MB "
             "| peak MB | peak / frame | above libraries / frame |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in result["runs"]:
        target = TARGETS.get(str(r["rows"]))
        mark = "" if target is None else (f"< {target} ✓" if r["seconds"] < target else f"< {target} ✗")
        score = f"{r['score']:.3f}" if isinstance(r.get("score"), (int, float)) else "—"
        hand = r.get("hand") or {}
        by_hand = f"{hand['seconds']:.1f} ({hand['roc_auc']:.3f})" if hand.get("roc_auc") is not None else \
            hand.get("state", "—")
        ratio = f"{r['seconds'] / hand['seconds']:.1f}" if hand.get("roc_auc") is not None else "—"
        lines.append(f"| {r['rows']:,} | {r['task']} | {r['seconds']:.1f} | {mark} | {by_hand} | {ratio} | "
                     f"{r['state']} | {r.get('valid')} | {score} | {r['frame_mb']:.0f} | {r['peak_kernel_mb']} | "
                     f"{r['peak_ratio']} | {r.get('data_peak_ratio', '—')} |")
    lines += ["", "Growth exponent of time over rows (log-log least squares): " + ", ".join(
        f"{task} {g:.2f}" if g is not None else f"{task} —" for task, g in result["growth"].items()) + ".", "",
        "Each step's time and the kernel's peak memory above its start while it ran (seconds / MB):", ""]
    for r in result["runs"]:
        parts = [f"{s['step'].split(':')[0]} {s['seconds']:.1f} s / {s['peak_mb']} MB" + ("" if s["status"] == "done" else f" ({s['status']})")
                 for s in r["steps"]]
        lines.append(f"- {r['rows']:,} {r['task']}: " + "; ".join(parts))
    lines += ["", "CPU seconds of each part (the run of median wall time): the command line's own process; the "
              "kernel's start (imports, loading the file: before the first diagnosis); each diagnosis and step; "
              "then the wall time none of their threads was ready to run (idle: what a quiet machine still waits) "
              "and the time their threads waited for a core (the load's):", ""]
    for r in result["runs"]:
        lines += [f"- {r['rows']:,} {r['task']}{name}: {cpu_parts(run)}" for name, run in
                  ((", before", r.get("before")), ("", r)) if run and "kernel_cpu_seconds" in run]
    if any("before" in r for r in result["runs"]):
        lines += [""] + before_after(result)
    return "\n".join(lines) + "\n"


def cpu_parts(run: dict[str, Any]) -> str:
    steps = "; ".join(f"{s['step'].split(':')[0]} {s['kernel_cpu']:.1f}" for s in run["steps"] if "kernel_cpu" in s)
    waits = (f"; idle {run['idle_seconds']:.2f} s (at start {run['kernel_start_idle_seconds']:.2f}), "
             f"queued for a core {run['queued_seconds']:.1f} s") if "idle_seconds" in run else ""
    return (f"command line {run['command_line_cpu_seconds']:.1f}, kernel {run['kernel_cpu_seconds']:.1f} "
            f"(start {run['kernel_start_cpu_seconds']:.1f}; {steps}){waits}")


def _ratio(seconds: float | None, hand: float | None) -> str:
    return f"{seconds / hand:.1f}" if seconds and hand else "—"


def _steps(run: dict[str, Any]) -> str:
    return "; ".join(f"{s['step'].split(':')[0]} {s['seconds']:.1f}" for s in run["steps"])


def before_after(result: dict[str, Any]) -> list[str]:
    """The co-pilot of the ``--before`` tree against this one, run in turn on the same tables."""
    lines = [f"Before → after: the co-pilot of `{result['before']}` and of this tree, in turn on the same "
             f"tables ({result.get('repeats', 1)} run(s) each, the median), beside the hand baseline; wall "
             "seconds (each run's in brackets), then the median CPU seconds of the process and its kernel.", "",
             "| rows | task | before s | after s | by hand s | before / hand | after / hand "
             "| before cpu s | after cpu s | by hand cpu s | before / hand (cpu) | after / hand (cpu) |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in result["runs"]:
        if "before" not in r:
            continue
        b, h = r["before"], (r.get("hand") or {}).get("seconds")
        hc = (r.get("hand") or {}).get("cpu_seconds")
        lines.append(f"| {r['rows']:,} | {r['task']} | {b['seconds']} ({', '.join(map(str, b['all_seconds']))}) | "
                     f"{r['seconds']} ({', '.join(map(str, r['all_seconds']))}) | {h or '—'} | "
                     f"{_ratio(b['seconds'], h)} | {_ratio(r['seconds'], h)} | {b.get('cpu_seconds') or '—'} | "
                     f"{r.get('cpu_seconds') or '—'} | {hc or '—'} | {_ratio(b.get('cpu_seconds'), hc)} | "
                     f"{_ratio(r.get('cpu_seconds'), hc)} |")
    lines += ["", "Each step, before → after (seconds):", ""]
    for r in result["runs"]:
        if "before" in r:
            lines += [f"- {r['rows']:,} {r['task']}, before: {_steps(r['before'])}",
                      f"- {r['rows']:,} {r['task']}, after: {_steps(r)}"]
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="1000,10000,100000,1000000")
    ap.add_argument("--timeout", type=float, default=3600, help="seconds per run")
    ap.add_argument("--budget", action="append", default=[], help="passed to the command line")
    ap.add_argument("--json")
    ap.add_argument("--md")
    ap.add_argument("--keep", help="keep the tables and outputs here")
    ap.add_argument("--tasks", default="classification,survival")
    ap.add_argument("--threads", type=int, default=1,
                    help="OpenMP / BLAS threads on both sides (0: the libraries' default)")
    ap.add_argument("--hand-max-rows", type=int, default=HAND_MAX_ROWS,
                    help="run the hand baseline up to this many rows (0: never)")
    ap.add_argument("--before", help="another source tree (e.g. a clone at an older commit): its co-pilot runs "
                                     "in turn with this one on each table, for a before -> after table")
    ap.add_argument("--repeats", type=int, default=1, help="runs of each side per table (the median is kept)")
    ap.add_argument("--no-bytecode", dest="bytecode", action="store_false",
                    help="where Python writes no bytecode, leave it so: every process compiles its imports")
    args = ap.parse_args()
    keep = Path(args.keep) if args.keep else None
    if keep:
        keep.mkdir(parents=True, exist_ok=True)
    # the 1,000-row run measures the libraries' memory (see run): always first
    sizes = sorted({1000, *(int(s) for s in args.sizes.split(","))})
    result = run(sizes, args.timeout, args.budget,
                 log=lambda s: print(s, file=sys.stderr, flush=True), keep=keep,
                 tasks=tuple(args.tasks.split(",")), threads=args.threads or None, hand_max_rows=args.hand_max_rows,
                 before=Path(args.before).resolve() if args.before else None, repeats=args.repeats,
                 bytecode=args.bytecode)
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1))
    text = markdown(result)
    if args.md:
        Path(args.md).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
