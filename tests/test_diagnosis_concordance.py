"""The diagnosis's C-index of a score with few distinct values (a single-feature score's bin
means) counts the same pairs as the models' C-index, to the last bit (issue 31)."""

from __future__ import annotations

import numpy as np
import pytest

from kernel_tools.diagnosis import scoring
from kernel_tools.models.survival import concordance as models_concordance


@pytest.mark.parametrize("n", [1, 2, 7, 60, 1000, 5000])
@pytest.mark.parametrize("values", [1, 2, 9, 60])
def test_few_values_count_the_same_pairs(n, values):
    rng = np.random.default_rng(n * 100 + values)
    time = rng.integers(0, max(2, n // 3), n).astype(float)  # many tied times
    event = rng.random(n) < 0.4
    score = rng.integers(0, values, n) / 7.0
    fast = scoring._concordance_of_few_values(time, -score, event)
    general = models_concordance(np.column_stack([time, event]), -score)
    assert fast is not None
    assert (np.isnan(fast) and np.isnan(general)) or fast == general


def test_many_values_or_gaps_take_the_general_count():
    rng = np.random.default_rng(0)
    time, event = rng.exponential(100, 500), rng.random(500) < 0.5
    assert scoring._concordance_of_few_values(time, rng.normal(size=500), event) is None  # 500 values
    with_gap = np.where(np.arange(500) == 3, np.nan, rng.integers(0, 5, 500).astype(float))
    assert scoring._concordance_of_few_values(time, with_gap, event) is None
    # the diagnosis's entry point gives the general answer for both
    score = rng.normal(size=500)
    assert scoring.concordance(time, score, event) == models_concordance(np.column_stack([time, event]), -score)


def test_a_single_feature_score_is_unchanged_by_the_table():
    """The survival single-feature score of a binned column, through the diagnosis's scorer."""
    rng = np.random.default_rng(5)
    n = 3000
    time, event = rng.exponential(50, n).round(), rng.random(n) < 0.3
    encoded = rng.integers(0, 20, n) / 20 + (rng.integers(0, 3, n) / 100)  # ~60 bin means
    assert scoring.concordance(time, encoded, event) == models_concordance(np.column_stack([time, event]),
                                                                             -encoded)
