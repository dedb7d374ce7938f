"""JSON for numpy and pandas values: what every result of kernel_tools goes through once."""

from __future__ import annotations

import math
from typing import Any

import numpy as np


def to_json_safe(value: Any) -> Any:
    """Plain Python (str, int, float, bool, None, list, dict) for numpy/pandas values.

    Evidence is built from numpy results; JSON has no int64, NaN or Timestamp, so everything
    goes through here once instead of every detector remembering to convert.
    """
    kind = type(value)  # plain values first: a sidecar's save walks every finding's evidence
    if kind is str or kind is int or kind is bool or value is None:
        return value
    if kind is float:
        return value if math.isfinite(value) else None
    if kind is dict:
        return {str(k): to_json_safe(v) for k, v in value.items()}
    if kind is list:
        return [to_json_safe(v) for v in value]
    if isinstance(value, dict):
        return {str(k): to_json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, np.ndarray)):
        return [to_json_safe(v) for v in value]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        f = float(value)
        return None if math.isnan(f) or math.isinf(f) else f
    if value is None or isinstance(value, str):
        return value
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return str(value)


__all__ = ["to_json_safe"]
