"""Is a target a set of classes? Shared by split and label-issue detection."""

from __future__ import annotations

import numpy as np
import pandas as pd

MAX_CLASSES = 20


def is_classification(y: pd.Series) -> bool:
    """Text, boolean, or few integer values -> classes; many or fractional numbers -> regression."""
    y = y.dropna()
    if not pd.api.types.is_numeric_dtype(y) or pd.api.types.is_bool_dtype(y):
        return True
    values = y.to_numpy(dtype=float)
    return bool(np.all(np.mod(values, 1) == 0) and y.nunique() <= MAX_CLASSES)
