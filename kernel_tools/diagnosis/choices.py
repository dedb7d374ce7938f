"""The value of the alternative chosen: a column that copies, row by row, another column picked
by the outcome.

Choice data lists every alternative's attributes (``pbeach``, ``ppier``, ``pboat`` for the price
of each fishing mode) next to the choice (``mode``), and often the chosen one's attribute too
(``price``: ``pbeach`` on beach trips, ``pboat`` on boat trips). That column is known only once
the choice is made; as a feature it tells the model which alternative won. The data shows it:
within each class of the outcome the column equals one of the other columns, and the column
it equals changes with the class.
"""

from __future__ import annotations

import numpy as np

from kernel_tools.diagnosis.columns import ColumnProfile, numeric_values
from kernel_tools.vocabulary import TaskKind

EQUAL_SHARE = 0.95  # rows of a class on which the column equals the alternative's
MIN_CLASS_ROWS = 10
MAX_COLUMNS = 200  # the test compares every pair of numeric columns within each class
MAX_CLASSES = 20
PROBE_ROWS = 64
MIN_DISTINCT = 5  # within each class: a column of zeros equals every other column of zeros
MAX_TOP_SHARE = 0.5


def _varied(x: np.ndarray) -> bool:
    counts = np.unique(x, return_counts=True)[1]
    return counts.size >= MIN_DISTINCT and counts.max() < MAX_TOP_SHARE * x.size


def chosen_alternative(frame, profiles: dict[str, ColumnProfile], outcome, features: list[str]) -> dict[str, dict]:
    """The features that copy the chosen alternative's column: for each, the column it equals
    in each class of the outcome (``{"beach": "pbeach", "boat": "pboat", ...}``)."""
    if outcome.kind != TaskKind.CLASSIFICATION or outcome.y is None or not 2 <= outcome.n_classes <= MAX_CLASSES:
        return {}
    numeric = [c for c in features if profiles[c].holds_numbers and profiles[c].nunique >= 10]
    if not 3 <= len(numeric) <= MAX_COLUMNS:
        return {}
    values = np.column_stack([numeric_values(frame[c], profiles[c]) for c in numeric])
    y = np.asarray(outcome.y)
    classes = [k for k in range(outcome.n_classes) if (y == k).sum() >= MIN_CLASS_ROWS]
    by_class = {k: values[y == k] for k in classes}
    found = {}
    for i, c in enumerate(numeric):
        shares = []  # per class: the share of its rows on which c equals each column
        for k in classes:
            rows = by_class[k]
            ok = np.isfinite(rows[:, i])
            if ok.sum() < MIN_CLASS_ROWS or not _varied(rows[ok, i]):
                break
            rows = rows[ok]
            # the first rows name the candidates (O(rows) per column, not O(rows x columns))
            head = np.isclose(rows[:PROBE_ROWS], rows[:PROBE_ROWS, i, None], rtol=1e-6, atol=1e-9).mean(axis=0)
            head[i] = 0.0
            same = np.zeros(len(numeric))
            for j in np.flatnonzero(head >= EQUAL_SHARE - 0.1):
                same[j] = np.isclose(rows[:, j], rows[:, i], rtol=1e-6, atol=1e-9).mean()
            if same.max() < EQUAL_SHARE:
                break
            shares.append(same)
        if len(shares) < len(classes):
            continue
        equal = np.array(shares) >= EQUAL_SHARE
        if equal.all(axis=0).any():
            continue  # a copy of one column in every class (two shore prices alike)
        picks = {str(outcome.classes[k]): numeric[int(np.argmax(row))] for k, row in zip(classes, shares)}
        if len(set(picks.values())) >= 2:
            found[c] = {"equals_by_class": picks}
    return found
