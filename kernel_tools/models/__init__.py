"""Valid models before good ones: the right task, the right metric, grouped splits, and
warnings when a score is too good to be true.

``fit_evaluate`` compares candidates by grouped cross-validation (a linear model and a searched
HistGradientBoosting; for survival penalised Cox, a Weibull AFT and gradient-boosted Cox) within
an optional time budget, refits the chosen one on all rows and returns a :class:`ModelReport`:
scores with a holdout interval, calibration, a model card, and a ``pipeline`` that runs on new
raw data. ``fit_evaluate_intervals`` fits a time-varying Cox model on (start, stop]
intervals and scores it with a time-dependent C-index.
"""


from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kernel_tools.models.evaluate import fit_evaluate
    from kernel_tools.models.report import ModelReport
    from kernel_tools.models.time_varying import fit_evaluate_intervals

__all__ = ["ModelReport", "fit_evaluate", "fit_evaluate_intervals"]
# imported on first use (PEP 562): the co-pilot's own process reads a few light submodules
# (stability, uncertainty) and would otherwise pay for pandas, scipy.stats and scikit-learn
_HOME = {"fit_evaluate": "evaluate", "ModelReport": "report", "fit_evaluate_intervals": "time_varying"}


def __getattr__(name: str) -> Any:
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_HOME[name]}"), name)
    globals()[name] = value
    return value
