"""Whether a cross-validated mean stands for the model's usual skill, or for one broken fold.

A mean over folds is dominated by a single fold that went wrong: one Ridge fold that met a
value typed x100 scored R² -937 while its 14 sibling folds scored 0.40-0.63, and the mean
(-62) described that fold, not the model. A fold is *broken* when it scores far below the
folds' median: more than ``FAR_SPREADS`` robust standard deviations (1.4826 x the median
absolute deviation, which the broken fold itself barely moves) and more than ``MIN_GAP`` in the
metric's units, so a tight set of folds with one merely weaker fold is not called broken.
Ten robust standard deviations is far beyond what fold-to-fold luck produces (Tukey's
"far out" fence sits near 4.7); the absolute floor keeps near-identical folds (a spread of
0.001) from making an ordinary dip look wild.

A regression fold's own R² is no fair witness on small data: it measures the fold's errors
against the variance of the fold's own few targets, and three trees of similar size have almost
none, so ordinary errors score R² -1.3 there (31 trees, 15 folds of 5-7 rows, a median fold of
0.91). :func:`shared_scale` measures every fold's errors against the variance of all the
cross-validated targets instead: a fold is then broken only when its *errors* are far larger
than its siblings' (the typo fold at R² -937 stays far out), and the folds' mean on that scale
is the R² of the pooled out-of-fold predictions, which says whether the model beats predicting
the mean at all.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

FAR_SPREADS = 10.0
MIN_GAP = 0.25  # in the metric's units (R², AUROC, C-index)
SHARED_LABEL = "r2 against the variance of every fold's targets"  # how :func:`shared_scale` scores are named
MIN_FOLDS = 3  # fewer fold scores cannot tell a broken fold from the rest


def shared_scale(fold_rmse: Sequence[float], y: np.ndarray) -> list[float]:
    """Each regression fold's R² against the variance of every cross-validated target
    (``1 - RMSE² / Var(y)``) rather than of its own rows'."""
    variance = float(np.nanvar(np.asarray(y, dtype=float)))
    if not variance > 0:
        return [float("nan")] * len(fold_rmse)
    return [1.0 - float(r) ** 2 / variance for r in fold_rmse]


def broken_folds(scores: Sequence[float], metric: str) -> str | None:
    """A sentence naming the folds that score far below the others (None: no such fold).

    Raises ValueError when fewer than ``MIN_FOLDS`` fold scores are finite: then nothing can be
    said either way."""
    values = np.asarray([s for s in scores if s is not None], dtype=float)
    values = values[np.isfinite(values)]
    if len(values) < MIN_FOLDS:
        raise ValueError(f"{len(values)} finite fold score(s): at least {MIN_FOLDS} are needed to tell a "
                         "broken fold from the rest")
    median = float(np.median(values))
    spread = 1.4826 * float(np.median(np.abs(values - median)))
    floor = median - max(FAR_SPREADS * spread, MIN_GAP)
    broken = np.sort(values[values < floor])
    if not len(broken):
        return None
    shown = ", ".join(f"{v:.3g}" for v in broken[:5]) + (" …" if len(broken) > 5 else "")
    return (f"{len(broken)} of {len(values)} folds score far below the others ({metric} {shown} against a "
            f"median fold of {median:.3f}, typical spread {spread:.3f}): the mean {float(values.mean()):.3f} "
            "describes those folds, not the model's usual skill; look in them for values far outside the "
            "training range (a unit or typing error) or a group the other folds lack")
