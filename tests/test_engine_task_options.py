"""The task card's options fit the target: a 0/1 target is never offered as a regression, an
ordered score is a regression first (classes second), integer codes that may be a score offer
regression first; the card's question says each guess once (small generated tables, real
diagnoses)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from jupyter_dcpilot.engine import structure_cards
from jupyter_dcpilot.engine.structure import Structure
from jupyter_dcpilot.engine.task import Given, Task

sys.path.insert(0, str(Path(__file__).parent))
from dev_tables import quiet_diagnose  # noqa: E402


def card(df: pd.DataFrame, target: str, **given) -> structure_cards.Question:
    d = quiet_diagnose(df, target=target, **given)
    task = Task.inferred(d.task, Given(target=target, time=given.get("time")))
    return structure_cards.task_card(task, Structure(list(d.inferences)))


def ids(question: structure_cards.Question) -> list[str]:
    return [o.id for o in question.options]


def frame(target: np.ndarray, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    n = len(target)
    return pd.DataFrame({"x": rng.normal(size=n), "z": rng.choice(["a", "b"], n), "pain": target})


@pytest.mark.parametrize("values", [[0, 1], ["no", "yes"], [1, 2], [True, False]], ids=str)
def test_a_two_valued_target_is_never_offered_as_a_regression(values):
    rng = np.random.default_rng(1)
    q = card(frame(rng.choice(values, 300)), "pain")
    assert "regression" not in ids(q) and "regression" not in q.question


def test_a_two_valued_event_with_a_time_is_never_offered_as_a_regression():
    rng = np.random.default_rng(2)
    df = frame(rng.integers(0, 2, 300)).assign(days=rng.exponential(300, 300).round() + 1)
    q = card(df, "pain", time="days")
    assert q.options[0].description.startswith("A survival task") and "regression" not in ids(q)


def test_an_ordered_score_is_a_regression_first_and_classes_second():
    rng = np.random.default_rng(3)
    score = np.clip(np.round(rng.normal(5, 2, 400)), 0, 10).astype(int)
    q = card(frame(score), "pain")
    assert q.options[0].description.startswith("A regression task") and ids(q)[1] == "classification"


def test_integer_codes_that_may_be_a_score_offer_regression_first():
    q = card(frame(np.repeat([1, 2, 4], 100)), "pain")
    assert q.options[0].description.startswith("A classification task") and ids(q)[1] == "regression"
    assert q.question.count("classification") == 1  # the guess said once
    # short sentences a clinician reads: no nested brackets, no "="
    assert q.question == ("Is this the task? A classification task: predict the class of 'pain'. Predictions are made "
                          "at each row's own time. Unsure of the task: 3 whole-number codes: classes, or an ordered "
                          "score? Or regression: the codes in order, as a score?")


def test_class_labels_in_words_with_no_order_are_never_offered_as_a_regression():
    # "It is regression" on a card of word labels failed the next diagnosis ("regression target
    # 'pain' is not numeric"): unordered words are classes, with no regression to pick
    rng = np.random.default_rng(4)
    q = card(frame(rng.choice(["cat", "dog", "bird"], 300)), "pain")
    assert "regression" not in ids(q) and q.options[0].description.startswith("A classification task")


def test_ordered_word_levels_are_a_regression_on_their_ranks_with_classes_the_alternative():
    rng = np.random.default_rng(4)
    q = card(frame(rng.choice(["none", "mild", "moderate", "severe"], 300)), "pain")
    assert ids(q) == ["confirm", "classification"] and q.options[0].description.startswith("A regression task")
    assert "none < mild < moderate < severe" in q.question
    assert q.options[0].label == "Regression on the ranks"  # the reading named, not a bare "Confirm"
