"""A time named after the target's own indicator ('srv' beside 'srvstat') is its follow-up time,
even when no time word names it; names that only look alike are no pair."""

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
