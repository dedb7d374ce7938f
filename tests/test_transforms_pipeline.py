"""The fitted steps chain in one scikit-learn Pipeline, pickle, and learn nothing from test data."""

import pickle

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.pipeline import Pipeline

from kernel_tools.transforms import (
    CategoryNormalizer,
    ColumnDropper,
    DtypeFixer,
    Imputer,
    OutlierHandler,
    UnitConverter,
    convert_units,
    drop_columns,
    fix_dtypes,
    handle_outliers,
    impute,
    normalize_categories,
)


def raw(n, seed, shift=0.0):
    rng = np.random.default_rng(seed)
    weight = rng.normal(70, 10, n) + shift
    return pd.DataFrame({
        "id": np.arange(n),
        "age": [str(int(a)) if i % 7 else "?" for i, a in enumerate(rng.normal(50, 10, n) + shift)],
        "weight": [f"{w:.1f} kg" if i % 3 else f"{w * 2.20462:.1f} lb" for i, w in enumerate(weight)],
        "city": rng.choice(["Boston", "boston", "New York", "new york "], n),
        "x": rng.normal(0, 1, n) + shift,
    })


@pytest.fixture(scope="module")
def fitted():
    train = raw(200, 0)
    calls = [
        ("drop", drop_columns, {"columns": ["id"], "reason": "identifier"}),
        ("dtypes", fix_dtypes, {}),
        ("units", convert_units, {"column": "weight", "target_unit": "kg"}),
        ("categories", normalize_categories, {}),
        ("impute", impute, {"method": "median"}),
        ("outliers", handle_outliers, {"columns": ["x", "weight"], "action": "clip"}),
    ]
    steps, df = [], train
    for name, fn, params in calls:
        df, report = fn(df, **params)
        steps.append((name, report))
    return train, df, steps


def test_steps_form_a_pipeline_that_replays_the_training_output(fitted):
    train, out, steps = fitted
    pipe = Pipeline([(name, r.transformer) for name, r in steps]).set_output(transform="pandas")
    pd.testing.assert_frame_equal(pipe.transform(train), out)
    assert list(pipe.get_feature_names_out()) == ["age", "weight", "city", "x"]
    types = [type(r.transformer) for _, r in steps]
    assert types == [ColumnDropper, DtypeFixer, UnitConverter, CategoryNormalizer, Imputer, OutlierHandler]


def test_pipeline_pickles_and_step_by_step_apply_matches(fitted):
    _, _, steps = fitted
    pipe = Pipeline([(name, r.transformer) for name, r in steps])
    test = raw(50, 9)
    by_steps = test
    for _, r in steps:
        by_steps = r.apply(by_steps)
    restored = pickle.loads(pickle.dumps(pipe))
    pd.testing.assert_frame_equal(restored.transform(test), by_steps)
    assert by_steps.notna().all().all()


def test_no_test_statistic_leaks_into_any_step(fitted):
    train, out, steps = fitted
    learned = {name: pickle.dumps(r.transformer) for name, r in steps}
    test = raw(80, 3, shift=500.0)  # a very different test distribution
    pipe = Pipeline([(name, r.transformer) for name, r in steps])
    applied = pipe.transform(test)
    assert {name: pickle.dumps(r.transformer) for name, r in steps} == learned  # nothing refitted
    imputer = dict(steps)["impute"].transformer
    assert imputer.fill_values_["age"] == pytest.approx(out["age"].median(), abs=1.0)
    missing_age = test["age"] == "?"
    assert (applied.loc[missing_age, "age"] == imputer.fill_values_["age"]).all()
    hi = dict(steps)["outliers"].transformer.bounds_["x"][1]
    assert applied["x"].max() == pytest.approx(hi)  # clipped to the train bound
    assert hi < 10


def test_transformers_follow_the_sklearn_estimator_api():
    for est in [ColumnDropper(columns=["a"]), DtypeFixer(), CategoryNormalizer(), UnitConverter(column="w"),
                Imputer(method="median"), OutlierHandler(action="clip")]:
        copy = clone(est)
        assert copy.get_params() == est.get_params()
        assert est.set_output(transform="pandas") is est
        with pytest.raises(ValueError, match="pandas"):
            est.set_output(transform="polars")
