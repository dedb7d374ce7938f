"""Two files, the second long-format records over time (id, day, test, value): summarised per
subject up to the index, then joined (one row per subject, nothing after the index); a join that
cannot run is left out once, never proposed again at every turn; a finding about a column a step
removed since is not acted on. (survival/nafld ran 900 s: the join multiplied 3,549 rows into
84,290, was backtracked, then proposed again without a key, failing forever; now 31 s.)"""

from __future__ import annotations

import asyncio
import io
import json

import numpy as np
import pandas as pd
import pytest

import kernel_tools as kt
from jupyter_dcpilot.engine.episodes import library
from jupyter_dcpilot.engine.planners import RulePlanner
from jupyter_dcpilot.engine.session import Session, Step
from jupyter_dcpilot.engine.task import Task
from kernel_tools.findings import Finding, Option


def cohort(n: int = 240, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Subjects (one row each, a survival outcome) and their labs in long format, before and
    after the index (day 0); the later labs follow the outcome."""
    rng = np.random.default_rng(seed)
    risk = rng.normal(size=n)
    base = pd.DataFrame({"id": np.arange(1, n + 1), "age": rng.integers(30, 80, n),
                         "futime": rng.exponential(1000 * np.exp(-0.7 * risk)).round() + 1,
                         "status": (rng.random(n) < 0.6).astype(int)})
    days = rng.integers(-900, 900, (n, 6))
    labs = pd.DataFrame({"id": np.repeat(base["id"], 12).to_numpy(),
                         "days": np.repeat(days, 2, axis=1).ravel(),
                         "test": np.tile(["chol", "alb"], 6 * n),
                         "value": (rng.normal(5, 1, 12 * n) + np.repeat(risk, 12)).round(2)})
    return base, labs


def test_records_over_time_are_summarised_before_the_join_by_default():
    base, labs = cohort()
    (finding,) = kt.diagnose_join({"df": base, "df_2": labs}, target="status").by_kind("join_keys")
    assert finding.recommended is not None and finding.recommended.id == "summarize_then_join"
    assert not next(o for o in finding.options if o.id == "join_left").recommended
    step = next(st for st in RulePlanner(library()).propose(_session([finding])) if st.episode == "join_files")
    assert step.function == "summarize_records" and step.params["until"] == 0 and step.params["key"] == "test"


def _session(findings: list[Finding]) -> Session:
    s = Session(frame="df", task=Task(kind="survival", target="status", time="futime"))
    s.inputs.frames = ["df", "df_2"]
    s.findings = findings
    return s


def test_a_join_that_failed_or_was_undone_without_a_key_left_is_not_proposed_again():
    s = _session([])
    (join,) = [st for st in RulePlanner(library()).propose(s) if st.episode == "join_files"]
    for status in ("failed", "undone"):
        s.plan = [Step(id="s2", episode="join_files", title="Join files", status=status)]
        assert [st for st in RulePlanner(library()).propose(s) if st.episode == "join_files"] == []
    # with a join finding still open (its failed option excluded), the join is asked again
    s.findings = [Finding("join_keys", ["id"], "warning", "join on id", options=[
        Option("join_left", "Join", "", "", True, {"function": "join_frames", "params": {"on": "id"}}),
        Option("keep", "Keep separate", "", "", False, None)])]
    assert [st.episode for st in RulePlanner(library()).propose(s)].count("join_files") == 1


def test_a_finding_about_columns_a_step_removed_since_is_not_acted_on():
    s = _session([Finding("outliers", ["fib4"], "warning", "extreme values in fib4", options=[
        Option("flag", "Flag", "", "", True, {"function": "handle_outliers", "params": {"columns": ["fib4"]}})],
        gate="outliers")])
    s.inputs.frames = ["df"]
    assert any(st.episode == "outliers" for st in RulePlanner(library()).propose(s))
    s.plan = [Step(id="s5", episode="impute", title="Drop 1 mostly-missing column", status="done",
                   result={"report": {"columns_removed": ["fib4"], "columns_added": []}})]
    assert not any(st.episode == "outliers" for st in RulePlanner(library()).propose(s))


@pytest.mark.slow
def test_a_cohort_with_long_format_labs_ends_with_a_verdict_in_a_real_kernel(tmp_path):
    from jupyter_dcpilot.cli import run_job

    base, labs = cohort()
    base.to_csv(tmp_path / "base.csv", index=False)
    labs.to_csv(tmp_path / "labs.csv", index=False)
    state, report = asyncio.run(run_job([str(tmp_path / "base.csv"), str(tmp_path / "labs.csv")], target="status",
                                        approve="recommended", out=str(tmp_path / "out"), stream=io.StringIO()))
    assert state == "finished", report.get("warnings")
    joins = [s for s in report["steps"] if s["episode"] == "join_files"]
    assert [s["status"] for s in joins] == ["done"]
    notebook = json.loads((tmp_path / "out" / "notebook.ipynb").read_text())
    code = "".join("".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "code")
    assert "kt.summarize_records(labs, id='id', time='days', until=0, key='test', value='value')" in code
    features = report["model"]["features"]
    assert {"chol_last", "alb_last"} & set(features) and not {"days", "test", "value"} & set(features)
