"""The command line checks its inputs before it starts the kernel, without pandas (issue 31): the
checks read the named columns with pyarrow, and pandas' import (~1 s of CPU) would delay the
kernel's start. Run in a fresh Python process: what matters is what that process imports."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np


def test_checking_a_survival_tables_inputs_imports_no_pandas(tmp_path):
    rng = np.random.default_rng(0)
    lines = ["id,days,died,age"] + [f"{i},{rng.exponential(100):.1f},{int(rng.random() < 0.5)},{rng.normal(50, 9):.0f}"
                                    for i in range(200)]
    (tmp_path / "cohort.csv").write_text("\n".join(lines) + "\n")
    (tmp_path / "never.csv").write_text("days,died\n0,1\n-2,0\n0,1\n")
    code = f"""
import json, sys
from pathlib import Path
from jupyter_dcpilot.inputs import InputError, check_run_inputs
check_run_inputs([Path({str(tmp_path / 'cohort.csv')!r})], target="died", time="days")
try:
    check_run_inputs([Path({str(tmp_path / 'never.csv')!r})], target="died", time="days")
    refused = ""
except InputError as error:
    refused = str(error)
print(json.dumps({{"pandas": "pandas" in sys.modules, "refused": refused}}))
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    state = json.loads(done.stdout.strip().splitlines()[-1])
    assert state["pandas"] is False
    assert "--time 'days' has no positive value" in state["refused"]  # the check still refuses
