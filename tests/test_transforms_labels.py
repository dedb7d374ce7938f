import numpy as np
import pandas as pd
import pytest
from _purity import run_pure

from kernel_tools.transforms import handle_label_issues


@pytest.fixture(scope="module")
def noisy():
    rng = np.random.default_rng(0)
    n = 600
    X = rng.normal(size=(n, 3))
    y = np.where(X[:, 0] + X[:, 1] > 0, "yes", "no").astype(object)
    df = pd.DataFrame(X, columns=["a", "b", "c"])
    df["color"] = np.where(X[:, 2] > 0, "red", "blue")
    df.loc[rng.random(n) < 0.1, "a"] = np.nan  # missing values are fine for the model
    df["label"] = y
    flipped = rng.choice(n, size=int(0.05 * n), replace=False)
    df.loc[flipped, "label"] = np.where(df.loc[flipped, "label"] == "yes", "no", "yes")
    out, report = run_pure(handle_label_issues, df, "label")
    return df, set(flipped.tolist()), out, report


def test_finds_flipped_labels_with_reasonable_precision(noisy):
    df, flipped, out, report = noisy
    found = set(np.flatnonzero(out["label_issue"].to_numpy()).tolist())
    precision = len(found & flipped) / len(found)
    recall = len(found & flipped) / len(flipped)
    # 5% of labels are wrong: flagged rows are wrong ~10x more often than chance
    assert precision >= 0.4 and recall >= 0.6, (precision, recall)
    assert report.details["issues"] == len(found) and report.columns_added == ["label_issue"]
    assert report.details["examples"][0]["suggested"] != report.details["examples"][0]["given"]
    assert report.transformer is None


@pytest.mark.slow
def test_remove_and_relabel(noisy):
    df, flipped, out, _ = noisy
    found = out["label_issue"] == 1
    removed, report = handle_label_issues(df, "label", action="remove")
    assert len(removed) == len(df) - found.sum() and report.rows_out == len(removed)
    relabeled, _ = handle_label_issues(df, "label", action="relabel")
    changed = relabeled["label"] != df["label"]
    assert changed.sum() == found.sum() and set(relabeled["label"]) == {"yes", "no"}
    truth = np.where(df["a"].fillna(0) + df["b"] > 0, "yes", "no")
    assert (relabeled.loc[changed, "label"] == truth[changed.to_numpy()]).mean() > 0.6


def test_missing_and_rare_labels_are_left_unchecked():
    rng = np.random.default_rng(1)
    df = pd.DataFrame({"x": rng.normal(size=60), "y": rng.integers(0, 2, 60).astype(float)})
    df.loc[0, "y"] = np.nan
    df.loc[1, "y"] = 7.0
    out, report = handle_label_issues(df, "y")
    assert report.details["rows_not_checked"] == 2 and out.loc[[0, 1], "label_issue"].tolist() == [0, 0]


def test_bad_inputs(noisy):
    df = noisy[0]
    with pytest.raises(KeyError, match="'target'"):
        handle_label_issues(df, "target")
    with pytest.raises(ValueError, match="action"):
        handle_label_issues(df, "label", action="fix")
    with pytest.raises(ValueError, match="continuous"):
        handle_label_issues(df, "b")
    with pytest.raises(ValueError, match="cannot also be a feature"):
        handle_label_issues(df, "label", features=["a", "label"])
    with pytest.raises(ValueError, match="two classes"):
        handle_label_issues(df.assign(label="yes"), "label")


@pytest.mark.slow
def test_groups_keep_entities_in_one_fold(noisy):
    df = noisy[0].assign(pid=np.arange(len(noisy[0])) // 3)
    out, report = handle_label_issues(df, "label", groups="pid")
    assert "pid" not in report.details["skipped_features"] and report.details["folds"] == 5
    assert out["label_issue"].sum() == report.details["issues"] > 0
    with pytest.raises(ValueError, match="single 'pid' entity"):
        handle_label_issues(df.assign(pid=np.where(df["label"] == "yes", 0, np.arange(len(df)))), "label", groups="pid")


@pytest.mark.slow
def test_an_entitys_copies_hide_its_wrong_label_unless_the_folds_are_by_entity():
    rng = np.random.default_rng(0)
    pid = np.repeat(np.arange(150), 4)  # each patient's four rows repeat one record
    a, b = rng.normal(size=150)[pid], rng.normal(size=150)[pid]
    label = np.where(a + b > 0, "yes", "no").astype(object)
    flipped = np.isin(pid, rng.choice(150, 12, replace=False))  # every row of 12 patients
    label[flipped] = np.where(label[flipped] == "yes", "no", "yes")
    df = pd.DataFrame({"pid": pid, "a": a, "b": b, "label": label})
    by_entity, _ = handle_label_issues(df, "label", groups="pid")
    by_row, _ = handle_label_issues(df.drop(columns="pid"), "label")
    # row folds train on a copy of the very row they judge: the wrong label looks right
    assert by_row["label_issue"][flipped].mean() < 0.2
    assert by_entity["label_issue"][flipped].mean() > 0.8 and by_entity["label_issue"][~flipped].mean() < 0.2
    # one row per entity: grouping changes nothing but keeps the id out of the features
    first, report = handle_label_issues(df.drop_duplicates("pid"), "label", groups="pid")
    assert report.details["folds"] == 5 and first["label_issue"].sum() == report.details["issues"] > 0


@pytest.mark.slow
def test_repeated_index_labels_are_handled_by_position(noisy):
    df, _, out, _ = noisy
    doubled = df.set_axis(np.arange(len(df)) // 2)  # every index label appears twice
    flagged, report = handle_label_issues(doubled, "label")
    assert flagged["label_issue"].to_numpy().tolist() == out["label_issue"].to_numpy().tolist()
    relabeled, _ = handle_label_issues(doubled, "label", action="relabel")
    assert (relabeled["label"].to_numpy() != doubled["label"].to_numpy()).sum() == report.details["issues"]


@pytest.mark.slow
def test_large_data_gets_fewer_faster_folds_and_still_finds_flipped_labels(monkeypatch):
    import kernel_tools.transforms.labels as labels

    monkeypatch.setattr(labels, "LARGE_ROWS", 1000)  # the rule, without 50k rows in a test
    rng = np.random.default_rng(1)
    n = 3000
    X = rng.normal(size=(n, 3))
    df = pd.DataFrame(X, columns=["a", "b", "c"])
    df["label"] = np.where(X[:, 0] + X[:, 1] > 0, 1, 0)
    flipped = rng.choice(n, size=150, replace=False)
    df.loc[flipped, "label"] = 1 - df.loc[flipped, "label"]
    out, report = handle_label_issues(df, "label")
    assert report.details["folds"] == 3 and report.details["boosting"] == {"max_iter": 50, "learning_rate": 0.2}
    found = set(np.flatnonzero(out["label_issue"].to_numpy()).tolist())
    assert len(found & set(flipped.tolist())) / len(flipped) >= 0.6
    small, small_report = handle_label_issues(df.iloc[:900], "label")
    assert small_report.details["folds"] == 5 and small_report.details["boosting"]["max_iter"] == 100


def _flipped_frame(n: int, seed: int = 2) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    df = pd.DataFrame(X, columns=["a", "b", "c"])
    df["label"] = np.where(X[:, 0] - X[:, 1] > 0, 1, 0)
    flipped = rng.choice(n, size=n // 20, replace=False)
    df.loc[flipped, "label"] = 1 - df.loc[flipped, "label"]
    return df, flipped


def test_at_or_below_the_scale_threshold_the_label_model_learns_from_every_training_row(monkeypatch):
    """The quality suite's tables keep today's label step: at 5,000 rows (the threshold, pinned)
    nothing is sampled however small the cap, and the flags equal scikit-learn's
    cross_val_predict on all rows."""
    import kernel_tools.scale as scale
    import kernel_tools.transforms.labels as labels

    assert scale.SCALE_ROWS == 5_000
    monkeypatch.setattr(labels, "LABEL_FIT_ROWS", 500)
    df, _ = _flipped_frame(5_000)
    out, report = handle_label_issues(df, "label")
    assert "sampled" not in report.details
    monkeypatch.setattr(labels, "LABEL_FIT_ROWS", 10**9)
    same, _ = handle_label_issues(df, "label")
    assert out["label_issue"].tolist() == same["label_issue"].tolist()


def test_above_the_threshold_each_fold_model_learns_from_a_sample_and_says_so(monkeypatch):
    import kernel_tools.transforms.labels as labels

    monkeypatch.setattr(labels, "LABEL_FIT_ROWS", 1_500)  # the rule, without 50k rows in a test
    df, flipped = _flipped_frame(6_000)
    out, report = handle_label_issues(df, "label")
    assert report.details["sampled"] == (
        "each of the 5 fold models learnt from 1,500 of 4,800 training rows (a sample: the table has "
        "more than 5,000 rows); each of the 6,000 rows was still checked by a model that never saw it")
    assert list(report.details)[0] == "sampled"  # the first line of the step's output
    assert report._repr_html_().count("a sample: the table has more than 5,000 rows") == 1
    found = set(np.flatnonzero(out["label_issue"].to_numpy()).tolist())
    assert len(found & set(flipped.tolist())) / len(flipped) >= 0.6  # still finds the flipped labels
