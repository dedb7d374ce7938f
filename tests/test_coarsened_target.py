"""A column that is the target in fewer values ("=1 if very happy" beside a three-level happiness,
pass/fail beside a grade) is the outcome recorded again: a leak, whatever its name, for an ordered
score and for classes alike; a column merely related to the target is not."""

import numpy as np
import pandas as pd
import pytest
from dev_tables import quiet_diagnose

LEVELS = ["not too happy", "pretty happy", "very happy"]


def _survey(n: int = 900, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    health = rng.normal(size=n)
    level = np.digitize(health + rng.normal(scale=0.8, size=n), [-0.8, 0.6])
    return pd.DataFrame({"age": rng.integers(18, 90, n), "health": health.round(2),
                         "married": (rng.random(n) < 0.5 + 0.1 * level).astype(int),
                         "top": (level == 2).astype(int), "answer": np.asarray(LEVELS)[level]})


def _leaks(d) -> set[str]:
    return {c for f in d.findings if f.kind in ("target_leakage", "suspected_leakage") for c in f.columns}


def test_the_target_dichotomised_is_a_leak_of_the_ordered_score():
    leaks = _leaks(quiet_diagnose(_survey(), target="answer"))
    assert "top" in leaks and "married" not in leaks and "health" not in leaks


@pytest.mark.parametrize("task", ["classification", "regression"])
def test_pass_fail_beside_a_grade_is_a_leak(task):
    rng = np.random.default_rng(1)
    n = 600
    grade = rng.integers(1, 6, n)
    frame = pd.DataFrame({"hours": (grade * 3 + rng.normal(0, 4, n)).round(1), "grade": grade,
                          "result": np.where(grade >= 3, "pass", "fail")})
    assert "result" in _leaks(quiet_diagnose(frame, target="grade", task=task))


def test_a_rare_flag_that_lines_up_by_chance_is_not_called_a_copy():
    rng = np.random.default_rng(2)
    frame = _survey()
    frame["top"] = 0
    frame.loc[rng.choice(len(frame), 10, replace=False), "top"] = 1  # 1% of rows: too rare to be a coding
    assert "top" not in _leaks(quiet_diagnose(frame, target="answer"))
