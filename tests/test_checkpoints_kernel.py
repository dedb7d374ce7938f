"""A real kernel killed after a checkpoint: the restarted kernel's default store brings the
variables back from the spill it wrote by default (no configuration)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import stat

import pytest
from copilot_runs import kernel_value, start_host

from jupyter_dcpilot.probe import ProbeError, probe_expression

pytestmark = pytest.mark.timeout(120)

FRAME = """
import numpy as np, pandas as pd
rng = np.random.default_rng(0)
df = pd.DataFrame({"age": rng.normal(45, 12, 500).round(), "city": rng.choice(["Oslo", "Lima"], 500),
                   "churned": rng.integers(0, 2, 500)})
expected = [list(df.columns), len(df), float(df["age"].sum()), int((df["city"] == "Oslo").sum())]
"""
SUMMARY = '[list(df.columns), len(df), float(df["age"].sum()), int((df["city"] == "Oslo").sum())]'


def record_state(folder, checkpoint_id: str) -> str | None:
    """The state of a checkpoint's record on disk (writing, written, memory_only), if any."""
    try:
        return json.loads((folder / f"{checkpoint_id}.json").read_text())["state"]
    except (OSError, ValueError):
        return None


async def spilled(folder, checkpoint_id: str, timeout: float = 20.0, want: str = "written") -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while record_state(folder, checkpoint_id) != want:
        assert loop.time() < deadline, f"{checkpoint_id} was never {want} in {folder}"
        await asyncio.sleep(0.05)


async def kill(host) -> None:
    os.kill(host._km.provisioner.pid, signal.SIGKILL)  # as the OOM killer would
    for _ in range(100):
        if not await host._km.is_alive():
            break
        await asyncio.sleep(0.05)
    assert not await host._km.is_alive()
    await host._km.restart_kernel(now=True)
    await host._kc.wait_for_ready(timeout=60)


@pytest.mark.slow
async def test_a_killed_kernel_restores_its_spilled_checkpoint_after_restart(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # the kernel inherits it
    monkeypatch.delenv("KERNEL_TOOLS_SPILL_DIR", raising=False)
    monkeypatch.delenv("KERNEL_TOOLS_SPILL_LIMIT", raising=False)
    host = await start_host(tmp_path, FRAME)
    try:
        expected = await kernel_value(host, "expected")
        saved = await host.evaluate(probe_expression("checkpoint_save_json", ["df", "train"], "before s1"))
        checkpoint_id = saved["id"]
        key = os.path.splitext(os.path.basename(host._km.connection_file))[0]
        folder = tmp_path / "cache" / "kernel_tools" / "checkpoints" / key
        await spilled(folder, checkpoint_id)
        modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in folder.iterdir()}
        await host.run_cell("df = df.drop(columns=['age']).iloc[:10]\ntrain = df", {})

        await kill(host)
        assert await kernel_value(host, "'df' in globals()") is False

        restored = await host.evaluate(probe_expression("checkpoint_restore_json", checkpoint_id))
        summary = await kernel_value(host, SUMMARY)
        train_gone = await kernel_value(host, "'train' not in globals()")
    finally:
        await host.stop()
    assert modes == {f"{checkpoint_id}.pkl": 0o600, f"{checkpoint_id}.json": 0o600}
    assert restored == {"restored": ["df", "train"]}
    assert summary == expected and train_gone is True


async def test_an_unwritable_spill_folder_never_fails_the_checkpoint(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("a file where the folder should be: every write fails, as on a full disk")
    monkeypatch.setenv("KERNEL_TOOLS_SPILL_DIR", str(blocker / "spill"))
    host = await start_host(tmp_path, FRAME)
    try:
        saved = await host.evaluate(probe_expression("checkpoint_save_json", ["df"], "before s1"))
        await host.run_cell("import kernel_tools.checkpoints as _c; _c.store().flush()\ndf = df.iloc[:3]", {})
        listed = await host.evaluate(probe_expression("checkpoint_list_json"))
        restored = await host.evaluate(probe_expression("checkpoint_restore_json", saved["id"]))
        rows = await kernel_value(host, "len(df)")
    finally:
        await host.stop()
    assert saved["saved"] == ["df"] and restored == {"restored": ["df"]} and rows == 500
    (entry,) = listed
    assert entry["spilled"] is False and "not kept on disk" in entry["spill_note"]


# the spill thread of the kernel's store stalls (a slow disk), so the kernel dies mid-write
STALL_SPILLS = """
import kernel_tools.checkpoints as _c, time as _t
_real_write = _c._write_spill
def _stalled(path, values, limit):
    path.write_bytes(b"the first bytes of a pickle")
    _t.sleep(120)
    return _real_write(path, values, limit)
_c._write_spill = _stalled
"""


async def test_a_kernel_killed_while_spilling_says_what_is_gone_and_keeps_the_older_spill(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("KERNEL_TOOLS_SPILL_DIR", raising=False)
    host = await start_host(tmp_path, FRAME)
    try:
        expected = await kernel_value(host, "expected")
        first = (await host.evaluate(probe_expression("checkpoint_save_json", ["df"], "before s1")))["id"]
        key = os.path.splitext(os.path.basename(host._km.connection_file))[0]
        folder = tmp_path / "cache" / "kernel_tools" / "checkpoints" / key
        await spilled(folder, first)
        # room for one spill only: the second must push the first out, but only once it is written
        size = (folder / f"{first}.pkl").stat().st_size
        await host.run_cell(STALL_SPILLS + f"_c.store().spill_budget = {size + size // 2}\n"
                            "df = df.iloc[:10]", {})
        second = (await host.evaluate(probe_expression("checkpoint_save_json", ["df"], "before s2")))["id"]
        await spilled(folder, second, want="writing")
        while not (folder / f"{second}.pkl.tmp").exists():  # the write is under way
            await asyncio.sleep(0.05)
        await kill(host)
        problem = (await host.evaluate(probe_expression("checkpoint_problem_json", second)))["problem"]
        with pytest.raises(ProbeError) as refused:
            await host.evaluate(probe_expression("checkpoint_restore_json", second))
        restored = await host.evaluate(probe_expression("checkpoint_restore_json", first))
        summary = await kernel_value(host, SUMMARY)
        leftovers = sorted(p.name for p in folder.iterdir())
    finally:
        await host.stop()
    assert "being written to disk" in problem and "df" in problem
    assert f"can be restored: {first} (before s1)" in problem  # what is left, by name
    assert refused.value.ename == "CheckpointError" and "being written to disk" in str(refused.value)
    assert restored == {"restored": ["df"]} and summary == expected
    assert f"{second}.pkl.tmp" not in leftovers  # the write cut short is cleaned up
