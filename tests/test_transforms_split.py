import numpy as np
import pandas as pd
import pytest
from _purity import run_pure
from hypothesis import given, settings
from hypothesis import strategies as st

from kernel_tools.transforms import split


def visits(seed, n_patients=60, imbalance=0.3):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 6, n_patients)
    pid = np.repeat(np.arange(n_patients), sizes)
    sick = (rng.random(n_patients) < imbalance).astype(int)
    return pd.DataFrame({
        "pid": pid,
        "visit": np.concatenate([np.arange(s) for s in sizes]),
        "day": rng.integers(0, 365, len(pid)),
        "x": rng.normal(size=len(pid)),
        "y": sick[pid],
    })


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("stratify", [True, False])
def test_grouped_split_never_shares_an_entity(seed, stratify):
    df = visits(seed)
    train, test, report = run_pure(split, df, "y", groups="pid", test_size=0.25, stratify=stratify, random_state=seed)
    assert set(train["pid"]).isdisjoint(test["pid"])
    assert len(train) + len(test) == len(df) and not train.index.intersection(test.index).size
    assert report.details["groups_on_both_sides"] == 0
    assert report.details["kind"] == ("grouped, stratified" if stratify else "grouped")
    assert 0.1 < report.details["test_share"] < 0.45
    assert set(test["y"]) == {0, 1}


def test_grouped_split_is_reproducible():
    df = visits(0)
    a = split(df, "y", groups="pid", random_state=3)[1]
    b = split(df, "y", groups="pid", random_state=3)[1]
    c = split(df, "y", groups="pid", random_state=4)[1]
    assert a.index.equals(b.index) and not a.index.equals(c.index)


def test_time_split_puts_latest_rows_in_test():
    df = visits(1)
    train, test, report = run_pure(split, df, "y", time="day", test_size=0.2)
    assert train["day"].max() < test["day"].min()
    assert report.details["kind"] == "time" and report.details["test_from"] == test["day"].min()
    assert 0.15 < len(test) / len(df) < 0.3


def test_time_and_groups_split_whole_entities_by_first_record():
    df = visits(2)
    train, test, report = split(df, "y", groups="pid", time="day", test_size=0.3)
    assert set(train["pid"]).isdisjoint(test["pid"])
    first = df.groupby("pid")["day"].min()
    assert first[train["pid"].unique()].max() <= first[test["pid"].unique()].min()
    assert report.details["kind"] == "time, grouped"


def test_stratified_split_keeps_class_balance():
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"x": rng.normal(size=500), "y": (rng.random(500) < 0.1).astype(int)})
    train, test, report = run_pure(split, df, "y", test_size=0.2, random_state=0)
    assert report.details["kind"] == "stratified"
    assert train["y"].mean() == pytest.approx(0.1, abs=0.02) and test["y"].mean() == pytest.approx(train["y"].mean(), abs=0.01)
    reg = df.assign(y=rng.normal(size=500))
    assert split(reg, "y")[2].details["kind"] == "random"


def test_bad_inputs():
    df = visits(0)
    with pytest.raises(KeyError, match="'label'"):
        split(df, "label")
    with pytest.raises(KeyError, match="'patient'"):
        split(df, "y", groups="patient")
    with pytest.raises(ValueError, match="test_size"):
        split(df, "y", test_size=20)
    with pytest.raises(ValueError, match="1 row has no 'pid' \\(the entity\\): drop them \\(missing_ids='drop'\\)"):
        split(df.assign(pid=df["pid"].where(df.index > 0)), "y", groups="pid")
    with pytest.raises(ValueError, match="missing_ids must be one of 'drop', 'own'"):
        split(df.assign(pid=df["pid"].where(df.index > 0)), "y", groups="pid", missing_ids="fill")
    with pytest.raises(ValueError, match="single entity"):
        split(df.assign(pid=1), "y", groups="pid")
    with pytest.raises(TypeError, match="DataFrame"):
        split(df.to_numpy(), "y")



@settings(max_examples=25, deadline=None)
@given(
    sizes=st.lists(st.integers(1, 6), min_size=6, max_size=40),
    labels=st.lists(st.integers(0, 1), min_size=40, max_size=40),
    test_size=st.sampled_from([0.2, 0.25, 0.3, 0.5]),
    seed=st.integers(0, 10_000),
)
def test_grouped_split_property(sizes, labels, test_size, seed):
    pid = np.repeat(np.arange(len(sizes)), sizes)
    df = pd.DataFrame({"pid": pid, "y": np.asarray(labels)[pid % 40]})
    train, test, _ = split(df, "y", groups="pid", test_size=test_size, random_state=seed)
    assert set(train["pid"]).isdisjoint(test["pid"])
    assert sorted(train.index.tolist() + test.index.tolist()) == list(range(len(df)))


def test_many_entities_use_the_fast_stratified_grouping(monkeypatch):
    import kernel_tools.transforms.splitting as splitting

    monkeypatch.setattr(splitting, "STRATIFIED_GROUP_KFOLD_MAX_GROUPS", 10)
    df = visits(4, n_patients=200, imbalance=0.1)
    train, test, report = split(df, "y", groups="pid", random_state=1)
    assert report.details["kind"] == "grouped, stratified" and report.details["groups_on_both_sides"] == 0
    share = df.groupby("pid")["y"].first()
    assert share[test["pid"].unique()].mean() == pytest.approx(share.mean(), abs=0.03)


def test_rows_without_an_entity_id_are_dropped_or_each_their_own_entity():
    df = visits(3).astype({"pid": float})
    df.loc[[0, 5, 9], "pid"] = np.nan
    train, test, report = split(df, "y", groups="pid", missing_ids="drop")
    assert len(train) + len(test) == len(df) - 3 and report.warnings[0] == "3 rows without an id in 'pid' dropped"
    assert set(train["pid"]).isdisjoint(test["pid"])
    train, test, report = split(df, "y", groups="pid", missing_ids="own")
    both = pd.concat([train, test])
    assert len(both) == len(df) and both["pid"].notna().all()
    own = both.loc[[0, 5, 9], "pid"]
    assert own.nunique() == 3 and (own < df["pid"].min()).all()  # never another entity's id
    assert "3 rows without an id in 'pid' each taken as an entity of its own" in report.warnings
    text = df.assign(pid=df["pid"].map(lambda v: f"P{v:.0f}", na_action="ignore"))
    train, test, _ = split(text, "y", groups="pid", missing_ids="own")
    assert pd.concat([train, test]).loc[5, "pid"] == "no id: row 5"


def test_an_aggregation_keeps_rows_without_an_id_as_their_own_entities_on_new_data():
    from kernel_tools.transforms import aggregate_per_entity

    df = visits(4).astype({"pid": float})
    df.loc[[0, 1], "pid"] = np.nan
    dropped, report = aggregate_per_entity(df, id="pid", time="visit", how="baseline")
    assert len(dropped) == df["pid"].nunique() and report.warnings[0] == "2 rows without an id in 'pid' dropped"
    own, report = aggregate_per_entity(df, id="pid", time="visit", how="baseline", missing_ids="own")
    assert len(own) == df["pid"].nunique() + 2
    assert len(report.apply(df.iloc[:10])) == df.iloc[:10]["pid"].nunique() + 2


def test_a_lazy_split_drops_rows_without_an_id_and_refuses_ids_of_their_own_in_words():
    dd = pytest.importorskip("dask.dataframe")
    df = visits(5).astype({"pid": float})
    df.loc[[0, 3], "pid"] = np.nan
    lazy = dd.from_pandas(df, npartitions=3)
    train, test, _ = split(lazy, "y", groups="pid", missing_ids="drop")
    assert len(train) + len(test) == len(df) - 2
    with pytest.raises(NotImplementedError, match="drop them \\(missing_ids='drop'\\)"):
        split(lazy, "y", groups="pid", missing_ids="own")


@pytest.mark.parametrize("seed", range(10))
def test_a_small_cohort_with_few_censored_keeps_some_on_each_side(seed):
    # ten subjects, three censored: too few for stratified folds, yet a holdout of events only
    # cannot be scored as survival (found on person-period tables cut to ten subjects)
    df = pd.DataFrame({"id": np.arange(10), "t": np.arange(1, 11), "E": [1, 0, 1, 1, 0, 1, 1, 0, 1, 1]})
    train, test, report = split(df, "E", groups="id", random_state=seed)
    assert report.details["kind"] == "grouped, stratified"
    assert set(train["E"]) == {0, 1} and set(test["E"]) == {0, 1} and len(test) == 2


def test_too_few_entities_of_a_class_for_each_side_stay_a_plain_grouped_split():
    df = pd.DataFrame({"id": np.arange(5), "E": [1, 0, 1, 1, 0]})  # a test set of one entity holds one class
    assert split(df, "E", groups="id")[2].details["kind"] == "grouped"
