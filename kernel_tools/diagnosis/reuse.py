"""A re-diagnosis re-checks only what changed: each column's own results are kept for the
columns whose values did not change since the last diagnosis.

After a step that drops columns the co-pilot diagnoses the frame again; the surviving columns'
profiles and single-feature scores (the per-column share of a diagnosis: about a third of it on
100k x 40, docs/benchmarks.md) are then those of the last diagnosis. Whether a column is
unchanged is decided by its values — a fingerprint of every value, its dtype and name, and the
frame's index — never by what the step says it did, so a column changed in place is checked
afresh and a notebook's own ``kt.diagnose`` calls gain alike. The detectors that read several
columns together (duplicates, entity, leakage, the timeline ...) run again; the label check's
model is kept when its whole input matrix and labels are unchanged (a dtype fix of a date it
does not read leaves them so: ~1 s of a 10k-row re-diagnosis). Only the last diagnosis's results are kept (memory: one per column).
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from kernel_tools.diagnosis import columns

# what the last diagnosis computed: (what, column name, fingerprints ...) -> result
_last: dict[tuple, Any] = {}
_reused = 0  # how many of its results that diagnosis took from the one before


def fingerprint(values: pd.Series | pd.Index | np.ndarray | None,
                factorized: columns.Factorized | None = None) -> str | None:
    """A digest of every value (and the dtype): equal digests, equal columns. None when the
    values cannot be hashed (lists in cells, objects whose text raises): such a column is
    always checked afresh. ``factorized``: the object column's codes and distinct values
    (:func:`~kernel_tools.diagnosis.columns.factorize_objects`), digested instead of hashing
    every value again."""
    if values is None:
        return None
    digest = hashlib.blake2b(digest_size=16)
    try:
        if isinstance(values, pd.RangeIndex):
            digest.update(repr((values.start, values.stop, values.step)).encode())
            return digest.hexdigest()
        array = values.to_numpy() if isinstance(values, (pd.Series, pd.Index)) else values
        dtype = getattr(values, "dtype", array.dtype)
        digest.update(str(dtype).encode())
        if isinstance(dtype, np.dtype) and dtype.kind in "biufcmM":
            digest.update(np.ascontiguousarray(array).view(np.uint8).tobytes())
        else:  # objects, categories, extension arrays: pandas' hash of each value, and what
            # kinds of values they are (True and 1 hash alike)
            objects = np.asarray(array, dtype=object)
            digest.update(pd.api.types.infer_dtype(objects, skipna=False).encode())
            if factorized is None:
                digest.update(pd.util.hash_array(objects).tobytes())
            else:  # the codes in order and the distinct values they stand for: every value
                codes, uniques = factorized
                digest.update(np.ascontiguousarray(codes, dtype=np.int64).view(np.uint8).tobytes())
                digest.update(_distinct_digest(uniques))
    except Exception:  # a value whose hash or text raises: the column is checked afresh, never
        return None     # reused (and the profile's own check says what is wrong with it)
    return digest.hexdigest()


def _distinct_digest(uniques: np.ndarray) -> bytes:
    """The distinct values' digest: text joined with each length (one C pass: a million
    distinct ids in ~0.07 s where hashing each value takes ~0.4 s), else pandas' hash."""
    if pd.api.types.infer_dtype(uniques, skipna=False) == "string":
        lengths = np.fromiter(map(len, uniques), dtype=np.int64, count=len(uniques))
        return (hashlib.blake2b("".join(uniques).encode("utf-8", "surrogatepass"), digest_size=16).digest()
                + lengths.view(np.uint8).tobytes())
    return pd.util.hash_array(uniques).tobytes()


class Memo:
    """The fingerprints of one frame's columns, and each column's results: kept from the last
    diagnosis where the column is unchanged, computed (and kept for the next) otherwise."""

    def __init__(self, df: pd.DataFrame) -> None:
        self.frame = df
        self.index = fingerprint(df.index)
        # each text column hashed once: its fingerprint, profile and row hashes read the codes
        self.factorized: dict[Any, columns.Factorized] = {}
        for c in df.columns:
            try:
                found = columns.factorize_objects(df[c])
            except Exception:  # unhashable cells: the fingerprint says None, the profile what is wrong
                found = None
            if found is not None:
                self.factorized[c] = found
        self.columns = {str(c): fingerprint(df[c], self.factorized.get(c)) for c in df.columns}
        self.now: dict[tuple, Any] = {}
        self.reused = 0

    def factorized_of(self, df: pd.DataFrame) -> dict[Any, columns.Factorized]:
        """The text columns' codes when ``df`` is the frame this memo fingerprinted, else none."""
        return self.factorized if df is self.frame else {}

    def key(self, what: str, column: str, *context: Any) -> tuple | None:
        own = self.columns.get(column)
        if own is None or self.index is None:
            return None
        return (what, column, own, self.index, *context)

    def key_of(self, what: str, *values: Any) -> tuple | None:
        """A key for a result computed from ``values`` alone (arrays; numbers and text as they
        are), such as a model fitted on a matrix: None when an array cannot be fingerprinted."""
        parts = [fingerprint(v) if isinstance(v, np.ndarray) else None if v is None else repr(v) for v in values]
        return None if None in parts else (what, *parts)

    def get(self, key: tuple | None, compute: Callable[[], Any]) -> Any:
        """The result kept under ``key`` (a copy: detectors never share a mutable result) by this
        diagnosis or the last, else ``compute()``, kept for the next diagnosis."""
        if key is not None and key in self.now:
            return copy.deepcopy(self.now[key])
        if key is not None and key in _last:
            value = copy.deepcopy(_last[key])
            self.reused += 1
        else:
            value = compute()
        if key is not None:
            self.now[key] = value
        return value

    def outcome_context(self, outcome: Any, folds: np.ndarray, frame: pd.DataFrame | None) -> tuple:
        """What a column's single-feature score depends on besides the column: the sampled rows
        (``frame``; None when the score's input is already an array of those rows), the outcome
        on them and the folds."""
        parts = [fingerprint(frame.index) if frame is not None else "", fingerprint(folds)]
        for f in dataclasses.fields(outcome):
            value = getattr(outcome, f.name)
            if isinstance(value, np.ndarray):
                parts.append(fingerprint(value))
            elif isinstance(value, (str, int, float, bool, type(None))):
                parts.append(repr(value))
            elif isinstance(value, list):
                parts.append(repr(value))
        return tuple(parts)

    def keep(self) -> None:
        """This diagnosis's results replace the last one's."""
        global _last, _reused
        _last, _reused = self.now, self.reused


def reused_last() -> int:
    """How many column results the last diagnosis took from the one before it."""
    return _reused


def forget() -> None:
    """Drop every kept result (tests; a kernel that needs the memory back)."""
    global _last, _reused
    _last, _reused = {}, 0
