"""Session 14's third fresh batch (benchmarks/fresh3.py, development half) and the kinds the second
batch's sealed half showed, each tested on generated data with other names and on a development
table:

- a survival status stored as labels ('alive'/'acd'/'inbed', 'A'/'D', 'dead'/'survived') next to
  a follow-up time is survival, its censored label read from its words or the follow-up and asked,
  recoded to the 0/1 event, never classes over the labels with the duration a feature;
- measures numbered in one series with the target (``y1`` ... ``y4``, ``brood1`` ... ``brood3``):
  those numbered after it are proposed as during follow-up, asked (the numbers give the order, not a
  time); those before it are not proposed.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import kernel_tools as kt

sys.path.insert(0, str(Path(__file__).resolve().parent))
from dev_tables import dev_rdataset, quiet_diagnose  # noqa: E402


def _cohort(labels: tuple[str, ...], n: int = 600, seed: int = 0, time: str = "days") -> pd.DataFrame:
    """A cohort followed until an event (the labels after the first) or the study's end (the first
    label: censored, followed longest)."""
    rng = np.random.default_rng(seed)
    age = rng.normal(60, 10, n)
    event_time = rng.exponential(900 * np.exp(-(age - 60) / 20), n)
    end = rng.uniform(1500, 3000, n)
    status = np.where(event_time < end, rng.choice(labels[1:], n), labels[0])
    return pd.DataFrame({"age": age.round(), "sex": rng.choice(["f", "m"], n),
                         time: np.minimum(event_time, end).round() + 1, "status": status})


@pytest.mark.parametrize("labels", [("alive", "acd", "inbed"), ("censored", "death", "ltx", "withdraw")])
def test_a_status_of_several_labels_is_survival_with_competing_events_asked(labels):
    d = quiet_diagnose(_cohort(labels), target="status")
    assert d.task["kind"] == "survival" and d.task["time"] == "days" and d.task["censored"] == labels[0]
    task = d.inference("task")
    assert task.confidence == "low" and task.details["events"] == sorted(labels[1:])
    # the survival setup recodes the labels to the 0/1 event the models read
    recode = next(o for f in d.by_kind("survival_setup") for o in f.options if o.id == "recode")
    assert recode.action["params"]["censored"] == labels[0]


def test_short_labels_are_read_from_the_follow_up_and_asked():
    # 'A' (alive) / 'D' (dead): no word says which; the censored are followed longest
    d = quiet_diagnose(_cohort(("A", "D")), target="status")
    assert d.task["kind"] == "survival" and d.task["censored"] == "A"
    assert d.inference("task").confidence == "low"


def test_a_censored_label_sorted_last_is_not_read_as_the_event():
    # 'dead' / 'survived': of two values the later would be the event; the words say otherwise
    d = quiet_diagnose(_cohort(("survived", "dead"), time="futime"), target="status")
    assert d.task["kind"] == "survival" and d.task["censored"] == "survived"


def test_labels_the_follow_up_does_not_separate_stay_classes():
    # a class next to a length of stay: no label says censored, none is followed clearly longest
    rng = np.random.default_rng(1)
    df = pd.DataFrame({"days": rng.integers(1, 40, 500), "ward": rng.choice(["a", "b", "c"], 500),
                       "age": rng.normal(50, 10, 500)})
    assert quiet_diagnose(df, target="ward").task["kind"] == "classification"


def test_the_recode_reads_labels():
    df = pd.DataFrame({"status": ["alive", "acd", "inbed", None, "alive"], "t": [5, 1, 2, 3, 4]})
    out, report = kt.recode_status(df, "status", censored="alive")
    assert out["status"].tolist()[:3] == [0, 1, 1] and np.isnan(out["status"].iloc[3])
    assert report.details["rows_per_code"] == {"acd": 1, "alive": 2, "inbed": 1}


def test_the_cricketers_cause_of_death_is_survival_over_their_lifetime():
    # DAAG's cricketer: 'life: lifetime or lifespan to 1992', 'cause: alive, acd (accidental death), inbed'
    d = quiet_diagnose(dev_rdataset("DAAG", "cricketer"), target="cause")
    assert d.task["kind"] == "survival" and d.task["time"] == "life" and d.task["censored"] == "alive"
    assert d.inference("task").confidence == "low"


def _broods(n: int = 300, seed: int = 0, names: tuple[str, ...] = ("y1", "y2", "y3", "y4")) -> pd.DataFrame:
    """A count measured at four numbered occasions of one subject (its level carries over), a dose
    known before."""
    rng = np.random.default_rng(seed)
    dose = rng.integers(0, 4, n)
    level = rng.gamma(4, 2, n) * np.exp(-0.2 * dose)
    df = pd.DataFrame({"dose": dose})
    for name in names:
        df[name] = rng.poisson(level)
    return df


@pytest.mark.parametrize("names", [("y1", "y2", "y3", "y4"), ("score_1", "score_2", "score_3", "score_4")])
def test_measures_numbered_after_the_target_are_follow_up(names):
    d = quiet_diagnose(_broods(names=names), target=names[1])
    placed = {c: e.group for c, e in d.timeline.columns.items() if e.group != "baseline"}
    assert set(placed) >= set(names[2:]) and names[0] not in placed
    assert all(placed[c] == "during_follow_up" for c in names[2:])
    # the numbers give the order, not a time: asked
    assert all(d.timeline.columns[c].confidence == "low" for c in names[2:])


def test_numbered_columns_without_the_target_among_them_are_not_a_series():
    # items of a scale numbered 1-4 beside another target: no order in time to read
    df = _broods(names=("item1", "item2", "item3", "item4"))
    df["total"] = df[["item1", "item2"]].sum(axis=1) + np.random.default_rng(2).poisson(3, len(df))
    d = quiet_diagnose(df, target="total")
    assert not any("numbered after" in p.reason for e in d.timeline.columns.values() for p in e.evidence)


def test_the_third_brood_of_nitrofen_follows_the_second():
    # boot's nitrofen: 'brood1', 'brood2', 'brood3: The number of live offspring in the first/second/third brood'
    d = quiet_diagnose(dev_rdataset("boot", "nitrofen"), target="brood2")
    assert d.timeline.columns["brood3"].group == "during_follow_up"


def _treatment_stays(n: int = 600, seed: int = 0) -> pd.DataFrame:
    """A trial of a short (90 days) and a long (180 days) residential treatment: the stay in
    treatment is bounded by the time to relapse, and its compliance fraction is the stay divided by
    the arm's planned length."""
    rng = np.random.default_rng(seed)
    arm = rng.integers(0, 2, n)
    planned = np.where(arm == 1, 180, 90)
    relapse = rng.exponential(300, n).round() + 1
    stay = np.minimum(relapse, rng.uniform(0.2, 1.0, n) * planned).round() + 0
    stay = np.maximum(stay, 1)
    return pd.DataFrame({"age": rng.normal(32, 6, n).round(), "arm": arm, "stay_days": stay,
                         "compliance": stay / planned, "weeks_to_relapse": relapse,
                         "relapsed": (rng.random(n) < 0.8).astype(int)})


def test_a_fraction_computed_from_a_follow_up_column_follows_it():
    d = quiet_diagnose(_treatment_stays(), target="relapsed", time="weeks_to_relapse")
    cols = d.timeline.columns
    assert cols["stay_days"].group == "during_follow_up"
    assert cols["compliance"].group == "during_follow_up"
    why = " ".join(p.reason for p in cols["compliance"].evidence)
    assert "divided by 90 or 180" in why


def test_a_baseline_column_is_not_computed_from_a_follow_up_one():
    d = quiet_diagnose(_treatment_stays(), target="relapsed", time="weeks_to_relapse")
    assert d.timeline.columns["age"].group == "baseline"
