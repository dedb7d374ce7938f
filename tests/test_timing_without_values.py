"""Timing the values do not show (issue 26, point 5): an event's time during follow-up present on
most rows with no indicator, and the later waves of a measure numbered 1, 2. Synthetic frames and
development-half tables only."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from dev_tables import dev_rdataset, quiet_diagnose

from kernel_tools.diagnosis.event_times import time_within_follow_up


def cohort(n: int = 400, seed: int = 0) -> pd.DataFrame:
    """Survival in days with a complete response that comes early for most patients (no
    indicator: missing where there was none) and baseline covariates, one a time before entry."""
    rng = np.random.default_rng(seed)
    futime = np.ceil(rng.exponential(700, n)) + 1
    df = pd.DataFrame({"age": rng.integers(30, 80, n), "albumin": rng.normal(3.5, 0.4, n).round(2),
                       "days_from_dx": np.ceil(rng.gamma(2, 60, n)), "futime": futime,
                       "death": (rng.random(n) < 0.6).astype(int)})
    # most respond within weeks; the few followed for less than that have no response recorded
    response = np.ceil(rng.gamma(2, 15, n))
    df["crtime"] = np.where(response <= futime, response, np.nan)
    return df


def test_an_early_event_time_on_most_rows_is_during_follow_up_with_its_evidence():
    d = quiet_diagnose(cohort(), target="death", time="futime")
    col = d.timeline.columns["crtime"]
    assert col.group == "during_follow_up"
    test = next(p for p in col.evidence if p.test == "time_within_follow_up")
    assert "named as a time ('crtime')" in test.reason and "by chance pairing" in test.reason
    assert test.numbers["share_below_own_duration"] == 1.0 and test.numbers["share_below_by_chance"] < 0.99
    for c in ("age", "albumin", "days_from_dx"):
        assert d.timeline.columns[c].group == "baseline", c


def test_moderate_evidence_is_asked_and_strong_evidence_decides():
    df = cohort(n=300, seed=3)  # p = 2e-4 by chance pairing; 3e-10 on 600 rows
    col = quiet_diagnose(df, target="death", time="futime").timeline.columns["crtime"]
    strong = quiet_diagnose(cohort(n=600, seed=3), target="death", time="futime").timeline.columns["crtime"]
    assert (col.group, col.confidence) == ("during_follow_up", "low")
    assert (strong.group, strong.confidence) == ("during_follow_up", "high")


def test_what_is_not_an_event_time_during_follow_up():
    rng = np.random.default_rng(4)
    n = 400
    t = np.ceil(rng.exponential(700, n)) + 1
    early = np.minimum(np.ceil(rng.gamma(2, 15, n)), t)
    assert time_within_follow_up("crtime", early, t) is not None
    assert time_within_follow_up("cr_level", early, t) is None  # no time in its name
    assert time_within_follow_up("time_since_diagnosis", early, t) is None  # a time before entry
    independent = np.ceil(rng.gamma(2, 200, n))
    assert time_within_follow_up("wait_days", independent, t) is None  # exceeds the follow-up where it is short
    small = rng.uniform(0, 5, n)  # a lab value next to days: below every follow-up by chance
    assert time_within_follow_up("ldh_time", small, t) is None
    late = t * rng.uniform(0.7, 0.95, n)  # an age at entry next to an age at exit: never early in it
    assert time_within_follow_up("years_entry_exit", late, t) is None


def test_event_time_of_the_development_half():
    """survival/jasa (dev): 'wait.time' (days from acceptance to transplant, missing where none)
    stays during follow-up; 'age' and 'mscore' (a mismatch score) are not named as times."""
    df = dev_rdataset("survival", "jasa").drop(columns="rownames")
    d = quiet_diagnose(df, target="fustat", time="futime")
    assert d.timeline.columns["wait.time"].group == "during_follow_up"
    assert not any(p.test == "time_within_follow_up" for c in ("age", "mscore")
                   for p in d.timeline.columns[c].evidence)


def waves(n: int = 400, seed: int = 0, stem: str = "depress") -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    first = rng.normal(2.5, 0.6, n)
    df = pd.DataFrame({"treat": rng.integers(0, 2, n), "age": rng.integers(20, 60, n), f"{stem}1": first.round(2)})
    df[f"{stem}2"] = (first * 0.6 + rng.normal(1.0, 0.4, n) - 0.3 * df["treat"]).round(2)
    df["work"] = (rng.random(n) < 0.4 + 0.1 * df["treat"]).astype(int)
    return df


def test_the_later_wave_of_a_numbered_measure_is_asked_as_follow_up():
    col = quiet_diagnose(waves(), target="work").timeline.columns
    assert (col["depress2"].group, col["depress2"].confidence) == ("during_follow_up", "low")
    assert [p.test for p in col["depress2"].evidence] == ["later_numbered_wave"]
    assert "a later wave of 'depress1'" in col["depress2"].evidence[0].reason
    assert col["depress1"].group == "baseline"


@pytest.mark.parametrize("stem", ["x", "q", "item"])
def test_generic_stems_are_not_waves(stem):
    col = quiet_diagnose(waves(stem=stem), target="work").timeline.columns
    assert col[f"{stem}2"].group == "baseline"


def test_items_of_a_questionnaire_and_unrelated_numbered_columns_are_not_waves():
    rng = np.random.default_rng(5)
    n = 400
    trait = rng.normal(0, 1, n)
    df = pd.DataFrame({f"anx{k}": np.clip(np.round(2 + trait + rng.normal(0, 1, n)), 0, 4) for k in range(1, 11)})
    df["dose1"], df["dose2"] = rng.normal(50, 10, n), rng.normal(5, 1, n)  # two doses, unrelated scales
    df["work"] = (rng.random(n) < 0.4).astype(int)
    col = quiet_diagnose(df, target="work").timeline.columns
    assert all(col[c].group == "baseline" for c in df.columns if c != "work")


def test_later_waves_of_the_development_half():
    """mediation/jobs (dev, target 'work1'): 'depress2' is the later wave of 'depress1'."""
    df = dev_rdataset("mediation", "jobs").drop(columns="rownames")
    col = quiet_diagnose(df, target="work1").timeline.columns
    assert col["depress2"].group == "during_follow_up" and col["depress1"].group == "baseline"


def test_the_latest_year_beside_earlier_ones_is_asked_as_follow_up():
    """causaldata/nsw_mixtape (dev, target 'treat'): earnings of 1974, 1975 and 1978."""
    df = dev_rdataset("causaldata", "nsw_mixtape").drop(columns="rownames", errors="ignore")
    col = quiet_diagnose(df, target="treat").timeline.columns
    assert (col["re78"].group, col["re78"].confidence) == ("during_follow_up", "low")
    assert col["re75"].group == "baseline" and col["re74"].group == "baseline"


def trial(n: int = 400, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"treat": rng.integers(0, 2, n), "sex": rng.integers(0, 2, n), "age": rng.integers(20, 60, n)})
    df["comply"] = np.where(df["treat"] == 1, (rng.random(n) < 0.6).astype(int), 0)
    df["pregnant"] = np.where(df["sex"] == 0, (rng.random(n) < 0.1).astype(int), 0)  # one group only, not an arm
    df["dose_mg"] = np.where(df["treat"] == 1, rng.choice([50, 100], n), np.nan)
    df["work"] = (rng.random(n) < 0.4 + 0.1 * df["treat"]).astype(int)
    return df


def test_what_only_the_treated_arm_received_is_asked_as_follow_up():
    col = quiet_diagnose(trial(), target="work").timeline.columns
    for c in ("comply", "dose_mg"):
        assert (col[c].group, col[c].confidence) == ("during_follow_up", "low"), c
        assert [p.test for p in col[c].evidence] == ["received_in_one_arm"]
    assert "always 0 where 'treat' is 0" in col["comply"].evidence[0].reason
    assert "missing where 'treat' is 0" in col["dose_mg"].evidence[0].reason
    assert col["pregnant"].group == "baseline" and col["treat"].group == "baseline"


def test_a_received_measure_on_both_arms_is_not_one_arm_only():
    df = trial()
    df["comply"] = (np.random.default_rng(1).random(len(df)) < 0.6).astype(int)
    assert quiet_diagnose(df, target="work").timeline.columns["comply"].group == "baseline"


def test_compliance_of_the_development_half():
    """mediation/jobs (dev): 'comply' (took part in the job-search seminars) is 0 on every control."""
    df = dev_rdataset("mediation", "jobs").drop(columns="rownames")
    col = quiet_diagnose(df, target="work1").timeline.columns["comply"]
    assert (col.group, col.confidence) == ("during_follow_up", "low")


def test_the_attributes_of_numbered_alternatives_are_not_waves():
    """A choice between two offers (the target 'choice1' or 'choice2') records each offer's price,
    time and changes as price1, price2, ...: known together when the choice is made, not waves. One
    numbered stem beside a target that is not a choice among its numbers stays a wave (depress1,
    depress2 predicting work)."""
    rng = np.random.default_rng(0)
    n = 400
    base = rng.normal(size=n)
    offers = pd.DataFrame({"id": np.arange(n), "price1": (50 + 10 * base + rng.normal(0, 3, n)).round(),
                           "price2": (50 + 10 * base + rng.normal(0, 3, n)).round(),
                           "time1": (120 + 20 * base + rng.normal(0, 5, n)).round(),
                           "time2": (120 + 20 * base + rng.normal(0, 5, n)).round()})
    offers["choice"] = np.where(offers["price1"] + rng.normal(0, 5, n) < offers["price2"], "choice1", "choice2")
    placed = quiet_diagnose(offers, target="choice").timeline.columns
    assert placed["price2"].group == "baseline" and placed["time2"].group == "baseline"
    waves = offers.rename(columns={"price1": "depress1", "price2": "depress2"}).drop(columns=["time1", "time2"])
    waves["work"] = (waves["depress1"] + rng.normal(0, 10, n) > 50).astype(int)
    assert quiet_diagnose(waves.drop(columns="choice"), target="work").timeline.columns["depress2"].group != "baseline"
