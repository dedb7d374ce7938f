"""Generic failures the sweep over unseen real data sets found (benchmarks/sweep.py), each on
small generated data: counts called classes, survival coded 1/2 or 0/1/2 missed, honest strong
predictors called leaks, identical rows of coarse data removed, ranks and years called ids,
panels (entity × year) missed."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import kernel_tools as kt
from kernel_tools.diagnosis.task import quantity_reason


def _recommended(finding):
    return next(o for o in finding.options if o.recommended)


# ---------------------------------------------------------------- task


def test_count_target_with_gaps_is_regression():
    rng = np.random.default_rng(0)
    n = 600
    x = rng.normal(size=n)
    # affairs-like counts: 0 for most rows, then 1, 2, 3, 7, 12
    y = rng.choice([0, 1, 2, 3, 7, 12], size=n, p=[0.7, 0.08, 0.06, 0.06, 0.05, 0.05])
    d = kt.diagnose(pd.DataFrame({"x": x, "n_visits": y}), target="n_visits")
    assert d.task["kind"] == "regression"
    assert "count" in d.task["reason"]


def test_count_target_with_a_thin_tail_is_regression():
    rng = np.random.default_rng(1)
    y = np.minimum(rng.poisson(0.4, 2000), 9)
    y[:3] = [7, 8, 9]
    d = kt.diagnose(pd.DataFrame({"x": rng.normal(size=2000), "visits": y}), target="visits")
    assert d.task["kind"] == "regression"


def test_few_rows_per_integer_value_is_regression():
    rng = np.random.default_rng(2)
    y = rng.integers(40, 60, 20)  # 20 rows, ~12 distinct pulse values
    d = kt.diagnose(pd.DataFrame({"x": rng.normal(size=20), "pulse": y}), target="pulse")
    assert d.task["kind"] == "regression"


@pytest.mark.slow
def test_balanced_class_codes_stay_classification():
    rng = np.random.default_rng(3)
    y = np.repeat(np.arange(10), 40)  # digit-like labels 0..9
    d = kt.diagnose(pd.DataFrame({"x": rng.normal(size=400), "digit": y}), target="digit")
    assert d.task["kind"] == "classification"
    assert quantity_reason(y.astype(float)) is None


def _survival_frame(event_codes, time_name="time", n=300, seed=4):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({time_name: rng.exponential(300, n).round() + 1,
                         "status": rng.choice(event_codes, n),
                         "age": rng.normal(60, 10, n).round()})


def test_status_coded_1_2_next_to_time_is_survival():
    df = _survival_frame([1, 1, 2])
    d = kt.diagnose(df, target="status")
    assert d.task["kind"] == "survival" and d.task["time"] == "time"
    setup = d.by_kind("survival_setup")[0]
    assert setup.evidence["events"] == int((df["status"] == 2).sum())


def test_status_0_1_2_with_most_censored_is_survival_with_competing_events():
    df = _survival_frame([0, 0, 0, 1, 2])
    # censored rows are followed to the end of the study, the others until their event: with
    # codes independent of the time, a 'time' column would be a feature beside three classes
    df["time"] = np.where(df["status"] == 0, df["time"] + 600, df["time"])
    d = kt.diagnose(df, target="status")
    assert d.task["kind"] == "survival"
    assert d.by_kind("survival_setup")[0].evidence["competing_events"] is True


def test_three_class_codes_without_a_duration_stay_classification():
    rng = np.random.default_rng(5)
    df = pd.DataFrame({"x": rng.normal(size=300), "grade": rng.choice([0, 0, 1, 2], 300)})
    assert kt.diagnose(df, target="grade").task["kind"] == "classification"


@pytest.mark.parametrize("name", ["TIME1", "diff_days", "lenfol", "tstop"])
def test_duration_names_of_follow_up_are_recognised(name):
    df = _survival_frame([0, 1], time_name=name)
    d = kt.diagnose(df, target="status")
    assert d.task["kind"] == "survival" and d.task["time"] == name


def test_one_class_left_for_label_check_does_not_crash():
    rng = np.random.default_rng(6)
    y = np.array([0] * 90 + [1] * 4 + [2] * 4 + [3] * 2)
    df = pd.DataFrame({"a": rng.normal(size=100), "b": rng.choice(list("xyz"), 100), "y": y})
    d = kt.diagnose(df, target="y", task="classification")
    assert d.by_kind("label_issues") == []


# ---------------------------------------------------------------- leakage


def _species(seed=7, n=300):
    """Three classes; two correlated size features separate them well but overlap at one border."""
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1, 2], n // 3)
    size = np.array([1.0, 4.3, 5.5])[y] + rng.normal(0, 0.45, n) * (y > 0) + rng.normal(0, 0.1, n)
    return pd.DataFrame({"length": size.round(1), "width": (size * 0.35 + rng.normal(0, 0.12, n)).round(1),
                         "colour": rng.normal(size=n), "species": np.array(["a", "b", "c"])[y]})


def test_honest_strong_predictors_of_an_easy_outcome_are_not_leaks():
    d = kt.diagnose(_species(), target="species")
    assert d.column_stats["feature_scores"]["length"] > 0.95  # strong enough for the old rule
    assert d.by_kind("target_leakage") == []


def test_one_strong_honest_predictor_left_alone_is_not_a_leak():
    df = _species().drop(columns=["width"])  # e.g. after its twin was dropped
    d = kt.diagnose(df, target="species")
    assert d.column_stats["feature_scores"]["length"] > 0.95
    assert d.by_kind("target_leakage") == []


def test_a_rule_derived_column_is_a_leak_even_with_a_companion():
    rng = np.random.default_rng(8)
    n = 400
    weight = rng.normal(3000, 600, n)
    df = pd.DataFrame({"weight": weight.round(), "weight_lb": (weight / 453.6).round(2),
                       "age": rng.normal(25, 5, n), "low": (weight < 2500).astype(int)})
    flagged = {f.columns[0] for f in kt.diagnose(df, target="low").by_kind("target_leakage")}
    assert {"weight", "weight_lb"} <= flagged


def test_pure_levels_in_a_crowd_of_strong_features_are_not_leaks():
    rng = np.random.default_rng(9)
    n = 600
    y = rng.integers(0, 2, n)
    cols = {f"v{i}": np.clip(np.round(1 + 6 * y + rng.normal(0, 2.2, n)), 1, 10) for i in range(6)}
    df = pd.DataFrame({**cols, "malignant": y})
    d = kt.diagnose(df, target="malignant")
    strong = [c for c, s in d.column_stats["feature_scores"].items() if s >= 0.875]
    assert len(strong) >= 4
    assert d.by_kind("target_leakage") == []


# ---------------------------------------------------------------- duplicates


def test_identical_rows_of_coarse_data_are_kept():
    rng = np.random.default_rng(10)
    n = 1000
    df = pd.DataFrame({"cls": rng.choice(["1st", "2nd", "3rd", "crew"], n),
                       "sex": rng.choice(["m", "f"], n), "adult": rng.choice(["yes", "no"], n),
                       "survived": rng.choice(["yes", "no"], n)})
    before = df.copy()
    dup = kt.diagnose(df, target="survived").by_kind("duplicate_rows")[0]
    assert dup.severity == "info" and dup.gate is None
    assert _recommended(dup).id == "keep"
    assert dup.evidence["pairs_expected_by_chance"] > 0
    pd.testing.assert_frame_equal(df, before)


def test_identical_rows_that_repeat_only_common_values_are_kept():
    rng = np.random.default_rng(25)
    workers = pd.DataFrame({"age": rng.integers(20, 60, 850), "educ": rng.integers(8, 17, 850),
                            "married": rng.integers(0, 2, 850), "income": rng.lognormal(10, 0.5, 850).round(2)})
    retired = pd.DataFrame({"age": rng.integers(60, 63, 150), "educ": 8, "married": rng.integers(0, 2, 150),
                            "income": 0.0})  # no earnings: many look exactly alike
    df = pd.concat([workers, retired], ignore_index=True)
    df["treated"] = rng.integers(0, 2, len(df))
    dup = kt.diagnose(df, target="treated").by_kind("duplicate_rows")[0]
    assert dup.evidence["exact_duplicates"] > 100
    assert dup.evidence["identical_pairs"] > 5 * dup.evidence["pairs_expected_by_chance"]
    assert _recommended(dup).id == "keep" and dup.evidence["share_with_a_rare_value"] < 0.5


def test_copied_rows_of_measurements_are_still_removed():
    rng = np.random.default_rng(11)
    df = pd.DataFrame({"a": rng.normal(size=300), "b": rng.normal(size=300),
                       "y": rng.integers(0, 2, 300)})
    df = pd.concat([df, df.iloc[:15]], ignore_index=True)
    dup = kt.diagnose(df, target="y").by_kind("duplicate_rows")[0]
    assert _recommended(dup).id == "deduplicate" and dup.gate == "row_removal"


# ---------------------------------------------------------------- identifiers


def test_year_and_rank_columns_are_not_identifiers_but_a_row_number_is():
    rng = np.random.default_rng(12)
    n = 85
    df = pd.DataFrame({"dept": np.sort(rng.choice(np.arange(1, 90), n, replace=False)),
                       "YEAR": np.arange(1920, 1920 + n),
                       "wealth_rank": rng.permutation(np.arange(1, n + 1)),
                       "x": rng.normal(size=n)})
    df["y"] = df["x"] * 2 + rng.normal(size=n)
    ids = {f.columns[0] for f in kt.diagnose(df, target="y").by_kind("id_column")}
    assert ids == {"dept"}


def test_a_saved_index_of_shuffled_rows_is_an_identifier():
    rng = np.random.default_rng(13)
    n = 200
    df = pd.DataFrame({"Unnamed: 0": rng.permutation(n), "x": rng.normal(size=n),
                       "y": rng.integers(0, 2, n)})
    ids = {f.columns[0] for f in kt.diagnose(df, target="y").by_kind("id_column")}
    assert ids == {"Unnamed: 0"}


# ---------------------------------------------------------------- panels


def _panel(seed=14):
    rng = np.random.default_rng(seed)
    firms = [f"firm {k}" for k in range(10)]
    years = np.arange(1935, 1955)
    df = pd.DataFrame([(f, t) for f in firms for t in years], columns=["firm", "year"])
    size = rng.lognormal(5, 1, 10)[df.index // len(years)]
    df["value"] = size * rng.lognormal(0, 0.2, len(df))
    df["capital"] = size * rng.lognormal(-1, 0.3, len(df))
    df["invest"] = 0.1 * df["value"] + 0.3 * df["capital"] + rng.normal(0, 5, len(df))
    return df


def test_entity_by_year_panel_is_found_and_kept_grouped():
    d = kt.diagnose(_panel(), target="invest")
    assert d.task["id"] == "firm" and d.task["visit"] == "year"
    rm = d.by_kind("repeated_measurements")[0]
    # every row has its own outcome: keep the rows and group the validation by firm
    assert _recommended(rm).id == "keep"


def test_day_by_month_grid_is_not_an_entity():
    rng = np.random.default_rng(15)
    df = pd.DataFrame([(m, day) for m in range(5, 10) for day in range(1, 31)], columns=["Month", "Day"])
    df["Temp"] = rng.normal(75, 8, len(df)).round()
    df["Ozone"] = df["Temp"] * 1.5 + rng.normal(0, 20, len(df))
    d = kt.diagnose(df, target="Ozone")
    assert d.task["id"] is None and d.by_kind("repeated_measurements") == []


def test_entity_named_id_with_an_order_is_found_without_baseline_columns():
    rng = np.random.default_rng(16)
    people, tasks = 60, 8
    df = pd.DataFrame([(i, k) for i in range(1, people + 1) for k in range(1, tasks + 1)],
                      columns=["id", "choiceid"])
    df = df.sample(frac=1.0, random_state=0).reset_index(drop=True)  # no shared grid order
    df["price1"] = rng.normal(2000, 500, len(df)).round()
    df["price2"] = rng.normal(2000, 500, len(df)).round()
    df["choice"] = np.where(df["price1"] + rng.normal(0, 400, len(df)) < df["price2"], "one", "two")
    d = kt.diagnose(df, target="choice")
    assert d.task["id"] == "id"


# ---------------------------------------------------------------- more leaks and dates


def test_target_computed_from_several_columns_is_a_leak():
    rng = np.random.default_rng(17)
    n = 300
    df = pd.DataFrame({"read": rng.normal(650, 20, n).round(1), "math": rng.normal(650, 20, n).round(1),
                       "income": rng.lognormal(2.5, 0.4, n), "meals": rng.uniform(0, 100, n)})
    df["score"] = (df["read"] + df["math"]) / 2
    before = df.copy()
    leaks = kt.diagnose(df, target="score").by_kind("target_leakage")
    assert {f.columns[0] for f in leaks} == {"read", "math"}
    assert leaks[0].evidence["formula_r2"] > 0.995 and leaks[0].severity == "critical"
    pd.testing.assert_frame_equal(df, before)


def test_honest_regression_is_not_a_formula():
    rng = np.random.default_rng(18)
    n = 400
    df = pd.DataFrame({"size": rng.uniform(40, 200, n), "rooms": rng.integers(1, 6, n)})
    df["price"] = 3000 * df["size"] + 10000 * df["rooms"] + rng.normal(0, 20000, n)
    assert kt.diagnose(df, target="price").by_kind("target_leakage") == []


def test_column_filled_only_for_events_is_a_survival_leak():
    df = _survival_frame([0, 1], time_name="futime", n=400, seed=19)
    df["cause"] = np.where(df["status"] == 1, np.random.default_rng(19).choice(["heart", "cancer"], 400), None)
    leaks = kt.diagnose(df, target="status").by_kind("target_leakage")
    assert [f.columns for f in leaks] == [["cause"]]
    assert leaks[0].evidence["missingness_event_auroc"] > 0.95


def test_end_date_with_an_extraction_timestamp_tracks_follow_up():
    rng = np.random.default_rng(20)
    n = 300
    start = pd.Timestamp("1990-01-01") + pd.to_timedelta(rng.integers(0, 7000, n), unit="D")
    days = rng.integers(30, 6000, n)
    event = rng.random(n) < 0.7
    end = (start + pd.to_timedelta(days, unit="D")).strftime("%Y-%m-%d %H:%M:%S").to_numpy().astype(object)
    end[~event] = "2013-10-01 22:20:10.165196"  # the day the data were pulled
    df = pd.DataFrame({"start_date": start.strftime("%Y-%m-%d %H:%M:%S"), "end_date": end,
                       "age": rng.normal(60, 8, n), "diff_days": days, "observed": event})
    d = kt.diagnose(df, target="observed")
    assert d.task["kind"] == "survival"
    assert "end_date" in {f.columns[0] for f in d.by_kind("target_leakage")}


def test_year_month_dates_are_dates():
    from kernel_tools.diagnosis.columns import profile_column

    s = pd.Series(["1949-02", "1949-03", "1951-11", "1960-01"] * 10)
    assert profile_column("diagnosed", s).parsed_as == "datetime"


def test_follow_up_name_beats_a_longer_time_before_baseline():
    rng = np.random.default_rng(21)
    n = 200
    df = pd.DataFrame({"time_from_onset_to_diagnosis_months": rng.integers(1, 200, n),
                       "time_to_last_observation_years": rng.uniform(0.1, 15, n).round(2),
                       "dead": rng.integers(0, 2, n)})
    assert kt.diagnose(df, target="dead").task["time"] == "time_to_last_observation_years"


def test_a_travel_time_is_not_a_follow_up_for_a_several_class_choice():
    rng = np.random.default_rng(22)
    n = 450
    y = rng.choice(["car", "bus", "rail"], n)
    df = pd.DataFrame({"time.car": rng.normal(30, 5, n), "time.bus": rng.normal(60, 5, n) - 10 * (y == "bus"),
                       "cost": rng.normal(10, 2, n), "mode": y})
    assert kt.diagnose(df, target="mode").by_kind("target_leakage") == []


def test_columns_of_distinct_counts_are_not_redundant():
    rng = np.random.default_rng(23)
    n = 90
    df = pd.DataFrame({"donations": rng.permutation(np.arange(1000, 1000 + 7 * n, 7)),
                       "suicides": rng.permutation(np.arange(20000, 20000 + 13 * n, 13)),
                       "crime": rng.normal(size=n)})
    assert kt.diagnose(df, target="crime").by_kind("redundant_features") == []


def test_categories_that_map_one_to_one_are_still_redundant():
    rng = np.random.default_rng(24)
    codes = rng.integers(0, 12, 400)
    df = pd.DataFrame({"zone": codes, "zone_label": np.array(list("abcdefghijkl"))[codes],
                       "y": rng.normal(size=400)})
    found = kt.diagnose(df, target="y").by_kind("redundant_features")
    assert [f.columns for f in found] == [["zone", "zone_label"]]


def test_follow_up_next_to_several_outcome_states_is_survival_with_the_alive_code_censored():
    rng = np.random.default_rng(26)
    n = 300
    status = rng.choice([1, 2, 3], n, p=[0.3, 0.55, 0.15])  # died of it, alive, died of other causes
    df = pd.DataFrame({"time": np.where(status == 2, rng.uniform(2000, 5000, n), rng.uniform(100, 3000, n)).round(),
                       "year": rng.integers(1962, 1978, n), "thickness": rng.lognormal(0.5, 0.8, n),
                       "status": status})
    d = kt.diagnose(df, target="status")
    # the follow-up is the survival time, not a leak of a classification (issue 26): 2 (alive) censored
    assert d.task["kind"] == "survival" and d.task["time"] == "time" and d.task["censored"] == "2"
    assert "time" not in {c for f in d.by_kind("target_leakage") for c in f.columns}
