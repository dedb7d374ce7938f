"""Cross-validation folds of whole entities, stratified by class, in milliseconds.

scikit-learn's ``StratifiedGroupKFold`` assigns entities to folds by a greedy search that loops
in Python over the entities: about a second at 2,500 entities, five at 10,000 (2 cores), paid
by every grouped cross-validation (the model step, label issues, time-varying models). Where
each entity carries one class — one outcome per entity, or one row per entity after an
aggregation — stratifying the rows is stratifying the entities by that class, which
``StratifiedKFold`` does over the entities at once. Elsewhere (an entity whose rows differ in
class, or a class on fewer entities than folds) the greedy search runs, on entities relabelled in
an order drawn from ``random_state``: its own ``shuffle`` (through 1.7) permutes the table of class
counts per entity, not its walk over the entities in sorted order, which detaches each entity from
its counts and leaves the folds nearly the same whatever the seed (on the shipped demo, 20 seeds
gave nearly one test set).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pandas as pd
from sklearn.model_selection import StratifiedGroupKFold, StratifiedKFold
from sklearn.utils import check_random_state


class StratifiedEntityKFold(StratifiedGroupKFold):
    """``StratifiedGroupKFold`` (same parameters, same guarantees: an entity is never on both
    sides), stratified over entities when each entity has a single class."""

    def _iter_test_indices(self, X: Any, y: Any, groups: Any) -> Iterator[np.ndarray]:
        entity, _ = pd.factorize(np.asarray(groups))
        label, _ = pd.factorize(np.asarray(y))
        per_entity = pd.DataFrame({"entity": entity, "label": label}).groupby("entity")["label"]
        # not len(per_entity): that builds pandas' dict of every entity's rows (5 s at 250k entities)
        if len(entity) == 0 or per_entity.nunique().max() > 1:
            yield from self._greedy(X, y, groups)
            return
        labels = per_entity.first().to_numpy()  # entity codes 0..n-1 in order
        if np.bincount(labels).min() < self.n_splits:  # too few entities of a class: the greedy search copes
            yield from self._greedy(X, y, groups)
            return
        splitter = StratifiedKFold(self.n_splits, shuffle=self.shuffle, random_state=self.random_state)
        for _, test_entities in splitter.split(np.zeros(len(labels)), labels):
            yield np.flatnonzero(np.isin(entity, test_entities))

    def _greedy(self, X: Any, y: Any, groups: Any) -> Iterator[np.ndarray]:
        """scikit-learn's greedy search, walking the entities in a random order when shuffled."""
        if not self.shuffle:
            yield from super()._iter_test_indices(X, y, groups)
            return
        walk = StratifiedGroupKFold(self.n_splits, shuffle=False)
        yield from walk._iter_test_indices(X, y, random_labels(groups, self.random_state))


def random_labels(groups: Any, random_state: Any) -> np.ndarray:
    """Each entity relabelled by an integer drawn at random (the same entity, the same label)."""
    codes, uniques = pd.factorize(pd.Series(np.asarray(groups)), use_na_sentinel=False)
    order = check_random_state(random_state).permutation(len(uniques))
    return order[codes]
