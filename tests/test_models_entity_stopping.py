"""HistGradientBoosting's early stopping holds out whole entities when the training rows repeat one
(issue 31): its own inner split is by rows, so an entity sits on both sides and the held-out loss
keeps falling as the trees learn the entities themselves."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import kernel_tools as kt
from kernel_tools.models import pipelines

FEATURES = [f"x{i}" for i in range(6)]


def _entities_table(n_entities: int = 300, rows_each: int = 10, seed: int = 0) -> pd.DataFrame:
    """Several rows per patient, each patient's features nearly constant and its class a coin of its
    own: nothing learned about one patient carries to another."""
    rng = np.random.default_rng(seed)
    entity = np.repeat(np.arange(n_entities), rows_each)
    base = rng.normal(size=(n_entities, len(FEATURES)))
    df = pd.DataFrame(base[entity] + 0.05 * rng.normal(size=(len(entity), len(FEATURES))), columns=FEATURES)
    df["patient"] = [f"p{e:04d}" for e in entity]
    df["y"] = rng.integers(0, 2, n_entities)[entity]
    return df


@pytest.mark.parametrize("task", ["classification", "regression"])
def test_early_stopping_holds_out_whole_entities(task):
    """On a split by rows the held-out loss falls for as long as the trees memorise patients (all
    300 rounds); held out by patient, nothing generalises and the fit stops after ~10 rounds."""
    df = _entities_table()
    entities = pipelines.entity_codes(df, "patient")
    assert entities is not None
    rounds = {}
    for grouped in (None, entities):
        pool = pipelines.candidates(task, FEATURES, [], class_weight=None, random_state=0, rows=len(df),
                                    entities=grouped)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fitted = pool[1].pipeline.fit(df, df["y"].to_numpy(dtype=float if task == "regression" else int))
        rounds[grouped is not None] = fitted[-1].n_iter_
    assert rounds[False] >= 100  # the row split is fooled (the behaviour before)
    assert rounds[True] <= 30


def test_fit_evaluate_passes_each_fit_its_rows_entities():
    """Through ``fit_evaluate`` (folds, the halving search on subsets, the refit): the model it returns
    stopped early on held-out patients, and the tree's folds score at chance."""
    df = _entities_table(seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = kt.fit_evaluate(df, target="y", groups="patient", task="classification", random_state=0)
    assert report.model_name == "HistGradientBoostingClassifier"
    assert abs(report.candidates[report.model_name]["cv_mean"] - 0.5) < 0.1
    assert report.pipeline[-1].n_iter_ <= 30  # by rows: 300


def test_one_row_per_entity_keeps_scikit_learns_own_stopping():
    """No entity repeats: the row split is an entity split, and the pipeline is the plain one."""
    df = _entities_table(rows_each=1)
    assert pipelines.entity_codes(df, "patient") is None
    assert pipelines.entity_codes(_entities_table(), None) is None
    pool = pipelines.candidates("classification", FEATURES, [], class_weight=None, random_state=0, rows=len(df),
                                entities=None)
    assert type(pool[1].pipeline[-1]).__name__ == "HistGradientBoostingClassifier"
