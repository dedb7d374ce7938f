"""Money in brackets ("$8000 to 9999", "$25000 or more", "lt $1000") is no number with a unit: the
mixed-units finding proposed converting it to 'USD', a step that failed on every such table (no unit
converts currencies; pint knows none)."""

import numpy as np
import pandas as pd
from dev_tables import quiet_diagnose

BRACKETS = ["$25000 or more", "$20000 - 24999", "$10000 - 14999", "$8000 to 9999", "lt $1000", "$3000 to 3999"]


def test_income_brackets_written_with_a_currency_are_not_mixed_units():
    rng = np.random.default_rng(0)
    n = 600
    # most answers in the top bracket, as in a survey's income question
    share = [0.7, 0.1, 0.08, 0.06, 0.03, 0.03]
    frame = pd.DataFrame({"age": rng.integers(18, 90, n), "income": rng.choice(BRACKETS, n, p=share),
                          "happy": rng.integers(0, 2, n)})
    assert not quiet_diagnose(frame, target="happy").by_kind("mixed_units")


def test_amounts_in_two_spellings_of_one_currency_are_not_converted_as_units():
    rng = np.random.default_rng(1)
    n = 600
    amounts = rng.integers(100, 5000, n)
    text = [f"${a}" if i % 3 else f"{a} usd" for i, a in enumerate(amounts)]
    frame = pd.DataFrame({"rent": text, "y": rng.integers(0, 2, n)})
    assert not quiet_diagnose(frame, target="y").by_kind("mixed_units")


def test_weights_in_two_units_are_still_mixed_units():
    rng = np.random.default_rng(2)
    n = 600
    kg = rng.normal(75, 12, n).round(1)
    text = [f"{w} kg" if i % 4 else f"{w * 2.2046:.0f} lb" for i, w in enumerate(kg)]
    frame = pd.DataFrame({"weight": text, "y": rng.integers(0, 2, n)})
    (finding,) = quiet_diagnose(frame, target="y").by_kind("mixed_units")
    assert finding.columns == ["weight"]
