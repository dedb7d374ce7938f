"""Property-based tests (hypothesis): ``kernel_tools.diagnose`` and every transform over random,
messy frames either return their documented result or raise a documented exception (ValueError,
TypeError or KeyError with a message) — and never mutate their input.

Frames mix ints, floats with NaN/inf, booleans, messy categories, numbers written as text,
dates with NaT, all-missing and constant columns, object columns of mixed types, non-string
and duplicate column names, 0 to 40 rows. Example counts are bounded so the file runs in
about a minute on 2 cores (`EXAMPLES` below; the counts are reported in docs/reliability.md).
"""

from __future__ import annotations

import json
import warnings
from datetime import datetime

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kernel_tools as kt
from kernel_tools.transforms import StepReport

pytestmark = pytest.mark.timeout(180)

DOCUMENTED = (ValueError, TypeError, KeyError)
EXAMPLES = {"drop_columns": 40, "drop_rows": 40, "deduplicate": 40, "fix_dtypes": 40, "normalize_categories": 40,
            "convert_units": 40, "impute": 30, "handle_outliers": 30, "handle_label_issues": 15,
            "split": 40, "aggregate_per_entity": 40, "to_intervals": 40, "join_frames": 30, "diagnose": 40}

NAMES = st.one_of(st.sampled_from(["a", "b", "y", "id", "t", "x y", "Ä", "ignore previous instructions"]),
                  st.text(min_size=1, max_size=6), st.integers(0, 3))
CATEGORIES = st.sampled_from(["a", "A", " a", "b", "B ", "bb", None, "n/a", "?", "", "ignore all rules"])
NUMBER_TEXT = st.one_of(st.integers(-50, 50).map(str), st.floats(-1e3, 1e3).map(lambda v: f"{v:.2f}"),
                        st.sampled_from(["NA", "-", "1,5", "12kg", None, "  7 "]))
MIXED = st.one_of(st.integers(-5, 5), st.floats(allow_nan=True), st.text(max_size=4), st.none(), st.booleans())
DATES = st.one_of(st.datetimes(datetime(1990, 1, 1), datetime(2030, 1, 1)), st.none())


def values(kind: str, n: int):
    """A strategy for ``n`` values of one column kind, as a pandas-ready array/list."""
    if kind == "int":
        return st.lists(st.integers(-1000, 1000), min_size=n, max_size=n).map(lambda v: np.array(v, dtype="int64"))
    if kind == "float":
        return st.lists(st.floats(allow_nan=True, allow_infinity=True, width=64), min_size=n, max_size=n).map(
            lambda v: np.array(v, dtype="float64"))
    if kind == "small_float":
        return st.lists(st.one_of(st.floats(-100, 100), st.just(np.nan)), min_size=n, max_size=n).map(
            lambda v: np.array(v, dtype="float64"))
    if kind == "bool":
        return st.lists(st.booleans(), min_size=n, max_size=n)
    if kind == "category":
        return st.lists(CATEGORIES, min_size=n, max_size=n).map(lambda v: pd.Series(v, dtype=object))
    if kind == "number_text":
        return st.lists(NUMBER_TEXT, min_size=n, max_size=n).map(lambda v: pd.Series(v, dtype=object))
    if kind == "date":
        return st.lists(DATES, min_size=n, max_size=n).map(lambda v: pd.to_datetime(pd.Series(v, dtype=object)))
    if kind == "mixed":
        return st.lists(MIXED, min_size=n, max_size=n).map(lambda v: pd.Series(v, dtype=object))
    if kind == "missing":
        return st.just(np.full(n, np.nan))
    if kind == "constant":
        return st.just(np.ones(n, dtype="int64"))
    raise AssertionError(kind)


KINDS = ["int", "float", "small_float", "bool", "category", "number_text", "date", "mixed", "missing", "constant"]


TEXT_NAMES = st.one_of(st.sampled_from(["a", "b", "x y", "Ä", "ignore previous instructions"]),
                      st.text(min_size=1, max_size=6))


@st.composite
def frames(draw, max_rows: int = 40, max_cols: int = 5, min_rows: int = 0, names=NAMES) -> pd.DataFrame:
    n = draw(st.integers(min_rows, max_rows))
    k = draw(st.integers(1, max_cols))
    unique = names is not NAMES or draw(st.integers(0, 9)) > 0  # one frame in ten repeats a name
    names = draw(st.lists(names, min_size=k, max_size=k, unique=unique))
    columns = [pd.Series(draw(values(draw(st.sampled_from(KINDS)), n))).reset_index(drop=True) for _ in range(k)]
    df = pd.concat(columns, axis=1) if k else pd.DataFrame(index=range(n))
    df.columns = names
    return df


def some_name(data, df: pd.DataFrame, missing: float = 0.1):
    """A column of ``df`` (or, now and then, a name it does not have)."""
    names = list(df.columns) + ["no_such_column"]
    return data.draw(st.sampled_from(names) if names else st.just("no_such_column"))


def check(fn, *frames_in: pd.DataFrame, **kwargs):
    """Call ``fn``; only documented exceptions with a message; no input mutated."""
    before = [f.copy(deep=True) for f in frames_in]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            result = fn(*frames_in, **kwargs)
        except DOCUMENTED as error:
            assert str(error).strip() not in ("", "''"), f"{type(error).__name__} without a message"
            result = error
    for frame, copy in zip(frames_in, before):
        pd.testing.assert_frame_equal(frame, copy, check_exact=True)
    if not isinstance(result, Exception):
        *outputs, report = result
        assert isinstance(report, StepReport)
        assert all(isinstance(o, pd.DataFrame) for o in outputs)
        json.dumps(report.to_dict())
    return result


def property_settings(name: str):
    return settings(max_examples=EXAMPLES[name], deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.filter_too_much])


@property_settings("drop_columns")
@given(frames(), st.data())
@pytest.mark.slow
def test_drop_columns(df, data):
    columns = data.draw(st.lists(st.sampled_from(list(df.columns) + ["zz"]), max_size=3))
    check(kt.drop_columns, df, columns=columns, reason=data.draw(st.one_of(st.none(), st.text(max_size=5))))


@property_settings("drop_rows")
@given(frames(), st.data())
def test_drop_rows(df, data):
    columns = list(df.columns) + ["zz"]
    where = data.draw(st.lists(st.dictionaries(st.sampled_from(columns), MIXED, max_size=2), max_size=2))
    index = data.draw(st.one_of(st.none(), st.lists(st.one_of(st.sampled_from(list(df.index) or [0]),
                                                              st.integers(-3, 50)), max_size=3)))
    check(kt.drop_rows, df, where=where, index=index)


@property_settings("deduplicate")
@given(frames(), st.data())
def test_deduplicate(df, data):
    subset = data.draw(st.one_of(st.none(), st.lists(st.sampled_from(list(df.columns) + ["zz"]), max_size=2)))
    check(kt.deduplicate, df, subset=subset, keep=data.draw(st.sampled_from(["first", "last", False, "bogus"])),
          near=data.draw(st.booleans()))


@property_settings("fix_dtypes")
@given(frames())
@pytest.mark.slow
def test_fix_dtypes(df):
    check(kt.fix_dtypes, df)


@property_settings("normalize_categories")
@given(frames())
def test_normalize_categories(df):
    check(kt.normalize_categories, df)


@property_settings("convert_units")
@given(frames(), st.data())
def test_convert_units(df, data):
    check(kt.convert_units, df, column=some_name(data, df),
          target_unit=data.draw(st.sampled_from([None, "kg", "cm", "mg/dl", "celsius", "parsec"])))


@property_settings("impute")
@given(frames(), st.data())
def test_impute(df, data):
    target = data.draw(st.one_of(st.none(), st.sampled_from(list(df.columns) + ["zz"])))
    check(kt.impute, df, method=data.draw(st.sampled_from(["mean", "median"])), target=target,
          indicators=data.draw(st.booleans()))


@property_settings("handle_outliers")
@given(frames(), st.data())
def test_handle_outliers(df, data):
    columns = data.draw(st.one_of(st.none(), st.lists(st.sampled_from(list(df.columns) + ["zz"]), max_size=2)))
    check(kt.handle_outliers, df, columns=columns, action=data.draw(st.sampled_from(["flag", "clip", "remove", "explode"])))


@property_settings("handle_label_issues")
@given(frames(min_rows=12, max_rows=40, max_cols=3, names=TEXT_NAMES), st.data())
@pytest.mark.slow
def test_handle_label_issues(df, data):
    df = df.drop(columns=[c for c in ("label", "label_issue") if c in df.columns])
    labels = data.draw(st.lists(st.sampled_from(["yes", "no", None]), min_size=len(df), max_size=len(df)))
    labels[:4] = ["yes", "no", "yes", "no"][: len(labels)]  # two classes, and maybe a few gaps
    df = df.assign(label=labels)  # a class label next to the random features
    target = data.draw(st.sampled_from(["label", "label", "label", *df.columns]))
    check(kt.handle_label_issues, df, target=target, action=data.draw(st.sampled_from(["flag", "remove"])))


@property_settings("split")
@given(frames(), st.data())
def test_split(df, data):
    groups = data.draw(st.one_of(st.none(), st.sampled_from(list(df.columns) + ["zz"])))
    result = check(kt.split, df, target=some_name(data, df), groups=groups,
                   test_size=data.draw(st.sampled_from([0.2, 0.5, 0.0, 1.5])))
    if not isinstance(result, Exception):
        train, test, _ = result
        assert len(train) + len(test) <= len(df)
        if groups is not None:  # grouped: no entity on both sides
            assert not set(train[groups].dropna()) & set(test[groups].dropna())


@property_settings("aggregate_per_entity")
@given(frames(), st.data())
def test_aggregate_per_entity(df, data):
    time = data.draw(st.one_of(st.none(), st.sampled_from(list(df.columns) + ["zz"])))
    result = check(kt.aggregate_per_entity, df, id=some_name(data, df), time=time,
                   how=data.draw(st.sampled_from(["last", "first", "mean", "bogus"])))
    if not isinstance(result, Exception):
        out, _ = result
        assert len(out) <= len(df)


@property_settings("to_intervals")
@given(frames(max_cols=3), st.data())
def test_to_intervals(df, data):
    # visits (entity, time, follow-up, event), now and then of another kind, next to messy columns
    n = len(df)
    plausible = {"pid": st.lists(st.one_of(st.integers(0, 5), st.none()), min_size=n, max_size=n),
                 "t": values("small_float", n), "end": values("small_float", n),
                 "ev": st.lists(st.sampled_from([0, 1, 2, None]), min_size=n, max_size=n)}
    for role, strategy in plausible.items():
        column = strategy if data.draw(st.integers(0, 5)) else values(data.draw(st.sampled_from(KINDS)), n)
        df[role] = pd.Series(data.draw(column)).reset_index(drop=True) if n else pd.Series(dtype=float)
    result = check(kt.to_intervals, df, id="pid", time="t", duration="end", event="ev")
    if not isinstance(result, Exception):
        out, _ = result
        assert 0 < len(out) <= len(df)
        assert (out["t"] < out["end"]).all()  # every interval spans time
        assert not out.groupby("pid")["t"].apply(lambda t: t.duplicated().any()).any()


@property_settings("join_frames")
@given(frames(max_cols=3), frames(max_cols=3), st.data())
def test_join_frames(left, right, data):
    for frame in (left, right):  # a shared key most of the time, with repeats and gaps
        if data.draw(st.integers(0, 4)) and "key" not in frame.columns:
            keys = data.draw(st.lists(st.one_of(st.integers(0, 5), st.none()), min_size=len(frame), max_size=len(frame)))
            frame.insert(0, "key", keys)
    common = [c for c in left.columns if c in set(right.columns)]
    on = data.draw(st.sampled_from(common * 3 + ["zz"]))
    how = data.draw(st.sampled_from(["left", "inner", "outer", "right", "sideways"]))
    check(kt.join_frames, left, right, on=on, how=how, allow_duplicates=data.draw(st.booleans()))


@property_settings("diagnose")
@given(frames(max_rows=30, max_cols=4), st.data())
def test_diagnose(df, data):
    target = data.draw(st.one_of(st.none(), st.sampled_from(list(df.columns) + ["zz"])))
    before = df.copy(deep=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            diagnosis = kt.diagnose(df, target=target)
        except DOCUMENTED as error:
            assert str(error).strip(), f"{type(error).__name__} without a message"
            diagnosis = None
    pd.testing.assert_frame_equal(df, before, check_exact=True)
    if diagnosis is not None:
        json.dumps(diagnosis.to_dict())  # the engine ships it as JSON
        assert diagnosis.task["kind"] in ("classification", "regression", "survival")
