"""A target whose classes read as ordered levels (an answer scale in words, a severity, R's ordered
factor) is asked, a regression on their ranks recommended (tests/test_ordered_target.py), not taken as
unordered classes with high confidence; named classes stay unasked."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import kernel_tools as kt
from kernel_tools.diagnosis.level_order import level_order


def _frame(labels: list[str], n: int = 300, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    level = np.digitize(x + rng.normal(scale=0.5, size=n), np.quantile(x, np.linspace(0, 1, len(labels) + 1)[1:-1]))
    return pd.DataFrame({"age": rng.normal(50, 10, n).round(), "x": x, "answer": np.asarray(labels)[level]})


@pytest.mark.parametrize("labels", [["No", "Perhaps", "Yes"], ["never", "sometimes", "often", "always"],
                                    ["none", "mild", "moderate", "severe"], ["Strongly_Disagree", "Disagree",
                                                                               "Neutral", "Agree"]])
def test_ordered_words_make_the_task_a_question(labels):
    task = kt.diagnose(_frame(labels), target="answer").inference("task")
    assert task.value == "regression" and task.confidence == "low"
    assert [a.value for a in task.alternatives] == ["classification"]
    assert any(" < ".join(labels) in e for e in task.evidence)


def test_an_ordered_factor_is_asked_whatever_its_words():
    df = _frame(["I", "II", "III"])
    df["answer"] = pd.Categorical(df["answer"], categories=["I", "II", "III"], ordered=True)
    task = kt.diagnose(df, target="answer").inference("task")
    assert task.confidence == "low" and any("I < II < III" in e for e in task.evidence)


def test_named_classes_and_two_levels_are_not_asked():
    for labels in (["cat", "dog", "bird"], ["low", "high"], ["yes", "no", "cat"]):
        assert level_order(pd.Series(labels), sorted(labels)) is None
        task = kt.diagnose(_frame(labels), target="answer").inference("task")
        assert task.confidence == "high", labels


@pytest.mark.parametrize("labels", [["not too happy", "pretty happy", "very happy"],
                                    ["a little tired", "tired", "very tired", "extremely tired"],
                                    ["not_at_all_likely", "somewhat_likely", "very_likely"]])
def test_one_word_at_several_degrees_is_an_ordered_scale(labels):
    # a survey's answers by degree of one word, in no listed scale: ordered by their modifiers
    rng = np.random.default_rng(1)
    shuffled = list(rng.permutation(labels))
    assert level_order(pd.Series(shuffled), shuffled) == labels
    task = kt.diagnose(_frame(labels), target="answer").inference("task")
    assert task.value == "regression" and task.confidence == "low"


@pytest.mark.parametrize("labels", [["very happy", "happy", "very sad"], ["red", "very red", "blue"],
                                    ["happy", "sad", "angry"]])
def test_degrees_of_different_words_are_not_one_scale(labels):
    assert level_order(pd.Series(labels), labels) is None
