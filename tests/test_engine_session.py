"""Session: state bank persisted to a sidecar, exact reload, decisions, events."""

from __future__ import annotations

import json

import pytest

from jupyter_dcpilot.engine.session import Checkpoint, Decision, Session, Step, sidecar_path


def _populated(tmp_path):
    s = Session(notebook=str(tmp_path / "nb.ipynb"), path=str(sidecar_path(tmp_path / "nb.ipynb")),
                hints={"target": "y", "frames": ["df"]})
    s.task = {"kind": "classification", "target": "y", "id": None}
    s.findings = [{"id": "target_leakage:x", "kind": "target_leakage", "columns": ["x"],
                   "severity": "critical", "summary": "x leaks", "evidence": {"auroc": 0.99},
                   "options": [{"id": "drop", "recommended": True,
                                "action": {"function": "drop_columns", "params": {"columns": ["x"]}}},
                               {"id": "keep", "recommended": False, "action": None}],
                   "gate": "leakage"}]
    s.plan = [Step(id="s1", episode="remove_leakage", title="Remove leakage: x", gate="leakage",
                   finding_ids=["target_leakage:x"], columns=["x"], decision_id="d2")]
    s.decisions = [Decision(id="d2", step_id="s1", gate="leakage", question="x leaks?",
                            options=s.findings[0]["options"], recommended="drop", columns=["x"])]
    s.checkpoints = [Checkpoint(id="k1", step_id="s1", label="before s1", names=["df"], cell_count=0,
                                snapshot=s.snapshot())]
    s.llm_usage = [{"purpose": "plan", "input_tokens": 10, "output_tokens": 3, "cost_usd": 0.0001}]
    s.log("observe", "diagnosed")
    return s


def test_reload_restores_the_session_exactly(tmp_path):
    s = _populated(tmp_path)
    s.decide("d2", "drop", "it is filed after the outcome")
    loaded = Session.load(s.path)
    assert loaded == s
    assert loaded.decisions[0].choice == "drop" and loaded.decisions[0].by == "user"
    assert loaded.plan[0].gate == "leakage"
    assert loaded.checkpoints[0].snapshot["findings"][0]["id"] == "target_leakage:x"
    # a change after reload is saved too
    loaded.instruct("log-transform income")
    assert Session.load(s.path).instructions[0]["text"] == "log-transform income"


def test_every_change_is_persisted_and_announced(tmp_path):
    s = _populated(tmp_path)
    events = []
    unsubscribe = s.subscribe(events.append)
    s.decide("d2", "keep", "known before the outcome", by="policy")
    on_disk = json.loads(open(s.path).read())
    assert on_disk["decisions"][0]["choice"] == "keep" and on_disk["decisions"][0]["by"] == "policy"
    assert events[-1]["type"] == "decision" and events[-1]["decision"]["choice"] == "keep"
    unsubscribe()
    s.log("note", "after unsubscribe")
    assert len(events) == 1


def test_decide_rejects_unknown_options_and_deciders(tmp_path):
    s = _populated(tmp_path)
    with pytest.raises(ValueError, match="unknown option 'maybe'"):
        s.decide("d2", "maybe")
    with pytest.raises(ValueError, match="by must be"):
        s.decide("d2", "drop", by="robot")
    with pytest.raises(KeyError, match="no decision 'd9'"):
        s.decide("d9", "drop")
    assert s.decisions[0].choice is None


def test_sidecar_is_hidden_next_to_the_notebook_and_reused(tmp_path):
    nb = tmp_path / "analysis.ipynb"
    assert sidecar_path(nb) == tmp_path / ".analysis.ipynb.dcpilot.json"
    first = Session.for_notebook(nb, frame="data")
    first.log("note", "hello")
    again = Session.for_notebook(nb)
    assert again.frame == "data" and again.transcript[0]["text"] == "hello"


def test_snapshot_restore_round_trip(tmp_path):
    s = _populated(tmp_path)
    snap = s.snapshot()
    s.plan[0].status = "done"
    s.handled.append("target_leakage:x")
    s.data_version = 3
    s.restore_snapshot(snap)
    assert s.plan[0].status == "proposed" and s.handled == [] and s.data_version == 0
