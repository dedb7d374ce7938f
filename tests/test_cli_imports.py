"""The command line checks its inputs before it starts the kernel, without pandas (issue 31): the
checks read the named columns with pyarrow, and pandas' import (~1 s of CPU) would delay the
kernel's start. Run in a fresh Python process: what matters is what that process imports."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow.csv as pcsv
import pyarrow.parquet as pq
import pytest


@pytest.mark.parametrize("suffix", ["csv", "parquet"])
def test_checking_a_survival_tables_inputs_imports_no_pandas(tmp_path, suffix):
    """CSV and Parquet alike (pyarrow's read_table goes through pyarrow.dataset, which imports pandas)."""
    rng = np.random.default_rng(0)
    lines = ["id,days,died,age"] + [f"{i},{rng.exponential(100):.1f},{int(rng.random() < 0.5)},{rng.normal(50, 9):.0f}"
                                    for i in range(200)]
    (tmp_path / "cohort.csv").write_text("\n".join(lines) + "\n")
    (tmp_path / "never.csv").write_text("days,died\n0,1\n-2,0\n0,1\n")
    if suffix == "parquet":
        for name in ("cohort", "never"):
            pq.write_table(pcsv.read_csv(tmp_path / f"{name}.csv"), tmp_path / f"{name}.parquet")
    code = f"""
import json, sys
from pathlib import Path
from jupyter_dcpilot.inputs import InputError, check_run_inputs
check_run_inputs([Path({str(tmp_path / f'cohort.{suffix}')!r})], target="died", time="days")
try:
    check_run_inputs([Path({str(tmp_path / f'never.{suffix}')!r})], target="died", time="days")
    refused = ""
except InputError as error:
    refused = str(error)
print(json.dumps({{"pandas": "pandas" in sys.modules, "refused": refused}}))
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    state = json.loads(done.stdout.strip().splitlines()[-1])
    assert state["pandas"] is False
    assert "--time 'days' has no positive value" in state["refused"]  # the check still refuses


def test_a_headless_run_draws_its_cards_charts_without_pandas_or_the_detectors(tmp_path):
    """The chart kind comes with each finding from the kernel (where the detectors are loaded):
    the command line's process draws the decision cards' charts without importing the detectors'
    registry, nor pandas with it (~3.4 s of CPU on a 1,000-row table, issue 31)."""
    from jupyter_dcpilot.engine.demo import demo_frame

    data = tmp_path / "rossi.csv"
    demo_frame().drop_duplicates("subject").head(200).to_csv(data, index=False)
    code = f"""
import json, sys
from jupyter_dcpilot.cli import main
code = main(["run", {str(data)!r}, "--target", "arrest", "--time", "week", "--approve", "recommended",
             "--out", {str(tmp_path / 'out')!r}])
print(json.dumps({{"code": code, "pandas": "pandas" in sys.modules,
                  "registry": "kernel_tools.diagnosis.registry" in sys.modules}}))
"""
    root = str(Path(__file__).resolve().parents[1])  # this tree's packages, in the kernel too
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    state = json.loads(done.stdout.strip().splitlines()[-1])
    assert state == {"code": 0, "pandas": False, "registry": False}, done.stderr
    sidecar = json.loads((tmp_path / "out" / ".notebook.ipynb.dcpilot.json").read_text())
    charts = {d["gate"]: d["chart"] for d in sidecar["decisions"] if d.get("chart")}
    assert {"leakage", "imputation", "outliers"} <= set(charts), charts  # the cards' charts drawn all the same
    assert all(chart["bars"] for chart in charts.values())
    assert "<svg" in (tmp_path / "out" / "report.html").read_text()
