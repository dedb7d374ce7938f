"""What each answer to a decision would do to the model, measured before anyone answers.

For every option of a gate (drop or keep a column, which visit per patient, clip or remove
outliers, ...), :func:`option_impacts` applies the option's ``kernel_tools`` call to a sample of
the data, refits a model several times on bootstrap perturbations of that sample and scores it
on the entities each perturbation left out (grouped: an entity never sits on both sides). The
spread of those scores says how much of a difference between two options is noise — the
"stability" idea of PCS (predictability, computability, stability).

What it costs is kept to seconds at 10k rows: the option is applied once to the sample (not
inside every perturbation), and the model is a smaller gradient boosting than
:func:`kernel_tools.fit_evaluate` cross-validates (:data:`MODEL_SETTINGS`). Rows an option
removes or relabels are removed or relabelled on the training side only; the held-out side keeps
every row (replayed through the option's fitted step when it has one), as the test split would.
All options share the same perturbations, so their differences are not differences in luck.

:class:`ImpactJob` runs it in a background thread of the kernel (a probe starts it, later probes
read what is done, a flag cancels it between fits), so the user's cells are never blocked.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Mapping, Sequence
from time import perf_counter
from typing import Any

import numpy as np
import pandas as pd

# imported before any thread limit: a library that loads OpenMP inside one is not limited
from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor

from kernel_tools.background import in_the_background, one_openmp_thread
from kernel_tools.vocabulary import METRIC as METRICS
from kernel_tools.vocabulary import TaskKind

SAMPLE_ROWS = 20_000
PERTURBATIONS = 5
TOP_FEATURES = 5
IMPORTANCE_ROWS = 1000
SUSPECT_SCORE = 0.98  # an AUROC / C-index this high is more often leakage than skill
# gradient boosting, smaller than fit_evaluate's default (100 rounds, 31 leaves): one fit per
# perturbation and option must take a fraction of a second at 10k rows on one core
MODEL_SETTINGS = {"max_iter": 40, "learning_rate": 0.15, "max_leaf_nodes": 15, "early_stopping": False}
# calls an option may make: each returns (frame, StepReport) and never mutates its input
TRANSFORMS = ("drop_columns", "drop_rows", "aggregate_per_entity", "deduplicate", "fix_dtypes", "normalize_categories",
              "convert_units", "impute", "handle_outliers", "handle_label_issues")
# options whose call the estimate does not refit, and why, in words
NOT_ESTIMATED = {"to_intervals": "not estimated: (start, stop] intervals need the time-varying model, which "
                                 "this quick refit does not fit; the verdict judges this choice after the run"}
CLEANING_FLAGS = ("label_issue", "outlier")  # columns cleaning steps add: notes, never features
BASELINE_HOWS = ("baseline", "first")


class ImpactCancelled(RuntimeError):
    """The estimate was cancelled (the expert answered, or asked it to stop)."""


def sample_frame(df: pd.DataFrame, groups: str | None = None, max_rows: int = SAMPLE_ROWS,
                 random_state: int = 0) -> pd.DataFrame:
    """At most ``max_rows`` rows of ``df`` (whole entities when ``groups`` is given), as a new
    frame with a fresh 0..n-1 index; ``df`` is returned whole, re-indexed, when it is small."""
    n = len(df)
    if n <= max_rows:
        return df.reset_index(drop=True)
    rng = np.random.default_rng(random_state)
    if groups is None or groups not in df.columns:
        keep = np.sort(rng.choice(n, size=max_rows, replace=False))
    else:
        codes, uniques = pd.factorize(df[groups])
        sizes = np.bincount(codes[codes >= 0], minlength=len(uniques))
        order = rng.permutation(len(uniques))
        chosen = order[: max(int(np.searchsorted(np.cumsum(sizes[order]), max_rows)), 1)]
        keep = np.flatnonzero(np.isin(codes, chosen))
    return df.iloc[keep].reset_index(drop=True)


def option_impacts(
    df: pd.DataFrame,
    options: Sequence[Mapping[str, Any]],
    *,
    target: str,
    task: str,
    time: str | None = None,
    groups: str | None = None,
    stage: str = "pre_split",
    flagged: Mapping[str, Sequence[str]] | None = None,
    index: str | None = None,
    perturbations: int = PERTURBATIONS,
    sample_rows: int = SAMPLE_ROWS,
    random_state: int = 0,
    cancel: Callable[[], bool] | None = None,
    on_option: Callable[[str, dict[str, Any]], None] | None = None,
) -> dict[str, dict[str, Any]]:
    """The impact of each option on a refit model, by option id.

    ``options``: ``[{"id": ..., "action": {"function": ..., "params": {...}} | None}]`` as a
    finding offers them (``None``: leave the data as it is). ``stage``: ``"pre_split"`` for
    options that change the whole frame before any split (leakage, aggregation, row removal),
    ``"post_split"`` for steps learned on the training rows (imputation, outliers, label
    issues). ``flagged``: columns the diagnosis flagged — ``timed`` (recorded after the
    prediction time), ``leakage``, ``identifiers``, ``time_varying`` — and ``index`` the kind
    of prediction time (``"entity_start"``, ``"row"``, ...), for the validity flags.

    Each impact: ``metric``, ``mean`` and ``sd`` of the score over the perturbations, ``rows``
    and ``columns`` the option keeps, ``top_features`` (permutation importance, first
    perturbation), ``flags`` (what would make a model on this option not valid), ``scores``;
    an option that cannot be applied or fitted has ``mean`` None and says why in ``error``.
    ``cancel()`` is asked before every fit (True raises :class:`ImpactCancelled`);
    ``on_option(id, impact)`` hears each option as soon as it is done.
    """
    if task not in METRICS:
        raise ValueError(f"task must be one of {[str(t) for t in METRICS]}, not {task!r}")
    if stage not in ("pre_split", "post_split"):
        raise ValueError(f"stage must be 'pre_split' or 'post_split', not {stage!r}")
    if target not in df.columns:
        raise KeyError(f"target {target!r} is not a column of the frame")
    if perturbations < 2:
        raise ValueError("at least 2 perturbations are needed to measure a spread")
    check = cancel or (lambda: False)
    groups = entity_column(df, options, groups)
    sample = sample_frame(df, groups, sample_rows, random_state)
    units = _units(sample, groups)
    universe = pd.unique(units)
    rng = np.random.default_rng(random_state)
    # the same draws for every option: differences between options are not differences in luck
    draws = [rng.integers(0, len(universe), size=len(universe)) for _ in range(perturbations)]
    counts = [pd.Series(np.bincount(d, minlength=len(universe)), index=universe) for d in draws]
    results: dict[str, dict[str, Any]] = {}
    for option in options:
        option_id = str(option.get("id"))
        started = perf_counter()
        try:
            # one thread: on a small shared machine OpenMP spin-waiting made fits and predictions
            # several times slower (and the user's own work has the other core)
            with one_openmp_thread():
                impact = _one_option(sample, units, counts, option.get("action"), target=target,
                                     task=task, time=time, groups=groups, stage=stage,
                                     flagged=flagged or {}, index=index, random_state=random_state,
                                     cancel=check)
        except ImpactCancelled:
            raise
        except Exception as error:  # one option that cannot run must not hide the others
            impact = {"metric": METRICS[TaskKind(task)], "mean": None, "sd": None, "rows": None, "columns": None,
                      "top_features": [], "flags": [], "scores": [], "error": in_words(error)}
        impact["elapsed_s"] = round(perf_counter() - started, 3)
        impact["sample_rows"] = len(sample)
        results[option_id] = impact
        if on_option is not None:
            on_option(option_id, impact)
    return results


def entity_column(df: pd.DataFrame, options: Sequence[Mapping[str, Any]], groups: str | None) -> str | None:
    """The column perturbations resample whole: ``groups``, else the entity an option aggregates by."""
    if groups is not None:
        return groups
    return next((o["action"]["params"]["id"] for o in options
                 if (o.get("action") or {}).get("function") == "aggregate_per_entity"
                 and (o["action"].get("params") or {}).get("id") in df.columns), None)


# -- one option ------------------------------------------------------------------------------
def _units(frame: pd.DataFrame, groups: str | None) -> pd.Series:
    """What a perturbation resamples: the entity of each row, else the row itself."""
    if groups is not None and groups in frame.columns:
        return frame[groups]
    return pd.Series(frame.index, index=frame.index)


def _apply(action: Mapping[str, Any] | None, frame: pd.DataFrame) -> tuple[pd.DataFrame, Any]:
    if not action or not action.get("function"):
        return frame, None
    function = action["function"]
    if function not in TRANSFORMS:
        raise NotEstimated(NOT_ESTIMATED.get(function, f"the estimate does not refit '{function}' (it refits "
                                                       "the data transforms only)"))
    import kernel_tools

    return getattr(kernel_tools, function)(frame, **dict(action.get("params") or {}))


def _one_option(sample, units, counts, action, *, target, task, time, groups, stage, flagged, index,
                random_state, cancel) -> dict[str, Any]:
    out, report = _apply(action, sample)
    if target not in out.columns:
        raise ValueError(f"the option removes the target {target!r}")
    out_units = _units(out, groups) if groups in out.columns else units.reindex(out.index)
    replay = getattr(report, "transformer", None) is not None and stage == "post_split"
    roles = {target, time, groups}
    features = _features(out, roles)
    if not features:
        raise ValueError("no feature columns are left")
    scores: list[float] = []
    top: list[str] = []
    for b, drawn in enumerate(counts):
        if cancel():
            raise ImpactCancelled("cancelled")
        times = drawn.reindex(out_units.to_numpy()).fillna(0).to_numpy(dtype=int)
        train = out.iloc[np.repeat(np.arange(len(out)), times)]
        if stage == "pre_split":
            held = out[times == 0]
        else:  # the held-out side keeps every row, replayed through the fitted step if it has one
            rows = sample[(drawn.reindex(units.to_numpy()).fillna(0).to_numpy() == 0)]
            held = report.apply(rows) if replay else rows
        score, model = _fit_score(train, held, features, target, task, time, random_state + b)
        if score is not None:
            scores.append(score)
        if b == 0 and model is not None:
            top = _top_features(model, held, features, target, task, time, random_state)
    mean = float(np.mean(scores)) if scores else None
    sd = float(np.std(scores, ddof=1)) if len(scores) > 1 else None
    metric = METRICS[task]
    kept = [c for c in out.columns]
    return {"metric": metric, "mean": _round(mean), "sd": _round(sd), "rows": int(len(out)),
            "columns": int(out.shape[1]), "top_features": top,
            "flags": _flags(kept, features, action, flagged, index, metric, mean,
                            one_row_each=groups is not None and groups in out.columns and out[groups].is_unique),
            "scores": [_round(s) for s in scores]}


def _round(value: float | None) -> float | None:
    return None if value is None or not np.isfinite(value) else round(float(value), 6)


def _features(frame: pd.DataFrame, roles: set) -> list[str]:
    """Feature columns as a model would take them: not a role, not a cleaning flag, not a date,
    not constant."""
    flags = set(CLEANING_FLAGS) | {f"{c}_outlier" for c in frame.columns}
    out = []
    for name in frame.columns:
        if name in roles or name in flags:
            continue
        column = frame[name]
        if pd.api.types.is_datetime64_any_dtype(column) or pd.api.types.is_timedelta64_dtype(column):
            continue
        if column.nunique(dropna=True) <= 1:
            continue
        out.append(name)
    return out


def _split_types(frame: pd.DataFrame, features: list[str]) -> tuple[list[str], list[str]]:
    numeric = [c for c in features if pd.api.types.is_numeric_dtype(frame[c]) or pd.api.types.is_bool_dtype(frame[c])]
    return numeric, [c for c in features if c not in numeric]


def _target(frame: pd.DataFrame, target: str, task: str, time: str | None) -> tuple[np.ndarray, np.ndarray]:
    """The target as the model takes it, and which rows have one."""
    if task == TaskKind.SURVIVAL:
        from kernel_tools.diagnosis.task import event_indicator
        from kernel_tools.models.survival import survival_target

        read = event_indicator(frame[target])
        if read is None:
            raise ValueError(f"{target!r} cannot be read as an event indicator")
        event = read[0]
        duration = pd.to_numeric(frame[time], errors="coerce").to_numpy(dtype=float)
        known = ~np.isnan(event) & ~np.isnan(duration)
        return survival_target(duration, event), known
    y = frame[target].to_numpy()
    return y, frame[target].notna().to_numpy()


def _model(task: str, numeric: list[str], categorical: list[str], y: np.ndarray, random_state: int) -> Any:
    from sklearn.pipeline import Pipeline

    from kernel_tools.models.pipelines import FeatureFrame

    features = FeatureFrame(numeric=numeric, categorical=categorical)
    if task == TaskKind.SURVIVAL:
        from sklearn.impute import SimpleImputer
        from sklearn.preprocessing import StandardScaler

        from kernel_tools.models.survival import CoxPHEstimator

        return Pipeline([("features", features), ("impute", SimpleImputer(strategy="median")),
                         ("scale", StandardScaler()), ("model", CoxPHEstimator(penalizer=0.1))])
    mask = [False] * len(numeric) + [True] * len(categorical)
    categorical_mask = mask if any(mask) else None
    if task == TaskKind.CLASSIFICATION:
        counts = pd.Series(y).value_counts()
        weight = "balanced" if len(counts) and counts.min() / counts.max() < 0.5 else None
        model = HistGradientBoostingClassifier(categorical_features=categorical_mask, class_weight=weight,
                                               random_state=random_state, **MODEL_SETTINGS)
    else:
        model = HistGradientBoostingRegressor(categorical_features=categorical_mask,
                                              random_state=random_state, **MODEL_SETTINGS)
    return Pipeline([("features", features), ("model", model)])


def _score(model: Any, X: pd.DataFrame, y: np.ndarray, task: str) -> float | None:
    from sklearn.metrics import r2_score, roc_auc_score

    if task == TaskKind.SURVIVAL:
        from kernel_tools.models.survival import concordance

        return concordance(y, model.predict(X)) if y[:, 1].sum() > 0 else None
    if task == TaskKind.REGRESSION:
        return float(r2_score(y, model.predict(X))) if len(np.unique(y)) > 1 else None
    classes = model.classes_
    present = np.unique(y)
    if len(present) < 2 or not set(present) <= set(classes):
        return None  # a held-out side with one class (or an unseen one) scores nothing
    proba = model.predict_proba(X)
    if len(classes) == 2:
        return float(roc_auc_score(y == classes[1], proba[:, 1]))
    return float(roc_auc_score(y, proba, multi_class="ovr", average="macro", labels=classes))


def _fit_score(train, held, features, target, task, time, random_state) -> tuple[float | None, Any]:
    y_train, known = _target(train, target, task, time)
    train, y_train = train[known], y_train[known]
    y_held, known_held = _target(held, target, task, time)
    held, y_held = held[known_held], y_held[known_held]
    if len(train) < 10 or len(held) < 5:
        return None, None
    if task == TaskKind.CLASSIFICATION and len(pd.unique(y_train)) < 2:
        return None, None
    numeric, categorical = _split_types(train, features)
    model = _model(task, numeric, categorical, y_train, random_state)
    model.fit(train[features], y_train)
    return _score(model, held[features], y_held, task), model


def _top_features(model, held, features, target, task, time, random_state) -> list[str]:
    """The features whose shuffling costs the score most (one repeat, at most 1000 rows)."""
    y, known = _target(held, target, task, time)
    held, y = held[known], y[known]
    if len(held) > IMPORTANCE_ROWS:
        pick = np.random.default_rng(random_state).choice(len(held), IMPORTANCE_ROWS, replace=False)
        held, y = held.iloc[pick], y[pick]
    base = _score(model, held[features], y, task)
    if base is None:
        return []
    rng = np.random.default_rng(random_state)
    losses = {}
    X = held[features]
    for name in features:
        shuffled = X.copy()
        shuffled[name] = X[name].to_numpy()[rng.permutation(len(X))]
        score = _score(model, shuffled, y, task)
        if score is not None:
            losses[name] = base - score
    ranked = sorted((k for k, v in losses.items() if v > 0), key=lambda k: -losses[k])
    return [str(k) for k in ranked[:TOP_FEATURES]]


def _flags(kept: list[str], features: list[str], action: Mapping[str, Any] | None,
           flagged: Mapping[str, Sequence[str]], index: str | None, metric: str,
           mean: float | None, one_row_each: bool = False) -> list[str]:
    """What would make a model on this option not valid, in words; ``one_row_each``: the frame
    as the option leaves it has one row per entity (its records were aggregated already)."""
    out = []

    def named(columns: list[str]) -> str:
        return ", ".join(f"'{c}'" for c in columns[:5]) + (f" and {len(columns) - 5} more" if len(columns) > 5 else "")

    timed = [c for c in flagged.get("timed", []) if c in features]
    if timed:
        out.append(f"uses follow-up data: {named(timed)} (recorded after the prediction time)")
    leak = [c for c in flagged.get("leakage", []) if c in features]
    if leak:
        out.append(f"uses a column flagged as giving the outcome away: {named(leak)}")
    ids = [c for c in flagged.get("identifiers", []) if c in features]
    if ids:
        out.append(f"uses an identifier: {named(ids)}")
    params = dict((action or {}).get("params") or {})
    if index == "entity_start" and flagged.get("time_varying"):
        function = (action or {}).get("function")
        if function == "aggregate_per_entity":
            how = params.get("how")
            if params.get("landmark") is None and how not in BASELINE_HOWS:
                out.append(f"features take the '{how}' of every record: measured after the prediction time")
        elif function is None and not one_row_each and any(c in kept for c in flagged.get("time_varying", [])):
            out.append("every record is a training row: later records know more than the prediction time")
    if mean is not None and metric in ("roc_auc", "c_index") and mean >= SUSPECT_SCORE:
        out.append(f"a score of {mean:.3f} is too good to be true")
    return out


# -- in the background ------------------------------------------------------------------------
class NotEstimated(ValueError):
    """An option the estimate cannot refit; its message says why, in words."""


def in_words(error: BaseException) -> str:
    """Why an option (or the job) could not be estimated, as a sentence: never "ValueError: ..."."""
    message = " ".join(str(error).split())
    if isinstance(error, NotEstimated):
        return message[:300]
    if isinstance(error, KeyError):
        return f"could not be estimated: {message} was not found"[:300]
    kind = re.sub(r"(?<!^)(?=[A-Z])", " ", type(error).__name__).lower()
    return (f"could not be estimated: {message}" if message else f"could not be estimated ({kind})")[:300]


class ImpactJob:
    """:func:`option_impacts` in a daemon thread; :meth:`state` reads what is done so far.

    The sample is taken when the job is made, in the caller's thread: the thread then works on
    its own copy, whatever the user does with the frame meanwhile.
    """

    def __init__(self, df: pd.DataFrame, options: Sequence[Mapping[str, Any]], **kwargs: Any) -> None:
        kwargs["groups"] = entity_column(df, options, kwargs.get("groups"))
        self.sample = sample_frame(df, kwargs["groups"], kwargs.pop("sample_rows", SAMPLE_ROWS),
                                   kwargs.get("random_state", 0))
        self.options = [dict(o) for o in options]
        self.kwargs = kwargs
        self.results: dict[str, dict[str, Any]] = {}
        self.status = "running"
        self.error: str | None = None
        self.started = perf_counter()
        self.elapsed: float | None = None
        self._cancel = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name="kernel-tools-impact", daemon=True)

    def start(self) -> ImpactJob:
        self._thread.start()
        return self

    def cancel(self) -> None:
        self._cancel.set()

    def wait(self, timeout: float | None = None) -> bool:
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def state(self) -> dict[str, Any]:
        with self._lock:
            return {"status": self.status, "results": dict(self.results), "error": self.error,
                    "sample_rows": len(self.sample), "options": len(self.options),
                    "elapsed_s": round(self.elapsed if self.elapsed is not None
                                       else perf_counter() - self.started, 3)}

    def _heard(self, option_id: str, impact: dict[str, Any]) -> None:
        with self._lock:
            self.results[option_id] = impact

    def _run(self) -> None:
        # below the user's cells and the running step: they keep the cores (kernel_tools.background)
        try:
            with in_the_background():
                option_impacts(self.sample, self.options, sample_rows=len(self.sample) or 1,
                               cancel=self._cancel.is_set, on_option=self._heard, **self.kwargs)
            status, error = "done", None
        except ImpactCancelled:
            status, error = "cancelled", None
        except Exception as exc:  # the poll says what went wrong; nothing is printed in the kernel
            status, error = "failed", in_words(exc)
        with self._lock:
            self.status, self.error = status, error
            self.elapsed = perf_counter() - self.started
