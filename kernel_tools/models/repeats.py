"""How often cross-validation is repeated, and the sentence that says which estimate it is and why.

On a small cohort one partition into folds is luck too: the same model scored 0.56 to 0.64 over
partitions of the shipped demo's 345 training subjects. Below ``REPEAT_BELOW_UNITS`` entities
(rows when there is no entity), or for survival below ``REPEAT_BELOW_EVENTS`` events, the estimate
is the mean over ``REPEATS`` random partitions (each grouped by the entity and stratified as the
single one is), with the corrected interval of :func:`~kernel_tools.models.uncertainty.cv_interval`.
Above them one partition's folds are large enough that repeating costs more than it tells.

Partitions past the third are made only while they still tell something (:func:`settled`): the
interval's width is mostly the folds' shared training rows (the corrected variance is
``(1/J + 1/(k-1)) s²``: 25 fold scores instead of 15 narrow it by ~4%), and what more partitions
take away is the luck of the partition in the mean. Once the partitions' means agree to within a
quarter of the interval's half-width, a fourth and fifth (each ``k`` more fits of the chosen
model: at 1,000 rows half of the survival model step) would move the mean by less than that.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from kernel_tools.vocabulary import TaskKind

REPEATS = 5
REPEAT_BELOW_UNITS = 1000
REPEAT_BELOW_EVENTS = 100
MIN_REPEATS = 3  # partitions always made when repeating: two means say little about their spread
SETTLED_SHARE = 0.25  # the partitions' standard error, against the interval's half-width


def planned_repeats(task: str, y: np.ndarray, group_values: np.ndarray | None,
                    requested: int | None) -> tuple[int, str]:
    """``(repeats, why)``: ``requested`` when given, else ``REPEATS`` on small data and 1 otherwise."""
    if requested is not None:
        return requested, "as asked" if requested > 1 else "one partition, as asked"
    units = int(pd.Series(group_values).nunique()) if group_values is not None else len(y)
    unit = "entities" if group_values is not None else "rows"
    small = []
    if units < REPEAT_BELOW_UNITS:
        small.append(f"{units:,} {unit}, fewer than {REPEAT_BELOW_UNITS:,}")
    if task == TaskKind.SURVIVAL:
        events = int(np.asarray(y)[:, 1].sum())
        if events < REPEAT_BELOW_EVENTS:
            small.append(f"{events:,} events, fewer than {REPEAT_BELOW_EVENTS}")
    if small:
        return REPEATS, ("repeated because one partition of small data is luck too (" + "; ".join(small) + ")")
    return 1, f"one partition: {units:,} {unit} make folds large enough"


def settled(partition_means: list[float], half_width: float | None) -> str | None:
    """Why no further partition is needed, or None: at least :data:`MIN_REPEATS` partitions
    whose means have a standard error at most :data:`SETTLED_SHARE` of the interval's half-width."""
    means = np.asarray(partition_means, dtype=float)
    if len(means) < MIN_REPEATS or half_width is None or not np.isfinite(means).all():
        return None
    se = float(means.std(ddof=1) / np.sqrt(len(means)))
    if se > SETTLED_SHARE * half_width:
        return None
    return (f"{len(means)} partitions sufficed: their means agree within {se:.3f} (standard error), "
            f"under a quarter of the interval's half-width {half_width:.3f}")


def estimate_sentence(task: str, metric: str, score: float, interval: list[float] | None, folds: int,
                      repeats: int, grouped: bool, why: str) -> str:
    """Which estimate the score is, with its interval, and why it was made that way."""
    scheme = f"{repeats} × {folds}-fold" if repeats > 1 else f"{folds}-fold"
    how = [w for w, on in (("grouped by the entity", grouped),
                           ("stratified by class", task == TaskKind.CLASSIFICATION),
                           ("stratified by event", task == TaskKind.SURVIVAL)) if on]
    shown = f"{metric} {score:.3f}" + (f" [95% interval {interval[0]:.3f}–{interval[1]:.3f}]" if interval else "")
    return f"{shown} from {scheme} cross-validation{' (' + ', '.join(how) + ')' if how else ''}; {why}"
