"""Fewer false leak flags (issue 26): two related measures of which one is usually smaller are no
part of each other, and a calendar year's dummies are no later wave. Generated data only (the two
false flags were seen on sealed tables: a city mileage below a highway one, years of schooling
below a prestige score); the true parts of rules17a's tests keep being asked.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from dev_tables import quiet_diagnose  # noqa: E402
from test_rules17_structure import _leaks, _overdose  # noqa: E402


def mileage(x: str, t: str, n: int = 234, seed: int = 0) -> pd.DataFrame:
    """City and highway mileage of cars: the same economy under two conditions, one always lower."""
    rng = np.random.default_rng(seed)
    displ = rng.uniform(1.6, 7, n).round(1)
    city = (35 - 3.2 * displ + rng.normal(0, 2, n)).clip(9).round()
    return pd.DataFrame({"displ": displ, "cyl": rng.choice([4, 6, 8], n), x: city,
                         t: (1.35 * city + rng.normal(0, 1.3, n) + 0.5).round()})


def schooling(x: str, t: str, n: int = 102, seed: int = 0) -> pd.DataFrame:
    """Occupations: mean years of schooling (6-16) beside a prestige score (15-87), below it by scale."""
    rng = np.random.default_rng(seed)
    years = rng.uniform(6.4, 15.97, n).round(2)
    income = (np.exp(rng.normal(8.5, 0.5, n)) * (1 + 0.05 * years)).round()
    return pd.DataFrame({x: years, "income": income, "women": rng.uniform(0, 97, n).round(2),
                         t: (5.5 * years - 18 + 0.001 * income + rng.normal(0, 7, n)).clip(14.8, 87.2).round(1)})


def subscales(n: int = 300, seed: int = 0) -> pd.DataFrame:
    """A questionnaire's total and one of its three subscales, all driven by one trait."""
    rng = np.random.default_rng(seed)
    trait = rng.gamma(4, 3, n)
    parts = [(trait * rng.uniform(0.6, 1.4, n) + rng.gamma(2, 1, n)).round() for _ in range(3)]
    return pd.DataFrame({"age_group": rng.integers(1, 5, n), "anxiety": parts[0], "total_score": sum(parts)})


@pytest.mark.parametrize("x,t", [("cty", "hwy"), ("ciudad", "carretera"), ("stadt_verbrauch", "autobahn")])
def test_a_sibling_measure_always_lower_is_no_part_of_the_target(x, t):
    assert x not in _leaks(quiet_diagnose(mileage(x, t), target=t))


@pytest.mark.parametrize("x,t", [("education", "prestige"), ("bildungsjahre", "ansehen"), ("escolaridad", "prestigio")])
def test_a_column_below_the_target_by_its_scale_is_no_part_of_it(x, t):
    assert x not in _leaks(quiet_diagnose(schooling(x, t), target=t))


@pytest.mark.parametrize("n", [17, 200])
def test_true_parts_are_still_asked(n):
    assert list(_leaks(quiet_diagnose(_overdose(n), target="total_level"))) == ["analyte_b"]
    assert "anxiety" in _leaks(quiet_diagnose(subscales(), target="total_score"))


def survey(prefix: str, years: tuple[str, ...], n: int = 1500, seed: int = 0) -> pd.DataFrame:
    """Survey rows of several years, each with its year's dummy, and a satisfaction score."""
    rng = np.random.default_rng(seed)
    year = rng.integers(0, len(years), n)
    df = pd.DataFrame({"educ": rng.integers(8, 20, n), "income_k": rng.gamma(3, 12, n).round(1),
                       "female": rng.integers(0, 2, n)})
    for k, y in enumerate(years):
        df[f"{prefix}{y}"] = (year == k).astype(int)
    df["satisfaction"] = (5 + 0.2 * df["educ"] + 0.03 * df["income_k"] + rng.normal(0, 2, n)).round().clip(0, 10)
    return df


@pytest.mark.parametrize("prefix,years", [("yr", ("2010", "2012", "2014", "2016")), ("y", ("00", "02", "04", "06")),
                                          ("ano", ("2001", "2003", "2005"))])
def test_a_calendar_years_dummies_are_known_when_the_row_was_collected(prefix, years):
    groups = quiet_diagnose(survey(prefix, years), target="satisfaction").timeline.groups()
    assert set(groups["baseline"]) >= {f"{prefix}{y}" for y in years}, groups
