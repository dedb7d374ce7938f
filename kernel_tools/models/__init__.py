"""Valid models before good ones: the right task, the right metric, grouped splits, and
warnings when a score is too good to be true.

``fit_evaluate`` cross-validates a gradient-boosting model against a linear baseline (Cox for
survival), refits the better one on all rows and returns a :class:`ModelReport` whose
``pipeline`` runs on new raw data.
"""

from kernel_tools.models.evaluate import fit_evaluate
from kernel_tools.models.report import ModelReport

__all__ = ["ModelReport", "fit_evaluate"]
