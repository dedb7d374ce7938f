"""What an agent is shown (the share setting applied field by field) and the rules of its answers:
a proposal beside the question, an answer only at a gate the user lets agents decide."""

from __future__ import annotations

import json

import pytest
from traitlets import TraitError

from jupyter_dcpilot.agent_view import View, column_names, diagnosis_answer, report_answer, session_status
from jupyter_dcpilot.config import DCPilot
from jupyter_dcpilot.engine.notebook import decision_markdown
from jupyter_dcpilot.engine.session import Checkpoint, Decision, Session, Snapshot, Step
from jupyter_dcpilot.engine.task import Task
from jupyter_dcpilot.engine.wire import DecisionOption
from jupyter_dcpilot.jupyter_ai_persona import chat_update, summary_markdown
from kernel_tools.findings import Finding

SECRET = "Zorblax-77"


def session_with_a_question() -> Session:
    s = Session(frame="df", task=Task(kind="classification", target="y", confirmed=True))
    s.variables["columns"] = ["city", "income", "y"]
    s.findings = [Finding("outliers", ["income"], "warning", f"'income' has 3 extreme values such as '{SECRET}'",
                          {"count": 3, "rate": 0.01, "most_extreme": 987654.0, "example": SECRET}, gate="outliers")]
    step = Step(id="s1", episode="outliers", title=f"Clip 'income' at '{SECRET}'", gate="outliers", columns=["income"],
                status="awaiting_decision", params={"columns": ["income"], "bounds": {"income": [0, 120000.0]}},
                checks=[{"check": "retention", "message": f"value '{SECRET}' lost", "severity": "warning"}])
    s.plan = [step]
    s.decisions = [Decision(
        id="d1-abc", step_id="s1", gate="outliers", question=f"Clip 'income'? e.g. '{SECRET}'",
        evidence={"count": 3, "max": 987654.0}, recommended="clip", columns=["income"],
        chart={"title": "values", "unit": "", "bars": [{"label": SECRET, "value": 3.0}], "threshold": None},
        options=[DecisionOption("clip", "Clip", f"clip at '{SECRET}'", "", True,
                                {"function": "handle_outliers",
                                 "params": {"columns": ["income"], "method": "clip", "fill_value": SECRET,
                                            "threshold": 3.5, "max": 987654.0, "mapping": {SECRET: "x"}}}),
                 DecisionOption("keep", "Keep", "", "")])]
    step.decision_id = "d1-abc"
    s.checkpoints = [Checkpoint(id="c1", step_id="s0", label="before", names=["df"], cell_count=0,
                                snapshot=Snapshot.from_dict({"variables": {"columns": ["old_col"]}, "findings": []}))]
    s.transcript = [{"at": "t", "kind": "observe", "text": f"saw '{SECRET}' in 'city'"}]
    return s


def test_schema_share_shows_no_value_and_samples_shows_them() -> None:
    s = session_with_a_question()
    status = session_status("f" * 32, "nb.ipynb", s, "schema", frozenset())
    text = json.dumps(status)
    assert SECRET not in text and "987654" not in text
    decision = status["decisions"][0]
    assert decision["chart"] is None and decision["evidence"] == {"count": 3}
    params = decision["options"][0]["action"]["params"]
    assert params == {"columns": ["income"], "method": "…", "fill_value": "…", "threshold": 3.5, "max": "…",
                      "mapping": "…"}
    assert "'income'" in decision["question"] and "'…'" in decision["question"]
    assert status["plan"][0]["params"]["bounds"] == {"income": [0, 120000.0]}  # fences are aggregates
    assert status["plan"][0]["failed_checks"] == [{"check": "retention", "passed": False, "detail": "value '…' lost"}]
    assert status["log"][0]["text"] == "saw '…' in 'city'"
    assert status["waiting_for"] == ["d1-abc"] and "dcpilot_answer_decision" in status["next"]
    s.state = "running"
    assert "open the notebook" in session_status("f" * 32, "nb.ipynb", s, "schema", frozenset(), panel=False)["next"]
    s.state = "blocked"
    assert "old_col" in column_names(s)  # a column only an earlier checkpoint saw may be named
    shown = json.dumps(session_status("f" * 32, "nb.ipynb", s, "samples", frozenset()))
    assert SECRET in shown and "987654" in shown
    with pytest.raises(ValueError, match="share must be one of"):
        View("rows", set())


def test_a_codebooks_private_columns_stay_hidden_even_when_samples_are_shared() -> None:
    s = session_with_a_question()
    s.diagnosis = {"column_stats": {"private": {"income": "flagged as personal data in the codebook"}}}
    shown = json.dumps(session_status("f" * 32, "nb.ipynb", s, "samples", frozenset()))
    assert SECRET not in shown and "987654" not in shown
    s.diagnosis = {}
    assert SECRET in json.dumps(session_status("f" * 32, "nb.ipynb", s, "samples", frozenset()))
    diagnosis = {"shape": [3, 2], "task": {}, "findings": [
        {"id": "id_column:mrn", "kind": "id_column", "columns": ["mrn"], "severity": "warning", "gate": "identifiers",
         "summary": f"'mrn' holds '{SECRET}'", "evidence": {"private": True, "example": SECRET}, "options": []}]}
    assert SECRET not in json.dumps(diagnosis_answer("nb.ipynb", "df", diagnosis, "samples"))
    view = View("samples", {"mrn", "age"}, {"mrn"})
    assert view.columns(["age", f"city_{SECRET}", f"mrn_{SECRET}"]) == ["age", f"city_{SECRET}"]


def test_diagnosis_and_report_answers_keep_columns_not_values() -> None:
    diagnosis = {"shape": [10, 3], "elapsed_s": 0.1, "task": {"kind": "regression", "target": "y"},
                 "findings": [{"id": "x", "kind": "outliers", "columns": ["income"], "severity": "warning",
                               "gate": "outliers", "summary": f"'income' holds '{SECRET}'",
                               "evidence": {"top": SECRET, "rate": 0.1}, "options": []}]}
    answer = diagnosis_answer("nb.ipynb", "df", diagnosis, "schema")
    assert answer["findings"][0]["summary"] == "'income' holds '…'" and answer["findings"][0]["evidence"] == {"rate": 0.1}
    s = session_with_a_question()
    report = {"valid": True, "validity": [{"check": "no_leakage", "passed": True, "detail": f"'{SECRET}' kept"}],
              "model": {"name": "hgb", "metric": "r2", "features": ["income", f"city_{SECRET}"]},
              "dropped_columns": ["city"], "warnings": []}
    shown = report_answer("f" * 32, s, report, "schema")
    assert shown["model"]["features"] == ["income"] and shown["validity"][0]["detail"] == "'…' kept"
    assert SECRET not in json.dumps(shown)
    assert shown["decisions"][0]["by"] == "nobody yet"


def test_an_agents_answer_is_a_proposal_and_decides_only_what_it_proposed() -> None:
    s = session_with_a_question()
    with pytest.raises(ValueError, match="unknown option 'shred'"):
        s.propose("d1-abc", "shred", "", "claude-code")
    with pytest.raises(ValueError, match="decides only what it proposed"):
        s.decide("d1-abc", "clip", by="agent")
    d = s.propose("d1-abc", "keep", "real incomes", "claude-code")
    assert d.proposal["agent"] == "claude-code" and not d.decided
    assert "Agent claude-code proposes `keep` (real incomes)" in summary_markdown(s)
    posted = chat_update(type("Hosted", (), {"session": s, "path": "nb.ipynb"})(),
                         {"type": "decision", "decision": {"id": d.id, "choice": None, "proposal": d.proposal}}, set())
    assert "choose keep for d1-abc" in posted
    with pytest.raises(ValueError, match="decides only what it proposed"):
        s.decide("d1-abc", "clip", by="agent")
    s.decide("d1-abc", "keep", "real incomes", by="agent")
    assert (d.by, d.decided_by) == ("agent", "agent claude-code")
    assert "decided by agent claude-code" in decision_markdown(d, s.plan[0])
    d.reopen("undone by the user")
    assert d.proposal is None and d.history[-1]["by"] == "agent"
    assert d.history[-1]["proposal"]["agent"] == "claude-code"


def test_agent_may_decide_lists_gates_and_never_custom_code() -> None:
    assert DCPilot().agent_may_decide == [] and DCPilot().agent_share == "schema"
    assert DCPilot(agent_may_decide=["outliers", "task"]).agent_may_decide == ["outliers", "task"]
    with pytest.raises(TraitError):
        DCPilot(agent_may_decide=["custom_code"])
    with pytest.raises(TraitError):
        DCPilot(agent_share="rows")
