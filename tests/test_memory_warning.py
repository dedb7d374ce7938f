"""A frame too large for an in-memory run is said to be so before the kernel runs out of memory."""

from __future__ import annotations

import json
import types

import IPython
import numpy as np
import pandas as pd
from engine_fakes import FakeKernel, FakeNotebook, churn_diagnosis

from jupyter_dcpilot.engine.coordinator import ApprovalPolicy, Coordinator
from jupyter_dcpilot.engine.memory import RUN_PEAK, memory_warning
from jupyter_dcpilot.engine.session import Session
from jupyter_dcpilot.engine.task import Given, Inputs, Task
from jupyter_dcpilot.probe import probe_expression

GIB = 2 ** 30


def test_the_warning_compares_the_measured_peak_with_the_memory_left():
    assert memory_warning("df", {"memory_bytes": 1 * GIB, "available_bytes": 16 * GIB}) is None
    assert memory_warning("df", {"memory_bytes": None, "available_bytes": 16 * GIB}) is None  # a lazy frame
    assert memory_warning("df", {}) is None
    text = memory_warning("df", {"memory_bytes": 4 * GIB, "available_bytes": 20 * GIB})
    assert 4 * RUN_PEAK > 20 and text is not None
    assert "'df' takes 4.0 GiB" in text and "20.0 GiB is left" in text and "--engine dask" in text


async def test_a_session_on_a_frame_too_large_warns_once(tmp_path):
    kernel = FakeKernel(churn_diagnosis(), memory=(5 * GIB, 12 * GIB))
    session = Session(notebook=str(tmp_path / "nb.ipynb"), path=str(tmp_path / ".nb.ipynb.dcpilot.json"),
                      task=Task(given=Given(target="y")), inputs=Inputs(frames=["df"]))
    session.variables["imports"] = True
    coordinator = Coordinator(session, kernel, FakeNotebook(kernel), policy=ApprovalPolicy.from_spec("recommended"))
    assert await coordinator.run_until_blocked() == "finished"
    tight = [w for w in session.warnings if "may run out of memory" in w]
    assert len(tight) == 1 and tight[0] in coordinator.report()["warnings"]
    roomy = FakeKernel(churn_diagnosis(), memory=(1 * GIB, 12 * GIB))
    other = Session(notebook=str(tmp_path / "b.ipynb"), path=str(tmp_path / ".b.ipynb.dcpilot.json"),
                    task=Task(given=Given(target="y")), inputs=Inputs(frames=["df"]))
    other.variables["imports"] = True
    await Coordinator(other, roomy, FakeNotebook(roomy), policy=ApprovalPolicy.from_spec("recommended")).run_until_blocked()
    assert not any("memory" in w for w in other.warnings)


def test_the_kernel_reports_a_frames_memory_with_its_text(monkeypatch):
    rng = np.random.default_rng(0)
    n = 20_000
    df = pd.DataFrame({"x": rng.normal(size=n), "note": [f"visit note {i} " * int(rng.integers(1, 6)) for i in range(n)],
                       "site": rng.choice(["Zürich", "Basel"], n)})
    monkeypatch.setattr(IPython, "get_ipython", lambda: types.SimpleNamespace(user_ns={"df": df}))
    info = json.loads(eval(probe_expression("frame_info_json", ["df"])))["df"]
    deep = int(df.memory_usage(deep=True).sum())
    assert abs(info["memory_bytes"] - deep) <= 0.05 * deep  # a sample of the strings, not every one
    assert info["memory_bytes"] > 2 * int(df.memory_usage(deep=False).sum())
    assert info["available_bytes"] > 0
