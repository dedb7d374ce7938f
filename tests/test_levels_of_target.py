"""Another level of the target's own variable (one column per level, the 0/1 target among them) is
known only once the outcome is. Generated discharge destinations, rare binary look-alikes that must
stay quiet, and a development-half R export."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from dev_tables import dev_rdataset, quiet_diagnose  # noqa: E402


def _discharges(n: int = 600, seed: int = 0) -> pd.DataFrame:
    """Where a stay ended, one 0/1 column per place; age, a severity score and two rare 0/1
    conditions independent of it."""
    rng = np.random.default_rng(seed)
    severity = rng.normal(0, 1, n)
    where = np.where(severity + rng.normal(0, 1, n) > 1.2, "died",
                     np.where(rng.random(n) < 0.3, "rehab", "home"))
    return pd.DataFrame({"age": rng.normal(70, 10, n).round(), "severity": severity.round(2),
                         "rare_a": (rng.random(n) < 0.02).astype(int), "rare_b": (rng.random(n) < 0.02).astype(int),
                         "to_home": (where == "home").astype(int), "to_rehab": (where == "rehab").astype(int),
                         "died": (where == "died").astype(int)})


def _leaks(d) -> set[str]:
    return {c for f in d.by_kind("target_leakage") for c in f.columns}


def test_the_other_destinations_are_the_outcome():
    d = quiet_diagnose(_discharges(), target="died")
    assert {"to_home", "to_rehab"} <= _leaks(d)
    assert {"age", "severity", "rare_a", "rare_b"}.isdisjoint(_leaks(d))
    evidence = d.column_stats["timing"]["to_rehab"]["evidence"]
    assert any(e["test"] == "level_of_target" for e in evidence)


def test_one_destination_left_out_breaks_the_coding():
    # without 'to_home' the two left cover too few rows to be the levels of one variable
    d = quiet_diagnose(_discharges().drop(columns=["to_home"]), target="died")
    evidence = d.column_stats["timing"].get("to_rehab", {}).get("evidence", [])
    assert not any(e["test"] == "level_of_target" for e in evidence)


def test_unemployment_spells_ending_four_ways():
    # Ecdat's UnempDur: censor1 re-employed full time, censor2 part time, censor3 left job, censor4 jobless
    d = quiet_diagnose(dev_rdataset("Ecdat", "UnempDur"), target="censor1")
    assert (d.task["kind"], d.task["time"]) == ("survival", "spell")  # a spell is a duration
    assert {"censor2", "censor3", "censor4"} <= _leaks(d)
    assert {"age", "ui", "reprate", "tenure"}.isdisjoint(_leaks(d))
