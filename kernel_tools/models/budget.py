"""A time budget for ``fit_evaluate``: what has been spent, what is left, and what was cut.

Fits cannot be interrupted safely, so the budget is kept by prediction: each phase measures
what it did (a fold's fit, a prediction) and the next phase only starts what it expects to
finish. What is cut is said in a sentence (``degraded``), never by failing.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from contextlib import contextmanager


class Clock:
    """Wall seconds since creation against an optional ``budget`` (None: unlimited)."""

    def __init__(self, budget: float | None):
        if budget is not None and (isinstance(budget, bool) or not isinstance(budget, (int, float))
                                   or not math.isfinite(budget) or budget <= 0):
            raise ValueError(f"budget must be a positive number of seconds or None, got {budget!r}")
        self.budget = None if budget is None else float(budget)
        self.started = time.perf_counter()
        self.degraded: list[str] = []
        self.timings: dict[str, float] = {}
        # seconds one cross-validation fit of the explainable model took: the unit the other
        # candidates' costs are estimated in (None until measured, and when unlimited)
        self.probe: float | None = None

    @property
    def limited(self) -> bool:
        return self.budget is not None

    def elapsed(self) -> float:
        return time.perf_counter() - self.started

    def remaining(self) -> float:
        return math.inf if self.budget is None else self.budget - self.elapsed()

    def until(self, share: float) -> float:
        """Seconds left before ``share`` of the whole budget is spent (inf when unlimited)."""
        return math.inf if self.budget is None else share * self.budget - self.elapsed()

    def fits(self, seconds: float, share: float = 1.0) -> bool:
        """Would work of ``seconds`` end before ``share`` of the budget is spent?"""
        return seconds <= self.until(share)

    def degrade(self, sentence: str) -> None:
        self.degraded.append(sentence)

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        """Add the wall time of the block to ``timings[name]``."""
        start = time.perf_counter()
        try:
            yield
        finally:
            self.timings[name] = round(self.timings.get(name, 0.0) + time.perf_counter() - start, 3)
