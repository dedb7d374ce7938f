import json
import pickle
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from _purity import run_pure

import kernel_tools.transforms.imputation as imputation
from kernel_tools.transforms import Imputer, impute


def correlated(n=240, seed=0, shift=0.0, missing=0.2):
    """Three strongly correlated numbers, a label that follows them, a target; values removed at random."""
    rng = np.random.default_rng(seed)
    z = rng.normal(size=n)
    full = pd.DataFrame({
        "a": z + 0.1 * rng.normal(size=n) + shift,
        "b": 2 * z + 0.2 * rng.normal(size=n) + shift,
        "c": -z + 0.2 * rng.normal(size=n) + shift,
        "g": np.where(z > 0, "hi", "lo").astype(object),
        "y": rng.integers(0, 2, n).astype(float),
    })
    holes = pd.DataFrame(rng.random((n, 4)) < missing, columns=list("abcg"))
    dirty = full.copy()
    for col in "abcg":
        dirty.loc[holes[col], col] = np.nan
    return full, dirty, holes


def rmse(out, full, holes, cols="abc"):
    errs = np.concatenate([(out.loc[holes[c], c] - full.loc[holes[c], c]).to_numpy(float) for c in cols])
    return float(np.sqrt(np.mean(errs ** 2)))


@pytest.fixture(scope="module")
def hyper():
    full, dirty, holes = correlated()
    out, report = impute(dirty, method="hyperimpute", target="y")
    return full, dirty, holes, out, report


@pytest.mark.slow
def test_median_fills_train_statistics_and_keeps_target(hyper):
    _, dirty, _, _, _ = hyper
    dirty = dirty.copy()
    dirty.loc[:2, "y"] = np.nan
    out, report = run_pure(impute, dirty, method="median", target="y", indicators=True)
    rows = dirty["y"].notna()
    assert out.loc[rows, ["a", "b", "c", "g"]].notna().all().all()
    assert out.loc[~rows].drop(columns=[c for c in out if c.endswith("_missing")]).equals(dirty.loc[~rows])
    med = dirty.loc[rows, "a"].median()
    assert (out.loc[rows & dirty["a"].isna(), "a"] == med).all()
    assert (out.loc[rows & dirty["g"].isna(), "g"] == dirty.loc[rows, "g"].mode()[0]).all()
    assert out["y"].isna().sum() == 3
    assert report.columns_added == ["a_missing", "b_missing", "c_missing", "g_missing"]
    assert out["a_missing"].sum() == dirty["a"].isna().sum()
    assert report.details["rows_with_missing_target_left_as_is"] == 3
    assert report.details["fill_values"]["a"] == pytest.approx(med)


def test_no_test_statistic_leaks_into_simple_fill(hyper):
    _, train, _, _, _ = hyper
    _, test, _ = correlated(n=100, seed=5, shift=100.0, missing=0.3)
    for method in ("median", "mean"):
        _, report = impute(train, method=method, target="y")
        applied = report.apply(test)
        stat = train["a"].median() if method == "median" else train["a"].mean()
        assert (applied.loc[test["a"].isna(), "a"] == stat).all()
        assert report.transformer.fill_values_["a"] == pytest.approx(stat)


def test_hyperimpute_beats_mean_and_predicts_labels(hyper):
    full, dirty, holes, out, report = hyper
    mean_out, _ = impute(dirty, method="mean", target="y")
    assert report.details["method"] == "hyperimpute" and report.details["fallback"] is None
    assert report.details["implementation"] == "hyperimpute"
    assert rmse(out, full, holes) < 0.5 * rmse(mean_out, full, holes)
    assert (out.loc[holes["g"], "g"] == full.loc[holes["g"], "g"]).mean() > 0.85
    assert out[["a", "b", "c", "g"]].notna().all().all()
    assert report.details["settings"]["n_inner_iter"] == 5


def test_hyperimpute_replay_uses_only_train_models(hyper):
    full, dirty, holes, _, report = hyper
    _, test, test_holes = correlated(n=60, seed=7, missing=0.2)
    applied = report.apply(test)
    assert applied[["a", "b", "c", "g"]].notna().all().all()
    # row-wise: imputing one row does not depend on which other test rows come along
    one = report.apply(test.iloc[[3]])
    pd.testing.assert_frame_equal(one, applied.iloc[[3]], check_dtype=False)
    # a shifted test distribution does not move what the models learned
    shifted = test.copy()
    shifted[["a", "b", "c"]] += 100.0
    again = report.apply(pd.concat([test.iloc[[3]], shifted]))
    pd.testing.assert_frame_equal(again.iloc[[0]], applied.iloc[[3]], check_dtype=False)
    test_full, _, _ = correlated(n=60, seed=7)
    assert rmse(applied, test_full, test_holes) < 0.6  # the mean would give ~1.3


def test_fitted_imputer_pickles(hyper):
    _, dirty, _, _, report = hyper
    clone = pickle.loads(pickle.dumps(report.transformer))
    pd.testing.assert_frame_equal(clone.transform(dirty.head(30)), report.apply(dirty.head(30)))


@pytest.mark.slow
def test_auto_chooses_by_data(hyper):
    _, dirty, _, _, _ = hyper
    rng = np.random.default_rng(1)
    noise = pd.DataFrame(rng.normal(size=(200, 3)), columns=list("xyz"))
    noise.loc[rng.random(200) < 0.2, "x"] = np.nan
    _, report = impute(noise, method="auto")
    assert report.details["method"] == "median" and "correlate" in report.details["reason"]
    few = dirty.copy().fillna({"a": 0.0, "b": 0.0, "c": 0.0, "g": "lo"})
    few.loc[0, "a"] = np.nan
    _, report = impute(few, method="auto", target="y")
    assert report.details["method"] == "median" and "missing" in report.details["reason"]
    # a small table: scikit-learn's imputer is done before hyperimpute (and torch) would load
    _, report = impute(dirty, method="auto", target="y")
    assert report.details["method"] == "iterative" and report.details["implementation"] == "scikit-learn"
    assert "correlated" in report.details["reason"] and "240 rows × 4 columns" in report.details["reason"]
    assert "before hyperimpute's imports" in report.details["reason"]
    _, larger, _ = correlated(n=imputation.AUTO_LIGHT_MAX_CELLS // 4 + 1, seed=3)
    _, report = impute(larger, method="auto", target="y")
    assert report.details["method"] == "hyperimpute" and "correlated" in report.details["reason"]


class MeanPlugin:
    """What hyperimpute does silently under pandas 3: plain mean imputation."""

    def fit_transform(self, X):
        return X.fillna(X.mean())


def test_guard_against_silent_mean_imputation(monkeypatch):
    full, dirty, holes = correlated(seed=3)
    monkeypatch.setattr(imputation, "make_hyperimpute_plugin", lambda name, settings: MeanPlugin())
    out, report = impute(dirty, method="hyperimpute", target="y")
    assert report.details["method"] == "iterative" and report.details["implementation"] == "scikit-learn"
    assert "plain mean imputation" in report.details["fallback"]
    assert any("mean imputation" in w for w in report.warnings)
    mean_out, _ = impute(dirty, method="mean", target="y")
    assert rmse(out, full, holes) < 0.5 * rmse(mean_out, full, holes)
    assert report.apply(dirty.head(20)).drop(columns="y").notna().all().all()


def test_guard_falls_back_to_median_when_everything_is_mean(monkeypatch):
    _, dirty, _ = correlated(seed=4)
    monkeypatch.setattr(imputation, "make_hyperimpute_plugin", lambda name, settings: MeanPlugin())
    monkeypatch.setattr(imputation.Imputer, "_mean_like", lambda self, enc, filled: ["a"])
    out, report = impute(dirty, method="hyperimpute", target="y")
    assert report.details["method"] == "median" and "median is used" in report.details["fallback"]
    assert out[["a", "b", "c"]].notna().all().all()


def test_knn_beats_mean_and_replays():
    full, dirty, holes = correlated(seed=2)
    out, report = impute(dirty, method="knn", target="y")
    mean_out, _ = impute(dirty, method="mean", target="y")
    assert rmse(out, full, holes) < 0.7 * rmse(mean_out, full, holes)
    one = report.apply(dirty.iloc[[5]])
    assert one.drop(columns="y").notna().all().all()


@pytest.mark.slow
@pytest.mark.parametrize("method", ["ice", "missforest"])
def test_other_hyperimpute_plugins_beat_mean(method):
    full, dirty, holes = correlated(n=100, seed=6)
    out, report = impute(dirty, method=method, target="y")
    mean_out, _ = impute(dirty, method="mean", target="y")
    assert report.details["method"] == method and report.details["fallback"] is None
    assert rmse(out, full, holes) < 0.6 * rmse(mean_out, full, holes)
    applied = report.apply(dirty.head(10))
    assert applied.drop(columns="y").notna().all().all()


@pytest.mark.slow
def test_pickle_loads_in_a_fresh_process(tmp_path, hyper):
    path = tmp_path / "imputer.pkl"
    path.write_bytes(pickle.dumps(hyper[4].transformer))
    _, dirty, _, _, report = hyper
    expected = report.apply(dirty.head(10))["a"].round(6).tolist()
    code = (
        "import json, pickle, sys, pandas as pd;"
        f"imp = pickle.loads(open({str(path)!r}, 'rb').read());"
        "df = pd.read_json(sys.stdin.read(), orient='split');"
        "print(json.dumps(imp.transform(df)['a'].round(6).tolist()))"
    )
    done = subprocess.run([sys.executable, "-c", code], input=dirty.head(10).to_json(orient="split"),
                          capture_output=True, text=True, timeout=240, check=True)
    assert json.loads(done.stdout.strip().splitlines()[-1]) == pytest.approx(expected, abs=1e-5)


def test_bad_inputs_are_named(hyper):
    _, dirty, _, _, _ = hyper
    with pytest.raises(ValueError, match="method must be one of"):
        impute(dirty, method="magic")
    with pytest.raises(KeyError, match="'outcome'"):
        impute(dirty, target="outcome")
    with pytest.raises(ValueError, match="never imputed"):
        impute(dirty, target="y", columns=["a", "y"])
    with pytest.raises(ValueError, match="overwrite"):
        impute(dirty.assign(a_missing=0), method="median", indicators=True)
    with pytest.raises(TypeError, match="DataFrame"):
        impute(dirty.to_numpy())
    with pytest.raises(KeyError, match="lacks"):
        Imputer(method="median").fit(dirty).transform(dirty.drop(columns="a"))


def test_datetime_and_empty_columns_are_skipped():
    df = pd.DataFrame({
        "when": pd.to_datetime(["2020-01-01", None, "2020-01-03"]),
        "x": [1.0, np.nan, 3.0],
        "empty": [np.nan, np.nan, np.nan],
    })
    out, report = impute(df, method="median")
    assert out["x"].tolist() == [1.0, 2.0, 3.0]
    assert out["when"].isna().sum() == 1 and out["empty"].isna().all()
    assert report.details["skipped_columns"] == {"when": "datetime", "empty": "no observed value"}


@pytest.mark.parametrize("method", ["median", "knn"])
def test_boolean_and_category_columns_keep_their_dtype(method):
    rng = np.random.default_rng(0)
    z = rng.normal(size=120)
    df = pd.DataFrame({
        "a": z,
        "b": 2 * z,
        "flag": pd.array(z > 0, dtype="boolean"),
        "cat": pd.Categorical(np.where(z > 0.5, "x", np.where(z < -0.5, "y", "z"))),
    })
    df.loc[::7, "flag"] = pd.NA
    df.loc[::5, "cat"] = np.nan
    df.loc[::6, "a"] = np.nan
    out, report = run_pure(impute, df, method=method)
    assert out.isna().sum().sum() == 0
    assert out.dtypes.to_dict() == df.dtypes.to_dict()
    assert set(out["cat"]) <= {"x", "y", "z"}
    assert report.apply(df.head(10)).dtypes.to_dict() == df.dtypes.to_dict()


def test_model_method_without_training_gaps_falls_back_to_median():
    full, _, _ = correlated(n=50, seed=8)
    out, report = impute(full, method="hyperimpute", target="y")
    assert report.details["method"] == "median" and "no missing values" in report.details["reason"]
    pd.testing.assert_frame_equal(out, full)
    test = full.head(3).copy()
    test.loc[0, "a"] = np.nan
    assert report.apply(test).loc[0, "a"] == pytest.approx(full["a"].median())


def test_repeated_index_labels_are_kept_in_place():
    _, dirty, _ = correlated(n=60, seed=9)
    dirty.loc[:3, "y"] = np.nan
    doubled = dirty.set_axis(np.arange(len(dirty)) // 2)
    out, report = run_pure(impute, doubled, method="median", target="y")
    assert out.index.equals(doubled.index)
    expected, _ = impute(dirty, method="median", target="y")
    pd.testing.assert_frame_equal(out.reset_index(drop=True), expected.reset_index(drop=True))
    assert report.details["rows_with_missing_target_left_as_is"] == 4
    assert report.apply(doubled).index.equals(doubled.index)


# -- without hyperimpute (the core install): scikit-learn does the model-based imputation ------

@pytest.fixture
def no_hyperimpute(monkeypatch):
    """hyperimpute as if it were not installed (an import of it raises ImportError)."""
    monkeypatch.setitem(sys.modules, "hyperimpute", None)


def test_without_hyperimpute_auto_runs_scikit_learns_iterative_imputer(no_hyperimpute):
    full, dirty, holes = correlated(seed=10)
    out, report = run_pure(impute, dirty, method="auto", target="y")
    assert report.details["method"] == "iterative" and report.details["implementation"] == "scikit-learn"
    assert "hyperimpute is not installed" in report.details["reason"]
    assert report.details["fallback"] is None and not report.warnings
    mean_out, _ = impute(dirty, method="mean", target="y")
    assert rmse(out, full, holes) < 0.5 * rmse(mean_out, full, holes)
    assert out[["a", "b", "c", "g"]].notna().all().all()
    # fitted on train, replayed on new rows without refitting: one row alone gets the same values
    _, test, _ = correlated(n=40, seed=11)
    applied = report.apply(test)
    pd.testing.assert_frame_equal(report.apply(test.iloc[[2]]), applied.iloc[[2]], check_dtype=False)
    clone = pickle.loads(pickle.dumps(report.transformer))
    pd.testing.assert_frame_equal(clone.transform(test), applied)


@pytest.mark.parametrize("method", ["missforest", "ice"])
def test_without_hyperimpute_missforest_and_ice_run_in_scikit_learn_and_say_so(no_hyperimpute, method):
    full, dirty, holes = correlated(n=150, seed=12)
    out, report = impute(dirty, method=method, target="y")
    assert report.details["method"] == method and report.details["implementation"] == "scikit-learn"
    assert any("hyperimpute is not installed" in w and method in w for w in report.warnings)
    mean_out, _ = impute(dirty, method="mean", target="y")
    assert rmse(out, full, holes) < 0.6 * rmse(mean_out, full, holes)
    assert report.apply(dirty.head(10)).drop(columns="y").notna().all().all()


def test_without_hyperimpute_asking_for_it_is_a_one_line_error(no_hyperimpute):
    _, dirty, _ = correlated(n=60, seed=13)
    with pytest.raises(ImportError, match=r"needs the hyperimpute package.*\[hyperimpute\]"):
        impute(dirty, method="hyperimpute", target="y")


def test_guard_also_covers_the_scikit_learn_path(no_hyperimpute, monkeypatch):
    _, dirty, _ = correlated(seed=14)
    monkeypatch.setattr(imputation.Imputer, "_mean_like", lambda self, enc, filled: ["a"])
    out, report = impute(dirty, method="iterative", target="y")
    assert report.details["method"] == "median" and "median is used" in report.details["fallback"]
    assert out[["a", "b", "c"]].notna().all().all()


def test_a_fresh_kernel_without_hyperimpute_never_imports_torch():
    """The core install: no hyperimpute, so the imputer must not reach for it (or torch) at all."""
    code = (
        "import sys, json; sys.modules['hyperimpute'] = None\n"
        "import numpy as np, pandas as pd\n"
        "from kernel_tools import impute\n"
        "rng = np.random.default_rng(0); z = rng.normal(size=200)\n"
        "df = pd.DataFrame({'a': z, 'b': 2 * z + 0.1 * rng.normal(size=200), 'y': z > 0})\n"
        "df.loc[rng.random(200) < 0.3, 'a'] = np.nan\n"
        "out, report = impute(df, method='auto', target='y')\n"
        "print(json.dumps([report.details['method'], int(out['a'].isna().sum()),\n"
        "                  sorted(m for m in ('torch', 'tensorflow') if m in sys.modules)]))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == ["iterative", 0, []]
