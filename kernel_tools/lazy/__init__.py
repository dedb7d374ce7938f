"""Frames larger than memory: the same diagnosis and transforms on a lazy Dask DataFrame.

pandas stays the fast path: a public function of kernel_tools that accepts a frame checks
once, on entry, whether it was handed a lazy frame (:func:`is_lazy`, decorator
:func:`lazy_aware`) and only then comes here. What runs where (see docs/scale.md):

- relational work — column statistics, drops, de-duplication — is written once with narwhals
  expressions (:mod:`.frames`), which Dask runs partition by partition and which narwhals also
  maps to Spark, DuckDB or polars' lazy engine;
- what narwhals has no word for — applying a fitted scikit-learn transformer to every
  partition, hashing values, taking a sample into memory — is in :mod:`.engine`, the only
  module that imports Dask;
- model-based checks, rules learned from data and model fitting run on an in-memory sample
  that keeps whole entities, and say so.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from kernel_tools.lazy.engine import is_lazy


def lazy_aware(fitted: bool = False) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Route a transform called on a lazy frame to its lazy version (same name in
    :mod:`.transforms`, or :mod:`.labels` for the label step), or — ``fitted=True`` — fit it on a
    sample and apply its fitted transformer to every partition (:func:`.transforms.fitted_step`).
    pandas frames go straight through to the decorated function."""

    def wrap(function: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(function)
        def call(df: Any, *args: Any, **kwargs: Any) -> Any:
            if not is_lazy(df):
                return function(df, *args, **kwargs)
            from kernel_tools.lazy import labels, transforms

            if fitted:
                return transforms.fitted_step(function, df, *args, **kwargs)
            lazy = getattr(transforms, function.__name__, None) or getattr(labels, function.__name__)
            return lazy(df, *args, **kwargs)

        return call

    return wrap


__all__ = ["is_lazy", "lazy_aware"]
