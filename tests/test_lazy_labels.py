"""Label issues on a Dask frame: fitted on a sample of whole entities, every partition scored.

Small Dask frames made from pandas frames with several partitions, on Dask's synchronous
scheduler (and once on a LocalCluster), compared with the pandas step on the same rows.
"""

from __future__ import annotations

import dask
import numpy as np
import pandas as pd
import pytest

dd = pytest.importorskip("dask.dataframe")

import kernel_tools as kt  # noqa: E402
from kernel_tools.lazy import is_lazy  # noqa: E402
from kernel_tools.lazy.labels import handle_label_issues as lazy_label_issues  # noqa: E402


@pytest.fixture(autouse=True)
def synchronous():
    with dask.config.set(scheduler="synchronous"):
        yield


def visits(entities: int = 700, per: int = 4, flip: float = 0.05, seed: int = 0) -> tuple[pd.DataFrame, np.ndarray]:
    """``per`` rows per patient (``pid``), a label the features decide, ``flip`` of it flipped;
    returns the frame and which rows were flipped."""
    rng = np.random.default_rng(seed)
    pid = np.repeat(np.arange(entities), per)
    n = len(pid)
    X = rng.normal(size=(n, 3))
    df = pd.DataFrame({"pid": pid, "a": X[:, 0] + rng.normal(size=entities)[pid], "b": X[:, 1],
                       "site": np.where(X[:, 2] > 0, "north", "south")})
    df.loc[rng.random(n) < 0.05, "b"] = np.nan
    label = np.where(df["a"] + df["b"].fillna(0) > 0, "yes", "no").astype(object)
    flipped = rng.choice(n, size=int(flip * n), replace=False)
    label[flipped] = np.where(label[flipped] == "yes", "no", "yes")
    df["label"] = label
    return df, np.isin(np.arange(n), flipped)


def precision_recall(flags: np.ndarray, truth: np.ndarray) -> tuple[float, float]:
    hits = (flags.astype(bool) & truth).sum()
    return hits / max(flags.sum(), 1), hits / truth.sum()


@pytest.fixture(scope="module")
def data():
    return visits()


@pytest.fixture(scope="module")
def flagged(data):
    """The step on 4 partitions of ``data``, its sample about 40% of the rows."""
    with dask.config.set(scheduler="synchronous"):
        out, report = kt.handle_label_issues(dd.from_pandas(data[0], npartitions=4), "label", groups="pid",
                                             fit_rows=1200)
        return out, report, out.compute()


def test_planted_flips_are_found_about_as_well_as_by_the_pandas_step(data, flagged):
    df, truth = data
    eager, _ = kt.handle_label_issues(df, "label", groups="pid")
    out, report, computed = flagged
    assert is_lazy(out) and report.columns_added == ["label_issue"]
    flags = computed["label_issue"].to_numpy()
    p_eager, r_eager = precision_recall(eager["label_issue"].to_numpy(), truth)
    p_lazy, r_lazy = precision_recall(flags, truth)
    assert p_lazy >= p_eager - 0.1 and r_lazy >= r_eager - 0.12, ((p_lazy, r_lazy), (p_eager, r_eager))
    assert p_lazy >= 0.7 and r_lazy >= 0.7
    # the report names the sample (whole entities) and how the other rows were scored
    d = report.details
    assert 800 < d["fitted_on_rows"] < len(df) and d["fitted_on_rows"] == 4 * d["fitted_on_entities"]
    assert d["fitted_on"] == f"a sample of {d['fitted_on_rows']:,} rows ({d['fitted_on_entities']:,} whole 'pid' entities)"
    assert "partition by partition" in d["scored"] and d["counts_above_are_of"] == "the sample"
    assert 0 < d["issues"] < flags.sum() and report.transformer is None
    assert set(d["thresholds"]) == {"no", "yes"} and all(t < 0.5 for t in d["thresholds"].values())


def test_the_report_counts_the_whole_datas_issues_beside_the_samples(data, flagged):
    df, _ = data
    out, report, computed = flagged
    d, flags = report.details, computed["label_issue"]
    whole = d["whole_data"]
    assert whole["issues"] == flags.sum() > d["issues"] and whole["rows"] == len(df) == report.rows_in == report.rows_out
    assert whole["per_class"] == {str(k): int(n) for k, n in computed.loc[flags == 1, "label"].value_counts().items()}
    assert whole["rows_not_checked"] == 0 and whole["share"] == pytest.approx(flags.mean())
    assert d["counts_above_are_of"] == "the sample"  # the other counts stay the sample's, as named
    assert d["summary"].startswith(f"{flags.sum():,} of all {len(df):,} rows") and "flagged in the 'label_issue'" in d["summary"]
    assert f"had {d['issues']:,}" in d["summary"]


def test_the_whole_datas_count_costs_one_more_pass(data):
    df, _ = data
    reads = []

    def read(part: pd.DataFrame) -> pd.DataFrame:  # counts the partitions a computation reads
        reads.append(len(part))
        return part

    ddf = dd.from_pandas(df, npartitions=4).map_partitions(read, meta=df.iloc[:0])
    _, report = lazy_label_issues(ddf, "label", groups="pid", fit_rows=1200)
    # a look at the first partition, the sample's pass, the count's pass
    assert len(reads) == 1 + 4 + 4 and sum(reads) == reads[0] + 2 * len(df)
    assert report.details["whole_data"]["rows"] == len(df)


def test_a_frame_that_fits_in_the_sample_gets_the_pandas_steps_flags(data):
    df, _ = data
    small = df.iloc[:1200]
    eager, eager_report = kt.handle_label_issues(small, "label", groups="pid")
    out, report = kt.handle_label_issues(dd.from_pandas(small, npartitions=3), "label", groups="pid")
    assert report.details["fitted_on_rows"] == len(small)
    np.testing.assert_array_equal(out["label_issue"].compute().to_numpy(), eager["label_issue"].to_numpy())
    assert report.details["issues"] == eager_report.details["issues"] > 0


def test_the_flag_column_is_computed_partition_by_partition(data, flagged):
    df, _ = data
    out, _, whole = flagged
    assert out.npartitions == 4
    pd.testing.assert_frame_equal(whole.drop(columns="label_issue"), df, check_dtype=False)
    for i in range(out.npartitions):  # each partition alone: no other partition read, the same flags
        part = out.get_partition(i).compute()
        pd.testing.assert_frame_equal(part, whole.loc[part.index])
    assert whole["label_issue"].dtype == np.int64 and set(whole["label_issue"]) == {0, 1}


def test_remove_and_relabel_act_on_the_flagged_rows(data, flagged):
    df, _ = data
    ddf = dd.from_pandas(df, npartitions=4)
    flags = flagged[2]["label_issue"].to_numpy().astype(bool)
    removed, report = lazy_label_issues(ddf, "label", action="remove", groups="pid", fit_rows=1200)
    kept = removed.compute()
    assert len(kept) == len(df) - flags.sum() and report.columns_added == []
    assert report.details["whole_data"]["issues"] == flags.sum() and report.rows_out == len(kept)
    assert " removed." in report.details["summary"]
    pd.testing.assert_frame_equal(kept, df.loc[~flags], check_dtype=False)
    relabeled, report = lazy_label_issues(ddf, "label", action="relabel", groups="pid", fit_rows=1200)
    new = relabeled.compute()["label"].to_numpy()
    changed = new != df["label"].to_numpy()
    np.testing.assert_array_equal(changed, flags)
    assert report.details["whole_data"]["issues"] == changed.sum() and report.rows_out == len(df)
    truth = np.where(df["a"] + df["b"].fillna(0) > 0, "yes", "no")
    assert (new[changed] == truth[changed]).mean() > 0.7


def test_sample_rows_are_found_by_their_values_whatever_order_the_partitions_come_in(data):
    df, truth = data
    calls = iter(range(1000))

    def reorder(part: pd.DataFrame) -> pd.DataFrame:  # a graph that is not the same twice
        return part.sample(frac=1.0, random_state=next(calls))

    moving = dd.from_pandas(df, npartitions=4).map_partitions(reorder, meta=df.iloc[:0])
    out, report = lazy_label_issues(moving, "label", groups="pid", fit_rows=1200)
    flags = out["label_issue"].compute().sort_index().to_numpy()
    precision, recall = precision_recall(flags, truth)
    assert precision >= 0.7 and recall >= 0.7, (precision, recall)
    # the worst example names a row by its index label, and it is flagged with that label
    worst = report.details["examples"][0]
    assert flags[int(worst["index"])] == 1 and df["label"].iat[int(worst["index"])] == worst["given"]


def test_bad_arguments_fail_before_anything_is_read(data):
    df, _ = data
    ddf = dd.from_pandas(df, npartitions=2)
    with pytest.raises(ValueError, match="action must be one of"):
        kt.handle_label_issues(ddf, "label", action="fix")
    with pytest.raises(KeyError, match="target column not in the frame"):
        kt.handle_label_issues(ddf, "lable")
    with pytest.raises(ValueError, match="already has a 'label_issue' column"):
        kt.handle_label_issues(ddf.assign(label_issue=0), "label")
    with pytest.raises(ValueError, match="looks continuous"):
        kt.handle_label_issues(ddf, "a")


def test_on_a_local_cluster():
    distributed = pytest.importorskip("distributed")
    df, truth = visits(entities=300, flip=0.08, seed=1)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None) as cluster, \
            distributed.Client(cluster), dask.config.set(scheduler=None):
        out, report = kt.handle_label_issues(dd.from_pandas(df, npartitions=3), "label", groups="pid", fit_rows=600)
        flags = out["label_issue"].compute().to_numpy()
    assert report.details["fitted_on_rows"] < len(df)
    precision, recall = precision_recall(flags, truth)
    assert precision >= 0.6 and recall >= 0.6, (precision, recall)


def test_the_thresholds_flag_each_class_at_the_rate_cleanlab_found():
    from cleanlab.filter import find_label_issues
    from cleanlab.rank import get_label_quality_scores

    from kernel_tools.lazy.labels import quality_thresholds

    rng = np.random.default_rng(3)
    y = rng.integers(0, 3, 900)
    logits = rng.normal(size=(900, 3)) + 2.5 * np.eye(3)[y]
    logits[:60] = rng.normal(size=(60, 3)) + 2.5 * np.eye(3)[(y[:60] + 1) % 3]  # 60 rows look mislabelled
    probs = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    issue = find_label_issues(labels=y, pred_probs=probs)
    thresholds = quality_thresholds(y, probs, issue)
    below = get_label_quality_scores(labels=y, pred_probs=probs, method="normalized_margin") <= thresholds[y]
    assert issue.sum() > 30
    for k in range(3):
        assert below[y == k].sum() == issue[y == k].sum()
    clean = quality_thresholds(y, probs, np.zeros(900, dtype=bool))
    assert np.isneginf(clean).all()  # a class cleanlab flagged nothing in: nothing flagged elsewhere
