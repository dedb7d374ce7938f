"""Wide tables within the diagnosis's budget (kernel_tools/diagnosis/wide.py): above
``max_columns`` a sample of the columns is checked, past the deadline no detector starts, the
pairwise redundancy check stops at it, and a ``diagnosis_incomplete`` finding names what was not
checked, so the verdict cannot be valid. (20,000 columns: 96 s against a 120 s budget, see
benchmarks/bench_trust.py; before, still running after 4 min 20 s.)"""

from __future__ import annotations

import numpy as np
import pandas as pd
from test_plan_edits import make

from jupyter_dcpilot.engine.validity import audit
from kernel_tools import diagnose


def wide(columns: int, rows: int = 120) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    df = pd.DataFrame(rng.integers(0, 5, (rows, columns)), columns=[f"c{i}" for i in range(columns)])
    return df.assign(y=rng.integers(0, 2, rows))


def incomplete(diagnosis) -> list:
    return [f for f in diagnosis.findings if f.kind == "diagnosis_incomplete"]


def test_a_wide_table_is_sampled_and_the_columns_left_out_are_named():
    df = wide(1500)
    diagnosis = diagnose(df, target="y", max_columns=300)
    assert diagnosis.shape == [120, 1501]
    (gap,) = incomplete(diagnosis)
    assert gap.severity == "critical" and gap.evidence["not_checked_count"] == 1201
    assert "the table has 1,501 columns and only 300 were checked" in gap.summary
    assert "y" not in gap.evidence["not_checked_columns"]  # the target is always checked
    assert all(c in df.columns for c in gap.evidence["not_checked_columns"])


def test_past_the_deadline_nothing_starts_and_what_did_not_run_is_named():
    # how long it takes is measured by benchmarks/bench_trust.py; here: what a cut-short diagnosis says
    diagnosis = diagnose(wide(900), target="y", budget=0.5, max_columns=None)
    gaps = incomplete(diagnosis)
    said = " ".join(g.summary for g in gaps)
    assert "its time budget of 0.5 s ran out before" in said or "before the diagnosis's time budget ran out" in said
    assert all(g.severity == "critical" for g in gaps)
    skipped = [g for g in gaps if g.evidence.get("detector") == "wide table"]
    assert not skipped or skipped[0].evidence["checks_not_run_count"] >= 1


def test_a_narrow_table_is_checked_whole_as_before():
    assert incomplete(diagnose(wide(20), target="y", budget=120.0)) == []


async def test_the_engine_gives_the_diagnosis_its_budget_and_the_verdict_reads_the_gap(tmp_path):
    coord, kernel, notebook, session = make(tmp_path, policy="recommended")
    await coord.run_until_blocked()
    (call,) = [kw for name, _, kw in kernel.calls if name == "diagnose_json"][:1]
    assert call["budget"] == coord.budgets.of("diagnose") == 120.0
    gap = incomplete(diagnose(wide(400), target="y", max_columns=100))[0]
    session.findings.append(gap)
    checks = {c.check: c for c in audit(session, {"features": ["c1"], "metric": "roc_auc"})}
    assert checks["diagnosis_complete"].passed is False and "only 100 were checked" in checks["diagnosis_complete"].detail
