"""Session 14's first run of a second fresh batch (benchmarks/fresh2.py, development half): the
structures the co-pilot read silently wrong, each tested on generated data with other names and on
a development table.

- an ordered score under R's bare response name ``y`` (a five-level self-assessment) is a
  regression, asked, not classes settled by the name;
- lab tests named by a short occasion suffix (``ALT.B`` at baseline, ``ALT.M`` after treatment):
  the other tests of the target's occasion are measured with it, proposed as at the outcome;
- the time a subject entered the study on the follow-up's own clock (``entry``, delayed entry:
  ``Surv(entry, futime, death)``) is below the duration on every row, but it is the start of the
  time at risk, known at entry, not an event during follow-up;
- a column the same on every record of a patient that counts the patient's events over all its
  (start, stop] rows (``recur``: the number of recurrences) is the outcome summed over the
  follow-up, not a baseline attribute.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from dev_tables import dev_rdataset, quiet_diagnose  # noqa: E402


def _leaks(d) -> set[str]:
    return {c for f in d.by_kind("target_leakage") for c in f.columns}


def _scores(n: int = 600, seed: int = 0) -> pd.DataFrame:
    """A trial's self-assessment on a 1-5 scale (1 rare), three visits per patient."""
    rng = np.random.default_rng(seed)
    base = rng.integers(1, 6, n // 3)
    df = pd.DataFrame({"pid": np.repeat(np.arange(n // 3), 3), "visit": np.tile([1, 3, 5], n // 3),
                       "arm": np.repeat(rng.integers(1, 3, n // 3), 3), "baseline": np.repeat(base, 3)})
    df["y"] = np.clip(df["baseline"] + rng.integers(-1, 2, n) + (df["arm"] == 2), 1, 5)
    return df


def test_an_ordered_score_named_y_is_regression_and_asked():
    d = quiet_diagnose(_scores(), target="y")
    task = d.inference("task")
    assert d.task["kind"] == "regression" and task.confidence == "low"
    assert [a.value for a in task.alternatives] == ["classification"]


def test_three_codes_named_y_are_a_score_only_when_the_data_follow_their_order():
    # three levels of the score: 'baseline' rises with them in order, so an ordered score, asked (session 17);
    # the same codes with the middle one not in the middle are R's response of a few categories: classes
    df = _scores()
    df["y"] = np.clip(df["y"], 2, 4)
    d = quiet_diagnose(df, target="y")
    assert d.task["kind"] == "regression" and d.inference("task").confidence == "low"
    df["y"] = df["y"].map({2: 3, 3: 2, 4: 4})
    assert quiet_diagnose(df, target="y").task["kind"] == "classification"


def test_the_arthritis_trials_five_level_self_assessment_is_a_score():
    # multgee's arthritis: 'y: Self-assessment score ... on a five-level ordinal response scale'
    d = quiet_diagnose(dev_rdataset("multgee", "arthritis"), target="y")
    assert d.task["kind"] == "regression" and d.inference("task").confidence == "low"


def _labs(n: int = 400, seed: int = 0, suffixes: tuple[str, str] = ("i", "f")) -> pd.DataFrame:
    """Three lab tests at a first and a final visit, named test_suffix (initial, final); the final visit's tests move
    together (one liver), and the arm moves them."""
    rng = np.random.default_rng(seed)
    arm = rng.integers(0, 2, n)
    liver = rng.normal(size=n) + arm
    first, later = suffixes
    df = pd.DataFrame({"arm": arm})
    for test in ("crp", "alb", "bili"):
        df[f"{test}_{first}"] = rng.normal(size=n)
        df[f"{test}_{later}"] = 0.5 * df[f"{test}_{first}"] + liver + rng.normal(size=n)
    return df


def _by_grid(d) -> set[str]:
    """The columns the occasion grid placed (its reason names the grid)."""
    return {c for c, e in d.timeline.columns.items() if any("grid of measures" in p.reason for p in e.evidence)}


def test_tests_named_at_the_targets_occasion_are_proposed_at_the_outcome():
    d = quiet_diagnose(_labs(), target="crp_f")
    groups = d.timeline.groups()
    assert set(groups["at_or_after_outcome"]) == _by_grid(d) == {"alb_f", "bili_f"}
    assert {"crp_i", "alb_i", "bili_i", "arm"} <= set(groups["baseline"])
    assert {c.column for c in d.timeline.unsettled()} >= {"alb_f", "bili_f"}


def test_a_target_at_the_first_occasion_has_no_such_columns():
    # predicting a baseline test from the others at baseline: nothing is later than the target
    assert _by_grid(quiet_diagnose(_labs(suffixes=("bl", "f")), target="crp_bl")) == set()


def test_names_with_a_suffix_but_no_grid_are_left_alone():
    # 'Wr.Hnd', 'NW.Hnd': one suffix, no second occasion of the same measures
    rng = np.random.default_rng(3)
    df = pd.DataFrame({"Wr.Hnd": rng.normal(18, 2, 200), "NW.Hnd": rng.normal(18, 2, 200)})
    df["Height"] = 100 + 4 * df["Wr.Hnd"] + rng.normal(0, 5, 200)
    df["Pulse.Hnd"] = rng.normal(70, 5, 200)
    assert _by_grid(quiet_diagnose(df, target="Pulse.Hnd")) == set()


def test_the_liver_trials_tests_after_treatment_are_not_baseline():
    # texmex's liver: 'ALT.M: Alanine aminotransferase after treatment'; ALP.M, AST.M, TBL.M the same visit
    d = quiet_diagnose(dev_rdataset("texmex", "liver"), target="ALT.M")
    assert set(d.timeline.groups()["at_or_after_outcome"]) == _by_grid(d) == {"ALP.M", "AST.M", "TBL.M"}


def _delayed_entry(n: int = 600, seed: int = 0, name: str = "entry") -> pd.DataFrame:
    """Patients followed from diagnosis, some referred later: their entry (days after diagnosis)
    is 0 for most and below the follow-up for all; age drives the hazard."""
    rng = np.random.default_rng(seed)
    age = rng.normal(65, 10, n).round()
    # referred years after diagnosis, some die within weeks of entry
    entry = np.where(rng.random(n) < 0.6, 0.0, rng.gamma(2.0, 600, n).round())
    after = rng.exponential(600 * np.exp(-(age - 65) / 15)).round() + 1
    cut = rng.uniform(300, 3000, n).round()
    return pd.DataFrame({"age": age, "year": rng.integers(1970, 1996, n), name: entry,
                         "futime": entry + np.minimum(after, cut), "death": (after <= cut).astype(int)})


def test_an_entry_time_on_the_follow_up_clock_is_known_at_entry():
    d = quiet_diagnose(_delayed_entry(), target="death")
    assert d.task["kind"] == "survival" and d.task["time"] == "futime"
    assert "entry" in d.timeline.groups()["baseline"] and not _leaks(d) & {"entry"}


def test_the_same_values_named_as_a_procedure_stay_follow_up():
    # named as the day of a procedure, a time below the duration is still an event during follow-up
    d = quiet_diagnose(_delayed_entry(name="transplant_day"), target="death")
    assert "transplant_day" in _leaks(d)


def test_the_myeloma_cohorts_entry_is_not_a_leak():
    # survival's myeloma: 'entry: time from diagnosis of MM until entry (days)', 'futime: follow up time'
    d = quiet_diagnose(dev_rdataset("survival", "myeloma"), target="death")
    assert "entry" not in _leaks(d) and "entry" in d.timeline.groups()["baseline"]


def _recurrences(n: int = 150, seed: int = 0, counted: bool = True) -> pd.DataFrame:
    """(start, stop] rows of patients with recurrences: each interval ends in one (status 1) or in
    censoring (status 0, the last); 'events' counts the patient's recurrences when ``counted``,
    else it is a baseline count of the same range (prior tumours)."""
    rng = np.random.default_rng(seed)
    rows = []
    for pid in range(n):
        size, k = rng.integers(1, 6), rng.poisson(1.5)
        prior = rng.integers(0, 5)
        t = 0.0
        for j in range(k + 1):
            stop = t + rng.exponential(10 / size) + 1
            rows.append((pid, size, t, round(stop, 1), int(j < k), k if counted else prior))
            t = round(stop, 1)
    return pd.DataFrame(rows, columns=["pid", "tumour_size", "start", "stop", "status", "events"])


def test_a_count_of_the_patients_events_is_the_outcome_summed():
    d = quiet_diagnose(_recurrences(), target="status")
    assert d.task["kind"] == "survival" and d.task["id"] == "pid"
    assert "events" in _leaks(d)


def test_a_per_patient_count_that_is_not_the_events_stays_baseline():
    d = quiet_diagnose(_recurrences(counted=False), target="status")
    assert "events" not in _leaks(d) and "events" in d.timeline.groups()["baseline"]


def test_the_bladder_trials_number_of_recurrences_is_not_baseline():
    # survival's bladder1: 'recur: Number of recurrences', one value per patient over all its intervals
    d = quiet_diagnose(dev_rdataset("survival", "bladder1"), target="status")
    assert "recur" in _leaks(d)
