"""Reading and writing sidecars so that the file cannot hurt the process that reads it.

A sidecar (``.<notebook>.dcpilot.json``) sits in the user's folders, where anyone who shares
them (a cloned repository, a shared drive) can put anything under that name: a symbolic link
to ``/dev/zero`` (read forever), a FIFO (an ``open`` that never returns: the whole Jupyter
server froze), a 50 MB file (seconds of parsing on the event loop, rewritten at every save).
So a sidecar is opened without following links and without blocking, read only when it is a
regular file under :data:`MAX_BYTES`, and written small: the checkpoints' copies of the plan
and findings are stored once (a pool of distinct entries), the transcript keeps its latest
entries, and only the latest LLM payloads keep their bodies (the others their size and hash).

Trust is more than a signature: a genuine sidecar copied next to another notebook would carry
approvals given for other data. The signed content names its notebook (:func:`placed_elsewhere`);
a legitimate move re-signs it (:func:`move`), and the data it ran on is compared by
:mod:`.fingerprint` when a session is resumed.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import stat
import tempfile
from pathlib import Path
from typing import Any

MAX_BYTES = 16 << 20  # a compacted sidecar of a long session is well under 1 MiB
TRANSCRIPT_KEPT = 1000  # latest transcript entries kept in the file
PAYLOADS_KEPT = 20  # latest LLM payloads kept whole in the file (earlier ones: size and hash)
SUFFIX = ".dcpilot.json"
_POOLED = ("findings", "plan")  # the bulky parts of a checkpoint's snapshot


class SidecarRefused(ValueError):
    """The file under a sidecar's name is not one the co-pilot reads (not a regular file, too
    large); the message says which and why, in one line."""


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a folder")):
        if test(mode):
            return name
    return "not a regular file"


def read_regular(path: str | os.PathLike[str], limit: int | None = None, what: str = "the co-pilot file") -> bytes:
    """The bytes of ``path`` if it is a regular file of at most ``limit`` bytes, never following
    a link nor waiting on a FIFO or device; :class:`SidecarRefused` otherwise (FileNotFoundError
    when there is nothing)."""
    name, limit = Path(path).name, MAX_BYTES if limit is None else limit
    before = os.lstat(path)
    if not stat.S_ISREG(before.st_mode):
        raise SidecarRefused(f"{what} {name} is {_kind(before.st_mode)}, not a regular file: it is not read")
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as error:
        if error.errno == errno.ELOOP:  # swapped for a link since the lstat
            raise SidecarRefused(f"{what} {name} is a symbolic link, not a regular file: it is not read") from None
        raise
    with os.fdopen(fd, "rb") as fh:
        now = os.fstat(fh.fileno())
        if not stat.S_ISREG(now.st_mode) or (now.st_dev, now.st_ino) != (before.st_dev, before.st_ino):
            raise SidecarRefused(f"{what} {name} changed while it was opened: it is not read")
        if now.st_size > limit:
            raise SidecarRefused(f"{what} {name} is {now.st_size / 2**20:.1f} MiB, larger than the "
                                 f"{limit / 2**20:.0f} MiB the co-pilot reads: it is not read")
        data = fh.read(limit + 1)
    if len(data) > limit:  # grew while read
        raise SidecarRefused(f"{what} {name} is larger than the {limit / 2**20:.0f} MiB the co-pilot reads")
    return data


def write_atomic(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file renamed into place (no half-written
    file after a crash; a link or FIFO under the name is replaced, never written through)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".dcpilot-", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)  # no stray temporary file beside the notebook
        raise


# -- small files ---------------------------------------------------------------------------------
def _key(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, separators=(",", ":")).encode()).hexdigest()[:20]


def compact(state: dict[str, Any], *, payloads_kept: int = PAYLOADS_KEPT,
            transcript_kept: int = TRANSCRIPT_KEPT,
            keys: dict[int, tuple[Any, str]] | None = None) -> dict[str, Any]:
    """The session's JSON state as the sidecar stores it (see the module docstring); ``state``
    is not changed. :func:`expand` gives back all but the trimmed transcript and payload bodies.

    ``keys``: the pooled entries' keys by identity, from the previous call, for a caller whose
    checkpoints' JSON objects are never changed once made (:meth:`.Session.save`): hashing every
    entry of every checkpoint again was most of this function's time at each save. It is refilled
    with this call's entries (each kept beside its key, so that its id is not reused)."""
    out = dict(state)
    pool: dict[str, Any] = {}
    known, seen = keys if keys is not None else {}, {}

    def pooled(items: list[Any]) -> dict[str, list[str]]:
        refs = []
        for item in items:
            kept = known.get(id(item))
            key = kept[1] if kept is not None and kept[0] is item else _key(item)
            seen[id(item)] = (item, key)
            pool.setdefault(key, item)
            refs.append(key)
        return {"pool": refs}

    checkpoints = []
    for cp in state.get("checkpoints") or []:
        snap = dict(cp.get("snapshot") or {})
        for part in _POOLED:
            if isinstance(snap.get(part), list):
                snap[part] = pooled(snap[part])
        checkpoints.append({**cp, "snapshot": snap})
    out["checkpoints"] = checkpoints
    if keys is not None:
        keys.clear()
        keys.update(seen)  # an undone checkpoint's entries are let go
    if pool:
        out["pool"] = pool
    transcript = list(state.get("transcript") or [])
    if len(transcript) > transcript_kept:
        dropped = len(transcript) - transcript_kept
        out["transcript"] = [{"at": transcript[dropped].get("at"), "kind": "compacted",
                              "text": f"{dropped} earlier entries were left out of the saved file"},
                             *transcript[dropped:]]
    payloads = list(state.get("llm_payloads") or [])
    cut = max(len(payloads) - payloads_kept, 0)
    out["llm_payloads"] = [_summarised(p) for p in payloads[:cut]] + payloads[cut:]
    return out


def _summarised(entry: dict[str, Any]) -> dict[str, Any]:
    if "payload" not in entry:
        return entry
    rest = {k: v for k, v in entry.items() if k != "payload"}
    return {**rest, "payload_sha256": _key(entry["payload"]), "payload": None}


def expand(data: dict[str, Any]) -> dict[str, Any]:
    """A sidecar's JSON as the session's state (the pooled snapshots filled in again); a key
    missing from the pool is a damaged file (ValueError)."""
    pool = data.pop("pool", None) or {}
    for cp in data.get("checkpoints") or []:
        snap = cp.get("snapshot") if isinstance(cp, dict) else None
        if not isinstance(snap, dict):
            continue
        for part in _POOLED:
            refs = snap.get(part)
            if isinstance(refs, dict) and "pool" in refs:
                try:
                    snap[part] = [pool[k] for k in refs["pool"]]
                except (KeyError, TypeError):
                    raise ValueError("a checkpoint refers to entries the file does not hold") from None
    return data


# -- which notebook --------------------------------------------------------------------------------
def notebook_of(sidecar: str | os.PathLike[str]) -> Path:
    """``dir/name.ipynb`` for ``dir/.name.ipynb.dcpilot.json``."""
    path = Path(sidecar)
    name = path.name
    if name.startswith(".") and name.endswith(SUFFIX):
        name = name[1:-len(SUFFIX)]
    return path.with_name(name)


def _same(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> bool:
    return os.path.realpath(a) == os.path.realpath(b)


def placed_elsewhere(claimed: str, sidecar: str | os.PathLike[str]) -> str | None:
    """Why a signed sidecar does not belong where it lies (None when it does): its content names
    the notebook it was written for, and a copy beside another notebook carries approvals given
    for other data."""
    here = notebook_of(sidecar)
    if claimed and _same(claimed, here):
        return None
    return (f"it was written for the notebook {claimed or '(none named)'}, not for {here.name} here: a "
            "copy of another notebook's file")


__all__ = ["MAX_BYTES", "SidecarRefused", "compact", "expand", "notebook_of", "placed_elsewhere",
           "read_regular", "write_atomic"]
