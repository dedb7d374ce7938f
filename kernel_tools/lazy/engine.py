"""The few things narwhals has no word for, done with Dask itself.

Everything here is one of: recognise a Dask frame, compute several lazy results in one pass,
hash values per partition, take a sample into memory, apply a fitted scikit-learn transformer
to every partition. On another engine these are the pieces to write again (docs/scale.md
says how on Spark); the rest of :mod:`kernel_tools.lazy` does not import Dask.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np
import pandas as pd

# the share of a hash's range a sample keeps is decided on this many buckets
_BUCKETS = 1_000_000


def is_lazy(value: Any) -> bool:
    """True for a Dask DataFrame. Dask is not imported to find out: a kernel that never loaded
    it holds no Dask frame, and the panel asks this after every cell."""
    dd = sys.modules.get("dask.dataframe")
    return dd is not None and isinstance(value, dd.DataFrame)


def dask_client(memory_limit: str | int | None = None, threads: int | None = None) -> Any:
    """The ``distributed.Client`` this kernel already uses; else a new ``LocalCluster`` on this
    machine, in the kernel's process (one worker, a thread per core: nothing outlives the
    kernel), its memory capped at ``memory_limit`` (default: a quarter of the machine's memory,
    at most 6 GiB) — above 60% of it, partitions spill to disk; it never pauses."""
    import os

    import dask
    from distributed import Client, LocalCluster

    try:
        return Client.current()
    except ValueError:  # no client yet
        pass
    if memory_limit is None:
        import psutil

        memory_limit = int(min(psutil.virtual_memory().total / 4, 6 * 2**30))
    # the worker lives in the kernel's process, so its memory monitor sees the kernel's own
    # memory too; pausing at 80% of the limit would wait forever on memory no task can free
    # (it stalled an 80M-row aggregation): spill, but never pause
    with dask.config.set({"distributed.worker.memory.pause": False}):
        cluster = LocalCluster(n_workers=1, threads_per_worker=threads or os.cpu_count() or 1, processes=False,
                               memory_limit=memory_limit, dashboard_address=None)
    return Client(cluster)


def library_of(value: Any) -> str:
    return type(value).__module__.split(".")[0]


def graph_of(df: Any) -> Any:
    """The expression (graph) a Dask frame stands for: what a checkpoint keeps."""
    return df.expr


def from_graph(graph: Any) -> Any:
    """A Dask frame on a saved expression."""
    from dask.dataframe.dask_expr._collection import new_collection

    return new_collection(graph)


def compute(*values: Any) -> tuple:
    """Compute lazy values together, so tasks they share (reading the files) run once. Runs on
    the kernel's ``distributed.Client`` when there is one (Dask's own default)."""
    import dask

    return dask.compute(*values)


def partitions(df: Any) -> int:
    return int(df.npartitions)


def first_partition(df: Any) -> pd.DataFrame:
    """The first partition in memory: a look at the data's shape and types (one file's worth)."""
    return df.get_partition(0).compute()


def row_hashes(df: Any, columns: list[str] | None = None) -> Any:
    """One 64-bit hash per row from the values (not the index) of ``columns`` (all by default).
    The same row hashes alike in every partition, so hashes can be counted across partitions."""
    part = df[columns] if columns is not None else df
    return part.map_partitions(pd.util.hash_pandas_object, index=False, meta=("hash", "u8"))


def buckets(values: pd.Series | pd.DataFrame, seed: int = 0) -> np.ndarray:
    """``hash(value, seed) mod 10**6`` per row of an in-memory column (or of a frame's rows)."""
    h = pd.util.hash_pandas_object(values, index=False, hash_key=f"{seed:016d}"[:16]).to_numpy()
    return (h % np.uint64(_BUCKETS)).astype(np.int64)


def hash_buckets(column: Any, seed: int = 0) -> Any:
    """``hash(value, seed) mod 10**6`` per row of a lazy column: equal values share a bucket,
    so a bucket range keeps or drops whole entities."""
    return column.map_partitions(lambda s: pd.Series(buckets(s, seed), index=s.index), meta=(column.name, "i8"))


def bucket_share(fraction: float) -> int:
    """The number of buckets that keeps ``fraction`` of the values."""
    return int(np.clip(np.ceil(fraction * _BUCKETS), 1, _BUCKETS))


def entity_sample(df: Any, rows: int, n_rows: int, id: str | None, seed: int = 0) -> Any:
    """A lazy sample of about ``rows`` of ``n_rows`` rows that keeps whole entities: every row of
    an entity whose id hashes into the kept share (every row, when it is all of them). Without
    an id, a random row sample. Compute it with the statistics it is taken beside."""
    fraction = 1.0 if n_rows <= rows else rows / n_rows
    if fraction >= 1.0:
        return df
    if id is None:
        return df.sample(frac=fraction, random_state=seed)
    return df[hash_buckets(df[id], seed) < bucket_share(fraction)]


HLL_BITS = 16  # HyperLogLog registers: 2**16, about 0.4% error (as Dask's nunique_approx)


def hll_state(values: pd.Series) -> np.ndarray:
    """The HyperLogLog registers of an in-memory column's values (Dask's implementation)."""
    from dask.dataframe.hyperloglog import compute_hll_array

    return compute_hll_array(values, HLL_BITS)


def hll_merge(states: list[np.ndarray]) -> np.ndarray:
    """Registers of several states as one (the distinct values of them all)."""
    return np.max(np.stack(states), axis=0)


def hll_estimate(state: np.ndarray) -> int:
    """Distinct values estimated from HyperLogLog registers."""
    from dask.dataframe.hyperloglog import estimate_count

    return int(round(float(estimate_count(state, HLL_BITS))))


def summarise(df: Any, chunk: Any, merge: Any, count: Any, shards: int, split_every: int = 8) -> tuple[Any, list]:
    """Lazy (merged summary, per-shard counts) of ``df``: ``chunk(partition, i)`` gives each
    partition's (summary, shards) in one task run right after the partition is read — so the
    partition is released at once —; summaries are merged by ``merge(list)`` in a tree of
    ``split_every``; shard ``k`` of every partition is counted by ``count(list)``. Compute them
    together with :func:`compute`."""
    from dask import delayed

    leaves = [delayed(chunk, nout=2, pure=True)(part, i) for i, part in enumerate(df.to_delayed())]
    level = [leaf[0] for leaf in leaves]
    while len(level) > 1:
        level = [delayed(merge, pure=True)(level[i:i + split_every]) for i in range(0, len(level), split_every)]
    if len(leaves) == 1:  # a single partition's summary still goes through merge: one shape out
        level = [delayed(merge, pure=True)(level)]
    counted = [delayed(count, pure=True)([leaf[1][k] for leaf in leaves]) for k in range(shards)]
    return level[0], counted


def delayed_frame(df: Any) -> Any:
    """A lazy frame as one delayed pandas frame, to compute beside :func:`summarise`'s results
    (Dask computes delayed values and frames apart, and out of order, when mixed)."""
    from dask import delayed

    return delayed(pd.concat, pure=True)(df.to_delayed())


def rows_missing_any(patterns: pd.Series, columns: list[str], wanted: list[str]) -> int:
    """Rows missing at least one of ``wanted``, from the counts of each pattern of missing values
    over ``columns`` (one bit per column, packed to bytes; :mod:`kernel_tools.lazy.summary`)."""
    if patterns.empty:
        return 0
    mask = np.packbits(np.isin(columns, wanted))
    table = np.frombuffer(b"".join(patterns.index), dtype=np.uint8).reshape(len(patterns), -1)
    hit = (table & mask).any(axis=1)
    return int(patterns.to_numpy()[hit].sum())


def duplicated_count(values: Any, split_out: int = 8) -> Any:
    """How many values repeat an earlier one (as ``Series.duplicated().sum()``), counted by a
    group-by spread over ``split_out`` partitions so no single task holds every value."""
    counts = values.value_counts(split_out=split_out)
    return (counts - 1).sum()


def conform(out: pd.DataFrame, meta: pd.DataFrame) -> pd.DataFrame:
    """``out`` with the columns and dtypes of ``meta``: a partition without a missing value keeps
    an integer dtype the sample (with gaps) turned into floats; every partition must agree."""
    out = out[list(meta.columns)]
    differ = {c: meta[c].dtype for c in meta.columns if out[c].dtype != meta[c].dtype}
    return out.astype(differ) if differ else out


def apply_fitted(transformer: Any, df: Any, example: pd.DataFrame) -> Any:
    """``transformer.transform`` (fitted already, e.g. on a sample) on every partition of ``df``.

    The output's schema is what the transformer makes of ``example`` (rows of the same data);
    each partition is brought to it (:func:`conform`)."""
    meta = transformer.transform(example).iloc[:0]

    def run(part: pd.DataFrame) -> pd.DataFrame:
        return conform(transformer.transform(part), meta)

    return df.map_partitions(run, meta=meta)


def keep_in_cluster(df: Any) -> tuple[Any, bool]:
    """``df`` persisted in the kernel's ``distributed`` cluster (which spills partitions to disk
    above its memory limit), so the steps after an expensive one (a shuffle) do not redo it;
    without a cluster ``df`` as it is — persisting would load it into the kernel. Returns
    (frame, whether it was persisted) once every partition is in the cluster: the work runs in
    the step that asked for it (its cell, with its progress and time budget), not in whatever
    computes the frame next."""
    try:
        from distributed import Client, wait

        Client.current()
    except (ImportError, ValueError):
        return df, False
    out = df.persist()
    wait(out)
    return out, True


def to_memory(df: Any) -> pd.DataFrame:
    """A lazy frame computed into one pandas frame (only for samples that fit in memory)."""
    return df.compute()
