"""Pass 1 of a lazy diagnosis, one partition at a time.

Each partition, as soon as it is read, is boiled down to what the diagnosis counts — per column
the missing count, finite range, infinite and non-integer values (narwhals expressions, the
same as on the whole lazy frame), a HyperLogLog state or the distinct values, value counts of
text with few values, how many rows have each pattern of missing values, 64-bit hashes of the
rows, of the entity ids and of unique-looking columns, and the rows the sample keeps — and is
then released. Summaries are merged in a tree; the hashes are counted in shards (every hash of
one shard, from every partition, in one task), so equal rows or ids are counted exactly
without a shuffle and no task holds all of them.

Why not one engine reduction per count, computed together: each of them holds the partitions
it has not consumed yet. With a distinct count per column, value counts and two group-bys, a
LocalCluster held most of an 80-million-row data set at once and spilled 28 GB to disk.

The functions here take pandas frames and know nothing of Dask; :func:`kernel_tools.lazy.engine.summarise`
runs them on a lazy frame's partitions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from kernel_tools.lazy import engine, frames

SHARDS = 16  # hashes are counted in this many groups, by their top four bits


@dataclass(frozen=True)
class Plan:
    """What pass 1 counts of which column, and which rows the sample keeps.

    ``keep``: the hash bucket share of ``key`` whose entities the sample keeps (None: every row);
    without ``key``, ``fraction`` of the rows at random."""

    columns: list[str]
    numeric: list[str]
    exact: list[str]  # distinct values counted exactly (few values, or a small frame)
    few: list[str]  # text with few values: value counts
    unique_looking: list[str]  # distinct counted exactly through hashes
    key: str | None
    keep: int | None
    fraction: float
    seed: int = 0


def _shard_of(hashes: np.ndarray) -> np.ndarray:
    return (hashes >> np.uint64(60)).astype(np.int64)


def _by_shard(hashes: np.ndarray, counts: np.ndarray | None = None) -> list[tuple[np.ndarray, np.ndarray | None]]:
    shard = _shard_of(hashes)
    order = np.argsort(shard, kind="stable")
    bounds = np.searchsorted(shard[order], np.arange(SHARDS + 1))
    out = []
    for k in range(SHARDS):
        at = order[bounds[k]:bounds[k + 1]]
        out.append((hashes[at], None if counts is None else counts[at]))
    return out


def _pattern_counts(part: pd.DataFrame) -> pd.Series:
    """Rows per pattern of missing values, keyed by the pattern's packed bits (bytes)."""
    bits = np.packbits(part.isna().to_numpy(dtype=bool), axis=1)
    width = bits.shape[1]
    # each row's bits as one number (up to 64 columns) or one fixed-width value, so numpy
    # counts them without a bytes object a row
    rows: np.ndarray
    if width <= 8:
        wide = np.zeros((len(bits), 8), dtype=np.uint8)
        wide[:, :width] = bits
        rows = wide.view(np.uint64).ravel()
    else:
        rows = np.ascontiguousarray(bits).view(np.dtype((np.void, width))).ravel()
    patterns, counts = np.unique(rows, return_counts=True)
    keys = [p.tobytes()[:width] for p in patterns]
    return pd.Series(counts.astype(np.int64), index=pd.Index(keys, dtype=object))


def _sample(part: pd.DataFrame, plan: Plan, index: int) -> pd.DataFrame:
    if plan.key is not None:
        if plan.keep is None:
            return part
        return part[engine.buckets(part[plan.key], plan.seed) < plan.keep]
    if plan.fraction >= 1.0:
        return part
    rng = np.random.default_rng([plan.seed, index])
    return part[rng.random(len(part)) < plan.fraction]


def _hash(values: pd.Series | pd.DataFrame) -> np.ndarray:
    return pd.util.hash_pandas_object(values, index=False).to_numpy()


def summarise(part: pd.DataFrame, index: int, plan: Plan) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(the partition's counts, its hashes split into :data:`SHARDS` shards)."""
    small: dict[str, Any] = {
        "rows": len(part),
        "stats": frames.unpack_stats(frames.column_stats(part, plan.columns, plan.numeric)),
        "hll": {c: engine.hll_state(part[c].dropna()) for c in plan.columns if c not in plan.exact},
        "values": {c: pd.Series(part[c].dropna().unique()) for c in plan.exact},
        "counts": {c: part[c].value_counts(dropna=True) for c in plan.few},
        "patterns": _pattern_counts(part),
        "sample": _sample(part, plan, index),
    }
    hashed: dict[str, list[tuple[np.ndarray, np.ndarray | None]]] = {"rows": _by_shard(_hash(part))}
    if plan.key is not None:
        ids, counts = np.unique(_hash(part[plan.key].dropna()), return_counts=True)
        hashed["ids"] = _by_shard(ids, counts)
    for c in plan.unique_looking:
        hashed[f"column|{c}"] = _by_shard(_hash(part[c].dropna()))
    shards = [{name: pieces[k] for name, pieces in hashed.items()} for k in range(SHARDS)]
    return small, shards


def _merge_stats(parts: list[dict[str, dict[str, Any]]]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for stat in parts[0]:
        values = pd.DataFrame([p[stat] for p in parts])
        if stat == "min":
            out[stat] = values.min(skipna=True).to_dict()
        elif stat == "max":
            out[stat] = values.max(skipna=True).to_dict()
        else:
            out[stat] = values.sum().astype("int64").to_dict()
    return out


def _add_counts(series: list[pd.Series]) -> pd.Series:
    joined = pd.concat(series)
    return joined.groupby(level=0, sort=False).sum() if len(joined) else joined


def merge(parts: list[dict[str, Any]]) -> dict[str, Any]:
    """Summaries of several partitions as one (a node of the merge tree)."""
    first = parts[0]
    return {
        "rows": sum(p["rows"] for p in parts),
        "stats": _merge_stats([p["stats"] for p in parts]),
        "hll": {c: engine.hll_merge([p["hll"][c] for p in parts]) for c in first["hll"]},
        "values": {c: pd.concat([p["values"][c] for p in parts], ignore_index=True).drop_duplicates()
                   for c in first["values"]},
        "counts": {c: _add_counts([p["counts"][c] for p in parts]) for c in first["counts"]},
        "patterns": _add_counts([p["patterns"] for p in parts]),
        "sample": pd.concat([p["sample"] for p in parts]),
    }


def count_shard(shards: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """Per kind of hash, over one shard of every partition: values (with their counts), distinct
    values, the most of one value, and values seen more than once."""
    out = {}
    for name in shards[0]:
        hashes = np.concatenate([s[name][0] for s in shards])
        given = [s[name][1] for s in shards]
        counts = np.concatenate(given) if given[0] is not None else np.ones(len(hashes), dtype=np.int64)
        uniq, inverse = np.unique(hashes, return_inverse=True)
        per = np.bincount(inverse, weights=counts, minlength=len(uniq)).astype(np.int64)
        out[name] = {"total": int(counts.sum()), "distinct": int(len(uniq)),
                     "largest": int(per.max()) if len(per) else 0, "several": int((per > 1).sum())}
    return out


def add_shards(shards: list[dict[str, dict[str, int]]]) -> dict[str, dict[str, int]]:
    """The counts of every shard together (shards hold disjoint hashes, so distinct values add)."""
    out: dict[str, dict[str, int]] = {}
    for shard in shards:
        for name, c in shard.items():
            o = out.setdefault(name, {"total": 0, "distinct": 0, "largest": 0, "several": 0})
            o["total"] += c["total"]
            o["distinct"] += c["distinct"]
            o["several"] += c["several"]
            o["largest"] = max(o["largest"], c["largest"])
    return out


__all__ = ["Plan", "summarise", "merge", "count_shard", "add_shards", "SHARDS"]
