"""Valid models before good ones: the right task, the right metric, grouped splits, and
warnings when a score is too good to be true.

``fit_evaluate`` compares candidates by grouped cross-validation (a linear model and a searched
HistGradientBoosting; for survival penalised Cox, a Weibull AFT and gradient-boosted Cox) within
an optional time budget, refits the chosen one on all rows and returns a :class:`ModelReport`:
scores with a holdout interval, calibration, a model card, and a ``pipeline`` that runs on new
raw data.
"""

from kernel_tools.models.evaluate import fit_evaluate
from kernel_tools.models.report import ModelReport

__all__ = ["ModelReport", "fit_evaluate"]
