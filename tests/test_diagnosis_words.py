"""A finding says its counts in words that agree ("1 extreme value in 'bp'", "3 extreme values in 2
columns"), never "value(s)", and its values as people write them (no ``np.int64(3)``): each
detector on a generated frame where the count is 1 and one where it is more, then full
diagnoses of varied generated frames read for "(s)", a plural after 1 and numpy reprs."""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable

import numpy as np
import pandas as pd
import pytest

import kernel_tools as kt
from kernel_tools.checks import missing_failures
from kernel_tools.findings import Finding

NOUNS = r"rows|columns|cells|values|variants|codes|classes|findings|records|entities|events|fields|attributes"
BAD_PLURAL = re.compile(rf"(?<![\d.,])\b1 (?:\w+ )?(?:{NOUNS})\b")
MAYBE_PLURAL = re.compile(r"\w\((?:s|es)\)")
NUMPY_REPR = re.compile(r"\bnp\.\w+|\b(?:int|float)(?:8|16|32|64)\(")


def frame(n: int = 300, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"age": rng.normal(60, 8, n).round(), "bp": rng.normal(130, 12, n).round(1),
                         "sex": rng.choice(["female", "male"], n), "chol": rng.normal(5, 1, n).round(2),
                         "y": rng.integers(0, 2, n)})


def summary(df: pd.DataFrame, kind: str) -> str:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (found,) = kt.diagnose(df, target="y").by_kind(kind)
    return found.summary


def missing(many: bool) -> pd.DataFrame:
    df = frame()
    df.loc[:2, "age"] = np.nan
    if many:
        df.loc[10:17, "bp"] = np.nan
    return df


def outliers(many: bool) -> pd.DataFrame:
    df = frame()
    df.loc[0, "bp"] = 900.0
    if many:
        df.loc[1, "bp"], df.loc[2, "chol"] = 950.0, 80.0
    return df


def codes(many: bool) -> pd.DataFrame:
    df = frame()
    df.loc[:9, "age"] = 999
    if many:
        df.loc[10:19, "age"] = -99
    return df


def copies(many: bool) -> pd.DataFrame:
    df = frame()
    return pd.concat([df, df.iloc[:2 if many else 1]], ignore_index=True)


def headers(many: bool) -> pd.DataFrame:
    df = frame().astype(str)
    header = pd.DataFrame([dict(zip(df.columns, df.columns))] * (2 if many else 1))
    return pd.concat([df.iloc[:100], header, df.iloc[100:]], ignore_index=True)


def variants(many: bool) -> pd.DataFrame:
    df = frame()
    df["site"] = np.random.default_rng(1).choice(["Boston", "Denver", "Austin"], len(df))
    df.loc[:4, "site"] = "boston"
    if many:
        df.loc[5:9, "site"] = "DENVER "
    return df


@pytest.mark.parametrize(("make", "kind", "one", "more"), [
    (missing, "missing_values", "'age' has missing values (3 cells, 1%)",
     "2 columns have missing values (11 cells, up to 3% in 'bp')"),
    (outliers, "outliers", "1 extreme value in 'bp'; it may be real (e.g. a very sick patient's lab value) or an "
     "entry error", "3 extreme values in 2 columns (most in 'bp'); they may be real"),
    (codes, "numeric_as_text", "'age' uses the code 999 (10 rows)", "'age' uses the codes -99, 999 (20 rows)"),
    (copies, "duplicate_rows", "1 row is an exact copy of another:", "2 rows are exact copies of others:"),
    (headers, "stray_rows", "A row that is not data: 1 row repeats the header: its cells are the column names "
     "(a file made of several exports), and it makes every number",
     "Rows that are not data: 2 rows repeat the header: their cells are the column names"),
    (variants, "inconsistent_categories", "(1 variant, 5 rows)", "(2 variants, 10 rows)"),
])
def test_a_detector_counts_one_and_more_in_agreement(make: Callable[[bool], pd.DataFrame], kind, one, more):
    said_one, said_more = summary(make(False), kind), summary(make(True), kind)
    assert one in said_one, said_one
    assert more in said_more, said_more


def test_a_single_stray_row_is_removed_as_the_row():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (found,) = kt.diagnose(headers(False), target="y").by_kind("stray_rows")
    assert found.recommended is not None and found.recommended.label == "Remove the row"
    assert "they give the target 'y'" not in found.summary and "it gives the target 'y'" in found.summary


def test_the_check_of_new_missing_values_counts_in_agreement():
    (one,) = missing_failures(pd.Series({"a": 2}), {})
    (two,) = missing_failures(pd.Series({"a": 2, "b": 1}), {})
    assert one["message"] == "the step created missing values in 1 column: a (+2)"
    assert two["message"] == "the step created missing values in 2 columns: a (+2), b (+1)"


def varied(seed: int) -> tuple[pd.DataFrame, dict]:
    """A frame with many problems at once: gaps, codes, copies, spelling variants, a leak, an
    id, a constant, repeated entities (seed 1) or survival (seed 2)."""
    rng = np.random.default_rng(seed)
    df = frame(400, seed)
    df.loc[rng.choice(400, 30, replace=False), "chol"] = np.nan
    df.loc[:4, "age"] = 999
    df["site"] = rng.choice(["Boston", "Denver"], 400)
    df.loc[5:7, "site"] = "boston "
    df["leak"] = df["y"] + rng.normal(0, 0.05, 400)
    df["constant"] = 1
    df.loc[8, "bp"] = 2000.0
    hints: dict = {"target": "y"}
    if seed == 1:
        df["pid"] = np.repeat(np.arange(200), 2)
        df["visit"] = np.tile([1, 2], 200)
        df["y"] = np.repeat(rng.integers(0, 2, 200), 2)
    if seed == 2:
        df["time"] = rng.exponential(300, 400).round() + 1
        hints = {"target": "y", "time": "time"}
    df = pd.concat([df, df.iloc[:1]], ignore_index=True)
    return df, hints


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_no_finding_of_a_full_diagnosis_says_s_in_brackets_or_a_numpy_repr(seed):
    df, hints = varied(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        diagnosis = kt.diagnose(df, **hints)
    assert len(diagnosis.findings) >= 5
    texts = [text for f in diagnosis.findings for text in _shown(f)]
    for text in texts:
        assert not MAYBE_PLURAL.search(text), text
        assert not BAD_PLURAL.search(text), text
        assert not NUMPY_REPR.search(text), text


def _shown(finding: Finding) -> list[str]:
    return [finding.summary, *(f"{o.label} {o.description} {o.risk}" for o in finding.options)]


def test_a_single_code_is_read_as_the_code():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (one,) = kt.diagnose(codes(False), target="y").by_kind("numeric_as_text")
        (more,) = kt.diagnose(codes(True), target="y").by_kind("numeric_as_text")
    assert [o.label for o in one.options][0] == "Read the code as missing"
    assert [o.label for o in more.options][0] == "Read the codes as missing"


def test_visits_that_order_the_rows_and_repeat_for_every_entity_are_named_once():
    df, hints = varied(1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (found,) = kt.diagnose(df, **hints).by_kind("repeated_measurements")
    assert found.evidence["design_columns"] == ["visit"]
    assert "ordered by 'visit', at the same values for every entity)" in found.summary
    assert found.summary.count("'visit'") == 2, found.summary  # the order, then the prediction time


def test_a_count_in_the_thousands_is_written_with_its_separator():
    rng = np.random.default_rng(3)
    df = pd.DataFrame({"pid": np.repeat(np.arange(600), 2), "visit": np.tile([1, 2], 600),
                       "x": rng.normal(size=1200), "y": np.repeat(rng.integers(0, 2, 600), 2)})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (found,) = kt.diagnose(df, target="y").by_kind("repeated_measurements")
    assert found.summary.startswith("The 1,200 rows describe 600 entities ('pid', 2.0 rows each on average")


@pytest.mark.parametrize(("extra", "said"), [(1, "1 row is an exact copy of another:"),
                                             (3, "3 rows are exact copies of others:")])
def test_the_lazy_diagnosis_says_the_whole_datas_copies_in_agreement(extra, said):
    dd = pytest.importorskip("dask.dataframe")
    df = frame()
    df = pd.concat([df, df.iloc[:extra]], ignore_index=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (found,) = kt.diagnose(dd.from_pandas(df, npartitions=3), target="y").by_kind("duplicate_rows")
    assert found.summary.startswith(said), found.summary


@pytest.mark.parametrize(("many", "label"), [(False, "Flag the 1 extreme value (keep it)"),
                                             (True, "Flag the 3 extreme values (keep them)")])
def test_the_flag_option_counts_the_extreme_values_in_agreement(many, label):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (found,) = kt.diagnose(outliers(many), target="y").by_kind("outliers")
    assert found.recommended is not None and found.recommended.label == label


@pytest.mark.parametrize("many", [False, True])
def test_the_lazy_diagnosis_says_the_whole_datas_extreme_values_in_agreement(many):
    dd = pytest.importorskip("dask.dataframe")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (found,) = kt.diagnose(dd.from_pandas(outliers(many), npartitions=3), target="y").by_kind("outliers")
    said = ("3 extreme values in 2 columns (most in 'bp'); they may be real" if many
            else "1 extreme value in 'bp'; it may be real (e.g. a very sick patient's lab value) or an entry error")
    assert found.summary.startswith(said), found.summary
    assert found.recommended.label == ("Flag the 3 extreme values (keep them)" if many
                                       else "Flag the 1 extreme value (keep it)")
