"""A target that is a score of a questionnaire's items, shipped beside the items (session 18).

Generated data with names of their own: a latent "wellbeing" scale fitted to six answers coded
1-5 (not linear in them), a 0/1 screening result that is a cut of four yes/no answers; and the
false friends: answers that predict a score only in part, conditions that raise a risk.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from kernel_tools import diagnose


def _flagged(df: pd.DataFrame, target: str) -> dict[str, str]:
    d = diagnose(df, target=target)
    return {f.columns[0]: str(f.evidence.get("reason") or "") for f in d.by_kind("target_leakage")}


def _answers(n: int, k: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """A trait per respondent and k answers coded 1-5 that follow it, one of them reversed."""
    rng = np.random.default_rng(seed)
    trait = rng.normal(size=n)
    answers = np.clip(np.round(3 + 1.2 * trait[:, None] + rng.normal(scale=0.8, size=(n, k))), 1, 5)
    answers[:, 2] = 6 - answers[:, 2]  # a reversed item
    return trait, answers


def test_a_latent_score_beside_its_items_flags_the_items_not_a_predictor_coded_alike():
    n = 600
    trait, answers = _answers(n, 6, seed=1)
    rng = np.random.default_rng(2)
    df = pd.DataFrame(answers.astype(int), columns=[f"frage_{i}" for i in range(1, 7)])
    # a latent score of the answers (not a sum: each answer counts by its own curve)
    oriented = answers.copy()
    oriented[:, 2] = 6 - oriented[:, 2]
    df["wohlbefinden"] = np.tanh((oriented - 3) / 2).sum(axis=1) + rng.normal(scale=0.05, size=n)
    df["region"] = rng.integers(1, 6, n)  # coded 1-5 like the answers, predicts nothing
    df["alter"] = rng.integers(18, 90, n)
    flagged = _flagged(df, "wohlbefinden")
    items = {f"frage_{i}" for i in range(1, 7)}
    assert items <= set(flagged), flagged
    assert "a score of 6 items coded 1/2/3/4/5" in flagged["frage_1"]
    assert "region" not in flagged and "alter" not in flagged


def test_a_screening_result_cut_from_yes_no_answers_flags_the_answers():
    rng = np.random.default_rng(3)
    n = 500
    answers = (rng.random((n, 4)) < 0.35).astype(int)
    df = pd.DataFrame(answers, columns=["q_sleep", "q_mood", "q_appetite", "q_focus"])
    df["positive"] = (answers.sum(axis=1) >= 2).astype(int)
    df["smoker"] = rng.integers(0, 2, n)
    flagged = _flagged(df, "positive")
    assert {"q_sleep", "q_mood", "q_appetite", "q_focus"} <= set(flagged), flagged
    assert "smoker" not in flagged


def test_answers_that_predict_a_score_in_part_are_features():
    n = 600
    trait, answers = _answers(n, 5, seed=4)
    rng = np.random.default_rng(5)
    df = pd.DataFrame(answers.astype(int), columns=[f"item{i}" for i in range(5)])
    df["income"] = 30 + 8 * trait + rng.normal(scale=8, size=n)  # related to the trait, not computed from it
    flagged = _flagged(df, "income")
    assert not {f"item{i}" for i in range(5)} & set(flagged), flagged


def test_conditions_that_raise_a_risk_are_features():
    rng = np.random.default_rng(6)
    n = 800
    conditions = (rng.random((n, 5)) < 0.3).astype(int)
    df = pd.DataFrame(conditions, columns=["diabetes", "smoking", "hypertension", "obesity", "family_history"])
    risk = 1 / (1 + np.exp(-(-2 + 0.9 * conditions.sum(axis=1))))
    df["event"] = (rng.random(n) < risk).astype(int)
    flagged = _flagged(df, "event")
    assert not set(df.columns[:5]) & set(flagged), flagged
