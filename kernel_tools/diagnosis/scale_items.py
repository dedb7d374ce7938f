"""A target that is a score of a questionnaire's items, beside the items themselves.

A survey's scale (a sum of answers, or a latent score fitted to them) is often shipped next to
the answers it was computed from: eight items coded 0/1/2 and a "pro-choice scale" of them. Each
item alone is an ordinary, moderately strong predictor, and no three of them make the score an
exact linear formula (a latent score is not linear in its items, and a scale has more than three),
so neither the single-feature scores nor the linear formula catch them. Together they are the
target measured again: a model fitted on them scores near perfectly and predicts nothing new.

The test reads the data, not names: columns sharing one small coding (the same 2–7 whole-number
values) are a questionnaire's items; when the total of at least :data:`MIN_ITEMS` of them ranks
the rows as the target does (Spearman ≥ :data:`RANK_AGREEMENT` for a score, a near-perfect
separation for two classes), the target is a score of those items. Ordinary predictors coded the
same way (several yes/no conditions beside a risk) do not add up to the outcome that closely.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import rankdata, spearmanr

from kernel_tools.diagnosis.columns import ColumnProfile, numeric_values
from kernel_tools.vocabulary import TaskKind

MIN_ITEMS = 3  # a scale of fewer items is a formula of a few columns (leakage._linear_formula)
MAX_CODES = 7  # an item's answers: at most this many whole-number codes
RANK_AGREEMENT = 0.95  # Spearman of the items' total with a score target
SEPARATION = 0.99  # AUROC of the items' total for a two-class target
MIN_ROWS = 30  # rows with every item and the target present
SAMPLE_ROWS = 5_000  # a total that is the target shows on any sample
HOPELESS = 0.7  # a total this far from the target: no item left out would bring it to the bar


def items_of_target(frame: pd.DataFrame, profiles: dict[str, ColumnProfile], features: list[str],
                    outcome) -> dict[str, dict]:
    """``{item: evidence}`` for the features whose total is the target again (module docstring):
    a regression's score or a two-class target; ``outcome.y`` its values on ``frame``'s rows."""
    if outcome.y is None or outcome.target is None:
        return {}
    two_classes = outcome.kind == TaskKind.CLASSIFICATION and outcome.n_classes == 2
    if outcome.kind != TaskKind.REGRESSION and not two_classes:
        return {}
    rows = slice(None) if len(frame) <= SAMPLE_ROWS else slice(0, SAMPLE_ROWS)
    y = np.asarray(pd.factorize(np.asarray(outcome.y)[rows], sort=True)[0] if two_classes
                   else np.asarray(outcome.y, dtype=float)[rows], dtype=float)
    if two_classes:
        y[np.asarray(pd.isna(np.asarray(outcome.y)[rows]))] = np.nan
    found: dict[str, dict] = {}
    for codes, items in _item_groups(frame.iloc[rows], profiles, features).items():
        x = np.column_stack(list(items.values()))
        ok = np.isfinite(x).all(axis=1) & np.isfinite(y)
        if ok.sum() < MIN_ROWS:
            continue
        names, agreement = _scale(list(items), x[ok], y[ok], two_classes)
        if not agreement >= (SEPARATION if two_classes else RANK_AGREEMENT):
            continue
        shown = ", ".join(f"'{c}'" for c in names[:8]) + (f" and {len(names) - 8} more" if len(names) > 8 else "")
        measure = "separates its classes (AUROC" if two_classes else "ranks the rows as the target does (Spearman"
        said = (f"the target is a score of {len(names)} items coded {_codes_words(codes)} ({shown}): their total "
                f"{measure} {agreement:.3f} on {int(ok.sum())} rows), so each item is part of the target measured "
                "again, not a predictor of it")
        for c in names:
            found[c] = {"reason": said, "timing": "outcome_derived", "scale_items": names,
                        "scale_agreement": round(agreement, 4)}
    return found


def _agreement(total: np.ndarray, y: np.ndarray, two_classes: bool) -> float:
    if np.ptp(total) == 0:
        return 0.0
    return _auroc(total, y) if two_classes else abs(float(spearmanr(total, y).statistic))


def _scale(names: list[str], x: np.ndarray, y: np.ndarray, two_classes: bool) -> tuple[list[str], float]:
    """The items of one coding whose total agrees best with the target, and that agreement: each
    item turned to rise with the target (a reversed item counts backwards), then the items the total
    does as well without left out one by one (a predictor coded like the items, a party on a 0/1/2
    scale beside eight 0/1/2 answers, is no item of the scale; nor is a rare flag beside the two
    other outcomes that give a two-class target away). Fewer than :data:`MIN_ITEMS` left: no scale."""
    signs = np.array([1.0 if (_agreement_sign(x[:, j], y)) >= 0 else -1.0 for j in range(x.shape[1])])
    x = x * signs
    kept = list(range(x.shape[1]))
    best = _agreement(x[:, kept].sum(axis=1), y, two_classes)
    while len(kept) > 2 and best >= HOPELESS:
        trials = {j: _agreement(x[:, [k for k in kept if k != j]].sum(axis=1), y, two_classes) for j in kept}
        j, score = max(trials.items(), key=lambda kv: kv[1])
        if score < best - 1e-3:
            break  # every item left counts: the total is worse without any of them
        kept.remove(j)  # an item the total does as well without is none of the scale's
        best = max(best, score)
    if len(kept) < MIN_ITEMS:
        return [], 0.0  # two columns that give the target: another rule's (the other destinations, a formula)
    return [names[j] for j in kept], best


def _agreement_sign(x: np.ndarray, y: np.ndarray) -> float:
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        return 0.0
    return float(np.nan_to_num(spearmanr(x, y).statistic))


def _item_groups(frame: pd.DataFrame, profiles: dict[str, ColumnProfile],
                 features: list[str]) -> dict[tuple[float, ...], dict[str, np.ndarray]]:
    """The numeric features grouped by their coding (the set of whole-number values they take,
    2 to :data:`MAX_CODES` of them); groups of at least :data:`MIN_ITEMS`."""
    groups: dict[tuple[float, ...], dict[str, np.ndarray]] = {}
    for c in features:
        prof = profiles[c]
        if not (prof.kind in ("numeric", "bool") or prof.parsed_as == "numeric") or not 2 <= prof.nunique <= MAX_CODES:
            continue
        v = np.asarray(numeric_values(frame[c], prof), dtype=float)
        present = v[np.isfinite(v)]
        if present.size == 0 or not np.all(present == np.round(present)):
            continue
        groups.setdefault(tuple(np.unique(present)), {})[c] = v
    return {codes: items for codes, items in groups.items() if len(items) >= MIN_ITEMS}


def _auroc(score: np.ndarray, y: np.ndarray) -> float:
    """How well ``score`` separates the two classes of ``y`` (0/1), either way round."""
    pos = y == 1
    n1, n0 = int(pos.sum()), int((~pos).sum())
    if not n1 or not n0:
        return 0.0
    ranks = rankdata(score)
    auc = (ranks[pos].sum() - n1 * (n1 + 1) / 2) / (n1 * n0)
    return float(max(auc, 1 - auc))


def _codes_words(codes: tuple[float, ...]) -> str:
    return "/".join(f"{c:g}" for c in codes)


__all__ = ["items_of_target"]
