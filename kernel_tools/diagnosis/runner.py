"""``diagnose``: run every detector of the taxonomy once and collect the findings.

Cheap, exact checks (missingness, duplicates, dtypes, categories, outliers) look at every row;
model-based checks (leakage scores, label issues, missingness mechanism, redundancy) run on a
stratified sample whose size is stated in the evidence.
"""

from __future__ import annotations

import dataclasses
import functools
import re
import time as _time
from typing import Any

import numpy as np
import pandas as pd

from kernel_tools.diagnosis import (
    codebook,
    entities,
    groupings,
    leakage,
    periods,
    reuse,
    stray_rows,
    structure,  # noqa: F401  (registers the timeline's structure and names sources)
    timing,
    wide,
)
from kernel_tools.diagnosis.columns import ColumnProfile, profile_column
from kernel_tools.diagnosis.event_codes import code_text
from kernel_tools.diagnosis.inputs import check_arguments, check_column
from kernel_tools.diagnosis.registry import NO_CLOCK, Clock, Context, Detectors
from kernel_tools.diagnosis.scoring import bin_codes, fold_ids, metric_name, single_feature_score, stratified_sample
from kernel_tools.diagnosis.structure import strong_after
from kernel_tools.diagnosis.task import Outcome, ask_unnamed_follow_up, duration_candidates, find_duration, infer_task
from kernel_tools.diagnosis.timeline import TIMING_OF, ColumnTimeline, TimelineContext, build_timeline
from kernel_tools.findings import Diagnosis, Finding, to_json_safe
from kernel_tools.frames import to_pandas
from kernel_tools.vocabulary import Confidence, EvidenceSource, TaskKind, kind_rank, severity_rank

DEFAULT_SAMPLE = 10_000


def _alternatives(names: list[str]) -> bool:
    """Several columns whose names share their first word (time.car, time.bus)."""
    stems = {re.split(r"[_\W]+", n.strip().lower())[0] for n in names}
    return len(names) >= 2 and len(stems) == 1


def _sort(findings: list[Finding]) -> list[Finding]:
    return sorted(findings, key=lambda f: (severity_rank(f.severity), kind_rank(f.kind)))


def diagnose(
    df: pd.DataFrame,
    target: str | None = None,
    task: str | None = None,
    time: str | None = None,
    id: str | None = None,
    test: pd.DataFrame | None = None,
    sample: int | None = DEFAULT_SAMPLE,
    random_state: int = 0,
    index: str | None = None,
    dictionary: Any = None,
    budget: float | None = None,
    max_columns: int | None = wide.MAX_COLUMNS,
    groups: str | None = None,
) -> Diagnosis:
    """Find the data-centric issues that stand between ``df`` and a valid model.

    Parameters
    ----------
    df : the data (never modified): pandas, or a polars / Arrow PyCapsule table, converted once here.
    target : the outcome column; for survival, the event indicator.
    task : "classification" | "regression" | "survival"; inferred from the target when None.
    time : the duration (follow-up) column for survival; for other tasks, the visit/order column.
    id : the entity id (patient, customer) when known; otherwise one is looked for; ``""``: there is
        none, each row is its own subject (the expert's answer when a repeating column is not one).
    test : a held-out frame; adds a train_test_shift finding.
    sample : rows used by model-based checks (stratified); None uses every row.
    random_state : seed of the sample and the folds.
    index : when a prediction is made: "first" (each entity's first record), "row" (each row's
        own time) or a column of dates/times; inferred when None (``task["index"]`` says how).
    dictionary : the study's codebook (a :class:`~kernel_tools.dictionary.Dictionary` or a path
        :func:`~kernel_tools.read_dictionary` reads): its timing, identifiers, choices and ranges
        become evidence (:mod:`kernel_tools.diagnosis.codebook`), and a REDCap export's layout is read.
    budget : seconds the diagnosis may take; checks not started by then are skipped and named
        in a ``diagnosis_incomplete`` finding (None: no limit).
    max_columns : above this many columns, the columns named and a random sample of the others
        are checked, and a ``diagnosis_incomplete`` finding names the rest (None: every column).
    groups : a column grouping subjects (a matched set, a site) that the expert chose to keep
        together in the split: like the id, it is no feature, no entity and not asked about again.

    A detector that fails does not stop the others: it becomes a ``diagnosis_incomplete``
    finding, and the diagnosis is partial.

    A Dask DataFrame is diagnosed without loading it (:mod:`kernel_tools.lazy.diagnosis`):
    counts over every row in a few passes, model-based checks on a sample of whole entities;
    each finding's ``evidence["basis"]`` says which.
    """
    started = _time.perf_counter()
    df = to_pandas(df)
    test = to_pandas(test, "test") if test is not None else None
    check_arguments(df, target, task, time, id, test, sample, index)
    if groups is not None:
        check_column(df, groups, "groups")
    dictionary = codebook.as_dictionary(dictionary)
    run = Detectors(deadline=started + wide.BUDGET_SHARE * budget if budget else None)
    full_shape = [int(df.shape[0]), int(df.shape[1])]
    df, unchecked = wide.sample_columns(df, max_columns, (target, time, id, index, groups), random_state)
    if test is not None and unchecked:
        test = test[[c for c in test.columns if str(c) not in set(unchecked)]]
    memo = reuse.Memo(df)
    diagnosis = _diagnose_rows(df, run, target, task, time, id, test, sample, random_state, index, started,
                               dictionary, memo, groups)
    memo.keep()
    gap = wide.incomplete(full_shape[1], unchecked, run.skipped, budget, run.clock.unreached)
    if gap is not None:
        diagnosis.findings = _sort([*diagnosis.findings, gap])
    diagnosis.shape = full_shape
    return diagnosis


def _diagnose_rows(df: pd.DataFrame, run: Detectors, target: str | None, task: str | None, time: str | None,
                   id: str | None, test: pd.DataFrame | None, sample: int | None, random_state: int,
                   index: str | None, started: float, dictionary: Any, memo: reuse.Memo | None = None,
                   groups: str | None = None) -> Diagnosis:
    """The detectors on ``df``, without the rows that are not data (a repeated header, a total);
    ``memo``: the columns' own results kept from the last diagnosis (:mod:`.reuse`)."""
    profiles = _profiles(df, run, memo)
    stray = run.run("stray rows", stray_rows.find_stray_rows, df, profiles, target)
    if stray is None:
        return run_detectors(df, profiles, run, target, task, time, id, test, sample, random_state, index,
                             started, dictionary, memo, groups)
    # every other check reads the data as it will be once the rows that are not data are gone
    # (a repeated header would make the target a text column with a class of its own)
    finding, is_data = stray
    shape = [int(df.shape[0]), int(df.shape[1])]
    clean = df.loc[is_data]
    diagnosis = run_detectors(clean, _profiles(clean, run), run, target, task, time, id, test, sample,
                              random_state, index, started, dictionary, groups=groups)
    diagnosis.findings = _sort([finding, *diagnosis.findings])
    diagnosis.shape = shape
    return diagnosis


def _profiles(df: pd.DataFrame, run: Detectors, memo: reuse.Memo | None = None) -> dict[str, ColumnProfile]:
    """Each column's profile (the last diagnosis's, for a column ``memo`` finds unchanged; one
    that failed is not kept, so it fails again, a finding each time)."""
    shared = memo.factorized_of(df) if memo is not None else {}

    def profile(c: Any) -> ColumnProfile:
        return profile_column(str(c), df[c], shared.get(c))

    def kept(c: Any) -> ColumnProfile:
        return profile(c) if memo is None else memo.get(memo.key("profile", str(c), len(df)), lambda: profile(c))

    return {str(c): run.run(f"profile of '{c}'", kept, c, columns=(str(c),),
                            default=ColumnProfile(str(c), "empty", len(df), len(df), 0))
            for c in df.columns}


def run_detectors(df: pd.DataFrame, profiles: dict[str, ColumnProfile], run: Detectors,
                  target: str | None, task: str | None, time: str | None, id: str | None,
                  test: pd.DataFrame | None, sample: int | None, random_state: int,
                  index: str | None, started: float, dictionary: Any = None,
                  memo: reuse.Memo | None = None, groups: str | None = None) -> Diagnosis:
    """Every detector on ``df`` given its column ``profiles`` (over ``df`` or a larger frame it is a
    sample of); ``memo``: the single-feature scores kept from the last diagnosis (:mod:`.reuse`)."""
    said = run.run("codebook", codebook.read_codebook, df, dictionary, target)
    id = codebook.entity_id(said, id)  # a REDCap export's records are its entities
    outcome = infer_task(df, profiles, target, task, time)
    duration = outcome.time if outcome.kind == TaskKind.SURVIVAL else None
    visit_given = time if outcome.kind != TaskKind.SURVIVAL else None
    structural: set[str] = {c for c in (target, duration, id, groups) if c} | codebook.bookkeeping(said, df)

    n = len(df)
    valid = outcome.valid if outcome.valid is not None else np.ones(n, dtype=bool)
    frame, sub, folds = _model_sample(df, outcome, valid, target, sample, random_state)

    def score_of(column: str) -> float | None:
        if target is None:
            return None
        return single_feature_score(bin_codes(frame[column], profiles[column]), sub, folds)

    findings: list[Finding] = []
    id_findings = run.run("identifier", entities.find_id_columns, df, profiles, structural, score_of,
                          default=[])
    # a name or code that repeats may be the entity rather than a row label: let the entity
    # search judge it first
    unique_ids = {f.columns[0] for f in id_findings if not f.evidence["looks_like"].startswith("high")}
    entity = (entities.no_entity() if id == "" else
              run.run("entity", entities.find_entity, df, profiles, target, id, visit_given,
                      structural | unique_ids, default=entities.Entity()))
    id_findings = [f for f in id_findings if f.columns[0] != entity.id] + entities.numbered_ids(entity, n)
    id_findings = codebook.identifier_findings(said, id_findings, {*structural, entity.id, entity.visit})
    entity_cols = {c for c in (entity.id, entity.visit) if c}
    grouped, grouping_questions = _groupings(df, profiles, target, entity, run, structural | entity_cols, id_findings)
    findings += id_findings + grouped
    id_cols = [f.columns[0] for f in id_findings + grouped]
    when, rm = _index_and_records(df, frame, profiles, outcome, sub, entity, run, index, duration, target, said)
    findings += [rm] if rm is not None else []

    usable = [c for c, p in profiles.items() if p.kind != "empty" and p.nunique > 1]
    features = [c for c in usable if c not in structural | set(id_cols) | entity_cols]
    timings = _column_timings(run, df, frame, profiles, sub, when, entity, features, target, said)
    scores: dict[str, float] = {}
    leak_cols: list[str] = []
    if target is not None:
        scores = run.run("single-feature score", _feature_scores, frame, profiles, features, sub, folds, memo,
                         run.clock, default={})
        # several classes next to times named alike (time.car, time.bus ... of a choice) are
        # attributes of the alternatives; a time next to outcome states is a follow-up
        follow_up = (find_duration(df, profiles, structural) if outcome.kind == TaskKind.CLASSIFICATION and (
            outcome.n_classes == 2 or not _alternatives(duration_candidates(df, profiles, structural)))
            else None)
        leaks = run.run("leakage", leakage.find_leakage, frame, profiles, features, sub, folds, scores,
                        follow_up, timing.timing_leaks(timings), run.clock, memo, default=[])
        leak_cols = [f.columns[0] for f in leaks]
        findings += leaks
        ask_unnamed_follow_up(sub, frame, profiles, leak_cols)  # sub shares the task inference
    timeline = run.run("column timeline", _timeline, frame, profiles, sub, features, timings, when,
                       set(leak_cols), entity) if target is not None else None
    if timeline is not None:  # what the table's structure adds: the partner of a leak is one
        found = _structure_leaks(timings, leak_cols, scores, sub, len(frame))
        leak_cols += [f.columns[0] for f in found]
        findings += found

    ctx = Context(df, profiles, outcome, frame, sub, folds, target, duration, structural, id_cols, entity, when,
                  features, leak_cols, timings, test, random_state, codebook=said, deadline=run.deadline,
                  clock=run.clock, memo=memo)
    findings += run.run_registered(ctx)
    findings += run.failed

    task_info = _task_info(outcome, target, duration, entity, id, visit_given, when, int(n - valid.sum()))
    if task_info["id"] in profiles:  # what becomes of rows without an id is asked (the task card)
        task_info["id_missing"] = int(profiles[task_info["id"]].n_missing)
    column_stats = _column_stats(profiles, scores, outcome, target, ctx, leak_cols, timings, entity, when)
    codebook.report(said, column_stats)
    return Diagnosis(_sort(findings), task_info, [int(df.shape[0]), int(df.shape[1])],
                     round(_time.perf_counter() - started, 3), int(len(frame)), column_stats,
                     _inferences(outcome, entity, when, timeline) + grouping_questions, timeline)


def _groupings(df: pd.DataFrame, profiles: dict[str, ColumnProfile], target: str | None, entity: entities.Entity,
               run: Detectors, exclude: set[str], id_findings: list[Finding]) -> tuple[list[Finding], list]:
    """The columns that identify a group of subjects (not the entity, nor a row's own id): each
    a finding and a structural question. The columns the entity holds or is held by are its own
    finding's."""
    related = {entity.evidence.get(k, {}).get("column") for k in ("holds", "held_by")} - {None}
    ids = {f.columns[0] for f in id_findings}
    return run.run("grouping columns", groupings.find_groupings, df, profiles, target, exclude | related | ids,
                   entity.id, default=([], []))


def _feature_scores(frame: pd.DataFrame, profiles: dict[str, ColumnProfile], features: list[str], sub: Outcome,
                    folds: np.ndarray, memo: reuse.Memo | None, clock: Clock = NO_CLOCK) -> dict[str, float]:
    """Each feature's single-feature score (the last diagnosis's, for a column ``memo`` finds
    unchanged on the same sampled rows, outcome and folds), for the columns ``clock`` reaches."""
    if memo is None:
        return leakage.feature_scores(frame, profiles, features, sub, folds, clock)
    context = memo.outcome_context(sub, folds, frame)

    def score(column: str) -> float:
        return leakage.feature_scores(frame, profiles, [column], sub, folds)[column]

    return {c: memo.get(memo.key("score", c, *context), functools.partial(score, c))
            for c in clock.reach("single-feature score", features)}


def _inferences(outcome: Outcome, entity: entities.Entity, when: timing.PredictionIndex,
                timeline: ColumnTimeline | None) -> list:
    """Every structural choice of the diagnosis, with its confidence."""
    _interval_stop(outcome, when)
    table = [i for i in (outcome.inference, outcome.duration_inference, entity.inference, when.inference) if i]
    return table + (timeline.inferences() if timeline is not None else [])


def _interval_stop(outcome: Outcome, when: timing.PredictionIndex) -> None:
    """The survival time is no longer in doubt when the only other time it was weighed against
    starts each of its intervals (``time1``/``time2``: both named as times, the data chain them)."""
    chosen = outcome.duration_inference
    if chosen is None or not when.start or chosen.confidence != Confidence.LOW:
        return
    others = [a.value for a in chosen.alternatives]
    if others == [when.start] and chosen.value == outcome.time:
        chosen.confidence, chosen.alternatives = Confidence.HIGH, []
        chosen.evidence.append(f"'{when.start}' starts each interval ('{when.start}', '{outcome.time}'] of one entity "
                               "(from the data): it is no other follow-up time")


def _index_and_records(df: pd.DataFrame, frame: pd.DataFrame, profiles: dict[str, ColumnProfile],
                       outcome: Outcome, sub: Outcome, entity: entities.Entity, run: Detectors, index: str | None,
                       duration: str | None, target: str | None,
                       said: Any = None) -> tuple[timing.PredictionIndex, Finding | None]:
    """The prediction index (never a column the codebook ``said`` identifies a person by), and the
    repeated_measurements finding its entity's records raise (none for a REDCap export's events:
    its redcap_events finding says it)."""
    if index is not None:  # the user's word: a wrong one is their error to see, not a finding
        when = timing.find_index(df, frame, profiles, outcome, sub, entity, given=index)
    else:
        when = run.run("prediction time", timing.find_index, df, frame, profiles, outcome, sub, entity,
                       personal=frozenset(said.private) if said is not None else frozenset(),
                       default=timing.PredictionIndex("row", None, "could not be inferred"))
    if codebook.longitudinal(said):
        if when.kind == "entity_start" and not when.sure and not when.given:
            # the export's events are ordered by its codebook: the first is each record's baseline
            when = dataclasses.replace(when, sure=True, others=[], reason=(
                "a REDCap export's events, in the codebook's order: each record is predicted from "
                "its first (baseline) event"))
        return when, None
    survival = outcome.kind == TaskKind.SURVIVAL
    landmark = run.run("landmark", entities.landmark_time, df, entity) if survival else None
    intervals = run.run("visit clock", entities.visits_on_duration_clock, df, entity, duration,
                        default=False) if survival else False
    if outcome.periods is not None and target is not None:  # its own question: follow-up to the last period
        return when, periods.person_period_finding(outcome.periods, target)
    rm = run.run("repeated measurements", entities.repeated_measurements_finding, entity, outcome.kind,
                 when, duration, target if survival else None, landmark, intervals,
                 None if survival else target)
    return when, rm


def _structure_leaks(timings: dict[str, timing.Timing], leak_cols: list[str], scores: dict[str, float],
                     sub: Outcome, n: int) -> list[Finding]:
    """Leakage findings for the columns the timeline placed after the index once the leakage
    check had run (the partner of a leaked column, a later time of its series)."""
    placed = {c: ev for c, ev in timing.timing_leaks(timings).items() if c not in leak_cols}
    return leakage.timed_leaks(placed, scores, sub, n)


def _timeline(frame: pd.DataFrame, profiles: dict[str, ColumnProfile], sub: Outcome, features: list[str],
              timings: dict[str, timing.Timing], when: timing.PredictionIndex, leaks: set[str],
              entity: entities.Entity | None = None) -> ColumnTimeline:
    """The column timeline; what the table's structure places after the index joins the value
    tests' timings (``timings`` is updated), so it is flagged as a leak too."""
    built = build_timeline(TimelineContext(frame, profiles, sub, features, timings, when, leaks, entity))
    built.derived = timing.computed_relations(frame, profiles, features)
    for c, entry in built.columns.items():
        decisive = strong_after([p for p in entry.evidence if p.source != EvidenceSource.VALUES])
        if decisive is not None and c in timings:
            timings[c].add(TIMING_OF[decisive.group], decisive.test, decisive.reason, source=decisive.source,
                           **decisive.numbers)
    return built


def _column_timings(run: Detectors, df: pd.DataFrame, frame: pd.DataFrame, profiles: dict[str, ColumnProfile],
                    sub: Outcome, when: timing.PredictionIndex, entity: entities.Entity, features: list[str],
                    target: str | None, said: Any) -> dict[str, timing.Timing]:
    """Each feature's timing from the data's tests and the codebook's word; without a target the
    data cannot time a column, but the codebook still can (only the columns it times are kept)."""
    if target is None:
        timings = {c: timing.Timing() for c in features}
        codebook.add_timing(said, timings)
        return {c: t for c, t in timings.items() if t.evidence}
    timings = run.run("column timing", timing.classify_columns, df, frame, profiles, sub, when, entity,
                      features, default={})
    codebook.add_timing(said, timings)
    return timings


def _model_sample(df: pd.DataFrame, outcome: Outcome, valid: np.ndarray, target: str | None, sample: int | None,
                  random_state: int) -> tuple[pd.DataFrame, Outcome, np.ndarray]:
    """(rows, their outcome, fold ids) the model-based checks use: a sample of the rows with a
    target, stratified by class (or event) when there is one."""
    valid_pos = np.flatnonzero(valid)
    # a target always has its values (y)
    strata = (outcome.y[valid_pos] if outcome.kind in (TaskKind.CLASSIFICATION, TaskKind.SURVIVAL) and target
              and outcome.y is not None else None)
    pos = valid_pos[stratified_sample(len(valid_pos), sample, strata, random_state)]
    frame = df.iloc[pos]
    sub = outcome.take(pos) if target else Outcome(outcome.kind, None)
    sub_strata = sub.y if strata is not None else None
    folds = fold_ids(len(frame), sub_strata, random_state)
    return frame, sub, folds


def _task_info(outcome: Outcome, target: str | None, duration: str | None, entity: entities.Entity,
               id: str | None, visit_given: str | None, when: timing.PredictionIndex,
               target_missing: int) -> dict[str, Any]:
    """The diagnosis's ``task``: the task kind and the role of each column, as inferred."""
    task_info: dict[str, Any] = {
        "kind": outcome.kind, "target": target,
        "time": duration, "event": target if outcome.kind == TaskKind.SURVIVAL else None,
        "id": entity.id or id or None, "visit": entity.visit or visit_given, "reason": outcome.reason,
        "index": when.to_dict(),
    }
    if target is not None:
        task_info["metric"] = metric_name(outcome.kind)
        task_info["target_missing"] = target_missing
    if outcome.coding is not None:  # a status of several codes: the one read as censored
        task_info["censored"] = code_text(outcome.coding.censored)
    if outcome.transitions:  # multi-state rows: their layout, for the task card's readings
        task_info["transitions"] = outcome.transitions
    if outcome.levels and target is not None:  # ordered labels read as a score: ranked before the model
        task_info["ranks"] = {"column": target, "levels": list(outcome.levels)}
    return task_info


def _column_stats(profiles: dict[str, ColumnProfile], scores: dict[str, float], outcome: Outcome,
                  target: str | None, ctx: Context, leak_cols: list[str], timings: dict,
                  entity: entities.Entity, when: timing.PredictionIndex) -> dict[str, Any]:
    """Per-column numbers the panel charts: missing and outlier rates, single-feature scores,
    leakage, timing and time-varying columns."""
    return {
        "missing_rate": {c: round(p.missing_rate, 4) for c, p in profiles.items() if p.n_missing},
        "feature_scores": {c: round(s, 4) for c, s in sorted(
            scores.items(), key=lambda kv: -np.nan_to_num(kv[1]))},
        "metric": metric_name(outcome.kind) if target else None,
        "outlier_rate": ctx.column_stats.get("outlier_rate", {}),
        "leakage": leak_cols,
        "timing": {c: to_json_safe(tm.to_dict()) for c, tm in timings.items()},
        "time_varying": list(entity.varying) if when.kind == "entity_start" else [],
    }
