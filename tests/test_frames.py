"""kernel_tools.frames: what the panel's probe reports about a namespace."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from kernel_tools import list_frames, profile


@pytest.fixture
def frame() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "age": [40, 51, np.nan, 63],
            "sex": ["f", "m", "m", None],
            "admitted": pd.to_datetime(["2020-01-01", "2020-02-01", "2020-03-01", "2020-04-01"]),
            "smoker": [True, False, True, False],
            "grade": pd.Categorical(["a", "b", "a", "c"]),
        }
    )


def test_list_frames_lists_only_dataframes_sorted(frame: pd.DataFrame) -> None:
    namespace = {"z": frame, "a": frame.head(2), "s": frame["age"], "n": 3, "_hidden": frame, "Out": {1: frame}}
    listed = list_frames(namespace)
    assert [f["name"] for f in listed] == ["a", "z"]
    z = listed[1]
    assert (z["rows"], z["columns"]) == (4, 5)
    assert z["dtypes"] == {"bool": 1, "category": 1, "datetime": 1, "number": 1, "text": 1}
    assert z["memory_bytes"] >= frame.memory_usage(deep=False).sum() - 1
    json.dumps(listed)  # what the probe sends must be JSON


def test_list_frames_rejects_non_mapping() -> None:
    with pytest.raises(TypeError, match="mapping"):
        list_frames([pd.DataFrame()])  # type: ignore[arg-type]


def test_profile_reports_missing_share_and_kinds(frame: pd.DataFrame) -> None:
    before = frame.copy(deep=True)
    result = profile(frame)
    pd.testing.assert_frame_equal(frame, before)
    assert result["rows"] == 4 and result["columns"] == 5
    by_name = {c["name"]: c for c in result["columns_detail"]}
    assert by_name["age"]["missing_share"] == pytest.approx(0.25)
    assert by_name["sex"]["kind"] == "text" and by_name["sex"]["unique"] == 2
    assert by_name["smoker"]["missing_share"] == 0.0
    assert result["missing_share"] == pytest.approx(2 / 20)
    assert result["memory_bytes"] > 0
    json.dumps(result)


def test_profile_of_awkward_frames() -> None:
    empty = profile(pd.DataFrame())
    assert empty["rows"] == 0 and empty["missing_share"] == 0.0
    odd = pd.DataFrame({0: [[1], [2]], ("a", "b"): [np.inf, 1.0]})
    result = profile(odd)
    assert [c["name"] for c in result["columns_detail"]] == ["0", "('a', 'b')"]
    assert result["columns_detail"][0]["unique"] is None  # lists are unhashable
    assert result["columns_detail"][1]["examples"][0] is None  # inf is not JSON
    json.dumps(result)


def test_profile_rejects_non_frames() -> None:
    with pytest.raises(TypeError, match="DataFrame"):
        profile(pd.Series([1, 2]))  # type: ignore[arg-type]


def test_sample_rows_are_json_safe_whole_rows_and_leave_the_frame_alone() -> None:
    from kernel_tools.frames import sample_rows

    df = pd.DataFrame({"id": [f"P{i}" for i in range(50)], "x": np.arange(50, dtype=float),
                       "when": pd.date_range("2024-01-01", periods=50, tz="UTC"),
                       "note": ["long " * 100] * 50, "flag": [True, False] * 25})
    df.loc[3, "x"] = np.nan
    before = df.copy()
    rows = sample_rows(df, 5, random_state=1)
    assert len(rows) == 5 and all(list(r) == list(df.columns) for r in rows)
    # each record is one real row: its id and its x belong together
    assert all(r["x"] is None or r["id"] == f"P{int(r['x'])}" for r in rows)
    assert all(len(r["note"]) == 200 and isinstance(r["flag"], bool) for r in rows)
    json.loads(json.dumps(rows, allow_nan=False))
    pd.testing.assert_frame_equal(df, before)
    assert sample_rows(df.iloc[:2], 5) and len(sample_rows(df.iloc[:2], 5)) == 2
    assert sample_rows(df.iloc[:0], 5) == []
    assert [r["x"] for r in sample_rows(df.iloc[[3]], 1)] == [None]
    with pytest.raises(TypeError, match="DataFrame"):
        sample_rows([1, 2], 1)
