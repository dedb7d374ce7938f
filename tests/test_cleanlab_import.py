"""cleanlab is imported without HuggingFace datasets (kernel_tools/cleanlab_import.py): the label
checks work, Datalab comes back on first access, and a survival diagnosis imports no cleanlab.
Each check runs in a fresh Python process, since what matters is what a fresh kernel imports."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytest.importorskip("cleanlab")
pytest.importorskip("datasets")  # without it there is nothing to hold back


def fresh(code: str) -> dict:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_label_checks_run_without_datasets_and_datalab_comes_back_when_asked():
    state = fresh("""
import json, sys
import numpy as np
from kernel_tools.cleanlab_import import load_cleanlab
load_cleanlab()
from cleanlab.filter import find_label_issues
labels = np.array([0, 0, 0, 0, 1, 1, 1, 1] * 10)
probs = np.tile([[0.9, 0.1]], (80, 1)); probs[labels == 1] = [0.1, 0.9]; probs[3] = [0.02, 0.98]
flagged = find_label_issues(labels=labels, pred_probs=probs, return_indices_ranked_by="self_confidence", n_jobs=1)
before = "datasets" in sys.modules
from cleanlab import Datalab
print(json.dumps({"flagged": [int(i) for i in flagged], "datasets_before": before,
                  "datalab": Datalab.__module__, "datasets_after": "datasets" in sys.modules}))
""")
    assert state["flagged"] == [3]
    assert state["datasets_before"] is False
    assert state["datalab"] == "cleanlab.datalab.datalab"  # the real one, not cleanlab's "unavailable" stand-in
    assert state["datasets_after"] is True


def test_a_survival_diagnosis_imports_no_cleanlab():
    state = fresh("""
import json, sys
import numpy as np, pandas as pd
import kernel_tools as kt
rng = np.random.default_rng(0)
n = 400
x = rng.normal(size=n)
frame = pd.DataFrame({"x": x, "z": rng.normal(size=n), "days": rng.exponential(100 * np.exp(-x)).round(1) + 1,
                      "died": (rng.random(n) < 0.6).astype(int)})
kt.diagnose(frame, target="died", time="days", task="survival")
print(json.dumps({"cleanlab": "cleanlab" in sys.modules}))
""")
    assert state == {"cleanlab": False}
