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
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

FAR_SPREADS = 10.0
MIN_GAP = 0.25  # in the metric's units (R², AUROC, C-index)
MIN_FOLDS = 3  # fewer fold scores cannot tell a broken fold from the rest


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
