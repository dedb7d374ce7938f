"""Bad input gets a clear message; the input is never mutated; display and JSON work."""

import json

import numpy as np
import pandas as pd
import pytest
from _injected import kitchen_sink

from kernel_tools.diagnosis import diagnose, diagnose_join
from kernel_tools.findings import Diagnosis


def small():
    rng = np.random.default_rng(0)
    return pd.DataFrame({"a": rng.normal(size=60), "b": rng.choice(["x", "y"], 60),
                         "y": rng.integers(0, 2, 60)})


@pytest.mark.parametrize("make, exc, match", [
    (lambda: "not a frame", TypeError, "pandas DataFrame"),
    (lambda: pd.DataFrame(), ValueError, "no rows"),
    (lambda: pd.DataFrame(index=range(3)), ValueError, "no columns"),
    (lambda: pd.DataFrame([[1, 2]], columns=["a", "a"]), ValueError, "duplicated column names"),
    (lambda: pd.DataFrame([[1, 2]], columns=[0, 1]), TypeError, "non-string column names"),
    (lambda: pd.DataFrame([[1, 2]], columns=pd.MultiIndex.from_tuples([("a", "x"), ("a", "y")])),
     TypeError, "MultiIndex"),
])
def test_bad_frames(make, exc, match):
    with pytest.raises(exc, match=match):
        diagnose(make())


def test_bad_target():
    df = small()
    with pytest.raises(KeyError, match="'nope'"):
        diagnose(df, target="nope")
    df["empty"] = np.nan
    with pytest.raises(ValueError, match="entirely missing"):
        diagnose(df, target="empty")
    df["one"] = 1
    with pytest.raises(ValueError, match="single value"):
        diagnose(df, target="one")
    with pytest.raises(ValueError, match="task must be"):
        diagnose(small(), target="y", task="clustering")
    with pytest.raises(ValueError, match="sample"):
        diagnose(small(), target="y", sample=5)


def test_awkward_but_valid_input():
    rng = np.random.default_rng(0)
    n = 200
    df = pd.DataFrame({
        "only_nan": np.full(n, np.nan),
        "mixed": [1, "two", 3.0, None] * (n // 4),
        "with_inf": np.where(rng.random(n) < 0.05, np.inf, rng.normal(size=n)),
        "when": pd.date_range("2024-01-01", periods=n, freq="h", tz="Europe/Berlin"),
        "cat": pd.Categorical(rng.choice(["a", "b"], n)),
        "y": rng.integers(0, 2, n),
    })
    d = diagnose(df, target="y")
    assert any(f.kind == "missing_values" and f.columns == ["only_nan"] for f in d.findings)
    assert d.by_kind("outliers")[0].evidence["columns"]["with_inf"]["infinite_values"] > 0
    json.dumps(d.to_dict())
    one = diagnose(pd.DataFrame({"x": rng.normal(size=30)}))
    assert one.task["target"] is None and one.shape == [30, 1]


def test_input_is_not_mutated():
    df, _ = kitchen_sink(400, seed=2)
    before = df.copy(deep=True)
    test = df.drop(columns="y").iloc[:200].copy()
    test_before = test.copy(deep=True)
    diagnose(df, target="y", test=test)
    pd.testing.assert_frame_equal(df, before)
    pd.testing.assert_frame_equal(test, test_before)


@pytest.mark.slow
def test_to_dict_round_trip_and_display():
    df, _ = kitchen_sink(400, seed=2)
    d = diagnose(df, target="y")
    data = json.loads(json.dumps(d.to_dict()))
    assert data["task"]["kind"] == "classification" and data["shape"] == [430, df.shape[1]]
    back = Diagnosis.from_dict(data)
    assert [f.id for f in back.findings] == [f.id for f in d.findings]
    html = d._repr_html_()
    assert "<table>" in html and "target_leakage" in html
    assert html.count("data:image/png;base64,") >= 2  # missingness + predictive power (+ outliers)


def test_diagnose_join_bad_input():
    with pytest.raises(TypeError, match="at least two"):
        diagnose_join({"a": small()})
    with pytest.raises(KeyError, match="target"):
        diagnose_join({"a": small(), "b": small()}, target="missing")
