"""Tukey's far-out fences: what the linear models clip to and what a broken fold's suspect row is
measured against (numpy only: the co-pilot's own process reads it through the fold checks)."""

from __future__ import annotations

import numpy as np

FAR_OUT = 3.0  # Tukey's "far out": beyond 3 interquartile ranges from the quartiles


def far_out_fences(values: np.ndarray, k: float = FAR_OUT) -> tuple[np.ndarray, np.ndarray]:
    """Per column, the quartiles -/+ ``k`` interquartile ranges; a column whose quartiles
    coincide (mostly one value, e.g. a 0/1 flag) gets its observed range instead."""
    low, high = np.nanmin(values, axis=0), np.nanmax(values, axis=0)
    q1, q3 = np.nanpercentile(values, [25, 75], axis=0)
    iqr = q3 - q1
    return np.where(iqr > 0, q1 - k * iqr, low), np.where(iqr > 0, q3 + k * iqr, high)
