"""Synthetic mixed-type frames for benchmarks: numbers, counts, categories, booleans, dates,
an identifier, some missing values and outliers, and a binary target.

``mixed_frame(n, n_cols=40, seed=0)`` always returns exactly ``n_cols`` columns (the last
is the target ``y``), built with vectorised numpy so a million rows take a few seconds.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

_LEVELS = [
    ["red", "green", "blue"],
    ["north", "south", "east", "west"],
    ["basic", "silver", "gold", "platinum"],
    [f"store_{i:02d}" for i in range(20)],
    ["A", "B", "C", "D", "E", "F", "G", "H"],
    ["web", "phone", "branch"],
    [f"city_{i:03d}" for i in range(120)],
    ["yes", "no", "maybe"],
]


def mixed_frame(n: int, n_cols: int = 40, seed: int = 0) -> pd.DataFrame:
    if n_cols < 12:
        raise ValueError("n_cols must be at least 12 (one of each column type plus the target)")
    rng = np.random.default_rng(seed)
    cols: dict[str, object] = {}
    n_feat = n_cols - 1
    n_cat = min(8, max(2, n_feat // 5))
    n_int = max(1, n_feat // 7)
    n_other = 5  # id, 2 bools, 2 dates
    n_float = n_feat - n_cat - n_int - n_other
    cols["customer_id"] = np.char.add("C", np.char.zfill(np.arange(n).astype(str), 8)).astype(object)
    signal = np.zeros(n)
    for i in range(n_float):
        if i % 3 == 2:
            x = rng.lognormal(3, 1, n)
        else:
            x = rng.normal(50 + i, 10, n)
        if i < 4:
            signal += (x - x.mean()) / x.std() * (0.8 - 0.15 * i)
        if i % 5 == 1:  # some missing values
            x[rng.random(n) < 0.05] = np.nan
        if i % 7 == 3:  # a few gross outliers
            x[rng.random(n) < 0.001] *= 50
        cols[f"num_{i:02d}"] = x
    for i in range(n_int):
        cols[f"count_{i:02d}"] = rng.poisson(3 + i, n)
    for i in range(n_cat):
        levels = np.array(_LEVELS[i % len(_LEVELS)], dtype=object)
        codes = rng.integers(0, len(levels), n)
        if i == 0:
            signal += (codes == 1) * 0.7
        values = levels[codes]
        if i % 4 == 3:
            values = values.copy()
            values[rng.random(n) < 0.03] = None
        cols[f"cat_{i:02d}"] = values
    cols["flag_a"] = rng.random(n) < 0.3
    cols["flag_b"] = rng.random(n) < 0.6
    start = np.datetime64("2015-01-01")
    cols["signup_date"] = start + rng.integers(0, 3000, n).astype("timedelta64[D]")
    cols["last_seen"] = pd.to_datetime(cols["signup_date"]) + pd.to_timedelta(rng.integers(0, 400, n), "D")
    logit = signal - 1.0 + rng.normal(0, 1, n)
    cols["y"] = (logit > 0).astype(np.int64)
    df = pd.DataFrame(cols)
    assert df.shape[1] == n_cols, df.shape
    return df


def frame_bytes(df: pd.DataFrame) -> int:
    return int(df.memory_usage(deep=True).sum())
