"""Checkpoints of kernel variables, so any co-pilot step can be undone.

Transforms never mutate their inputs, so most snapshots can keep a *reference* instead of a
copy. How ``save(..., copy="auto")`` (the default) holds each variable:

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
  (custom code), save with ``copy=True`` — or use ``spill_dir``, whose on-disk copy restores
  even after in-place writes.
- other large objects (estimators, lists of frames): a reference, unverified.

``copy=True`` always copies; ``copy=False`` always keeps references. With ``spill_dir``, every
checkpoint is also pickled (protocol 5) at save time, so ``CheckpointStore.load(dir)``
restores it in a restarted kernel — only load directories you wrote yourself (pickle).
"""

from __future__ import annotations

import copy as _copy
import ctypes
import hashlib
import json
import os
import pickle
import types
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

DEFAULT_COPY_BELOW = 64 * 2**20
DEFAULT_VERIFY_BELOW = 256 * 2**20
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
        found = [getattr(values, n, None) for n in names]
        if all(isinstance(f, np.ndarray) for f in found):
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
        if self.is_series:
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


def _snapshot(obj: Any, copy: bool | str, copy_below: int, verify_below: int):
    if isinstance(obj, _IMMUTABLE + _CODE):
        return _Reference(obj, exact=True)
    if copy is True:
        return _Copied(obj)
    size = _nbytes(obj)
    full = size is not None and size < verify_below
    if copy == "auto" and size is not None and size < copy_below:
        try:
            return _Copied(obj, size)
        except Exception:  # not copyable (open files, locks): keep it as it is
            return _Reference(obj, exact=False)
    if isinstance(obj, (pd.DataFrame, pd.Series)):
        return _FrameReference(obj, full)
    if isinstance(obj, np.ndarray) and obj.dtype != object:
        return _ArrayReference(obj, full)
    return _Reference(obj, exact=False)


# --- the store ---------------------------------------------------------------------------------


@dataclass
class _Checkpoint:
    id: str
    label: str
    names: list[str]
    absent: list[str]
    created: str
    snapshots: dict[str, Any] = field(default_factory=dict)  # empty after a reload from disk
    spill_path: Path | None = None
    not_spilled: list[str] = field(default_factory=list)

    def info(self) -> dict[str, Any]:
        references = [n for n, s in self.snapshots.items() if s.kind == "reference"]
        unique = {id(s): s for s in self.snapshots.values()}.values()
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
            # quick sampled check; restore() runs the full one where it was recorded
            "intact": all(s.intact(full=False) for s in unique),
        }


class CheckpointStore:
    """Snapshots of named variables in a namespace (by default the IPython user namespace).

    ``save`` returns an id, ``restore(id)`` puts every saved name back (and deletes names that
    did not exist at save time), ``list()`` describes the checkpoints (JSON-safe),
    ``discard(id)`` forgets one. ``copy_below``: objects smaller than this are copied by
    ``copy="auto"``; ``verify_below``: references smaller than this get the exact (every byte)
    in-place-write check, larger ones a sampled one (see the module docstring).
    """

    def __init__(
        self,
        namespace: dict[str, Any] | None = None,
        spill_dir: str | os.PathLike | None = None,
        *,
        copy_below: int = DEFAULT_COPY_BELOW,
        verify_below: int = DEFAULT_VERIFY_BELOW,
    ):
        if namespace is None:
            namespace = _ipython_namespace()
        if not isinstance(namespace, dict):
            raise TypeError(f"namespace must be a dict, got {type(namespace).__name__}")
        for option, value in (("copy_below", copy_below), ("verify_below", verify_below)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                raise ValueError(f"{option} must be a non-negative number of bytes, got {value!r}")
        self.namespace = namespace
        self.spill_dir = Path(spill_dir) if spill_dir is not None else None
        self.copy_below = copy_below
        self.verify_below = verify_below
        self._checkpoints: dict[str, _Checkpoint] = {}
        if self.spill_dir is not None:
            self.spill_dir.mkdir(parents=True, exist_ok=True)

    @classmethod
    def load(
        cls, spill_dir: str | os.PathLike, namespace: dict[str, Any] | None = None
    ) -> CheckpointStore:
        """A store with the checkpoints spilled to ``spill_dir`` (e.g. by a kernel that died)."""
        directory = Path(spill_dir)
        if not directory.is_dir():
            raise FileNotFoundError(f"no checkpoint directory at {directory}")
        store = cls(namespace=namespace, spill_dir=directory)
        metas = []
        for meta_path in directory.glob("*.json"):
            meta = json.loads(meta_path.read_text())
            payload = directory / f"{meta['id']}.pkl"
            if payload.exists():
                metas.append((meta, payload))
        for meta, payload in sorted(metas, key=lambda m: (m[0]["created"], m[0]["seq"])):
            store._checkpoints[meta["id"]] = _Checkpoint(
                id=meta["id"],
                label=meta["label"],
                names=meta["names"],
                absent=meta["absent"],
                created=meta["created"],
                spill_path=payload,
                not_spilled=meta.get("not_spilled", []),
            )
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
        for name in names:
            if name not in self.namespace:
                continue
            obj = self.namespace[name]
            if id(obj) not in by_object:
                try:
                    by_object[id(obj)] = _snapshot(obj, copy, self.copy_below, self.verify_below)
                except Exception as error:
                    raise TypeError(
                        f"cannot copy {name!r} ({type(obj).__name__}): {error}; save it with "
                        "copy='auto' or copy=False to keep a reference"
                    ) from error
            snapshots[name] = by_object[id(obj)]
        checkpoint = _Checkpoint(
            id=f"cp-{uuid.uuid4().hex[:10]}",
            label=label,
            names=names,
            absent=[n for n in names if n not in self.namespace],
            created=datetime.now(timezone.utc).isoformat(timespec="microseconds"),
            snapshots=snapshots,
        )
        if self.spill_dir is not None:
            self._spill(checkpoint)
        self._checkpoints[checkpoint.id] = checkpoint
        return checkpoint.id

    def restore(self, checkpoint_id: str) -> list[str]:
        """Put the saved values back; all-or-nothing. Returns the names restored or removed."""
        checkpoint = self._get(checkpoint_id)
        values = self._values(checkpoint)
        for name in checkpoint.absent:
            self.namespace.pop(name, None)
        self.namespace.update(values)
        return list(checkpoint.names)

    def list(self) -> list[dict[str, Any]]:
        """JSON-safe descriptions, oldest first: id, label, names, absent, created,
        bytes_copied, references, unverified, spilled, intact (quick sampled check)."""
        return [c.info() for c in self._checkpoints.values()]

    def discard(self, checkpoint_id: str) -> None:
        """Forget a checkpoint and delete its spilled files."""
        checkpoint = self._get(checkpoint_id)
        del self._checkpoints[checkpoint_id]
        if checkpoint.spill_path is not None:
            checkpoint.spill_path.unlink(missing_ok=True)
            checkpoint.spill_path.with_suffix(".json").unlink(missing_ok=True)

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
        if checkpoint.snapshots:
            changed = [n for n, s in checkpoint.snapshots.items() if not s.intact()]
            if changed and checkpoint.spill_path is None:
                raise CheckpointError(
                    f"checkpoint {checkpoint.id!r} ({checkpoint.label}) held {changed} by "
                    "reference and their values were changed in place since; restoring would "
                    "bring back wrong values. Save with copy=True before steps that modify data "
                    "in place."
                )
            if not changed:
                by_snapshot: dict[int, Any] = {}  # one value per snapshot keeps aliases aliased
                for snapshot in checkpoint.snapshots.values():
                    if id(snapshot) not in by_snapshot:
                        by_snapshot[id(snapshot)] = snapshot.value_now()
                return {n: by_snapshot[id(s)] for n, s in checkpoint.snapshots.items()}
        return self._read_spilled(checkpoint)

    def _read_spilled(self, checkpoint: _Checkpoint) -> dict[str, Any]:
        if checkpoint.not_spilled:
            raise CheckpointError(
                f"checkpoint {checkpoint.id!r} cannot restore {checkpoint.not_spilled} from disk "
                "(they could not be pickled when it was saved)"
            )
        with open(checkpoint.spill_path, "rb") as f:
            return pickle.load(f)

    def _spill(self, checkpoint: _Checkpoint) -> None:
        """Write the save-time values to disk (protocol 5), skipping what cannot be pickled."""
        values = {
            name: snapshot.value_now() if snapshot.kind == "reference" else snapshot.value
            for name, snapshot in checkpoint.snapshots.items()
        }
        path = self.spill_dir / f"{checkpoint.id}.pkl"
        tmp = path.with_suffix(".pkl.tmp")
        not_spilled = []
        try:
            _write_pickle(tmp, values)
        except Exception:  # find what cannot be pickled, write the rest
            for name in list(values):
                try:
                    pickle.dumps(values[name], protocol=5, buffer_callback=lambda b: None)
                except Exception:
                    not_spilled.append(name)
                    del values[name]
            _write_pickle(tmp, values)
        os.replace(tmp, path)
        checkpoint.spill_path = path
        checkpoint.not_spilled = not_spilled
        meta = {
            "id": checkpoint.id,
            "label": checkpoint.label,
            "names": checkpoint.names,
            "absent": checkpoint.absent,
            "created": checkpoint.created,
            "seq": len(self._checkpoints),
            "not_spilled": not_spilled,
        }
        path.with_suffix(".json").write_text(json.dumps(meta))


def _write_pickle(path: Path, value: Any) -> None:
    with open(path, "wb") as f:
        pickle.dump(value, f, protocol=5)


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


_default_store: CheckpointStore | None = None


SPILL_ENV = "KERNEL_TOOLS_SPILL_DIR"


def store() -> CheckpointStore:
    """The kernel's default store, on the IPython user namespace (created on first use).

    When the kernel's environment names a directory in ``KERNEL_TOOLS_SPILL_DIR``, every
    checkpoint is also written there, and the store of a restarted kernel starts with the
    checkpoints spilled before (so an undo still works after the kernel died)."""
    global _default_store
    namespace = _ipython_namespace()
    if _default_store is None or _default_store.namespace is not namespace:
        spill_dir = os.environ.get(SPILL_ENV) or None
        if spill_dir is not None and Path(spill_dir).is_dir():
            _default_store = CheckpointStore.load(spill_dir, namespace)
        else:
            _default_store = CheckpointStore(namespace, spill_dir=spill_dir)
    return _default_store
