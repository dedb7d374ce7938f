"""fit_evaluate: right metric per task, grouped folds, holdout, warnings, a usable pipeline."""

from __future__ import annotations

import json
import pickle

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.impute import SimpleImputer
from sklearn.metrics import roc_auc_score

from kernel_tools.models import ModelReport, fit_evaluate
from kernel_tools.models.evaluate import _folds, _metrics


def classification_frame(n: int = 400, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    patient = np.repeat(np.arange(n // 4), 4)
    x1 = rng.normal(size=n)
    x2 = rng.normal(size=n)
    colour = rng.choice(["red", "green", "blue"], size=n)
    logit = 1.5 * x1 - x2 + (colour == "red") * 1.0
    y = (logit + rng.logistic(size=n) > 0).astype(int)
    frame = pd.DataFrame(
        {
            "patient": patient,
            "x1": x1,
            "x2": x2,
            "colour": colour,
            "mixed": np.where(rng.random(n) < 0.5, np.array("a", dtype=object), 1),
            "seen": pd.Timestamp("2021-01-01") + pd.to_timedelta(rng.integers(0, 365, n), "D"),
            "y": y,
        }
    )
    frame.loc[rng.random(n) < 0.1, "x2"] = np.nan
    frame.loc[rng.random(n) < 0.05, "colour"] = None
    return frame


@pytest.fixture(scope="module")
def clf_frame() -> pd.DataFrame:
    return classification_frame()


@pytest.fixture(scope="module")
def clf_report(clf_frame) -> ModelReport:
    return fit_evaluate(clf_frame, target="y", task="classification", groups="patient", cv=3)


@pytest.mark.slow
def test_classification_report(clf_frame, clf_report):
    r = clf_report
    assert r.task == "classification" and r.metric == "roc_auc"
    assert r.model_name in r.candidates
    assert set(r.candidates) == {"HistGradientBoostingClassifier", "LogisticRegression"}
    assert 0.75 < r.cv_score < 0.98
    # 100 patients: 3 folds repeated on 3 to 5 partitions (the last two while their means disagree)
    assert len(r.cv_scores) == 3 * r.cv_repeats and 3 <= r.cv_repeats <= 5
    assert r.cv_score == pytest.approx(np.mean(r.cv_scores))
    for name in ("cv_roc_auc", "cv_average_precision", "cv_balanced_accuracy", "cv_roc_auc_std"):
        assert 0 <= r.metrics[name] <= 1
    assert r.grouped and r.groups == "patient"
    assert r.holdout_score is None and r.n_test == 0 and r.n_train == len(clf_frame)
    # the id and the date never become features; the date is reported
    assert "patient" not in r.features and "seen" not in r.features and "y" not in r.features
    assert set(r.features) == {"x1", "x2", "colour", "mixed"}
    assert any("seen" in w and "date" in w for w in r.warnings)
    assert {i["feature"] for i in r.importance} == set(r.features)
    assert r.importance[0]["feature"] == "x1"  # the strongest signal
    assert not any("leakage" in w for w in r.warnings)


def test_identifier_columns_are_reported(clf_frame):
    frame = clf_frame.assign(row_id=np.arange(len(clf_frame)) + 1000)
    r = fit_evaluate(frame, target="y", task="classification", cv=2)
    assert any("'row_id' holds a distinct whole number" in w for w in r.warnings)
    assert not any("'x1'" in w for w in r.warnings)


def test_input_not_mutated():
    frame = classification_frame(120, seed=3)
    before = frame.copy()
    fit_evaluate(frame, target="y", task="classification", cv=2, test=frame.iloc[:50])
    pd.testing.assert_frame_equal(frame, before)


def test_pipeline_runs_on_raw_rows_and_pickles(clf_frame, clf_report):
    raw = clf_frame.drop(columns=["y"]).head(20)
    proba = clf_report.pipeline.predict_proba(raw)
    assert proba.shape == (20, 2)
    restored = pickle.loads(pickle.dumps(clf_report))
    np.testing.assert_allclose(restored.pipeline.predict_proba(raw), proba)
    with pytest.raises(KeyError, match="x1"):
        clf_report.pipeline.predict(raw.drop(columns=["x1"]))


def test_to_dict_is_json_and_html_renders(clf_report):
    d = clf_report.to_dict()
    json.dumps(d)
    assert "pipeline" not in d and d["metric"] == "roc_auc" and d["grouped"] is True
    html = clf_report._repr_html_()
    assert "roc_auc" in html and "data:image/png;base64," in html
    text = repr(clf_report)
    assert text.startswith(f"ModelReport(classification of 'y': {clf_report.model_name}, roc_auc cv")
    assert "3 grouped folds" in text and "seen" in text  # the date warning is in the text


@pytest.mark.parametrize("task", ["classification", "regression", "survival"])
def test_grouped_folds_never_share_a_group(task):
    rng = np.random.default_rng(1)
    groups = np.repeat(np.arange(40), rng.integers(1, 6, size=40))
    n = len(groups)
    if task == "classification":
        y = rng.integers(0, 2, n)
    elif task == "regression":
        y = rng.normal(size=n)
    else:
        y = np.column_stack([rng.exponential(10, n), rng.integers(0, 2, n)])
    folds, warnings = _folds(task, y, groups, 5, 0)
    assert len(folds) == 5 and warnings == []
    seen_in_validation = []
    for train, val in folds:
        assert set(groups[train]).isdisjoint(groups[val])
        assert len(set(train) | set(val)) == n
        seen_in_validation += list(val)
    assert sorted(seen_in_validation) == list(range(n))


def test_folds_reduced_when_few_groups():
    groups = np.repeat(np.arange(3), 10)
    y = np.tile([0, 1], 15)
    folds, warnings = _folds("classification", y, groups, 5, 0)
    assert len(folds) == 3
    assert "3 folds" in warnings[0]


def test_multiclass_auroc_is_macro_one_vs_rest():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, 300)
    proba = rng.dirichlet([1, 1, 1], 300)
    proba[np.arange(300), y] += 0.5
    proba /= proba.sum(axis=1, keepdims=True)
    got = _metrics("classification", y, proba, np.array([0, 1, 2]))
    expected = roc_auc_score(y, proba, multi_class="ovr", average="macro")
    assert got["roc_auc"] == pytest.approx(expected)


def test_multiclass_string_labels_end_to_end():
    rng = np.random.default_rng(2)
    x = rng.normal(size=(150, 3))
    label = np.array(["low", "mid", "high"])[np.digitize(x[:, 0], [-0.5, 0.5])]
    frame = pd.DataFrame(x, columns=["a", "b", "c"]).assign(grade=label)
    r = fit_evaluate(frame, target="grade", task="classification", cv=2)
    assert r.cv_score > 0.8
    assert set(r.pipeline.predict(frame.head(10))) <= {"low", "mid", "high"}


def test_regression_with_holdout():
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(rng.normal(size=(300, 4)), columns=list("abcd"))
    frame["kind"] = rng.choice(["u", "v"], 300)
    frame["y"] = 3 * frame["a"] - 2 * frame["b"] + (frame["kind"] == "u") + rng.normal(scale=0.3, size=300)
    train, test = frame.iloc[:240], frame.iloc[240:]
    r = fit_evaluate(train, target="y", task="regression", test=test, cv=4)
    assert r.metric == "r2" and set(r.candidates) == {"HistGradientBoostingRegressor", "Ridge"}
    assert r.model_name == "Ridge"  # the truth is linear
    assert r.cv_score > 0.9 and r.holdout_score > 0.9
    assert r.metrics["holdout_rmse"] < 0.6 and r.metrics["holdout_mae"] < 0.5
    assert r.n_test == 60 and r.n_train == 240
    assert not r.grouped


def test_entities_shared_by_train_and_test_are_reported(clf_frame):
    train, test = clf_frame.iloc[:300], clf_frame.iloc[298:]  # patient 74 on both sides
    r = fit_evaluate(train, target="y", task="classification", groups="patient", test=test, cv=2)
    assert any(w.startswith("1 'patient' entities are in both") for w in r.warnings)


@pytest.mark.slow
def test_survival_on_rossi_matches_documented_c_index():
    from lifelines.datasets import load_rossi

    rossi = load_rossi()
    r = fit_evaluate(rossi, target="arrest", task="survival", time="week", cv=5)
    assert r.metric == "c_index" and r.model_name == "CoxPH (penalized)"
    assert 0.60 <= r.cv_score <= 0.70
    assert "week" not in r.features and "arrest" not in r.features
    assert list(r.risk_groups) == ["low risk", "medium risk", "high risk"]
    assert sum(g["n"] for g in r.risk_groups.values()) == len(rossi)
    # the high-risk tertile ends with lower survival than the low-risk one
    assert r.risk_groups["high risk"]["survival"][-1] < r.risk_groups["low risk"]["survival"][-1]
    risk = r.pipeline.predict(rossi.drop(columns=["arrest", "week"]).head(5))
    assert risk.shape == (5,) and np.all(risk > 0)
    html = r._repr_html_()
    assert "Kaplan-Meier" not in html or "img" in html
    assert html.count("data:image/png;base64,") == 1
    json.dumps(r.to_dict())


def test_cox_estimator_matches_lifelines_penalised_cox():
    from lifelines import CoxPHFitter
    from lifelines.datasets import load_rossi
    from sklearn.preprocessing import StandardScaler

    from kernel_tools.models.survival import CoxPHEstimator, survival_target

    rossi = load_rossi()
    # scaled, as the pipeline feeds it (lifelines scales internally before penalising)
    X = StandardScaler().fit_transform(rossi.drop(columns=["week", "arrest"]).to_numpy(float))
    y = survival_target(rossi["week"], rossi["arrest"])
    cox = CoxPHEstimator(penalizer=0.1).fit(X, y)
    frame = pd.DataFrame(X, columns=[f"x{i}" for i in range(X.shape[1])]).assign(T=rossi["week"], E=rossi["arrest"])
    reference = CoxPHFitter(penalizer=0.1).fit(frame, "T", "E")
    # Breslow (here) vs Efron (lifelines) ties: the same coefficients to ~1e-3
    np.testing.assert_allclose(cox.coef_, reference.params_.to_numpy(), atol=2e-3)
    np.testing.assert_allclose(cox.predict(X), np.exp((X - X.mean(axis=0)) @ cox.coef_), rtol=1e-10)
    assert cox.score(X, y) > 0.6
    curves = cox.predict_survival(X[:5], [10, 30, 52])
    assert curves.shape == (5, 3) and np.all(np.diff(curves, axis=1) <= 0) and np.all((curves > 0) & (curves < 1))
    with pytest.raises(ValueError, match="duration, event"):
        CoxPHEstimator().fit(X, rossi["week"].to_numpy())


def test_cox_estimator_gives_a_constant_column_no_weight_instead_of_failing():
    from lifelines.datasets import load_rossi

    from kernel_tools.models.survival import CoxPHEstimator, survival_target

    rossi = load_rossi()
    X = rossi.drop(columns=["week", "arrest"]).to_numpy(float)
    flagged = np.column_stack([X, np.zeros(len(X))])  # e.g. a missing-value flag absent from a fold
    y = survival_target(rossi["week"], rossi["arrest"])
    cox = CoxPHEstimator(penalizer=0.1).fit(flagged, y)
    assert cox.coef_[-1] == 0 and np.all(np.isfinite(cox.coef_))
    plain = CoxPHEstimator(penalizer=0.1).fit(X, y)
    np.testing.assert_allclose(cox.coef_[:-1], plain.coef_, rtol=1e-8)
    np.testing.assert_allclose(cox.predict(np.column_stack([X, np.ones(len(X))])), plain.predict(X), rtol=1e-8)


@pytest.mark.slow
def test_survival_grouped_with_holdout():
    from lifelines.datasets import load_rossi

    rossi = load_rossi().sample(frac=1.0, random_state=1).reset_index(drop=True)
    rossi = rossi.assign(person=np.arange(432) // 2, fin=rossi["fin"].map({0: "no", 1: "yes"}))
    train, test = rossi.iloc[:340], rossi.iloc[340:]
    r = fit_evaluate(train, target="arrest", task="survival", time="week", groups="person",
                     test=test, cv=3)
    assert r.grouped and "person" not in r.features and "fin" in r.features
    assert 0.5 < r.holdout_score < 0.8 and r.n_test == 92  # better than chance on 92 rows
    assert sum(g["n"] for g in r.risk_groups.values()) == 92  # curves from the holdout
    assert r.metrics["holdout_c_index"] == r.holdout_score


@pytest.mark.slow
def test_survival_reads_r_style_event_codes_and_says_how():
    from lifelines.datasets import load_rossi

    rossi = load_rossi().head(240)
    base = fit_evaluate(rossi, target="arrest", task="survival", time="week", cv=3)
    # R's 1 = censored, 2 = event: the same model, the same score
    coded = fit_evaluate(rossi.assign(arrest=rossi["arrest"] + 1), target="arrest", task="survival",
                         time="week", cv=3)
    assert coded.cv_score == pytest.approx(base.cv_score)
    assert any("coded ['1', '2']: 2 read as the event" in w for w in coded.warnings)
    # 0 = censored, 1 and 2 two kinds of event: merged, and the report says so
    kinds = rossi["arrest"] * np.where(np.arange(len(rossi)) % 2 == 0, 1, 2)
    merged = fit_evaluate(rossi.assign(arrest=kinds), target="arrest", task="survival", time="week", cv=3)
    assert merged.cv_score == pytest.approx(base.cv_score)
    assert any("competing events merged" in w for w in merged.warnings)
    with pytest.raises(ValueError, match="must be the event indicator"):
        fit_evaluate(rossi.assign(arrest=rossi["week"]), target="arrest", task="survival", time="week", cv=3)


def test_survival_warns_on_non_positive_times_and_few_events():
    from lifelines.datasets import load_rossi

    rossi = load_rossi().head(120).copy()
    rossi.loc[:2, "week"] = [0, -3, 0]
    r = fit_evaluate(rossi, target="arrest", task="survival", time="week", cv=3)
    assert any("3 rows have zero or negative survival time" in w for w in r.warnings)
    assert any("few events per variable" in w for w in r.warnings)


@pytest.mark.slow
def test_leakage_warning_names_the_leaked_column(clf_frame):
    leaked = clf_frame.assign(discharge_code=clf_frame["y"] * 10 + 3)
    r = fit_evaluate(leaked, target="y", task="classification", groups="patient", cv=3)
    assert r.cv_score > 0.98
    leak = [w for w in r.warnings if w.startswith("suspect leakage")]
    assert leak and "'discharge_code'" in leak[0]
    assert r.importance[0]["feature"] == "discharge_code"


@pytest.mark.slow
def test_an_easy_problem_spread_over_many_features_is_not_called_leakage():
    # one latent size measured ten ways: every feature helps, none gives the outcome away
    rng = np.random.default_rng(3)
    z = rng.normal(size=1500)
    frame = pd.DataFrame({f"m{i}": z + rng.normal(scale=0.6, size=z.size) for i in range(10)})
    frame["y"] = (z > 0).astype(int)
    r = fit_evaluate(frame, target="y", task="classification", cv=3)
    assert r.cv_score > 0.98
    assert not [w for w in r.warnings if w.startswith("suspect leakage")]
    (note,) = [w for w in r.warnings if "spread over several features" in w]
    assert "of the permutation importance" in note


def test_few_events_and_tiny_data_warnings():
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(rng.normal(size=(60, 8)), columns=[f"v{i}" for i in range(8)])
    frame["y"] = 0
    frame.loc[:9, "y"] = 1
    r = fit_evaluate(frame, target="y", task="classification", cv=3)
    assert any(w.startswith("tiny data: 60 rows") for w in r.warnings)
    assert any(w.startswith("few events per variable: 10 minority-class rows for about 8 model parameters (fewer "
                            "than 10 each): expect overfitting") for w in r.warnings), r.warnings


@pytest.mark.slow
def test_preprocess_transformers_are_prepended_not_refit(clf_frame):
    features = ["x1", "x2"]
    imputer = SimpleImputer(strategy="constant", fill_value=-1.0).set_output(transform="pandas")
    imputer.fit(clf_frame[features])

    class Report:  # duck-typed StepReport
        transformer = None

    class Filled:
        def __init__(self, t):
            self.transformer = t

    def apply(frame):
        out = frame.copy()
        out[features] = imputer.transform(frame[features])
        return out

    from sklearn.compose import ColumnTransformer

    step = ColumnTransformer([("fill", imputer, features)], remainder="passthrough",
                             verbose_feature_names_out=False).set_output(transform="pandas")
    step.fit(clf_frame.drop(columns="y"))
    train = apply(clf_frame)
    r = fit_evaluate(train, target="y", task="classification", cv=3,
                     preprocess=[Report(), Filled(step)])
    assert r.pipeline.steps[0][1] is step
    names = [name for name, _ in r.pipeline.steps]
    assert names[1] == "features" and names[-1] == "model"
    assert not any("assembled pipeline" in w for w in r.warnings)
    raw = clf_frame.drop(columns="y").head(30)
    assert r.pipeline.predict_proba(raw).shape == (30, 2)
    # a step fitted with the target present cannot run on new data without it: say so
    step_with_target = clone(step).fit(clf_frame)
    r = fit_evaluate(train, target="y", task="classification", cv=2, preprocess=[step_with_target])
    assert any("needs a 'y' column in new data" in w for w in r.warnings)
    with pytest.raises(ValueError, match="not fitted"):
        fit_evaluate(train, target="y", task="classification", preprocess=[SimpleImputer()])
    with pytest.raises(TypeError, match=r"preprocess\[0\]"):
        fit_evaluate(train, target="y", task="classification", preprocess=[42])


def test_cv_on_a_stated_sample(clf_frame):
    r = fit_evaluate(clf_frame, target="y", task="classification", groups="patient", cv=3,
                     max_cv_rows=200)
    assert 200 <= r.metrics["cv_sample_size"] < len(clf_frame)
    assert r.n_train == len(clf_frame)
    assert any("random sample" in w for w in r.warnings)


def test_rows_without_target_are_left_out(clf_frame):
    frame = clf_frame.copy()
    frame.loc[:9, "y"] = np.nan
    r = fit_evaluate(frame, target="y", task="classification", cv=2)
    assert r.n_train == len(frame) - 10
    assert any("10 rows of df without y" in w for w in r.warnings)


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"task": "clustering"}, ValueError, "task"),
        ({"target": "nope"}, KeyError, "nope"),
        ({"task": "survival"}, ValueError, "time="),
        ({"time": "x1"}, ValueError, "survival"),
        ({"groups": "nope"}, KeyError, "nope"),
        ({"cv": 1}, ValueError, "cv"),
        ({"test": [1, 2]}, TypeError, "test"),
        ({"test": "drop_y"}, KeyError, "'y'"),
        ({"task": "regression", "target": "colour"}, TypeError, "numeric"),
        ({"task": "survival", "time": "x1", "target": "x2"}, ValueError, "event indicator"),
    ],
)
def test_bad_arguments(clf_frame, kwargs, error, match):
    args = {"df": clf_frame, "target": "y", "task": "classification", **kwargs}
    if args.get("test") == "drop_y":
        args["test"] = clf_frame.drop(columns="y")
    with pytest.raises(error, match=match):
        fit_evaluate(**args)


def test_one_class_and_missing_groups_are_clear_errors(clf_frame):
    with pytest.raises(ValueError, match="one class"):
        fit_evaluate(clf_frame.assign(y=1), target="y", task="classification")
    frame = clf_frame.copy()
    frame.loc[0, "patient"] = np.nan
    with pytest.raises(ValueError, match="groups column 'patient' has missing values"):
        fit_evaluate(frame, target="y", task="classification", groups="patient")
    with pytest.raises(TypeError, match="DataFrame"):
        fit_evaluate(clf_frame.to_numpy(), target="y", task="classification")


# --- flag columns from cleaning steps are bookkeeping, not features ----------------------------


def _numeric_frame(n: int = 200, seed: int = 1) -> pd.DataFrame:
    frame = classification_frame(n, seed).drop(columns=["mixed", "seen"])
    return frame.assign(x3=np.random.default_rng(seed).normal(size=n))


@pytest.mark.slow
def test_label_issue_flag_then_split_then_fit_evaluate_on_test():
    from kernel_tools.transforms import handle_label_issues, split

    flagged, _ = handle_label_issues(_numeric_frame(), "y", action="flag", groups="patient")
    assert "label_issue" in flagged.columns
    train, test, _ = split(flagged, target="y", groups="patient", test_size=0.25, random_state=0)
    before = train.copy()
    r = fit_evaluate(train, "y", "classification", groups="patient", test=test, cv=3)
    assert "label_issue" not in r.features
    assert set(r.features) == {"x1", "x2", "x3", "colour"}
    assert any("the flag column 'label_issue' a cleaning step added is not a feature" in w for w in r.warnings)
    assert r.n_test == len(test) and 0.6 < r.holdout_score <= 1.0
    pd.testing.assert_frame_equal(train, before)
    # the recommended order (flag on train only): the test frame has no flag column at all
    test_without = test.drop(columns=["label_issue"])
    r2 = fit_evaluate(train, "y", "classification", groups="patient", test=test_without, cv=3)
    assert r2.holdout_score == pytest.approx(r.holdout_score)
    assert r2.pipeline.predict(test_without.drop(columns=["y"])).shape == (len(test),)


@pytest.mark.parametrize("method", ["iqr", "isolation_forest"])
@pytest.mark.slow
def test_outlier_flags_on_train_only_are_not_features(method):
    from kernel_tools.transforms import handle_outliers, split

    frame = _numeric_frame()
    train, test, _ = split(frame, target="y", groups="patient", test_size=0.25, random_state=0)
    flagged, report = handle_outliers(train, columns=["x1", "x3"], action="flag", method=method, target="y")
    added = report.columns_added
    assert added == (["outlier"] if method == "isolation_forest" else ["x1_outlier", "x3_outlier"])
    r = fit_evaluate(flagged, "y", "classification", groups="patient", test=test, cv=3)
    assert not set(added) & set(r.features)
    assert set(r.features) == {"x1", "x2", "x3", "colour"}
    assert any(all(a in w for a in added) for w in r.warnings)
    assert r.n_test == len(test)


@pytest.mark.slow
def test_column_merely_named_like_a_flag_stays_a_feature():
    frame = _numeric_frame()
    rng = np.random.default_rng(3)
    # no "score" column, so "score_outlier" is not an outlier flag; a target is never dropped
    frame = frame.assign(score_outlier=rng.normal(size=len(frame)))
    r = fit_evaluate(frame, "y", "classification", groups="patient", cv=3)
    assert "score_outlier" in r.features
    relabelled = frame.rename(columns={"y": "label_issue"})
    r2 = fit_evaluate(relabelled, "label_issue", "classification", groups="patient", cv=3)
    assert r2.target == "label_issue" and "label_issue" not in r2.features
