"""``diagnose``: run every detector of the taxonomy once and collect the findings.

Cheap, exact checks (missingness, duplicates, dtypes, categories, outliers) look at every row;
model-based checks (leakage scores, label issues, missingness mechanism, redundancy) run on a
stratified sample whose size is stated in the evidence.
"""

from __future__ import annotations

import re
import time as _time

import numpy as np
import pandas as pd

from kernel_tools.diagnosis import (categories, dtypes, duplicates, entities, labels, leakage, missing,
                                   outliers, shift, survival, units)
from kernel_tools.diagnosis.columns import profile_columns
from kernel_tools.diagnosis.inputs import check_arguments
from kernel_tools.diagnosis.scoring import (bin_codes, fold_ids, metric_name, single_feature_score,
                                           stratified_sample)
from kernel_tools.diagnosis.task import Outcome, duration_candidates, find_duration, infer_task
from kernel_tools.findings import Diagnosis, Finding

DEFAULT_SAMPLE = 10_000
_SEVERITY_ORDER = {"critical": 0, "warning": 1, "info": 2}
_KIND_ORDER = {k: i for i, k in enumerate((
    "target_leakage", "repeated_measurements", "survival_setup", "id_column", "train_test_shift",
    "duplicate_rows", "label_issues", "missing_values", "numeric_as_text", "mixed_units",
    "inconsistent_categories", "outliers", "class_imbalance", "redundant_features",
    "constant_column", "free_text", "join_keys"))}


def _alternatives(names: list[str]) -> bool:
    """Several columns whose names share their first word (time.car, time.bus)."""
    stems = {re.split(r"[_\W]+", n.strip().lower())[0] for n in names}
    return len(names) >= 2 and len(stems) == 1


def _sort(findings: list[Finding]) -> list[Finding]:
    return sorted(findings, key=lambda f: (_SEVERITY_ORDER[f.severity], _KIND_ORDER.get(f.kind, 99)))


def diagnose(
    df: pd.DataFrame,
    target: str | None = None,
    task: str | None = None,
    time: str | None = None,
    id: str | None = None,
    test: pd.DataFrame | None = None,
    sample: int | None = DEFAULT_SAMPLE,
    random_state: int = 0,
) -> Diagnosis:
    """Find the data-centric issues that stand between ``df`` and a valid model.

    Parameters
    ----------
    df : the data (never modified).
    target : the outcome column; for survival, the event indicator.
    task : "classification" | "regression" | "survival"; inferred from the target when None.
    time : the duration (follow-up) column for survival; for other tasks, the visit/order column.
    id : the entity id (patient, customer) when known; otherwise one is looked for.
    test : a held-out frame; adds a train_test_shift finding.
    sample : rows used by model-based checks (stratified); None uses every row.
    random_state : seed of the sample and the folds.
    """
    started = _time.perf_counter()
    check_arguments(df, target, task, time, id, test, sample)
    profiles = profile_columns(df)
    outcome = infer_task(df, profiles, target, task, time)
    duration = outcome.time if outcome.kind == "survival" else None
    visit_given = time if outcome.kind != "survival" else None
    structural = {c for c in (target, duration, id) if c is not None}

    n = len(df)
    valid = outcome.valid if outcome.valid is not None else np.ones(n, dtype=bool)
    valid_pos = np.flatnonzero(valid)
    strata = outcome.y[valid_pos] if outcome.kind in ("classification", "survival") and target else None
    pos = valid_pos[stratified_sample(len(valid_pos), sample, strata, random_state)]
    frame = df.iloc[pos]
    sub = outcome.take(pos) if target else Outcome(outcome.kind, None)
    sub_strata = sub.y if strata is not None else None
    folds = fold_ids(len(frame), sub_strata, random_state)

    def score_of(column: str) -> float | None:
        if target is None:
            return None
        return single_feature_score(bin_codes(frame[column], profiles[column]), sub, folds)

    findings: list[Finding] = []
    id_findings = entities.find_id_columns(df, profiles, structural, score_of)
    # a name or code that repeats may be the entity rather than a row label: let the entity
    # search judge it first
    unique_ids = {f.columns[0] for f in id_findings if not f.evidence["looks_like"].startswith("high")}
    entity = entities.find_entity(df, profiles, target, id, visit_given, structural | unique_ids)
    id_findings = [f for f in id_findings if f.columns[0] != entity.id]
    id_cols = [f.columns[0] for f in id_findings]
    findings += id_findings
    rm = entities.repeated_measurements_finding(entity, outcome.kind)
    if rm is not None:
        findings.append(rm)
    entity_cols = {c for c in (entity.id, entity.visit) if c}

    usable = [c for c, p in profiles.items() if p.kind != "empty" and p.nunique > 1]
    features = [c for c in usable if c not in structural | set(id_cols) | entity_cols]
    scores: dict[str, float] = {}
    leak_cols: list[str] = []
    if target is not None:
        scores = leakage.feature_scores(frame, profiles, features, sub, folds)
        # several classes next to times named alike (time.car, time.bus ... of a choice) are
        # attributes of the alternatives; a time next to outcome states is a follow-up
        follow_up = (find_duration(df, profiles, structural) if outcome.kind == "classification" and (
            outcome.n_classes == 2 or not _alternatives(duration_candidates(df, profiles, structural)))
            else None)
        leaks = leakage.find_leakage(frame, profiles, features, sub, folds, scores, follow_up)
        leak_cols = [f.columns[0] for f in leaks]
        findings += leaks
        model_features = [c for c in features if c not in leak_cols and profiles[c].kind != "text"]
        label_finding = labels.find_label_issues(frame, profiles, model_features, sub, random_state)
        findings += [f for f in (label_finding, labels.find_class_imbalance(outcome),
                                 survival.find_survival_setup(df, outcome)) if f is not None]

    findings += missing.find_missing(df, frame, profiles, structural, sub if target else None, folds)
    outlier_findings, outlier_rates = outliers.find_outliers(
        df, frame, profiles, structural | set(id_cols) | {entity.id} - {None})
    findings += outlier_findings
    findings += dtypes.find_dtype_issues(df, profiles, structural | set(id_cols))
    dup = duplicates.find_duplicate_rows(df, id_cols)
    if dup is not None:
        findings.append(dup)
    findings += duplicates.find_redundant(frame, profiles, [c for c in features if c not in leak_cols])
    findings += categories.find_inconsistent(profiles, set(id_cols) | {duration} - {None})
    findings += units.find_mixed_units(profiles, structural - {target})
    findings += units.find_numeric_units(df, profiles, structural | set(id_cols) | entity_cols)
    if test is not None:
        found = shift.find_shift(df, test, profiles, structural | set(id_cols), random_state)
        if found is not None:
            findings.append(found)

    task_info = {
        "kind": outcome.kind, "target": target,
        "time": duration, "event": target if outcome.kind == "survival" else None,
        "id": entity.id or id, "visit": entity.visit or visit_given, "reason": outcome.reason,
    }
    if target is not None:
        task_info["metric"] = metric_name(outcome.kind)
        task_info["target_missing"] = int(n - valid.sum())
    column_stats = {
        "missing_rate": {c: round(p.missing_rate, 4) for c, p in profiles.items() if p.n_missing},
        "feature_scores": {c: round(s, 4) for c, s in sorted(
            scores.items(), key=lambda kv: -np.nan_to_num(kv[1]))},
        "metric": metric_name(outcome.kind) if target else None,
        "outlier_rate": outlier_rates,
        "leakage": leak_cols,
    }
    return Diagnosis(_sort(findings), task_info, [int(df.shape[0]), int(df.shape[1])],
                     round(_time.perf_counter() - started, 3), int(len(frame)), column_stats)
