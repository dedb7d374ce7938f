"""CheckpointStore: restores really bring back old values, references stay cheap, spills reload."""

from __future__ import annotations

import json
import signal

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression

from kernel_tools import checkpoints
from kernel_tools.checkpoints import CheckpointError, CheckpointStore


def make_frame(n: int = 1000) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame(
        {
            "x": rng.normal(size=n),
            "y": rng.integers(0, 2, n),
            "city": rng.choice(["Oslo", "Lima"], n),
            "kind": pd.Categorical(rng.choice(["a", "b"], n)),
            "when": pd.date_range("2020-01-01", periods=n, freq="h"),
        }
    )


def mutate_replace_column(df):
    df["x"] = -1.0


def mutate_cell(df):
    df.loc[0, "x"] = 123.0
    df.loc[5:9, "city"] = "Paris"


def mutate_drop_inplace(df):
    df.drop(columns=["city", "kind"], inplace=True)


def mutate_whole_column_in_place(df):
    df.loc[:, "y"] = 7


def mutate_index_inplace(df):
    df.set_index("when", inplace=True)


MUTATIONS = [mutate_replace_column, mutate_cell, mutate_drop_inplace, mutate_whole_column_in_place,
             mutate_index_inplace]


@pytest.mark.parametrize("mutate", MUTATIONS)
@pytest.mark.parametrize("copy", ["auto", True])
def test_restore_undoes_in_place_changes(mutate, copy):
    ns = {"df": make_frame()}
    expected = ns["df"].copy(deep=True)
    store = CheckpointStore(ns)
    cp = store.save(["df"], "before step", copy=copy)
    mutate(ns["df"])
    assert not ns["df"].equals(expected)
    assert store.restore(cp) == ["df"]
    pd.testing.assert_frame_equal(ns["df"], expected)


@pytest.mark.parametrize("mutate", [mutate_replace_column, mutate_drop_inplace, mutate_index_inplace])
def test_reference_snapshot_undoes_structural_changes_without_copying(mutate):
    frame = make_frame()
    ns = {"df": frame}
    expected = frame.copy(deep=True)
    store = CheckpointStore(ns, copy_below=0)  # force the large-frame path on small data
    cp = store.save("df", "ref")
    assert store.list()[0]["bytes_copied"] == 0 and store.list()[0]["references"] == ["df"]
    mutate(frame)
    store.restore(cp)
    restored = ns["df"]
    pd.testing.assert_frame_equal(restored, expected)
    # rebuilt from the saved arrays, not from copies
    assert np.shares_memory(restored["y"].to_numpy(), expected["y"].to_numpy()) is False
    saved_y = store._checkpoints[cp].snapshots["df"].arrays[1]
    assert np.shares_memory(restored["y"].to_numpy(), saved_y)


def test_reference_snapshot_returns_the_same_object_when_untouched():
    frame = make_frame()
    ns = {"df": frame}
    store = CheckpointStore(ns, copy_below=0)
    cp = store.save("df")
    ns["df"] = frame.iloc[:10]  # rebinding the name is not an in-place change
    store.restore(cp)
    assert ns["df"] is frame


def test_reference_snapshot_refuses_to_restore_after_cell_write():
    frame = make_frame()
    ns = {"df": frame, "n": 1}
    store = CheckpointStore(ns, copy_below=0)
    cp = store.save(["df", "n"])
    frame.loc[3, "x"] = 99.0
    ns["n"] = 2
    assert store.list()[0]["intact"] is False
    with pytest.raises(CheckpointError, match="copy=True"):
        store.restore(cp)
    assert ns["n"] == 2 and ns["df"] is frame  # all or nothing


def test_spill_protects_a_reference_snapshot_against_cell_writes(tmp_path):
    frame = make_frame()
    expected = frame.copy(deep=True)
    ns = {"df": frame}
    store = CheckpointStore(ns, spill_dir=tmp_path, copy_below=0)
    cp = store.save("df")
    store.flush()  # once on disk, the spill holds the save-time values
    frame.loc[3, "x"] = 99.0
    store.restore(cp)
    pd.testing.assert_frame_equal(ns["df"], expected)


def test_names_created_after_save_are_removed():
    ns = {"df": make_frame(10)}
    store = CheckpointStore(ns)
    cp = store.save(["df", "train", "test"], "before split")
    assert store.list()[0]["absent"] == ["train", "test"]
    ns["train"], ns["test"] = ns["df"].iloc[:5], ns["df"].iloc[5:]
    assert store.restore(cp) == ["df", "train", "test"]
    assert "train" not in ns and "test" not in ns and "df" in ns


def test_restore_when_every_name_was_absent_at_save():
    ns: dict = {}
    store = CheckpointStore(ns)
    cp = store.save(["model"], "before fit")
    assert store.list()[0]["absent"] == ["model"]
    ns["model"] = LogisticRegression()
    ns["other"] = 1
    assert store.restore(cp) == ["model"]
    assert ns == {"other": 1}
    assert store.restore(cp) == ["model"]  # nothing to delete the second time: still fine
    assert ns == {"other": 1}


@pytest.mark.parametrize("reload", [False, True])
def test_restore_absent_names_with_spill_dir(tmp_path, reload):
    ns: dict = {"df": make_frame(10)}
    expected = ns["df"].copy()
    store = CheckpointStore(ns, spill_dir=tmp_path)
    cp_none = store.save(["model", "report"], "before fit")
    cp_some = store.save(["df", "train"], "before split")
    store.flush()
    if reload:
        ns = {"df": expected.iloc[:3].copy()}
        store = CheckpointStore.load(tmp_path, namespace=ns)
    ns["model"], ns["report"], ns["train"] = object(), object(), object()
    ns["df"] = ns["df"].iloc[:2]
    assert store.restore(cp_some) == ["df", "train"]
    pd.testing.assert_frame_equal(ns["df"], expected)
    assert "train" not in ns and "model" in ns
    assert store.restore(cp_none) == ["model", "report"]
    assert sorted(ns) == ["df"]


def test_other_variable_types_are_copied_and_restored():
    ns = {
        "n": 3,
        "items": [1, [2, 3]],
        "params": {"k": {"depth": 2}},
        "arr": np.arange(10.0),
        "model": LogisticRegression(C=1.0),
        "f": len,
    }
    store = CheckpointStore(ns)
    cp = store.save(list(ns))
    ns["n"] += 1
    ns["items"][1].append(4)
    ns["params"]["k"]["depth"] = 9
    ns["arr"][0] = -5
    ns["model"].set_params(C=10.0)
    store.restore(cp)
    assert ns["n"] == 3 and ns["items"] == [1, [2, 3]] and ns["params"] == {"k": {"depth": 2}}
    assert ns["arr"][0] == 0 and ns["model"].C == 1.0 and ns["f"] is len


def test_large_array_reference_detects_bulk_write():
    arr = np.arange(100_000.0)
    ns = {"arr": arr}
    store = CheckpointStore(ns, copy_below=0)
    cp = store.save("arr")
    arr[::2] = 0
    with pytest.raises(CheckpointError, match="arr"):
        store.restore(cp)


def test_series_reference_restores_after_rename():
    s = pd.Series(np.arange(50.0), name="dose")
    ns = {"s": s}
    store = CheckpointStore(ns, copy_below=0)
    cp = store.save("s")
    s.rename("other", inplace=True)
    store.restore(cp)
    assert ns["s"].name == "dose" and ns["s"].sum() == np.arange(50.0).sum()


def test_restore_twice_survives_mutation_of_the_restored_value():
    ns = {"df": make_frame(20)}
    expected = ns["df"].copy()
    store = CheckpointStore(ns)
    cp = store.save("df")
    store.restore(cp)
    ns["df"].loc[0, "x"] = 1e9
    store.restore(cp)
    pd.testing.assert_frame_equal(ns["df"], expected)


def test_list_is_json_safe_and_discard(tmp_path):
    ns = {"df": make_frame(10), "k": 1}
    store = CheckpointStore(ns)
    a = store.save("df", "first")
    b = store.save(["df", "k"], "second")
    entries = store.list()
    json.dumps(entries)
    assert [e["id"] for e in entries] == [a, b]
    first = entries[0]
    assert {"id", "label", "names", "created", "bytes_copied", "spilled"} <= set(first)
    assert first["label"] == "first" and first["names"] == ["df"] and first["spilled"] is False
    assert first["bytes_copied"] == ns["df"].memory_usage(index=True).sum()
    assert first["created"].endswith("+00:00")
    assert first["unverified"] == [] and first["intact"] is True
    store.discard(a)
    assert [e["id"] for e in store.list()] == [b]
    with pytest.raises(KeyError, match=a):
        store.restore(a)


def test_spill_and_reload_in_a_new_store(tmp_path):
    ns = {"df": make_frame(100), "params": {"alpha": 1}, "gen": (i for i in range(3))}
    expected = ns["df"].copy()
    store = CheckpointStore(ns, spill_dir=tmp_path)
    cp_df = store.save(["df", "params"], "clean")
    cp_gen = store.save(["gen", "later"], "with generator")
    store.flush()
    assert store.list()[0]["spilled"] is True and store.list()[0]["spill_note"] is None
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [f"{cp_df}.pkl", f"{cp_df}.json", f"{cp_gen}.pkl", f"{cp_gen}.json"]
    )

    fresh: dict = {"later": 1}  # a restarted kernel
    reloaded = CheckpointStore.load(tmp_path, namespace=fresh)
    assert [e["id"] for e in reloaded.list()] == [cp_df, cp_gen]
    assert reloaded.list()[0]["label"] == "clean" and reloaded.list()[0]["spilled"] is True
    reloaded.restore(cp_df)
    pd.testing.assert_frame_equal(fresh["df"], expected)
    assert fresh["params"] == {"alpha": 1}
    with pytest.raises(CheckpointError, match="gen"):
        reloaded.restore(cp_gen)
    reloaded.discard(cp_df)
    assert not (tmp_path / f"{cp_df}.pkl").exists()
    # the original store still restores the generator from memory
    store.restore(cp_gen)
    assert "later" not in ns and next(ns["gen"]) == 0


def test_bad_arguments(tmp_path):
    ns = {"df": make_frame(5)}
    store = CheckpointStore(ns)
    with pytest.raises(ValueError, match="not a valid variable name"):
        store.save(["df", "no such"])
    with pytest.raises(ValueError, match="non-empty"):
        store.save([])
    with pytest.raises(ValueError, match="copy"):
        store.save("df", copy="yes")
    with pytest.raises(TypeError, match="label"):
        store.save("df", label=3)
    with pytest.raises(TypeError, match="namespace"):
        CheckpointStore(namespace=[1])
    with pytest.raises(FileNotFoundError):
        CheckpointStore.load(tmp_path / "missing", namespace={})
    with pytest.raises(TypeError, match="id"):
        store.restore(1)
    assert store.list() == []


def test_default_namespace_needs_ipython(monkeypatch):
    import IPython

    # outside IPython (another test in this process may have made a shell)
    monkeypatch.setattr(IPython, "get_ipython", lambda: None)
    with pytest.raises(RuntimeError, match="namespace="):
        CheckpointStore()
    with pytest.raises(RuntimeError, match="namespace="):
        checkpoints.store()


def test_default_store_lives_on_the_ipython_namespace(monkeypatch, tmp_path):
    from IPython.core.interactiveshell import InteractiveShell

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))  # where it spills by default

    shell = InteractiveShell.instance()
    try:
        shell.user_ns["frame"] = make_frame(5)
        default = checkpoints.store()
        assert default is checkpoints.store() and default.namespace is shell.user_ns
        cp = default.save("frame")
        shell.user_ns["frame"] = None
        default.restore(cp)
        assert isinstance(shell.user_ns["frame"], pd.DataFrame)
    finally:
        InteractiveShell.clear_instance()
        checkpoints._default_store = None


@pytest.mark.parametrize(
    "column, value",
    [("x", 0.5), ("y", 5), ("city", "Rome"), ("kind", None), ("when", pd.Timestamp("1999-01-01")),
     ("count", 3)],
)
def test_full_check_catches_a_single_unsampled_cell_write(column, value):
    frame = make_frame(20_000)
    frame["count"] = pd.array(np.arange(20_000), dtype="Int64")
    row = 10_002  # not one of the sampled rows
    assert row not in set(checkpoints._sample_positions(len(frame)).tolist())
    if value is None:  # the other category
        value = "a" if frame.loc[row, column] == "b" else "b"
    ns = {"df": frame}
    store = CheckpointStore(ns, copy_below=0)  # reference, verified exactly (small frame)
    cp = store.save("df")
    frame.loc[row, column] = value
    assert frame.loc[row, column] == value
    assert store.list()[0]["intact"] is True  # the quick sampled check cannot see it...
    with pytest.raises(CheckpointError, match="changed in place"):
        store.restore(cp)  # ...the full check at restore does


def test_full_check_sees_values_moved_within_a_column():
    arr = np.arange(100_000.0)
    ns = {"arr": arr}
    store = CheckpointStore(ns, copy_below=0)
    cp = store.save("arr")
    arr[[100, 99_000]] = arr[[99_000, 100]]  # same sum, different order
    with pytest.raises(CheckpointError):
        store.restore(cp)


def test_large_references_are_listed_as_unverified():
    ns = {"df": make_frame(20_000), "n": 1}
    store = CheckpointStore(ns, copy_below=0, verify_below=0)  # as a frame above 256 MiB
    store.save(["df", "n"])
    entry = store.list()[0]
    assert entry["references"] == ["df", "n"] and entry["unverified"] == ["df"]


def test_untouched_reference_passes_the_full_check():
    frame = make_frame(20_000)
    ns = {"df": frame}
    store = CheckpointStore(ns, copy_below=0)
    cp = store.save("df")
    frame.loc[0, "x"] = frame.loc[0, "x"]  # same bytes written back
    store.restore(cp)
    assert ns["df"] is frame


def test_aliases_stay_aliased_and_are_copied_once():
    frame = make_frame(100)
    ns = {"df": frame, "raw": frame}
    store = CheckpointStore(ns)
    cp = store.save(["df", "raw"])
    assert store.list()[0]["bytes_copied"] == frame.memory_usage(index=True).sum()
    frame.loc[0, "x"] = 5.0
    store.restore(cp)
    assert ns["df"] is ns["raw"] and ns["df"] is not frame
    assert ns["df"].loc[0, "x"] != 5.0


def test_copy_true_on_an_uncopyable_object_names_it():
    ns = {"gen": (i for i in range(3))}
    store = CheckpointStore(ns)
    with pytest.raises(TypeError, match="cannot copy 'gen'"):
        store.save("gen", copy=True)
    cp = store.save("gen")  # auto keeps a reference
    assert store.list()[0]["references"] == ["gen"]
    assert store.list()[0]["unverified"] == ["gen"]
    store.restore(cp)


def test_arrow_backed_column_swap_is_detected():
    pytest.importorskip("pyarrow")
    frame = pd.DataFrame({"s": pd.array([f"v{i}" for i in range(20_000)], dtype="string[pyarrow]")})
    ns = {"df": frame}
    store = CheckpointStore(ns, copy_below=0)
    cp = store.save("df")
    frame.loc[10_002, "s"] = "changed"
    with pytest.raises(CheckpointError):
        store.restore(cp)


class _InterruptedCopy:
    """Once armed, its copy is where Kernel → Interrupt lands: a SIGINT in the middle of a restore."""

    armed = False

    def __deepcopy__(self, memo: dict) -> _InterruptedCopy:
        if _InterruptedCopy.armed:
            signal.raise_signal(signal.SIGINT)
        return _InterruptedCopy()


@pytest.fixture
def sigint_raises():
    """SIGINT raises KeyboardInterrupt, as in a kernel running a cell; an earlier test in the same
    process may have started an in-process ipykernel, which ignores SIGINT (between its messages)."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, before)


def test_an_interrupt_during_a_restore_is_delivered_once_it_is_whole(monkeypatch, sigint_raises):
    ns = {"df": pd.DataFrame({"a": [1, 2], "b": [3, 4]}), "z": _InterruptedCopy()}
    store = CheckpointStore(ns)
    cp = store.save(["df", "z", "new"])
    ns.update(df=ns["df"].drop(columns=["a"]), new=1)
    monkeypatch.setattr(_InterruptedCopy, "armed", True)
    with pytest.raises(KeyboardInterrupt):  # delivered, after the restore
        store.restore(cp)
    assert list(ns["df"].columns) == ["a", "b"] and "new" not in ns  # whole: nothing half put back
    assert isinstance(ns["z"], _InterruptedCopy)
