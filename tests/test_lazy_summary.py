"""Pass 1 of a lazy diagnosis, one partition at a time (kernel_tools/lazy/summary.py): the
counts equal pandas' over many partitions, and no partition outlives the task that read it."""

from __future__ import annotations

import gc
import weakref
from functools import partial

import numpy as np
import pandas as pd
import pytest

dd = pytest.importorskip("dask.dataframe")

from kernel_tools.lazy import engine, summary  # noqa: E402
from kernel_tools.lazy.diagnosis import diagnose_lazy  # noqa: E402


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    """Entities with 1-9 rows, gaps, text with few values, a unique-looking column and copies."""
    rng = np.random.default_rng(7)
    sizes = rng.integers(1, 10, 3000)
    n = int(sizes.sum())
    df = pd.DataFrame({
        "id": np.repeat([f"E{i:05d}" for i in range(len(sizes))], sizes),
        "num": np.round(rng.normal(50, 10, n), 2),
        "text": rng.choice(["a", "b", "c", "d"], n),
        "uid": [f"U{i}" for i in rng.permutation(n)],
    })
    df.loc[rng.random(n) < 0.1, "num"] = np.nan
    df.loc[rng.random(n) < 0.05, "text"] = None
    copies = df.iloc[rng.choice(n, 40, replace=False)]
    return pd.concat([df, copies], ignore_index=True)


def _pass_one(df: pd.DataFrame, partitions: int, keep_fraction: float) -> tuple[dict, dict]:
    plan = summary.Plan(columns=list(df.columns), numeric=["num"], exact=["text"], few=["text"],
                        unique_looking=["uid"], key="id", keep=engine.bucket_share(keep_fraction),
                        fraction=keep_fraction)
    merged, shards = engine.summarise(dd.from_pandas(df, npartitions=partitions, sort=False),
                                      partial(summary.summarise, plan=plan), summary.merge,
                                      summary.count_shard, summary.SHARDS)
    merged, *shards = engine.compute(merged, *shards)
    return merged, summary.add_shards(shards)


def test_pass_one_counts_what_pandas_counts_over_many_partitions(frame):
    merged, hashed = _pass_one(frame, partitions=11, keep_fraction=0.3)
    assert merged["rows"] == len(frame)
    assert merged["stats"]["null"] == frame.isna().sum().to_dict()
    assert merged["stats"]["min"]["num"] == frame["num"].min() and merged["stats"]["max"]["num"] == frame["num"].max()
    # exact copies of rows, rows per entity, distinct values of a unique-looking column: exact
    assert hashed["rows"]["total"] - hashed["rows"]["distinct"] == frame.duplicated().sum() >= 40
    per_id = frame["id"].value_counts()
    assert hashed["ids"] == {"total": len(frame), "distinct": per_id.size, "largest": int(per_id.max()),
                             "several": int((per_id > 1).sum())}
    assert hashed["column|uid"]["distinct"] == frame["uid"].nunique()
    # text with few values: its value counts; other columns: HyperLogLog, within 2%
    assert {str(k): int(v) for k, v in merged["counts"]["text"].items()} == frame["text"].value_counts().to_dict()
    assert sorted(merged["values"]["text"]) == sorted(frame["text"].dropna().unique())
    assert engine.hll_estimate(merged["hll"]["num"]) == pytest.approx(frame["num"].nunique(), rel=0.02)
    # missing-value patterns: rows missing any of the chosen columns
    assert engine.rows_missing_any(merged["patterns"], list(frame.columns), ["num", "text"]) == \
        frame[["num", "text"]].isna().any(axis=1).sum()
    # the sample keeps whole entities, about the share asked for
    sample = merged["sample"]
    assert 0.2 < len(sample) / len(frame) < 0.4
    kept = {str(k): int(v) for k, v in sample["id"].value_counts().items()}
    assert kept == per_id[per_id.index.isin(list(kept))].to_dict()


def test_no_partition_outlives_the_task_that_read_it(frame):
    """The reason for pass 1's shape: a data set larger than memory is only ever held a few
    partitions at a time (a reduction per count, computed together on a cluster, kept the
    partitions its later reductions still needed: most of them, spilled to disk)."""
    distributed = pytest.importorskip("distributed")
    alive, most = [0], [0]

    def released() -> None:
        alive[0] -= 1

    def read(part: pd.DataFrame) -> pd.DataFrame:
        gc.collect()
        part = part.copy()
        alive[0] += 1
        weakref.finalize(part, released)
        most[0] = max(most[0], alive[0])
        return part

    ddf = dd.from_pandas(frame, npartitions=12, sort=False).map_partitions(read, meta=frame.iloc[:0])
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None) as cluster, \
            distributed.Client(cluster):
        diagnosis = diagnose_lazy(ddf, id="id", sample_rows=5000)
    assert diagnosis.shape == [len(frame), frame.shape[1]]
    assert most[0] <= 4, f"{most[0]} of {ddf.npartitions} partitions were held at once"


@pytest.mark.parametrize("columns", [3, 46, 70])  # packed into one number up to 64 columns, else bytes
def test_missing_value_patterns_are_counted_row_by_row(columns):
    rng = np.random.default_rng(columns)
    df = pd.DataFrame(rng.normal(size=(5000, columns))).add_prefix("c")
    df = df.mask(rng.random(df.shape) < rng.random(columns) * 0.3)
    counted = summary._pattern_counts(df)
    bits = np.packbits(df.isna().to_numpy(), axis=1)
    expected = pd.Series([row.tobytes() for row in bits]).value_counts()
    assert counted.sum() == len(df) and counted.sort_index().to_dict() == expected.sort_index().to_dict()
    wanted = ["c1", f"c{columns - 1}"]
    assert engine.rows_missing_any(counted, list(df.columns), wanted) == int(df[wanted].isna().any(axis=1).sum())
