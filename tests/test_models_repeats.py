"""An estimate that does not depend on the split's luck: random grouped folds, repeated
cross-validation on small data with its interval, and the holdout's shortfall as a probability."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from lifelines.datasets import load_rossi

import kernel_tools as kt
from kernel_tools.folds import StratifiedEntityKFold
from kernel_tools.models import fit_evaluate
from kernel_tools.models.repeats import settled
from kernel_tools.models.uncertainty import cv_interval, odds_in_words, shortfall_probability, within_range


def one_row_per_entity(n: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 3))
    y = (x[:, 0] - 0.8 * x[:, 1] + rng.logistic(size=n) > 0).astype(int)
    return pd.DataFrame(x, columns=["a", "b", "c"]).assign(y=y, pid=[f"P{i:05d}" for i in range(n)])


def test_grouped_stratified_splits_differ_from_seed_to_seed():
    """scikit-learn's StratifiedGroupKFold walks singleton groups in id order whatever its seed:
    its first fold was every fifth entity, and 20 seeds gave nearly one test set."""
    frame = one_row_per_entity(400)
    tests = [set(kt.split(frame, target="y", groups="pid", random_state=seed)[1]["pid"]) for seed in range(6)]
    overlaps = [len(a & b) / len(a) for i, a in enumerate(tests) for b in tests[i + 1:]]
    assert max(overlaps) < 0.45  # two random 20% test sets share ~20% of their entities
    assert all(abs(len(t) - 80) <= 2 for t in tests)  # still a fifth, still stratified:
    for seed in range(3):
        _, test, _ = kt.split(frame, target="y", groups="pid", random_state=seed)
        assert abs(test["y"].mean() - frame["y"].mean()) < 0.02
    # entities whose rows differ in class take scikit-learn's greedy search: walked in a random
    # order, its folds differ from seed to seed, keep each entity on one side and partition the rows
    groups = np.repeat(np.arange(60), 3)
    y = np.tile([0, 1, 1], 60)
    tests = []
    for seed in (1, 2):
        folds = list(StratifiedEntityKFold(5, shuffle=True, random_state=seed).split(groups, y, groups))
        assert sorted(np.concatenate([t for _, t in folds]).tolist()) == list(range(180))
        assert all(not set(groups[a]) & set(groups[b]) for a, b in folds)
        tests.append(set(groups[folds[0][1]]))
    assert len(tests[0] & tests[1]) < 0.5 * len(tests[0])


def test_small_data_is_cross_validated_on_random_partitions_until_their_means_agree():
    r = fit_evaluate(one_row_per_entity(300), target="y", task="classification", groups="pid")
    # at least three partitions, a fourth and fifth only while their means disagree
    assert 3 <= r.cv_repeats <= 5 and len(r.cv_scores) == 5 * r.cv_repeats and r.metrics["cv_repeats"] == r.cv_repeats
    assert r.cv_score == pytest.approx(np.mean(r.cv_scores))
    lo, hi = r.cv_interval
    assert lo < r.cv_score < hi and 0.02 < hi - lo < 0.3
    assert r.estimate.startswith(f"roc_auc {r.cv_score:.3f} [95% interval")
    assert f"{r.cv_repeats} × 5-fold cross-validation (grouped by the entity, stratified by class)" in r.estimate
    assert "300 entities, fewer than 1,000" in r.estimate
    if r.cv_repeats < 5:
        assert f"{r.cv_repeats} partitions sufficed" in r.estimate
    assert f"{r.cv_repeats} × 5 grouped folds" in repr(r) and r.to_dict()["cv_repeats"] == r.cv_repeats
    assert r.model_card()["metric"]["cv_folds"] == 5 and r.model_card()["metric"]["cv_interval"] == r.cv_interval
    # the partitions differ: not one partition's 5 fold scores repeated
    assert len({round(s, 9) for s in r.cv_scores}) > 2 * 5
    # asked for five, it makes five whatever they say
    asked = fit_evaluate(one_row_per_entity(300), target="y", task="classification", groups="pid", repeats=5)
    assert asked.cv_repeats == 5 and len(asked.cv_scores) == 25 and "as asked" in asked.estimate
    assert asked.cv_scores[:5 * r.cv_repeats] == r.cv_scores  # the same partitions, in the same order


def test_partitions_past_the_third_are_made_only_while_their_means_disagree():
    # the means agree: their standard error 0.005 is under a quarter of the half-width 0.05
    assert settled([0.60, 0.61, 0.615], 0.05).startswith("3 partitions sufficed")
    assert settled([0.55, 0.62, 0.66], 0.05) is None  # standard error 0.032: a fourth is made
    assert settled([0.60, 0.60], 0.05) is None  # two are never enough
    assert settled([0.60, 0.61, 0.62], None) is None  # no interval to weigh them against
    assert settled([0.55, 0.62, 0.66, 0.60, 0.61], 0.05) is None  # the caller stops at its plan


def test_large_data_keeps_one_partition_and_a_request_wins():
    big = fit_evaluate(one_row_per_entity(1200), target="y", task="classification", cv=3)
    assert big.cv_repeats == 1 and len(big.cv_scores) == 3
    assert "one partition: 1,200 rows make folds large enough" in big.estimate and big.cv_interval is not None
    asked = fit_evaluate(one_row_per_entity(200), target="y", task="classification", cv=3, repeats=2)
    assert asked.cv_repeats == 2 and len(asked.cv_scores) == 6 and "as asked" in asked.estimate
    with pytest.raises(ValueError, match="repeats must be an integer >= 1"):
        fit_evaluate(one_row_per_entity(100), target="y", task="classification", repeats=0)


def test_survival_with_few_events_is_repeated_whatever_its_size():
    rossi = load_rossi()
    rows = pd.concat([rossi.assign(arrest=0)] * 3, ignore_index=True)  # 1,296 rows...
    rows.loc[rows.sample(60, random_state=0).index, "arrest"] = 1  # ...and 60 events
    r = fit_evaluate(rows, target="arrest", task="survival", time="week", cv=3)
    assert r.cv_repeats >= 3 and "60 events, fewer than 100" in r.estimate and "stratified by event" in r.estimate


def test_the_interval_of_a_cross_validated_mean_is_corrected_for_shared_training_rows():
    scores = [0.60, 0.64, 0.58, 0.66, 0.62] * 5
    (lo, hi), se = cv_interval(scores, folds=5)
    naive = np.std(scores, ddof=1) / np.sqrt(25)
    assert se == pytest.approx(np.std(scores, ddof=1) * np.sqrt(1 / 25 + 1 / 4))
    assert se > 2 * naive and lo < 0.62 < hi
    assert cv_interval([0.6], folds=5) is None


def test_a_shortfall_is_a_probability_said_in_words():
    # the demo's holdout: 0.495 [0.385, 0.634] against 0.642
    p = shortfall_probability(0.642, 0.02, 0.495, [0.385, 0.634])
    assert 0.01 < p < 0.05
    assert shortfall_probability(0.81, 0.01, 0.60, [0.55, 0.65]) < 0.001
    assert shortfall_probability(0.70, 0.02, 0.69, [0.60, 0.78]) > 0.4
    assert odds_in_words(0.025) == "about 1 time in 40" and odds_in_words(0.0002) == "fewer than 1 time in 1,000"
    assert odds_in_words(0.6) == "more often than not"


def test_an_interval_is_clipped_to_the_values_its_metric_can_take_and_says_so():
    """Folds of a nearly separable table score AUROC 0.95-1.0: the normal interval around their
    mean reaches past 1, which no AUROC can; it ends at 1, and the estimate says so."""
    assert within_range([0.97, 1.013], "roc_auc") == ([0.97, 1.0], "the interval is clipped to the values roc_auc can "
                                                      "take (upper end 1.013 to 1): a normal interval around a mean "
                                                      "near its bound reaches past it")
    assert within_range([-3.2, 1.04], "r2")[0] == [-3.2, 1.0]  # r2 has no lower bound
    assert "lower end -0.020 to 0 and upper end 1.020 to 1" in within_range([-0.02, 1.02], "c_index")[1]
    assert within_range([0.6, 0.9], "c_index") == ([0.6, 0.9], None)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(60, 2))
    frame = pd.DataFrame(x, columns=["a", "b"]).assign(y=(x[:, 0] + 0.15 * rng.normal(size=60) > 0).astype(int))
    r = fit_evaluate(frame, target="y", task="classification", cv=5)
    raw, _ = cv_interval(r.cv_scores, 5)
    assert raw[1] > 1 and r.cv_interval == [raw[0], 1.0]
    assert f"upper end {raw[1]:.3f} to 1" in r.estimate
