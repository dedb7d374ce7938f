"""The rule planner on what the sweep over unseen data sets showed: a finding diagnose judged
harmless (identical rows that chance explains) asks no question and runs nothing."""

from __future__ import annotations

import numpy as np
import pandas as pd

import kernel_tools as kt
from jupyter_dcpilot.engine.planners import RulePlanner
from jupyter_dcpilot.engine.session import Session
from jupyter_dcpilot.engine.task import Task


def _coarse_frame() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    n = 800
    return pd.DataFrame({"cls": rng.choice(["1st", "2nd", "3rd"], n), "sex": rng.choice(["m", "f"], n),
                         "survived": rng.choice(["yes", "no"], n)})


def _plan(findings: list) -> list:
    session = Session(task=Task(kind="classification", target="survived"))
    session.findings = findings
    return RulePlanner().propose(session)


def test_duplicates_explained_by_chance_plan_no_removal_step():
    d = kt.diagnose(_coarse_frame(), target="survived")
    dup = d.by_kind("duplicate_rows")[0]
    steps = _plan([dup])
    assert [s.episode for s in steps if s.episode == "deduplicate"] == []
    assert "split" in [s.episode for s in steps]


def test_copied_rows_still_get_a_gated_removal_step():
    df = _coarse_frame()
    df["x"] = np.random.default_rng(1).normal(size=len(df))
    df = pd.concat([df, df.iloc[:20]], ignore_index=True)
    dup = kt.diagnose(df, target="survived").by_kind("duplicate_rows")[0]
    steps = [s for s in _plan([dup]) if s.episode == "deduplicate"]
    assert len(steps) == 1 and steps[0].gate == "row_removal"
    assert steps[0].function == "deduplicate"
