"""Checkpoint save/restore on a large frame, side by side with a deep copy.

Targets (nothing changed in place): save and restore under 50 ms and under 5% extra memory.
"auto (default)" is what a 1 GiB frame gets: references + a sampled check; "auto, full check"
the same with the exact (every byte) check that frames below ``verify_below`` get.
Scenarios: nothing changed; a column replaced (df["c0"] = ...); a cell written in place
(df.loc[i, "c0"] = ...), the case a reference snapshot cannot undo (it must refuse) and
copy=True must.

    python benchmarks/bench_checkpoints.py --gb 1
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kernel_tools.checkpoints import CheckpointError, CheckpointStore  # noqa: E402

PROCESS = psutil.Process(os.getpid())


def rss() -> int:
    gc.collect()
    return PROCESS.memory_info().rss


def build(gb: float, n_cols: int, seed: int = 0) -> pd.DataFrame:
    """Mixed numeric columns (float64, int64, float32, bool) summing to about ``gb`` GiB."""
    kinds = ["float64", "int64", "float32", "bool"]
    widths = {"float64": 8, "int64": 8, "float32": 4, "bool": 1}
    bytes_per_row = sum(widths[kinds[i % 4]] for i in range(n_cols))
    n_rows = int(gb * 2**30 / bytes_per_row)
    rng = np.random.default_rng(seed)
    columns = {}
    for i in range(n_cols):
        kind = kinds[i % 4]
        if kind == "bool":
            columns[f"c{i}"] = rng.random(n_rows) < 0.5
        elif kind == "int64":
            columns[f"c{i}"] = rng.integers(0, 1000, n_rows)
        else:
            columns[f"c{i}"] = rng.random(n_rows).astype(kind)
    return pd.DataFrame(columns)


def timed(fn, *args, **kwargs):
    start = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - start


ROWS: list[dict] = []  # every printed row, as data (--json)


def row(scenario, how, save_s, save_mb, restore_s, restore_mb, ok, frame_mb):
    ROWS.append({"scenario": scenario, "snapshot": how, "save_ms": save_s * 1000, "save_mib": save_mb,
                 "restore_ms": None if restore_s is None else restore_s * 1000, "restore_mib": restore_mb,
                 "restored": ok, "frame_mib": frame_mb})
    pct = 100 * max(save_mb, 0) / frame_mb
    restore = "-" if restore_s is None else f"{restore_s * 1000:9.1f}"
    rmb = "-" if restore_mb is None else f"{restore_mb:9.1f}"
    print(
        f"{scenario:<18} {how:<22} {save_s * 1000:9.1f} {save_mb:9.1f} {pct:6.2f}% "
        f"{restore:>9} {rmb:>9}  {ok}"
    )


def run(args) -> None:
    frame = build(args.gb, args.cols)
    frame_mb = frame.memory_usage(index=True).sum() / 2**20
    print(f"frame: {frame.shape[0]:,} rows x {frame.shape[1]} cols, {frame_mb:,.0f} MiB "
          f"({len(frame._mgr.blocks)} blocks); pandas {pd.__version__}")
    print(f"{'scenario':<18} {'snapshot':<22} {'save ms':>9} {'save MiB':>9} {'of df':>7} "
          f"{'restore ms':>9} {'rest. MiB':>9}  restored correctly")

    # baseline: what a deep copy costs
    base = rss()
    copy, seconds = timed(lambda: frame.copy(deep=True))
    row("(baseline)", "df.copy(deep=True)", seconds, (rss() - base) / 2**20, None, None, "-", frame_mb)
    del copy

    probe = [0, len(frame) // 2, len(frame) - 1]
    expected_c0 = frame["c0"].to_numpy()[probe].copy()

    def check(ns) -> str:
        got = ns["df"]["c0"].to_numpy()[probe]
        same = np.array_equal(got, expected_c0) and list(ns["df"].columns) == list(frame.columns)
        return "yes" if same else "NO"

    changes = {
        "nothing changed": lambda df: None,
        "column replaced": lambda df: df.__setitem__("c0", np.zeros(len(df))),
        "cell written": _write_cell,
    }
    for scenario, change in changes.items():
        variants = (
            ("auto (default)", {}, {"copy": "auto"}),
            ("auto, full check", {"verify_below": float("inf")}, {"copy": "auto"}),
            ("copy=True", {}, {"copy": True}),
        )
        for how, store_kwargs, kwargs in variants:
            df = frame.copy(deep=True)  # a fresh frame per run, same values
            ns = {"df": df}
            store = CheckpointStore(ns, **store_kwargs)
            gc.collect()
            base = rss()
            cp, save_s = timed(store.save, "df", scenario, **kwargs)
            save_mb = (rss() - base) / 2**20
            change(df)
            before_restore = rss()
            try:
                _, restore_s = timed(store.restore, cp)
                ok = check(ns)
            except CheckpointError:
                restore_s, ok = None, "refused (in-place write detected)"
            restore_mb = (rss() - before_restore) / 2**20
            row(scenario, how, save_s, save_mb, restore_s, restore_mb, ok, frame_mb)
            del ns, store, df
            gc.collect()

    if args.spill:
        spill_rows(frame, frame_mb, check, f"spill ({frame_mb:,.0f} MiB)")
        small = build(args.spill_mb / 1024, args.cols, seed=1)
        small_mb = small.memory_usage(index=True).sum() / 2**20
        probe_small = [0, len(small) // 2, len(small) - 1]
        expected_small = small["c0"].to_numpy()[probe_small].copy()

        def check_small(ns) -> str:
            same = np.array_equal(ns["df"]["c0"].to_numpy()[probe_small], expected_small)
            return "yes" if same and list(ns["df"].columns) == list(small.columns) else "NO"

        spill_rows(small, small_mb, check_small, f"spill ({small_mb:,.0f} MiB)")
    if args.json:
        Path(args.json).write_text(json.dumps({"rows": int(frame.shape[0]), "cols": int(frame.shape[1]),
                                               "frame_mib": frame_mb, "results": ROWS}, indent=2))


def spill_rows(frame: pd.DataFrame, frame_mb: float, check, scenario: str) -> None:
    """Save time as the step sees it without spilling, with the default background spill and
    with a synchronous one; how long the background write takes; a step's own work while it
    runs; restore from disk in a new store (a restarted kernel)."""
    work = lambda df: df.iloc[:, :8].describe()  # noqa: E731  what a step might do next
    _, alone_s = timed(lambda: work(frame))
    print(f"{scenario}: save as seen by the step, write time, restore from disk in a new store")
    for how, options in (("no spill", None), ("background spill (default)", {}),
                         ("synchronous spill", {"spill_in_background": False})):
        with tempfile.TemporaryDirectory() as tmp:
            ns = {"df": frame}
            store = CheckpointStore(ns, spill_dir=None if options is None else tmp, **(options or {}))
            gc.collect()
            cp, save_s = timed(store.save, "df", how)
            _, work_s = timed(lambda: work(frame))  # the step runs while the spill is written
            _, flush_s = timed(store.flush)
            written = sum(p.stat().st_size for p in Path(tmp).iterdir()) / 2**20
            restore_s, ok = None, "-"
            if options is not None:
                fresh: dict = {}
                reloaded = CheckpointStore.load(tmp, namespace=fresh)
                _, restore_s = timed(reloaded.restore, cp)
                ok = check(fresh)
            print(f"  {how:<28} save {save_s * 1000:8.1f} ms   write done {(save_s + work_s + flush_s) * 1000:8.1f} ms "
                  f"after the save began ({written:,.0f} MiB)   step work {work_s * 1000:6.1f} ms "
                  f"(alone {alone_s * 1000:.1f})   restore {'-' if restore_s is None else f'{restore_s * 1000:.0f} ms'}"
                  f"   correct: {ok}")
            ROWS.append({"scenario": scenario, "snapshot": how, "save_ms": save_s * 1000, "save_mib": written,
                         "restore_ms": None if restore_s is None else restore_s * 1000, "restore_mib": None,
                         "restored": ok, "frame_mib": frame_mb})


def _write_cell(df: pd.DataFrame) -> None:
    df.loc[len(df) // 2, "c0"] = -1.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gb", type=float, default=1.0, help="frame size in GiB (default 1)")
    parser.add_argument("--cols", type=int, default=40, help="number of columns (default 40)")
    parser.add_argument("--spill", action="store_true", help="also time spilling to disk")
    parser.add_argument("--spill-mb", type=float, default=100, help="size of the second spilled frame (MiB)")
    parser.add_argument("--json", help="also write the measurements to this file (for the report)")
    run(parser.parse_args())


if __name__ == "__main__":
    main()
