"""Columns whose values never leave the kernel, whatever the user chose to share with an LLM.

A codebook can say a column identifies a person (REDCap's ``Identifier?`` = y, a label such as
"Patient surname" or "Date of birth"). Such a column is never a feature, and none of its values
may reach an LLM even when the user shares sample rows. Reading or diagnosing with a codebook
marks those columns here, by name, for the life of the kernel; the probes that read values for
the co-pilot (:func:`kernel_tools.frames.sample_rows`, :func:`kernel_tools.frames.profile`)
withhold them. A name is marked in every frame of the kernel: withholding too much is safe.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

WITHHELD = "<private>"  # what a probe shows instead of a private value

_PRIVATE: dict[str, str] = {}  # column name -> why it is private


def mark_private(columns: Mapping[str, str]) -> None:
    """Mark columns (name -> the reason, e.g. the codebook line) as private in this kernel."""
    for name, reason in columns.items():
        _PRIVATE.setdefault(str(name), str(reason))


def private_columns() -> dict[str, str]:
    """Every column marked private in this kernel, with why."""
    return dict(_PRIVATE)


def is_private(column: Any) -> bool:
    return str(column) in _PRIVATE


def forget_private() -> None:
    """Unmark every column (a new analysis in the same kernel; tests)."""
    _PRIVATE.clear()
