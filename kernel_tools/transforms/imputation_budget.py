"""Model-based imputation within its time budget.

An iterative imputer costs rounds × columns × one model fit, and on a wide table with many
mostly-missing columns nothing looked at the clock: 8 min 43 s against a 3-minute budget (issue
26, item 8). Here, before the model runs, one timed fit of its column model gives a cheap
estimate, and the work is planned to fit the budget: fewer rounds first, then only the columns
with the fewest missing values (the imputer's own order) by the model, the rest by the training
median. Every column fit then checks the clock (:class:`Clocked`): a fit that would start past the
budget stops the model, and every column is filled by the median. Either way the step says so.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, RegressorMixin, clone

from kernel_tools.durations import minutes

# of the budget planned for the model; the rest is the encoding, the estimate itself, assembling
# the frame and replaying it on the test split
SHARE = 0.7
# an estimate from one fit is rough (the fits differ by rows observed, convergence, the machine's
# load): the plan assumes each fit takes this many times the measured one
SAFETY = 1.5
# a round of hyperimpute's loop (its model search, encoders, per-column bookkeeping, linear models)
# took about this many times a round of scikit-learn's iterative imputer (Bayesian ridge) on
# bench_budgets.py's wide table (2,000 x 96: 3 rounds 9.6 s against 10 rounds 16.2 s)
HYPERIMPUTE_FACTOR = 2.0


class OverBudget(Exception):
    """The imputer's clock ran out: raised by the next column fit."""


class Clock:
    """The deadline every column fit of one imputer checks, and how many fits it allowed.
    Shared by the clones scikit-learn makes of :class:`Clocked` (copied, it is the same clock)."""

    def __init__(self, deadline: float | None) -> None:
        self.deadline = deadline
        self.fits = 0

    def __deepcopy__(self, memo: dict) -> Clock:  # sklearn.clone deep-copies parameters
        return self

    def tick(self) -> None:
        if self.deadline is not None and time.perf_counter() > self.deadline:
            raise OverBudget
        self.fits += 1

    def __getstate__(self) -> dict:  # a replayed model never stops: no deadline is kept
        return {"deadline": None, "fits": self.fits}


class Clocked(RegressorMixin, BaseEstimator):
    """A column model that checks the imputer's :class:`Clock` before it fits."""

    def __init__(self, estimator: Any = None, clock: Clock | None = None) -> None:
        self.estimator = estimator
        self.clock = clock

    def fit(self, X: Any, y: Any, **kwargs: Any) -> Clocked:
        if self.clock is not None:
            self.clock.tick()
        self.estimator_ = clone(self.estimator).fit(X, y, **kwargs)
        return self

    def predict(self, X: Any, **kwargs: Any) -> Any:
        return self.estimator_.predict(X, **kwargs)


@dataclass
class Plan:
    """What the model imputes within the budget: ``model`` (encoded column keys, the
    imputer's order), ``simple`` (the keys left to the median), ``rounds`` (None: as set)."""

    model: list[str]
    simple: list[str] = field(default_factory=list)
    rounds: int | None = None
    estimate_s: float = 0.0  # the full imputation, as first asked
    planned_s: float = 0.0  # what is run


def column_fit_seconds(estimator: Any, enc: pd.DataFrame, keys: list[str]) -> tuple[float, int]:
    """Seconds of one fit of ``estimator`` for the missing column with the most observed values
    (the others median-filled as its features), and that column's observed rows."""
    key = max(keys, key=lambda k: int(enc[k].notna().sum()))
    seen = enc[key].notna().to_numpy()
    features = enc.drop(columns=[key]).fillna(enc.median()).fillna(0.0).to_numpy(float)[seen]
    values = enc[key].to_numpy(float)[seen]
    # a first fit on a few rows pays the first call's costs (lazy imports, solvers' set-up),
    # which would otherwise make the estimate of every later fit many times too long
    clone(estimator).fit(features[:50], values[:50])
    started = time.perf_counter()
    clone(estimator).fit(features, values)
    return time.perf_counter() - started, int(seen.sum())


def plan(enc: pd.DataFrame, keys: list[str], rounds: int, per_row_s: float, available_s: float) -> Plan:
    """The rounds and columns that fit ``available_s`` seconds, given a column fit's seconds per
    observed row (fits grow with the rows they learn from). A round fits a model for every
    column (scikit-learn's default: a column complete in training may have gaps in new data);
    when not even one round fits, only the missing columns ``keys`` the model reaches first are
    fitted (``Plan.simple`` is then not empty: the others are filled by the median)."""
    observed = enc.notna().sum()
    order = sorted(keys, key=lambda k: -int(observed[k]))  # fewest missing first, as the imputer goes
    one_fit = {k: SAFETY * per_row_s * max(int(observed[k]), 1) for k in enc.columns}
    per_round = sum(one_fit.values())
    full = rounds * per_round
    if full <= available_s:
        return Plan(order, rounds=None, estimate_s=full, planned_s=full)
    fit_rounds = int(available_s // per_round) if per_round > 0 else rounds
    if fit_rounds >= 1:
        return Plan(order, rounds=fit_rounds, estimate_s=full, planned_s=fit_rounds * per_round)
    kept, spent = [], 0.0
    for k in order:  # one round, the columns the model reaches first
        if spent + one_fit[k] > available_s:
            break
        kept.append(k)
        spent += one_fit[k]
    return Plan(kept, [k for k in order if k not in kept], rounds=1, estimate_s=full, planned_s=spent)


def planned_note(p: Plan, budget: float, rounds: int, names: dict[str, str]) -> str | None:
    """The sentence saying what the budget cut (None: nothing)."""
    if p.rounds is None:
        return None
    head = (f"the model-based imputer would take about {minutes(p.estimate_s)} against its "
            f"{minutes(budget)} budget")
    if not p.simple:
        return f"{head}: it ran {p.rounds} of {rounds} rounds"
    total = len(p.model) + len(p.simple)
    shown = ", ".join(repr(names[k]) for k in p.simple[:5]) + (" ..." if len(p.simple) > 5 else "")
    if not p.model:
        return f"{head}: every column was filled by its training median instead"
    return (f"{head}: it imputed {len(p.model)} of {total} columns (the fewest missing first) in one round; "
            f"the rest filled by median ({len(p.simple)}: {shown})")


def stopped_note(budget: float, clock: Clock, planned_fits: int) -> str:
    return (f"stopped the model-based imputer at its {minutes(budget)} budget after {clock.fits} of "
            f"{planned_fits} column fits; every column filled by its training median")


def deadline(started: float, budget: float | None) -> float | None:
    """When the model's fits must stop: the budget minus what assembling the frame needs."""
    return None if budget is None else started + 0.85 * budget


def rounds_needed(settings: dict[str, Any], hyper: bool) -> int:
    """The rounds the imputer is set to run (hyperimpute's ``n_inner_iter``, else ``max_iter``)."""
    rounds = settings.get("n_inner_iter" if hyper else "max_iter", 10 if not hyper else 3)
    value = int(rounds) if isinstance(rounds, (int, np.integer)) and not isinstance(rounds, bool) else 10
    return max(1, value)


def check_budget(budget: Any) -> float | None:
    """``budget`` as seconds (None: no limit); ValueError in words for anything else."""
    if budget is None:
        return None
    try:
        seconds = float(budget) if not isinstance(budget, bool) else math.nan
    except (TypeError, ValueError):
        seconds = math.nan
    if not math.isfinite(seconds) or seconds <= 0:
        raise ValueError(f"budget must be a positive number of seconds, not {budget!r}")
    return seconds
