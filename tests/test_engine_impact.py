"""Decision impact in the engine: the kernel job started, polled into the card, compared,
cancelled, and kept in the session and report.json."""

from __future__ import annotations

import asyncio
import json
import re
import types

import IPython
import numpy as np
import pandas as pd
import pytest
from engine_fakes import option

from jupyter_dcpilot.engine import impact
from jupyter_dcpilot.engine.episodes import library
from jupyter_dcpilot.engine.report import build_report
from jupyter_dcpilot.engine.report_html import render_html, report_details
from jupyter_dcpilot.engine.session import Checkpoint, Decision, Session, Snapshot, Step
from jupyter_dcpilot.engine.task import Task
from jupyter_dcpilot.engine.wire import DecisionOption
from kernel_tools import probes
from kernel_tools.findings import Finding


class InProcessKernel:
    """The engine's KernelProbe on this process's namespace: real probes, real kernel_tools."""

    def __init__(self, namespace: dict) -> None:
        self.namespace = namespace
        self.calls: list[str] = []

    async def evaluate(self, expression: str):
        self.calls.append(re.search(r"\)\.(\w+)\(", expression).group(1))
        return json.loads(eval(expression))


@pytest.fixture
def namespace(monkeypatch):
    ns: dict = {}
    monkeypatch.setattr(IPython, "get_ipython", lambda: types.SimpleNamespace(user_ns=ns))
    return ns


def frame(n=400, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    y = (x + rng.normal(size=n) > 0).astype(int)
    return pd.DataFrame({"x": x, "const": 1.0, "leak": np.where(rng.random(n) < 0.03, 1 - y, y),
                         "age": rng.normal(50, 10, n), "y": y})


def session_with(decision_options, gate="leakage", episode="remove_leakage", tmp_path=None, columns=("leak",)):
    s = Session(path=str(tmp_path / ".nb.ipynb.dcpilot.json") if tmp_path else None,
                task=Task(kind="classification", target="y", confirmed=True))
    s.variables["columns"] = ["x", "const", "leak", "age", "y"]
    s.findings = [Finding("target_leakage", ["leak"], "critical", "leak", {"timing": "follow_up"}, gate="leakage")]
    s.plan = [Step(id="s2", episode=episode, title="step", gate=gate, columns=list(columns), status="awaiting_decision")]
    d = Decision(id="d1-abc", step_id="s2", gate=gate, question="?",
                 options=[DecisionOption.from_dict(o) for o in decision_options],
                 recommended=decision_options[0]["id"], columns=list(columns))
    s.plan[0].decision_id = d.id
    s.decisions = [d]
    return s, d


async def test_the_card_fills_in_option_by_option_and_says_how_much_the_choice_matters(namespace, tmp_path):
    namespace["df"] = frame()
    s, d = session_with([option("drop", True, "drop_columns", columns=["leak"], reason="leak"), option("keep")],
                        tmp_path=tmp_path)
    events = []
    s.subscribe(lambda e: events.append(e) if e["type"] == "impact" else None)
    assert impact.wanted(s, d)
    info = await impact.estimate(s, InProcessKernel(namespace), d, library(), poll=0.05)
    drop, keep = (o.impact for o in d.options)
    assert set(drop) >= {"metric", "mean", "sd", "rows", "columns", "top_features", "flags"}
    assert keep["mean"] > drop["mean"] and keep["top_features"][0] == "leak"
    assert any("uses follow-up data: 'leak'" in f for f in keep["flags"])  # the finding's timing evidence
    assert info["status"] == "done" and "changes the AUROC by up to" in info["note"]  # metric names in words
    assert info["best"] == "drop"  # the best *valid* score: keeping the flagged leak scores higher
    assert events[0]["impact"]["status"] == "running" and events[-1]["impact"]["status"] == "done"
    assert Session.load(s.path).decisions[0].options[1].impact["mean"] == keep["mean"]  # in the sidecar
    report = build_report(s, None)
    entry = report["decisions"][0]
    assert entry["options"][1]["impact"]["mean"] == keep["mean"] and entry["impact"]["best"] == "drop"
    assert "uses follow-up data" in render_html(report, report_details(s, None))


async def test_options_that_barely_differ_are_said_to(namespace):
    namespace["df"] = frame()
    s, d = session_with([option("drop", True, "drop_columns", columns=["const"], reason="constant"),
                         option("keep")], gate="row_removal", episode="drop_uninformative", columns=("const",))
    info = await impact.estimate(s, InProcessKernel(namespace), d, library(), poll=0.05)
    assert info["barely_differ"] and info["note"] == "the choice changes the score by < 0.005"


async def test_cancelling_stops_the_kernel_job(namespace):
    namespace["df"] = frame(3000)
    s, d = session_with([option("drop", True, "drop_columns", columns=["leak"], reason="leak"), option("keep")])
    kernel = InProcessKernel(namespace)
    task = asyncio.ensure_future(impact.estimate(s, kernel, d, library(), poll=0.05))
    for _ in range(3000):
        if "impact_start_json" in kernel.calls:
            break
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert d.impact["status"] == "cancelled" and "impact_cancel_json" in kernel.calls
    job = list(probes._IMPACT_JOBS.values())[-1]
    assert job.wait(60) and job.state()["status"] == "cancelled"


def test_the_request_follows_the_step_stage_and_the_experts_parameters():
    s, d = session_with([option("clip", True, "handle_outliers", columns=["age"], action="clip"),
                         option("keep"), option("skip")], gate="outliers", episode="outliers", columns=("age",))
    s.variables["train_columns"] = ["x", "age", "y"]
    s.plan[0].user_params = {"threshold": 3.0}
    args = impact.request(s, d, library())
    assert args["name"] == "train" and args["stage"] == "post_split"
    assert args["options"][0]["action"]["params"] == {"columns": ["age"], "action": "clip", "threshold": 3.0}
    assert [o["id"] for o in args["options"]] == ["clip", "keep"]  # keep and skip are the same data
    assert args["flagged"]["timed"] == ["leak"]
    s.decisions[0].choice = "clip"
    assert not impact.wanted(s, d)  # answered: nothing to estimate


def test_label_issue_options_are_estimated_with_an_entitys_rows_together():
    s, d = session_with([option("flag", True, "handle_label_issues", action="flag"), option("keep")],
                        gate="label_issues", episode="label_issues", columns=("y",))
    s.variables["train_columns"] = ["pid", "x", "y"]
    s.task.id = "pid"
    args = impact.request(s, d, library())
    assert args["groups"] == "pid"
    assert args["options"][0]["action"]["params"] == {"action": "flag", "groups": "pid"}
    s.variables["train_columns"] = ["x", "y"]  # the id dropped since: nothing to group by
    assert "groups" not in impact.request(s, d, library())["options"][0]["action"]["params"]


def test_after_an_aggregation_the_request_flags_no_time_varying_columns():
    """The estimate is told which columns vary between an entity's records from the diagnosis of
    the frame as it is now: the findings before an aggregation (in its checkpoint) no longer hold."""
    s, d = session_with([option("clip", True, "handle_outliers", columns=["age"], action="clip"), option("keep")],
                        gate="outliers", episode="outliers", columns=("age",))
    repeated = Finding("repeated_measurements", ["pid"], "critical", "", {"time_varying_columns": ["age"]})
    s.findings.append(repeated)
    assert impact.request(s, d, library())["flagged"]["time_varying"] == ["age"]
    s.findings.remove(repeated)  # aggregated: the new diagnosis finds no repeated records
    s.checkpoints = [Checkpoint(id="k1", step_id="s1", label="before", names=["df"], cell_count=0,
                                snapshot=Snapshot.from_dict({"findings": [repeated.to_dict()]}))]
    assert impact.request(s, d, library())["flagged"]["time_varying"] == []
