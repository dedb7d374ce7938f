"""``diagnose`` on a lazy (Dask) frame: whole-data counts in two passes, models on a sample.

Pass 1 (:mod:`kernel_tools.lazy.summary`: each partition boiled down in the task that read
it, the files read once) computes the row count, per column the missing
count and a HyperLogLog distinct count (exact where the frame is small or the values few),
numeric ranges, infinite and non-integer values, the value counts of text columns with few
values, exact duplicate rows by row hash, the patterns of missing values, rows per entity —
and a sample of whole entities (every row of an entity whose id hashes into the kept share),
about ``sample_rows`` rows.

The detectors of :mod:`kernel_tools.diagnosis` then run on that sample with column profiles
that carry the whole-data counts. Pass 2 reads only the outlier columns, to count over every
row the values beyond the fences the sample gave (rows with any missing value come from pass
1's patterns). Every finding's
``evidence["basis"]`` says where its numbers come from: ``"whole data"`` (counts over every
row) or ``"sample"`` (a model or a statistic of the sample of whole entities).

The entity whose members stay together is the ``id`` given, else the one the detectors find
in the first partition (files written entity by entity show it there); without one the
sample is a random row sample.
"""

from __future__ import annotations

import re
import time as _time
from dataclasses import replace
from functools import partial
from typing import Any

import pandas as pd

from kernel_tools.diagnosis import entities
from kernel_tools.diagnosis.columns import ColumnProfile, profile_column, profile_counts
from kernel_tools.diagnosis.duplicates import COPIES_WORDS, copies_words
from kernel_tools.diagnosis.outliers import flag_label, outliers_summary
from kernel_tools.diagnosis.registry import Detectors, kind_data
from kernel_tools.diagnosis.runner import run_detectors
from kernel_tools.findings import Diagnosis, Finding
from kernel_tools.frames import to_pandas
from kernel_tools.lazy import engine, summary
from kernel_tools.time_names import all_events_status
from kernel_tools.vocabulary import Basis, TaskKind

SAMPLE_ROWS = 200_000  # rows of the in-memory sample the detectors run on
EXACT_BELOW = 1_000_000  # rows under which every distinct count is exact
FEW_VALUES = 1_000  # a column with at most this many values in the first partition: exact counts



def _check(df: Any, target: str | None, time: str | None, id: str | None, index: str | None,
           groups: str | None = None) -> None:
    bad = [c for c in df.columns if not isinstance(c, str)]
    if bad:
        raise TypeError(f"df has non-string column names {bad[:5]!r}; rename them first")
    if len(set(df.columns)) < len(df.columns):
        raise ValueError("df has duplicated column names; make them unique first")
    named = [(target, "target"), (time, "time"), (id, "id"), (groups, "groups")]
    if index not in (None, "first", "row"):
        named.append((index, "index"))
    for column, role in named:
        if column is not None and column not in df.columns:
            raise KeyError(f"{role} column {column!r} is not in the frame; columns are {list(df.columns)[:20]!r}")


def _entity_hint(head: pd.DataFrame, target: str | None, time: str | None, groups: str | None = None) -> str | None:
    """The entity id the detectors find in the first partition (None when they find none)."""
    profiles = {str(c): profile_column(str(c), head[c]) for c in head.columns}
    exclude = {c for c in (target, time, groups) if c is not None}
    try:
        return entities.find_entity(head, profiles, target, None, time, exclude).id
    except Exception:  # no entity then: the sample is a row sample, and says so
        return None


def _plan(df: Any, head: pd.DataFrame, n_guess: int) -> tuple[list[str], list[str], list[str], list[str]]:
    """Which columns get which count: (numeric, text with few values, exact distinct, unique-looking)."""
    columns = [str(c) for c in df.columns]
    numeric = [c for c in columns if pd.api.types.is_numeric_dtype(head[c].dtype)
               and not pd.api.types.is_bool_dtype(head[c].dtype)]
    text = [c for c in columns if c not in numeric and not pd.api.types.is_datetime64_any_dtype(head[c].dtype)]
    head_distinct = {c: head[c].nunique(dropna=True) for c in columns}
    few = [c for c in text if head_distinct[c] <= FEW_VALUES]
    if n_guess <= EXACT_BELOW:
        return numeric, text, columns, []
    exact = [c for c in columns if head_distinct[c] <= FEW_VALUES]
    unique_looking = [c for c in columns if head_distinct[c] >= 0.9 * max(1, head[c].notna().sum())
                      and c not in exact]
    return numeric, few, exact, unique_looking


def whole_profiles(sample: pd.DataFrame, n: int, nulls: dict[str, int], distinct: dict[str, int],
                   counts: dict[str, pd.Series], ranges: dict[str, dict[str, Any]]) -> dict[str, ColumnProfile]:
    """Column profiles of the whole frame: kinds and parsing from the sample, counts from every row."""
    profiles = {}
    for c in sample.columns:
        c = str(c)
        if c in counts:  # text with its whole-data value counts: profiled exactly as pandas would
            prof = profile_counts(c, counts[c], n)
        else:
            prof = profile_column(c, sample[c])
            prof = replace(prof, n=n, n_missing=int(nulls[c]), nunique=int(distinct[c]))
            if c in ranges.get("inf", {}):
                prof.n_inf = int(ranges["inf"][c])
                prof.is_integer = prof.kind == "numeric" and int(ranges["frac"][c]) == 0
            if prof.kind == "empty" and prof.n_present:
                prof.kind = "numeric" if c in ranges.get("inf", {}) else prof.kind
        profiles[c] = prof
    return profiles


def diagnose_lazy(df: Any, target: str | None = None, task: str | None = None, time: str | None = None,
                  id: str | None = None, test: Any = None, sample: int | None = 10_000,
                  random_state: int = 0, index: str | None = None,
                  sample_rows: int = SAMPLE_ROWS, groups: str | None = None) -> Diagnosis:
    """:func:`kernel_tools.diagnose` for a Dask DataFrame (see the module docstring)."""
    started = _time.perf_counter()
    _check(df, target, time, id, index, groups)
    head = engine.first_partition(df)
    n_guess = len(head) * engine.partitions(df)
    key = id or _entity_hint(head, target, time, groups)
    numeric, few, exact, unique_looking = _plan(df, head, n_guess)
    columns = [str(c) for c in df.columns]

    # pass 1: every count that needs no decision of the detectors, and the sample
    n, stat, distinct, counts, duplicates, patterns, per_entity, frame, test_frame = _pass_one(
        df, numeric, few, exact, unique_looking, key, sample_rows, n_guess, random_state, test)
    nulls = {c: int(stat["null"][c]) for c in columns}
    frame = frame.reset_index(drop=True)
    if len(frame) == 0:
        raise ValueError("the sample of the lazy frame is empty: is the frame empty?")

    profiles = whole_profiles(frame, n, nulls, distinct, counts, stat)
    if target is not None:
        _check_target(target, profiles[target], nulls[target], n, frame[target].dropna(), task, time, columns)
    run = Detectors()
    if test_frame is not None:
        test_frame = to_pandas(test_frame, "test").reset_index(drop=True)
    diagnosis = run_detectors(frame, profiles, run, target, task, time, id or key, test_frame, sample,
                              random_state, index, started, groups=groups)

    # pass 2: recount over every row what the sample decided
    recounted = _recount_outliers(df, diagnosis.findings)
    passes = 2 if recounted else 1
    for finding in diagnosis.findings:  # from pass 1's missing-value patterns
        if finding.kind == "missing_values" and "columns" in finding.evidence:
            recounted[f"rows_any|{finding.id}"] = engine.rows_missing_any(patterns, columns, list(finding.columns))

    sample_note = (f"sample of {len(frame):,} of {n:,} rows" + (f", whole '{key}' entities" if key else ", random rows"))
    if test_frame is not None:
        sample_note += f"; test: {len(test_frame):,} rows"
    for finding in diagnosis.findings:
        _rebase(finding, n, nulls, int(duplicates), per_entity, key, recounted, sample_note)
    diagnosis.shape = [n, len(columns)]
    if target is not None:
        diagnosis.task["target_missing"] = nulls[target]
    diagnosis.column_stats["missing_rate"] = {c: round(nulls[c] / n, 4) for c in columns if nulls[c]}
    diagnosis.column_stats["lazy"] = {
        "engine": engine.library_of(df), "partitions": engine.partitions(df), "rows": n,
        "sample_rows": len(frame), "sample_entity": key, "passes": passes,
        "approximate_distinct": sorted(c for c in columns if c not in exact and c not in unique_looking),
    }
    diagnosis.elapsed_s = round(_time.perf_counter() - started, 3)
    return diagnosis


def _pass_one(df: Any, numeric: list[str], few: list[str], exact: list[str], unique_looking: list[str],
              key: str | None, sample_rows: int, n_guess: int, random_state: int, test: Any) -> tuple:
    """Pass 1 (:mod:`kernel_tools.lazy.summary`): (rows, column statistics, distinct counts,
    value counts, exact duplicate rows, missing-value patterns, (entities, most rows of one,
    entities with several, rows) or (), the sample, the test's sample)."""
    columns = [str(c) for c in df.columns]
    fraction = 1.0 if n_guess <= sample_rows else sample_rows / n_guess
    plan = summary.Plan(columns=columns, numeric=numeric, exact=exact, few=few, unique_looking=unique_looking,
                        key=key, keep=engine.bucket_share(fraction) if fraction < 1.0 else None,
                        fraction=fraction, seed=random_state)
    merged, shards = engine.summarise(df, partial(summary.summarise, plan=plan), summary.merge,
                                      summary.count_shard, summary.SHARDS)
    test_frame = _test_sample(test, sample_rows, key, random_state)
    if engine.is_lazy(test_frame):
        test_frame = engine.delayed_frame(test_frame)
    merged, test_frame, *shards = engine.compute(merged, test_frame, *shards)
    hashed = summary.add_shards(shards)
    n = int(merged["rows"])
    distinct = {c: int(len(v)) for c, v in merged["values"].items()}
    distinct.update({c: engine.hll_estimate(state) for c, state in merged["hll"].items()})
    for c in unique_looking:  # unique-looking columns: exactly how many distinct values
        distinct[c] = hashed[f"column|{c}"]["distinct"]
    # as pandas counts an object column: numpy counts (Arrow-backed ones index to Python ints)
    counts = {c: pd.Series(s.to_numpy(dtype="int64"), index=pd.Index(s.index, dtype=object), name=c)
              .sort_values(ascending=False, kind="stable") for c, s in merged["counts"].items()}
    rows = hashed["rows"]
    ids = hashed.get("ids")
    per_entity = (ids["distinct"], ids["largest"], ids["several"], ids["total"]) if ids else ()
    return (n, merged["stats"], distinct, counts, rows["total"] - rows["distinct"], merged["patterns"], per_entity,
            merged["sample"], test_frame)


def _test_sample(test: Any, sample_rows: int, key: str | None, random_state: int) -> Any:
    """What of ``test`` the train/test shift check compares with the sample: a lazy test frame
    gives a sample a quarter of its size (whole entities too), read in the same pass."""
    if test is None or not engine.is_lazy(test):
        return test
    test_head = engine.first_partition(test)
    return engine.entity_sample(test, max(1, sample_rows // 4), len(test_head) * engine.partitions(test),
                                key if key in test.columns else None, random_state)


def _check_target(target: str, profile: ColumnProfile, missing: int, n: int, known: Any = None,
                  task: str | None = None, time: str | None = None, columns: list[str] | None = None) -> None:
    """A target with no value, or a single one over the whole data, leaves nothing to predict,
    unless that one value is an event beside a time (every patient died: survival with no one
    censored, which the diagnosis of the sample decides, as the in-memory one does)."""
    if missing == n:
        raise ValueError(f"target {target!r} is entirely missing: nothing to learn from")
    if profile.nunique < 2 and not (
            task in (None, TaskKind.SURVIVAL) and known is not None and len(known)
            and all_events_status(known.iloc[0], time, [c for c in columns or [] if c != target])):
        raise ValueError(f"target {target!r} has a single value: there is nothing to predict")


def _recount_outliers(df: Any, findings: list[Finding]) -> dict[str, Any]:
    """Pass 2: the values beyond the fences the sample gave, counted over every row of ``df``
    (keyed ``"outliers|<column>"``; empty, and no pass, when no finding has fences)."""
    recount: dict[str, Any] = {}
    for finding in findings:
        if finding.kind == "outliers":
            for c, ev in finding.evidence["columns"].items():
                if "upper_fence" in ev:
                    x = df[c]
                    beyond = x > ev["upper_fence"] if ev.get("log_scale") else (x < ev["lower_fence"]) | (x > ev["upper_fence"])
                    recount[f"outliers|{c}"] = beyond.sum()
    return dict(zip(recount, engine.compute(*recount.values()))) if recount else {}


def _rebase(finding: Finding, n: int, nulls: dict[str, int], duplicates: int, per_entity: tuple,
            entity: str | None, recounted: dict[str, Any], sample_note: str) -> None:
    """Put the whole-data numbers into a finding the detectors made on the sample, and say so."""
    ev = finding.evidence
    if finding.kind == "outliers":
        for c, col in ev["columns"].items():
            if f"outliers|{c}" in recounted:
                col["count"] = int(recounted[f"outliers|{c}"])
                present = n - nulls[c] - int(col.get("infinite_values", 0))
                col["rate"] = round(col["count"] / present, 5) if present else 0.0
        total = sum(int(col.get("count", 0)) for col in ev["columns"].values())
        worst = max(ev["columns"], key=lambda c: ev["columns"][c].get("rate", 0.0))
        finding.summary = outliers_summary(total, list(ev["columns"]), worst)
        for option in finding.options:  # the flag's label counts them too
            if option.id == "flag":
                option.label = flag_label(total)
        ev["fences_from"] = sample_note
    elif finding.kind == "missing_values":
        if f"rows_any|{finding.id}" in recounted:
            ev["rows_with_any_missing"] = int(recounted[f"rows_any|{finding.id}"])
        ev["mechanism_from"] = sample_note
    elif finding.kind == "duplicate_rows":
        ev["exact_duplicates"] = duplicates
        ev["rows"] = n
        ev["duplicate_share"] = round((duplicates + ev.get("near_duplicates", 0)) / n, 5)
        ev["near_duplicates_from"] = sample_note
        if duplicates:  # the whole data's count, its verb agreeing
            chance = " equal" in finding.summary.split(",")[0]
            finding.summary = COPIES_WORDS.sub(copies_words(duplicates, by_chance=chance), finding.summary)
    elif finding.kind == "repeated_measurements" and per_entity and ev.get("entity_id") == entity:
        entities_n, largest, several, rows = (int(v) for v in per_entity)
        ev.update({"entities": entities_n, "rows": rows, "rows_per_entity_max": largest,
                   "rows_per_entity_mean": round(rows / entities_n, 3) if entities_n else None,
                   "share_entities_with_several_rows": round(several / entities_n, 4) if entities_n else 0.0})
        finding.summary = re.sub(r"^The [\d,]+ rows describe [\d,]+ entities \('([^']*)', [\d.]+ rows each",
                                 lambda m: f"The {rows:,} rows describe {entities_n:,} entities ('{m.group(1)}', "
                                           f"{rows / max(entities_n, 1):.1f} rows each", finding.summary)
    # where each kind gets its numbers is declared by its detector (an undeclared kind: the sample)
    declared = kind_data(finding.kind)
    ev["basis"] = str(declared.basis if declared is not None else Basis.SAMPLE)
    if ev["basis"] == Basis.SAMPLE:
        ev["sample"] = sample_note


__all__ = ["diagnose_lazy", "whole_profiles", "SAMPLE_ROWS"]
