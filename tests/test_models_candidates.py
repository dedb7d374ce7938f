"""fit_evaluate's candidates: which are compared, how one is chosen, and the time budget."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from lifelines.datasets import load_rossi

from kernel_tools.models import fit_evaluate
from kernel_tools.models.pipelines import FeatureFrame, MissingPatterns
from kernel_tools.models.survival import concordance


def interaction_frame(n: int = 1200, seed: int = 0) -> pd.DataFrame:
    """An outcome no linear model can see: the sign of a product (XOR)."""
    rng = np.random.default_rng(seed)
    a, b, c = rng.normal(size=(3, n))
    y = ((a * b > 0) ^ (rng.random(n) < 0.05)).astype(int)
    return pd.DataFrame({"a": a, "b": b, "c": c, "y": y})


def test_a_non_linear_truth_is_found_by_the_searched_tree_and_the_choice_is_explained():
    r = fit_evaluate(interaction_frame(), target="y", task="classification", cv=3)
    assert r.model_name == "HistGradientBoostingClassifier"
    tree = r.candidates["HistGradientBoostingClassifier"]
    linear = r.candidates["LogisticRegression"]
    assert tree["cv_mean"] > 0.85 and linear["cv_mean"] < 0.6
    # six settings screened by successive halving, each reported with the rows it reached
    assert tree["tried"] == 6 and len(tree["search"]) == 6
    assert all(0 < s["rows"] <= 1200 for s in tree["search"])
    assert r.candidates_tried == 7
    assert r.selection.startswith("HistGradientBoostingClassifier: cv roc_auc") and "beats LogisticRegression" in r.selection


def test_the_explainable_model_is_kept_when_within_noise():
    from types import SimpleNamespace

    from kernel_tools.models.evaluate import _choose

    pool = {"Linear": SimpleNamespace(explainable=True), "Tree": SimpleNamespace(explainable=False)}

    def scored(linear, tree):
        return {"Linear": {"cv_mean": np.mean(linear), "cv_scores": linear},
                "Tree": {"cv_mean": np.mean(tree), "cv_scores": tree}}

    # the tree is ahead by 0.01 on average, but the folds disagree: within one standard error
    name, why = _choose(scored([0.80, 0.70, 0.75], [0.83, 0.69, 0.76]), pool, "roc_auc")
    assert name == "Linear" and why.startswith("Linear kept: within noise of Tree")
    # ahead by 0.03 on every fold: the tree
    name, why = _choose(scored([0.80, 0.70, 0.75], [0.83, 0.73, 0.78]), pool, "roc_auc")
    assert name == "Tree" and "beats Linear" in why
    # a linear model that is simply best
    name, why = _choose(scored([0.85, 0.75, 0.80], [0.83, 0.73, 0.78]), pool, "roc_auc")
    assert name == "Linear" and why.startswith("Linear: the best cross-validated roc_auc")


def test_linear_truth_keeps_logistic_regression():
    rng = np.random.default_rng(1)
    frame = pd.DataFrame(rng.normal(size=(600, 4)), columns=list("abcd"))
    frame["y"] = (frame["a"] - frame["b"] + rng.logistic(size=600) > 0).astype(int)
    r = fit_evaluate(frame, target="y", task="classification", cv=4)
    assert r.model_name == "LogisticRegression"


def test_survival_compares_cox_aft_and_boosted_cox():
    rossi = load_rossi()
    r = fit_evaluate(rossi, target="arrest", task="survival", time="week", cv=3)
    assert set(r.candidates) == {"CoxPH (penalized)", "Weibull AFT", "Gradient-boosted Cox"}
    for name, info in r.candidates.items():
        assert 0.5 < info["cv_mean"] < 0.75, name
    assert r.candidates_tried == 3


def test_a_non_linear_survival_truth_goes_to_boosted_cox():
    rng = np.random.default_rng(0)
    n = 1500
    x = rng.normal(size=(n, 3))
    risk = 1.5 * (np.abs(x[:, 0]) > 1) + 1.0 * (x[:, 1] * x[:, 2] > 0)  # thresholds and an interaction
    t = rng.exponential(20 * np.exp(-risk))
    c = rng.uniform(5, 60, n)
    frame = pd.DataFrame(x, columns=["a", "b", "c"]).assign(days=np.minimum(t, c), died=(t <= c).astype(int))
    r = fit_evaluate(frame, target="died", task="survival", time="days", cv=3)
    assert r.model_name == "Gradient-boosted Cox"
    assert r.candidates["Gradient-boosted Cox"]["cv_mean"] > r.candidates["CoxPH (penalized)"]["cv_mean"] + 0.05


def test_a_candidate_that_cannot_fit_is_reported_and_the_others_still_compete():
    rossi = load_rossi().head(200).copy()
    rossi.loc[:3, "week"] = 0  # an AFT model needs positive durations
    r = fit_evaluate(rossi, target="arrest", task="survival", time="week", cv=3)
    assert "positive durations" in r.candidates["Weibull AFT"]["error"]
    assert r.model_name in ("CoxPH (penalized)", "Gradient-boosted Cox")


# --- the time budget ------------------------------------------------------------------------


def test_no_budget_cuts_nothing():
    r = fit_evaluate(interaction_frame(400), target="y", task="classification", cv=3)
    assert r.degraded == [] and r.budget is None
    assert set(r.timings) >= {"cross-validation", "refit", "importance", "total"}


def test_an_impossible_budget_degrades_on_purpose_and_says_so():
    frame = interaction_frame(3000)
    r = fit_evaluate(frame, target="y", task="classification", cv=5, test=interaction_frame(500, seed=1),
                     budget=0.001)
    text = " ".join(r.degraded)
    assert "cross-validation ran on a sample of 200 of 3000 rows" in text
    assert "HistGradientBoostingClassifier was not tried" in text
    assert "permutation importance used" in text
    assert "over the 0 s budget" in text or "budget" in r.degraded[-1]
    # still a complete, usable report: the explainable model, a holdout score and its interval
    assert r.model_name == "LogisticRegression" and r.holdout_score is not None
    assert r.holdout_ci is not None and r.metrics["cv_sample_size"] == 200
    assert r.pipeline.predict(frame.head(3).drop(columns="y")).shape == (3,)
    assert r.to_dict()["degraded"] == r.degraded


def test_a_budget_below_the_full_work_is_never_silent():
    frame = interaction_frame(3000)
    full = fit_evaluate(frame, target="y", task="classification", cv=3, budget=1000)
    assert full.degraded == []
    # less than half of what cross-validation alone took: something is cut, or the report
    # says the budget was overrun; in every case in sentences that name the budget
    r = fit_evaluate(frame, target="y", task="classification", cv=3, budget=full.timings["cross-validation"] * 0.4)
    assert r.degraded and all("budget" in d for d in r.degraded)


@pytest.mark.parametrize("budget", [0, -1, float("nan"), "10", True])
def test_a_bad_budget_is_a_clear_error(budget):
    with pytest.raises(ValueError, match="budget must be a positive number of seconds"):
        fit_evaluate(interaction_frame(100), target="y", task="classification", budget=budget)


# --- what made wide tables slow -------------------------------------------------------------


def test_one_missing_indicator_per_missingness_pattern():
    X = np.array([[1.0, 2.0, 3.0, 4.0], [np.nan, np.nan, 3.0, np.nan], [5.0, 6.0, 7.0, 8.0],
                  [np.nan, np.nan, 1.0, 2.0]])
    patterns = MissingPatterns().fit(X)
    # columns 0 and 1 always missing together: one indicator; column 2 never missing: none
    assert patterns.columns_.tolist() == [0, 3]
    np.testing.assert_array_equal(patterns.transform(X), [[0, 0], [1, 1], [0, 0], [1, 0]])
    names = patterns.get_feature_names_out(["a", "b", "c", "d"])
    assert names.tolist() == ["missing_a", "missing_d"]


def test_a_panel_of_columns_missing_together_adds_one_encoded_column():
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(rng.normal(size=(300, 6)), columns=[f"lab{i}" for i in range(6)])
    frame.loc[rng.random(300) < 0.3, ["lab0", "lab1", "lab2", "lab3"]] = np.nan
    frame["y"] = (frame["lab4"] + rng.logistic(size=300) > 0).astype(int)
    r = fit_evaluate(frame, target="y", task="classification", cv=3)
    linear = r.pipeline if r.model_name == "LogisticRegression" else None
    if linear is None:  # refit the linear pipeline the way fit_evaluate builds it
        from kernel_tools.models.pipelines import candidates

        linear = candidates("classification", list(frame.columns[:6]), [], class_weight=None,
                            random_state=0)[0].pipeline.fit(frame.drop(columns="y"), frame["y"])
    encoded = linear[:-1].transform(frame.drop(columns="y"))
    assert encoded.shape[1] == 6 + 1


def test_concordance_equals_lifelines_with_ties_and_censoring():
    from lifelines.utils import concordance_index

    rng = np.random.default_rng(0)
    for _ in range(100):
        n = int(rng.integers(2, 300))
        t = rng.integers(1, rng.integers(2, 40), n).astype(float)
        e = rng.random(n) < rng.random()
        risk = rng.integers(0, rng.integers(1, 20), n).astype(float)
        try:
            expected = concordance_index(t, -risk, e)
        except ZeroDivisionError:  # no comparable pair
            assert np.isnan(concordance(np.column_stack([t, e]), risk))
            continue
        assert concordance(np.column_stack([t, e]), risk) == pytest.approx(expected, abs=1e-12)


def test_a_tiny_classification_still_compares_both_candidates():
    """13 training rows: early stopping would hold out one row of each fit, fewer than the classes,
    and every tree setting failed, which failed the whole model step; under EARLY_STOP_ROWS the
    trees fit without it and both candidates are scored."""
    rng = np.random.default_rng(4)
    df = pd.DataFrame({"x": rng.normal(size=17).round(2), "group": rng.choice(["a", "b"], 17),
                       "y": [0, 1] * 8 + [0]})
    report = fit_evaluate(df.iloc[:13], target="y", task="classification", test=df.iloc[13:])
    assert set(report.candidates) == {"LogisticRegression", "HistGradientBoostingClassifier"}
    assert all(np.isfinite(c["cv_mean"]) for c in report.candidates.values())


def test_concordance_equals_lifelines_on_thousands_of_rows():
    # many levels of the merge count, odd sizes, tied times and risks, repeated rows (a bootstrap)
    from lifelines.utils import concordance_index

    rng = np.random.default_rng(1)
    for n in (1_023, 4_097):
        t = np.round(rng.exponential(50, n))
        e = rng.random(n) < 0.4
        risk = np.round(rng.normal(size=n) - t / 50, 1)
        rows = rng.integers(0, n, n)
        y = np.column_stack([t, e])[rows]
        assert concordance(y, risk[rows]) == pytest.approx(concordance_index(t[rows], -risk[rows], e[rows]), abs=1e-12)


def test_the_feature_frame_codes_known_levels_by_frequency_others_as_one_and_keeps_missing():
    """Numbers first as floats, then each text column's codes: the most frequent levels by
    position, every rarer or unseen value one code more, missing values missing."""
    train = pd.DataFrame({"n": pd.array([1, None, 3, 4, 5], dtype="Int64"), "flag": [True, False, True, True, False],
                          "t": ["b", "a", "b", None, "c"], "mixed": [1, "1", 2.5, None, 1]})
    features = FeatureFrame(["n", "flag"], ["t", "mixed"], max_categories=3).fit(train)
    # three levels of "t" are one too many: the rarest (a tie: by name) joins the others; "1" counts 1 and "1"
    assert features.categories_ == {"t": ["b", "a"], "mixed": ["1", "2.5"]}
    new = pd.DataFrame({"n": [7.5, None], "flag": [False, True], "t": ["a", "zz"], "mixed": [None, "q"]}, index=[10, 11])
    out = features.transform(new)
    assert list(out.columns) == ["n", "flag", "t", "mixed"] and list(out.index) == [10, 11]
    assert (out.dtypes == "float64").all()
    expected = np.array([[7.5, 0.0, 1.0, np.nan], [np.nan, 1.0, 2.0, 2.0]])
    np.testing.assert_array_equal(out.to_numpy(), expected)
    with pytest.raises(KeyError, match="missing"):
        features.transform(new.drop(columns="t"))
