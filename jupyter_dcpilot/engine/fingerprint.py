"""Which data a session ran on: a fingerprint of its frame, recorded as it goes, compared when
a saved session is resumed.

A signed sidecar says what this user approved, but for which data? Resumed over a kernel that
holds other data (another copy of the notebook, the raw file loaded again after a restart, the
leaked column still there), its "done" steps did not happen to these rows, and its verdict
would speak of a model this kernel never trained. So each session records
:func:`kernel_tools.frames.fingerprint` of its frame (name, shape, columns, a hash of rows
spread over it; no value leaves the kernel) whenever its data version moves, and a resumed
session whose kernel answers with another fingerprint opens as history only, saying why.
"""

from __future__ import annotations

import asyncio
from typing import Any

from jupyter_dcpilot.probe import ProbeError
from kernel_tools.plurals import counted

from .kernel_calls import KernelCalls
from .session import Session


async def record(session: Session, calls: KernelCalls) -> None:
    """Record the frame's fingerprint for the session's current data version (once per version;
    a kernel that cannot say leaves the last one, and a resumed session is then not compared)."""
    s = session
    known = s.variables.get("fingerprint") or {}
    if known.get("data_version") == s.data_version and known.get("frame") == s.frame:
        return
    try:
        found = (await calls.fingerprint([s.frame])).get(s.frame)
    except ProbeError:
        found = None
    if found is None:
        s.variables.pop("fingerprint", None)
        return
    s.variables["fingerprint"] = {"data_version": s.data_version, "frame": s.frame, **found}


def difference(stored: dict[str, Any], current: dict[str, Any] | None) -> str | None:
    """In words, how the kernel's frame differs from the one a session recorded; None if the same."""
    name = stored.get("name")
    if current is None:
        return f"the kernel holds no DataFrame {name!r}"
    if current.get("columns") != stored.get("columns"):
        gone = [c for c in stored.get("columns") or [] if c not in (current.get("columns") or [])]
        new = [c for c in current.get("columns") or [] if c not in (stored.get("columns") or [])]
        parts = ([f"without {_few(gone)}"] if gone else []) + ([f"with {_few(new)}"] if new else [])
        return f"{name!r} has other columns than the session's ({', '.join(parts) or 'in another order'})"
    if current.get("rows") != stored.get("rows"):
        return f"{name!r} has {counted(current.get('rows'), 'row')}, the session's had {stored.get('rows')}"
    if current.get("dtypes") != stored.get("dtypes"):
        return f"{name!r} has columns of other types than the session's"
    if current.get("sample_sha256") != stored.get("sample_sha256"):
        return f"{name!r} holds other values than the session's (same shape and columns)"
    return None


async def check_resumed(session: Session, calls: KernelCalls, wait: float = 5.0) -> str | None:
    """A trusted session loaded from its sidecar, over the kernel it is resumed on: made history
    only (and why returned) when the kernel's data is not the data it ran on. A session that
    recorded no fingerprint (none ran yet, or an older version) is left as it is, and so is one
    whose kernel does not answer within ``wait`` seconds (busy with the user's cell: the session's
    own diagnosis then reads the data again)."""
    stored = session.variables.get("fingerprint")
    if not session.trusted or not stored or stored.get("data_version") != session.data_version:
        return None  # a step ran since it was taken: the kernel's frame is expected to differ
    try:
        current = (await asyncio.wait_for(calls.fingerprint([session.frame]), wait)).get(session.frame)
    except (ProbeError, TimeoutError):  # a busy or older kernel (asyncio's timeout is TimeoutError)
        return None
    why = difference(stored, current)
    if why is not None:
        session.as_history(f"The co-pilot file of this notebook was written for other data ({why}). It is "
                           "shown as history only: none of its decisions or steps applies to the data the "
                           "kernel holds now, every question is asked again.")
    return why


def _few(columns: list[str]) -> str:
    shown = ", ".join(repr(c) for c in columns[:5])
    return shown + (f" and {len(columns) - 5} more" if len(columns) > 5 else "")


__all__ = ["check_resumed", "difference", "record"]
