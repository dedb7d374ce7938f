"""fit_evaluate's report: holdout intervals, calibration, the model card, a dump-able pipeline."""

from __future__ import annotations

import json
import math

import joblib
import numpy as np
import pandas as pd
import pytest
from lifelines.datasets import load_rossi
from sklearn.metrics import brier_score_loss

from kernel_tools.models import fit_evaluate
from kernel_tools.models.uncertainty import bootstrap_interval, holdout_size, perfect_by_chance


def binary_frame(n: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 3))
    y = (1.2 * x[:, 0] - x[:, 1] + rng.logistic(size=n) > 0).astype(int)
    return pd.DataFrame(x, columns=["a", "b", "c"]).assign(y=y)


@pytest.fixture(scope="module")
def clf():
    train, test = binary_frame(600), binary_frame(400, seed=1)
    return fit_evaluate(train, target="y", task="classification", test=test, cv=3), test


@pytest.fixture(scope="module")
def surv():
    rossi = load_rossi().sample(frac=1.0, random_state=0).reset_index(drop=True)
    train, test = rossi.iloc[:300], rossi.iloc[300:]
    return fit_evaluate(train, target="arrest", task="survival", time="week", test=test, cv=3), test


@pytest.fixture(scope="module")
def clf_without_holdout():
    """Cross-validated only (no ``test``): read by the spread and the out-of-fold calibration tests."""
    return fit_evaluate(binary_frame(300), target="y", task="classification", cv=3)


def test_holdout_interval_brackets_the_score(clf):
    r, test = clf
    lo, hi = r.holdout_ci
    assert lo < r.holdout_score < hi and 0 < hi - lo < 0.15
    assert r.metrics["holdout_roc_auc_ci_low"] == lo and r.metrics["holdout_roc_auc_ci_high"] == hi
    assert r.cv_sd == pytest.approx(np.std(r.cv_scores))
    assert "[" in repr(r) and "95% CI" in r._repr_html_()


def test_no_holdout_means_no_interval_but_a_cv_spread(clf_without_holdout):
    r = clf_without_holdout
    assert r.holdout_ci is None and r.cv_sd is not None and r.cv_sd > 0


def test_a_small_holdout_warns_that_its_interval_is_wide():
    r = fit_evaluate(binary_frame(400), target="y", task="classification", test=binary_frame(40, seed=2), cv=3)
    lo, hi = r.holdout_ci
    assert hi - lo > 0.1
    (warning,) = [w for w in r.warnings if "95% interval" in w]
    assert f"[{lo:.3f}, {hi:.3f}]" in warning and "holdout of 40 rows" in warning
    big = fit_evaluate(binary_frame(400), target="y", task="classification", test=binary_frame(3000, seed=2), cv=3)
    assert not [w for w in big.warnings if "95% interval" in w]


def test_repeated_rows_are_resampled_by_entity():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 100)
    p = np.clip(y * 0.3 + rng.random(100) * 0.7, 0, 1)
    copies = 5  # each entity's row recorded five times
    y5, p5, g5 = np.repeat(y, copies), np.repeat(p, copies), np.repeat(np.arange(100), copies)
    from sklearn.metrics import roc_auc_score

    def score(rows):
        return roc_auc_score(y5[rows], p5[rows]) if len(set(y5[rows])) == 2 else np.nan

    by_entity, _ = bootstrap_interval(score, len(y5), g5)
    by_row, _ = bootstrap_interval(score, len(y5))
    once, _ = bootstrap_interval(lambda r: roc_auc_score(y[r], p[r]), 100)
    width = lambda ci: ci[1] - ci[0]  # noqa: E731
    # copies are not new evidence: by entity the interval is as wide as on one row per entity
    assert width(by_entity) == pytest.approx(width(once), rel=0.35)
    assert width(by_row) < 0.7 * width(by_entity)


def test_the_holdout_counts_its_entities_and_events(clf, surv):
    """What the verdict's power test rests on: entities (rows without groups), events (the rarest
    class, or the survival events), each entity counted once, and how often a model at chance
    would rank the holdout perfectly."""
    r, test = clf
    events = test["y"].value_counts().min()
    assert r.metrics["holdout_entities"] == len(test) and r.metrics["holdout_events"] == events
    assert r.metrics["holdout_perfect_by_chance"] == pytest.approx(1 / math.comb(len(test), events))
    s, held = surv
    assert s.metrics["holdout_events"] == held["arrest"].sum() and s.metrics["holdout_entities"] == len(held)
    assert s.metrics["holdout_perfect_by_chance"] < 1e-50  # 132 rows, 39 events: far from a handful
    grouped = holdout_size("classification", np.array([1, 1, 0, 0, 0, 1]), np.array([7, 7, 8, 8, 9, 9]))
    assert grouped == {"holdout_entities": 3, "holdout_events": 2, "holdout_perfect_by_chance": 1 / 3}
    assert holdout_size("regression", np.arange(4.0))["holdout_perfect_by_chance"] == pytest.approx(1 / 24)
    # several classes, one per row: all of them must be ranked apart, not only the rarest from the rest
    six = np.repeat(np.arange(6), [2, 5, 6, 8, 9, 13])
    odds = holdout_size("classification", six)["holdout_perfect_by_chance"]
    assert odds == pytest.approx(math.prod(math.factorial(k) for k in (2, 5, 6, 8, 9, 13)) / math.factorial(43))
    assert odds < 1e-20 < 1 / math.comb(43, 2)
    # every entity holds both classes: no count says how well it could be ranked
    assert "holdout_perfect_by_chance" not in holdout_size("classification", np.array([0, 1, 0, 1]),
                                                           np.array([1, 1, 2, 2]))


def test_a_survival_holdout_is_ranked_perfectly_one_time_in_its_risk_sets():
    """No censoring: 1 in n!. Censored entities add pairs: an event at 1 before a censoring at 2 and
    an event at 3 must outrank both (1 in 3); the event at 3 has no one later (1 in 1)."""
    none_censored = np.column_stack([[1.0, 2, 3, 4], [1, 1, 1, 1]])
    assert holdout_size("survival", none_censored)["holdout_perfect_by_chance"] == pytest.approx(1 / 24)
    censored = np.column_stack([[1.0, 2, 3], [1, 0, 1]])
    assert holdout_size("survival", censored)["holdout_perfect_by_chance"] == pytest.approx(1 / 3)
    assert perfect_by_chance(np.array([1.0, 2, 3]), np.array([True, False, True])) == pytest.approx(1 / 3)
    # intervals (start, stop, event) of entities: each entity once, at its last stop
    intervals = np.array([[0, 1, 0], [1, 2, 1], [0, 3, 0]], dtype=float)
    assert holdout_size("survival", intervals, np.array(["a", "a", "b"]))["holdout_perfect_by_chance"] == 0.5


def test_grouped_holdout_interval_uses_the_groups():
    from kernel_tools.models.budget import Clock
    from kernel_tools.models.evaluate import _holdout_interval

    rng = np.random.default_rng(3)
    y = np.repeat(rng.integers(0, 2, 60), 4)  # 60 entities, 4 identical rows each
    p = np.repeat(rng.random(60), 4) * 0.6 + y * 0.4
    pred = np.column_stack([1 - p, p])
    groups = np.repeat(np.arange(60), 4)
    rows = _holdout_interval("classification", y, pred, np.array([0, 1]), None, Clock(None), 0)
    entities = _holdout_interval("classification", y, pred, np.array([0, 1]), groups, Clock(None), 0)
    assert entities[1] - entities[0] > rows[1] - rows[0]


def test_classification_calibration_on_the_holdout(clf):
    r, test = clf
    c = r.calibration
    assert c["kind"] == "classification" and c["on"] == "holdout"
    proba = r.pipeline.predict_proba(test.drop(columns="y"))[:, 1]
    assert c["brier"] == pytest.approx(brier_score_loss(test["y"], proba))
    curve = c["curve"]
    assert len(curve["predicted"]) == len(curve["observed"]) == len(curve["n"]) >= 5
    assert sum(curve["n"]) == len(test)
    assert np.all(np.diff(curve["predicted"]) > 0)  # bins ordered by prediction
    # a well-specified logistic model: observed frequencies follow the predictions
    assert np.max(np.abs(np.subtract(curve["predicted"], curve["observed"]))) < 0.2


def test_multiclass_calibration_uses_the_top_class():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(600, 2))
    label = np.array(["low", "mid", "high"])[np.digitize(x[:, 0] + rng.normal(scale=0.5, size=600), [-0.5, 0.5])]
    frame = pd.DataFrame(x, columns=["a", "b"]).assign(grade=label)
    r = fit_evaluate(frame.iloc[:400], target="grade", task="classification", test=frame.iloc[400:], cv=3)
    assert r.calibration["of"] == "top-class probability" and 0 < r.calibration["brier"] < 1


def test_survival_calibration_and_integrated_brier(surv):
    r, test = surv
    c = r.calibration
    assert c["kind"] == "survival" and c["on"] == "holdout"
    assert c["time"] == pytest.approx(np.median(test["week"]))
    assert 0 < c["integrated_brier"] < 0.25  # 0.25 is what a coin-flip survival of 0.5 scores
    assert sum(c["curve"]["n"]) == len(test) and len(c["curve"]["predicted"]) == 3
    assert all(0 <= v <= 1 for v in c["curve"]["predicted"] + c["curve"]["observed"])
    html = r._repr_html_()
    assert "integrated Brier score" in html and html.count("data:image/png;base64,") == 1


def test_out_of_fold_calibration_without_a_holdout(clf_without_holdout):
    r = fit_evaluate(load_rossi(), target="arrest", task="survival", time="week", cv=3)
    assert r.calibration["on"] == "out-of-fold" and sum(r.calibration["curve"]["n"]) == 432
    c = clf_without_holdout.calibration
    assert c["on"] == "out-of-fold" and sum(c["curve"]["n"]) == 300


def test_regression_has_no_calibration_curve():
    frame = binary_frame(300).assign(y=lambda f: f["a"] * 2 + f["b"])
    assert fit_evaluate(frame, target="y", task="regression", cv=3).calibration is None


def test_model_card_and_to_dict(clf):
    r, _ = clf
    d = r.to_dict()
    json.dumps(d)
    for key in ("holdout_ci", "cv_sd", "calibration", "degraded", "candidates_tried", "selection", "model_card"):
        assert key in d
    card = r.model_card()
    assert card == d["model_card"]
    assert card["metric"]["holdout_ci"] == r.holdout_ci and card["metric"]["name"] == "roc_auc"
    assert card["calibration"]["brier"] == r.calibration["brier"]
    assert card["features"] == r.features and card["top_features"][0] == r.importance[0]["feature"]
    assert card["intended_use"].startswith("predicts the probability of each class of 'y'")
    assert card["candidates_tried"] == r.candidates_tried >= 2 and card["selection"] == r.selection


@pytest.mark.parametrize("which", ["clf", "surv"])
def test_the_pipeline_survives_joblib(which, request, tmp_path):
    r, test = request.getfixturevalue(which)
    path = tmp_path / "model.joblib"
    joblib.dump(r.pipeline, path)
    restored = joblib.load(path)
    raw = test.drop(columns=["y"] if which == "clf" else ["arrest", "week"])
    np.testing.assert_allclose(restored.predict(raw), r.pipeline.predict(raw))


@pytest.mark.parametrize("n, levels", [(50, None), (635, None), (400, 7)])
def test_the_fast_auroc_is_scikit_learns(n, levels):
    """Ties (a few distinct scores) included: they count one half, as in roc_auc_score."""
    from sklearn.metrics import roc_auc_score

    from kernel_tools.models.evaluate import fast_auroc

    rng = np.random.default_rng(n)
    positive = rng.random(n) < 0.3
    score = positive + rng.normal(size=n)
    if levels:
        score = np.round(score * levels / 4) / levels
    assert fast_auroc(positive, score) == pytest.approx(roc_auc_score(positive, score), abs=1e-12)
    with pytest.raises(ValueError, match="both classes"):
        fast_auroc(np.zeros(5, bool), score[:5])


def test_a_cluster_bootstrap_draws_whole_entities_in_the_order_drawn():
    """Each resample is the drawn entities' rows, entity after entity (the same rows a loop that
    concatenates each drawn entity's rows gives), so the interval is the same as before it was vectorised."""
    rng = np.random.default_rng(3)
    groups = rng.choice(np.array(["p1", "p2", "p3", "p4", "p5", "p6", "p7"]), size=40)
    seen: list[np.ndarray] = []
    bootstrap_interval(lambda rows: seen.append(rows) or 0.5, len(groups), groups, rounds=25, random_state=1)
    codes, uniques = pd.factorize(pd.Series(groups))
    draws = np.random.default_rng(1)
    for rows in seen:
        drawn = draws.integers(0, len(uniques), len(uniques))
        expected = np.concatenate([np.flatnonzero(codes == g) for g in drawn])
        assert np.array_equal(rows, expected)


def test_perfect_by_chance_counts_each_events_risk_set_with_ties_and_censoring():
    rng = np.random.default_rng(3)
    for _ in range(50):
        n = int(rng.integers(1, 200))
        time = rng.integers(1, 15, n).astype(float)
        event = rng.random(n) < rng.random()
        at_risk = [np.sum(time > t) + np.sum((time == t) & ~event) + 1 for t in time[event]]
        expected = float(np.exp(-np.sum(np.log(at_risk)))) if at_risk else 1.0
        assert perfect_by_chance(time, event) == pytest.approx(expected, rel=1e-9)


def test_kaplan_meier_is_lifelines_curve_and_prediction():
    # the risk-group curves and the survival calibration's observed side read this instead of
    # lifelines' KaplanMeierFitter (its import alone cost a survival run 0.2-0.7 CPU s)
    from lifelines import KaplanMeierFitter

    from kernel_tools.models.survival import kaplan_meier, survival_at

    rng = np.random.default_rng(3)
    cases = [(np.array([3.0, 1, 1, 2, 5, 5, 0.5, 7]), np.array([1, 0, 1, 1, 0, 1, 0, 0])),
             (np.array([0.0, 0, 2, 3]), np.array([1, 0, 1, 0])),  # events at time 0
             (np.array([4.0, 2, 9]), np.array([0, 0, 0])),  # nobody died
             (np.array([1.0, 2, 2]), np.array([1, 1, 1]))]  # everybody died
    cases += [(np.round(rng.exponential(10, n), 0), (rng.random(n) < 0.6).astype(float)) for n in (50, 400)]
    for time, event in cases:
        fitted = KaplanMeierFitter().fit(time, event)
        timeline, survival = kaplan_meier(time, event)
        np.testing.assert_array_equal(timeline, fitted.survival_function_.index.to_numpy())
        np.testing.assert_allclose(survival, fitted.survival_function_.iloc[:, 0].to_numpy(), rtol=1e-12, atol=1e-14)
        for at in (0.0, 0.2, 1.0, 2.5, float(np.median(time)), 100.0):
            assert survival_at(timeline, survival, at) == pytest.approx(float(fitted.predict(at)), abs=1e-12)
