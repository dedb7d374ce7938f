"""Durations written as people read them, in the kernel's messages and the engine's alike."""

from __future__ import annotations


def minutes(seconds: float) -> str:
    """Seconds as people read them: 45 → "45 s", 300 → "5 min", 90 → "1 min 30 s", 2.5 → "2.5 s"."""
    if seconds < 9.95 and seconds != int(seconds):
        return f"{seconds:.1f} s"
    whole = int(round(seconds))
    if whole < 60:
        return f"{whole} s"
    m, s = divmod(whole, 60)
    return f"{m} min" + (f" {s} s" if s else "")
