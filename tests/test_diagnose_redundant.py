"""Redundant columns: exact recodings, near recodings whose breaking rows are entry errors,
and independent columns with as many levels, which must not be flagged."""

import numpy as np
import pandas as pd

from kernel_tools import diagnose
from kernel_tools.diagnosis.duplicates import mapping_agreement


def _frame(n: int = 3000, corrupt: float = 0.03, seed: int = 0):
    rng = np.random.default_rng(seed)
    names = np.array(["France", "Germany", "Italy", "Spain", "Poland", "Greece"])
    codes = np.array(["FR", "DE", "IT", "ES", "PL", "GR"])
    k = rng.integers(0, len(names), n)
    code = codes[k].copy()
    broken = rng.random(n) < corrupt
    code[broken] = codes[(k[broken] + rng.integers(1, len(codes), broken.sum())) % len(codes)]
    df = pd.DataFrame({
        "country": names[k], "country_code": code,
        "shop": rng.choice(["a", "b", "c", "d", "e", "f"], n),  # independent, same number of levels
        "x": rng.normal(size=n),
    })
    df["y"] = (df["x"] + rng.normal(size=n) > 0).astype(int)
    return df, set(np.flatnonzero(broken))


def test_a_near_recoding_is_found_with_the_rows_that_break_it():
    df, broken = _frame()
    found = [f for f in diagnose(df, target="y").by_kind("redundant_features")
             if set(f.columns) == {"country", "country_code"}]
    assert len(found) == 1
    ev = found[0].evidence
    assert found[0].severity == "warning"
    assert ev["rows_breaking_mapping"] == len(broken)
    assert set(ev["example_rows"]) <= broken and len(ev["example_rows"]) == 10
    assert min(ev["lambda"]) >= 0.85


def test_independent_columns_with_as_many_levels_are_not_redundant():
    df, _ = _frame()
    pairs = [set(f.columns) for f in diagnose(df, target="y").by_kind("redundant_features")]
    assert all("shop" not in p for p in pairs)


def test_an_exact_recoding_breaks_no_row():
    df, _ = _frame(corrupt=0.0)
    found = diagnose(df, target="y").by_kind("redundant_features")
    assert [f.evidence["rows_breaking_mapping"] for f in found] == [0]
    assert found[0].severity == "info"


def test_mapping_agreement_lambda_is_zero_for_unrelated_codes():
    rng = np.random.default_rng(1)
    a, b = rng.integers(0, 5, 5000), rng.integers(0, 5, 5000)
    lam_ab, lam_ba, breaking = mapping_agreement(a, b)
    assert lam_ab < 0.05 and lam_ba < 0.05 and breaking.mean() > 0.5
    b[::2] = -1  # missing values take no part
    assert mapping_agreement(a[:60], b[:60]) is None
