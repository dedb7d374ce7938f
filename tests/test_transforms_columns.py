import numpy as np
import pandas as pd
import pytest
from _purity import run_pure

from kernel_tools.transforms import ColumnDropper, deduplicate, drop_columns, join_frames


@pytest.fixture
def df():
    return pd.DataFrame({"id": [1, 2, 2, 3], "x": [1.0, 2.0, 2.0, 3.0], "s": ["a", "b", "b", "c"]})


def test_drop_columns_reports_and_replays(df):
    out, report = run_pure(drop_columns, df, ["x"], reason="target proxy")
    assert list(out.columns) == ["id", "s"]
    assert report.columns_removed == ["x"] and report.details == {"dropped": ["x"], "reason": "target proxy"}
    test = pd.DataFrame({"id": [5], "x": [9.0], "s": ["z"], "extra": [1]})
    assert list(report.apply(test).columns) == ["id", "s", "extra"]
    assert list(report.transformer.get_feature_names_out()) == ["id", "s"]


def test_drop_columns_bad_input(df):
    with pytest.raises(KeyError, match="'nope'"):
        drop_columns(df, ["x", "nope"])
    with pytest.raises(ValueError, match="empty"):
        drop_columns(df, [])
    with pytest.raises(TypeError, match="DataFrame"):
        drop_columns([1, 2], ["x"])
    with pytest.raises(KeyError):
        ColumnDropper(columns=["q"]).fit(df)


def test_deduplicate_exact_and_near(df):
    out, report = run_pure(deduplicate, df)
    assert len(out) == 3 and report.details["duplicates_removed"] == 1
    assert report.details["example_index"] == ["2"] and report.transformer is None
    messy = pd.DataFrame({"name": ["Ann", " ann ", "Bob"], "v": [1.0, 1.0 + 1e-9, 2.0]})
    assert len(deduplicate(messy)[0]) == 3
    near, report = run_pure(deduplicate, messy, near=True)
    assert near["name"].tolist() == ["Ann", "Bob"] and report.details["near"] is True
    last, _ = deduplicate(df, subset=["id"], keep="last")
    assert last.index.tolist() == [0, 2, 3]


def test_deduplicate_bad_input(df):
    with pytest.raises(KeyError, match="'zz'"):
        deduplicate(df, subset=["zz"])
    with pytest.raises(ValueError, match="keep"):
        deduplicate(df, keep="middle")


@pytest.fixture
def people():
    return pd.DataFrame({"pid": [1, 2, 3, 4], "age": [30, 40, 50, 60]})


def test_join_reports_match_rates(people):
    labs = pd.DataFrame({"pid": [1, 2, 9], "hb": [12.0, 13.0, 14.0], "age": [1, 1, 1]})
    before_r = labs.copy(deep=True)
    out, report = run_pure(join_frames, people, labs, on="pid")
    pd.testing.assert_frame_equal(labs, before_r)
    assert len(out) == 4
    assert report.details["left_match_rate"] == 0.5
    assert report.details["right_match_rate"] == pytest.approx(2 / 3)
    assert report.details["renamed_overlapping_columns"] == {"age": "age_right"}
    assert "age_right" in out.columns and report.warnings  # only 50% matched
    inner, _ = join_frames(people, labs, on="pid", how="inner")
    assert inner["pid"].tolist() == [1, 2]


def test_join_replays_on_new_rows_keeping_every_row(people):
    labs = pd.DataFrame({"pid": [1, 2, 2, 9], "hb": [12.0, 13.0, 15.0, 14.0]})
    _, report = join_frames(people, labs, on="pid", allow_duplicates=True)
    test = pd.DataFrame({"pid": [9, 2, 7]}, index=[10, 11, 12])
    out = report.apply(test)
    # one row per test row, in order, with its index; the first match of a repeated key
    assert out.index.tolist() == [10, 11, 12]
    assert out["hb"].tolist()[:2] == [14.0, 13.0] and pd.isna(out["hb"].iloc[2])
    with pytest.raises(KeyError, match="pid"):
        report.apply(pd.DataFrame({"x": [1]}))


def test_join_refuses_silent_duplication(people):
    visits = pd.DataFrame({"pid": [1, 1, 2], "bp": [120, 130, 140]})
    with pytest.raises(ValueError, match="duplicate left rows"):
        join_frames(people, visits, on="pid")
    out, report = join_frames(people, visits, on="pid", allow_duplicates=True)
    assert len(out) == 5 and any("grew" in w for w in report.warnings)
    out, _ = join_frames(people, visits, on="pid", validate="one_to_many")
    assert len(out) == 5
    with pytest.raises(ValueError, match="validate"):
        join_frames(visits, people, on="pid", validate="one_to_one")


def test_join_bad_inputs(people):
    with pytest.raises(KeyError, match="'x'"):
        join_frames(people, people, on="x")
    with pytest.raises(TypeError, match="pid"):
        join_frames(people, people.assign(pid=people["pid"].astype(str)), on="pid")
    with pytest.raises(ValueError, match="how"):
        join_frames(people, people, on="pid", how="cross")
    with pytest.raises(TypeError, match="right"):
        join_frames(people, np.zeros(3), on="pid")
