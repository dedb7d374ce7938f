"""A generated visit-level data set, written as a folder of Parquet files, for the scale benchmark.

Every file holds whole patients (``chunk_rows`` rows, about ``chunk_rows / 5`` patients), so the
first tenth of the files is a 1/10 sample of the same data with every entity whole:
``--small`` links them into a second folder for the pandas run.

What the diagnosis must find (known by construction):

- entities: ``patient_id``, 1-9 visits each (``visit``), the outcome repeated on every visit;
- a leak: ``discharge_code`` equals the outcome except on 2% of patients;
- missing values: 8% of ``age``, 15% of ``bmi``, 3% of each ``lab_*`` column;
- outliers: 0.05% of ``sbp`` typed ten times too large;
- inconsistent categories: ``sex`` written F / f / Female / female / M / male ...;
- exact duplicate rows: 0.3% of visits recorded twice.

Numbers are rounded (lab values to 0.1), so Parquet's dictionary encoding keeps the files
several times smaller than the pandas frame they would make.

    python benchmarks/dask_data.py --rows 100000000 --out /tmp/scale/full --small /tmp/scale/small
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

import numpy as np
import pandas as pd

LABS = 36
SEX = np.array(["F", "M", "f", "Female", "female ", "M", "male", "Male", "F", "M"])
SITES = np.array([f"site_{i:02d}" for i in range(24)])


def chunk(index: int, rows: int) -> pd.DataFrame:
    """The ``index``-th file: about ``rows`` visits of whole patients (deterministic)."""
    rng = np.random.default_rng(1000 + index)
    patients = rows // 5
    visits = rng.integers(1, 10, size=patients)
    first = index * patients
    starts = np.repeat(np.cumsum(visits) - visits, visits)
    n = int(visits.sum())
    ids = np.array([f"P{i:09d}" for i in range(first, first + patients)], dtype=object)
    risk = rng.normal(size=patients)
    outcome = (risk + rng.normal(scale=1.0, size=patients) > 0.8).astype(np.int8)
    leak = np.where(rng.random(patients) < 0.02, 1 - outcome, outcome)
    r = np.repeat(risk, visits)
    frame = {
        "patient_id": np.repeat(ids, visits),
        "visit": (np.arange(n) - starts + 1).astype(np.int16),
        "age": np.round(np.repeat(rng.uniform(18, 90, patients), visits) + 0.0, 0),
        "sex": SEX[np.repeat(rng.integers(0, len(SEX), patients), visits)],
        "site": SITES[np.repeat(rng.integers(0, len(SITES), patients), visits)],
        "bmi": np.round(rng.normal(27 + r, 4, n), 1),
        "sbp": np.round(rng.normal(130 + 6 * r, 15, n), 0),
        "n_meds": rng.poisson(3 + np.clip(r, 0, None), n).astype(np.int16),
    }
    for j in range(LABS):
        signal = r if j % 4 == 0 else 0.0
        frame[f"lab_{j:02d}"] = np.round(rng.normal(50 + 5 * signal, 10, n), 1)
    df = pd.DataFrame(frame)
    df.loc[np.repeat(rng.random(patients) < 0.08, visits), "age"] = np.nan
    df.loc[rng.random(n) < 0.15, "bmi"] = np.nan
    for j in range(LABS):
        df.loc[rng.random(n) < 0.03, f"lab_{j:02d}"] = np.nan
    typo = rng.random(n) < 0.0005
    df.loc[typo, "sbp"] = df.loc[typo, "sbp"] * 10
    df["discharge_code"] = np.repeat(leak, visits)
    df["outcome"] = np.repeat(outcome, visits)
    again = np.flatnonzero(rng.random(n) < 0.003)
    df = pd.concat([df, df.iloc[again]]).sort_index(kind="stable").reset_index(drop=True)
    return df


def write(rows: int, out: Path, chunk_rows: int, small: Path | None) -> dict:
    """Write ``rows`` visits (rounded up to whole files) into ``out``; link the first tenth of
    the files into ``small``. Returns what was written."""
    out.mkdir(parents=True, exist_ok=True)
    files = max(10, -(-rows // chunk_rows))
    files += (-files) % 10  # a whole number of tenths
    total = 0
    for i in range(files):
        path = out / f"part-{i:05d}.parquet"
        if not path.exists():
            df = chunk(i, chunk_rows)
            df.to_parquet(path.with_suffix(".tmp"), index=False, row_group_size=len(df))
            os.replace(path.with_suffix(".tmp"), path)
        import pyarrow.parquet as pq

        total += pq.ParquetFile(path).metadata.num_rows
    if small is not None:
        small.mkdir(parents=True, exist_ok=True)
        for i in range(files // 10):
            link = small / f"part-{i:05d}.parquet"
            if not link.exists():
                link.symlink_to(out / link.name)
    disk = sum(p.stat().st_size for p in out.glob("*.parquet"))
    return {"files": files, "rows": total, "disk_bytes": disk, "columns": int(chunk(0, 1000).shape[1])}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--small", type=Path)
    parser.add_argument("--chunk-rows", type=int, default=500_000)
    args = parser.parse_args()
    print(json.dumps(write(args.rows, args.out, args.chunk_rows, args.small)))


if __name__ == "__main__":
    main()
