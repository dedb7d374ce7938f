"""The model step's search scores each setting on its validation rows only: scikit-learn's
successive halving scores the training rows too by default, which nothing reads (issue 31)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.experimental import enable_halving_search_cv  # noqa: F401
from sklearn.model_selection import HalvingGridSearchCV

from kernel_tools.models import evaluate, fit_evaluate


def test_the_search_scores_each_fit_once(monkeypatch):
    rng = np.random.default_rng(0)
    a, b, c = rng.normal(size=(3, 1500))
    df = pd.DataFrame({"a": a, "b": b, "c": c, "y": ((a * b > 0) ^ (rng.random(1500) < 0.05)).astype(int)})
    searches: list[HalvingGridSearchCV] = []
    inside: list[bool] = []
    scored_inside = []
    fit, score = HalvingGridSearchCV.fit, evaluate._PrimaryScorer.__call__

    def kept(self, *args, **kwargs):
        searches.append(self)
        inside.append(True)
        try:
            return fit(self, *args, **kwargs)
        finally:
            inside.pop()

    def counted(self, *args):
        if inside:
            scored_inside.append(1)
        return score(self, *args)

    monkeypatch.setattr(HalvingGridSearchCV, "fit", kept)
    monkeypatch.setattr(evaluate._PrimaryScorer, "__call__", counted)
    r = fit_evaluate(df, target="y", task="classification", cv=5)
    assert len(searches) == 1
    results = searches[0].cv_results_
    assert len(scored_inside) == len(results["params"]) * evaluate.SEARCH_FOLDS  # each fit once
    assert "mean_train_score" not in results
    assert r.model_name == "HistGradientBoostingClassifier"  # the search still finds the interaction
    assert r.candidates["HistGradientBoostingClassifier"]["tried"] == 6
