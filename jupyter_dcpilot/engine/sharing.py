"""What of the data may leave the kernel for a model or an agent: the share setting applied.

``share="schema"`` (the default everywhere) lets column names, finding kinds and aggregate
statistics out, never a single value of the data; ``share="samples"`` (the user's explicit
choice) lets the values through. The Claude planner's state (:mod:`.planners.claude`) and what
the MCP tools answer an agent (:mod:`jupyter_dcpilot.agent_view`) go through these functions.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from kernel_tools.findings import Finding

SHARE_MODES = ("schema", "samples")
# evidence keys that hold single values of the data rather than aggregates
_RAW_KEYS = re.compile(r"example|extreme|value|sample(?!_size)|^min$|^max$|first|last|top", re.I)
_QUOTED = re.compile(r"'[^'\n]*'|\"[^\"\n]*\"")


def numbers_only(evidence: dict[str, Any]) -> dict[str, Any]:
    """Aggregate numbers only: no strings, lists or single values that could carry row values."""
    return {k: v for k, v in evidence.items() if isinstance(v, (int, float, bool)) and not names_a_value(k)}


def names_a_value(key: str) -> bool:
    """Whether an evidence key or a parameter holds a single value of the data (an example, an
    extreme, a min or max), not an aggregate."""
    return bool(_RAW_KEYS.search(key))


def redact(text: str, allowed: set[str]) -> str:
    """``text`` with every quoted string that is not an allowed name (a column) replaced by '…'.

    Messages written by kernel_tools and Python quote the values they talk about, so this keeps
    an error or a check readable while no cell value leaves the machine."""
    return _QUOTED.sub(lambda m: m.group(0) if m.group(0)[1:-1] in allowed else "'…'", str(text))


def private_columns(diagnosis: dict[str, Any] | None, findings: Iterable[Finding] = ()) -> set[str]:
    """Columns a codebook says identify a person: the diagnosis lists them (``column_stats["private"]``)
    and marks its findings on them (``evidence["private"]``). Nothing written from their values is
    shared, whatever the share setting."""
    listed = set(((diagnosis or {}).get("column_stats") or {}).get("private") or {})
    marked = {str(c) for f in findings if f.evidence.get("private") for c in f.columns}
    return {str(c) for c in listed} | marked


def check_share(share: str) -> str:
    """``share`` itself; ValueError unless it is one of :data:`SHARE_MODES`."""
    if share not in SHARE_MODES:
        raise ValueError(f"share must be one of {list(SHARE_MODES)}, not {share!r}")
    return share
