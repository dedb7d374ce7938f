"""What a codebook decides in ``diagnose(..., dictionary=)``, on a REDCap project and a labelled
Stata file built so that value tests cannot see it (``codebook_data``), and what happens without it."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from codebook_data import (
    FOLLOW_UP,
    IDENTIFIERS,
    STATA_FOLLOW_UP,
    STATA_IDENTIFIERS,
    labelled_stata,
    redcap_export,
    redcap_project,
)

import kernel_tools as kt
from kernel_tools.diagnosis.codebook import label_timing, read_codebook
from kernel_tools.frames import profile, sample_rows
from kernel_tools.privacy import WITHHELD, forget_private, private_columns
from kernel_tools.redcap import event_time, find_layout, order_events

pytest.importorskip("pyreadstat")


@pytest.fixture(autouse=True)
def _no_marks():
    forget_private()
    yield
    forget_private()


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> dict:
    files = redcap_project(tmp_path_factory.mktemp("redcap"))
    return {**files, "df": pd.read_csv(files["export"]),
            "dictionary": kt.read_dictionary(files["dictionary"], events=files["mapping"])}


def leaks(diagnosis) -> dict[str, str]:
    return {f.columns[0]: f.summary for f in diagnosis.by_kind("target_leakage")}


def identifiers(diagnosis) -> set[str]:
    return {f.columns[0] for f in diagnosis.by_kind("id_column")}


def test_with_the_codebook_every_follow_up_and_identifier_column_is_marked(project) -> None:
    d = kt.diagnose(project["df"], target="death", dictionary=project["dictionary"])
    found = leaks(d)
    assert set(FOLLOW_UP) | {"ae_term", "ae_grade", "death_cause"} <= set(found)
    # the finding cites the codebook line it rests on
    assert ("'hosp_days' — 'Length of hospital stay since enrolment (days)', form follow_up_visit "
            "(dictionary.csv, line 14)") in found["hosp_days"]
    assert "form follow_up_visit is collected only at month_6_arm_1" in found["qol_score"]
    timing = d.column_stats["timing"]["qol_score"]
    said = [e for e in timing["evidence"] if e.get("source") == "codebook"]
    assert timing["timing"] == "follow_up" and said[0]["confidence"] == 0.9
    assert set(IDENTIFIERS) <= identifiers(d)
    ref = next(f for f in d.by_kind("id_column") if f.columns == ["hosp_ref"])
    assert ref.evidence["private"] and "flagged as an identifier" in ref.summary and ref.gate == "identifiers"
    assert ref.recommended is not None and ref.recommended.action["function"] == "drop_columns"
    # baseline columns stay features
    assert not {"age", "sex", "bmi", "smoker", "sbp", "creat"} & (set(found) | identifiers(d))
    assert set(d.column_stats["private"]) == set(IDENTIFIERS)


def test_the_redcap_structure_is_found_and_its_blanks_are_not_missing_values(project) -> None:
    d = kt.diagnose(project["df"], target="death", dictionary=project["dictionary"])
    assert d.task["id"] == "record_id"
    (redcap,) = d.by_kind("redcap_events")
    assert redcap.evidence["events"] == ["baseline_arm_1", "month_6_arm_1", "month_12_arm_1"]
    assert redcap.evidence["order_from"] == "the event mapping" and redcap.evidence["outcome_event"] == "month_12_arm_1"
    assert redcap.evidence["repeating_rows"] > 0 and redcap.evidence["blank_by_design"] > 1000
    action = redcap.recommended.action
    assert action["function"] == "redcap_baseline" and action["params"]["outcome_event"] == "month_12_arm_1"
    # blanks of forms an event does not hold, and of a field its branching logic hides, are structure
    missing = {c for f in d.by_kind("missing_values") for c in f.columns}
    assert not missing & {"age", "qol_score", "ae_term", "death_cause", "sbp"}
    # REDCap's own columns are structure, not features with missing values
    assert not {c for f in d.findings for c in f.columns} & {"redcap_repeat_instrument", "enrolment_complete"}
    # the recommended step, run: one row per record at baseline, the outcome from month 12
    out, report = getattr(kt, action["function"])(project["df"], **action["params"])
    assert len(out) == 400 and out["record_id"].is_unique and out["death"].notna().all()
    assert not set(FOLLOW_UP) & set(out.columns) and report.details["outcome_events"] == {"death": "month_12_arm_1"}


def test_where_the_codebook_and_the_data_disagree_is_a_finding(project) -> None:
    d = kt.diagnose(project["df"], target="death", dictionary=project["dictionary"])
    (outside,) = [f for f in d.by_kind("dictionary_mismatch") if f.columns]
    assert outside.columns == ["sex"] and outside.evidence["outside_choices"]["sex"] == {
        "rows": 2, "values": ["3"], "choices": 2, "citation": "'sex' — 'Sex', form enrolment (dictionary.csv, line 4)"}
    (ranges,) = d.by_kind("value_out_of_range")
    assert ranges.columns == ["sbp"] and ranges.evidence["columns"]["sbp"]["above_maximum"] == 3
    # counts in words that agree: one column, several values
    assert outside.summary.startswith("1 coded column holds values the codebook does not list (2 rows in 'sex')")
    assert ranges.summary == "3 values in 1 column lie outside the valid range the codebook gives."
    fixed, _ = kt.handle_outliers(project["df"], **ranges.recommended.action["params"])
    assert fixed["sbp"].max() <= 260 and fixed["sbp"].notna().sum() == project["df"]["sbp"].notna().sum() - 3
    # a field the table lacks and a column the codebook lacks
    df = project["df"].drop(columns=["creat"]).assign(extra=1.0)
    (differ,) = [f for f in kt.diagnose(df, target="death", dictionary=project["dictionary"]).by_kind(
        "dictionary_mismatch") if not f.columns]
    assert differ.evidence["absent_fields"] == ["creat"] and differ.evidence["undescribed_columns"] == ["extra"]
    assert differ.summary.endswith(": 1 field of the codebook is not in the table, 1 column of the table is not in "
                                   "the codebook.")
    more = df.drop(columns=["sbp"]).assign(extra_2=2.0)
    (differ,) = [f for f in kt.diagnose(more, target="death", dictionary=project["dictionary"]).by_kind(
        "dictionary_mismatch") if not f.columns]
    assert differ.summary.endswith(": 2 fields of the codebook are not in the table, 2 columns of the table are not "
                                   "in the codebook.")


def test_without_the_codebook(project) -> None:
    """What happens without it: the export's layout still shows the REDCap structure and which
    columns are recorded only at later events, but the identifier flagged only in the codebook and
    the personal data are taken as features."""
    d = kt.diagnose(project["df"], target="death")
    (redcap,) = d.by_kind("redcap_events")
    assert redcap.evidence["order_from"] == "the event names"
    assert set(FOLLOW_UP) <= set(leaks(d))
    assert "the REDCap export's layout says so" in leaks(d)["qol_score"]
    assert not set(IDENTIFIERS) & identifiers(d)
    assert d.column_stats["private"] == {} and private_columns() == {}


def test_a_labelled_stata_file_whose_values_hide_the_follow_up(tmp_path: Path) -> None:
    df, dictionary = kt.read_file(labelled_stata(tmp_path / "cohort.dta"))
    forget_private()
    without = kt.diagnose(df, target="died")
    # value tests see nothing: the follow-up columns are only mildly related to the outcome
    assert not set(STATA_FOLLOW_UP) & set(leaks(without)) and not set(STATA_IDENTIFIERS) & identifiers(without)
    assert max(without.column_stats["feature_scores"][c] for c in STATA_FOLLOW_UP) < 0.65
    with_it = kt.diagnose(df, target="died", dictionary=dictionary)
    assert set(leaks(with_it)) == set(STATA_FOLLOW_UP)
    assert "its label places it after the start ('at the 6-month')" in leaks(with_it)["v5"]
    assert set(STATA_IDENTIFIERS) <= identifiers(with_it)
    assert not {"v1", "v2", "v3", "v4"} & (set(leaks(with_it)) | identifiers(with_it))


def test_private_columns_never_reach_the_probes_an_llm_reads(project) -> None:
    kt.diagnose(project["df"], target="death", dictionary=project["dictionary"])
    rows = sample_rows(project["df"], 20, random_state=1)
    assert {r["phone"] for r in rows} == {WITHHELD} and {r["hosp_ref"] for r in rows} == {WITHHELD}
    assert any(isinstance(r["age"], (int, float)) for r in rows)
    detail = {c["name"]: c for c in profile(project["df"])["columns_detail"]}
    assert detail["dob"]["examples"] == [WITHHELD] and detail["age"]["examples"] != [WITHHELD]


def test_the_codebook_timing_is_exposed_with_its_confidence(project) -> None:
    said = read_codebook(project["df"], project["dictionary"], "death")
    evidence = said.timing_evidence()
    assert evidence["hosp_days"]["timing"] == "follow_up" and evidence["hosp_days"]["confidence"] == 0.9
    assert evidence["age"]["timing"] == "baseline" and evidence["death_cause"]["timing"] == "outcome_derived"
    # a column repeated at several events is known at baseline by its baseline value
    assert evidence["sbp"]["timing"] == "baseline" and "and later at month_6_arm_1" in evidence["sbp"]["reason"]
    groups = said.stats()["multi_select"]
    assert groups == {"comorb": ["comorb___1", "comorb___2", "comorb___3"]}


@pytest.mark.parametrize("label, timing", [
    ("Systolic BP at the 6-month visit (mmHg)", "follow_up"),
    ("Length of hospital stay since enrolment (days)", "follow_up"),
    ("Change from baseline at 12 weeks", "follow_up"),
    ("Readmitted within 30 days of discharge", "follow_up"),
    ("Date of death", "outcome_derived"),
    ("Cause of death", "outcome_derived"),
    ("Age at diagnosis", "baseline"),
    ("Creatinine at baseline", "baseline"),
    ("Hospitalised in the 12 months before enrolment", "baseline"),
    ("History of myocardial infarction", "baseline"),
    ("Prior stroke", "baseline"),
    ("Measure of depressive symptoms post-treatment.", "follow_up"),
    ("days from MGUS until diagnosis of a plasma cell malignancy", "follow_up"),
    ("Job-search self-efficacy. The mediator variable.", "follow_up"),
    ("Body mass index", None),
    ("Treatment arm", None),
])
def test_time_words_of_labels(label: str, timing: str | None) -> None:
    assert label_timing(label) == timing


def test_events_are_ordered_by_the_mapping_their_names_or_their_rows() -> None:
    assert event_time("baseline_arm_1") == (1, 0.0) and event_time("month_6_arm_2") == (2, 365.25 / 2)
    assert event_time("week_2_arm_1") == (1, 14.0) and event_time("12_month_follow_up_arm_1") == (1, 365.25)
    assert event_time("end_of_study_arm_1") == (1, float("inf")) and event_time("clinic_visit_arm_1") is None
    df = redcap_export(60, seed=3)
    assert order_events(df.sort_values("redcap_event_name"), "record_id", "redcap_event_name", None) == (
        ["baseline_arm_1", "month_6_arm_1", "month_12_arm_1"], "the event names")
    # names that say no time: the order of each record's rows (REDCap writes them in event order)
    renamed = df.replace({"redcap_event_name": {"baseline_arm_1": "intake_visit", "month_6_arm_1": "clinic_visit",
                                                "month_12_arm_1": "phone_call"}})
    events, source = order_events(renamed, "record_id", "redcap_event_name", None)
    assert events == ["intake_visit", "clinic_visit", "phone_call"] and source == "the rows' order within records"
    assert find_layout(df.drop(columns=["redcap_event_name", "redcap_repeat_instrument"])) is None


def test_redcap_baseline_replays_on_new_records(project) -> None:
    df = project["df"]
    before = df.copy()
    out, report = kt.redcap_baseline(df, "death", events=project["dictionary"].event_order())
    pd.testing.assert_frame_equal(df, before)  # the input is not changed
    assert report.rows_out == 400 and "qol_score" in report.details["columns_not_at_baseline"]
    assert report.details["repeating_rows_left_out"] > 0
    new = redcap_export(50, seed=7)
    new = new[~((new["record_id"] == 3) & (new["redcap_event_name"] == "baseline_arm_1"))]
    replayed = report.apply(new)
    assert list(replayed.columns) == list(out.columns) and len(replayed) == 49
    assert replayed.set_index("record_id").loc[5, "death"] == new.query(
        "record_id == 5 and redcap_event_name == 'month_12_arm_1'")["death"].iloc[0]
    with pytest.raises(ValueError, match="no row of the baseline event"):
        kt.redcap_baseline(df, "death", baseline_event="screening_arm_1")


def test_what_labels_say_relative_to_the_target(tmp_path: Path) -> None:
    """The target's own measure, a year after the target's, a recoding of a later column."""
    (tmp_path / "codebook.md").write_text(
        "| variable | description |\n|---|---|\n"
        "| low | indicator of birth weight less than 2.5 kg, births of 1986 |\n"
        "| bwt | birth weight in grams |\n| lwt | mother's weight in pounds at last menstrual period |\n"
        "| wt87 | mother's weight at the 1987 visit |\n| income | family income, in 1986 dollars |\n"
        "| seek | job-search self-efficacy: the mediator variable |\n| seek2 | seek recoded into two categories |\n")
    df = pd.DataFrame({c: range(30) for c in ("low", "bwt", "lwt", "wt87", "income", "seek", "seek2")})
    said = read_codebook(df, kt.read_dictionary(tmp_path / "codebook.md"), "low").timing_evidence()
    assert said["bwt"]["timing"] == "outcome_derived" and "('birth weight')" in said["bwt"]["reason"]
    assert said["wt87"]["timing"] == "follow_up" and "1987, after the target's 1986" in said["wt87"]["reason"]
    assert said["seek"]["timing"] == "follow_up" and said["seek2"]["timing"] == "follow_up"
    assert "recoded from 'seek'" in said["seek2"]["reason"]
    assert "lwt" not in said and "income" not in said


def test_a_redcap_export_is_one_finding_and_the_codebook_times_columns_without_a_target(project) -> None:
    """Its events are the redcap_events finding, never also repeated measurements to aggregate;
    without a target the codebook still times the columns; a private column is dropped, not parsed."""
    for dictionary in (project["dictionary"], None):
        d = kt.diagnose(project["df"], target="death", dictionary=dictionary)
        assert d.by_kind("redcap_events") and not d.by_kind("repeated_measurements")
    d = kt.diagnose(project["df"], dictionary=project["dictionary"])
    timing = {c: t["timing"] for c, t in d.column_stats["timing"].items()}
    assert {timing[c] for c in FOLLOW_UP} == {"follow_up"} and timing["age"] == "baseline"
    assert "phone" not in timing  # an identifier is no feature to time
    parsed = {c for f in d.by_kind("numeric_as_text") for c in f.columns}
    assert "dob" not in parsed and "dob" in identifiers(d)
    assert "dob" in {c for f in kt.diagnose(project["df"]).by_kind("numeric_as_text") for c in f.columns}


def test_a_date_of_birth_is_never_the_moment_of_prediction(tmp_path: Path) -> None:
    df, dictionary = kt.read_file(labelled_stata(tmp_path / "cohort.dta"))
    forget_private()
    assert kt.diagnose(df, target="died").task["index"]["column"] == "v9"  # the only date: taken without labels
    with_it = kt.diagnose(df, target="died", dictionary=dictionary).task["index"]
    assert with_it["column"] is None and with_it["kind"] == "row"
