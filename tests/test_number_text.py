"""Numbers written as text ("$52,341", "45.3%", "72,5", "75.3 kg"): what the diagnosis calls
numbers stored as text is exactly what fix_dtypes turns into numbers."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import kernel_tools as kt
from kernel_tools.number_text import NumberFormat, number_format, to_numbers

RAHA = Path("/work/shared/data/raha-baran")


@pytest.mark.parametrize("values,fmt,expected", [
    (["$52,341", "$1,200.50", "-$5", "€ 3", "12 €"], NumberFormat(), [52341, 1200.5, -5, 3, 12]),
    (["45.3%", "12%", " 7 %"], NumberFormat(), [45.3, 12, 7]),
    (["75.3 kg", "80kg", "66.1 kg"], NumberFormat(".", "kg"), [75.3, 80, 66.1]),
    (["72,5", "1.234,5", "80", "1.234"], NumberFormat(","), [72.5, 1234.5, 80, 1234]),
    (["1,234", "12,345,678", "5", "1e5", " 4 "], NumberFormat(), [1234, 12345678, 5, 1e5, 4]),
    (["1'234.5", "12"], NumberFormat(), [1234.5, 12]),
    # not numbers: codes, different units, two numbers, words with a number
    (["12A", "13B", "7C"], NumberFormat(), [np.nan] * 3),
    (["70 kg", "150 lb", "80 kg"], NumberFormat(), [np.nan] * 3),
    (["120/80", "1,2,3", "1.2.3", "5 years old"], NumberFormat(), [np.nan] * 4),
])
def test_numbers_as_people_write_them(values, fmt, expected):
    assert number_format(pd.Index(values)) == fmt
    got = to_numbers(pd.Series(values, dtype=object))
    np.testing.assert_allclose(got.to_numpy(dtype=float), np.asarray(expected, dtype=float))


def test_a_decimal_comma_column_reads_dotted_thousands_too():
    s = pd.Series(["1.234", "2,5", None, "3"], dtype=object)  # "1.234" is not 1.234 here
    assert to_numbers(s).tolist()[:2] == [1234.0, 2.5] and np.isnan(to_numbers(s)[2])


def _messy(n: int = 600) -> pd.DataFrame:
    rng = np.random.default_rng(3)
    return pd.DataFrame({
        "income": [f"${v:,.0f}" for v in rng.normal(50_000, 15_000, n)],
        "share": [f"{v:.1f}%" for v in rng.uniform(0, 100, n)],
        "weight": [f"{v:.1f} kg" for v in rng.normal(75, 10, n)],
        "eu": [f"{v:.2f}".replace(".", ",") for v in rng.normal(10, 2, n)],
        "zip": [f"{i:05d}" for i in rng.permutation(n)],
        "y": rng.integers(0, 2, n),
    })


def test_the_diagnosis_says_how_they_are_written_and_the_fix_reads_them():
    df = _messy()
    d = kt.diagnose(df, target="y")
    found = {f.columns[0]: f for f in d.by_kind("numeric_as_text")}
    assert set(found) == {"income", "share", "weight", "eu"}
    assert "currency signs" in found["income"].summary and "the unit 'kg'" in found["weight"].summary
    assert "percent signs" in found["share"].summary and "a decimal comma" in found["eu"].summary
    # a unique money amount is not an identifier; zero-padded codes are, and stay text
    assert {f.columns[0] for f in d.by_kind("id_column")} == {"zip"}
    fixed, report = kt.fix_dtypes(df, columns=list(found))
    for c in found:
        assert fixed[c].dtype == float and fixed[c].notna().all(), c
    assert fixed["weight"].iloc[0] == float(df["weight"].iloc[0].removesuffix(" kg"))
    assert fixed["eu"].iloc[0] == float(df["eu"].iloc[0].replace(",", "."))
    assert report.details["per_column"]["weight"]["units_stripped"] == len(df)
    assert fixed["zip"].equals(df["zip"])  # untouched
    # the fitted transformer reads new rows in the training rows' format
    test = pd.DataFrame({"income": ["$1,000"], "share": ["5%"], "weight": ["70 kg"], "eu": ["1,5"],
                         "zip": ["00001"], "y": [0]})
    again = report.transformer.transform(test)
    assert again.loc[0, ["income", "share", "weight", "eu"]].tolist() == [1000.0, 5.0, 70.0, 1.5]


@pytest.mark.skipif(not RAHA.exists(), reason="shared benchmark data not on this machine")
def test_dirty_beer_strengths_read_as_the_clean_ones():
    """Raha's beers: strengths written '0.09%' among '0.05' parse to the clean table's values."""
    dirty = pd.read_csv(RAHA / "beers" / "dirty.csv", dtype=str)
    clean = pd.read_csv(RAHA / "beers" / "clean.csv")
    assert dirty["abv"].str.endswith("%").sum() > 50
    fixed, _ = kt.fix_dtypes(dirty[["abv"]], na_tokens=["N/A", ""])
    both = fixed["abv"].notna() & clean["abv"].notna()
    assert both.mean() > 0.95 and np.allclose(fixed.loc[both, "abv"], clean.loc[both, "abv"])
