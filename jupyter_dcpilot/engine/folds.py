"""Whether the cross-validation's folds let its estimate stand: the ``cv_stable`` check.

A regression's folds are judged on the scale they share
(:func:`~kernel_tools.models.stability.shared_scale`): a fold of 3 rows has little variance of
its own, so its own R² scatters where its errors do not. A fold is broken only when it is far
below its siblings and no better than the trivial predictor; a far-below fold that still beats
it is named and passes (worse there, not broken); folds of a handful of rows are not judged, and
the check says the estimate rests on the repeated cross-validation's interval instead. A
regression whose pooled out-of-fold predictions err more than the mean fails in those words, and
so does an estimate no better than a constant (r2 below 0, AUROC or C-index at most 0.5).
"""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Sequence
from typing import Any

from kernel_tools.models.stability import SHARED_LABEL, broken_folds, too_few_rows, weak_folds

RANKING_METRICS = ("roc_auc", "c_index")  # 0.5: ranking at random


def cv_stable(model: dict[str, Any], steps: Sequence[str] = ()) -> tuple[bool, str]:
    """(passed, why) for the fold scores of a model report's dict (``ModelReport.to_dict()``);
    ``steps``: the titles of the steps that ran, to point at the one that handles a suspect row."""
    shared = _finite_scores(model.get("cv_shared_scores"))
    scores = shared or _finite_scores(model.get("cv_scores"))
    metric = SHARED_LABEL if shared else str(model.get("metric"))
    worse = str(model.get("metric")) == "r2" and len(scores) > 0 and statistics.fmean(scores) < 0
    below = _headline_below_zero(model, scores if shared else [])
    if small := too_few_rows(fold_rows(model)):
        if worse:
            return False, _worse_than_the_mean(statistics.fmean(scores), bool(shared))
        if below:
            return False, below
        return True, small + (f" ({shown})" if (shown := _interval(model)) else "")
    try:
        skill, suspects = _aligned(model, "cv_fold_skill", shared), _aligned(model, "cv_fold_suspects", shared)
        broken = broken_folds(scores, metric, skill, suspects)
        weak = weak_folds(scores, metric, skill, suspects)
    except (ValueError, KeyError) as error:
        return False, f"{error}: whether one fold decides the cross-validated estimate could not be checked"
    if broken:
        return False, broken + _step_of(broken, steps)
    if worse:
        return False, _worse_than_the_mean(statistics.fmean(scores), bool(shared))
    if below:
        return False, below
    pooled = f" ({SHARED_LABEL}; their mean, the pooled out-of-fold r2, is {statistics.fmean(scores):.3f})"
    return True, (weak or f"the {len(scores)} fold scores agree: none lies far below their median "
                   f"{statistics.median(scores):.3f}") + (pooled if shared else "")


def fold_rows(model: dict[str, Any]) -> float | None:
    """The rows in one fold on average: the training rows over the folds of one partition (None
    when the report does not say)."""
    n_train, repeats, scores = model.get("n_train"), model.get("cv_repeats") or 1, model.get("cv_scores") or []
    if not isinstance(n_train, int) or not isinstance(repeats, int) or repeats < 1 or len(scores) < repeats:
        return None
    return n_train / (len(scores) / repeats)


def _interval(model: dict[str, Any]) -> str:
    ci, score = model.get("cv_interval"), model.get("cv_score")
    if not (isinstance(ci, (list, tuple)) and len(ci) == 2 and all(isinstance(v, (int, float)) for v in ci)
            and isinstance(score, (int, float))):
        return ""
    return f"cross-validated {model.get('metric')} {score:.3f}, 95% interval [{ci[0]:.3f}, {ci[1]:.3f}]"


def _aligned(model: dict[str, Any], key: str, shared: list[float]) -> list[Any] | None:
    """A regression report's per-fold list ``key`` (the folds' skill over the mean, their suspect
    rows) aligned with the finite shared scores (None: not recorded, or not one per fold)."""
    values, raw = model.get(key), model.get("cv_shared_scores") or []
    if not shared or not isinstance(values, list) or len(values) != len(raw):
        return None
    return [v for v, s in zip(values, raw) if isinstance(s, (int, float)) and math.isfinite(s)]


def _step_of(why: str, steps: Sequence[str]) -> str:
    """The steps whose titles name the column a suspect row's far-out value is in."""
    named = {c for c in re.findall(r"row [^(]*\((.+?) \S+ outside the far-out fences", why)}
    titles = [t for t in steps if any(c != "the target" and (f"'{c}'" in t or f" {c}" in t) for c in named)]
    return f"; the step that handles it: {', '.join(repr(t) for t in titles)}" if titles else ""


def _finite_scores(values: Any) -> list[float]:
    return [float(s) for s in values or [] if isinstance(s, (int, float)) and math.isfinite(s)]


def _headline_below_zero(model: dict[str, Any], shared: list[float]) -> str | None:
    """Why an estimate no better than a constant is not declared valid: a regression whose reported
    estimate (the mean of each fold's own r2) is below 0, even when its pooled predictions beat
    the mean (a model that tells units apart but not the rows within one), and a ranking (AUROC,
    C-index) at or below 0.5, the score of ranking at random."""
    score, metric = model.get("cv_score"), str(model.get("metric"))
    if not isinstance(score, (int, float)) or math.isnan(score):
        return None
    if metric in RANKING_METRICS:
        ci = model.get("cv_interval")
        if isinstance(ci, (list, tuple)) and len(ci) == 2 and isinstance(ci[1], (int, float)) and ci[1] < 0.5:
            # folds of the model's own coding ranked the wrong way round beyond chance: most often
            # an event coded the other way (1 = alive), a structural choice, not a weak model
            return (f"the estimate is {metric} {score:.3f} (95% interval {ci[0]:.3f}–{ci[1]:.3f}): below ranking "
                    "the rows at random (0.5), so the model ranks the outcome the wrong way round; is the target "
                    "coded the other way (the event as 0, or 1 meaning alive)? Confirm its coding on the task card")
        return (f"the estimate is {metric} {score:.3f}: no better than ranking the rows at random (0.5); "
                "the model has no skill to validate") if score <= 0.5 else None
    if metric != "r2" or not score < 0:
        return None
    pooled = (f"; pooled over the folds (against the variance of every fold's targets) it scores "
              f"{statistics.fmean(shared):.3f}: it tells apart the rows of different folds, not those within one"
              if shared else "")
    return (f"the estimate is r2 {score:.3f} (the mean of each fold's own r2): on the rows of a fold, each fold's "
            f"own mean errs less than the model{pooled}. Whether the fold-own or the pooled score is the task's "
            "measure is for an expert to say")


def _worse_than_the_mean(mean: float, shared: bool) -> str:
    """Why a regression whose folds score below 0 on average is not a working model."""
    if shared:
        return (f"the model predicts worse than the mean of the target would: its out-of-fold predictions score "
                f"r2 {mean:.3f} against the variance of every fold's targets (below 0: a constant, the "
                "training mean, errs less)")
    return (f"the model predicts worse than the mean of the target would: its folds score r2 {mean:.3f} on "
            "average (below 0: each fold's own mean errs less)")
