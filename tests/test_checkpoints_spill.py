"""Checkpoint spills: written in the background, private to the user, bounded in size, never a
reason for a save to fail; the kernel's default store spills by default and reloads after a
restart (real kernels in test_checkpoints_kernel.py)."""

from __future__ import annotations

import errno
import json
import os
import stat
import threading
import time

import numpy as np
import pandas as pd
import pytest

from kernel_tools import checkpoints
from kernel_tools.checkpoints import (
    DEFAULT_SPILL_BUDGET,
    DEFAULT_SPILL_LIMIT,
    CheckpointError,
    CheckpointStore,
    spill_settings,
)


def make_frame(n: int = 2000, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"x": rng.normal(size=n), "y": rng.integers(0, 2, n),
                         "city": rng.choice(["Oslo", "Lima", "Pune"], n)})


def files(folder) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def state(folder, checkpoint_id: str) -> str:
    """The state of a checkpoint's record on disk (writing, written, memory_only)."""
    return json.loads((folder / f"{checkpoint_id}.json").read_text())["state"]


@pytest.mark.parametrize("copy_below", [checkpoints.DEFAULT_COPY_BELOW, 0])  # copied / referenced
def test_spilled_files_are_private_and_reload(tmp_path, copy_below):
    folder = tmp_path / "spill"
    frame = make_frame()
    ns = {"df": frame, "raw": frame, "k": 3}
    store = CheckpointStore(ns, spill_dir=folder, copy_below=copy_below)
    cp = store.save(["df", "raw", "k"], "before")
    store.flush()
    assert files(folder) == [f"{cp}.json", f"{cp}.pkl"]
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    for path in folder.iterdir():
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path.name
    fresh: dict = {}
    CheckpointStore.load(folder, fresh).restore(cp)
    pd.testing.assert_frame_equal(fresh["df"], frame)
    assert fresh["df"] is fresh["raw"] and fresh["k"] == 3  # aliases stay aliases


def test_files_stay_private_under_a_permissive_umask(tmp_path):
    old = os.umask(0)
    try:
        store = CheckpointStore({"df": make_frame(50)}, spill_dir=tmp_path / "s", spill_in_background=False)
        cp = store.save("df")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "s" / f"{cp}.pkl").stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "s").stat().st_mode) == 0o700


def test_size_limit_keeps_large_checkpoints_in_memory_only(tmp_path):
    small, large = make_frame(100), make_frame(20_000)
    ns = {"small": small, "large": large}
    limit = 100_000  # the large frame is ~480 kB of numbers
    store = CheckpointStore(ns, spill_dir=tmp_path, spill_limit=limit)
    cp_small = store.save("small")
    cp_large = store.save("large")
    store.flush()
    info = {e["id"]: e for e in store.list()}
    assert info[cp_small]["spilled"] is True and info[cp_small]["spill_note"] is None
    assert info[cp_large]["spilled"] is False
    assert "spill limit" in info[cp_large]["spill_note"] and "MiB" in info[cp_large]["spill_note"]
    # the large one has only its record: a restarted kernel can say why its values are gone
    assert files(tmp_path) == sorted([f"{cp_small}.json", f"{cp_small}.pkl", f"{cp_large}.json"])
    assert state(tmp_path, cp_large) == "memory_only" and state(tmp_path, cp_small) == "written"
    ns["large"] = None
    store.restore(cp_large)  # still restorable from memory
    pd.testing.assert_frame_equal(ns["large"], large)


def test_size_limit_also_counts_what_only_pickling_reveals(tmp_path):
    # object columns look small to memory_usage(deep=False) (pointers), not once pickled
    texts = pd.DataFrame({"note": [f"free text {i} " * 20 for i in range(3000)]})
    shallow = int(texts.memory_usage(deep=False).sum())
    store = CheckpointStore({"texts": texts}, spill_dir=tmp_path, spill_limit=shallow * 4)
    cp = store.save("texts")
    store.flush()
    entry = store.list()[0]
    assert entry["spilled"] is False and "once pickled" in entry["spill_note"]
    assert files(tmp_path) == [f"{cp}.json"]  # the partial file is gone, the record says why
    assert state(tmp_path, cp) == "memory_only"


def test_an_unwritable_folder_never_fails_the_save(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    ns = {"df": make_frame(100)}
    store = CheckpointStore(ns, spill_dir=blocker / "spill")
    cp = store.save("df", "before")  # no exception
    store.flush()
    entry = store.list()[0]
    assert entry["spilled"] is False and "not kept on disk" in entry["spill_note"]
    ns["df"] = None
    store.restore(cp)
    assert ns["df"].shape == (100, 3)


def test_a_full_disk_never_fails_the_save_and_leaves_no_partial_file(tmp_path, monkeypatch):
    real = checkpoints._write_spill

    def disk_full(path, values, limit):
        path.write_bytes(b"partial")
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(checkpoints, "_write_spill", disk_full)
    store = CheckpointStore({"df": make_frame(100)}, spill_dir=tmp_path)
    first = store.save("df")
    store.flush()
    assert "No space left on device" in store.list()[0]["spill_note"]
    assert files(tmp_path) == [f"{first}.json"] and state(tmp_path, first) == "memory_only"
    monkeypatch.setattr(checkpoints, "_write_spill", real)
    cp = store.save("df")  # the disk has room again
    store.flush()
    assert store.list()[1]["spilled"] is True and f"{cp}.pkl" in files(tmp_path)
    reloaded = CheckpointStore.load(tmp_path, {})  # the kernel died: the first is gone, and says why
    with pytest.raises(CheckpointError, match="kept in memory only.*No space left"):
        reloaded.restore(first)


def held_writes(monkeypatch) -> threading.Event:
    """Spill writes wait (up to 10 s) until the returned event is set."""
    release = threading.Event()
    real = checkpoints._write_spill

    def slow(path, values, limit):
        release.wait(10)
        return real(path, values, limit)

    monkeypatch.setattr(checkpoints, "_write_spill", slow)
    return release


def test_the_save_does_not_wait_for_the_write(tmp_path, monkeypatch):
    release = held_writes(monkeypatch)
    store = CheckpointStore({"df": make_frame(100)}, spill_dir=tmp_path)
    started = time.perf_counter()
    cp = store.save("df")
    assert time.perf_counter() - started < 5
    assert store.list()[0]["spill_note"] == "being written" and store.list()[0]["spilled"] is False
    release.set()
    store.flush()
    assert store.list()[0]["spilled"] is True and f"{cp}.pkl" in files(tmp_path)


def test_discard_while_being_written_deletes_the_files(tmp_path, monkeypatch):
    release = held_writes(monkeypatch)
    store = CheckpointStore({"df": make_frame(100)}, spill_dir=tmp_path)
    first = store.save("df")
    second = store.save("df")  # queued behind the first
    threading.Timer(0.3, release.set).start()
    store.discard(first)
    store.discard(second)
    store.flush()
    assert files(tmp_path) == [] and len(store) == 0


def test_a_write_into_the_data_while_it_is_spilled_drops_the_spill(tmp_path, monkeypatch):
    frame = make_frame(5000)
    ns = {"df": frame}
    real = checkpoints._write_spill

    def write_meanwhile(path, values, limit):
        out = real(path, values, limit)
        frame.loc[7, "x"] = 1e9  # the next cell writes in place while the spill is written
        return out

    monkeypatch.setattr(checkpoints, "_write_spill", write_meanwhile)
    store = CheckpointStore(ns, spill_dir=tmp_path, copy_below=0)  # a reference snapshot
    cp = store.save("df")
    store.flush()
    entry = store.list()[0]
    assert entry["spilled"] is False and "changed in place while being written" in entry["spill_note"]
    assert files(tmp_path) == [f"{cp}.json"] and state(tmp_path, cp) == "memory_only"
    with pytest.raises(CheckpointError, match="changed in place"):
        store.restore(cp)  # refused, never restored wrong


def test_structural_changes_after_save_do_not_reach_the_spill(tmp_path):
    frame = make_frame(5000)
    expected = frame.copy(deep=True)
    ns = {"df": frame}
    store = CheckpointStore(ns, spill_dir=tmp_path, copy_below=0)
    cp = store.save("df")
    frame["x"] = 0.0  # replaces a column of the live object, maybe before the spill ran
    frame.drop(columns=["city"], inplace=True)
    store.flush()
    fresh: dict = {}
    CheckpointStore.load(tmp_path, fresh).restore(cp)
    pd.testing.assert_frame_equal(fresh["df"], expected)


def test_spill_settings_from_the_environment(tmp_path, monkeypatch):
    assert spill_settings({}) == (None, DEFAULT_SPILL_LIMIT, DEFAULT_SPILL_BUDGET)  # not a kernel
    root = tmp_path / "cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(root))
    monkeypatch.setattr(checkpoints, "_kernel_key", lambda: "kernel-1234")  # inside a kernel
    spill_dir, limit, budget = spill_settings({})
    assert (limit, budget) == (DEFAULT_SPILL_LIMIT, DEFAULT_SPILL_BUDGET) == (512 * 2**20, 2 * 2**30)
    assert spill_dir == root / "kernel_tools" / "checkpoints" / "kernel-1234"  # the user's cache, not /tmp
    assert spill_settings({"KERNEL_TOOLS_SPILL_DIR": "off"})[0] is None
    assert spill_settings({"KERNEL_TOOLS_SPILL_DIR": str(tmp_path / "x")})[0] == tmp_path / "x"
    for raw, expected in (("2GiB", 2 * 2**30), ("100 MB", 100 * 10**6), ("1048576", 2**20),
                          ("1.5mib", int(1.5 * 2**20)), ("none", None)):
        assert spill_settings({"KERNEL_TOOLS_SPILL_LIMIT": raw})[1] == expected, raw
    assert spill_settings({"KERNEL_TOOLS_SPILL_BUDGET": "10GiB"})[2] == 10 * 2**30
    with pytest.raises(ValueError, match="KERNEL_TOOLS_SPILL_LIMIT"):
        spill_settings({"KERNEL_TOOLS_SPILL_LIMIT": "lots"})
    with pytest.raises(ValueError, match="KERNEL_TOOLS_SPILL_BUDGET"):
        spill_settings({"KERNEL_TOOLS_SPILL_BUDGET": "-1"})
    with pytest.raises(ValueError, match="spill_limit"):
        CheckpointStore({}, spill_limit=-1)


def test_the_default_store_spills_to_the_user_cache_and_survives_a_restart(tmp_path, monkeypatch):
    from IPython.core.interactiveshell import InteractiveShell

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("KERNEL_TOOLS_SPILL_DIR", raising=False)
    monkeypatch.setattr(checkpoints, "_default_store", None)
    monkeypatch.setattr(checkpoints, "_kernel_key", lambda: "kernel-1234")  # as in a kernel
    shell = InteractiveShell.instance()
    try:
        frame = make_frame(300)
        shell.user_ns["df"] = frame
        cp = checkpoints.store().save("df", "before a step")
        checkpoints.store().flush()
        folder = tmp_path / "kernel_tools" / "checkpoints" / "kernel-1234"
        assert f"{cp}.pkl" in files(folder)
        # the kernel restarts: a new namespace without df, the same spill folder
        InteractiveShell.clear_instance()
        shell = InteractiveShell.instance()
        assert "df" not in shell.user_ns
        restarted = checkpoints.store()
        assert restarted.list()[0]["id"] == cp and restarted.list()[0]["spilled"] is True
        restarted.restore(cp)
        pd.testing.assert_frame_equal(shell.user_ns["df"], frame)
    finally:
        InteractiveShell.clear_instance()


def test_the_default_store_can_be_turned_off(monkeypatch, tmp_path):
    from IPython.core.interactiveshell import InteractiveShell

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv("KERNEL_TOOLS_SPILL_DIR", "off")
    monkeypatch.setattr(checkpoints, "_default_store", None)
    monkeypatch.setattr(checkpoints, "_kernel_key", lambda: "kernel-1234")
    shell = InteractiveShell.instance()
    try:
        shell.user_ns["df"] = make_frame(10)
        checkpoints.store().save("df")
        assert checkpoints.store().spill_dir is None and checkpoints.store().list()[0]["spilled"] is False
        assert not (tmp_path / "kernel_tools").exists()
    finally:
        InteractiveShell.clear_instance()


def test_old_spill_folders_of_other_kernels_are_pruned(tmp_path):
    root = tmp_path / "checkpoints"
    mine, old, recent = root / "kernel-mine", root / "kernel-old", root / "kernel-recent"
    for folder in (mine, old, recent):
        folder.mkdir(parents=True)
        (folder / "cp-1.pkl").write_bytes(b"x")
    week_ago = time.time() - 8 * 86400
    os.utime(old / "cp-1.pkl", (week_ago, week_ago))
    os.utime(mine / "cp-1.pkl", (week_ago, week_ago))
    checkpoints._prune_spilled(root, mine, 7 * 86400)
    assert sorted(p.name for p in root.iterdir()) == ["kernel-mine", "kernel-recent"]


def test_a_corrupt_entry_is_skipped_on_reload(tmp_path):
    store = CheckpointStore({"df": make_frame(20)}, spill_dir=tmp_path)
    cp = store.save("df")
    store.flush()
    (tmp_path / "cp-broken.json").write_text("{not json")
    (tmp_path / "cp-broken.pkl").write_bytes(b"")
    assert [e["id"] for e in CheckpointStore.load(tmp_path, {}).list()] == [cp]


def test_the_budget_drops_the_oldest_spills_first(tmp_path):
    ns = {"df": make_frame(10_000)[["x", "y"]]}  # numbers: 160 kB in memory and on disk
    store = CheckpointStore(ns, spill_dir=tmp_path, spill_budget=400_000)
    ids = []
    for i in range(4):
        ids.append(store.save("df", f"step {i}"))
        store.flush()
    info = {e["id"]: e for e in store.list()}
    kept = [i for i in ids if info[i]["spilled"]]
    assert kept == ids[-2:]  # the newest matter most after a crash
    assert "dropped from disk" in info[ids[0]]["spill_note"] and info[ids[2]]["spill_note"] is None
    assert sum(p.stat().st_size for p in tmp_path.iterdir()) <= 400_000
    assert files(tmp_path) == sorted([f"{i}.json" for i in ids] + [f"{i}.pkl" for i in kept])
    assert [state(tmp_path, i) for i in ids] == ["memory_only"] * 2 + ["written"] * 2
    ns["df"] = None
    store.restore(ids[0])  # dropped from disk only: memory still has it
    assert ns["df"].shape == (10_000, 2)


@pytest.mark.parametrize("copy_below", [checkpoints.DEFAULT_COPY_BELOW, 0])
def test_every_column_kind_reloads_from_disk(tmp_path, copy_below):
    n = 300
    frame = pd.DataFrame({
        "x": np.linspace(0, 1, n),
        "kind": pd.Categorical(np.where(np.arange(n) % 3 == 0, "a", "b")),
        "when": pd.date_range("2021-01-01", periods=n, freq="D", tz="Europe/Oslo"),
        "count": pd.array(np.where(np.arange(n) % 7 == 0, None, np.arange(n)), dtype="Int64"),
        "text": pd.array([f"t{i}" for i in range(n)], dtype="string[pyarrow]"),
    }, index=pd.Index(np.arange(n) * 2, name="row"))
    frame.attrs["source"] = "survey"
    series = frame["x"].rename("dose")
    store = CheckpointStore({"df": frame, "s": series}, spill_dir=tmp_path, copy_below=copy_below)
    cp = store.save(["df", "s"])
    store.flush()
    fresh: dict = {}
    CheckpointStore.load(tmp_path, fresh).restore(cp)
    pd.testing.assert_frame_equal(fresh["df"], frame)
    pd.testing.assert_series_equal(fresh["s"], series)
    assert fresh["df"].attrs == {"source": "survey"}


def test_an_older_spill_is_dropped_for_room_only_once_the_new_one_is_written(tmp_path, monkeypatch):
    ns = {"df": make_frame(10_000)[["x", "y"]]}  # 160 kB: the budget holds one spill
    store = CheckpointStore(ns, spill_dir=tmp_path, spill_budget=250_000)
    first = store.save("df", "step 1")
    store.flush()
    release = held_writes(monkeypatch)
    second = store.save("df", "step 2")
    # the kernel could die now: the older copy on disk must still be there
    assert f"{first}.pkl" in files(tmp_path) and state(tmp_path, second) == "writing"
    release.set()
    store.flush()
    assert f"{first}.pkl" not in files(tmp_path) and state(tmp_path, second) == "written"
    assert state(tmp_path, first) == "memory_only"  # restorable from memory, and says so on disk


def test_a_checkpoint_cut_short_on_disk_is_listed_after_a_reload_and_says_what_is_gone(tmp_path, monkeypatch):
    store = CheckpointStore({"df": make_frame(100), "k": 1}, spill_dir=tmp_path)
    kept = store.save("df", "before s1")
    store.flush()
    held_writes(monkeypatch)  # never released: the kernel "dies" during this write
    cut = store.save(["df", "k"], "before s2")
    reloaded = CheckpointStore.load(tmp_path, {})
    entry = {e["id"]: e for e in reloaded.list()}[cut]
    assert entry["spilled"] is False and "being written to disk" in entry["lost"]
    problem = reloaded.problem(cut)
    assert "df, k as they were then are gone" in problem and f"{kept} (before s1)" in problem
    with pytest.raises(CheckpointError, match="being written to disk"):
        reloaded.restore(cut)
    assert reloaded.problem(kept) is None
