"""A number that is another number plus the duration (an age at exit beside the age at entry) is
the end of follow-up: it gives the outcome's time away. Generated cohorts with other units and
names, and a development-half R export."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from dev_tables import dev_rdataset, quiet_diagnose  # noqa: E402


def _stays(n: int = 400, seed: int = 0, noise: float = 0.0) -> pd.DataFrame:
    """ICU stays: the hour of ICU admission counted from hospital admission, the hour of leaving,
    and the stay in hours between them; ``noise`` blurs the leaving hour."""
    rng = np.random.default_rng(seed)
    admit_h = rng.gamma(2, 12, n).round(1)
    stay = rng.gamma(2, 40, n).round(1) + 1
    return pd.DataFrame({"age": rng.normal(65, 12, n).round(), "lactate": rng.lognormal(0.5, 0.4, n).round(2),
                         "h_icu_in": admit_h, "h_icu_out": (admit_h + stay + noise * rng.normal(0, 30, n)).round(1),
                         "stay_h": stay, "died": (rng.random(n) < 0.3).astype(int)})


def _leaks(d) -> set[str]:
    return {c for f in d.by_kind("target_leakage") for c in f.columns}


def test_the_leaving_hour_is_the_admission_hour_plus_the_stay():
    d = quiet_diagnose(_stays(), target="died", time="stay_h")
    assert "h_icu_out" in _leaks(d)
    evidence = d.column_stats["timing"]["h_icu_out"]["evidence"]
    assert any(e["test"] == "end_of_follow_up" and e["start_column"] == "h_icu_in" for e in evidence)
    assert {"h_icu_in", "age", "lactate"}.isdisjoint(_leaks(d))


def test_a_number_that_only_correlates_with_start_plus_duration_is_not_the_end():
    d = quiet_diagnose(_stays(noise=1.0), target="died", time="stay_h")
    evidence = d.column_stats["timing"]["h_icu_out"]["evidence"]
    assert not any(e["test"] == "end_of_follow_up" for e in evidence)


def test_age_at_exit_in_a_retirement_home():
    # boot's channing: ages at entry and exit (months), the time between them, and censoring
    d = quiet_diagnose(dev_rdataset("boot", "channing"), target="cens", time="time")
    assert "exit" in _leaks(d)
    assert {"entry", "sex"}.isdisjoint(_leaks(d))
