"""Where ``jupyter dcpilot run`` may write: a folder that cannot cost the user a file.

``--out .`` replaced the user's own ``notebook.ipynb``; an input named ``report.json`` inside
``--out`` was overwritten by the report. So ``--out`` must be a new or empty folder, or one the
co-pilot wrote before: it leaves a marker file there (:data:`MARKER`) listing what it wrote, each
with its SHA-256. In such a folder, its own earlier outputs are replaced only with ``--force``;
a file it did not write (or one changed since) is never replaced, nor is an input. Checked before
any kernel starts; every refusal is one line (:class:`~jupyter_dcpilot.inputs.InputError`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from pathlib import Path

from .inputs import InputError

MARKER = ".dcpilot-out.json"
OUTPUTS = ("notebook.ipynb", ".notebook.ipynb.dcpilot.json", "report.json", "report.html")


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _written(folder: Path) -> dict[str, str | None] | None:
    """What the marker says the co-pilot wrote (name -> SHA-256, None while being written);
    None when the folder has no marker (or an unreadable one: then it is not the co-pilot's)."""
    try:
        data = json.loads((folder / MARKER).read_text())
        files = data["files"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not isinstance(files, dict):
        return None
    return {str(k): v if isinstance(v, str) else None for k, v in files.items()}


def claim(out: Path, inputs: Iterable[Path | None] = (), force: bool = False,
          names: tuple[str, ...] = OUTPUTS) -> Path:
    """Check that the run may write ``names`` into ``out`` (see the module docstring), then
    create the folder and its marker; InputError in one line, with nothing written, otherwise."""
    out = out.resolve()
    if out.exists() and not out.is_dir():
        raise InputError(f"--out {out} is a file, not a folder: name a new or empty folder")
    for given in inputs:
        if given is not None and given.resolve().parent == out and given.name in names:
            raise InputError(f"--out {out} would write {given.name} over your input {given}: choose another --out")
    present = [p.name for p in out.iterdir()] if out.is_dir() else []
    if present:
        written = _written(out)
        if written is None:
            raise InputError(f"--out {out} is not empty and the co-pilot did not write it: name a new or empty "
                             "folder (nothing was written)")
        _check_replaced(out, [n for n in names if n in present], written, force)
    out.mkdir(parents=True, exist_ok=True)
    record(out, names, pending=True)  # claimed: a run cut short leaves files still known as its own
    return out


def _check_replaced(out: Path, ours: list[str], written: dict[str, str | None], force: bool) -> None:
    """The earlier outputs a run would replace: the co-pilot's own, unchanged, and ``force``."""
    for name in ours:
        if name not in written or (written[name] is not None and _sha256(out / name) != written[name]):
            raise InputError(f"{out / name} was not written by the co-pilot (or was changed since): it is not "
                             "replaced; move it or choose another --out")
    if ours and not force:
        raise InputError(f"--out {out} holds the outputs of an earlier run ({', '.join(ours)}): --force "
                         "replaces them, or choose another --out")


def record(out: Path, names: Iterable[str], pending: bool = False) -> None:
    """Note ``names`` in the folder's marker as written by the co-pilot: with their SHA-256, or
    as being written (``pending``: claimed before the run writes them)."""
    files = _written(out) or {}
    for name in names:
        path = out / name
        files[name] = None if pending or not path.is_file() else _sha256(path)
    (out / MARKER).write_text(json.dumps({"by": "jupyter-dcpilot", "files": files}, indent=1))


__all__ = ["MARKER", "OUTPUTS", "claim", "record"]
