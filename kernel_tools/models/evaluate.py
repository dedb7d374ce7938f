"""fit_evaluate: cross-validate candidates the valid way, refit the best, say what looks wrong.

Validity comes first: folds never split an entity (grouped CV), the metric fits the task
(AUROC / R² / C-index), encoding happens inside the pipeline (so it is refit per fold), and
the report carries the warnings a reviewer would raise — a score too good to be true, too few
events per variable, impossible survival times, tiny data.
"""

from __future__ import annotations

import warnings as _warnings
from collections.abc import Sequence
from time import perf_counter
from typing import Any

import numpy as np
import pandas as pd
from pandas.api import types as ptypes
from scipy.stats import rankdata
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning, NotFittedError
from sklearn.inspection import permutation_importance
from sklearn.metrics import (
    average_precision_score,
    balanced_accuracy_score,
    mean_absolute_error,
    mean_squared_error,
    r2_score,
)
from sklearn.model_selection import GroupKFold, KFold, StratifiedKFold
from sklearn.pipeline import Pipeline
from sklearn.utils.validation import check_is_fitted
from threadpoolctl import threadpool_limits

from kernel_tools.diagnosis.level_order import level_order
from kernel_tools.diagnosis.task import status_events
from kernel_tools.folds import StratifiedEntityKFold
from kernel_tools.lazy.engine import is_lazy
from kernel_tools.models.budget import Clock
from kernel_tools.models.calibration import classification_calibration, evaluation_times, survival_calibration
from kernel_tools.models.messages import AS_A_SCORE, ORDERED_AS_A_SCORE, TOO_FEW_TO_CROSS_VALIDATE
from kernel_tools.models.pipelines import candidates, entity_codes
from kernel_tools.models.repeats import estimate_sentence, planned_repeats, settled
from kernel_tools.models.report import ModelReport
from kernel_tools.models.stability import (
    FOLD_MEAN_LABEL,
    MEAN_RMSE,
    SHARED_LABEL,
    SUSPECT,
    broken_folds,
    shared_scale,
    skill_over_the_mean,
    suspect_row,
    too_few_rows,
)
from kernel_tools.models.survival import concordance, risk_group_curves, survival_target
from kernel_tools.models.uncertainty import WIDE_INTERVAL, bootstrap_interval, cv_interval, holdout_size, within_range
from kernel_tools.scale import SEARCH_ROWS, cap, sampled_sentence
from kernel_tools.vocabulary import METRIC, TASK_KINDS, TaskKind

TASKS = TASK_KINDS
PRIMARY_METRIC = METRIC
LEAKAGE_THRESHOLD = 0.98  # a real-world score this high is more often leakage than skill
# ...when one feature carries it: permuting a give-away column costs the model most of what
# permuting anything costs, while an easy problem (a tumour's size measured 30 ways, a class
# defined from measured quantities) spreads the importance over several features
DOMINANT_SHARE = 0.5
MIN_EVENTS_PER_VARIABLE = 10
TINY_ROWS = 100
IMPORTANCE_ROWS = 1000
IMPORTANCE_PREDICTIONS = 64  # permutation importance budget: features x repeats x models
IMPORTANCE_FOLDS = 3  # cv fold models whose validation rows permutation importance uses
# Columns cleaning steps add to record what they found, never features: handle_label_issues(
# action="flag") adds "label_issue"; handle_outliers(action="flag") adds "<column>_outlier" per
# column, or "outlier" for isolation_forest. They describe the cleaning, not the data ("label_issue"
# is a model's opinion of the label: leakage), and the test split usually lacks them.
# "{column}" stands for any column of the frame, so "score_outlier" alone is not a flag.
CLEANING_FLAG_COLUMNS = ("label_issue", "outlier", "{column}_outlier")


def fit_evaluate(
    df: pd.DataFrame,
    target: str,
    task: str,
    time: str | None = None,
    groups: str | None = None,
    test: pd.DataFrame | None = None,
    cv: int = 5,
    preprocess: Sequence[Any] | None = None,
    random_state: int = 0,
    *,
    max_cv_rows: int = 50_000,
    budget: float | None = None,
    repeats: int | None = None,
) -> ModelReport:
    """Cross-validate candidate models on ``df`` and refit the best on all of it.

    - classification: HistGradientBoosting (settings picked by successive halving) vs
      logistic regression; AUROC (macro one-vs-rest for multiclass), AUPRC, balanced accuracy;
      balanced class weights when imbalanced; calibration curve and Brier score.
    - regression: HistGradientBoosting (searched the same way) vs ridge; R², RMSE, MAE.
    - survival: ``target`` is the event indicator and ``time`` the duration; penalised Cox vs
      a Weibull AFT vs gradient-boosted Cox; Harrell's C-index; Kaplan-Meier curves by
      predicted-risk tertile; integrated Brier score and observed vs predicted survival at
      the median follow-up.

    Selection never touches ``test``: the candidate with the best cross-validated score wins,
    except that the explainable (linear / Cox) model is kept when it is within one standard
    error of it; the refit is scored once on ``test``, with a bootstrap 95% interval
    (``report.holdout_ci``; whole entities resampled when ``groups`` is in ``test``).
    ``report.candidates_tried`` counts every setting cross-validated.

    ``repeats``: how many random partitions into ``cv`` folds the chosen model is
    cross-validated on (None: 5 below 1,000 entities or, for survival, 100 events, else 1; see
    :mod:`kernel_tools.models.repeats`). ``report.cv_score`` is their mean, ``report.cv_interval``
    its 95% interval and ``report.estimate`` says which estimate it is and why. Candidates are
    compared on the first partition.

    ``budget`` (seconds, None = unlimited) bounds the wall time: fits are never interrupted,
    but the work is planned from measured fit times, and what would not fit is cut on purpose
    (cross-validation on a sample, the search or a heavier candidate skipped, fewer
    permutation repeats) and said in ``report.degraded``; it never fails for lack of time.

    ``groups`` (entity id column) makes every fold keep each entity on one side; it is never a
    feature. ``test`` (already preprocessed like ``df``) gives a holdout score through the
    refit pipeline. ``preprocess``: the fitted steps that produced ``df`` from raw data
    (StepReports or fitted transformers); they are prepended, not refit, so
    ``report.pipeline`` runs on raw data. Above ``max_cv_rows`` rows, cross-validation runs on
    a random sample (stated in ``metrics["cv_sample_size"]``); the refit uses every row.

    ``report.warnings`` carries what a reviewer would flag: suspect leakage (a score above
    0.98 that one feature carries, naming it; a high score spread thinly over many features
    gets a milder note), few events per variable, zero/negative survival times, tiny
    data, dropped date or constant columns, identifier-like columns, entities shared with
    ``test``. Flag columns that cleaning steps add (``CLEANING_FLAG_COLUMNS``, e.g.
    ``label_issue``) are never features, and ``test`` need not have them. A target with one class (or no events) raises ValueError: nothing can be fitted.
    """
    if is_lazy(df):  # a Dask frame: fitted on an in-memory sample of whole entities, and said so
        from kernel_tools.lazy.models import fit_evaluate_lazy

        return fit_evaluate_lazy(fit_evaluate, df, target, task, test=test, groups=groups, time=time, cv=cv,
                                 preprocess=preprocess, random_state=random_state, max_cv_rows=max_cv_rows,
                                 budget=budget)
    _check_arguments(df, target, task, time, groups, test, cv, max_cv_rows)
    if repeats is not None and (isinstance(repeats, bool) or not isinstance(repeats, (int, np.integer)) or repeats < 1):
        raise ValueError(f"repeats must be an integer >= 1 (or None: chosen by the data's size), got {repeats!r}")
    clock = Clock(budget)
    pre_steps = _preprocess_steps(preprocess)
    # One thread per fit: on a small shared machine OpenMP spin-waiting made fits 3x slower.
    with threadpool_limits(limits=1):
        return _fit_evaluate(df, target, task, time, groups, test, cv, pre_steps, random_state,
                             max_cv_rows, clock, repeats)


def _fit_evaluate(df, target, task, time, groups, test, cv, pre_steps, random_state, max_cv_rows, clock, repeats):
    warnings: list[str] = []

    train = _usable_rows(df, target, time, "df", warnings)
    y, classes = _target(train, target, time, task)
    if task == TaskKind.SURVIVAL:
        warnings += _event_coding_warnings(train[target], target)
    numeric, categorical = _features(train, target, time, groups, warnings)
    features = [*numeric, *categorical]
    warnings += _sanity_warnings(train, y, task, classes, numeric, categorical, time)

    pool = candidates(task, numeric, categorical, class_weight=_class_weight(task, y), random_state=random_state,
                      rows=len(train), entities=entity_codes(train, groups))
    X_cv, y_cv, folds, sample, grid, results = _cv_candidates(
        pool, train, features, y, groups, task, classes, cv, max_cv_rows, random_state, clock, warnings)
    metric = PRIMARY_METRIC[task]
    best, selection = _choose(_scored(results), {c.name: c for c in pool}, metric)
    chosen = results[best]
    group_values = train[groups].to_numpy()[sample] if groups else None
    estimate = _estimate(chosen, X_cv, y_cv, group_values, task, classes, len(folds), repeats, random_state, clock)

    with clock.phase("refit"), _quiet():
        model = clone(chosen["pipeline"]).fit(train[features], y)

    metrics = _cv_metrics(chosen, metric, len(folds), len(sample), len(train), max_cv_rows, warnings)

    holdout = y_test = pred = holdout_ci = holdout_score = None
    if test is not None:
        holdout, y_test, pred, holdout_ci = _score_holdout(
            model, test, train, features, target, task, time, groups, classes, metrics, warnings, clock,
            random_state)
        holdout_score = metrics[f"holdout_{metric}"]
        held_out = [(model, holdout[features], y_test)]
    else:
        held_out = [(m, X_cv.iloc[val], y_cv[val]) for m, val in chosen["fold_models"]]
    with clock.phase("importance"):
        importance = _importance(held_out, task, classes, random_state, clock)
    warnings += _leakage_warnings(metric, chosen["cv_mean"], holdout_score, importance)

    with clock.phase("calibration"):
        calibration, calibration_warning = _calibration(
            task, model, holdout, features, y, classes, pred, y_test, chosen, y_cv, grid)
    warnings += [calibration_warning] if calibration_warning else []

    risk_groups = _risk_groups(y_test, pred, y_cv, chosen) if task == TaskKind.SURVIVAL else None

    pipeline = Pipeline([*pre_steps, *model.steps])
    if pre_steps:
        warnings += _smoke_test(pipeline, df.head(5), target)
    _note_overrun(clock)

    return ModelReport(
        task=task, target=target, metric=metric,
        cv_score=chosen["cv_mean"],
        cv_scores=chosen["cv_scores"], cv_shared_scores=chosen.get("shared_scores"),
        cv_fold_skill=chosen.get("fold_skill"), cv_fold_suspects=chosen.get("fold_suspects"),
        holdout_score=holdout_score,
        metrics=metrics,
        model_name=best,
        candidates={n: _candidate_summary(r) for n, r in results.items()},
        features=features,
        importance=importance,
        warnings=warnings,
        pipeline=pipeline,
        grouped=groups is not None,
        n_train=len(train),
        n_test=0 if holdout is None else len(holdout),
        time=time,
        groups=groups,
        risk_groups=risk_groups,
        holdout_ci=holdout_ci,
        cv_sd=chosen["cv_std"],
        **estimate,
        calibration=calibration,
        candidates_tried=sum(r.get("tried", 0) for r in results.values()),
        selection=selection, sampled=[r["sampled"] for r in results.values() if r.get("sampled")],
        degraded=list(clock.degraded),
        budget=clock.budget,
        timings={**clock.timings, "total": round(clock.elapsed(), 3)},
    )


def _estimate(chosen, X_cv, y_cv, group_values, task, classes, n_folds, repeats, random_state, clock) -> dict[str, Any]:
    """The chosen candidate's estimate: cross-validated again on more random partitions when the
    data are small (``chosen``'s scores, means and spread then cover every partition), with its
    interval and the sentence that says which estimate it is and why (``ModelReport``'s fields)."""
    wanted, why = planned_repeats(task, y_cv, group_values, repeats)
    done = 1
    per_fold = list(chosen["per_fold"])
    metric = PRIMARY_METRIC[task]
    with clock.phase("repeats"):
        for r in range(1, wanted):
            enough = None if repeats is not None else _partitions_settled(per_fold, metric, n_folds)
            if enough:
                why += f"; {enough}"
                break
            if clock.limited and not clock.fits(chosen["seconds"], REPEAT_SHARE):
                clock.degrade(f"the estimate rests on {done} of {wanted} partitions of the cross-validation: "
                              f"another (~{chosen['seconds']:.1f} s) would not fit in the {clock.budget:.0f} s "
                              "budget; its interval is wider for it")
                break
            folds, _ = _folds(task, y_cv, group_values, n_folds, random_state + r)
            result = _cross_validate(chosen["pipeline"], X_cv, y_cv, folds, task, classes)
            if "per_fold" not in result:  # it fitted on the first partition: a failure here is said
                clock.degrade(f"partition {r + 1} of the cross-validation failed ({result.get('error')}); "
                              f"the estimate rests on {done}")
                break
            per_fold += result["per_fold"]
            done += 1
    if done > 1:
        table, skill, suspects = _fold_table(per_fold)
        scores = table[PRIMARY_METRIC[task]].tolist()
        chosen.update(cv_scores=[float(v) for v in scores], cv_mean=float(np.nanmean(scores)),
                      cv_std=float(np.nanstd(scores)), repeats=done,
                      means={k: float(v) for k, v in table.mean().items()},
                      stds={k: float(v) for k, v in table.std(ddof=0).items()},
                      shared_scores=shared_scale(table["rmse"].tolist(), y_cv) if task == TaskKind.REGRESSION else None,
                      fold_skill=skill, fold_suspects=suspects)
    interval = cv_interval(chosen["cv_scores"], n_folds)
    ci, se = interval if interval is not None else (None, None)
    if ci is not None and (clipped := within_range(ci, metric))[1]:
        ci, why = clipped[0], f"{why}; {clipped[1]}"
    sentence = estimate_sentence(task, FOLD_MEAN_LABEL if task == TaskKind.REGRESSION else PRIMARY_METRIC[task],
                                 chosen["cv_mean"], ci, n_folds, done, group_values is not None, why)
    return {"cv_repeats": done, "cv_interval": ci, "cv_se": se, "estimate": sentence}


def _partitions_settled(per_fold: list[dict[str, float]], metric: str, n_folds: int) -> str | None:
    """:func:`~kernel_tools.models.repeats.settled` for the fold scores so far (``n_folds`` per
    partition, in order)."""
    scores = [row[metric] for row in per_fold]
    means = [float(np.nanmean(scores[i:i + n_folds])) for i in range(0, len(scores), n_folds)]
    interval = cv_interval(scores, n_folds)
    return settled(means, None if interval is None else (interval[0][1] - interval[0][0]) / 2)


def _scored(results: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The candidates cross-validation scored; a RuntimeError naming why each failed when none was."""
    scored = {n: r for n, r in results.items() if "cv_mean" in r}
    if not scored:
        detail = "; ".join(f"{n}: {r.get('error') or r.get('skipped')}" for n, r in results.items())
        raise RuntimeError(f"every candidate model failed to fit: {detail}")
    return scored


def _cv_metrics(chosen, metric, n_folds, n_sample, n_train, max_cv_rows, warnings) -> dict[str, float]:
    """The chosen candidate's cross-validated means and standard deviations, the number of folds
    and, when cross-validation ran on a sample, its size; a warning when a broken fold decides
    its mean (folds too small to judge: none; the verdict says so)."""
    if not too_few_rows(n_sample / n_folds) and (why := _broken(chosen, metric)):
        warnings.append(f"the cross-validated estimate is unstable: {why}")
    metrics: dict[str, float] = {f"cv_{k}": v for k, v in chosen["means"].items()}
    metrics.update({f"cv_{k}_std": v for k, v in chosen["stds"].items()})
    metrics["cv_folds"] = float(n_folds)
    metrics["cv_repeats"] = float(chosen.get("repeats", 1))
    if n_sample < n_train:
        metrics["cv_sample_size"] = float(n_sample)
        if n_train > max_cv_rows:  # else the budget sampled, and ``degraded`` says so
            warnings.append(f"cross-validation ran on a random sample of {n_sample} of {n_train} rows")
    return metrics


def _risk_groups(y_test, pred, y_cv, chosen):
    """Kaplan-Meier curves by predicted-risk tertile: on the holdout when there is one, else on
    the chosen candidate's out-of-fold predictions."""
    if pred is not None:
        return risk_group_curves(y_test, pred)
    return risk_group_curves(y_cv, chosen["oof"])


def _note_overrun(clock: Clock) -> None:
    """Say in ``degraded`` when even the work that cannot be shortened overran the budget."""
    if clock.limited and clock.remaining() < 0:
        clock.degrade(f"the work took {clock.elapsed():.0f} s, over the {clock.budget:.0f} s budget: "
                      "the parts that cannot be shortened (the refit, one fold of the simplest "
                      "model) cost more than the budget on this table")


def _event_coding_warnings(events: pd.Series, target: str) -> list[str]:
    """How an event column not coded 0/1 (or False/True) was read: the reader should know which
    code became the event and which censoring."""
    codes = sorted(map(str, pd.unique(events)))
    if len(codes) == 2 and codes != ["0", "1"] and codes != ["False", "True"]:
        return [f"event column {target!r} coded {codes}: {codes[1]} read as the event, "
                f"{codes[0]} as censored"]
    if len(codes) > 2:
        return [f"event column {target!r} has {len(codes)} codes {codes}: 0 read as censored "
                "and every other code as the event (competing events merged; model them "
                "apart if they differ in kind)"]
    return []


def _features(train, target, time, groups, warnings) -> tuple[list[str], list[str]]:
    """The numeric and categorical feature columns: every column but the roles (target, time,
    entity id) and the flag columns cleaning steps added, which describe the cleaning."""
    flags = _cleaning_flags(train.columns, [target, time, groups])
    if flags:
        warnings.append(flags_left_out(flags))
    return _select_features(train, [target, time, groups, *flags], warnings)


def _class_weight(task, y) -> str | None:
    """Balanced class weights when the rarest class has under half the rows of the commonest."""
    if task == TaskKind.CLASSIFICATION:
        counts = pd.Series(y).value_counts()
        if counts.min() / counts.max() < 0.5:
            return "balanced"
    return None


def _cv_candidates(pool, train, features, y, groups, task, classes, cv, max_cv_rows, random_state, clock,
                   warnings):
    """Cross-validate every candidate on the same folds (of a sample of whole entities above
    ``max_cv_rows`` or when the budget asks); returns the CV rows, folds, sample, the survival
    evaluation grid and each candidate's result."""
    with clock.phase("cross-validation"):
        sample = _cv_sample(train, groups, max_cv_rows, random_state)
        X_cv, y_cv, folds, fold_warnings, sample = _cv_data(
            train, features, y, groups, sample, task, cv, random_state, pool[0], clock)
        warnings += fold_warnings
        grid = evaluation_times(y_cv) if task == TaskKind.SURVIVAL else None
        search_rows = _search_rows(train, groups, sample, random_state)
        results = _compare(pool, X_cv, y_cv, folds, task, classes, grid, clock, random_state, search_rows,
                           search_folds(len(train)))
    for name, result in results.items():
        if result.get("search") is not None and search_rows is not None:
            result["sampled"] = sampled_sentence(
                f"{name}: the search ranked its {result['tried']} settings", len(search_rows), len(X_cv),
                "cross-validation rows" + (" (whole entities)" if groups else "")
            ) + "; the chosen setting was cross-validated on all of them"
    return X_cv, y_cv, folds, sample, grid, results


def _score_holdout(model, test, train, features, target, task, time, groups, classes, metrics, warnings,
                   clock, random_state):
    """Score the refit model once on ``test``: adds the ``holdout_*`` metrics (with a bootstrap
    interval over whole entities when ``groups`` is in ``test``) and the warnings about entities
    shared with ``df`` or a wide interval; returns the usable test rows, their target, the
    predictions and the interval."""
    holdout = _usable_rows(test, target, time, "test", warnings)
    missing = [c for c in features if c not in holdout.columns]
    if missing:
        raise KeyError(f"test is missing feature columns the model uses: {missing}")
    test_groups = None
    if groups is not None and groups in holdout.columns:
        test_groups = holdout[groups].to_numpy()
        shared = np.intersect1d(train[groups].unique(), holdout[groups].unique())
        if len(shared):
            warnings.append(
                f"{len(shared)} {groups!r} entities are in both df and test: the holdout "
                "score is not independent (split by entity)"
            )
    y_test, _ = _target(holdout, target, time, task, classes=classes)
    pred = _predict(model, holdout[features], task, classes)
    for k, v in _metrics(task, y_test, pred, classes).items():
        metrics[f"holdout_{k}"] = v
    metrics.update(holdout_size(task, y_test, test_groups))
    metric = PRIMARY_METRIC[task]
    with clock.phase("uncertainty"):
        holdout_ci = _holdout_interval(task, y_test, pred, classes, test_groups, clock, random_state)
    if holdout_ci is not None:
        metrics[f"holdout_{metric}_ci_low"], metrics[f"holdout_{metric}_ci_high"] = holdout_ci
        warnings += _interval_warnings(metric, metrics[f"holdout_{metric}"], holdout_ci, len(holdout),
                                       test_groups)
    return holdout, y_test, pred, holdout_ci


# --- candidates within a budget ------------------------------------------------------------------

# Shares of the budget: cross-validation (with the search) must end by 60% of it, leaving the
# refit, the holdout interval, permutation importance and calibration the rest.
CV_SHARE = 0.6
REPEAT_SHARE = 0.7  # ...and the chosen model's repeated partitions by 70%
SAMPLE_SHARE = 0.3  # the explainable model's cross-validation alone gets at most this much
MIN_CV_ROWS = 200
# The search ranks settings on the first 3 folds: the chosen one is cross-validated on all of
# them after, and ranking six settings needs no more (five folds made the search 60% of the
# model step at a few thousand rows)
SEARCH_FOLDS = 3
# From this many training rows the search ranks on the first fold only (the lead's bound, issue
# 31): on the development tables of 2,140-4,152 training rows and the 10k benchmark's 2,537, one
# fold picked a setting whose 5-fold score was as good, for 36-44% less CPU in the model step;
# below it every result stays as it was
QUICK_SEARCH_ROWS = 2_000
QUICK_SEARCH_FOLDS = 1


def search_folds(n_rows: int) -> int:
    """How many of the folds the search ranks its settings on, for ``n_rows`` training rows."""
    return QUICK_SEARCH_FOLDS if n_rows >= QUICK_SEARCH_ROWS else SEARCH_FOLDS


def _halving_cost(n_folds: int) -> float:
    """A 6-setting halving (factor 3) on 5 folds costs ~2.4 full CVs; on fewer, that share."""
    return 2.4 * n_folds / 5


def _cv_data(train, features, y, groups, sample, task, cv, random_state, first, clock):
    """The cross-validation rows and folds; within a budget, first time one fold of the
    explainable model and sample fewer rows (whole entities) when its full CV would not fit."""
    X_cv, y_cv = train[features].iloc[sample], y[sample]
    group_values = train[groups].to_numpy()[sample] if groups else None
    folds, warnings = _folds(task, y_cv, group_values, cv, random_state)
    if not clock.limited:
        return X_cv, y_cv, folds, warnings, sample
    train_idx = folds[0][0]
    started = perf_counter()
    try:
        with _quiet():
            clone(first.pipeline).fit(X_cv.iloc[train_idx], y_cv[train_idx])
    except Exception:  # noqa: BLE001 - its cross-validation will fail again and say why
        return X_cv, y_cv, folds, warnings, sample
    clock.probe = perf_counter() - started
    projected = clock.probe * len(folds)
    allowed = clock.until(SAMPLE_SHARE)
    if projected <= allowed or len(sample) <= MIN_CV_ROWS:
        return X_cv, y_cv, folds, warnings, sample
    rows = max(MIN_CV_ROWS, int(len(sample) * max(allowed, 0) / projected))
    sample = _cv_sample(train, groups, rows, random_state)
    clock.probe *= len(sample) / len(X_cv)
    clock.degrade(
        f"cross-validation ran on a sample of {len(sample)} of {len(train)} rows: on all of them "
        f"it would have taken ~{projected:.0f} s of the {clock.budget:.0f} s budget")
    X_cv, y_cv = train[features].iloc[sample], y[sample]
    group_values = train[groups].to_numpy()[sample] if groups else None
    folds, warnings = _folds(task, y_cv, group_values, cv, random_state)
    return X_cv, y_cv, folds, warnings, sample


def _search_rows(train, groups, sample, random_state) -> np.ndarray | None:
    """Positions among the cross-validation rows (``sample``) that the search ranks settings on:
    None (all of them) at or below ``SCALE_ROWS`` training rows, else whole entities up to
    ``SEARCH_ROWS`` (:mod:`kernel_tools.scale`)."""
    if cap(len(train), SEARCH_ROWS) >= len(sample):
        return None
    return _cv_sample(train.iloc[sample], groups, SEARCH_ROWS, random_state)


def _compare(pool, X, y, folds, task, classes, grid, clock, random_state,
             search_rows=None, n_search=SEARCH_FOLDS) -> dict[str, dict[str, Any]]:
    """Cross-validate each candidate on the same folds; search a candidate's grid by successive
    halving first (on ``search_rows`` of them when given, and the first ``n_search`` folds: the
    chosen setting is then cross-validated on all). Within a budget, what would not finish is
    skipped and said."""
    results: dict[str, dict[str, Any]] = {}
    probe = clock.probe
    halving_cost = _halving_cost(n_search)
    for cand in pool:
        estimate = probe * cand.cost * len(folds) if probe else None
        if estimate is not None and not cand.explainable and not clock.fits(estimate, CV_SHARE):
            left = max(clock.until(CV_SHARE), 0.0)
            results[cand.name] = {"skipped": f"~{estimate:.1f} s of cross-validation would exceed the budget"}
            clock.degrade(f"{cand.name} was not tried: its cross-validation (~{estimate:.1f} s) would not fit "
                          f"in the {left:.1f} s left for cross-validation of the {clock.budget:.0f} s budget; "
                          "the lighter candidates were compared")
            continue
        params, tried, search = {}, 1, None
        if len(cand.grid) > 1:
            if estimate is None or clock.fits(estimate * (1 + halving_cost), CV_SHARE):
                params, search = _halving_search(cand, X, y, folds[:n_search], task, classes, random_state,
                                                 search_rows)
                tried = len(cand.grid)
            else:
                clock.degrade(f"{cand.name}: the search over {len(cand.grid)} settings was skipped "
                              f"(~{estimate * halving_cost:.1f} s more than the budget allows); "
                              "its default settings were cross-validated")
        pipe = clone(cand.pipeline).set_params(**params)
        stop = None if cand.explainable or not clock.limited else (lambda: clock.until(CV_SHARE))
        result = _cross_validate(pipe, X, y, folds, task, classes, grid, stop)
        if "skipped" in result:
            clock.degrade(f"{cand.name} was stopped after {result['folds_done']} of {len(folds)} folds: "
                          f"the rest would not fit in the {clock.budget:.0f} s budget")
        result.update(pipeline=pipe, params={k.removeprefix("model__"): v for k, v in params.items()},
                      tried=tried, search=search, search_folds=n_search if search is not None else None)
        results[cand.name] = result
    return results


def _halving_search(cand, X, y, folds, task, classes, random_state, rows=None):
    """Successive halving over ``cand.grid`` on ``folds``: every setting on a third or a ninth
    of each training fold, the best third on more rows, the best on all. ``rows``: positions of
    ``X`` it runs on (each fold kept to them), None: all. Returns the winning parameters and
    each setting's best score (by the rows it reached)."""
    from sklearn.experimental import enable_halving_search_cv  # noqa: F401
    from sklearn.model_selection import HalvingGridSearchCV

    if rows is not None:
        X, y, folds = X.iloc[rows], y[rows], _folds_within(folds, rows, len(X))
    n_train = min(len(t) for t, _ in folds)
    search = HalvingGridSearchCV(
        cand.pipeline, [{k: [v] for k, v in g.items()} for g in cand.grid], factor=3,
        resource="n_samples", min_resources=min(len(X), max(len(X) // 9, 500)), cv=folds,
        scoring=_PrimaryScorer(task, classes), refit=False, random_state=random_state,
        error_score=np.nan, n_jobs=1, return_train_score=False,  # its default scores each fit's training rows too
    )
    with _quiet():
        search.fit(X, y)
    table = pd.DataFrame(search.cv_results_)
    last = table.sort_values("iter").groupby(table["params"].map(str)).tail(1)
    summary = [{"params": {k.removeprefix("model__"): v for k, v in p.items()}, "rows": int(r * n_train / len(X)),
                "score": float(s)} for p, r, s in zip(last["params"], last["n_resources"], last["mean_test_score"])]
    return dict(search.best_params_), summary


def _folds_within(folds, rows: np.ndarray, n: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """``folds`` (positions among ``n`` rows) kept to ``rows`` and renumbered as positions in it."""
    where = np.full(n, -1)
    where[rows] = np.arange(len(rows))
    return [(where[t][where[t] >= 0], where[v][where[v] >= 0]) for t, v in folds]


def _broken(result: dict[str, Any], metric: str) -> str | None:
    """:func:`~kernel_tools.models.stability.broken_folds` of a candidate's fold scores, a
    regression's on their shared scale (None also when too few are finite to tell: the verdict
    says so)."""
    shared = result.get("shared_scores")
    try:
        return broken_folds(shared or result["cv_scores"], SHARED_LABEL if shared else metric,
                            result.get("fold_skill") if shared else None, result.get("fold_suspects") if shared else None)
    except ValueError:
        return None


def _choose(scored, pool, metric) -> tuple[str, str]:
    """The best cross-validated candidate, unless an explainable one is within noise of it:
    the paired fold differences' mean is at most one standard error (or 0.005). A candidate
    with a broken fold (:mod:`~kernel_tools.models.stability`) is set aside while another has none."""
    broken = {n: why for n in scored if (why := _broken(scored[n], metric))}
    if broken and len(broken) < len(scored):
        name, how = _choose({n: r for n, r in scored.items() if n not in broken}, pool, metric)
        return name, how + "; set aside: " + "; ".join(f"{n}, {why}" for n, why in broken.items())
    best = max(scored, key=lambda n: _nan_to_low(scored[n]["cv_mean"]))
    simple = next((n for n in scored if pool[n].explainable), None)
    if simple is None or simple == best:
        return best, f"{best}: the best cross-validated {metric} of {len(scored)} compared"
    diff = np.asarray(scored[best]["cv_scores"]) - np.asarray(scored[simple]["cv_scores"])
    diff = diff[np.isfinite(diff)]
    if len(diff) < 2:
        return best, f"{best}: the best cross-validated {metric} of {len(scored)} compared"
    gap = float(diff.mean())
    se = float(diff.std(ddof=1) / np.sqrt(len(diff)))
    if gap <= max(se, 0.005):
        return simple, (f"{simple} kept: within noise of {best} (cv {metric} "
                        f"{scored[simple]['cv_mean']:.3f} vs {scored[best]['cv_mean']:.3f}; the "
                        f"difference {gap:.3f} is at most one standard error, {se:.3f}), and it is "
                        "simpler to explain")
    return best, (f"{best}: cv {metric} {scored[best]['cv_mean']:.3f} beats {simple} "
                  f"{scored[simple]['cv_mean']:.3f} by {gap:.3f}, more than one standard error ({se:.3f})")


def _candidate_summary(result: dict[str, Any]) -> dict[str, Any]:
    keep = ("cv_mean", "cv_std", "cv_scores", "means", "error", "skipped", "params", "tried", "search", "search_folds",
            "repeats")
    return {("metrics" if k == "means" else k): v for k, v in result.items()
            if k in keep and v is not None and v != {}}


# --- arguments -------------------------------------------------------------------------------


def _check_arguments(df, target, task, time, groups, test, cv, max_cv_rows) -> None:
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"df must be a pandas DataFrame, got {type(df).__name__}")
    if task not in TASKS:
        raise ValueError(f"task must be one of {TASKS}, got {task!r}")
    if df.columns.duplicated().any():
        dup = df.columns[df.columns.duplicated()].unique().tolist()
        raise ValueError(f"df has duplicated column names {dup}; make them unique first")
    if target is None:
        raise ValueError("target is required (for survival: the event indicator column)")
    for role, name in (("target", target), ("time", time), ("groups", groups)):
        if name is not None and name not in df.columns:
            raise KeyError(f"{role} column {name!r} is not in df (columns: {list(df.columns)[:20]})")
    if task == TaskKind.SURVIVAL and time is None:
        raise ValueError("survival needs time= (the duration / follow-up column); target is the event")
    if task != TaskKind.SURVIVAL and time is not None:
        raise ValueError("time= is the survival duration column; use it only with task='survival'")
    roles = [c for c in (target, time, groups) if c is not None]
    if len(set(roles)) < len(roles):
        raise ValueError("target, time and groups must be different columns")
    if groups is not None and df[groups].isna().any():
        raise ValueError(f"groups column {groups!r} has missing values; every row needs an entity id")
    if isinstance(cv, bool) or not isinstance(cv, (int, np.integer)) or cv < 2:
        raise ValueError(f"cv must be an integer >= 2 (number of folds), got {cv!r}")
    if test is not None:
        if not isinstance(test, pd.DataFrame):
            raise TypeError(f"test must be a pandas DataFrame, got {type(test).__name__}")
        for name in (target, time):
            if name is not None and name not in test.columns:
                raise KeyError(f"test has no column {name!r}")
    if not isinstance(max_cv_rows, (int, np.integer)) or max_cv_rows < 10:
        raise ValueError(f"max_cv_rows must be an integer >= 10, got {max_cv_rows!r}")


def _preprocess_steps(preprocess) -> list[tuple[str, Any]]:
    """Fitted transformers from StepReports (``.transformer``) or given directly."""
    if preprocess is None:
        return []
    if isinstance(preprocess, (str, bytes)) or not isinstance(preprocess, Sequence):
        raise TypeError("preprocess must be a list of StepReports or fitted transformers")
    steps = []
    for i, item in enumerate(preprocess):
        transformer = item.transformer if hasattr(item, "transformer") else item
        if transformer is None:  # a step with nothing to replay (e.g. the split)
            continue
        if not hasattr(transformer, "transform"):
            raise TypeError(
                f"preprocess[{i}] ({type(item).__name__}) is neither a StepReport with a "
                "transformer nor a fitted transformer"
            )
        try:
            check_is_fitted(transformer)
        except NotFittedError as error:
            raise ValueError(
                f"preprocess[{i}] ({type(transformer).__name__}) is not fitted; pass the fitted "
                "transformer from the step's report"
            ) from error
        except TypeError:  # not a scikit-learn estimator: trust its transform()
            pass
        steps.append((f"pre{i}_{type(transformer).__name__.lower()}", transformer))
    return steps


# --- data ------------------------------------------------------------------------------------


def _usable_rows(frame, target, time, label, warnings) -> pd.DataFrame:
    needed = [c for c in (target, time) if c is not None]
    missing = frame[needed].isna().any(axis=1)
    if missing.any():
        warnings.append(
            f"{int(missing.sum())} rows of {label} without {' / '.join(needed)} were left out"
        )
        frame = frame.loc[~missing.to_numpy()]
    if len(frame) == 0:
        raise ValueError(f"{label} has no rows with a known {' / '.join(needed)}")
    return frame


def _target(frame, target, time, task, classes=None) -> tuple[np.ndarray, np.ndarray | None]:
    """The target as models take it, and the class labels for classification."""
    values = frame[target]
    if task == TaskKind.REGRESSION:
        if not ptypes.is_numeric_dtype(values) or ptypes.is_bool_dtype(values):
            raise TypeError(f"regression target {target!r} must be numeric, got {values.dtype}")
        return values.astype("float64").to_numpy(), None
    if task == TaskKind.SURVIVAL:
        read = None if values.isna().any() else status_events(values)
        if read is None:
            raise ValueError(
                f"survival target {target!r} must be the event indicator (0/1, bool, 1/2, or 0 = "
                f"censored and other codes events), got values {pd.unique(values)[:6].tolist()}"
            )
        event = read[0]
        duration = frame[time]
        if ptypes.is_timedelta64_dtype(duration):
            duration = duration.dt.total_seconds() / 86400.0
        if not ptypes.is_numeric_dtype(duration):
            raise TypeError(f"survival time {time!r} must be numeric durations, got {duration.dtype}")
        return survival_target(duration, event), None
    if ptypes.is_bool_dtype(values):
        y = values.astype(bool).to_numpy()
    elif ptypes.is_numeric_dtype(values):
        as_float = values.astype("float64")
        y = as_float.astype("int64").to_numpy() if (as_float % 1 == 0).all() else as_float.to_numpy()
    else:
        y = values.astype(str).to_numpy()
    if classes is None:
        classes = np.unique(y)
    return y, classes


def flags_left_out(flags: list[str]) -> str:
    """The warning that says which flag columns of cleaning steps the model left out, in words."""
    names = ", ".join(f"'{c}'" for c in flags[:10]) + (f" and {len(flags) - 10} more" if len(flags) > 10 else "")
    if len(flags) == 1:
        return (f"the flag column {names} a cleaning step added is not a feature: it describes the cleaning, "
                "not the data, and was left out (test data need not have it)")
    return (f"the flag columns {names} cleaning steps added are not features: they describe the cleaning, "
            "not the data, and were left out (test data need not have them)")


def _cleaning_flags(columns, roles) -> list:
    """The columns named like the flags of :data:`CLEANING_FLAG_COLUMNS` (roles excepted)."""
    names: set[str] = set()
    for pattern in CLEANING_FLAG_COLUMNS:
        if "{column}" in pattern:
            names.update(pattern.format(column=c) for c in columns)
        else:
            names.add(pattern)
    return [c for c in columns if isinstance(c, str) and c in names and c not in roles]


def _select_features(frame, excluded, warnings) -> tuple[list[str], list[str]]:
    """Numeric and categorical feature columns; dates, constants and empty columns left out."""
    numeric, categorical, dates, empty = [], [], [], []
    for name in frame.columns:
        if name in excluded:
            continue
        column = frame[name]
        if ptypes.is_datetime64_any_dtype(column) or ptypes.is_timedelta64_dtype(column) or isinstance(
            column.dtype, pd.PeriodDtype
        ):
            dates.append(name)
        elif column.nunique(dropna=True) <= 1:
            empty.append(name)
        elif (ptypes.is_numeric_dtype(column) or ptypes.is_bool_dtype(column)) and not ptypes.is_complex_dtype(column):
            numeric.append(name)
        else:
            categorical.append(name)
    if dates:
        warnings.append(
            f"date/time columns {dates} were left out of the features (models need numbers); "
            "derive durations or parts (year, month) first if they matter"
        )
    if empty:
        warnings.append(f"columns {empty} have at most one distinct value and were left out")
    for name in categorical:
        distinct = frame[name].nunique()
        if len(frame) >= 50 and distinct > 0.5 * len(frame):
            warnings.append(
                f"column {name!r} has {distinct} distinct values in {len(frame)} rows: it looks "
                "like an identifier or free text, not a feature"
            )
    for name in numeric:  # whole numbers, one per row: a row number or an id, not a measure
        column = frame[name]
        if len(frame) >= 50 and ptypes.is_integer_dtype(column) and column.is_unique:
            warnings.append(
                f"column {name!r} holds a distinct whole number on every row: it looks like an "
                "identifier or row number, not a feature"
            )
    if not numeric and not categorical:
        raise ValueError("no usable feature columns left (all are target, time, groups, cleaning flags, dates or constant)")
    return numeric, categorical


# A class needs this many rows so that every fold's training rows hold two of it (scikit-learn's
# early stopping and calibration split the training rows again, stratified)
MIN_CLASS_ROWS = 3


def small_classes_message(counts: pd.Series) -> str:
    """The classes too small to cross-validate, in words (labels as written, never ``np.int64(6)``)."""
    small = counts[counts < MIN_CLASS_ROWS].sort_index()
    listed = ", ".join(f"{_label(c)} ({n} row{'s' if n != 1 else ''})" for c, n in small.items())
    # two codes (0/1) are no ordered score: regression of an event would be no better a task
    numbers = len(counts) > 2 and all(isinstance(_label_value(c), (int, float)) for c in counts.index)
    labels = [str(_label_value(c)) for c in counts.index]
    # none < mild < severe: the order makes them a score as whole numbers would
    ordered = None if numbers else level_order(pd.Series(labels, dtype=object), labels)
    remedy = (f"{AS_A_SCORE}; else merge the rare classes or drop their rows" if numbers
              else f"{ORDERED_AS_A_SCORE}, {' < '.join(ordered)}; else merge the rare classes or drop their rows"
              if ordered else "merge the rare classes into another or drop their rows")
    return (f"{len(small)} class{'es have' if len(small) > 1 else ' has'} {TOO_FEW_TO_CROSS_VALIDATE}: "
            f"{listed}; each class needs at least {MIN_CLASS_ROWS}. The task may be wrong: {remedy}")


def _label_value(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


def _label(value: Any) -> str:
    plain = _label_value(value)
    return repr(plain) if isinstance(plain, str) else str(plain)


def _sanity_warnings(frame, y, task, classes, numeric, categorical, time) -> list[str]:
    out = []
    n = len(frame)
    if n < TINY_ROWS:
        out.append(f"tiny data: {n} rows; every score here is very uncertain")
    n_params = len(numeric) + sum(
        min(frame[c].nunique(), 20) - 1 for c in categorical
    )
    if task == TaskKind.CLASSIFICATION:
        counts = pd.Series(y).value_counts()
        if len(counts) < 2:
            raise ValueError(f"the target has one class ({_label(counts.index[0])}); nothing to classify")
        if counts.min() < MIN_CLASS_ROWS:
            raise ValueError(small_classes_message(counts))
        if ptypes.is_float_dtype(np.asarray(y)) or (len(counts) > 20 and len(counts) > 0.05 * n):
            out.append(
                f"the classification target has {len(counts)} distinct values; is this regression?"
            )
        if len(counts) == 2:
            events = int(counts.min())
            if events / max(n_params, 1) < MIN_EVENTS_PER_VARIABLE:
                out.append(
                    f"few events per variable: {events} minority-class rows for about {n_params} "
                    f"model parameters (fewer than {MIN_EVENTS_PER_VARIABLE} each): expect overfitting"
                )
    elif task == TaskKind.REGRESSION:
        distinct = pd.Series(y).nunique()
        if distinct < 2:
            raise ValueError("the regression target is constant; nothing to predict")
        if distinct <= 2:
            out.append("the regression target has only 2 distinct values; is this classification?")
    else:
        events = int(y[:, 1].sum())
        if events == 0:
            raise ValueError("no events in the survival target: the C-index is undefined")
        if events / max(n_params, 1) < MIN_EVENTS_PER_VARIABLE:
            out.append(
                f"few events per variable: {events} events for about {n_params} model parameters "
                f"(fewer than {MIN_EVENTS_PER_VARIABLE} each): expect overfitting"
            )
        non_positive = int((y[:, 0] <= 0).sum())
        if non_positive:
            out.append(
                f"{non_positive} rows have zero or negative survival time in {time!r}: check how "
                "durations were computed (event before study entry?)"
            )
    return out


def _cv_sample(frame, groups, max_rows, random_state) -> np.ndarray:
    """Positions of the rows cross-validation uses: all, or whole entities up to max_rows."""
    n = len(frame)
    if n <= max_rows:
        return np.arange(n)
    rng = np.random.default_rng(random_state)
    if groups is None:
        return np.sort(rng.choice(n, size=max_rows, replace=False))
    codes, uniques = pd.factorize(frame[groups])
    sizes = np.bincount(codes)
    order = rng.permutation(len(uniques))
    keep = order[: int(np.searchsorted(np.cumsum(sizes[order]), max_rows)) + 1]
    return np.flatnonzero(np.isin(codes, keep))


def _folds(task, y, group_values, cv, random_state) -> tuple[list[tuple[np.ndarray, np.ndarray]], list[str]]:
    warnings = []
    stratify = None
    if task == TaskKind.CLASSIFICATION:
        stratify = y
    elif task == TaskKind.SURVIVAL:
        stratify = y[:, 1]
    n_splits = cv
    limits = []
    if stratify is not None:
        limits.append(("the smallest class" if task == TaskKind.CLASSIFICATION else "events / non-events",
                       int(pd.Series(stratify).value_counts().min())))
    if group_values is not None:
        limits.append(("the number of groups", int(pd.Series(group_values).nunique())))
    else:
        limits.append(("the number of rows", len(y)))
    for reason, limit in limits:
        if limit < n_splits:
            if limit < 2:
                raise ValueError(f"cannot cross-validate: {reason} is {limit} (need at least 2)")
            warnings.append(f"cv reduced from {cv} to {limit} folds: {reason} is {limit}")
            n_splits = limit
    if group_values is not None:
        if stratify is not None:
            splitter = StratifiedEntityKFold(n_splits, shuffle=True, random_state=random_state)
        else:
            splitter = GroupKFold(n_splits, shuffle=True, random_state=random_state)
        folds = list(splitter.split(np.zeros(len(y)), stratify, group_values))
    elif stratify is not None:
        splitter = StratifiedKFold(n_splits, shuffle=True, random_state=random_state)
        folds = list(splitter.split(np.zeros(len(y)), stratify))
    else:
        folds = list(KFold(n_splits, shuffle=True, random_state=random_state).split(np.zeros(len(y))))
    return folds, warnings


# --- fitting and scoring -----------------------------------------------------------------------


class _quiet(_warnings.catch_warnings):
    """Silence convergence chatter during fits; the report states what matters."""

    def __enter__(self):
        out = super().__enter__()
        _warnings.simplefilter("ignore", ConvergenceWarning)
        _warnings.simplefilter("ignore", RuntimeWarning)
        _warnings.filterwarnings("ignore", message=".*Skipping features without any observed values.*")
        _warnings.filterwarnings("ignore", message=".*[Ff]ound unknown categories.*")
        return out


def _cross_validate(pipe, X, y, folds, task, classes, grid=None, stop=None) -> dict[str, Any]:
    """Fit and score ``pipe`` on each fold. Keeps out-of-fold predictions (and, for survival,
    out-of-fold survival curves at ``grid``: the times and the median follow-up) and the first
    fold models (for permutation importance). ``stop()``: seconds left for this work; when the
    remaining folds would not fit in it the candidate is abandoned (``{"skipped": ...}``)."""
    per_fold: list[dict[str, Any]] = []  # a regression fold also holds its suspect row (a sentence)
    began = perf_counter()
    oof = np.full((len(y), len(classes)), np.nan) if task == TaskKind.CLASSIFICATION else np.full(len(y), np.nan)
    times = None if grid is None else np.append(grid[0], grid[1])
    oof_survival = None if times is None else np.full((len(y), len(times)), np.nan)
    fold_models: list[tuple[Any, np.ndarray]] = []  # (fitted pipeline, its validation rows)
    try:
        for done, (train_idx, val_idx) in enumerate(folds, start=1):
            started = perf_counter()
            with _quiet():
                fitted = clone(pipe).fit(X.iloc[train_idx], y[train_idx])
                pred = _predict(fitted, X.iloc[val_idx], task, classes)
                if oof_survival is not None:
                    oof_survival[val_idx] = _survival_curves(fitted, X.iloc[val_idx], times)
            per_fold.append(_metrics(task, y[val_idx], pred, classes))
            if task == TaskKind.REGRESSION:
                per_fold[-1][MEAN_RMSE] = float(np.sqrt(np.mean((y[val_idx] - np.mean(y[train_idx])) ** 2)))
                per_fold[-1][SUSPECT] = suspect_row(X.iloc[train_idx], y[train_idx], X.iloc[val_idx], y[val_idx], pred)
            if len(fold_models) < IMPORTANCE_FOLDS:
                fold_models.append((fitted, val_idx))
            oof[val_idx] = pred
            if stop is not None and done < len(folds) and (perf_counter() - started) * (len(folds) - done) > stop():
                return {"skipped": "the remaining folds would exceed the budget", "folds_done": done}
    except Exception as error:  # one failing candidate must not hide the others
        return {"error": f"{type(error).__name__}: {error}"}
    metric = PRIMARY_METRIC[task]
    table, skill, suspects = _fold_table(per_fold)
    scores = table[metric].tolist()
    return {
        "cv_mean": float(np.nanmean(scores)) if not np.all(np.isnan(scores)) else float("nan"),
        "cv_std": float(np.nanstd(scores)) if not np.all(np.isnan(scores)) else float("nan"),
        "cv_scores": [float(s) for s in scores],
        "means": {k: float(v) for k, v in table.mean().items()},
        "stds": {k: float(v) for k, v in table.std(ddof=0).items()},
        "fold_models": fold_models,
        "oof": oof,
        "oof_survival": oof_survival,
        "per_fold": per_fold,
        "shared_scores": shared_scale(table["rmse"].tolist(), y) if task == TaskKind.REGRESSION else None,
        "fold_skill": skill,
        "fold_suspects": suspects,
        "seconds": perf_counter() - began,
    }


def _fold_table(per_fold: list[dict[str, Any]]) -> tuple[pd.DataFrame, list[float] | None, list[str | None] | None]:
    """The folds' metrics as a table; a regression's skill over predicting the training mean per
    fold (:func:`~kernel_tools.models.stability.skill_over_the_mean`) and the row that dominates
    each fold's errors as a likely entry error (:func:`~kernel_tools.models.stability.suspect_row`),
    both kept out of the means."""
    table = pd.DataFrame(per_fold)
    if MEAN_RMSE not in table:
        return table, None, None
    skill = skill_over_the_mean(table["rmse"].tolist(), table[MEAN_RMSE].tolist())
    suspects = [s if isinstance(s, str) else None for s in table[SUSPECT]]
    return table.drop(columns=[MEAN_RMSE, SUSPECT]), skill, suspects


def _survival_curves(model, X, times) -> np.ndarray:
    """S(t | x) at ``times`` from a fitted survival pipeline (its last step predicts curves)."""
    return model[-1].predict_survival(model[:-1].transform(X), times)


def _predict(model, X, task, classes) -> np.ndarray:
    """Class probabilities aligned to ``classes``, regression predictions, or survival risk."""
    if task != TaskKind.CLASSIFICATION:
        return np.asarray(model.predict(X), dtype=float)
    proba = model.predict_proba(X)
    aligned = np.zeros((len(X), len(classes)))
    aligned[:, np.searchsorted(classes, model.classes_)] = proba
    return aligned


def _metrics(task, y, pred, classes, primary_only: bool = False) -> dict[str, float]:
    if task == TaskKind.REGRESSION:
        out = {"r2": float(r2_score(y, pred))}
        if not primary_only:
            out["rmse"] = float(np.sqrt(mean_squared_error(y, pred)))
            out["mae"] = float(mean_absolute_error(y, pred))
        return out
    if task == TaskKind.SURVIVAL:
        return {"c_index": concordance(y, pred)}
    binary = len(classes) == 2
    columns = [1] if binary else range(len(classes))
    auroc, auprc = [], []
    for k in columns:  # macro one-vs-rest, over the classes present in this fold
        positive = y == classes[k]
        if 0 < positive.sum() < len(y):
            auroc.append(fast_auroc(positive, pred[:, k]))
            if not primary_only:
                auprc.append(average_precision_score(positive, pred[:, k]))
    out = {"roc_auc": float(np.mean(auroc)) if auroc else float("nan")}
    if not primary_only:
        out["average_precision"] = float(np.mean(auprc)) if auprc else float("nan")
        out["balanced_accuracy"] = float(balanced_accuracy_score(y, classes[pred.argmax(axis=1)]))
    return out


def fast_auroc(positive: np.ndarray, score: np.ndarray) -> float:
    """Area under the ROC curve, as ``roc_auc_score`` gives it (ties count one half), from the
    ranks of the scores (Mann-Whitney): ~50 µs where scikit-learn's checks take ~2 ms, and the
    bootstrap interval, the search and permutation importance call it hundreds of times."""
    positive = np.asarray(positive, dtype=bool)
    n_pos = int(positive.sum())
    n_neg = len(positive) - n_pos
    if n_pos == 0 or n_neg == 0:
        raise ValueError("the ROC AUC needs both classes")
    ranks = rankdata(score)
    return float((ranks[positive].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


class _PrimaryScorer:
    """scorer(estimator, X, y) -> the task's primary metric, for permutation importance."""

    def __init__(self, task, classes):
        self.task, self.classes = task, classes

    def __call__(self, estimator, X, y) -> float:
        pred = _predict(estimator, X, self.task, self.classes)
        return _metrics(self.task, y, pred, self.classes, primary_only=True)[PRIMARY_METRIC[self.task]]


def _importance(held_out, task, classes, random_state, clock) -> list[dict[str, Any]]:
    """Permutation importance (drop in the primary metric) on held-out rows.

    ``held_out``: (fitted model, X, y) triples — the refit model on the holdout, or fold
    models on their validation rows (averaged: one small fold alone is too noisy). Rows and
    repeats are bounded so this costs about ``IMPORTANCE_PREDICTIONS`` predictions; within a
    budget, fewer when one prediction is slow (it is never skipped: the leakage check reads
    it). Columns are permuted after the model's dtype step so predictions skip re-parsing.
    """
    rng = np.random.default_rng(random_state)
    n_features = held_out[0][1].shape[1]
    rows_each = max(IMPORTANCE_ROWS // len(held_out), 50)
    n_repeats = int(np.clip(IMPORTANCE_PREDICTIONS // (n_features * len(held_out)), 1, 5))
    if clock.limited:
        model, X, y = held_out[0]
        sample = X.iloc[: min(len(X), rows_each)]
        encoded = model[0].transform(sample)
        started = perf_counter()
        with _quiet():
            _PrimaryScorer(task, classes)(model[1:], encoded, y[: len(sample)])
        per_prediction = max(perf_counter() - started, 1e-4)
        allowed = clock.until(0.9) / per_prediction
        wanted = n_features * len(held_out) * n_repeats
        if wanted > allowed:
            cut = []
            while n_repeats > 1 and n_features * len(held_out) * n_repeats > allowed:
                n_repeats -= 1
                cut = [f"{n_repeats} permutation repeat{'s' if n_repeats > 1 else ''}"]
            if n_features * len(held_out) > allowed and len(held_out) > 1:
                held_out = held_out[:1]
                cut.append("one fold model")
            if n_features * len(held_out) > allowed:
                rows_each = max(50, int(rows_each * max(allowed, 1) / (n_features * len(held_out))))
                cut.append(f"{rows_each} rows")
            clock.degrade(f"permutation importance used {', '.join(cut)} to stay within the budget: "
                          "the ranking of close features is less certain")
    drops: list[np.ndarray] = []
    for model, X, y in held_out:
        if len(X) > rows_each:
            rows = rng.choice(len(X), rows_each, replace=False)
            X, y = X.iloc[rows], y[rows]
        with _quiet():
            result = permutation_importance(
                model[1:], model[0].transform(X), y, scoring=_PrimaryScorer(task, classes),
                n_repeats=n_repeats, random_state=random_state, n_jobs=1,
            )
        drops.append(result.importances)
    table = np.concatenate(drops, axis=1)  # features x (models * repeats)
    mean, std = np.nanmean(table, axis=1), np.nanstd(table, axis=1)
    order = np.argsort(-np.nan_to_num(mean, nan=-np.inf))
    columns = held_out[0][1].columns
    return [
        {"feature": str(columns[i]), "importance": float(mean[i]), "std": float(std[i])}
        for i in order
    ]


def _holdout_interval(task, y, pred, classes, groups, clock, random_state) -> list[float] | None:
    """Bootstrap 95% interval of the primary metric on the holdout (entities resampled when
    ``groups`` is given). Within a budget, fewer rounds when the metric is slow to compute."""
    metric = PRIMARY_METRIC[task]

    def score(rows):
        return _metrics(task, y[rows], pred[rows], classes, primary_only=True)[metric]

    seconds = max(clock.until(0.75), 0.0) if clock.limited else float("inf")
    interval, rounds = bootstrap_interval(score, len(y), groups, seconds=seconds, random_state=random_state)
    if rounds < 200:
        clock.degrade(f"the holdout interval rests on {rounds} bootstrap rounds instead of 200 "
                      "(the budget): its ends are rougher")
    return interval


def _interval_warnings(metric, score, interval, n_test, groups) -> list[str]:
    width = interval[1] - interval[0]
    if width <= WIDE_INTERVAL:
        return []
    unit = f"{len(pd.unique(groups))} entities" if groups is not None else f"{n_test} rows"
    return [f"the holdout {metric} {score:.3f} is uncertain: its 95% interval [{interval[0]:.3f}, "
            f"{interval[1]:.3f}] is {width:.2f} wide (holdout of {unit}); differences smaller "
            "than that are not evidence"]


def _calibration(task, model, holdout, features, y_train, classes, pred, y_test, chosen, y_cv, grid):
    """Calibration on the holdout, or on the out-of-fold predictions without one.
    Returns ``(calibration or None, warning or None)``: a curve that cannot be drawn (too few
    rows or events) is said, not hidden."""
    if task == TaskKind.REGRESSION:
        return None, None
    where = "holdout" if holdout is not None else "out-of-fold"
    try:
        if task == TaskKind.CLASSIFICATION:
            y_eval, proba = (y_test, pred) if holdout is not None else (y_cv, chosen["oof"])
            out = classification_calibration(y_eval, proba, classes)
        elif holdout is not None:
            times, at_time = evaluation_times(y_test)
            curves = _survival_curves(model, holdout[features], np.append(times, at_time))
            out = survival_calibration(y_train, y_test, curves[:, :-1], times, curves[:, -1], at_time)
        else:
            curves = chosen["oof_survival"]
            out = survival_calibration(y_cv, y_cv, curves[:, :-1], grid[0], curves[:, -1], grid[1])
    except Exception as error:  # noqa: BLE001 - reported, the model itself is fine
        return None, f"calibration could not be computed on the {where} predictions: {error}"
    out["on"] = where
    return out, None


def top_importance_share(importance: list[dict[str, Any]]) -> float:
    """Share of the (positive) permutation importance carried by the top feature."""
    values = [max(float(i.get("importance") or 0.0), 0.0) for i in importance]
    total = sum(values)
    return values[0] / total if values and total > 0 else 1.0


def _leakage_warnings(metric, cv_score, holdout_score, importance) -> list[str]:
    out = []
    top = importance[0] if importance else None
    for where, score in (("cv", cv_score), ("holdout", holdout_score)):
        if score is not None and not np.isnan(score) and score > LEAKAGE_THRESHOLD:
            hint = ""
            share = top_importance_share(importance)
            if top is not None and share < DOMINANT_SHARE:
                out.append(
                    f"very high score spread over several features: {where} {metric} {score:.3f}, "
                    f"the top feature {top['feature']!r} carries {share:.0%} of the permutation "
                    "importance; likely an easy problem, not one give-away column — still check "
                    "that no feature is recorded after the outcome"
                )
                continue
            if top is not None:
                hint = (
                    f"; top feature {top['feature']!r} (permutation importance "
                    f"{top['importance']:.3f}) — check it is not recorded after, or derived from, "
                    "the outcome"
                )
            out.append(f"suspect leakage: {where} {metric} {score:.3f} > {LEAKAGE_THRESHOLD}{hint}")
    return out


def _smoke_test(pipeline, raw_rows, target) -> list[str]:
    """The assembled pipeline must run on rows shaped like the data before preprocessing."""
    try:
        with _quiet():
            pipeline.predict(raw_rows.drop(columns=[target]))
        return []
    except Exception as error:
        failure = f"{type(error).__name__}: {error}"
    try:
        with _quiet():
            pipeline.predict(raw_rows)
    except Exception:
        return [
            "the assembled pipeline (preprocess + model) did not run on rows of df (already "
            f"preprocessed); check it on raw data before using it: {failure}"
        ]
    return [
        f"the assembled pipeline needs a {target!r} column in new data (a preprocess step was "
        f"fitted with the target present): {failure}"
    ]


def _nan_to_low(value: float) -> float:
    return -np.inf if np.isnan(value) else value
