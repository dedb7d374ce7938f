"""Target leakage: features that give the outcome away.

Signals, each general rather than tuned to a data set:
- a near-perfect single-feature score with the task's own metric (AUROC, R², C-index), or one
  far above every other feature;
- a column whose *missingness* alone predicts the outcome ("filled only when it happened");
- columns not known at prediction time (follow-up or derived from the outcome: see
  ``timing.py``), whatever their single-feature score;
- a category level seen (almost) only with one minority outcome and covering most of it;
- a column whose values *are* the outcome's class labels and mostly agree with it (the outcome
  recorded a second time, e.g. a later re-coding), even when noisy labels keep its score modest;
- regression: a few numeric columns that give the target as an exact linear formula (a total
  and its parts), or one that is the target computed again with another column (a change score,
  a ratio, a percent change: ``twins.py``, exact on every row however few); survival: a column
  filled in exactly for the rows with the event;
- a column named after the target, with a few codes that agree with it far beyond chance where
  filled (the target recorded again in another file: 'status_last' from a summary of visits);
- survival: a number that never ends before the survival time and rises with it (Spearman >= 0.9)
  where present: the same follow-up recorded again (another file's, extended by later visits).
An ordinary strong predictor scores well but not perfectly, and not far above all others; one
that scores near-perfectly but whose bins still mix the classes is an easy outcome, not a leak.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import spearmanr

from kernel_tools.diagnosis.columns import ColumnProfile, category_codes, numeric_values
from kernel_tools.diagnosis.options import drop, keep
from kernel_tools.diagnosis.outcome_halves import binned_from, coarsened_from, other_halves
from kernel_tools.diagnosis.registry import NO_CLOCK, Clock, KindData, declare
from kernel_tools.diagnosis.scale_items import items_of_target
from kernel_tools.diagnosis.scoring import auroc, bin_codes, metric_name, missingness_score, single_feature_score
from kernel_tools.diagnosis.twins import target_parts, target_twins
from kernel_tools.findings import Finding
from kernel_tools.vocabulary import Basis, Chart, FindingKind, TaskKind, metric_words

OUTCOME_NAME = re.compile(
    r"death|died|dead|deceas|mortal|outcome|discharg|exit|churn|cancel|complain|recur|relaps|"
    r"readmi|censor|surviv|cured|resolved|satisf|refund|default|fraud|result|final|end_?date|"
    r"date_?of_?(death|exit|event|end)",
    re.IGNORECASE,
)
ABSOLUTE = 0.9  # strength (2·AUROC−1, 2·C−1 or R²) that no honest single feature reaches
RELATIVE_FLOOR = 0.8
RELATIVE_FACTOR = 1.6
# an easy outcome, not a leak: a strong classification feature whose bins still mix the
# classes over a good share of rows (a leak records the outcome: its bins are pure)
MIN_IMPURE_SHARE = 0.15
CROWD_STRENGTH = 0.75  # features at least this strong; three of them make a crowd


def strength(score: float, kind: str) -> float:
    """0 = no signal, 1 = perfect, on one scale for AUROC, C-index and R².

    R² is squared first: an honest single predictor often explains 80-90% of a continuous
    outcome's variance (price vs size), while AUROC 0.9 from one feature is already rare.
    """
    if score is None or np.isnan(score):
        return 0.0
    if kind == TaskKind.REGRESSION:
        return max(0.0, score) ** 2
    return max(0.0, 2.0 * score - 1.0)


def feature_scores(frame: pd.DataFrame, profiles: dict[str, ColumnProfile], features: list[str],
                   outcome, folds: np.ndarray, clock: Clock = NO_CLOCK) -> dict[str, float]:
    """Out-of-fold single-feature score of every feature on the (sampled) rows (those ``clock``
    reaches before the diagnosis's deadline: the rest are named as not checked)."""
    scores = {}
    for c in clock.reach("single-feature score", features):
        codes = bin_codes(frame[c], profiles[c])
        scores[c] = single_feature_score(codes, outcome, folds)
    return scores


def _missingness_scores(frame, profiles, features, outcome, folds, clock: Clock = NO_CLOCK,
                        memo: Any = None) -> dict[str, float]:
    out = {}
    for c in clock.reach("missingness as a leak", features):
        miss = frame[c].isna().to_numpy()
        if profiles[c].parsed_as is not None or profiles[c].na_tokens:
            miss = miss | frame[c].astype(str).str.strip().str.lower().isin(
                [t.lower() for t in profiles[c].na_tokens]).to_numpy()
        rate = miss.mean()
        if 0.01 < rate < 0.99:
            out[c] = missingness_score(miss, outcome, folds, memo)
    return out


def _missingness_event_auroc(frame, profiles, features, outcome, clock: Clock = NO_CLOCK) -> dict[str, float]:
    """Survival: how well 'is it filled in' tells the event rows from the censored ones."""
    out = {}
    event = outcome.y == 1
    for c in clock.reach("missingness at the event", features):
        miss = frame[c].isna().to_numpy()
        if 0.01 < miss.mean() < 0.99:
            out[c] = max(auroc(miss.astype(float), event), auroc((~miss).astype(float), event))
    return out


def impure_share(codes: np.ndarray, y: np.ndarray, purity: float = 0.95) -> float:
    """Share of rows in bins where no class reaches ``purity`` (0 when the bins sort the
    classes as a rule would, e.g. 'low' = weight < 2500)."""
    table = np.zeros((int(codes.max()) + 1, int(y.max()) + 1))
    np.add.at(table, (codes, y), 1)
    size = table.sum(axis=1)
    mixed = table.max(axis=1) < purity * size
    return float(size[mixed].sum() / max(size.sum(), 1))


def _easy_outcome(c: str, frame, profiles, outcome) -> bool:
    """A strong feature of a classification outcome whose bins still mix the classes where
    they meet: an honest strong predictor (petal width for iris species), not a recording."""
    if outcome.kind != TaskKind.CLASSIFICATION:
        return False
    return impure_share(bin_codes(frame[c], profiles[c]), outcome.y) >= MIN_IMPURE_SHARE


FORMULA_R2 = 0.995  # out-of-fold R² of a linear formula that measured data never reaches
MAX_FORMULA_TERMS = 3
MAX_FORMULA_CANDIDATES = 40


def _oof_linear_r2(X: np.ndarray, y: np.ndarray, folds: np.ndarray) -> float:
    pred = np.empty_like(y)
    design = np.column_stack([X, np.ones(len(y))])
    for k in np.unique(folds):
        test = folds == k
        coef, *_ = np.linalg.lstsq(design[~test], y[~test], rcond=None)
        pred[test] = design[test] @ coef
    sst = float(((y - y.mean()) ** 2).sum())
    return 1.0 - float(((y - pred) ** 2).sum()) / sst if sst > 0 else float("nan")


def _linear_formula(frame, profiles, features, outcome, folds, clock: Clock = NO_CLOCK) -> dict[str, dict]:
    """Regression: up to three numeric columns that give the target as an exact linear formula
    (a total from its parts, a price from its minimum and maximum, 24 h minus hours asleep).
    Each alone may look like an ordinary predictor; together they are the target."""
    if outcome.kind != TaskKind.REGRESSION or len(frame) < 20:
        return {}
    numeric = [c for c in features if profiles[c].kind in ("numeric", "bool") or profiles[c].parsed_as == "numeric"]
    values = {c: numeric_values(frame[c], profiles[c]) for c in numeric}
    values = {c: v for c, v in values.items() if np.isnan(v).mean() <= 0.1 and np.nanstd(v) > 0}
    if not values:
        return {}
    y = outcome.y.astype(float)
    rows = np.all([~np.isnan(v) for v in values.values()], axis=0)
    if rows.sum() < 20:
        return {}
    y, f = y[rows], folds[rows]
    corr = {c: abs(np.corrcoef(v[rows], y)[0, 1]) for c, v in values.items()}
    pool = sorted(corr, key=lambda c: -np.nan_to_num(corr[c]))[:MAX_FORMULA_CANDIDATES]
    chosen: list[str] = []
    best = -np.inf
    for _ in range(MAX_FORMULA_TERMS):
        if clock.over():  # each round fits every candidate: past the deadline, name them instead
            clock.not_reached("target as a linear formula", [c for c in pool if c not in chosen])
            break
        trials = {c: _oof_linear_r2(np.column_stack([values[o][rows] for o in chosen + [c]]), y, f)
                  for c in pool if c not in chosen}
        if not trials:
            break
        c, r2 = max(trials.items(), key=lambda kv: np.nan_to_num(kv[1], nan=-np.inf))
        if not r2 > best + 1e-3:
            break
        chosen.append(c)
        best = r2
        if best >= FORMULA_R2:
            names = ", ".join(f"'{o}'" for o in chosen)
            return {o: {"reason": f"the target is a linear formula of {names} (out-of-fold R² "
                                  f"{best:.4f}): it is computed from them, not predicted",
                        "formula_columns": list(chosen), "formula_r2": round(best, 5)} for o in chosen}
    return {}


def _pure_levels(frame, profiles, features, outcome, clock: Clock = NO_CLOCK) -> dict[str, dict]:
    """Category levels that (almost) only occur with one minority class and cover most of it."""
    found: dict[str, dict] = {}
    if outcome.kind != TaskKind.CLASSIFICATION or outcome.n_classes < 2:
        return found
    y = outcome.y
    class_counts = np.bincount(y, minlength=outcome.n_classes)
    majority = int(np.argmax(class_counts))
    for c in clock.reach("levels tied to one class", features):
        prof = profiles[c]
        if prof.kind not in ("categorical", "bool") and not (prof.kind == "numeric" and prof.nunique <= 10):
            continue
        codes = category_codes(frame[c]) if prof.kind != "numeric" else bin_codes(frame[c], prof)
        codes = np.where(codes < 0, codes.max() + 1, codes)
        table = np.zeros((codes.max() + 1, outcome.n_classes))
        np.add.at(table, (codes, y), 1)
        level_n = table.sum(axis=1)
        for k in range(outcome.n_classes):
            if k == majority or class_counts[k] < 10:
                continue
            purity = np.divide(table[:, k], level_n, out=np.zeros_like(level_n), where=level_n > 0)
            coverage = table[:, k] / class_counts[k]
            hits = (purity >= 0.95) & (level_n >= 10)
            if hits.any() and coverage[hits].sum() >= 0.5:
                found[c] = {"class": str(outcome.classes[k]), "purity": round(float(purity[hits].min()), 4),
                            "class_coverage": round(float(coverage[hits].sum()), 4),
                            "reason": f"some of its values occur almost only with "
                                      f"{outcome.target}={outcome.classes[k]!s} and cover most of them"}
                break
    return found


EVENT_RECORDED = 0.98  # share of rows whose event a column's level decides: the event recorded again
MIN_SIDE = 5  # rows with and without the event needed to say so


def _event_recorded(frame, profiles, features, outcome, clock: Clock = NO_CLOCK) -> dict[str, dict]:
    """Survival: a column of a few codes whose level decides whether the row had the event (each
    level all events or all censored: 'censor' / 'death' / 'relapse'): the event's type recorded
    with it. A C-index ranks times, so alone it scores such a column modestly and it goes unseen."""
    if outcome.kind != TaskKind.SURVIVAL or outcome.y is None:
        return {}
    ok = np.ones(len(frame), dtype=bool) if outcome.valid is None else np.asarray(outcome.valid, dtype=bool)
    y = np.asarray(outcome.y)[ok]
    if min(int((y == 1).sum()), int((y == 0).sum())) < MIN_SIDE:
        return {}
    found = {}
    for c in clock.reach("columns recording the event", features):
        if not 2 <= profiles[c].nunique <= MAX_CODES or frame[c][ok].isna().any():
            continue
        codes = category_codes(frame[c][ok].astype("string"))
        events = np.bincount(codes, weights=y)
        rows = np.bincount(codes)
        decided = np.maximum(events, rows - events).sum() / len(y)
        event_levels = int((events > rows / 2).sum())
        if decided >= EVENT_RECORDED and 0 < event_levels < len(rows):
            found[c] = {"event_decided_share": round(float(decided), 4),
                        "reason": f"its value says whether the row had the event: on {decided:.0%} of rows "
                                  f"its level alone gives '{outcome.target}' (each level all events or all "
                                  "censored): the event's type recorded with it"}
    return found


# Label sets too generic to show that a column is a copy of the outcome (many features are flags)
GENERIC_LABELS = {"0", "1", "-1", "true", "false", "yes", "no", "y", "n", "t", "f", "none", "unknown"}


def _label_copies(frame, profiles, features, outcome, clock: Clock = NO_CLOCK) -> dict[str, dict]:
    """Categorical columns spelled with the outcome's own (non-generic) class labels that agree
    with it far beyond chance: a recoded copy of the outcome, whatever its name."""
    if outcome.kind != TaskKind.CLASSIFICATION or outcome.n_classes < 2:
        return {}
    labels = [str(c).strip().casefold() for c in outcome.classes]
    if len(set(labels)) < outcome.n_classes or set(labels) <= GENERIC_LABELS:
        return {}
    valid = outcome.y >= 0
    target = np.asarray(labels, dtype=object)[np.where(valid, outcome.y, 0)]
    chance = np.bincount(outcome.y[valid]).max() / max(int(valid.sum()), 1)
    found = {}
    for c in clock.reach("copies of the outcome", features):
        if profiles[c].kind not in ("categorical", "bool", "text"):
            continue
        values = frame[c].astype("string").str.strip().str.casefold().to_numpy(dtype=object, na_value=None)
        present = valid & pd.notna(values)
        spelled = set(values[present]) if present.any() else set()
        if len(spelled & set(labels)) < 2 or not spelled <= set(labels) or present.sum() < 20:
            continue
        agreement = float(np.mean(values[present] == target[present]))
        if chance < 1 and (agreement - chance) / (1 - chance) >= 0.5:
            found[c] = {"agreement": round(agreement, 4), "chance_agreement": round(float(chance), 4),
                        "reason": f"its values are the outcome's own labels and agree with "
                                  f"{outcome.target} on {agreement:.0%} of rows (chance {chance:.0%}): "
                                  "it looks like the outcome recorded again"}
    return found


def timed_leaks(timing: dict[str, dict], scores: dict[str, float], outcome, n: int) -> list[Finding]:
    """Leakage findings for columns placed after the index by evidence found once the leakage
    check ran (the table's structure: the partner of a leaked column)."""
    kind = outcome.kind
    strengths = {c: strength(s, kind) for c, s in scores.items()}
    rank = {c: i + 1 for i, c in enumerate(sorted(strengths, key=lambda c: strengths[c], reverse=True))}
    return [_leakage_finding(c, ev, scores, strengths, metric_name(kind), rank.get(c), n) for c, ev in timing.items()]


# found by the runner's leakage check (and by a join's, diagnose_join); suspected_leakage is the
# same leak seen from the model's side: the engine's model audit raises it from the scores
declare(FindingKind.TARGET_LEAKAGE, KindData(chart=Chart.LEAKAGE, basis=Basis.SAMPLE))
declare(FindingKind.SUSPECTED_LEAKAGE, KindData(chart=Chart.MODEL_SCORE, basis=Basis.SAMPLE))


def find_leakage(frame: pd.DataFrame, profiles: dict[str, ColumnProfile], features: list[str],
                 outcome, folds: np.ndarray, scores: dict[str, float],
                 follow_up: str | None = None, timing: dict[str, dict] | None = None,
                 clock: Clock = NO_CLOCK, memo: Any = None) -> list[Finding]:
    """Leakage findings from the sampled rows and the single-feature scores already computed.

    ``follow_up`` is a column that looks like a follow-up time next to a classification target;
    ``timing`` the evidence of the columns recorded after the prediction time (timing.py);
    ``clock`` the diagnosis's deadline, read between the columns of each check (the columns a
    check did not reach are named by the diagnosis, never silently left out); ``memo`` the
    missingness scores already computed (:func:`~.scoring.missingness_score`).
    """
    kind = outcome.kind
    metric = metric_name(kind)
    n = len(frame)
    strengths = {c: strength(s, kind) for c, s in scores.items()}
    ranked = sorted(strengths, key=lambda c: strengths[c], reverse=True)
    flagged = _strong_single_features(frame, profiles, outcome, scores, strengths, ranked, metric)
    for c, s in _missingness_scores(frame, profiles, features, outcome, folds, clock, memo).items():
        if strength(s, kind) >= 0.8 and c not in flagged:
            flagged[c] = {"reason": f"whether it is filled in predicts the outcome ({metric_words(metric)} of "
                                    f"the missingness pattern {s:.3f}): it is likely recorded only "
                                    "when the event happened", "missingness_score": round(s, 4)}
    if kind == TaskKind.SURVIVAL:  # filled exactly for the events (cause of death, reason for leaving)
        for c, a in _missingness_event_auroc(frame, profiles, features, outcome, clock).items():
            if strength(a, "classification") >= 0.9 and c not in flagged:
                flagged[c] = {"reason": f"it is filled in (almost) exactly for the rows with the event "
                                        f"(AUROC of its missingness for '{outcome.target}' {a:.3f}): "
                                        "it is recorded because the event happened",
                              "missingness_event_auroc": round(a, 4)}
    for c, ev in {**_outcome_copies(frame, profiles, features, outcome),
                  **_duration_copies(frame, profiles, features, outcome, clock)}.items():
        flagged[c] = {**flagged.get(c, {}), **ev}
    twins = target_twins(frame, profiles, features, outcome, clock)
    for c, ev in twins.items():
        flagged[c] = {**flagged.get(c, {}), **ev}
    for c, ev in target_parts(frame, profiles, features, outcome, clock).items():
        if c not in flagged:
            flagged[c] = ev
    # the baseline a change score was computed from is part of the same formula, not a leak
    partners = {ev["twin_partner"] for ev in twins.values()} - set(twins)
    for c, ev in _linear_formula(frame, profiles, features, outcome, folds, clock).items():
        if c not in flagged and not (c in partners and set(ev["formula_columns"]) <= set(twins) | partners):
            flagged[c] = ev
    for c, ev in {**other_halves(frame, profiles, features, outcome),
                  **binned_from(frame, profiles, features, outcome),
                  **coarsened_from(frame, profiles, features, outcome),
                  **items_of_target(frame, profiles, features, outcome)}.items():
        if c not in flagged:
            flagged[c] = ev
    for c, ev in (timing or {}).items():
        flagged[c] = {**flagged.get(c, {}), **ev}
    crowd = [c for c, g in strengths.items() if g >= CROWD_STRENGTH]
    for c, ev in _pure_levels(frame, profiles, features, outcome, clock).items():
        # when many features predict the outcome well, a level tied to one class is an easy
        # outcome, not a recording of it
        if c not in flagged and len([o for o in crowd if o != c]) < 3:
            flagged[c] = ev
    for c, ev in _event_recorded(frame, profiles, features, outcome, clock).items():
        flagged[c] = {**flagged.get(c, {}), **ev}
    for c, ev in _label_copies(frame, profiles, features, outcome, clock).items():
        flagged[c] = {**ev, **flagged.get(c, {})}
    if kind == TaskKind.CLASSIFICATION and follow_up in scores and follow_up not in flagged:
        if strength(scores[follow_up], kind) >= 0.3:
            flagged[follow_up] = {"reason": f"it looks like a follow-up time ({metric_words(metric)} "
                                            f"{scores[follow_up]:.3f}): follow-up ends with the outcome, "
                                            "so it is not known when a prediction is made "
                                            "(consider a survival model instead)",
                                  # the verdict reads these: several codes next to a follow-up
                                  # time are event types and censoring (competing risks)
                                  "follow_up_time": True, "classes": int(outcome.n_classes)}
    rank = {c: i + 1 for i, c in enumerate(ranked)}
    return [_leakage_finding(c, ev, scores, strengths, metric, rank.get(c), n) for c, ev in flagged.items()]


def _strong_single_features(frame: pd.DataFrame, profiles: dict[str, ColumnProfile], outcome,
                            scores: dict[str, float], strengths: dict[str, float], ranked: list[str],
                            metric: str) -> dict[str, dict]:
    """Features that alone predict the outcome too well: almost perfectly (unless the outcome is
    easy), far better than every other feature, or strongly while named like an outcome."""
    flagged: dict[str, dict] = {}
    for c in ranked:
        g = strengths[c]
        rest = [strengths[o] for o in ranked if o != c and strengths[o] < ABSOLUTE]
        second = max(rest) if rest else 0.0
        if g >= ABSOLUTE and not _easy_outcome(c, frame, profiles, outcome):
            flagged[c] = {"reason": f"on its own it predicts the outcome almost perfectly "
                                    f"({metric_words(metric)} {scores[c]:.3f})"}
        elif g >= RELATIVE_FLOOR and g >= RELATIVE_FACTOR * second and len(rest) >= 3:
            flagged[c] = {"reason": f"on its own it predicts the outcome far better than any other "
                                    f"feature ({metric_words(metric)} {scores[c]:.3f})"}
        elif g >= 0.6 and OUTCOME_NAME.search(c) and g >= 1.3 * second:
            flagged[c] = {"reason": f"it is named like an outcome and predicts it strongly "
                                    f"({metric_words(metric)} {scores[c]:.3f})"}
    return flagged


MAX_CODES = 10  # an outcome's codes: a column with more values is a measurement, not a copy of them
COPY_AGREEMENT = 0.5  # agreement with the outcome beyond chance (0 = chance, 1 = always) of a copy


def _outcome_copies(frame, profiles, features, outcome) -> dict[str, dict]:
    """Columns named after the target (its name as a word: 'status_last', 'status.y') holding a few
    codes that, where filled, agree with it far beyond chance: the outcome recorded again in
    another file. Its single-feature score can stay modest (a C-index counts the ties of a few
    codes as chance, and the rows where it is missing as no signal)."""
    target = outcome.target
    if outcome.kind == TaskKind.REGRESSION or not target or target not in frame.columns:
        return {}  # a measure named after a numeric target ('bdi_pre' next to 'bdi') is its baseline
    word = re.compile(rf"(^|[_\W]){re.escape(str(target))}([_\W]|$)", re.IGNORECASE)
    found = {}
    for c in features:
        if c == target or not word.search(c) or not 2 <= profiles[c].nunique <= MAX_CODES:
            continue
        filled = frame[c].notna().to_numpy() & (outcome.y >= 0)
        if filled.sum() < 20:
            continue
        said, truth = _as_outcome(frame[c], frame[target], outcome)
        agreement = float(np.mean(said[filled] == truth[filled]))
        chance = float(np.bincount(truth[filled]).max() / filled.sum())
        if chance < 1 and (agreement - chance) / (1 - chance) >= COPY_AGREEMENT:
            found[c] = {"agreement": round(agreement, 4), "chance_agreement": round(chance, 4),
                        "rows_compared": int(filled.sum()),
                        "reason": f"it is named after '{target}' and agrees with it on {agreement:.0%} of the "
                                  f"{int(filled.sum())} rows where it is filled (chance {chance:.0%}): the "
                                  "outcome recorded again"}
    return found


def _as_outcome(column: pd.Series, target: pd.Series, outcome) -> tuple[np.ndarray, np.ndarray]:
    """A column of codes read as the outcome (survival: censored where it holds a censored code of
    the target, an event otherwise; classes: its own values) and the outcome, as integer codes."""
    def norm(s: pd.Series) -> pd.Series:
        number = pd.to_numeric(s, errors="coerce")
        return number.astype(float).astype("string") if number.notna().sum() == s.notna().sum() else (
            s.astype("string").str.strip().str.casefold())
    col, tgt = norm(column), norm(target)
    if outcome.kind == TaskKind.SURVIVAL:
        censored = set(tgt[outcome.y == 0].dropna())
        return (~col.isin(censored)).to_numpy(dtype=int), outcome.y.astype(int)
    labels = {v: i for i, v in enumerate(pd.unique(tgt.dropna()))}
    return col.map(labels).fillna(-1).to_numpy(dtype=int), tgt.map(labels).fillna(-1).to_numpy(dtype=int)


DURATION_COPY = 0.9  # Spearman with the survival time that no baseline value reaches
NOT_BEFORE = 0.99  # share of rows where it ends no earlier than the survival time (within 5%)


def _duration_copies(frame, profiles, features, outcome, clock: Clock = NO_CLOCK) -> dict[str, dict]:
    """Survival: numbers that rise with the survival time where present and never end before it:
    the same follow-up recorded again (another file's follow-up of the subject, extended by
    later visits). An age at entry or the time of an event during follow-up ends before it."""
    if outcome.kind != TaskKind.SURVIVAL or outcome.duration is None:
        return {}
    t = np.asarray(outcome.duration, dtype=float)
    found = {}
    for c in clock.reach("copies of the survival time", features):
        prof = profiles[c]
        if not prof.holds_numbers or prof.nunique < 10:
            continue
        x = numeric_values(frame[c], prof)
        ok = np.isfinite(x) & np.isfinite(t) & (t > 0)
        if ok.sum() < 20 or float(np.mean(x[ok] >= 0.95 * t[ok])) < NOT_BEFORE:
            continue
        rho = float(spearmanr(x[ok], t[ok]).statistic)
        if rho >= DURATION_COPY:
            found[c] = {"reason": f"it rises with the survival time '{outcome.time}' (Spearman {rho:.2f} on the "
                                  f"{int(ok.sum())} rows where it is filled) and never ends before it: the same "
                                  "follow-up recorded again", "spearman_with_duration": round(rho, 4),
                        "rows_compared": int(ok.sum())}
    return found


def _leakage_finding(c: str, ev: dict, scores: dict[str, float], strengths: dict[str, float], metric: str,
                     rank: int | None, n: int) -> Finding:
    """The target_leakage finding of one flagged column: critical when it is near perfect, recorded
    after the prediction time or a formula of other columns; drop it, or keep it."""
    g = strengths.get(c, 0.0)
    severity = "critical" if g >= 0.96 or "timing" in ev or "formula_r2" in ev or "twin_formula" in ev else "warning"
    evidence = {"metric": metric, "score": round(scores.get(c, float("nan")), 4),
                "rank": rank, "features_scored": len(scores), "sample_size": n,
                "next_best_score": _next_best(scores, strengths, c), **ev}
    timed = ev.get("timing") in ("follow_up", "outcome_derived")
    summary = (f"'{c}' is not known when a prediction is made: {ev['reason']}." if timed
               else f"'{c}' may give the outcome away: {ev['reason']}.")
    return Finding(
        "target_leakage", [c], severity, summary, evidence,
        [drop([c], "recorded after the prediction time" if timed else "may give the outcome away",
              "if it is truly known at prediction time, the model loses a real predictor"),
         keep("Keep it: it is known before the outcome, at the time a prediction is made.",
              "if it is recorded after (or because of) the outcome, every score is inflated "
              "and the model fails in use")],
        "leakage",
    )


def _next_best(scores, strengths, c) -> float | None:
    others = [o for o in strengths if o != c]
    if not others:
        return None
    best = max(others, key=strengths.get)
    return round(scores[best], 4)
