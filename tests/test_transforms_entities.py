import numpy as np
import pandas as pd
import pytest
from _purity import run_pure
from lifelines.datasets import load_recur, load_stanford_heart_transplants

from kernel_tools.transforms import EntityAggregator, aggregate_per_entity


@pytest.fixture
def visits():
    return pd.DataFrame(
        {
            "pid": [1, 1, 1, 2, 2, 3],
            "visit": [3, 1, 2, 1, 2, 1],
            "bp": [130.0, 110.0, np.nan, 150.0, 140.0, 120.0],
            "smoker": ["no", "no", "yes", "yes", np.nan, "no"],
            "died": [1, 0, 0, 0, 0, 0],
        }
    )


def test_last_takes_last_non_missing_in_time_order(visits):
    out, report = run_pure(aggregate_per_entity, visits, "pid", time="visit", how="last")
    assert out["pid"].tolist() == [1, 2, 3]
    row = out.set_index("pid")
    assert row.loc[1, "bp"] == 130.0  # visit 3
    assert row.loc[1, "smoker"] == "no"  # visit 3
    assert row.loc[2, "smoker"] == "yes"  # visit 2 is missing: carried forward from visit 1
    assert (report.rows_in, report.rows_out) == (6, 3)
    assert report.details["records_per_entity"] == {"min": 1, "median": 2.0, "max": 3}


def test_baseline_mean_and_mapping(visits):
    base, _ = aggregate_per_entity(visits, "pid", time="visit", how="baseline")
    assert base.set_index("pid").loc[1, "bp"] == 110.0
    mean, report = aggregate_per_entity(visits, "pid", time="visit", how="mean")
    assert mean.set_index("pid").loc[1, "bp"] == pytest.approx(120.0)
    assert report.details["how"]["smoker"] == "last" and report.warnings
    mixed, report = aggregate_per_entity(visits, "pid", time="visit", how={"bp": "max", "smoker": "first"})
    row = mixed.set_index("pid")
    assert row.loc[1, "bp"] == 130.0 and row.loc[1, "smoker"] == "no"
    assert report.details["how"]["died"] == "last"


def test_outcome_from_whole_history_and_landmark(visits):
    out, report = aggregate_per_entity(visits, "pid", time="visit", how="last", outcome=["died"], landmark=2)
    row = out.set_index("pid")
    assert row.loc[1, "died"] == 1  # outcome from visit 3, after the landmark
    assert row.loc[1, "bp"] == 110.0
    assert report.details["outcome"] == ["died"] and report.details["how"]["died"] == "final"


def test_bad_inputs_are_named(visits):
    with pytest.raises(KeyError, match="patient"):
        aggregate_per_entity(visits, "patient")
    with pytest.raises(KeyError, match="when"):
        aggregate_per_entity(visits, "pid", time="when")
    with pytest.raises(ValueError, match="how must be one of"):
        aggregate_per_entity(visits, "pid", how="latest")
    with pytest.raises(ValueError, match="needs a numeric column"):
        aggregate_per_entity(visits, "pid", how={"smoker": "mean"})
    with pytest.raises(ValueError, match="landmark needs time"):
        aggregate_per_entity(visits, "pid", landmark=2)
    with pytest.raises(TypeError, match="DataFrame"):
        aggregate_per_entity(visits.to_dict(), "pid")


def test_fitted_spec_replays_on_new_data(visits):
    _, report = aggregate_per_entity(visits, "pid", time="visit", how={"bp": "mean"})
    new = pd.DataFrame({"pid": [9, 9], "visit": [2, 1], "bp": [100.0, 200.0], "smoker": ["a", "b"], "died": [1, 0]})
    out = report.apply(new)
    assert out.shape == (1, 5)
    assert out.loc[0, "bp"] == 150.0 and out.loc[0, "smoker"] == "a"
    assert isinstance(report.transformer, EntityAggregator)
    assert list(report.transformer.get_feature_names_out()) == ["pid", "visit", "bp", "smoker", "died"]


def test_stanford_heart_transplants_outcome_from_last_record():
    df = load_stanford_heart_transplants()
    out, report = run_pure(aggregate_per_entity, df, "id", time="start", how="baseline", outcome=["stop", "event"])
    assert len(out) == df["id"].nunique() == 103
    assert out["id"].is_unique
    expected = df.sort_values(["id", "start"]).groupby("id").tail(1).set_index("id")
    got = out.set_index("id")
    pd.testing.assert_series_equal(got["event"], expected["event"], check_names=False)
    pd.testing.assert_series_equal(got["stop"], expected["stop"], check_names=False)
    first = df.sort_values(["id", "start"]).groupby("id").head(1).set_index("id")
    pd.testing.assert_series_equal(got["transplant"], first["transplant"], check_names=False)
    assert report.rows_out == 103


def test_recur_unsorted_records_are_ordered_by_time():
    df = load_recur()
    out, _ = run_pure(aggregate_per_entity, df, "ID", time="TIME0", outcome=["TIME1", "EVENT", "CENSOR"])
    assert len(out) == 400 and out["ID"].is_unique
    expected = df.loc[df.groupby("ID")["TIME0"].idxmax()].set_index("ID")
    got = out.set_index("ID")
    assert (got["TIME1"] == expected["TIME1"]).all()
    assert (got["EVENT"] == expected["EVENT"]).all()
    assert got.loc[1, "TIME1"] == 88 and got.loc[1, "EVENT"] == 4
