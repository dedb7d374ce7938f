"""Whether a run on an in-memory frame is likely to fit in the memory this machine has left.

A whole pandas run holds the frame, the step checkpoints and the model's copies at once: on the
8.0 M-row tenth of the Dask benchmark (3.8 GiB as a frame) it peaked at 22.3 GB, 5.5 times the
frame (docs/scale.md). A table that large is what the Dask path is for; the co-pilot says so
before the kernel runs out of memory, not after.
"""

from __future__ import annotations

from typing import Any

RUN_PEAK = 5.5  # a whole run's peak memory over the frame's size, measured (see above)


def _gib(n: float) -> str:
    return f"{n / 2 ** 30:.1f} GiB"


def memory_warning(frame: str, info: dict[str, Any]) -> str | None:
    """A warning when ``RUN_PEAK`` times the frame's memory is more than the machine has left
    (``info``: the frame's entry of ``frame_info``); None when it fits or is not known."""
    size, free = info.get("memory_bytes"), info.get("available_bytes")
    if not size or not free or size * RUN_PEAK <= free:
        return None
    return (f"'{frame}' takes {_gib(size)} in memory and a run on a frame that large has peaked at "
            f"{RUN_PEAK:g} times its size; {_gib(free)} is left on this machine, so the kernel may run out "
            "of memory. A Dask DataFrame runs in bounded memory: `jupyter dcpilot run DATA --engine dask`, "
            "or dd.read_parquet / dd.from_pandas in the notebook (docs/scale.md).")
