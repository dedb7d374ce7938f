"""Time-varying Cox: every record of an entity as a (start, stop] interval, scored honestly.

A cohort with repeated visits holds more than its baseline record: labs measured at each visit.
In the counting-process layout each record is an interval (start, stop] of the entity's
follow-up carrying the values measured at its start (``kt.to_intervals`` builds it from visit
records; R's ``survival::cgd`` and lifelines' Stanford heart transplants come that way). A
time-varying Cox model (lifelines ``CoxTimeVaryingFitter``) compares, at each event time, the
entity that had the event with those still at risk, each through the covariates in force then.

The C-index must make the same comparison, or it grades the model on values it never used.
**Time-dependent concordance**: for every interval ending in an event at time t (entity i), take
i's risk from that interval — the one with start < t <= stop, so its values were measured by t —
and compare it with the risk of every other entity still at risk at t, each from *its* interval
with start < t <= stop. A pair is concordant when i's risk is higher; equal risks count one half;
entities with an event at the same t are not compared (Harrell's rule for tied event times). With
one interval (0, T] per entity this is Harrell's C-index exactly (lifelines'
``concordance_index(T, -risk, E)``). It answers "at each moment, does the model rank whoever fails
next above those who do not", using only what was measured by then — a different question from
a prediction made once at enrolment, whose C-index ranks the whole follow-up from the baseline
record.
"""

from __future__ import annotations

import time as _time
import warnings as _warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from pandas.api import types as ptypes
from sklearn.base import BaseEstimator, RegressorMixin, clone
from sklearn.compose import ColumnTransformer
from sklearn.impute import SimpleImputer
from sklearn.inspection import permutation_importance
from sklearn.model_selection import GroupKFold
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder
from sklearn.utils.validation import check_is_fitted
from threadpoolctl import threadpool_limits

from kernel_tools.diagnosis.task import event_indicator
from kernel_tools.folds import StratifiedEntityKFold
from kernel_tools.models.evaluate import (
    CLEANING_FLAG_COLUMNS,
    DOMINANT_SHARE,
    LEAKAGE_THRESHOLD,
    MIN_EVENTS_PER_VARIABLE,
    flags_left_out,
    top_importance_share,
)
from kernel_tools.models.pipelines import FeatureFrame
from kernel_tools.models.report import ModelReport
from kernel_tools.models.uncertainty import bootstrap_interval, cv_interval, holdout_size, within_range
from kernel_tools.plurals import counted
from kernel_tools.vocabulary import TaskKind

MODEL_NAME = "Time-varying Cox (penalized)"
PENALIZER = 0.1
IMPORTANCE_ROWS = 2000  # held-out intervals permutation importance uses (whole entities)
IMPORTANCE_PREDICTIONS = 64  # features x repeats x models
IMPORTANCE_FOLDS = 3
QUERY_CELLS = 4_000_000  # events x rows of one block compared at once by the C-index


def time_dependent_concordance(start, stop, event, risk) -> float:
    """The time-dependent C-index of a risk per interval (see the module docstring); NaN when
    no pair is comparable.

    ``start``, ``stop``, ``event``: one entry per (start, stop] interval, ``event`` true on an
    interval that ends in the event; ``risk``: the model's risk from that interval's values
    (higher = sooner). Intervals of one entity must not overlap (each entity is then at risk
    through at most one interval at any time), which ``fit_evaluate_intervals`` checks.

    Counted without forming the pairs: the intervals in force at t with a lower risk are those
    started before t less those stopped before t, less those failing at t too; each count is a
    sum over blocks of sorted risks (about n * sqrt(n) steps: 2 s for 100,000 intervals and
    10,000 events on a busy 2-core machine, where comparing every pair took 25 s).
    """
    start = np.asarray(start, dtype=float)
    stop = np.asarray(stop, dtype=float)
    event = np.asarray(event, dtype=float) > 0
    risk = np.asarray(risk, dtype=float)
    if np.isnan(risk).any():
        raise ValueError("the risk has missing values: it cannot be ranked")
    dead = np.flatnonzero(event)
    if len(dead) == 0:
        return float("nan")
    rank = np.unique(risk, return_inverse=True)[1].ravel()  # equal risks, equal ranks
    t, r = stop[dead], rank[dead]
    begun = _below(start, rank, t, r)  # (lower risk, same risk, all) among rows started before t
    ended = _below(stop, rank, t, r)  # ...among rows stopped before t: no longer at risk
    failing = _failing_together(t, r)  # ...among rows failing at t too (itself included)
    lower, same, pairs = (float((b - e - f).sum()) for b, e, f in zip(begun, ended, failing))
    return (lower + 0.5 * same) / pairs if pairs else float("nan")


def _below(times: np.ndarray, rank: np.ndarray, t: np.ndarray, r: np.ndarray):
    """For each query (t, r): rows with time < t and rank < r, rank == r, and any rank."""
    order = np.argsort(times, kind="stable")
    times, rank = times[order], rank[order]
    n = len(times)
    before = np.searchsorted(times, t, side="left")  # rows with time < t: a prefix
    queries = np.argsort(before, kind="stable")  # queries by prefix: those past a block are a tail
    before, r = before[queries], r[queries]
    lower = np.zeros(len(t), dtype=np.int64)
    same = np.zeros(len(t), dtype=np.int64)
    size = max(16, int(np.sqrt(n)))
    for lo in range(0, n, size):  # whole blocks inside a query's prefix: binary search
        hi = min(n, lo + size)
        tail = int(np.searchsorted(before, hi, side="left"))
        if tail == len(before):
            break
        block = np.sort(rank[lo:hi])
        left = np.searchsorted(block, r[tail:], side="left")
        lower[tail:] += left
        same[tail:] += np.searchsorted(block, r[tail:], side="right") - left
    # the part of a block a prefix ends inside: compared row by row, a chunk of queries at a time
    covered = np.where(before >= n, n, before // size * size)  # a short last block was whole
    offsets = np.arange(size)
    step = max(1, QUERY_CELLS // size)
    for q in range(0, len(t), step):
        rows = covered[q:q + step, None] + offsets
        inside = rows < before[q:q + step, None]
        values = rank[np.minimum(rows, n - 1)]
        lower[q:q + step] += (inside & (values < r[q:q + step, None])).sum(axis=1)
        same[q:q + step] += (inside & (values == r[q:q + step, None])).sum(axis=1)
    out = [np.empty_like(lower) for _ in range(3)]
    for target, values in zip(out, (lower, same, before)):
        target[queries] = values
    return tuple(out)


def _failing_together(t: np.ndarray, r: np.ndarray):
    """For each event (t, r): events at the same time with rank < r, rank == r, and any rank."""
    when = np.unique(t, return_inverse=True)[1].ravel()
    width = int(r.max()) + 2
    keys = np.sort(when * width + r)
    first = np.searchsorted(keys, when * width, side="left")
    left = np.searchsorted(keys, when * width + r, side="left")
    right = np.searchsorted(keys, when * width + r, side="right")
    everyone = np.searchsorted(keys, (when + 1) * width, side="left")
    return left - first, right - left, everyone - first


def interval_target(start, stop, event) -> np.ndarray:
    """Stack start, stop and event into the ``(n, 3)`` target the interval model takes."""
    return np.column_stack([np.asarray(start, dtype=float), np.asarray(stop, dtype=float),
                            np.asarray(event, dtype=float)])


def _score(y: np.ndarray, risk: np.ndarray) -> float:
    return time_dependent_concordance(y[:, 0], y[:, 1], y[:, 2], risk)


class TimeVaryingCoxEstimator(RegressorMixin, BaseEstimator):
    """Penalised Cox model on (start, stop] intervals (lifelines ``CoxTimeVaryingFitter``).

    ``y`` is ``(n, 3)``: start, stop, event. ``predict`` returns the partial hazard (a relative
    risk) of each row's values; ``score`` is the time-dependent C-index. A covariate constant in
    the training rows carries no signal and would stop lifelines' scaling: its weight is 0. When
    the fit does not converge the penalty is raised tenfold once, recorded in ``penalizer_``.

    ``penalizer`` is lifelines' ridge penalty: ``n_rows * penalizer * sum(beta**2) / 2`` on
    standardised covariates, so it grows with the number of intervals, not of entities.
    """

    def __init__(self, penalizer: float = PENALIZER):
        self.penalizer = penalizer

    def fit(self, X, y) -> TimeVaryingCoxEstimator:
        from lifelines import CoxTimeVaryingFitter
        from lifelines.exceptions import ConvergenceError, ConvergenceWarning

        X = np.asarray(X, dtype=float)
        y = np.asarray(y, dtype=float)
        if y.ndim != 2 or y.shape[1] != 3:
            raise ValueError("interval y must be an (n, 3) array of [start, stop, event]")
        varying = np.ptp(X, axis=0) > 0 if len(X) else np.zeros(X.shape[1], dtype=bool)
        frame = pd.DataFrame(X[:, varying], columns=[f"x{i}" for i in range(int(varying.sum()))])
        frame["_start"], frame["_stop"], frame["_event"] = y[:, 0], y[:, 1], y[:, 2]
        penalizer = self.penalizer
        for attempt in range(2):
            model = CoxTimeVaryingFitter(penalizer=penalizer)
            try:
                with _warnings.catch_warnings(record=True) as caught:
                    _warnings.simplefilter("always")
                    model.fit(frame, event_col="_event", start_col="_start", stop_col="_stop")
                # lifelines only warns when Newton-Raphson stops without converging (it oscillated,
                # or the likelihood ran to 0 on separated data): the coefficients are then arbitrary
                failed = [str(w.message) for w in caught if issubclass(w.category, ConvergenceWarning)
                          and ("failed to converge" in str(w.message) or "suspiciously close to 0" in str(w.message))]
                if failed:
                    raise ConvergenceError(failed[0].strip())
                break
            except ConvergenceError:
                if attempt == 1:
                    raise
                penalizer *= 10
        self.model_ = model
        self.penalizer_ = penalizer
        self.coef_ = np.zeros(X.shape[1])
        self.coef_[varying] = model.params_.to_numpy()
        self.mean_ = X.mean(axis=0)  # lifelines centres covariates on the training means
        self.n_features_in_ = X.shape[1]
        return self

    def predict(self, X) -> np.ndarray:
        """Partial hazard exp((x - mean) . beta), as lifelines computes it, in plain numpy."""
        check_is_fitted(self, "coef_")
        X = np.asarray(X, dtype=float)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"expected {self.n_features_in_} features, got {X.shape[1]}")
        return np.exp((X - self.mean_) @ self.coef_)

    def score(self, X, y, sample_weight=None) -> float:
        return _score(np.asarray(y, dtype=float), self.predict(X))


def _encoder(n_numeric: int, n_categorical: int) -> ColumnTransformer:
    """Median-impute numbers (with missing-indicators), one-hot category codes; lifelines
    scales every covariate itself."""
    numeric = list(range(n_numeric))
    categorical = list(range(n_numeric, n_numeric + n_categorical))
    categories = Pipeline([
        ("impute", SimpleImputer(strategy="constant", fill_value=-1.0)),
        ("onehot", OneHotEncoder(handle_unknown="infrequent_if_exist", max_categories=20,
                                 min_frequency=5, sparse_output=False)),
    ])
    return ColumnTransformer([("num", SimpleImputer(strategy="median", add_indicator=True), numeric),
                              ("cat", categories, categorical)], remainder="drop")


def fit_evaluate_intervals(
    df: pd.DataFrame,
    id: str,
    start: str,
    stop: str,
    event: str,
    test: pd.DataFrame | None = None,
    cv: int = 5,
    preprocess: Sequence[Any] | None = None,
    random_state: int = 0,
) -> ModelReport:
    """Cross-validate a time-varying Cox model on (start, stop] intervals, refit it on all rows.

    ``df`` holds one row per interval: the entity ``id``, ``start`` < ``stop`` on one clock,
    ``event`` (0/1, bool, 1/2 or 0 = censored) true on an interval that ends in the event, and
    the covariates measured by ``start`` (every other column; dates and constant columns are
    left out). Folds keep every entity on one side (grouped, stratified by whether the entity
    had an event); each fold and the holdout ``test`` (intervals of other entities) are scored
    by the time-dependent C-index (module docstring). ``preprocess``: the fitted steps that
    produced ``df`` (StepReports or fitted transformers), prepended to ``report.pipeline``,
    which predicts the partial hazard of a frame of covariates. Intervals of one entity that
    overlap, or with start >= stop, raise ValueError: the risk sets would be wrong.
    """
    _check_arguments(df, id, start, stop, event, test, cv)
    pre_steps = _preprocess_steps(preprocess)
    with threadpool_limits(limits=1):  # one thread per fit: OpenMP spin-waiting slows a shared machine
        return _fit_evaluate(df, id, start, stop, event, test, cv, pre_steps, random_state)


def _fit_evaluate(df, id, start, stop, event, test, cv, pre_steps, random_state) -> ModelReport:
    began = _time.perf_counter()
    warnings: list[str] = []
    roles = [id, start, stop, event]
    train = _usable(df, roles, "df", warnings)
    y = _target(train, start, stop, event)
    flags = _cleaning_flags(train.columns, roles)
    if flags:
        warnings.append(flags_left_out(flags))
    numeric, categorical = _features(train, roles + flags, warnings)
    features = [*numeric, *categorical]
    events = int(y[:, 2].sum())
    if events == 0:
        raise ValueError("no interval ends in an event: the C-index is undefined")
    n_params = len(numeric) + sum(min(train[c].nunique(), 20) - 1 for c in categorical)
    if events / max(n_params, 1) < MIN_EVENTS_PER_VARIABLE:
        warnings.append(f"few events per variable: {events} events for about {n_params} model parameters "
                        f"(fewer than {MIN_EVENTS_PER_VARIABLE} each): expect overfitting")

    pipe = Pipeline([("features", FeatureFrame(numeric=numeric, categorical=categorical)),
                     ("encode", _encoder(len(numeric), len(categorical))),
                     ("model", TimeVaryingCoxEstimator())])
    X = train[features]
    folds = _folds(train[id].to_numpy(), y[:, 2], cv, random_state, warnings)
    scores: list[float] = []
    fold_models: list[tuple[Any, pd.DataFrame, np.ndarray, np.ndarray]] = []  # (fitted, X, y, ids) held out
    for fit_rows, val_rows in folds:
        fitted = _fit(pipe, X.iloc[fit_rows], y[fit_rows])
        scores.append(_score(y[val_rows], fitted.predict(X.iloc[val_rows])))
        if len(fold_models) < IMPORTANCE_FOLDS:
            fold_models.append((fitted, X.iloc[val_rows], y[val_rows], train[id].to_numpy()[val_rows]))
    model = _fit(pipe, X, y)
    cox = model[-1]
    if cox.penalizer_ > cox.penalizer:
        warnings.append(f"the Cox fit did not converge with penalty {cox.penalizer:g} and was refit with "
                        f"{cox.penalizer_:g}: its coefficients are shrunk more than usual")
    cv_score, cv_std = float(np.nanmean(scores)), float(np.nanstd(scores))
    metrics = {"cv_c_index": cv_score, "cv_c_index_std": cv_std, "cv_folds": float(len(folds)),
               "entities_train": float(train[id].nunique()), "events_train": float(events)}

    holdout_score, n_test, holdout_ci, held_out = None, 0, None, fold_models
    if test is not None:
        holdout_score, n_test, holdout_ci, held_out = _score_holdout(
            model, test, train, features, roles, metrics, warnings, random_state)
    estimate = cv_interval(scores, len(folds))
    if estimate is not None and (clipped := within_range(estimate[0], "c_index"))[1]:
        estimate = clipped[0], estimate[1]
        warnings.append(str(clipped[1]))
    importance = _importance(held_out, random_state)
    warnings += _leakage_warnings(cv_score, holdout_score, importance)
    metrics["fit_seconds"] = round(_time.perf_counter() - began, 3)

    pipeline = Pipeline([*pre_steps, *model.steps])
    if pre_steps:
        warnings += _smoke_test(pipeline, df.head(5))
    return ModelReport(
        task="survival", target=event, metric="c_index", cv_score=cv_score,
        cv_scores=[float(s) for s in scores], holdout_score=holdout_score, metrics=metrics,
        model_name=MODEL_NAME,
        candidates={MODEL_NAME: {"cv_mean": cv_score, "cv_std": cv_std, "cv_scores": [float(s) for s in scores]}},
        features=features, importance=importance, warnings=warnings, pipeline=pipeline, grouped=True,
        n_train=len(train), n_test=n_test, time=stop, groups=id, holdout_ci=holdout_ci, cv_sd=cv_std,
        cv_interval=estimate[0] if estimate else None, cv_se=estimate[1] if estimate else None,
    )


def _score_holdout(model, test, train, features, roles, metrics, warnings, random_state):
    """``(score, rows, 95% interval, held-out triples for importance)`` of the refit model on
    ``test``; the interval resamples whole entities."""
    id, start, stop, event = roles
    held = _usable(test, roles, "test", warnings)
    missing = [c for c in features if c not in held.columns]
    if missing:
        raise KeyError(f"test is missing feature columns the model uses: {missing}")
    shared = np.intersect1d(train[id].unique(), held[id].unique())
    if len(shared):
        warnings.append(f"{len(shared)} {id!r} entities are in both df and test: the holdout score "
                        "is not independent (split by entity)")
    y_test = _target(held, start, stop, event)
    pred = model.predict(held[features])
    score = _score(y_test, pred)
    metrics["holdout_c_index"] = score
    metrics["entities_test"] = float(held[id].nunique())
    metrics.update(holdout_size(TaskKind.SURVIVAL, y_test, held[id].to_numpy()))
    interval, _ = bootstrap_interval(lambda rows: _score(y_test[rows], pred[rows]), len(held),
                                     held[id].to_numpy(), random_state=random_state)
    return score, len(held), interval, [(model, held[features], y_test, held[id].to_numpy())]


# --- arguments and data ------------------------------------------------------------------------


def _check_arguments(df, id, start, stop, event, test, cv) -> None:
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"df must be a pandas DataFrame, got {type(df).__name__}")
    if not df.columns.is_unique:
        raise ValueError(f"df has repeated column names {df.columns[df.columns.duplicated()].unique().tolist()}; "
                         "make them unique first")
    roles = {"id": id, "start": start, "stop": stop, "event": event}
    for role, name in roles.items():
        if name not in df.columns:
            raise KeyError(f"{role} column {name!r} is not in df (columns: {list(df.columns)[:20]})")
    if len(set(roles.values())) < 4:
        raise ValueError("id, start, stop and event must be four different columns")
    if df[id].isna().any():
        raise ValueError(f"id column {id!r} has missing values; every interval needs an entity")
    if isinstance(cv, bool) or not isinstance(cv, (int, np.integer)) or cv < 2:
        raise ValueError(f"cv must be an integer >= 2 (number of folds), got {cv!r}")
    if test is not None:
        if not isinstance(test, pd.DataFrame):
            raise TypeError(f"test must be a pandas DataFrame, got {type(test).__name__}")
        absent = [c for c in roles.values() if c not in test.columns]
        if absent:
            raise KeyError(f"test has no column {absent[0]!r}")


def _preprocess_steps(preprocess) -> list[tuple[str, Any]]:
    """Fitted transformers from StepReports (``.transformer``) or given directly."""
    if preprocess is None:
        return []
    if isinstance(preprocess, (str, bytes)) or not isinstance(preprocess, Sequence):
        raise TypeError("preprocess must be a list of StepReports or fitted transformers")
    steps = []
    for i, item in enumerate(preprocess):
        transformer = getattr(item, "transformer", item)
        if transformer is None:  # a step with nothing to replay (e.g. the split)
            continue
        if not hasattr(transformer, "transform"):
            raise TypeError(f"preprocess[{i}] ({type(item).__name__}) is neither a StepReport with a "
                            "transformer nor a fitted transformer")
        steps.append((f"pre{i}_{type(transformer).__name__.lower()}", transformer))
    return steps


def _usable(frame: pd.DataFrame, roles: list[str], label: str, warnings: list[str]) -> pd.DataFrame:
    missing = frame[roles[1:]].isna().any(axis=1)
    if missing.any():
        n = int(missing.sum())
        warnings.append(f"{counted(n, 'row')} of {label} without {' / '.join(roles[1:])} {'was' if n == 1 else 'were'} "
                        "left out")
        frame = frame.loc[~missing.to_numpy()]
    if len(frame) == 0:
        raise ValueError(f"{label} has no interval with a known {' / '.join(roles[1:])}")
    id_column, start, stop, event = roles
    _check_intervals(frame, id_column, start, stop, event, label)
    return frame


def _check_intervals(frame, id, start, stop, event, label) -> None:
    for name in (start, stop):
        if not ptypes.is_numeric_dtype(frame[name]) or ptypes.is_bool_dtype(frame[name]):
            raise TypeError(f"{name!r} must hold numbers (times on one clock), got {frame[name].dtype}")
    empty = int((frame[start] >= frame[stop]).sum())
    if empty:
        raise ValueError(f"{counted(empty, 'interval')} of {label} {'has' if empty == 1 else 'have'} {start!r} >= "
                         f"{stop!r}: an interval must span time")
    order = frame[[id, start, stop]].sort_values([id, start], kind="stable")
    previous_stop = order.groupby(id, sort=False)[stop].shift()
    overlap = int((order[start] < previous_stop).sum())
    repeats = int(order.duplicated([id, start, stop]).sum())
    if overlap and repeats == overlap:
        raise ValueError(f"{counted(repeats, 'interval')} of {label} repeat{'s' if repeats == 1 else ''} an earlier "
                         f"interval of {'its' if repeats == 1 else 'their'} {id!r} exactly (the same {start!r} and "
                         f"{stop!r}: several events at one time): intervals of one entity must not overlap")
    if overlap:
        raise ValueError(f"{counted(overlap, 'interval')} of {label} start{'s' if overlap == 1 else ''} before the "
                         f"previous interval of {'its' if overlap == 1 else 'their'} "
                         f"{id!r} stops: intervals of one entity must not overlap")


def _target(frame, start, stop, event) -> np.ndarray:
    read: tuple[np.ndarray, list | None] | None = event_indicator(frame[event])
    if read is None and frame[event].nunique() == 1 and ptypes.is_numeric_dtype(frame[event]):
        read = ((frame[event] > 0).to_numpy(dtype=float), None)  # every interval censored, or all events
    if read is None:
        raise ValueError(f"event column {event!r} must say whether the interval ends in the event (0/1, "
                         f"bool, 1/2, or 0 = censored), got values {pd.unique(frame[event])[:6].tolist()}")
    return interval_target(frame[start], frame[stop], read[0])


def _cleaning_flags(columns, roles) -> list:
    names = {p for p in CLEANING_FLAG_COLUMNS if "{column}" not in p}
    names |= {p.format(column=c) for p in CLEANING_FLAG_COLUMNS if "{column}" in p for c in columns}
    return [c for c in columns if c in names and c not in roles]


def _features(frame: pd.DataFrame, excluded: list, warnings: list[str]) -> tuple[list[str], list[str]]:
    numeric, categorical, left_out = [], [], []
    for name in frame.columns:
        if name in excluded:
            continue
        column = frame[name]
        if (ptypes.is_datetime64_any_dtype(column) or ptypes.is_timedelta64_dtype(column)
                or column.nunique(dropna=True) <= 1):
            left_out.append(name)
        elif ptypes.is_numeric_dtype(column) and not ptypes.is_complex_dtype(column):
            numeric.append(name)
        else:
            categorical.append(name)
    if left_out:
        warnings.append(f"date/time and constant columns {left_out} were left out of the features")
    if not numeric and not categorical:
        raise ValueError("no covariate columns left besides id, start, stop and event")
    return numeric, categorical


def _folds(ids: np.ndarray, event: np.ndarray, cv: int, random_state: int,
           warnings: list[str]) -> list[tuple[np.ndarray, np.ndarray]]:
    """Folds of whole entities, stratified by whether the entity had an event."""
    had_event = pd.Series(event, index=ids).groupby(level=0).transform("max").to_numpy()
    by_entity = pd.Series(event).groupby(ids).max()
    n_events, n_censored = int(by_entity.sum()), int((by_entity == 0).sum())
    n_splits = min(cv, n_events, n_events + n_censored)
    if n_splits < 2:
        raise ValueError(f"cannot cross-validate: {n_events} entities had the event (need at least 2)")
    if n_splits < cv:
        warnings.append(f"cv reduced from {cv} to {n_splits} folds: only {n_events} entities had the event")
    if n_censored >= n_splits:
        splitter = StratifiedEntityKFold(n_splits, shuffle=True, random_state=random_state)
        return list(splitter.split(np.zeros(len(ids)), had_event, ids))
    return list(GroupKFold(n_splits, shuffle=True, random_state=random_state).split(np.zeros(len(ids)), groups=ids))


def _fit(pipe: Pipeline, X: pd.DataFrame, y: np.ndarray) -> Pipeline:
    with _warnings.catch_warnings():
        _warnings.simplefilter("ignore")  # convergence and unknown-category chatter; the report says what matters
        return clone(pipe).fit(X, y)


# --- what the model relies on -------------------------------------------------------------------


class _Concordance:
    """scorer(estimator, X, y) -> time-dependent C-index, for permutation importance."""

    def __call__(self, estimator, X, y) -> float:
        return _score(y, estimator.predict(X))


def _importance(held_out, random_state: int) -> list[dict[str, Any]]:
    """Permutation importance (drop in the time-dependent C-index) on held-out intervals,
    whole entities sampled up to ``IMPORTANCE_ROWS`` so the risk sets stay intact."""
    rng = np.random.default_rng(random_state)
    n_features = held_out[0][1].shape[1]
    n_repeats = int(np.clip(IMPORTANCE_PREDICTIONS // (n_features * len(held_out)), 1, 5))
    rows_each = max(IMPORTANCE_ROWS // len(held_out), 50)
    drops: list[np.ndarray] = []
    for model, X, y, ids in held_out:
        if len(X) > rows_each:
            entities = pd.unique(ids)
            keep = rng.permutation(entities)[: max(2, int(len(entities) * rows_each / len(X)))]
            rows = np.flatnonzero(np.isin(ids, keep))
            X, y = X.iloc[rows], y[rows]
        with _warnings.catch_warnings():
            _warnings.simplefilter("ignore")
            result = permutation_importance(model[1:], model[0].transform(X), y, scoring=_Concordance(),
                                            n_repeats=n_repeats, random_state=random_state, n_jobs=1)
        drops.append(result.importances)
    table = np.concatenate(drops, axis=1)
    mean, std = np.nanmean(table, axis=1), np.nanstd(table, axis=1)
    order = np.argsort(-np.nan_to_num(mean, nan=-np.inf))
    columns = held_out[0][1].columns
    return [{"feature": str(columns[i]), "importance": float(mean[i]), "std": float(std[i])} for i in order]


def _leakage_warnings(cv_score: float, holdout_score: float | None, importance) -> list[str]:
    top = importance[0] if importance else None
    out = []
    for where, score in (("cv", cv_score), ("holdout", holdout_score)):
        if score is None or np.isnan(score) or score <= LEAKAGE_THRESHOLD:
            continue
        if top is not None and top_importance_share(importance) < DOMINANT_SHARE:
            out.append(f"very high score spread over several features: {where} c_index {score:.3f}; check "
                       "that no covariate is recorded after its interval starts")
        else:
            out.append(f"suspect leakage: {where} c_index {score:.3f} > {LEAKAGE_THRESHOLD}"
                       + (f"; top feature {top['feature']!r} — check it is measured by its interval's "
                          "start, not after it" if top is not None else ""))
    return out


def _smoke_test(pipeline: Pipeline, raw_rows: pd.DataFrame) -> list[str]:
    """The assembled pipeline must run on rows shaped like the data before preprocessing."""
    try:
        with _warnings.catch_warnings():
            _warnings.simplefilter("ignore")
            pipeline.predict(raw_rows)
        return []
    except Exception as error:
        return ["the assembled pipeline (preprocess + model) did not run on rows of df; check it on raw "
                f"data before using it: {type(error).__name__}: {error}"]
