"""The other half of the target's count (issue 26): aggregated rows record successes and failures,
cases and controls, wins and losses; with one of them the target, the other is known only once the
outcome is. Found from opposite words on two whole-number counts (a suspicion: drop recommended),
and from a column holding their sum or the target's share (a fact: recorded with the outcome), on
development-half tables (benchmarks/halves.py) and generated ones."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from kernel_tools.diagnosis.outcome_halves import _swapped

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from dev_tables import dev_rdataset, quiet_diagnose  # noqa: E402


def leaks(df: pd.DataFrame, target: str) -> dict[str, object]:
    return {f.columns[0]: f for f in quiet_diagnose(df, target=target).by_kind("target_leakage")}


def binomial(n: int = 300, seed: int = 0) -> pd.DataFrame:
    """Schools: how many pupils scored above and below a threshold, with baseline covariates."""
    rng = np.random.default_rng(seed)
    income = rng.normal(size=n)
    pupils = rng.choice(np.arange(20, 5000), n, replace=False)
    above = rng.binomial(pupils, 1 / (1 + np.exp(-0.8 * income)))
    return pd.DataFrame({"LOWINC": (50 - 10 * income).round(1), "PUPILS": pupils, "NABOVE": above,
                         "NBELOW": pupils - above, "TEACHERS": rng.integers(5, 40, n)})


def test_the_other_count_is_a_suspicion_from_its_name_alone():
    found = leaks(binomial().drop(columns="PUPILS"), "NABOVE")
    assert list(found) == ["NBELOW"] and found["NBELOW"].severity == "warning"
    assert ("'NBELOW' and the target 'NABOVE' look like the two halves of one count (below/above): 'NBELOW' "
            "would be known only once the outcome is") in found["NBELOW"].summary
    assert next(o for o in found["NBELOW"].options if o.recommended).action["params"]["columns"] == ["NBELOW"]


def test_a_column_holding_their_sum_or_share_makes_it_a_fact():
    df = binomial()
    found = leaks(df, "NABOVE")  # with the sum, the target is a linear formula of it and the other half
    # (said since session 17 as the formula itself, exact on every row)
    assert found["NBELOW"].severity == "critical" and "'NBELOW' equals 'PUPILS' − 'NABOVE' on every row" in (
        found["NBELOW"].summary)
    share = df.drop(columns="PUPILS").assign(PCTABOVE=(100 * df["NABOVE"] / df["PUPILS"]).round(2))
    found = leaks(share, "NABOVE")
    assert found["NBELOW"].severity == "critical" and found["NBELOW"].evidence["share_column"] == "PCTABOVE"
    assert "is not known when a prediction is made" in found["NBELOW"].summary


def test_the_dev_tables_esoph_and_mlb_standings():
    """esoph: cases and controls per age and consumption group; 2016 standings: wins, losses and
    the share won (ties make the NFL's share inexact, so there the name alone speaks)."""
    assert list(leaks(dev_rdataset("datasets", "esoph"), "ncases")) == ["ncontrols"]
    found = leaks(dev_rdataset("Stat2Data", "MLBStandings2016"), "Wins")
    assert found["Losses"].evidence["share_column"] == "WinPct" and found["Losses"].severity == "critical"
    assert "Losses" in leaks(dev_rdataset("Stat2Data", "NFLStandings2016"), "Wins")


@pytest.mark.parametrize(("target", "column"), [
    ("high_school", "low_income"), ("bty_f1upper", "bty_f1lower"), ("nox", "yesx"), ("score", "above_mean"),
    ("n_pass", "n_students"), ("case_mix", "controls_mix")])
def test_names_that_are_not_two_halves_of_one_count(target, column):
    assert _swapped(target, column) is None


def test_only_a_count_target_and_count_columns_are_read_so():
    df = binomial()
    rates = df.assign(pos_rate=df["NABOVE"] / df["PUPILS"], neg_rate=df["NBELOW"] / df["PUPILS"])
    found = leaks(rates.drop(columns=["NABOVE", "NBELOW", "PUPILS"]), "pos_rate")  # 1 - the target: a formula
    assert all("two halves of one count" not in f.summary for f in found.values())
    flag = df.assign(PASS=(df["NABOVE"] > df["NBELOW"]).astype(int), FAIL=(df["NABOVE"] <= df["NBELOW"]).astype(int))
    found = leaks(flag.drop(columns=["NABOVE", "NBELOW"]), "PASS")  # a 0/1 class: other detectors' business
    assert all("two halves of one count" not in f.summary for f in found.values())
    plain = dev_rdataset("HSAUR", "students")  # a test's high and low scores: a range, not two halves
    assert leaks(plain, "high") == {} or "low" not in leaks(plain, "high")


def test_a_count_of_pupils_is_a_measurement_not_a_grouping():
    """Aggregated rows count units: a column 'PUPILS' (how many) repeats like a group code, but a
    bare plural of a unit's name counts it; 'pupil_id' or 'Pupil' would name one."""
    from kernel_tools.diagnosis.groupings import named_as_group

    rng = np.random.default_rng(0)
    df = binomial().assign(PUPILS=rng.integers(20, 400, 300))  # 207 values on 300 rows: repeats
    assert quiet_diagnose(df, target="NABOVE").by_kind("grouping_column") == []
    assert not named_as_group("PUPILS") and not named_as_group("patients")
    assert named_as_group("pupil_id") and named_as_group("Pupil") and named_as_group("patient")


def wine_like(seed: int = 0, n_judges: int = 9) -> pd.DataFrame:
    """Judges score wines on a 0-100 scale; the rating 1-5 is that score banded."""
    rng = np.random.default_rng(seed)
    rows = [{"judge": j, "temp": t, "contact": c, "response": round(float(35 + 10 * (t == "warm") + 8 * (c == "yes")
                                                                          + rng.normal(0, 12)), 1)}
            for j in range(1, n_judges + 1) for t in ("cold", "warm") for c in ("no", "yes") for _ in range(2)]
    df = pd.DataFrame(rows)
    df["rating"] = pd.cut(df["response"], [-1e9, 20, 35, 50, 65, 1e9], labels=[1, 2, 3, 4, 5]).astype(int)
    return df


def test_a_target_banded_from_a_column_is_that_column_in_another_coding():
    found = leaks(wine_like(), "rating")
    assert list(found) == ["response"] and found["response"].severity == "critical"
    assert "the target's 5 levels are ranges of 'response'" in found["response"].summary
    assert len(found["response"].evidence["cut_points"]) == 4
    # as classes too: a grade read from a mark
    rng = np.random.default_rng(1)
    marks = pd.DataFrame({"mark": rng.uniform(0, 100, 200).round(1), "hours": rng.uniform(0, 30, 200).round(1)})
    marks["grade"] = pd.cut(marks["mark"], [0, 40, 55, 70, 100], labels=["F", "C", "B", "A"], include_lowest=True)
    assert "mark" in leaks(marks.astype({"grade": str}), "grade")


def test_a_column_merely_strong_for_an_ordered_target_is_not_a_banding():
    df = wine_like()
    rng = np.random.default_rng(2)
    df["response"] = df["response"] + rng.normal(0, 6, len(df))  # the rating no longer a cut of it
    assert "response" not in leaks(df, "rating") or "ranges of" not in leaks(df, "rating")["response"].summary
