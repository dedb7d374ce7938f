"""Follow-up times no time word names: one named after the target's own indicator ('srv' beside
'srvstat'; names that only look alike are no pair), and one at whose maximum the rows without the
event stop (the end of the study: asked as survival)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from kernel_tools.diagnosis.pair_names import time_of_flag

sys.path.insert(0, str(Path(__file__).resolve().parent))
from dev_tables import dev_rdataset, quiet_diagnose  # noqa: E402


@pytest.mark.parametrize(("flag", "time"), [("srvstat", "srv"), ("relstat", "rel"), ("pstat", "ptime"),
                                            ("d1", "t1"), ("rec.s", "rec"), ("efs_event", "efs")])
def test_a_time_named_after_its_indicator(flag, time):
    assert time_of_flag(flag, time)


@pytest.mark.parametrize(("flag", "time"), [("status", "age"), ("death", "futime"), ("arrest", "week"),
                                            ("srvstat", "srvstat"), ("died", "dies")])
def test_names_that_are_no_pair(flag, time):
    assert not time_of_flag(flag, time)


def _cohort(n: int = 300, seed: int = 0) -> pd.DataFrame:
    """Relapse-free time 'rfs' and its indicator 'rfsind', named with no time word."""
    rng = np.random.default_rng(seed)
    t = np.minimum(rng.exponential(500, n), rng.uniform(100, 1500, n)).round() + 1
    return pd.DataFrame({"age": rng.normal(50, 10, n).round(), "grade": rng.integers(1, 4, n),
                         "rfs": t, "rfsind": (rng.random(n) < 0.6).astype(int)})


def test_an_indicator_and_its_namesake_time_are_survival():
    d = quiet_diagnose(_cohort(), target="rfsind")
    assert (d.task["kind"], d.task["time"]) == ("survival", "rfs")
    # renamed apart, nothing says 'rfs' is a time: a classification, as before
    renamed = quiet_diagnose(_cohort().rename(columns={"rfs": "score_a"}), target="rfsind")
    assert renamed.task["kind"] == "classification"


def test_transplant_survival_with_relapse_during_follow_up():
    # mstate's ebmt1: srv/srvstat survival after a transplant, rel/relstat relapse during follow-up
    d = quiet_diagnose(dev_rdataset("mstate", "ebmt1"), target="srvstat")
    assert (d.task["kind"], d.task["time"]) == ("survival", "srv")
    leaks = {c for f in d.by_kind("target_leakage") for c in f.columns}
    assert {"rel", "relstat"} <= leaks


# -- a follow-up time no name calls one: the rows without the event stop at the study's end --------


def _one_year(n: int = 500, seed: int = 0, cap_events: bool = False) -> pd.DataFrame:
    """Infants followed to 12 months: the month of a first admission, else 12 (or earlier when lost);
    ``cap_events`` makes the column a capped score reached by events and non-events alike."""
    rng = np.random.default_rng(seed)
    month = rng.exponential(30, n).round(1) + 0.5
    lost = rng.random(n) < 0.3
    end = np.where(lost, rng.uniform(1, 12, n).round(1), 12.0)
    admitted = (month < end).astype(int)
    m = np.minimum(month, end)
    if cap_events:
        m = np.where(rng.random(n) < 0.6, 12.0, m)
    return pd.DataFrame({"bweight": rng.normal(3.3, 0.5, n).round(2), "smoke": rng.integers(0, 2, n),
                         "mnth": m, "admitted": admitted})


def test_a_time_cut_at_the_end_of_study_is_asked_as_survival():
    d = quiet_diagnose(_one_year(), target="admitted")
    assert (d.task["kind"], d.task["time"]) == ("survival", "mnth")
    task = d.inference("task")
    assert task.confidence == "low" and task.alternatives[0].value == "classification"


def test_a_capped_score_events_also_reach_is_no_follow_up():
    assert quiet_diagnose(_one_year(cap_events=True), target="admitted").task["kind"] == "classification"


def test_children_followed_to_their_first_year():
    # KMsurv's pneumon: 'chldage' the age at hospitalisation for pneumonia, or 12 months
    d = quiet_diagnose(dev_rdataset("KMsurv", "pneumon"), target="hospital")
    assert (d.task["kind"], d.task["time"]) == ("survival", "chldage")
