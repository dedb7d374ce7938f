"""kernel_tools.folds: grouped, stratified folds without scikit-learn's slow greedy search."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.model_selection import StratifiedGroupKFold, StratifiedKFold

from kernel_tools.folds import StratifiedEntityKFold, random_labels


def check(folds, y, groups, n):
    """Every row tested once; no entity on both sides; each fold's class share near the whole's."""
    tested = np.concatenate([test for _, test in folds])
    assert sorted(tested) == list(range(n))
    for train, test in folds:
        assert not set(groups[train]) & set(groups[test])
        assert abs(y[test].mean() - y.mean()) < 0.05


@pytest.mark.parametrize("rows_per_entity", [1, 3])
def test_one_class_per_entity_is_stratified_over_the_entities(rows_per_entity):
    rng = np.random.default_rng(0)
    entities = 3000
    groups = np.repeat(rng.permutation(entities), rows_per_entity)
    labels = (rng.random(entities) < 0.3).astype(int)
    y = labels[groups]
    folds = list(StratifiedEntityKFold(5, shuffle=True, random_state=0).split(np.zeros(len(y)), y, groups))
    assert len(folds) == 5
    check(folds, y, groups, len(y))
    # the entities' own stratified folds (no greedy search over entities), rows following their entity
    order = pd.factorize(groups)[1]
    by_entity = StratifiedKFold(5, shuffle=True, random_state=0).split(np.zeros(entities), labels[order])
    for (_, test), (_, test_entities) in zip(folds, by_entity):
        assert set(groups[test]) == set(order[test_entities])


def test_entities_whose_rows_differ_in_class_get_the_greedy_search():
    rng = np.random.default_rng(1)
    groups = rng.integers(0, 300, 1200)
    y = (rng.random(1200) < 0.4).astype(int)  # classes vary within an entity
    ours = list(StratifiedEntityKFold(5, shuffle=True, random_state=0).split(np.zeros(1200), y, groups))
    # the greedy search, walking the entities in an order drawn from the seed (its own shuffle
    # permutes a table, not the walk: nearly the same folds whatever the seed)
    theirs = list(StratifiedGroupKFold(5).split(np.zeros(1200), y, random_labels(groups, 0)))
    assert all((a[1] == b[1]).all() for a, b in zip(ours, theirs))
    check(ours, y, groups, 1200)
    other = list(StratifiedEntityKFold(5, shuffle=True, random_state=1).split(np.zeros(1200), y, groups))
    assert len(set(groups[ours[0][1]]) & set(groups[other[0][1]])) < 0.5 * len(set(groups[ours[0][1]]))


def test_a_class_in_fewer_entities_than_folds_falls_back_too():
    groups = np.arange(40)
    y = np.r_[np.ones(3), np.zeros(37)].astype(int)
    ours = list(StratifiedEntityKFold(5, shuffle=True, random_state=0).split(np.zeros(40), y, groups))
    theirs = list(StratifiedGroupKFold(5).split(np.zeros(40), y, random_labels(groups, 0)))
    assert all((a[1] == b[1]).all() for a, b in zip(ours, theirs))
