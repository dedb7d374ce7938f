"""Checkpoints of kernel variables, so any co-pilot step can be undone.

Transforms never mutate their inputs, so most snapshots can keep a *reference* instead of a
copy. Some return frames that share their unchanged columns with the input (``fix_dtypes``
replaces only the columns it converts): a write *into* such a column of the new frame is then
a write into the earlier checkpoint's array too, and is caught at restore like any other. How ``save(..., copy="auto")`` (the default) holds each variable:

- below ``copy_below`` bytes (default 64 MiB; copying that takes ~30 ms): a copy, so every
  in-place change is undone.
- larger DataFrames / Series / numpy arrays: a reference to the index and to each column's
  array. Whatever *replaces* arrays is undone without copying: ``df["x"] = ...``,
  ``drop/rename/set_index(..., inplace=True)``, new columns, rebinding the name. Writes *into*
  a saved array (``df.loc[0, "x"] = v``, ``fillna(inplace=True)``, ``arr[i] = v``) cannot be
  undone from a reference, so restore checks for them and raises :class:`CheckpointError`
  rather than hand back wrong values. Below ``verify_below`` bytes (default 256 MiB) the
  check is exact (a checksum of every byte, ~0.1-0.3 s/GiB at save and at restore); above it
  only sampled rows are compared, which catches bulk writes but can miss a few scattered
  cells. That is the price of a save under 50 ms: before a step that may write in place
  (custom code), save with ``copy=True`` — or use ``spill_dir``, whose on-disk copy (once
  written) restores even after in-place writes.
- other large objects (estimators, lists of frames): a reference, unverified.

``copy=True`` always copies; ``copy=False`` always keeps references. With ``spill_dir``, every
checkpoint up to ``spill_limit`` bytes is also pickled (protocol 5, files readable by the owner
only), so ``CheckpointStore.load(dir)`` restores it in a restarted kernel — only load
directories you wrote yourself (pickle). The write happens in a background thread, so a save
returns as fast as without spilling (the write then shares the CPU and disk with the next
cell); ``flush()`` waits for it. A reference whose data
is written in place while its spill is being written makes that spill unusable (it is checked
afterwards and dropped, never restored wrong).

A spill is written so that a kernel dying at any moment loses nothing silently: a small
record of the checkpoint is written first (at save time), the values go to a temporary file
renamed into place once complete and checked, and older spills are dropped for room only
after the new one is on disk. A kernel that dies before the write finishes (about 0.1-0.5 s
per 100 MB) loses that checkpoint's values, but the restarted kernel's store still lists it
and ``restore`` says what is gone and which checkpoints can still be restored; the same holds
for a checkpoint kept in memory only (above the spill limit, or a failed write).

The kernel's default store (:func:`store`) spills by default, to a folder of the user's cache
directory per kernel (kept across restarts of that kernel), see :func:`spill_settings`.
"""

from __future__ import annotations

import contextlib
import copy as _copy
import ctypes
import hashlib
import json
import os
import pickle
import re
import shutil
import signal
import threading
import time
import types
import uuid
from collections.abc import Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import wait as _wait_all
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from kernel_tools.background import yield_the_cpu
from kernel_tools.lazy.engine import is_lazy

DEFAULT_COPY_BELOW = 64 * 2**20
DEFAULT_VERIFY_BELOW = 256 * 2**20
DEFAULT_SPILL_LIMIT = 512 * 2**20
DEFAULT_SPILL_BUDGET = 4 * DEFAULT_SPILL_LIMIT
_SAMPLE_ROWS = 4096
_IMMUTABLE = (type(None), bool, int, float, complex, str, bytes, frozenset, range)
_CODE = (types.FunctionType, types.BuiltinFunctionType, types.MethodType, types.ModuleType, type)


class CheckpointError(RuntimeError):
    """A checkpoint cannot be restored faithfully (its referenced data changed in place)."""


def _sample_positions(n: int) -> np.ndarray:
    """Evenly spread rows plus the first and last ones: where edits usually land."""
    if n <= _SAMPLE_ROWS:
        return np.arange(n)
    return np.unique(np.concatenate([np.linspace(0, n - 1, _SAMPLE_ROWS).astype(np.int64), [0, n - 1]]))


def _array_digest(values: Any, rows: np.ndarray) -> str:
    """Checksum of ``values`` at ``rows`` (numpy arrays or pandas extension arrays)."""
    taken = values[rows] if np.ndim(values) else values
    if isinstance(taken, np.ndarray) and taken.dtype != object:
        data = np.ascontiguousarray(taken).tobytes()
    else:
        data = pd.util.hash_array(np.asarray(taken, dtype=object).ravel()).tobytes()
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def _buffers(values: Any) -> list[np.ndarray] | None:
    """The numpy buffers an array stores its values in (None: unknown layout)."""
    if isinstance(values, np.ndarray):
        return [values]
    if isinstance(values, pd.Categorical):
        return [values.codes]
    for names in (("_data", "_mask"), ("_ndarray",)):  # masked, datetime-like, numpy-backed
        found = [f for f in (getattr(values, n, None) for n in names) if isinstance(f, np.ndarray)]
        if len(found) == len(names):
            return found
    return None


def _words(buffer: np.ndarray) -> tuple[np.ndarray, bytes]:
    """A buffer as uint64 words (+ leftover bytes), without copying contiguous arrays.

    Object arrays are read as their pointers: replacing an element changes its pointer.
    """
    if not buffer.flags.c_contiguous:
        buffer = np.ascontiguousarray(buffer)
    if buffer.dtype == object:
        pointers = (ctypes.c_uint64 * buffer.size).from_address(buffer.__array_interface__["data"][0])
        return np.ctypeslib.as_array(pointers), b""
    raw = buffer.reshape(-1).view(np.uint8)
    whole = len(raw) // 8 * 8
    return raw[:whole].view(np.uint64), raw[whole:].tobytes()


def _full_digest(values: Any) -> str:
    """Checksum of every byte: wrapping sums of 16 consecutive chunks (so moving values
    between chunks is seen too). ~0.1-0.3 s per GiB, memory-bound."""
    h = hashlib.blake2b(digest_size=16)
    if hasattr(values, "_pa_array"):  # arrow data is immutable; a write swaps the arrow array
        h.update(str(id(values._pa_array)).encode())
        return h.hexdigest()
    buffers = _buffers(values)
    if buffers is None:  # unknown extension array: hash its values (slow, but exact)
        h.update(pd.util.hash_array(np.asarray(values, dtype=object).ravel()).tobytes())
        return h.hexdigest()
    for buffer in buffers:
        words, tail = _words(buffer)
        step = max(1, -(-len(words) // 16))
        sums = [np.add.reduce(words[i : i + step]) for i in range(0, len(words), step)]
        h.update(np.asarray(sums, dtype=np.uint64).tobytes())
        h.update(tail)
        h.update(str(buffer.shape).encode())
    return h.hexdigest()


def _column_arrays(obj: pd.DataFrame | pd.Series) -> list[Any]:
    """Each column's array without copying: numpy views, or the extension array itself."""
    columns = [obj] if isinstance(obj, pd.Series) else (obj.iloc[:, i] for i in range(obj.shape[1]))
    return [c.to_numpy() if isinstance(c.dtype, np.dtype) else c.array for c in columns]


def _address(values: Any) -> tuple:
    if isinstance(values, np.ndarray):
        return (values.__array_interface__["data"][0], values.shape, values.strides, values.dtype.str)
    return (id(values), len(values))


def _nbytes(obj: Any) -> int | None:
    """Bytes a copy would take, or None when unknown (then the object is only referenced)."""
    if isinstance(obj, pd.DataFrame):
        return int(obj.memory_usage(index=True, deep=False).sum())
    if isinstance(obj, pd.Series):
        return int(obj.memory_usage(index=True, deep=False))
    if isinstance(obj, np.ndarray):
        return int(obj.nbytes)
    buffers: list[pickle.PickleBuffer] = []
    try:  # out-of-band buffers: sizing a numpy-heavy object does not copy its arrays
        inband = pickle.dumps(obj, protocol=5, buffer_callback=buffers.append)
    except Exception:
        return None
    return len(inband) + sum(b.raw().nbytes for b in buffers)


# --- snapshots of one variable ------------------------------------------------------------------


class _Copied:
    """A private copy; restore hands out a fresh copy so the checkpoint survives reuse."""

    kind = "copy"
    exact = True

    def __init__(self, obj: Any, nbytes: int | None = None):
        self.value = _deep_copy(obj)
        self.nbytes = nbytes if nbytes is not None else (_nbytes(self.value) or 0)

    def intact(self, full: bool = True) -> bool:
        return True

    def value_now(self) -> Any:
        return _deep_copy(self.value)


class _Reference:
    """Immutable objects (``exact``: nothing can change them) or opaque ones, kept as they are."""

    kind = "reference"
    nbytes = 0

    def __init__(self, obj: Any, exact: bool):
        self.value = obj
        self.exact = exact

    def intact(self, full: bool = True) -> bool:
        return True

    def value_now(self) -> Any:
        return self.value


class _LazyReference:
    """A lazy (Dask) frame: its graph is the snapshot. Operations build new frames, and the few
    that change one in place (``ddf["x"] = ...``) swap its graph, so restore hands back a frame
    on the saved graph — nothing is copied or recomputed, and partitions the user persisted
    stay in the cluster's memory as long as the graph refers to them."""

    kind = "reference"
    nbytes = 0
    exact = True

    def __init__(self, frame: Any):
        from kernel_tools.lazy.engine import graph_of

        self.value = frame
        self.graph = graph_of(frame)

    def intact(self, full: bool = True) -> bool:
        return True

    def value_now(self) -> Any:
        from kernel_tools.lazy.engine import from_graph, graph_of

        return self.value if graph_of(self.value) is self.graph else from_graph(self.graph)


class _ArrayReference:
    """A large numpy array by reference; checksums (sampled rows, and every byte when it is
    below ``verify_below``) detect in-place writes."""

    kind = "reference"
    nbytes = 0

    def __init__(self, array: np.ndarray, full: bool):
        self.value = array
        self.rows = _sample_positions(len(array) if array.ndim else 1)
        self.digest = _array_digest(array, self.rows)
        self.full = _full_digest(array) if full else None
        self.exact = full

    def intact(self, full: bool = True) -> bool:
        if _array_digest(self.value, self.rows) != self.digest:
            return False
        return not (full and self.full) or _full_digest(self.value) == self.full

    def value_now(self) -> Any:
        return self.value


class _FrameReference:
    """A large DataFrame (or Series) held through its index and per-column arrays.

    If the object was restructured in place (columns replaced, dropped, renamed), restore
    rebuilds it from the saved arrays without copying them.
    """

    kind = "reference"
    nbytes = 0

    def __init__(self, obj: pd.DataFrame | pd.Series, full: bool):
        self.value = obj
        self.is_series = isinstance(obj, pd.Series)
        self.name = obj.name if self.is_series else None
        self.index = obj.index
        self.columns = None if self.is_series else obj.columns
        self.arrays = _column_arrays(obj)
        self.addresses = [_address(a) for a in self.arrays]
        self.attrs = dict(obj.attrs)
        self.rows = _sample_positions(len(obj))
        self.digests = [_array_digest(a, self.rows) for a in self.arrays]
        self.full = [_full_digest(a) for a in self.arrays] if full else None
        self.exact = full
        # arrow arrays are checked by identity: keep them alive so no new one reuses the id
        self.arrow = [getattr(a, "_pa_array", None) for a in self.arrays]

    def intact(self, full: bool = True) -> bool:
        if any(_array_digest(a, self.rows) != d for a, d in zip(self.arrays, self.digests)):
            return False
        return not (full and self.full) or all(
            _full_digest(a) == d for a, d in zip(self.arrays, self.full)
        )

    def _unchanged_structure(self) -> bool:
        obj = self.value
        same_labels = obj.name == self.name if self.is_series else obj.columns.equals(self.columns)
        return (
            obj.index is self.index
            and same_labels
            and [_address(a) for a in _column_arrays(obj)] == self.addresses
        )

    def value_now(self) -> Any:
        if self._unchanged_structure():
            return self.value
        return self.parts().rebuild()

    def parts(self) -> _FrameParts:
        return _FrameParts(self.arrays, self.index, self.columns, self.name, self.attrs)


@dataclass(frozen=True)
class _FrameParts:
    """A frame as the index, labels and column arrays a reference snapshot saved. Spills pickle
    this rather than the live object, whose structure the next cell may change mid-write."""

    arrays: list[Any]
    index: pd.Index
    columns: pd.Index | None  # None for a Series
    name: Any
    attrs: dict[str, Any]

    def rebuild(self) -> pd.DataFrame | pd.Series:
        if self.columns is None:
            out = pd.Series(self.arrays[0], index=self.index, name=self.name, copy=False)
        else:
            out = pd.DataFrame(dict(enumerate(self.arrays)), index=self.index, copy=False)
            out.columns = self.columns
        out.attrs = dict(self.attrs)
        return out


def _deep_copy(obj: Any) -> Any:
    if isinstance(obj, (pd.DataFrame, pd.Series)):
        return obj.copy(deep=True)
    if isinstance(obj, np.ndarray):
        return obj.copy()
    return _copy.deepcopy(obj)


def _snapshot(obj: Any, copy: bool | str, copy_below: int, verify_below: int) -> tuple[Any, int]:
    """The snapshot of one object, and its size in bytes (0 when unknown or negligible)."""
    if isinstance(obj, _IMMUTABLE + _CODE):
        return _Reference(obj, exact=True), 0
    if is_lazy(obj):
        return _LazyReference(obj), 0
    if copy is True:
        copied = _Copied(obj)
        return copied, copied.nbytes
    size = _nbytes(obj)
    full = size is not None and size < verify_below
    if copy == "auto" and size is not None and size < copy_below:
        try:
            return _Copied(obj, size), size
        except Exception:  # not copyable (open files, locks): keep it as it is
            return _Reference(obj, exact=False), size
    if isinstance(obj, (pd.DataFrame, pd.Series)):
        return _FrameReference(obj, full), size or 0
    if isinstance(obj, np.ndarray) and obj.dtype != object:
        return _ArrayReference(obj, full), size or 0
    return _Reference(obj, exact=False), size or 0


def _spill_value(snapshot: Any) -> Any:
    """What a spill pickles for a snapshot: its private copy, or the saved parts of a reference."""
    if isinstance(snapshot, _FrameReference):
        return snapshot.parts()
    if isinstance(snapshot, _LazyReference):
        return snapshot.value_now()  # the graph as saved (a few KB of task descriptions)
    return snapshot.value


@contextlib.contextmanager
def _uninterrupted() -> Iterator[None]:
    """SIGINT held back while the block runs, then delivered to the handler it would have met: a
    second Kernel → Interrupt during a rollback must not leave the names half put back."""
    before = signal.getsignal(signal.SIGINT)
    if threading.current_thread() is not threading.main_thread() or before is None:
        yield  # a signal's handler runs on the main thread only; None: a handler not set from Python
        return
    held: list[int] = []
    signal.signal(signal.SIGINT, lambda signum, frame: held.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)
        if held:
            signal.raise_signal(signal.SIGINT)


# --- the store ---------------------------------------------------------------------------------


@dataclass
class _Checkpoint:
    id: str
    label: str
    names: list[str]
    absent: list[str]
    created: str
    snapshots: dict[str, Any] = field(default_factory=dict)  # empty after a reload from disk
    spill_path: Path | None = None  # set once the spill is written and checked
    not_spilled: list[str] = field(default_factory=list)
    seq: int = 0
    spill_note: str | None = None  # why it is not on disk: too large, failed, changed mid-write
    spilling: Future | None = None  # the background write
    lost: str | None = None  # reloaded without its values: why they are gone

    def info(self) -> dict[str, Any]:
        references = [n for n, s in self.snapshots.items() if s.kind == "reference"]
        unique = {id(s): s for s in self.snapshots.values()}.values()
        pending = self.spilling is not None and not self.spilling.done()
        return {
            "id": self.id,
            "label": self.label,
            "names": list(self.names),
            "absent": list(self.absent),
            "created": self.created,
            "bytes_copied": int(sum(s.nbytes for s in unique)),
            "references": references,
            # held by reference where an in-place write could go unnoticed (sampled check only,
            # or an object that cannot be checked): undo is trustworthy only if none happened
            "unverified": [n for n, s in self.snapshots.items() if not s.exact],
            "spilled": self.spill_path is not None,
            "spill_note": "being written" if pending else self.spill_note,
            "lost": self.lost,
            # quick sampled check; restore() runs the full one where it was recorded
            "intact": all(s.intact(full=False) for s in unique),
        }


class _TooLarge(Exception):
    """A spill went over its size limit while being written."""


# why a reloaded checkpoint has no values, by the state its record was left in
_LOST = {
    "writing": "the kernel stopped while it was being written to disk",
    "memory_only": "it was kept in memory only ({note}) and went with the kernel",
}


class CheckpointStore:
    """Snapshots of named variables in a namespace (by default the IPython user namespace).

    ``save`` returns an id, ``restore(id)`` puts every saved name back (and deletes names that
    did not exist at save time), ``list()`` describes the checkpoints (JSON-safe),
    ``discard(id)`` forgets one. ``copy_below``: objects smaller than this are copied by
    ``copy="auto"``; ``verify_below``: references smaller than this get the exact (every byte)
    in-place-write check, larger ones a sampled one (see the module docstring).
    ``spill_dir``: also pickle each checkpoint there (created owner-only if missing), so a
    restarted kernel can restore it; ``spill_limit``: bytes above which a checkpoint stays in
    memory only (None: no limit); ``spill_budget``: bytes all its spilled files may take
    together, the oldest are dropped from disk first (None: no limit; a new checkpoint counts
    with its in-memory size, so text columns can overshoot it a little);
    ``spill_in_background``: write spills in a thread (``flush()`` waits for them). A spill
    that fails (disk full, unwritable folder) never fails the save: ``list()`` says why in
    ``spill_note``.
    """

    def __init__(
        self,
        namespace: dict[str, Any] | None = None,
        spill_dir: str | os.PathLike | None = None,
        *,
        copy_below: int = DEFAULT_COPY_BELOW,
        verify_below: int = DEFAULT_VERIFY_BELOW,
        spill_limit: int | None = None,
        spill_budget: int | None = None,
        spill_in_background: bool = True,
    ):
        if namespace is None:
            namespace = _ipython_namespace()
        if not isinstance(namespace, dict):
            raise TypeError(f"namespace must be a dict, got {type(namespace).__name__}")
        for option, value in (("copy_below", copy_below), ("verify_below", verify_below),
                              ("spill_limit", 0 if spill_limit is None else spill_limit),
                              ("spill_budget", 0 if spill_budget is None else spill_budget)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                raise ValueError(f"{option} must be a non-negative number of bytes, got {value!r}")
        self.namespace = namespace
        self.spill_dir = Path(spill_dir) if spill_dir is not None else None
        self.copy_below = copy_below
        self.verify_below = verify_below
        self.spill_limit = spill_limit
        self.spill_budget = spill_budget
        self.spill_in_background = bool(spill_in_background)
        self._checkpoints: dict[str, _Checkpoint] = {}
        self._seq = 0
        self._spiller: ThreadPoolExecutor | None = None

    @classmethod
    def load(
        cls, spill_dir: str | os.PathLike, namespace: dict[str, Any] | None = None, **options: Any
    ) -> CheckpointStore:
        """A store with the checkpoints spilled to ``spill_dir`` (e.g. by a kernel that died).

        ``options`` are the constructor's keyword options. Unreadable entries are skipped."""
        directory = Path(spill_dir)
        if not directory.is_dir():
            raise FileNotFoundError(f"no checkpoint directory at {directory}")
        store = cls(namespace=namespace, spill_dir=directory, **options)
        metas = []
        for meta_path in directory.glob("*.json"):
            try:
                meta = json.loads(meta_path.read_text())
                payload = directory / f"{meta['id']}.pkl"
                key = (str(meta["created"]), int(meta["seq"]))
            except (OSError, ValueError, KeyError, TypeError):  # half-written or foreign file
                continue
            metas.append((key, meta, payload))
        for _, meta, payload in sorted(metas, key=lambda m: m[0]):
            lost = None
            if not payload.exists():  # renamed into place only once complete: its values are gone
                lost = _LOST.get(meta.get("state"), _LOST["writing"]).format(note=meta.get("note") or "")
                payload.with_suffix(".pkl.tmp").unlink(missing_ok=True)  # the write cut short
            store._checkpoints[meta["id"]] = _Checkpoint(
                id=meta["id"],
                label=meta.get("label", ""),
                names=meta.get("names", []),
                absent=meta.get("absent", []),
                created=meta["created"],
                spill_path=None if lost else payload,
                not_spilled=meta.get("not_spilled", []),
                seq=int(meta["seq"]),
                spill_note=lost,
                lost=lost,
            )
        store._seq = 1 + max((c.seq for c in store._checkpoints.values()), default=-1)
        return store

    def save(self, names: str | list[str], label: str = "", *, copy: bool | str = "auto") -> str:
        """Snapshot ``names`` (missing ones are recorded as absent) and return the checkpoint id."""
        names = _check_names(names)
        if copy not in ("auto", True, False):
            raise ValueError(f'copy must be "auto", True or False, got {copy!r}')
        if not isinstance(label, str):
            raise TypeError(f"label must be a string, got {type(label).__name__}")
        snapshots: dict[str, Any] = {}
        by_object: dict[int, Any] = {}  # names bound to one object share one snapshot
        size = 0
        for name in names:
            if name not in self.namespace:
                continue
            obj = self.namespace[name]
            if id(obj) not in by_object:
                try:
                    by_object[id(obj)], nbytes = _snapshot(obj, copy, self.copy_below, self.verify_below)
                except Exception as error:
                    raise TypeError(
                        f"cannot copy {name!r} ({type(obj).__name__}): {error}; save it with "
                        "copy='auto' or copy=False to keep a reference"
                    ) from error
                size += nbytes
            snapshots[name] = by_object[id(obj)]
        checkpoint = _Checkpoint(
            id=f"cp-{uuid.uuid4().hex[:10]}",
            label=label,
            names=names,
            absent=[n for n in names if n not in self.namespace],
            created=datetime.now(timezone.utc).isoformat(timespec="microseconds"),
            snapshots=snapshots,
            seq=self._seq,
        )
        self._seq += 1
        self._checkpoints[checkpoint.id] = checkpoint  # before its spill starts: the spill looks it up
        if self.spill_dir is not None:
            self._start_spill(checkpoint, size)
        return checkpoint.id

    def restore(self, checkpoint_id: str) -> list[str]:
        """Put the saved values back; all-or-nothing, even when Kernel → Interrupt comes in the
        middle (it is delivered once the restore is whole). Returns the names restored or removed."""
        checkpoint = self._get(checkpoint_id)
        with _uninterrupted():
            values = self._values(checkpoint)
            for name in checkpoint.absent:
                self.namespace.pop(name, None)
            self.namespace.update(values)
        return list(checkpoint.names)

    def list(self) -> list[dict[str, Any]]:
        """JSON-safe descriptions, oldest first: id, label, names, absent, created,
        bytes_copied, references, unverified, spilled, spill_note, intact (quick sampled check)."""
        return [c.info() for c in self._checkpoints.values()]

    def discard(self, checkpoint_id: str) -> None:
        """Forget a checkpoint and delete its spilled files."""
        checkpoint = self._get(checkpoint_id)
        del self._checkpoints[checkpoint_id]
        if checkpoint.spilling is not None and not checkpoint.spilling.cancel():
            checkpoint.spilling.result()  # being written: let it finish, then delete it
        if self.spill_dir is not None:  # its record exists even when its values never got there
            for suffix in (".pkl", ".json"):
                (self.spill_dir / f"{checkpoint.id}{suffix}").unlink(missing_ok=True)

    def problem(self, checkpoint_id: str) -> str | None:
        """Why ``restore(checkpoint_id)`` cannot work, in words, without trying it (None: as far
        as a quick look tells, it can). A checkpoint whose values went with a dead kernel says
        what is gone and which checkpoints can still be restored."""
        checkpoint = self._get(checkpoint_id)
        if checkpoint.lost is None or set(checkpoint.names) <= set(checkpoint.absent):
            return None
        usable = [f"{c.id} ({c.label})" for c in self._checkpoints.values()
                  if c.lost is None and (c.snapshots or c.spill_path is not None)]
        return (f"checkpoint {checkpoint.id!r} ({checkpoint.label}) cannot be restored: "
                f"{checkpoint.lost}; {', '.join(checkpoint.names)} as they were then are gone. "
                + (f"Checkpoints that can be restored: {', '.join(usable)}." if usable
                   else "No checkpoint of this kernel can be restored."))

    def flush(self) -> None:
        """Wait until every spill started so far is written (or has failed)."""
        _wait_all([c.spilling for c in self._checkpoints.values() if c.spilling is not None])

    def __len__(self) -> int:
        return len(self._checkpoints)

    def __repr__(self) -> str:
        return f"CheckpointStore({len(self)} checkpoints, spill_dir={self.spill_dir})"

    # -- internals --

    def _get(self, checkpoint_id: str) -> _Checkpoint:
        if not isinstance(checkpoint_id, str):
            raise TypeError(f"checkpoint id must be a string, got {type(checkpoint_id).__name__}")
        try:
            return self._checkpoints[checkpoint_id]
        except KeyError:
            known = list(self._checkpoints)[-5:]
            raise KeyError(f"no checkpoint {checkpoint_id!r} (latest: {known})") from None

    def _values(self, checkpoint: _Checkpoint) -> dict[str, Any]:
        if set(checkpoint.names) <= set(checkpoint.absent):  # nothing was saved: only deletions
            return {}
        if checkpoint.lost is not None:
            raise CheckpointError(self.problem(checkpoint.id))
        if checkpoint.snapshots:
            changed = [n for n, s in checkpoint.snapshots.items() if not s.intact()]
            if not changed:
                by_snapshot: dict[int, Any] = {}  # one value per snapshot keeps aliases aliased
                for snapshot in checkpoint.snapshots.values():
                    if id(snapshot) not in by_snapshot:
                        by_snapshot[id(snapshot)] = snapshot.value_now()
                return {n: by_snapshot[id(s)] for n, s in checkpoint.snapshots.items()}
            if checkpoint.spilling is not None:
                checkpoint.spilling.result()
            if checkpoint.spill_path is None:
                on_disk = f" Its copy on disk is missing: {checkpoint.spill_note}." if checkpoint.spill_note else ""
                raise CheckpointError(
                    f"checkpoint {checkpoint.id!r} ({checkpoint.label}) held {changed} by "
                    "reference and their values were changed in place since; restoring would "
                    "bring back wrong values. Save with copy=True before steps that modify data "
                    f"in place.{on_disk}"
                )
        return self._read_spilled(checkpoint)

    def _read_spilled(self, checkpoint: _Checkpoint) -> dict[str, Any]:
        if checkpoint.not_spilled:
            raise CheckpointError(
                f"checkpoint {checkpoint.id!r} cannot restore {checkpoint.not_spilled} from disk "
                "(they could not be pickled when it was saved)"
            )
        path = checkpoint.spill_path  # the spill thread may drop it for room meanwhile
        try:
            with open(path, "rb") as f:  # type: ignore[arg-type]
                values = pickle.load(f)
        except (OSError, TypeError) as error:
            raise CheckpointError(f"checkpoint {checkpoint.id!r} ({checkpoint.label}): its copy on disk "
                                  f"is gone ({checkpoint.spill_note or error})") from None
        rebuilt: dict[int, Any] = {}  # aliases pickle as one object: rebuild it once
        for value in values.values():
            if id(value) not in rebuilt:
                rebuilt[id(value)] = value.rebuild() if isinstance(value, _FrameParts) else value
        return {name: rebuilt[id(value)] for name, value in values.items()}

    def _start_spill(self, checkpoint: _Checkpoint, size: int) -> None:
        """Spill the save-time values, in the background unless told otherwise."""
        if self.spill_limit is not None and size > self.spill_limit:
            checkpoint.spill_note = (f"kept in memory only: {_mib(size)} of variables, above the "
                                     f"{_mib(self.spill_limit)} spill limit")
            self._record(checkpoint, "memory_only")
            return
        # first the record, so a kernel that dies during the write leaves word of what it lost
        if not self._record(checkpoint, "writing"):
            return
        by_snapshot = {id(s): _spill_value(s) for s in checkpoint.snapshots.values()}
        values = {name: by_snapshot[id(s)] for name, s in checkpoint.snapshots.items()}
        if not self.spill_in_background:
            self._spill(checkpoint, values)
            return
        if self._spiller is None:
            self._spiller = ThreadPoolExecutor(max_workers=1, thread_name_prefix="kernel_tools-spill",
                                               initializer=yield_the_cpu)
        checkpoint.spilling = self._spiller.submit(self._spill, checkpoint, values)

    def _record(self, checkpoint: _Checkpoint, state: str, meta: dict[str, Any] | None = None) -> bool:
        """Write the checkpoint's record (``<id>.json``): ``writing``, ``written`` or
        ``memory_only`` with the reason. False if it fails (the reason goes to ``spill_note``
        unless that already says why the values are not on disk)."""
        assert self.spill_dir is not None  # only a store that spills keeps records
        record = {"id": checkpoint.id, "label": checkpoint.label, "names": checkpoint.names,
                  "absent": checkpoint.absent, "created": checkpoint.created, "seq": checkpoint.seq,
                  "state": state, "note": checkpoint.spill_note, **(meta or {})}
        path = self.spill_dir / f"{checkpoint.id}.json"
        try:
            self.spill_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
            _write_private(path.with_suffix(".json.tmp"), json.dumps(record).encode())
            os.replace(path.with_suffix(".json.tmp"), path)
        except Exception as error:  # disk full, unwritable folder...
            try:
                path.with_suffix(".json.tmp").unlink(missing_ok=True)
            except OSError:
                pass
            if checkpoint.spill_note is None and checkpoint.spill_path is None:
                checkpoint.spill_note = f"not kept on disk: {type(error).__name__}: {error}"
            return False
        return True

    def _make_room(self, size: int, keep: _Checkpoint) -> None:
        """Drop the oldest spilled files until ``size`` more bytes fit in ``spill_budget`` (their
        checkpoints stay restorable from memory; the newest ones matter most after a crash).
        Called once ``keep``'s own spill is on disk, so a write cut short never costs an older one."""
        assert self.spill_budget is not None  # only called with a budget
        spilled = []
        for c in self._checkpoints.values():  # oldest first; skip spills still being written
            if c is keep:
                continue
            if c.spill_path is not None and (c.spilling is None or c.spilling.done()):
                try:
                    spilled.append((c, c.spill_path.stat().st_size))
                except OSError:
                    continue
        total = sum(n for _, n in spilled) + size
        for checkpoint, nbytes in spilled:
            if total <= self.spill_budget:
                return
            if checkpoint.snapshots:  # a reloaded checkpoint has nothing else: keep it
                path, checkpoint.spill_path = checkpoint.spill_path, None
                assert path is not None  # listed above as spilled
                checkpoint.spill_note = (f"dropped from disk to keep this kernel's spills under "
                                         f"{_mib(self.spill_budget)}")
                self._record(checkpoint, "memory_only")
                path.unlink(missing_ok=True)
                total -= nbytes

    def _spill(self, checkpoint: _Checkpoint, values: dict[str, Any]) -> None:
        """Write the values to disk (protocol 5), skipping what cannot be pickled. Never raises:
        a spill that fails leaves the checkpoint in memory, with the reason in ``spill_note``."""
        assert self.spill_dir is not None  # only a store that spills starts one
        path = self.spill_dir / f"{checkpoint.id}.pkl"
        tmp = path.with_suffix(".pkl.tmp")
        try:
            self.spill_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
            not_spilled = _write_spill(tmp, values, self.spill_limit)
            # a write into a referenced array while it was pickled would make the copy wrong
            unique = {id(s): (n, s) for n, s in checkpoint.snapshots.items()}.values()
            changed = [n for n, s in unique if s.kind == "reference" and not s.intact()]
            if changed:
                checkpoint.spill_note = f"not kept on disk: {changed} changed in place while being written"
                return
            os.replace(tmp, path)  # complete and checked: only now under its name
            checkpoint.not_spilled = not_spilled
            checkpoint.spill_path = path
            self._record(checkpoint, "written", {"not_spilled": not_spilled})
            if self.spill_budget is not None:
                self._make_room(path.stat().st_size, keep=checkpoint)
        except _TooLarge:
            checkpoint.spill_note = (f"kept in memory only: larger than the {_mib(self.spill_limit)} "
                                     "spill limit once pickled")
        except Exception as error:  # disk full, unwritable folder...
            checkpoint.spill_note = f"not kept on disk: {type(error).__name__}: {error}"
        finally:
            try:
                tmp.unlink(missing_ok=True)
            except OSError:
                pass
            if checkpoint.spill_path is None:
                try:
                    path.unlink(missing_ok=True)
                except OSError:
                    pass
                if checkpoint.id in self._checkpoints:  # not discarded meanwhile
                    self._record(checkpoint, "memory_only")  # a restarted kernel says why it is gone


class _LimitedWriter:
    """A file that refuses to grow past ``limit`` bytes (None: no limit)."""

    def __init__(self, file: Any, limit: int | None):
        self.file = file
        self.limit = limit
        self.written = 0

    def write(self, data: Any) -> int:
        self.written += memoryview(data).nbytes
        if self.limit is not None and self.written > self.limit:
            raise _TooLarge(self.written)
        return self.file.write(data)


def _write_private(path: Path, data: bytes) -> None:
    """Write a file only its owner can read (0600, whatever the umask)."""
    with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as f:
        f.write(data)


def _write_spill(path: Path, values: dict[str, Any], limit: int | None) -> list[str]:
    """Pickle ``values`` to ``path`` (owner-only); returns the names left out as unpicklable."""
    def write(chosen: dict[str, Any]) -> None:
        with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as f:
            pickle.dump(chosen, _LimitedWriter(f, limit), protocol=5)

    try:
        write(values)
        return []
    except _TooLarge:
        raise
    except Exception:  # find what cannot be pickled, write the rest
        not_spilled = []
        for name, value in values.items():
            try:
                pickle.dumps(value, protocol=5, buffer_callback=lambda b: None)
            except Exception:
                not_spilled.append(name)
        write({n: v for n, v in values.items() if n not in not_spilled})
        return not_spilled


def _mib(size: float | None) -> str:
    mib = (size or 0) / 2**20
    return f"{mib:,.2f} MiB" if mib < 10 else f"{mib:,.0f} MiB"


def _check_names(names: str | list[str]) -> list[str]:
    if isinstance(names, str):
        names = [names]
    if not isinstance(names, (list, tuple)) or not names:
        raise ValueError("names must be a variable name or a non-empty list of names")
    for name in names:
        if not isinstance(name, str) or not name.isidentifier():
            raise ValueError(f"{name!r} is not a valid variable name")
    return list(dict.fromkeys(names))


def _ipython_namespace() -> dict[str, Any]:
    try:
        from IPython import get_ipython
    except ImportError:
        get_ipython = None
    shell = get_ipython() if get_ipython is not None else None
    if shell is None:
        raise RuntimeError(
            "not running inside IPython: pass namespace= (e.g. globals()) to CheckpointStore"
        )
    return shell.user_ns


# --- the kernel's default store ----------------------------------------------------------------

SPILL_ENV = "KERNEL_TOOLS_SPILL_DIR"
SPILL_LIMIT_ENV = "KERNEL_TOOLS_SPILL_LIMIT"
SPILL_BUDGET_ENV = "KERNEL_TOOLS_SPILL_BUDGET"
KEEP_SPILLED_DAYS = 7  # other kernels' spill folders untouched this long are removed
_OFF = {"off", "0", "false", "no", "none"}
_UNITS = {"": 1, "b": 1, "k": 10**3, "kb": 10**3, "m": 10**6, "mb": 10**6, "g": 10**9, "gb": 10**9,
          "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}

_default_store: CheckpointStore | None = None


def spill_settings(environ: Mapping[str, str] | None = None) -> tuple[Path | None, int | None, int | None]:
    """Where the kernel's default store spills checkpoints, the size limit per checkpoint and
    the budget of all its spilled files together (None: no limit), from the environment.

    ``KERNEL_TOOLS_SPILL_DIR``: a folder, or ``off`` to keep checkpoints in memory only. Unset,
    a folder per kernel in the user's cache directory (e.g. ``~/.cache/kernel_tools/checkpoints/
    kernel-<id>``): private to the user (unlike the system temp dir) and kept across restarts
    of that kernel, which is what lets an undo work after the kernel died. Outside a Jupyter
    kernel nothing would restart and find it, so nothing is spilled unless the variable says so.
    ``KERNEL_TOOLS_SPILL_LIMIT`` (default 512 MiB; larger checkpoints stay in memory only) and
    ``KERNEL_TOOLS_SPILL_BUDGET`` (default 2 GiB; the oldest spills are dropped first): bytes or
    a size such as ``512MiB`` / ``2GiB``, or ``none``.
    """
    env = os.environ if environ is None else environ
    raw_dir = (env.get(SPILL_ENV) or "").strip()
    if raw_dir.lower() in _OFF:
        spill_dir = None
    else:
        key = _kernel_key()
        spill_dir = Path(raw_dir).expanduser() if raw_dir else (_spill_root() / key if key else None)
    return (spill_dir, _size_from(env, SPILL_LIMIT_ENV, DEFAULT_SPILL_LIMIT),
            _size_from(env, SPILL_BUDGET_ENV, DEFAULT_SPILL_BUDGET))


def _size_from(env: Mapping[str, str], name: str, default: int) -> int | None:
    raw = (env.get(name) or "").strip().lower().replace(" ", "")
    if not raw:
        return default
    if raw in _OFF:
        return None
    match = re.fullmatch(r"(\d+(?:\.\d+)?)([a-z]*)", raw)
    if match is None or match.group(2) not in _UNITS:
        raise ValueError(f"{name} must be a size such as 536870912, 512MiB or 2GiB (or none), "
                         f"not {env.get(name)!r}")
    return int(float(match.group(1)) * _UNITS[match.group(2)])


def _spill_root() -> Path:
    try:
        from platformdirs import user_cache_dir
    except ImportError:  # kernel_tools alone: the XDG location
        return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "kernel_tools" / "checkpoints"
    return Path(user_cache_dir("kernel_tools")) / "checkpoints"


def _kernel_key() -> str | None:
    """The kernel's connection-file name (the same after a restart); None outside a kernel."""
    try:
        from ipykernel.kernelapp import IPKernelApp
    except ImportError:
        return None
    if not IPKernelApp.initialized():
        return None
    name = Path(IPKernelApp.instance().connection_file or "").stem
    return re.sub(r"[^A-Za-z0-9._-]", "_", name) or None


def _prune_spilled(root: Path, keep: Path, older_than_s: float) -> None:
    """Remove other kernels' spill folders nobody wrote to for ``older_than_s`` seconds."""
    cutoff = time.time() - older_than_s
    try:
        folders = [f for f in root.iterdir() if f.is_dir() and f != keep]
    except OSError:
        return
    for folder in folders:
        try:
            newest = max((p.stat().st_mtime for p in folder.iterdir()), default=folder.stat().st_mtime)
            if newest < cutoff:
                shutil.rmtree(folder)
        except OSError:
            continue


def store() -> CheckpointStore:
    """The kernel's default store, on the IPython user namespace (created on first use).

    It spills checkpoints to disk as :func:`spill_settings` says (by default up to 512 MiB each
    and 2 GiB in all, in a per-kernel folder of the user's cache directory), and the store of a restarted kernel
    starts with the checkpoints spilled before, so an undo still works after the kernel died.
    Spilling never makes a save fail."""
    global _default_store
    namespace = _ipython_namespace()
    if _default_store is None or _default_store.namespace is not namespace:
        spill_dir, limit, budget = spill_settings()
        if spill_dir is not None and not os.environ.get(SPILL_ENV):
            _prune_spilled(spill_dir.parent, spill_dir, KEEP_SPILLED_DAYS * 86400)
        _default_store = CheckpointStore(namespace, spill_dir=spill_dir, spill_limit=limit, spill_budget=budget)
        if spill_dir is not None and spill_dir.is_dir():  # a restarted kernel: what it spilled before
            try:
                _default_store = CheckpointStore.load(spill_dir, namespace, spill_limit=limit, spill_budget=budget)
            except OSError:  # unreadable: start empty, spill as we go
                pass
    return _default_store
