"""Test helper: call a kernel_tools function and assert it left its input frame untouched."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pandas as pd


def run_pure(fn: Callable[..., Any], df: pd.DataFrame, *args: Any, **kwargs: Any) -> Any:
    """``fn(df, *args, **kwargs)``, failing the test if ``df`` was mutated."""
    before = df.copy(deep=True)
    result = fn(df, *args, **kwargs)
    pd.testing.assert_frame_equal(df, before)
    return result
