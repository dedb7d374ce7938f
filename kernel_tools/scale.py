"""What the model and label steps compute on a sample of a large table, and from how many rows.

Only above ``SCALE_ROWS`` rows: below it (the quality suite's tables, the demo) every step keeps
exactly its behaviour on all rows. Above it, the parts that only *rank or flag* (the
hyper-parameter search, the label model's fits) run on a sample; what
the verdict reads (the cross-validated score, its interval, the holdout and its interval, the
refit) is computed on the same rows as below the threshold. Each cut is said in words in the
step's output (:func:`sampled_sentence`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.utils import resample

SCALE_ROWS = 5_000  # the lead's bound (issue 31): no cut at or below this many rows
# the search ranks 6 settings: on 20k rows (whole entities) its ranking is as settled as on
# 50k, and it cost ~40% of the 1M model step
SEARCH_ROWS = 20_000
# each label-model fold learns from at most this many of its training rows (stratified) and
# still predicts every one of its held-out rows: each row's probability comes from a model that
# never saw it, as before
LABEL_FIT_ROWS = 50_000


def at_scale(n_rows: int) -> bool:
    """True above ``SCALE_ROWS`` rows: the sampled parts may be sampled."""
    return n_rows > SCALE_ROWS


def cap(n_rows: int, limit: int) -> int:
    """How many rows a sampled part uses: all at or below ``SCALE_ROWS``, else at most ``limit``."""
    return min(n_rows, limit) if at_scale(n_rows) else n_rows


def stratified_rows(positions: np.ndarray, labels: Any, size: int, random_state: int) -> np.ndarray:
    """``size`` of ``positions`` drawn without replacement, each class in its share (sorted);
    all of them when ``size`` is not smaller."""
    if size >= len(positions):
        return positions
    drawn = resample(positions, replace=False, n_samples=size, stratify=labels, random_state=random_state)
    return np.sort(drawn)


def sampled_sentence(part: str, used: int, of: int, unit: str = "rows") -> str:
    """'<part> from 20,000 of 267,000 rows (a sample: the table is large)'."""
    return f"{part} from {used:,} of {of:,} {unit} (a sample: the table has more than {SCALE_ROWS:,} rows)"
