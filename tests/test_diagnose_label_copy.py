"""Leakage by a recoded copy of the outcome: a column spelled with the target's own labels."""

import numpy as np
import pandas as pd

from kernel_tools.diagnosis import diagnose


def frame(n=800, noise=0.08, copy_disagrees=0.04, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 3))
    truth = np.where(x[:, 0] + 0.5 * x[:, 1] + rng.normal(scale=0.8, size=n) > 0, "benign", "malignant")
    noisy = truth.copy()
    flip = rng.random(n) < noise
    noisy[flip] = np.where(truth[flip] == "benign", "malignant", "benign")
    copy = truth.copy()
    off = rng.random(n) < copy_disagrees
    copy[off] = np.where(truth[off] == "benign", "malignant", "benign")
    # honest categorical predictors: one in other words, one sharing a single label by chance
    sex = np.where(rng.random(n) < 0.5, "F", "M")
    prior = np.where(x[:, 0] + rng.normal(scale=2.0, size=n) > 0, "Benign ", "MALIGNANT")
    return pd.DataFrame({"a": x[:, 0], "b": x[:, 1], "c": x[:, 2], "sex": sex,
                         "second_opinion": copy, "prior_screen": prior, "target": noisy})


def leaked(d):
    return {c for f in d.by_kind("target_leakage") for c in f.columns}


def test_a_recoded_copy_of_noisy_labels_is_flagged_with_its_agreement():
    df = frame()
    before = df.copy()
    d = diagnose(df, target="target")
    assert "second_opinion" in leaked(d)
    (f,) = [f for f in d.by_kind("target_leakage") if f.columns == ["second_opinion"]]
    assert 0.85 <= f.evidence["agreement"] <= 0.95 and f.evidence["chance_agreement"] < 0.7
    assert f.gate == "leakage" and "recorded again" in f.summary
    # a weakly related column in the same vocabulary (spelled differently) and an honest one are not
    assert not leaked(d) & {"prior_screen", "sex", "a", "b", "c"}
    pd.testing.assert_frame_equal(df, before)


def test_flag_like_labels_and_weak_agreement_are_not_evidence():
    df = frame()
    # 0/1 outcome with a 0/1 feature agreeing 80%: many honest flags look like that
    y = (df["target"] == "malignant").astype(int)
    rng = np.random.default_rng(1)
    flag = np.where(rng.random(len(df)) < 0.2, 1 - y, y)
    d = diagnose(df.drop(columns="second_opinion").assign(target=y, flag=flag.astype(str)), target="target")
    assert "flag" not in leaked(d)
    # the outcome's labels, but agreeing only a little beyond chance
    d = diagnose(frame(copy_disagrees=0.35), target="target")
    assert "second_opinion" not in leaked(d)
