"""Label issues are judged only when the features predict the target: a model no better than
chance would "contradict" a third of any labels."""

import numpy as np
import pandas as pd

from kernel_tools import diagnose


def _frame(signal: float, flips: float, n: int = 1500, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = (signal * X[:, 0] + rng.normal(size=n) > 0).astype(int)
    flipped = rng.random(n) < flips
    y[flipped] = 1 - y[flipped]
    return pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "c": X[:, 2], "y": y}), set(np.flatnonzero(flipped))


def test_an_unpredictable_target_has_no_label_issues():
    df, _ = _frame(signal=0.0, flips=0.0)
    assert diagnose(df, target="y").by_kind("label_issues") == []


def test_flipped_labels_of_a_predictable_target_are_found_with_the_model_skill():
    df, flipped = _frame(signal=4.0, flips=0.08)
    found = diagnose(df, target="y").by_kind("label_issues")
    assert len(found) == 1
    ev = found[0].evidence
    assert ev["model_auroc"] >= 0.6
    rows = set(ev["rows"])
    assert len(rows & flipped) / len(rows) >= 0.6 and len(rows & flipped) / len(flipped) >= 0.5
