"""Groups found from the data, not the name (session 18, issue 26), on generated data whose names
no vocabulary holds (Dutch, abbreviated, one letter):

- a cluster's code whose levels fix other columns (a class's size, whether it is a combined
  class): asked as a grouping, drop recommended, never a silent number feature;
- a cluster's code with no covariate beside it, whose rows are alike in the target in no order of
  its values: asked the same way;
- what repeats like a code but is a value (an age, a score, a count, a year, a blood pressure, a
  category of a few levels, a column binned from another) stays a feature.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from dev_tables import quiet_diagnose  # noqa: E402


def _classes(code: str, groups: int = 120, covariates: bool = True, icc: float = 0.3, seed: int = 0) -> pd.DataFrame:
    """Pupils in ``groups`` classes (8-29 each) numbered by codes in no order, a class effect on the
    language score; with ``covariates``, each class's size and whether it is a combined class."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(8, 30, groups)
    member = np.repeat(np.arange(groups), sizes)
    rng.shuffle(member)
    codes = rng.permutation(np.arange(100, 100 + groups * 3, 3))
    effect = rng.normal(0, np.sqrt(icc / (1 - icc)), groups)
    n = member.size
    iq = rng.normal(12, 2, n).round(1)
    ses = rng.integers(10, 50, n)
    frame = pd.DataFrame({code: codes[member], "iq": iq, "ses": ses})
    if covariates:
        frame["grootte"] = sizes[member]
        frame["comb"] = rng.integers(0, 2, groups)[member]
    frame["taal"] = (40 + 3 * (iq - 12) + 0.1 * (ses - 30) + 6 * effect[member] + rng.normal(0, 6, n)).round(0)
    return frame


def _grouped(d) -> dict[str, dict]:
    return {f.columns[0]: f.evidence for f in d.findings if f.kind == "grouping_column"}


def _question(d, column: str):
    (question,) = [i for i in d.inferences if i.what == "grouping" and i.subject == column]
    return question


@pytest.mark.parametrize("code", ["klas", "k", "lea", "comm", "class", "grp", "X3"])
def test_a_code_whose_levels_fix_other_columns_is_asked_as_a_grouping(code):
    d = quiet_diagnose(_classes(code), target="taal")
    assert code in _grouped(d) and _grouped(d)[code]["determines"][:2] == ["grootte", "comb"]
    question = _question(d, code)
    assert question.confidence == "low" and question.value == "drop"  # never a silent number feature
    assert f"each value of '{code}' fixes 'grootte', 'comb'" in " ".join(question.evidence)
    assert d.task["id"] != code


# 'casino' holding an area's codes stayed a feature in session 17's test of names: its data now say a grouping
@pytest.mark.parametrize("code", ["lea", "comm", "b", "casino"])
def test_a_code_whose_rows_are_alike_in_the_target_is_asked_as_a_grouping(code):
    d = quiet_diagnose(_classes(code, covariates=False), target="taal")
    evidence = _grouped(d)[code]
    assert evidence["alike"]["column"] == "taal" and evidence["alike"]["icc"] >= 0.1
    assert "intraclass correlation" in " ".join(_question(d, code).evidence)


def test_a_text_code_is_asked_too():
    frame = _classes("comm")
    frame["comm"] = "C" + frame["comm"].astype(str)
    assert "comm" in _grouped(quiet_diagnose(frame, target="taal"))


def test_a_code_with_no_sign_in_the_data_is_not_asked():
    # no covariate of the class and no class effect: nothing says the rows of one code belong together
    assert "lea" not in _grouped(quiet_diagnose(_classes("lea", covariates=False, icc=0.001), target="taal"))


def _values(n: int = 1500, seed: int = 1) -> pd.DataFrame:
    """Columns that repeat like codes but are values, each moving the outcome smoothly."""
    rng = np.random.default_rng(seed)
    leeftijd = rng.integers(18, 80, n)
    score = rng.integers(0, 21, n)
    frame = pd.DataFrame(
        {
            "leeftijd": leeftijd,
            "lftgrp": (leeftijd // 10) * 10,  # binned from the age: fixed by its levels, in their order
            "score": score,
            "geslaagd": (score >= 10).astype(int),
            "kinderen": rng.poisson(2.5, n),
            "jaar": rng.integers(2000, 2021, n),
            "rr": (rng.normal(130, 15, n) / 2).round() * 2,
            "geslacht": rng.integers(0, 2, n),
            "arm": rng.integers(1, 4, n),
            "postcode_afstand": rng.integers(1, 60, n),
        }
    )
    frame["uitkomst"] = (0.05 * leeftijd + 0.3 * score + 0.02 * frame["rr"] + rng.normal(0, 2, n)).round(1)
    return frame


def test_a_named_grouping_s_covariate_is_not_a_second_grouping():
    # the district's population, one value per district: the district's, not a grouping of its own
    frame = _classes("district", covariates=False)
    codes = np.sort(frame["district"].unique())
    frame["inwoners"] = frame["district"].map(
        dict(zip(codes, np.random.default_rng(5).permutation(codes.size) * 7 + 900))
    )
    assert set(_grouped(quiet_diagnose(frame, target="taal"))) == {"district"}


@pytest.mark.parametrize("target", ["uitkomst", "leeftijd"])
def test_ages_scores_counts_years_and_measurements_stay_features(target):
    assert _grouped(quiet_diagnose(_values(), target=target)) == {}


def test_a_subject_attribute_repeated_on_its_records_is_no_cluster():
    # one patient's 4 visits share the patient's weight at entry and sex: within a patient, not a group
    rng = np.random.default_rng(3)
    patients = 300
    weight = rng.integers(50, 110, patients)
    sex = rng.integers(0, 2, patients)
    who = np.repeat(np.arange(patients), 4)
    frame = pd.DataFrame(
        {
            "pat": who + 1,
            "bezoek": np.tile(np.arange(1, 5), patients),
            "gewicht0": weight[who],
            "geslacht": sex[who],
            "bmi": rng.normal(25, 3, who.size).round(1),
        }
    )
    frame["uitslag"] = (0.1 * frame["gewicht0"] + rng.normal(0, 1, who.size)).round(1)
    d = quiet_diagnose(frame, target="uitslag")
    assert "gewicht0" not in _grouped(d)


def _pupils(schools: int = 60, repeat: int = 1, seed: int = 4) -> pd.DataFrame:
    """Pupils numbered again in every school (numbers out of 1..400, ``repeat`` rows each), the
    school a grouping."""
    rng = np.random.default_rng(seed)
    rows = []
    for s in range(schools):
        code = 20000 + 17 * s
        for pupil in rng.choice(np.arange(1, 401), int(rng.integers(10, 40)), replace=False):
            sex = rng.choice(["M", "F"])
            for _ in range(repeat):
                rows.append({"schule": code, "schueler": pupil, "geschlecht": sex, "punkte": float(rng.normal(50, 10))})
    return pd.DataFrame(rows)


@pytest.mark.parametrize("group, pupil", [("school", "student"), ("schule", "pupil_id"), ("escuela", "student_no")])
def test_an_id_numbered_again_in_every_group_is_no_entity_and_its_group_is_asked(group, pupil):
    # pupil 3 is a different pupil in each school: the pupil's number was taken as the entity (rows merged)
    d = quiet_diagnose(_pupils().rename(columns={"schule": group, "schueler": pupil}), target="punkte")
    assert d.task["id"] is None
    (entity,) = [i for i in d.inferences if i.what == "entity"]
    assert entity.confidence == "low"
    assert re.search(rf"'{pupil}' \d+ appears in \d+ '{group}' levels", entity.evidence[0])
    assert f"the subject is the pair ('{group}', '{pupil}')" in entity.evidence[0]
    # asked at the group's gate, before the group: dropped after it, it would repeat like a subject's id
    grouped = _grouped(d)
    assert grouped[pupil]["looks_like"] == f"numbered within '{group}'" and group in grouped
    assert list(grouped).index(pupil) < list(grouped).index(group)


def test_an_id_numbered_within_groups_with_repeated_records_is_asked():
    # each pupil twice: the rows of one (school, pupil) pair are one subject's, the pupil's number alone is not
    d = quiet_diagnose(_pupils(repeat=2).rename(columns={"schule": "school", "schueler": "student"}), target="punkte")
    (entity,) = [i for i in d.inferences if i.what == "entity"]
    assert entity.confidence == "low"
    assert any("the subject is the pair ('school', 'student')" in e for e in entity.evidence)


def test_a_patient_seen_at_several_hospitals_stays_the_entity():
    # one patient's rows at several hospitals share the patient's sex and birth year: one subject
    rng = np.random.default_rng(6)
    who = rng.integers(1, 301, 1500)
    sex, born = rng.integers(0, 2, 301), rng.integers(1930, 2000, 301)
    frame = pd.DataFrame(
        {
            "patient": who,
            "hospital": rng.integers(1, 9, 1500),
            "sex": sex[who],
            "born": born[who],
            "crp": rng.gamma(2, 5, 1500).round(1),
        }
    )
    assert quiet_diagnose(frame, target="crp").task["id"] == "patient"


@pytest.mark.slow
def test_the_recommended_run_keeps_a_code_found_from_its_data_out_of_the_model(tmp_path):
    from dev_tables import run_recommended

    report = run_recommended(_classes("lea", groups=60), "taal", tmp_path)
    assert "lea" not in report["model"]["features"] and "iq" in report["model"]["features"]
