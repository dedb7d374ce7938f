import numpy as np
import pandas as pd
import pytest
from _purity import run_pure

from kernel_tools.transforms import OutlierHandler, handle_outliers


@pytest.fixture
def df():
    rng = np.random.default_rng(0)
    x = rng.normal(10, 1, 200)
    x[:3] = [100.0, -50.0, 40.0]
    return pd.DataFrame({"x": x, "z": rng.normal(size=200), "y": rng.integers(0, 2, 200), "s": ["a"] * 200})


def test_iqr_flag_clip_set_missing_remove(df):
    q1, q3 = df["x"].quantile([0.25, 0.75])
    lo, hi = q1 - 1.5 * (q3 - q1), q3 + 1.5 * (q3 - q1)
    n_out = int(((df["x"] < lo) | (df["x"] > hi)).sum())
    flagged, report = run_pure(handle_outliers, df, columns=["x"])
    assert flagged["x_outlier"].sum() == n_out >= 3 and report.columns_added == ["x_outlier"]
    assert report.details["bounds"]["x"] == pytest.approx([lo, hi])
    clipped, report = run_pure(handle_outliers, df, columns=["x"], action="clip")
    assert clipped["x"].max() == pytest.approx(hi) and clipped["x"].min() == pytest.approx(lo)
    missing, _ = handle_outliers(df, columns=["x"], action="set_missing")
    assert missing["x"].isna().sum() == n_out
    removed, report = run_pure(handle_outliers, df, columns=["x"], action="remove")
    assert len(removed) == 200 - n_out and report.rows_out == 200 - n_out
    assert report.details["applied_to_new_data_as"] == "clip"


def test_default_columns_skip_target_and_text(df):
    _, report = handle_outliers(df, target="y")
    assert sorted(report.details["outliers"]) == ["x", "z"]


def test_mad_and_bounds_learned_on_train_only(df):
    _, report = handle_outliers(df, columns=["x"], method="mad", action="clip")
    center = df["x"].median()
    mad = 1.4826 * (df["x"] - center).abs().median()
    assert report.details["bounds"]["x"] == pytest.approx([center - 3.5 * mad, center + 3.5 * mad])
    test = pd.DataFrame({"x": np.linspace(1000, 2000, 50), "z": 0.0, "y": 0, "s": "a"})
    applied = report.apply(test)
    assert np.allclose(applied["x"], center + 3.5 * mad)  # the train bound, not the test one
    assert report.transformer.bounds_["x"] == pytest.approx(report.details["bounds"]["x"])


def test_remove_replays_as_clip_and_never_drops_test_rows(df):
    _, report = handle_outliers(df, columns=["x"], action="remove")
    test = pd.DataFrame({"x": [500.0, 10.0], "z": [0.0, 0.0], "y": [0, 1], "s": ["a", "a"]})
    out = report.apply(test)
    assert len(out) == 2 and out["x"].iloc[0] == pytest.approx(report.details["bounds"]["x"][1])


def test_isolation_forest_flags_rows(df):
    out, report = run_pure(handle_outliers, df, columns=["x", "z"], method="isolation_forest", threshold=0.02)
    assert out["outlier"].sum() == report.details["rows_with_outliers"] > 0
    assert out.loc[:2, "outlier"].tolist() == [1, 1, 1]
    removed, report = handle_outliers(df, columns=["x", "z"], method="isolation_forest", action="remove")
    assert report.details["applied_to_new_data_as"] == "passthrough" and len(removed) < 200
    pd.testing.assert_frame_equal(report.apply(df), df)


def test_bad_inputs(df):
    with pytest.raises(ValueError, match="action"):
        handle_outliers(df, action="delete")
    with pytest.raises(ValueError, match="method"):
        handle_outliers(df, method="zscore")
    with pytest.raises(TypeError, match="'s'"):
        handle_outliers(df, columns=["s"])
    with pytest.raises(KeyError, match="'q'"):
        handle_outliers(df, columns=["q"])
    with pytest.raises(ValueError, match="rows, not values"):
        handle_outliers(df, columns=["x"], method="isolation_forest", action="clip")
    with pytest.raises(ValueError, match="threshold"):
        handle_outliers(df, columns=["x"], threshold=-1)
    with pytest.raises(ValueError, match="overwrite"):
        handle_outliers(df.assign(x_outlier=0), columns=["x"])
    constant = pd.DataFrame({"c": [1.0] * 20 + [5.0]})
    out, report = handle_outliers(constant)
    assert report.details["skipped_columns"] == {"c": "no spread (most values are equal)"}
    with pytest.raises(KeyError, match="lacks"):
        OutlierHandler(columns=["x"]).fit(df).transform(df.drop(columns="x"))
