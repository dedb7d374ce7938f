"""diagnose on real data that lifelines ships (loads offline)."""

import pytest

from kernel_tools.diagnosis import diagnose

datasets = pytest.importorskip("lifelines.datasets")


def kinds_columns(d, kind):
    return {c for f in d.by_kind(kind) for c in f.columns}


def test_lymph_node_outcome_dates_are_leakage():
    df = datasets.load_lymph_node()
    d = diagnose(df, target="censdead", time="survtime")
    assert d.task["kind"] == "survival"
    leaks = kinds_columns(d, "target_leakage")
    assert {"recdate", "deathdate"} <= leaks
    assert "diagdateb" not in leaks  # the baseline date is not an outcome date
    assert not leaks & {"age", "size", "grade", "nodes", "hormone", "menopause"}
    f = next(f for f in d.by_kind("target_leakage") if f.columns == ["deathdate"])
    assert f.severity == "critical" and f.gate == "leakage"
    assert f.evidence["timing"] == "outcome_derived" and f.evidence["index_date"] == "diagdateb"
    assert d.task["index"]["kind"] == "date" and d.task["index"]["column"] == "diagdateb"
    # the dates are stored as text
    assert {"diagdateb", "recdate", "deathdate"} <= kinds_columns(d, "numeric_as_text")


def test_lymph_node_task_inferred_from_follow_up_column():
    d = diagnose(datasets.load_lymph_node(), target="censdead")
    assert d.task["kind"] == "survival" and d.task["time"] == "survtime"
    assert "follow-up" in d.task["reason"]


def test_stanford_heart_transplants_repeated_rows():
    d = diagnose(datasets.load_stanford_heart_transplants(), target="event")
    (f,) = d.by_kind("repeated_measurements")
    assert d.task["id"] == "id" and f.columns[0] == "id"
    assert d.task["visit"] in {"start", "stop"}
    assert f.evidence["entities"] == 103


def test_recur_repeated_rows():
    d = diagnose(datasets.load_recur(), target="CENSOR")
    (f,) = d.by_kind("repeated_measurements")
    assert f.columns[0] == "ID"
    assert "AGE" in f.evidence["baseline_columns"]
    assert d.by_kind("id_column") == []


def test_lung_real_missing_values():
    df = datasets.load_lung()
    d = diagnose(df, target="status", time="time")
    found = kinds_columns(d, "missing_values")
    assert {"meal.cal", "wt.loss", "pat.karno"} <= found
    f = next(f for f in d.by_kind("missing_values") if "meal.cal" in f.columns)
    ev = f.evidence["columns"]["meal.cal"]
    assert ev["missing_count"] == 47 and "mechanism" in ev
    assert d.by_kind("target_leakage") == []
    assert d.by_kind("survival_setup")[0].evidence["events"] == 165


def test_rossi_has_no_leakage():
    d = diagnose(datasets.load_rossi(), target="arrest")
    assert d.task["kind"] == "survival" and d.task["time"] == "week"
    assert d.by_kind("target_leakage") == []
    assert d.by_kind("repeated_measurements") == []
