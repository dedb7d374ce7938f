"""Counts in words: "1 row", "2 rows" — one rule for every message a person reads."""

from __future__ import annotations

from typing import Any


def counted(n: Any, noun: str, plural: str | None = None) -> str:
    """``n`` and ``noun`` in agreement (``plural`` when it is not ``noun + "s"``): "1 interval",
    "3 intervals", "1 entity" / "2 entities"; a count that is no number (``"?"``) takes the plural."""
    many = plural or (noun[:-1] + "ies" if noun.endswith("y") and noun[-2:-1] not in "aeiou" else noun + "s")
    value = n.item() if hasattr(n, "item") else n  # a numpy count says 3, not np.int64(3)
    return f"{value} {noun if value == 1 else many}"
