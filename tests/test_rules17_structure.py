"""Columns that are not what they seem (session 17, issue 26), each on generated data with other
names than the tables that showed the kind:

- a cluster's identifying code kept as a number (a district, a village, a school number shared by
  tens of subjects): asked, with the recommended answer keeping it out of the features, whatever
  the naming style (``district``, ``villnum``, ``DistrictCode``, ``id_commune``, ``HHID``);
  a count, a size, a distance or a qualified measure named with such a word stays a feature;
- a column that is the target computed again with another column (a change score beside the final
  score, a ratio, a percent change) is a leak, in words, however small the table; the baseline it
  was computed from stays a feature.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from dev_tables import quiet_diagnose  # noqa: E402

from kernel_tools.diagnosis.groupings import named_as_group  # noqa: E402


def _survey(code: str, n: int = 1500, groups: int = 60, seed: int = 0, subject: str | None = "woman") -> pd.DataFrame:
    """Women in ``groups`` areas (2-50 each), an area effect on the outcome, the area's code kept."""
    rng = np.random.default_rng(seed)
    area = rng.integers(1, groups + 1, n)
    effect = rng.normal(0, 1, groups + 1)
    age = rng.integers(15, 50, n)
    y = (rng.random(n) < 1 / (1 + np.exp(-(effect[area] + 0.03 * (age - 30))))).astype(int)
    frame = pd.DataFrame(
        {code: area, "age": age, "children": rng.integers(0, 4, n), "urban": rng.integers(0, 2, n), "uses_method": y}
    )
    if subject:
        frame.insert(0, subject, np.arange(1, n + 1))
    return frame


def _grouped(d) -> set[str]:
    return {f.columns[0] for f in d.findings if f.kind == "grouping_column"}


@pytest.mark.parametrize(
    "code",
    [
        "district",
        "villnum",
        "commune_no",
        "dist_code",
        "DistrictCode",
        "id_district",
        "municipio",
        "schoolnum",
        "HHID",
        "region_id",
        "parish",
    ],
)
def test_an_area_or_institution_code_is_asked_and_kept_out_of_the_features(code):
    d = quiet_diagnose(_survey(code), target="uses_method")
    assert code in _grouped(d)
    (question,) = [i for i in d.inferences if i.what == "grouping" and i.subject == code]
    assert question.confidence == "low" and question.value == "drop"  # never a number feature by default
    assert "60 values for 1500 rows" in " ".join(question.evidence)
    assert d.task["id"] != code


def test_an_area_code_with_text_digits_and_no_subject_id_is_asked():
    frame = _survey("district", subject=None)
    frame["district"] = frame["district"].astype(str)
    assert "district" in _grouped(quiet_diagnose(frame, target="uses_method"))


def test_a_woman_numbered_on_every_row_is_each_row_a_subject_not_the_area():
    # 'regionID' was taken as the entity (its rows one region's records) beside a unique 'woman'
    d = quiet_diagnose(_survey("regionID"), target="uses_method")
    assert d.task["id"] is None and "regionID" in _grouped(d)


@pytest.mark.parametrize(
    "name",
    [
        "dist",
        "distance",
        "n_villages",
        "num_villages",
        "village_size",
        "district_pop",
        "income_district",
        "Hospitals",
        "area",
    ],
)
def test_counts_sizes_distances_and_measures_of_an_area_are_not_codes(name):
    assert not named_as_group(name)
    frame = _survey("zz", subject="woman").rename(columns={"zz": name})
    assert name not in _grouped(quiet_diagnose(frame, target="uses_method"))


def _trial(n: int, derived: str | None, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    base = rng.normal(60, 10, n).round(1)
    treated = rng.integers(0, 2, n)
    final = (base + rng.normal(-5 * treated, 6, n)).round(1)
    frame = pd.DataFrame({"age": rng.integers(20, 70, n), "treated": treated, "pain_wk0": base, "pain_wk12": final})
    if derived == "change":
        frame["change"] = (final - base).round(1)
    elif derived == "ratio":
        frame["ratio_12_0"] = (final / base).round(3)
    elif derived == "percent":
        frame["pct_improvement"] = ((final - base) / base * 100).round(1)
    elif derived == "dname":
        frame["dpain_wk12"] = (final - base).round(1)
    return frame


def _leaks(d) -> dict[str, str]:
    return {f.columns[0]: f.summary for f in d.findings if f.kind == "target_leakage"}


@pytest.mark.parametrize("n", [17, 300])
@pytest.mark.parametrize(
    "derived, column, words",
    [
        ("change", "change", "'change' equals 'pain_wk12' − 'pain_wk0' on every row"),
        ("ratio", "ratio_12_0", "'ratio_12_0' equals 'pain_wk12' / 'pain_wk0' on every row"),
        ("percent", "pct_improvement", "equals 100 × ('pain_wk12' − 'pain_wk0') / 'pain_wk0' on every row"),
        ("dname", "dpain_wk12", "'dpain_wk12' equals 'pain_wk12' − 'pain_wk0' on every row"),
    ],
)
def test_the_target_computed_again_is_a_leak_in_words_and_its_baseline_stays(n, derived, column, words):
    d = quiet_diagnose(_trial(n, derived), target="pain_wk12")
    leaks = _leaks(d)
    assert column in leaks and words in leaks[column]
    assert "pain_wk0" not in leaks  # the baseline it was computed from is a predictor


def test_no_twin_among_ordinary_measures():
    frame = _trial(300, None)
    rng = np.random.default_rng(5)
    frame["bmi"] = rng.normal(27, 4, 300).round(1)
    frame["visits"] = rng.integers(0, 6, 300)
    assert not _leaks(quiet_diagnose(frame, target="pain_wk12"))


def _party(pooled: str | None = "Other", column: str = "family", seed: int = 3) -> pd.DataFrame:
    """A party of 87 people, one row each, their last names recoded into nine groups, the ninth
    pooling the rest (``pooled``; None: a ninth name instead)."""
    rng = np.random.default_rng(seed)
    names = ["Abbott", "Baker", "Carver", "Dunn", "Ellis", "Fisher", "Grant", "Hale & Hunt", pooled or "Irwin"]
    group = np.repeat(names, [12, 9, 7, 6, 5, 4, 13, 8, 23])
    n = len(group)
    age = rng.integers(1, 65, n)
    sex = rng.choice(["Male", "Female"], n)
    alive = (rng.random(n) < 1 / (1 + np.exp(-(1.5 - 0.04 * age + 0.8 * (sex == "Female"))))).astype(int)
    return pd.DataFrame({column: group, "age": age, "sex": sex, "survived": alive})


@pytest.mark.parametrize("pooled", ["Other", "unknown", "Misc", "otros"])
@pytest.mark.parametrize("column", ["family", "household"])
def test_a_grouping_with_a_catch_all_level_is_not_the_entity(pooled, column):
    d = quiet_diagnose(_party(pooled, column), target="survived")
    entity = d.inference("entity")
    assert entity.value is None and d.task["id"] is None
    (why,) = [a.evidence[0] for a in entity.alternatives if a.value == column]
    assert f"has a catch-all level '{pooled}' (23 rows)" in why


def test_a_unit_name_whose_rows_share_nothing_is_asked_not_taken():
    # nine named groups of 4-23 people who differ in sex and age, no time: perhaps not one subject's rows
    d = quiet_diagnose(_party(None), target="survived")
    entity = d.inference("entity")
    assert entity.value == "family" and entity.confidence == "low"
    assert "rows sharing 'family' share no other column and no time orders them" in " ".join(entity.evidence)


def test_a_patient_seen_several_times_stays_a_plain_entity():
    rng = np.random.default_rng(8)
    patients = 60
    rows = pd.DataFrame(
        {"patient": np.repeat(np.arange(1, patients + 1), 4), "visit": np.tile([0, 3, 6, 12], patients)}
    )
    rows["sex"] = np.repeat(rng.choice(["F", "M"], patients), 4)
    rows["sbp"] = rng.normal(130, 15, len(rows)).round()
    d = quiet_diagnose(rows, target="sbp")
    entity = d.inference("entity")
    assert entity.value == "patient" and not any("share no other column" in e for e in entity.evidence)


def test_a_holdout_of_one_group_is_said_in_words():
    from kernel_tools.transforms.splitting import split

    _, test, report = split(_party(None).drop(columns="sex"), "survived", groups="family")
    assert test["family"].nunique() < 5
    assert any(
        f"the test set holds only {test['family'].nunique()} of the 9 'family' groups" in w for w in report.warnings
    )
    rng = np.random.default_rng(0)
    many = pd.DataFrame(
        {"pid": np.repeat(np.arange(200), 2), "x": rng.normal(size=400), "y": rng.integers(0, 2, 400).repeat(1)}
    )
    assert not split(many, "y", groups="pid")[2].warnings


def _overdose(n: int, seed: int = 1) -> pd.DataFrame:
    """A total drug level in the blood (the target) beside one of its two analytes, and a dose."""
    rng = np.random.default_rng(seed)
    dose = rng.uniform(500, 4000, n).round()
    parent = (dose * rng.uniform(0.2, 0.4, n)).round()
    metabolite = (dose * rng.uniform(0.15, 0.35, n)).round()
    return pd.DataFrame(
        {
            "female": rng.integers(0, 2, n),
            "dose_taken": dose,
            "qrs_ms": rng.normal(100, 12, n).round(),
            "analyte_b": parent,
            "total_level": parent + metabolite,
        }
    )


@pytest.mark.parametrize("n", [17, 200])
def test_a_part_of_the_target_measured_with_it_is_asked_as_a_leak(n):
    leaks = _leaks(quiet_diagnose(_overdose(n), target="total_level"))
    assert list(leaks) == ["analyte_b"]
    assert "'analyte_b' is at most 'total_level' on every row" in leaks["analyte_b"]
    assert "it may be a part of the target measured with it" in leaks["analyte_b"]


def test_a_smaller_scale_a_baseline_or_an_age_below_the_target_is_not_a_part():
    rng = np.random.default_rng(2)
    n = 200
    carat = rng.uniform(0.3, 2.5, n).round(2)
    growth = rng.uniform(1.05, 1.6, n)
    weight_0 = rng.normal(3.4, 0.4, n).round(2)
    frame = pd.DataFrame(
        {
            "carat": carat,  # far below the price: another scale
            "age": rng.integers(20, 60, n),
            "weight_0": weight_0,  # the baseline of a growing measure
            "waist_cm": (weight_0 * 20 + rng.normal(0, 3, n)).round(1),
            "weight_12": (weight_0 * growth).round(2),
        }
    )
    assert not {"carat", "weight_0", "age"} & set(_leaks(quiet_diagnose(frame, target="weight_12")))
    frame["price"] = (carat * 4000 * rng.uniform(0.8, 1.2, n)).round()
    assert "carat" not in _leaks(quiet_diagnose(frame.drop(columns="weight_12"), target="price"))


@pytest.mark.parametrize("occasion", ["sitting", "index"])
def test_an_occasion_number_below_a_response_that_grows_over_the_occasions_is_not_a_part(occasion):
    # seven measurements per subject at rising settings: the occasion's number (1-7) is at most the
    # response and rises with it, as a part would; a few whole numbers are a count of occasions
    rng = np.random.default_rng(3)
    subjects, k = 20, 7
    step = np.tile(np.arange(1, k + 1), subjects)
    setting = np.tile(np.linspace(0.2, 3.0, k), subjects)
    frame = pd.DataFrame(
        {
            "subject": np.repeat(np.arange(subjects), k),
            "setting": setting.round(3),
            occasion: step,
            "flow": (12 * setting + rng.normal(0, 5, subjects * k) + 6).clip(min=8).round(2),
        }
    )
    assert occasion not in _leaks(quiet_diagnose(frame, target="flow"))


@pytest.mark.slow
def test_the_recommended_run_keeps_the_area_code_and_the_change_score_out_of_the_model(tmp_path):
    from dev_tables import run_recommended

    (tmp_path / "survey").mkdir()
    (tmp_path / "trial").mkdir()
    survey = _survey("villnum", n=600, groups=40)
    report = run_recommended(survey, "uses_method", tmp_path / "survey")
    assert "villnum" not in report["model"]["features"] and "age" in report["model"]["features"]
    trial = _trial(60, "change")
    report = run_recommended(trial, "pain_wk12", tmp_path / "trial")
    assert "change" not in report["model"]["features"] and "pain_wk0" in report["model"]["features"]
