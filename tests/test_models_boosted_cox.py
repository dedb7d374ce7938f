"""GradientBoostedCox's histogram bins and boosting rounds follow the rows it is fitted on (issue 31):
a boosting round costs about the bins times the features, and small data can use neither fine split points
nor 200 rounds."""

from __future__ import annotations

import json

import numpy as np
import pytest

from kernel_tools.models.survival import GradientBoostedCox, concordance


def survival_data(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Thresholds and an interaction (a tree's truth), 40% censored or so."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 6))
    risk = 1.5 * (np.abs(x[:, 0]) > 1) + 1.0 * (x[:, 1] * x[:, 2] > 0) + 0.5 * x[:, 3]
    t = rng.exponential(20 * np.exp(-risk))
    c = rng.uniform(5, 60, n)
    return x, np.column_stack([np.minimum(t, c), (t <= c).astype(float)])


def booster_bins(model: GradientBoostedCox) -> int:
    config = json.loads(model.model_.get_booster().save_config())
    return int(config["learner"]["generic_param"].get("max_bin")
               or config["learner"]["gradient_booster"]["tree_train_param"]["max_bin"])


@pytest.mark.parametrize(("rows", "bins"), [(100, 32), (250, 62), (1000, 250), (3000, 256)])
def test_the_bins_follow_the_rows_fitted(rows, bins):
    x, y = survival_data(rows, seed=0)
    model = GradientBoostedCox(n_estimators=5).fit(x, y)
    assert model.max_bin_ == bins
    assert booster_bins(model) == bins  # what XGBoost fitted with, not only what was asked


def test_an_explicit_max_bin_is_kept():
    x, y = survival_data(250, seed=0)
    model = GradientBoostedCox(n_estimators=5, max_bin=128).fit(x, y)
    assert model.max_bin_ == 128 and booster_bins(model) == 128


def test_fewer_bins_on_small_data_rank_new_patients_as_well():
    # 250 training rows, scored on 4,000 new ones: the rows' bins against XGBoost's 256, over seeds
    gaps = []
    for seed in range(4):
        x, y = survival_data(250, seed)
        new_x, new_y = survival_data(4000, seed + 100)
        scores = [concordance(new_y, GradientBoostedCox(max_bin=bins).fit(x, y).predict(new_x))
                  for bins in (None, 256)]
        assert scores[0] > 0.65  # it learned the truth's shape
        gaps.append(scores[0] - scores[1])
    assert np.mean(gaps) > -0.01, gaps


@pytest.mark.parametrize(("rows", "rounds"), [(80, 50), (150, 75), (250, 125), (400, 200), (3000, 200)])
def test_the_rounds_follow_the_rows_fitted(rows, rounds):
    x, y = survival_data(rows, seed=0)
    model = GradientBoostedCox(max_bin=32).fit(x, y)
    assert model.n_estimators_ == rounds
    assert model.model_.get_booster().num_boosted_rounds() == rounds  # what XGBoost fitted


def test_explicit_rounds_are_kept():
    x, y = survival_data(250, seed=0)
    model = GradientBoostedCox(n_estimators=7, max_bin=32).fit(x, y)
    assert model.n_estimators_ == 7 and model.model_.get_booster().num_boosted_rounds() == 7


def test_fewer_rounds_on_small_data_rank_new_patients_at_least_as_well():
    # 250 training rows (125 rounds), scored on 4,000 new ones, against the 200 rounds of before
    gaps = []
    for seed in range(4):
        x, y = survival_data(250, seed)
        new_x, new_y = survival_data(4000, seed + 100)
        scores = [concordance(new_y, GradientBoostedCox(n_estimators=rounds).fit(x, y).predict(new_x))
                  for rounds in (None, 200)]
        assert scores[0] > 0.65  # it learned the truth's shape
        gaps.append(scores[0] - scores[1])
    assert np.mean(gaps) > -0.005, gaps
