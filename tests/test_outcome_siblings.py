"""A column named like the target, one word apart (another measure of the same outcome: the motor
block's onset beside the sensory block's, a minimum price beside the price), is asked as at or
after the outcome; a baseline of the same measure is not. Generated tables, and a development-half
trial first run in session 10 (medicaldata's supraclavicular)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from kernel_tools.diagnosis.structure import _named_like_target

sys.path.insert(0, str(Path(__file__).resolve().parent))
from dev_tables import dev_rdataset, quiet_diagnose  # noqa: E402


@pytest.mark.parametrize(("target", "column"), [("onset_sensory", "onset_motor"), ("Price", "Min.Price"),
                                                ("sbpClinic", "sbpHome"), ("recovery_days", "recovery_first_days")])
def test_one_word_apart(target, column):
    assert _named_like_target(target, column) is not None


@pytest.mark.parametrize(("target", "column"), [("sbp_clinic", "baseline_sbp_clinic"), ("score", "score_pre"),
                                                ("y", "y_hat"), ("pain", "age"), ("onset_sensory", "dose_mg"),
                                                ("arr_delay", "arr_delay")])
def test_not_one_word_apart_or_named_as_before(target, column):
    assert _named_like_target(target, column) is None


def _clinic(n: int = 300, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    base = rng.normal(140, 15, n)
    return pd.DataFrame({"age": rng.normal(60, 10, n).round(), "baseline_sbp_clinic": base.round(),
                         "sbp_home": (base - 5 + rng.normal(0, 8, n)).round(),
                         "sbp_clinic": (base + rng.normal(0, 10, n)).round()})


def test_the_home_reading_is_asked_the_baseline_is_not():
    d = quiet_diagnose(_clinic(), target="sbp_clinic")
    home = d.timeline.columns["sbp_home"]
    assert home.group == "at_or_after_outcome" and home.confidence == "low"
    assert d.timeline.columns["baseline_sbp_clinic"].group == "baseline"
    assert d.timeline.columns["age"].group == "baseline"


def test_nerve_block_onsets_are_asked():
    d = quiet_diagnose(dev_rdataset("medicaldata", "supraclavicular"), target="onset_sensory")
    for c in ("onset_motor", "onset_first_sensory"):
        assert d.timeline.columns[c].group == "at_or_after_outcome"
    assert d.timeline.columns["age"].group == "baseline"
