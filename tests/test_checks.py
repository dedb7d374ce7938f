"""validate_step: each check fires on a bad step and stays quiet on a good one."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from kernel_tools.checks import validate_step


@pytest.fixture
def frame() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame(
        {
            "patient": np.repeat(np.arange(25), 4),
            "x": rng.normal(size=100),
            "z": rng.integers(0, 5, size=100).astype(float),
            "y": rng.integers(0, 2, size=100),
        }
    )


def checks(failures: list[dict]) -> set[str]:
    return {f["check"] for f in failures}


def test_identity_step_passes(frame):
    before = frame.copy()
    assert validate_step(frame, frame.copy(), target="y") == []
    pd.testing.assert_frame_equal(frame, before)


def test_row_retention_below_threshold(frame):
    failures = validate_step(frame, frame.iloc[:30], target="y")
    assert checks(failures) == {"row_retention"}
    (f,) = failures
    assert f["severity"] == "error"
    assert f["rows_before"] == 100 and f["rows_after"] == 30
    assert f["retention"] == pytest.approx(0.3)


def test_row_retention_threshold_is_configurable(frame):
    assert validate_step(frame, frame.iloc[:30], expect={"min_row_retention": 0.2}) == []
    assert checks(validate_step(frame, frame.iloc[:90], expect={"min_row_retention": 0.95})) == {
        "row_retention"
    }


def test_empty_result(frame):
    assert checks(validate_step(frame, frame.iloc[:0])) == {"empty"}


def test_aggregation_checks_one_row_per_entity_instead_of_retention(frame):
    good = frame.groupby("patient", as_index=False).last()
    assert validate_step(frame, good, target="y", expect={"rows": "one_per_entity", "id": "patient"}) == []
    bad = frame.iloc[:50]
    failures = validate_step(frame, bad, expect={"rows": "one_per_entity", "id": "patient"})
    assert checks(failures) == {"one_per_entity"}
    assert failures[0]["repeated_rows"] == 50 - 13


def test_rows_same_and_rows_increased(frame):
    assert checks(validate_step(frame, frame.iloc[:90], expect={"rows": "same"})) == {"rows_changed"}
    doubled = pd.concat([frame, frame], ignore_index=True)
    failures = validate_step(frame, doubled)
    assert checks(failures) == {"rows_increased"}
    assert failures[0]["severity"] == "warning"
    assert checks(validate_step(frame, doubled, expect={"rows": "fewer"})) == {"rows_increased"}
    assert validate_step(frame, doubled, expect={"rows": "more"}) == []


def test_target_lost_all_missing_and_changed(frame):
    assert checks(validate_step(frame, frame.drop(columns="y"), target="y")) == {"target_lost"}
    gone = frame.assign(y=np.nan)
    assert "target_all_missing" in checks(validate_step(frame, gone, target="y"))
    flipped = frame.copy()
    flipped.loc[[3, 7, 9], "y"] = 1 - flipped.loc[[3, 7, 9], "y"]
    failures = validate_step(frame, flipped, target="y")
    assert checks(failures) == {"target_changed"}
    assert failures[0]["changed_rows"] == 3
    assert validate_step(frame, flipped, target="y", expect={"target_changes": True}) == []


def test_target_dtype_fix_is_not_a_change(frame):
    as_text = frame.assign(y=frame["y"].astype(str))
    assert validate_step(as_text, frame, target="y") == []
    recoded = frame.assign(y=frame["y"].map({0: "no", 1: "yes"}))
    failures = validate_step(frame, recoded, target="y")
    assert checks(failures) == {"target_changed"} and failures[0]["severity"] == "warning"


def test_target_compared_only_on_kept_rows(frame):
    kept = frame.drop(index=[1, 2, 3])
    assert validate_step(frame, kept, target="y") == []


def test_reset_index_after_row_removal_is_not_a_target_change(frame):
    kept = frame.drop(index=[1, 2, 3]).reset_index(drop=True)
    assert validate_step(frame, kept, target="y") == []


def test_new_missing_warning_or_error(frame):
    after = frame.copy()
    after.loc[[0, 1], "x"] = np.nan
    failures = validate_step(frame, after)
    assert checks(failures) == {"new_missing"}
    assert failures[0]["severity"] == "warning"
    assert failures[0]["new_missing"] == {"x": 2}
    assert validate_step(frame, after, expect={"new_missing": False})[0]["severity"] == "error"
    assert validate_step(frame, after, expect={"new_missing": True}) == []


def test_train_test_columns_and_dtypes(frame):
    train, test = frame.iloc[:80], frame.iloc[80:]
    assert validate_step(frame, frame, expect={"train_test": (train, test)}) == []
    failures = validate_step(frame, frame, expect={"train_test": (train, test.drop(columns="z"))})
    assert checks(failures) == {"train_test_columns"}
    assert failures[0]["only_train"] == ["z"]
    failures = validate_step(frame, frame, expect={"train_test": (train, test.astype({"z": "int64"}))})
    assert checks(failures) == {"train_test_dtypes"}
    assert failures[0]["dtypes"] == {"z": ["float64", "int64"]}


def test_duplicated_columns(frame):
    after = pd.concat([frame, frame[["x"]]], axis=1)
    failures = validate_step(frame, after)
    assert checks(failures) == {"duplicated_columns"}
    assert failures[0]["columns"] == ["x"]


def test_fit_on_test(frame):
    train, test = frame.index[:80], frame.index[80:]
    assert validate_step(frame, frame, expect={"fit_rows": train, "test_index": test}) == []
    failures = validate_step(frame, frame, expect={"fit_rows": frame.index, "test_index": test})
    assert checks(failures) == {"fit_on_test"}
    assert failures[0]["overlapping_rows"] == 20


def test_failures_are_json_safe(frame):
    import json

    after = frame.iloc[:10].assign(x=np.nan).drop(columns="y")
    failures = validate_step(frame, after, target="y")
    assert {"row_retention", "target_lost", "new_missing"} <= checks(failures)
    json.dumps(failures)


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"expect": {"rowz": "same"}}, ValueError, "rowz"),
        ({"expect": {"min_row_retention": 1.5}}, ValueError, "min_row_retention"),
        ({"expect": {"rows": "half"}}, ValueError, "rows"),
        ({"expect": {"rows": "one_per_entity"}}, ValueError, "id"),
        ({"expect": {"train_test": "x"}}, TypeError, "train_test"),
        ({"expect": {"fit_rows": [1]}}, ValueError, "test_index"),
        ({"expect": [1]}, TypeError, "expect"),
        ({"target": "nope"}, KeyError, "nope"),
    ],
)
def test_bad_arguments(frame, kwargs, error, match):
    with pytest.raises(error, match=match):
        validate_step(frame, frame, **kwargs)


def test_non_frames_rejected(frame):
    with pytest.raises(TypeError, match="before"):
        validate_step(frame.to_dict(), frame)
    with pytest.raises(TypeError, match="after"):
        validate_step(frame, [1, 2])
