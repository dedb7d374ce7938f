"""Dask DataFrames: the same diagnosis, transforms, checks and undo as pandas, computed lazily.

Small Dask frames made from pandas frames with several partitions, on Dask's synchronous
scheduler (one thread, no cluster: a few seconds per test).
"""

from __future__ import annotations

import dask
import numpy as np
import pandas as pd
import pytest
from dask.callbacks import Callback

dd = pytest.importorskip("dask.dataframe")

import kernel_tools as kt  # noqa: E402
from jupyter_dcpilot.engine.demo import demo_frame  # noqa: E402
from kernel_tools.checkpoints import CheckpointStore  # noqa: E402
from kernel_tools.frames import list_frames, profile  # noqa: E402
from kernel_tools.lazy import is_lazy  # noqa: E402
from kernel_tools.lazy.checks import split_overlap_lazy, validate_lazy  # noqa: E402
from kernel_tools.lazy.engine import graph_of  # noqa: E402


@pytest.fixture(autouse=True)
def synchronous():
    with dask.config.set(scheduler="synchronous"):
        yield


class Tasks(Callback):
    """Counts the tasks Dask runs while it is active."""

    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def _pretask(self, key, dsk, state):
        self.count += 1


@pytest.fixture(scope="module")
def visits() -> pd.DataFrame:
    frame = demo_frame()
    # sex written four ways (Dask reads text as Arrow strings: their counts must profile alike)
    spellings = np.array(["Male", "male ", "Female", "female"])
    frame["sex"] = spellings[np.random.default_rng(1).integers(0, 4, len(frame))]
    return pd.concat([frame, frame.iloc[:9]], ignore_index=True)  # 9 exact duplicate rows


def lazy(frame: pd.DataFrame, n: int = 3):
    return dd.from_pandas(frame, npartitions=n)


def key(finding) -> tuple:
    return finding.kind, tuple(sorted(finding.columns))


def test_diagnose_on_dask_finds_what_pandas_finds_with_the_same_whole_data_counts(visits):
    eager = kt.diagnose(visits, target="arrest", time="week")
    lazy_d = kt.diagnose(lazy(visits), target="arrest", time="week")
    assert [key(f) for f in lazy_d.findings] == [key(f) for f in eager.findings]
    assert lazy_d.shape == eager.shape and lazy_d.task["id"] == eager.task["id"] == "subject"
    assert lazy_d.task["index"]["kind"] == eager.task["index"]["kind"]
    by_kind = {f.kind: f for f in lazy_d.findings}
    pandas_kind = {f.kind: f for f in eager.findings}
    # counts over every row: the same numbers as pandas
    assert by_kind["duplicate_rows"].evidence["exact_duplicates"] == pandas_kind["duplicate_rows"].evidence["exact_duplicates"] >= 9
    missing, pandas_missing = by_kind["missing_values"].evidence, pandas_kind["missing_values"].evidence
    assert {c: v["missing_count"] for c, v in missing["columns"].items()} == \
        {c: v["missing_count"] for c, v in pandas_missing["columns"].items()}
    assert missing["rows_with_any_missing"] == pandas_missing["rows_with_any_missing"]
    assert by_kind["outliers"].evidence["columns"]["prio"]["count"] == pandas_kind["outliers"].evidence["columns"]["prio"]["count"]
    assert by_kind["repeated_measurements"].evidence["entities"] == pandas_kind["repeated_measurements"].evidence["entities"]
    # every finding says where its numbers come from
    assert {f.evidence["basis"] for f in lazy_d.findings} <= {"whole data", "sample"}
    assert by_kind["target_leakage"].evidence["basis"] == "sample"
    assert by_kind["missing_values"].evidence["basis"] == "whole data"
    assert lazy_d.column_stats["lazy"]["passes"] <= 2
    assert "inconsistent_categories" in by_kind and "diagnosis_incomplete" not in by_kind


def test_diagnose_on_dask_keeps_whole_entities_in_its_sample(visits):
    d = kt.diagnose(lazy(visits), target="arrest", time="week", id="subject")
    from kernel_tools.lazy.diagnosis import diagnose_lazy

    small = diagnose_lazy(lazy(visits), target="arrest", time="week", id="subject", sample_rows=300)
    stats = small.column_stats["lazy"]
    assert stats["sample_entity"] == "subject" and stats["rows"] == len(visits)
    assert 100 < stats["sample_rows"] < len(visits)
    rm = next(f for f in small.findings if f.kind == "repeated_measurements")
    # whole-data numbers even though the detectors saw a third of the rows
    assert rm.evidence["entities"] == visits["subject"].nunique() and rm.evidence["rows"] == len(visits)
    assert rm.summary.startswith(f"The {len(visits):,} rows describe {visits['subject'].nunique():,} entities")
    assert d.column_stats["lazy"]["sample_rows"] == len(visits)  # small frame: the sample is all of it


def test_each_transform_has_a_lazy_path_that_matches_pandas(visits):
    df = lazy(visits)
    out, report = kt.drop_columns(df, ["rearrest_report_filed"], reason="leak")
    assert is_lazy(out) and "rearrest_report_filed" not in out.columns and report.details["lazy"]
    assert report.transformer.transform(visits).shape[1] == visits.shape[1] - 1

    out, report = kt.deduplicate(df)
    assert is_lazy(out) and len(out) == len(visits.drop_duplicates())

    out, report = kt.fix_dtypes(df, columns=["age"], sentinels={"age": [999.0]})
    eager, _ = kt.fix_dtypes(visits, columns=["age"], sentinels={"age": [999.0]})
    assert is_lazy(out) and report.details["fitted_on_rows"] == len(visits)
    np.testing.assert_array_equal(out["age"].compute().to_numpy(), eager["age"].to_numpy())

    out, report = kt.aggregate_per_entity(df, id="subject", time="checkin", how="last", outcome=["arrest", "week"])
    eager, _ = kt.aggregate_per_entity(visits, id="subject", time="checkin", how="last", outcome=["arrest", "week"])
    got = out.compute().sort_values("subject").reset_index(drop=True)
    pd.testing.assert_frame_equal(got, eager.sort_values("subject").reset_index(drop=True), check_dtype=False)

    train, test, report = kt.split(df, target="arrest", groups="subject", test_size=0.25)
    ids_train, ids_test = set(train["subject"].compute()), set(test["subject"].compute())
    assert not ids_train & ids_test and ids_train | ids_test == set(visits["subject"])
    assert report.details["train_rows"] + report.details["test_rows"] == len(visits)
    again = kt.split(df, target="arrest", groups="subject", test_size=0.25)[1]
    assert set(again["subject"].compute()) == ids_test  # a hash, not a random draw: the same every run

    filled, imputation = kt.impute(train, method="median", target="arrest", columns=["age", "prio"])
    test_filled = imputation.apply(test)
    assert is_lazy(filled) and is_lazy(test_filled)
    assert int(filled[["age", "prio"]].isna().sum().sum().compute()) == 0
    assert int(test_filled[["age", "prio"]].isna().sum().sum().compute()) == 0
    median = train["prio"].compute().median()
    assert imputation.transformer.fill_values_["prio"] == median  # fitted on the (whole, small) sample

    clipped, outliers = kt.handle_outliers(filled, columns=["prio"], action="clip", method="iqr")
    fence = outliers.details["bounds"]["prio"][1] if "bounds" in outliers.details else None
    top = float(clipped["prio"].max().compute())
    assert top < float(filled["prio"].max().compute()) and (fence is None or top <= fence)


def test_categories_and_units_are_learned_on_a_sample_and_applied_per_partition():
    frame = pd.DataFrame({"sex": ["Male", "male ", "Female", "female", "MALE", "Female"] * 50,
                          "weight": ["70 kg", "154 lb", "80 kg", "60 kg", "176 lb", "65 kg"] * 50,
                          "y": [0, 1] * 150})
    out, report = kt.normalize_categories(lazy(frame), columns=["sex"])
    eager, _ = kt.normalize_categories(frame, columns=["sex"])
    assert is_lazy(out) and len(set(eager["sex"])) == 2
    assert out["sex"].compute().tolist() == eager["sex"].tolist()
    out, report = kt.convert_units(lazy(frame), column="weight")
    eager, _ = kt.convert_units(frame, column="weight")
    values = out["weight"].compute()
    assert pd.api.types.is_numeric_dtype(values) and values.between(25, 90).all()
    np.testing.assert_allclose(values.to_numpy(), eager["weight"].to_numpy())


def test_a_lazy_model_is_fitted_on_a_sample_and_says_so(visits):
    train, test, _ = kt.split(lazy(visits).drop(columns=["rearrest_report_filed"]), target="arrest", groups="subject")
    model = kt.fit_evaluate(train, target="arrest", task="survival", time="week", groups="subject", test=test, cv=3)
    assert model.warnings[0].startswith("fitted on an in-memory sample of")
    assert model.metrics["train_rows"] == len(train) and model.holdout_score is not None


def test_undo_on_a_lazy_frame_restores_the_graph_without_computing(visits):
    namespace = {"df": lazy(visits)}
    saved = graph_of(namespace["df"])
    store = CheckpointStore(namespace)
    cp = store.save(["df"], "before")
    namespace["df"], _ = kt.drop_columns(namespace["df"], ["age"])
    original = store._checkpoints[cp].snapshots["df"].value
    original["prio"] = original["prio"] * 100  # changed in place: its graph is swapped
    with Tasks() as tasks:
        store.restore(cp)
    assert tasks.count == 0  # nothing read, nothing recomputed
    assert graph_of(namespace["df"]) is saved and "age" in namespace["df"].columns
    assert namespace["df"]["prio"].max().compute() == visits["prio"].max()
    assert store.list()[0]["bytes_copied"] == 0


def test_post_step_checks_on_lazy_frames_count_in_one_pass(visits):
    df = lazy(visits)
    no_target, _ = kt.drop_columns(df, ["arrest"])
    failures, info = validate_lazy(df, no_target, target="arrest", expect={"rows": "same"})
    assert [f["check"] for f in failures] == ["target_lost"] and info["rows_after"] == len(visits)
    holes = df.assign(prio=df["prio"].where(df["week"] > 20))
    failures, _ = validate_lazy(df, holes, target="arrest", expect={"rows": "same", "new_missing": False})
    assert failures[0]["check"] == "new_missing" and failures[0]["severity"] == "error"
    failures, _ = validate_lazy(df, df, expect={"rows": "one_per_entity", "id": "subject"})
    assert failures[0]["check"] == "one_per_entity"
    train, test, _ = kt.split(df, target="arrest", groups="subject")
    audit = split_overlap_lazy(train, test, "subject")
    assert audit["shared_entities"] == 0 and audit["train_rows"] + audit["test_rows"] == len(visits)
    leaky = split_overlap_lazy(df, test, "subject")
    assert leaky["shared_entities"] > 0 and leaky["shared_rows"] > 0


def test_the_panel_lists_and_profiles_a_dask_frame_without_counting_its_rows(visits):
    namespace = {"visits": lazy(visits), "small": visits.head(3)}
    with Tasks() as tasks:
        listed = {f["name"]: f for f in list_frames(namespace)}
    assert tasks.count == 0
    assert listed["visits"]["rows"] is None and listed["visits"]["partitions"] == 3
    assert listed["visits"]["columns"] == visits.shape[1] and listed["small"]["rows"] == 3
    prof = profile(namespace["visits"])
    assert prof["rows"] is None and 0 < prof["profiled_rows"] < len(visits)


def test_lazy_steps_that_need_every_row_in_memory_say_so(visits):
    with pytest.raises(NotImplementedError, match="lazy frame"):
        kt.join_frames(lazy(visits), visits, on="subject")
    with pytest.raises(NotImplementedError, match="near"):
        kt.deduplicate(lazy(visits), near=True)


def test_the_kernels_own_cluster_is_used_when_there_is_one():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as mine:
        assert kt.dask_client() is mine
    started = kt.dask_client(memory_limit=2**30, threads=1)  # none left: a LocalCluster of its own
    try:
        assert started.cluster is not None and started.cluster.scheduler_address != cluster.scheduler_address
        # in the kernel's process the monitor sees the kernel's memory too: spill, never pause
        (worker,) = started.cluster.workers.values()
        assert worker.memory_manager.memory_pause_fraction is False
        assert worker.memory_manager.memory_spill_fraction
    finally:
        started.close()
        started.cluster.close()


def test_an_aggregation_is_in_the_cluster_when_its_step_ends(visits):
    """The shuffle runs in the step's own cell (its progress, its time budget), not in the
    next probe that reads the frame (which gives up after its timeout)."""
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, distributed.Client(cluster):
        out, _ = kt.aggregate_per_entity(lazy(visits), id="subject", time="checkin", how="last",
                                         outcome=["arrest", "week"])
        futures = distributed.futures_of(out)
        assert futures and all(f.status == "finished" for f in futures)
        assert len(out.compute()) == visits["subject"].nunique()


def test_parquet_inputs_count_their_rows_from_the_footers(tmp_path):
    from jupyter_dcpilot.inputs import parquet_rows

    (tmp_path / "folder").mkdir()
    for i, n in enumerate((5, 7)):
        pd.DataFrame({"a": range(n)}).to_parquet(tmp_path / "folder" / f"part-{i}.parquet")
    pd.DataFrame({"a": range(3)}).to_parquet(tmp_path / "one.parquet")
    pd.DataFrame({"a": range(3)}).to_csv(tmp_path / "one.csv")
    assert parquet_rows([tmp_path / "folder", tmp_path / "one.parquet"]) == 15
    assert parquet_rows([tmp_path / "one.csv"]) is None


def test_a_lazy_test_frame_gets_the_train_test_shift_check_on_samples(visits):
    shifted = visits.assign(age=visits["age"] + 25)  # every test patient 25 years older
    eager = kt.diagnose(visits, target="arrest", time="week", test=shifted)
    lazy_d = kt.diagnose(lazy(visits), target="arrest", time="week", test=lazy(shifted))
    shift = next(f for f in lazy_d.findings if f.kind == "train_test_shift")
    assert key(shift) == key(next(f for f in eager.findings if f.kind == "train_test_shift"))
    assert "age" in shift.columns and shift.evidence["basis"] == "sample"
    assert "test:" in shift.evidence["sample"] and "diagnosis_incomplete" not in {f.kind for f in lazy_d.findings}


def test_the_lazy_target_check_sees_changed_values_without_row_labels(visits):
    df = lazy(visits)
    flipped = df.assign(arrest=1 - df["arrest"])
    failures, _ = validate_lazy(df, flipped, target="arrest", expect={"rows": "same"})
    assert [f["check"] for f in failures] == ["target_changed"]
    shuffled = lazy(visits.sample(frac=1.0, random_state=0))  # same values, other order: fine
    assert validate_lazy(df, shuffled, target="arrest", expect={"rows": "same"})[0] == []
    assert validate_lazy(df, flipped, target="arrest", expect={"rows": "same", "target_changes": True})[0] == []


@pytest.mark.parametrize("groups", [None, "pid"])
def test_a_split_of_a_parquet_folder_keeps_every_row_once(tmp_path, groups):
    """Read from Parquet, a frame and a projection of it (its id column) can be partitioned
    differently (the reader fuses partitions by the columns read): the split decides each
    partition's rows inside that partition, so no mask has to be aligned with the frame."""
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"pid": rng.integers(0, 300, 4000), "a": rng.normal(size=4000),
                          "b": rng.normal(size=4000), "y": rng.integers(0, 2, 4000)})
    dd.from_pandas(frame, npartitions=8).to_parquet(tmp_path / "p", write_index=False)
    df = dd.read_parquet(tmp_path / "p")
    train, test, report = kt.split(df, target="y", groups=groups)
    got_train, got_test = train.compute(), test.compute()
    assert len(got_train) + len(got_test) == len(frame) == report.details["train_rows"] + report.details["test_rows"]
    both = pd.concat([got_train, got_test]).sort_values(["pid", "a"]).reset_index(drop=True)
    pd.testing.assert_frame_equal(both, frame.sort_values(["pid", "a"]).reset_index(drop=True))
    assert 0.1 < report.details["test_share"] < 0.3
    if groups:
        assert not set(got_train["pid"]) & set(got_test["pid"])
