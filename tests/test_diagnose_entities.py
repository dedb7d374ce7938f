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
