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
from kernel_tools.diagnosis.columns import profile_columns
from kernel_tools.diagnosis.duplicates import BLOCK, find_redundant, pairwise_correlation
from kernel_tools.diagnosis.leakage import find_leakage
from kernel_tools.diagnosis.missing import NOT_ESTIMATED, find_missing
from kernel_tools.diagnosis.registry import Clock
from kernel_tools.diagnosis.task import infer_task
from kernel_tools.diagnosis.wide import incomplete as incomplete_finding


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


class Countdown(Clock):
    """A deadline that passes after ``left`` reads: where a detector stops, without timing."""

    def __init__(self, left: int) -> None:
        super().__init__(deadline=float("inf"))
        self.left = left

    def over(self) -> bool:
        self.left -= 1
        return self.left < 0


def gappy(columns: int, rows: int = 300) -> pd.DataFrame:
    rng = np.random.default_rng(1)
    df = pd.DataFrame(rng.normal(size=(rows, columns)) * 100, columns=[f"x{i}" for i in range(columns)])
    df[df > 150] = np.nan  # gaps and long tails in every column
    return df.assign(x1=df["x0"] * 3 + 1, y=rng.integers(0, 2, rows))


def test_the_correlations_are_pandas_pairwise_ones_a_block_at_a_time():
    df = gappy(300)
    df["x7"] = 4.0  # constant: no correlation
    df.loc[df.index[10:], "x9"] = np.nan  # fewer than 20 rows shared: none either
    X = df.drop(columns="y").to_numpy()
    r, reached = pairwise_correlation(X)
    expected = df.drop(columns="y").corr(min_periods=20).to_numpy()
    upper = np.triu_indices(X.shape[1], 1)
    assert reached == X.shape[1]
    np.testing.assert_allclose(r[upper], expected[upper], atol=1e-9)  # NaN where pandas has NaN
    r, reached = pairwise_correlation(X, clock=Countdown(2))
    assert reached == 2 * BLOCK and np.isnan(r[2 * BLOCK:]).all()


def test_a_detector_stopped_between_columns_names_the_columns_it_did_not_reach():
    df = gappy(40)
    profiles = profile_columns(df)
    clock = Countdown(5)
    (finding,) = find_missing(df, df, profiles, {"y"}, None, None, clock)
    reached = [c for c, ev in finding.evidence["columns"].items() if ev["mechanism"] != NOT_ESTIMATED]
    assert len(reached) == 5 and clock.unreached["missing values"] == finding.columns[5:]
    # the counts are exact for every column: only the estimate of why is missing, and it says so
    assert all(finding.evidence["columns"][c]["missing_count"] > 0 for c in finding.columns)
    clock = Countdown(0)
    assert find_redundant(df, profiles, [c for c in df.columns if c != "y"], clock=clock) == []
    assert clock.unreached["redundant features"][:2] == ["x0", "x1"]  # not compared: named, not passed
    gap = incomplete_finding(41, [], [], 2.0, {"missing values": finding.columns[5:]})
    assert gap.severity == "critical" and gap.evidence["columns_not_reached_count"]["missing values"] == 35
    assert "the missing values check had not reached 35 columns ('x5', 'x6', 'x7' and 32 more)" in gap.summary
    assert find_redundant(df, profiles, ["x0", "x1", "x2"])[0].columns == ["x0", "x1"]  # reached: found


def test_a_slow_diagnosis_stops_at_its_budget_and_names_what_it_did_not_check():
    # how long it takes: benchmarks/bench_diagnose.py --wide; here, what a cut-short diagnosis says
    diagnosis = diagnose(gappy(600, rows=2000), target="y", budget=1.0)
    (gap,) = [g for g in incomplete(diagnosis) if g.evidence.get("detector") == "wide table"]
    assert gap.evidence["checks_not_run_count"] + sum(gap.evidence["columns_not_reached_count"].values()) > 0


def test_the_leakage_checks_stop_between_columns_and_name_what_they_did_not_reach():
    """Past the deadline the leakage sub-checks (missingness, linear formula, ...) fit nothing more:
    what they skipped is named (and makes the diagnosis incomplete), not silently passed."""
    rng = np.random.default_rng(3)
    df = pd.DataFrame(rng.normal(size=(200, 4)), columns=["a", "b", "c", "d"])
    df["y"] = 2 * df["a"] - df["b"] + 1
    df.loc[df.index[::4], "d"] = np.nan  # gaps: the missingness check has d to read
    profiles = profile_columns(df)
    outcome = infer_task(df, profiles, "y", None, None)
    features = ["a", "b", "c", "d"]
    folds = np.arange(len(df)) % 5
    found = {f.columns[0]: f.evidence for f in find_leakage(df, profiles, features, outcome, folds, {})}
    assert {"a", "b"} <= set(found) and "formula_columns" in found["a"]  # reached: found
    clock = Countdown(0)
    assert find_leakage(df, profiles, features, outcome, folds, {}, clock=clock) == []
    assert clock.unreached["missingness as a leak"] == features
    assert set(clock.unreached["target as a linear formula"]) == set(features) - {"d"}  # d has gaps: no formula
