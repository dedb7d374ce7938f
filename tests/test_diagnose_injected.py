"""Recall and precision per finding kind on seeded frames with injected, known problems."""

import numpy as np
import pandas as pd
import pytest
from _injected import base_frame, kitchen_sink, noisy_labels, repeated, survival

from kernel_tools.diagnosis import diagnose, diagnose_join

COLUMN_KINDS = ["target_leakage", "id_column", "missing_values", "outliers", "constant_column",
                "redundant_features", "inconsistent_categories", "mixed_units", "numeric_as_text",
                "free_text"]


def reported(diagnosis, kind):
    return {c for f in diagnosis.by_kind(kind) for c in f.columns}


@pytest.fixture(scope="module", params=[0, 1])
def sink(request):
    df, truth = kitchen_sink(1200, seed=request.param)
    return diagnose(df, target="y"), truth


@pytest.mark.parametrize("kind", COLUMN_KINDS)
def test_recall_and_precision_per_kind(sink, kind):
    diagnosis, truth = sink
    found, expected = reported(diagnosis, kind), truth[kind]
    recall = len(found & expected) / len(expected)
    precision = len(found & expected) / len(found) if found else 0.0
    assert recall == 1.0, (kind, found, expected)
    assert precision >= (0.75 if kind == "outliers" else 1.0), (kind, found, expected)


def test_duplicate_rows_counted(sink):
    diagnosis, _ = sink
    (f,) = diagnosis.by_kind("duplicate_rows")
    assert f.evidence["exact_duplicates"] == 30
    assert f.gate == "row_removal"
    assert f.recommended.action == {"function": "deduplicate", "params": {"subset": None, "keep": "first"}}


def test_every_finding_is_actionable(sink):
    diagnosis, _ = sink
    for f in diagnosis.findings:
        assert f.options and sum(o.recommended for o in f.options) == 1, f.id
        for o in f.options:
            assert o.action is None or set(o.action) == {"function", "params"}


def test_clean_frame_has_no_false_alarms():
    df = base_frame(3000, np.random.default_rng(5))
    diagnosis = diagnose(df, target="y")
    kinds = {f.kind for f in diagnosis.findings}
    assert not kinds & {"target_leakage", "id_column", "repeated_measurements", "outliers",
                        "missing_values", "duplicate_rows", "constant_column", "redundant_features",
                        "inconsistent_categories", "mixed_units", "numeric_as_text", "free_text",
                        "class_imbalance"}, kinds
    # the ordinary strong predictor is scored but not flagged
    assert diagnosis.column_stats["feature_scores"]["x0"] > 0.75


def test_label_issues_recall_and_precision():
    df, flipped = noisy_labels(2000, seed=3, rate=0.08)
    (f,) = diagnose(df, target="label").by_kind("label_issues")
    assert f.gate == "label_issues" and f.evidence["sample_size"] == 2000
    rows = set(f.evidence["rows"][:100])  # ranked: the most confident first
    assert len(rows & set(flipped)) / len(rows) >= 0.9  # top-ranked issues are real flips
    assert f.evidence["count"] >= 0.7 * len(flipped)


def test_no_label_issues_on_clean_labels():
    df, _ = noisy_labels(2000, seed=3, rate=0.0)
    assert diagnose(df, target="label").by_kind("label_issues") == []


def test_class_imbalance():
    df = base_frame(2000, np.random.default_rng(0), positive_rate=0.06)
    (f,) = diagnose(df, target="y").by_kind("class_imbalance")
    assert f.evidence["minority_share"] == pytest.approx(0.06, abs=0.01)


def test_repeated_measurements_found_with_visit():
    df = repeated(150, seed=0)
    d = diagnose(df, target="outcome")
    (f,) = d.by_kind("repeated_measurements")
    assert f.columns == ["patient", "visit_date"]
    assert d.task["id"] == "patient" and d.task["visit"] == "visit_date"
    assert f.gate == "aggregation"
    # one outcome per patient: predicted at the first visit, so the baseline record is the default
    assert d.task["index"]["kind"] == "entity_start"
    assert f.recommended.action == {"function": "aggregate_per_entity",
                                    "params": {"id": "patient", "time": "visit_date", "how": "baseline"}}
    assert set(f.evidence["baseline_columns"]) >= {"age", "sex", "treatment"}


def test_low_cardinality_category_is_not_an_entity():
    df = base_frame(2000, np.random.default_rng(1))
    df["store"] = np.random.default_rng(1).integers(0, 40, len(df))
    assert diagnose(df, target="y").by_kind("repeated_measurements") == []


def test_survival_inferred_and_setup_reported():
    df = survival(400, seed=0)
    d = diagnose(df, target="died")
    assert d.task["kind"] == "survival" and d.task["time"] == "followup_days"
    (f,) = d.by_kind("survival_setup")
    assert 0 < f.evidence["censoring_share"] < 1
    assert d.by_kind("target_leakage") == []


def test_survival_leak_flagged_by_c_index():
    df = survival(400, seed=1)
    df["days_to_last_contact"] = df["followup_days"] + np.random.default_rng(0).normal(0, 0.5, len(df))
    d = diagnose(df, target="died", time="followup_days")
    assert reported(d, "target_leakage") == {"days_to_last_contact"}
    assert d.by_kind("target_leakage")[0].evidence["metric"] == "c_index"


def test_regression_task_and_leak():
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"a": rng.normal(size=800), "b": rng.normal(size=800)})
    df["price"] = 3 * df["a"] + rng.normal(size=800)
    df["price_with_tax"] = df["price"] * 1.2
    d = diagnose(df, target="price")
    assert d.task["kind"] == "regression"
    assert reported(d, "target_leakage") == {"price_with_tax"}


def test_train_test_shift():
    rng = np.random.default_rng(0)
    train = base_frame(900, rng)
    test = base_frame(500, rng).drop(columns="y")
    test["x1"] = test["x1"] + 1.5
    (f,) = diagnose(train, target="y", test=test).by_kind("train_test_shift")
    assert f.columns[0] == "x1" and f.evidence["adversarial_auroc"] > 0.7
    same = base_frame(500, rng).drop(columns="y")
    assert diagnose(train, target="y", test=same).by_kind("train_test_shift") == []


def test_join_keys_and_leak_through_join():
    rng = np.random.default_rng(0)
    n = 300
    main = pd.DataFrame({"Id": [f"p{i:04d}" for i in range(n)], "x": rng.normal(size=n),
                         "Class": rng.integers(0, 2, n)})
    aux = pd.DataFrame({"Id": main["Id"].sample(frac=1, random_state=0).to_numpy()})
    aux["Group"] = np.where(main.set_index("Id").loc[aux["Id"], "Class"].to_numpy() == 1, "B", "A")
    aux["site"] = rng.choice(["s1", "s2"], n)
    visits = pd.DataFrame({"Id": np.repeat(main["Id"].to_numpy()[:100], 3), "v": np.arange(300)})
    d = diagnose_join({"train": main, "aux": aux, "visits": visits}, target="Class")
    (plan,) = d.by_kind("join_keys")  # three files: one plan for both others
    files = {e["frame"]: e for e in plan.evidence["files"]}
    assert files["aux"]["on"] == "Id" and "records" not in files["aux"]  # one row per key: joined as it is
    assert "would multiply the rows" in files["visits"]["why"]  # several rows per key, no time: not joined
    aux = next(i for i in d.inferences if i.subject == "train+aux")
    assert aux.value == "Id" and "100% of 'train' rows" in aux.evidence[0]
    assert reported(d, "target_leakage") == {"Group"}


def test_numeric_column_mixing_inches_and_cm():
    rng = np.random.default_rng(0)
    df = base_frame(1000, rng)
    height = rng.normal(170, 10, len(df))
    inches = rng.random(len(df)) < 0.2
    height[inches] /= 2.54
    df["height"] = height
    (f,) = diagnose(df, target="y").by_kind("mixed_units")
    assert f.columns == ["height"] and f.evidence["units"] == ["in", "cm"]
    assert f.evidence["factor"] == 2.54 and 0.15 < f.evidence["share_small_values"] < 0.25


def test_given_id_and_visit_are_used():
    df = repeated(80, seed=2).rename(columns={"patient": "subject_key"})
    df["visit_no"] = df.groupby("subject_key").cumcount()
    d = diagnose(df, target="outcome", task="classification", id="subject_key", time="visit_no")
    (f,) = d.by_kind("repeated_measurements")
    assert d.task["id"] == "subject_key" and d.task["visit"] == "visit_no"
    assert f.recommended.action["params"] == {"id": "subject_key", "time": "visit_no", "how": "baseline"}
    assert "subject_key" not in d.column_stats["feature_scores"]


def test_sample_size_is_stated_and_stratified():
    df = base_frame(3000, np.random.default_rng(4), positive_rate=0.1)
    df["leak"] = df["y"]
    d = diagnose(df, target="y", sample=1000)
    assert d.sample_size == 1000
    (f,) = d.by_kind("target_leakage")
    assert f.evidence["sample_size"] == 1000 and f.evidence["metric"] == "roc_auc"
    assert f.evidence["rank"] == 1


@pytest.mark.parametrize("rows", [20_000, 4_000_000])
def test_a_smooth_tail_is_not_outliers_at_any_size(rows):
    """The largest value of a tail grows with the rows; the decision must not."""
    from kernel_tools.diagnosis.outliers import column_outliers

    rng = np.random.default_rng(rows)
    counts = rng.poisson(3, rows).astype(float)  # its maximum is 3 IQRs past the fence at 4M rows
    assert column_outliers(counts) is None
    sbp = np.round(rng.normal(130, 15, rows))
    typo = rng.choice(rows, max(3, rows // 2000), replace=False)
    sbp[typo] *= 10  # typed ten times too large: far from every ordinary value
    found = column_outliers(sbp)
    assert found is not None and typo.size <= found["count"] <= 1.01 * typo.size  # + the normal tail's few
    counts[typo[:3]] = 60.0  # three values well apart from the counts' tail
    found = column_outliers(counts)
    assert found is not None and found["most_extreme"][:3] == [60.0] * 3
