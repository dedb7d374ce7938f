"""kt.recode_status: a status of several codes recoded to the 0/1 event the survival models read
(the censoring code to 0, every other code to 1), replayed on new data; bad input is one clear error."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import kernel_tools as kt


def status_frame() -> pd.DataFrame:
    return pd.DataFrame({"age": [50, 61, 72, 45, 58, 66], "time": [9.0, 1.2, 0.8, 8.5, 2.0, 7.7],
                         "status": [2, 1, 3, 2, 1, 2]})


def test_the_censoring_code_becomes_0_every_other_code_1_and_the_input_is_unchanged():
    df = status_frame()
    out, report = kt.recode_status(df, column="status", censored=2)
    assert out["status"].tolist() == [0, 1, 1, 0, 1, 0] and out["status"].dtype == np.int64
    assert df["status"].tolist() == [2, 1, 3, 2, 1, 2]  # a new frame: the checkpoint keeps the codes
    assert list(out.columns) == list(df.columns) and report.columns_added == report.columns_removed == []
    d = report.details
    assert d["rows_per_code"] == {"1": 2, "2": 3, "3": 1} and d["events_after"] == 3 and d["censored_after"] == 3
    assert d["said"] == "'status' recoded: 2 -> 0 (censored), 1, 3 -> 1 (any event)"


def test_a_missing_status_stays_missing_and_the_fitted_step_replays_on_new_data():
    df = status_frame()
    df.loc[1, "status"] = np.nan
    out, report = kt.recode_status(df, column="status", censored=2)
    assert out["status"].isna().tolist() == [False, True, False, False, False, False]
    new = pd.DataFrame({"age": [40, 70], "time": [3.0, 9.0], "status": [3, 2]})
    assert report.apply(new)["status"].tolist() == [1, 0]


def test_named_events_leave_no_code_unread_and_bad_input_says_what_is_wrong():
    df = status_frame()
    with pytest.raises(ValueError, match=r"neither censored \(2\) nor an event \(1\): \[3.0\]"):
        kt.recode_status(df, column="status", censored=2, events=[1])
    with pytest.raises(ValueError, match="no rows coded 0 .*its codes are 1, 2, 3"):
        kt.recode_status(df, column="status", censored=0)
    with pytest.raises(KeyError, match="'state'"):
        kt.recode_status(df, column="state", censored=2)
    with pytest.raises(ValueError, match="not numeric codes"):
        kt.recode_status(df.assign(status=["alive", "dead", "dead", "alive", "dead", "alive"]), column="status")
