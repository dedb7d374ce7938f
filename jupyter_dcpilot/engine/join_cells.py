"""The cell that joins several files at once (``kt.join_files``): records over time summarised per
entity over the window first — the window a named parameter the expert set — then every file
joined many-to-one, each line naming its file."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def join_files_code(frame: str, var: str, params: dict[str, Any], frames: list[str], data: list[str]) -> list[str]:
    """``frames`` are the kernel's variables, ``data`` the files they were read from (same order)."""
    files = {v: Path(p).name for v, p in zip(frames, data, strict=False)} if len(data) == len(frames) else {}
    # a file left out is said, with why, where the joins are
    lines = [f"# {_file_and_frame(files, f['frame'])} not joined: {f['why']}" for f in params.get("skipped") or []]
    joined, keys, names = [], [], []
    windows = {r["until"] for f in params["files"] if (r := f.get("records")) and r.get("anchor")}
    window = len(windows) == 1
    if window:
        anchor = next(f["records"]["anchor"] for f in params["files"] if (f.get("records") or {}).get("anchor"))
        lines.append(f"window_h = {windows.pop()!r}  # hours after '{anchor}' when the prediction is made: "
                     "records up to then are features, later ones follow-up (the expert's choice)")
    for f in params["files"]:
        right, records = f["frame"], f.get("records")
        if records:
            args = {k: v for k, v in records.items() if v is not None and k != "until"}
            until = "window_h" if records.get("anchor") and window else repr(records.get("until", 0))
            anchor = f", index={frame}" if records.get("anchor") else ""
            first, *rest = args.items()
            lines.append(f"{right}_window, records_{right} = kt.summarize_records({right}, {first[0]}={first[1]!r}, "
                         f"until={until}" + "".join(f", {k}={v!r}" for k, v in rest) + f"{anchor})")
            right = f"{right}_window"
        joined.append(right)
        keys.append(f["on"])
        names.append(files.get(f["frame"], f["frame"]))
    extra = "".join(f", {k}={params[k]!r}" for k in ("birth", "at") if params.get(k))
    lines.append(f"{frame}, {var} = kt.join_files({frame}, [{', '.join(joined)}], on={keys!r}, names={names!r}{extra})")
    return [*lines, f"print(*{var}.details['joins'], sep='\\n')", var]


def _file_and_frame(files: dict[str, str], frame: str) -> str:
    """``icustays.csv`` for a file loaded as its own name, ``labs.csv (df_3)`` when the variable differs."""
    name = files.get(frame, frame)
    return name if name == frame or name.split(".")[0].lower() == frame else f"{name} ({frame})"

