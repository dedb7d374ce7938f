"""The model step above 5,000 rows (issue 31): the hyper-parameter search ranks its settings on a
sample of whole entities and says so; the chosen setting's cross-validation, the holdout and
their intervals stay on every row. At or below the threshold nothing changes."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.experimental import enable_halving_search_cv  # noqa: F401
from sklearn.model_selection import HalvingGridSearchCV

from jupyter_dcpilot.engine.hosts import HeadlessHost
from kernel_tools import scale
from kernel_tools.models import evaluate, fit_evaluate

SENTENCE = ("HistGradientBoostingClassifier: the search ranked its 6 settings from {used:,} of {of:,} "
            "cross-validation rows (whole entities) (a sample: the table has more than 5,000 rows); "
            "the chosen setting was cross-validated on all of them")


def entity_frame(n: int, seed: int = 0) -> pd.DataFrame:
    """``n`` rows, two per entity, one outcome per entity."""
    rng = np.random.default_rng(seed)
    entity = np.arange(n) // 2
    a, b = rng.normal(size=(2, n))
    person = rng.normal(size=n // 2 + 1)[entity]
    y = (a - b + person + rng.logistic(size=n) > 0).astype(int)
    y = pd.Series(y).groupby(entity).transform("first").to_numpy()
    return pd.DataFrame({"id": entity, "a": a, "b": b, "p": person, "y": y})


def searched_rows(monkeypatch) -> list[int]:
    """Records the rows each halving search is given."""
    seen: list[int] = []
    fit = HalvingGridSearchCV.fit
    monkeypatch.setattr(HalvingGridSearchCV, "fit", lambda self, X, y, **kw: seen.append(len(X)) or fit(self, X, y, **kw))
    return seen


def test_at_the_threshold_the_search_sees_every_row(monkeypatch):
    assert scale.SCALE_ROWS == 5_000  # the lead's bound: the quality suite's tables keep today's plan
    monkeypatch.setattr(evaluate, "SEARCH_ROWS", 1_000)
    seen = searched_rows(monkeypatch)
    r = fit_evaluate(entity_frame(5_000), target="y", task="classification", groups="id")
    assert seen == [5_000] and r.sampled == []
    assert "on a sample" not in repr(r)


def test_above_it_the_search_ranks_on_whole_entities_and_the_estimate_stays_on_all(monkeypatch):
    monkeypatch.setattr(evaluate, "SEARCH_ROWS", 2_000)
    seen = searched_rows(monkeypatch)
    df = entity_frame(6_000)
    r = fit_evaluate(df, target="y", task="classification", groups="id", test=entity_frame(1_000, seed=1))
    assert seen == [2_000]  # 1,000 whole entities of two rows
    assert r.sampled == [SENTENCE.format(used=2_000, of=6_000)]
    assert "on a sample: " + r.sampled[0] in repr(r) and r.to_dict()["sampled"] == r.sampled
    assert "the table has more than 5,000 rows" in r._repr_html_()
    assert r.candidates["HistGradientBoostingClassifier"]["tried"] == 6
    assert len(r.cv_scores) == 5 and "cv_sample_size" not in r.metrics  # the estimate: all 6,000 rows
    assert r.n_train == 6_000 and r.holdout_ci is not None


def test_without_entities_the_search_samples_rows_and_says_rows(monkeypatch):
    monkeypatch.setattr(evaluate, "SEARCH_ROWS", 2_000)
    r = fit_evaluate(entity_frame(6_000).drop(columns="id"), target="y", task="classification")
    assert r.sampled == [SENTENCE.format(used=2_000, of=6_000).replace(" (whole entities)", "")]


def searched_folds(monkeypatch) -> list[int]:
    """Records how many folds each halving search ranks its settings on."""
    seen: list[int] = []
    fit = HalvingGridSearchCV.fit
    monkeypatch.setattr(HalvingGridSearchCV, "fit", lambda self, X, y, **kw: seen.append(len(self.cv)) or fit(self, X, y, **kw))
    return seen


def test_just_below_2000_training_rows_the_search_ranks_on_three_folds_as_before(monkeypatch):
    assert evaluate.QUICK_SEARCH_ROWS == 2_000  # the lead's bound: the smaller real tables keep today's results
    df, test = entity_frame(1_999), entity_frame(400, seed=1)
    seen = searched_folds(monkeypatch)
    r = fit_evaluate(df, target="y", task="classification", groups="id", test=test)
    # the result as before the bound: the search forced onto its first three folds at any size
    monkeypatch.setattr(evaluate, "QUICK_SEARCH_ROWS", 10**9)
    expected = fit_evaluate(df, target="y", task="classification", groups="id", test=test)
    assert seen == [evaluate.SEARCH_FOLDS, evaluate.SEARCH_FOLDS] == [3, 3]
    assert r.candidates == expected.candidates and r.model_name == expected.model_name
    assert (r.cv_scores, r.holdout_score, r.holdout_ci) == (expected.cv_scores, expected.holdout_score, expected.holdout_ci)
    assert r.candidates["HistGradientBoostingClassifier"]["search_folds"] == 3


def test_from_2000_training_rows_the_search_ranks_on_one_fold_and_the_estimate_stays_on_all(monkeypatch):
    df = entity_frame(2_000)
    seen = searched_folds(monkeypatch)
    picked = []
    search = evaluate._halving_search
    monkeypatch.setattr(evaluate, "_halving_search", lambda cand, X, y, folds, *a: picked.append((X, y, folds))
                        or search(cand, X, y, folds, *a))
    r = fit_evaluate(df, target="y", task="classification", groups="id")
    assert seen == [1]
    tree = r.candidates["HistGradientBoostingClassifier"]
    assert tree["search_folds"] == 1 and tree["tried"] == 6 and len(tree["search"]) == 6
    assert len(r.cv_scores) == 5  # the chosen setting: every fold
    # what it picked is the best setting of a successive halving on the first fold alone
    X, y, folds = picked[0]
    assert len(folds) == 1
    by_hand = HalvingGridSearchCV(
        candidates_of(r).pipeline, [{k: [v] for k, v in g.items()} for g in candidates_of(r).grid], factor=3,
        min_resources=max(len(X) // 9, 500), cv=folds, scoring=evaluate._PrimaryScorer("classification", [0, 1]),
        refit=False, random_state=0, error_score=np.nan).fit(X, y)
    assert tree["params"] == {k.removeprefix("model__"): v for k, v in by_hand.best_params_.items()}


def candidates_of(report):
    """The unfitted tree candidate ``fit_evaluate`` searched for ``report``."""
    from kernel_tools.models.pipelines import candidates

    numeric = [f for f in report.features]
    return candidates("classification", numeric, [], class_weight=None, random_state=0, rows=report.n_train)[1]


def test_the_search_folds_keep_each_entity_on_one_side():
    folds = [(np.array([0, 1, 2, 3]), np.array([4, 5])), (np.array([2, 3, 4, 5]), np.array([0, 1]))]
    kept = evaluate._folds_within(folds, np.array([1, 2, 4]), 6)
    assert [(t.tolist(), v.tolist()) for t, v in kept] == [([0, 1], [2]), ([1, 2], [0])]


@pytest.mark.slow
@pytest.mark.timeout(300)
async def test_the_model_step_says_what_it_sampled_on_a_real_kernel(tmp_path):
    host = HeadlessHost(tmp_path / "nb.ipynb", timeout=280.0)
    await host.start()
    try:
        code = ("import numpy as np, pandas as pd\nimport kernel_tools as kt\nimport kernel_tools.models.evaluate as ev\n"
                "ev.SEARCH_ROWS = 2000\n"
                "rng = np.random.default_rng(0)\nn = 6000\na, b = rng.normal(size=(2, n))\n"
                "df = pd.DataFrame({'id': np.arange(n) // 2, 'a': a, 'b': b})\n"
                "df['y'] = (df.groupby('id')['a'].transform('first') + rng.logistic(size=n) > 0).astype(int)\n"
                "model = kt.fit_evaluate(df, target='y', task='classification', groups='id')\nmodel\n")
        out = await host.run_cell(code, {})
        assert out.error is None, out.error
    finally:
        await host.stop()
    assert SENTENCE.format(used=2_000, of=6_000) in out.text()  # the cell's output, as the notebook shows it
