"""Signed sidecars and the decisions-file schema, in the engine (no server): what this user's
co-pilot wrote is carried on, anything else is history that runs nothing."""

from __future__ import annotations

import json
import re
import stat
from pathlib import Path

import pytest
from engine_fakes import FakeKernel, FakeNotebook, churn_diagnosis

from jupyter_dcpilot.engine import decisions_file, signatures
from jupyter_dcpilot.engine.coordinator import ApprovalPolicy, Coordinator
from jupyter_dcpilot.engine.session import Decision, Session, Step, now, sidecar_path
from jupyter_dcpilot.engine.task import Given, Inputs, Task
from jupyter_dcpilot.engine.wire import DecisionOption

CODE = "import os; os.system('touch PWNED')"
DOCS = Path(__file__).resolve().parents[1] / "docs" / "demo.md"


def approved_custom_step(tmp_path) -> Session:
    notebook = tmp_path / "nb.ipynb"
    session = Session(notebook=str(notebook), path=str(sidecar_path(notebook)), frame="df",
                      task=Task(given=Given(target="y")), inputs=Inputs(frames=["df"]))
    session.plan = [Step(id="s1", episode="custom", title="Custom", gate="custom_code", code=CODE,
                         decision_id="d1-aaaaaaaa", params={"changes": ["df"]}),
                    Step(id="s2", episode="custom", title="Ungated", gate=None, code=CODE)]
    session.decisions = [Decision(id="d1-aaaaaaaa", step_id="s1", gate="custom_code", question="Run?",
                                  options=[DecisionOption("run", "Run", "", ""), DecisionOption("skip", "Skip", "", "")],
                                  recommended="run",
                                  choice="run", by="user", at=now())]
    session.task = Task(kind="classification", target="y", confirmed=True)
    session.validity = [{"check": "no leaked column among the features", "passed": True, "detail": "claimed"}]
    session.cells = [{"id": "users-own-cell", "step": "s1", "kind": "code"}]
    session.variables["imports"] = True
    session.counter = 2
    return session


def test_a_saved_sidecar_is_signed_with_a_private_per_user_secret(tmp_path):
    session = approved_custom_step(tmp_path)
    session.save()
    data = json.loads(Path(session.path).read_text())
    assert re.fullmatch(r"hmac-sha256:[0-9a-f]{64}", data["signature"])
    secret = signatures.secret_path()
    assert secret.parent != Path(session.path).parent  # outside the notebook's folder
    assert stat.S_IMODE(secret.stat().st_mode) == 0o600
    loaded = Session.load(session.path)
    assert loaded.trusted is True and loaded.decision("d1-aaaaaaaa").choice == "run"
    assert loaded.to_dict() == session.to_dict()


@pytest.mark.parametrize("forge", ["unsigned", "edited", "other secret", "signature of another file"])
def test_a_sidecar_not_signed_here_is_history_only(tmp_path, forge):
    session = approved_custom_step(tmp_path)
    session.save()
    data = json.loads(Path(session.path).read_text())
    if forge == "unsigned":
        data.pop("signature")
    elif forge == "edited":
        data["plan"][0]["code"] = CODE + "  # and more"
    elif forge == "other secret":
        rest = {k: v for k, v in data.items() if k != "signature"}
        data["signature"] = signatures.signature(signatures.serialize(rest), b"x" * 64)
    else:
        other = approved_custom_step(tmp_path / "other")
        other.frame = "other"
        other.save()
        data["signature"] = json.loads(Path(other.path).read_text())["signature"]
    Path(session.path).write_text(json.dumps(data))
    loaded = Session.load(session.path)
    assert loaded.trusted is False and "not written by this user's co-pilot" in loaded.trust_note
    decision = loaded.decision("d1-aaaaaaaa")
    assert decision.choice is None and decision.history[0]["choice"] == "run" and decision.reopened
    assert [s.status for s in loaded.plan] == ["undone", "undone"]
    assert loaded.open_decisions() == []  # history asks nothing
    assert (loaded.task, loaded.cells, loaded.checkpoints, loaded.variables, loaded.validity) == (Task(), [], [], {}, [])


async def test_a_coordinator_on_a_history_session_runs_none_of_its_code(tmp_path):
    session = approved_custom_step(tmp_path)
    state = session.to_dict()  # written by someone else: no signature
    Path(session.path).write_text(json.dumps(state))
    loaded = Session.load(session.path)
    kernel = FakeKernel(churn_diagnosis())
    notebook = FakeNotebook(kernel)
    coordinator = Coordinator(loaded, kernel, notebook, policy=ApprovalPolicy(mode="recommended"))
    assert await coordinator.run_until_blocked() == "finished"
    assert not any("PWNED" in source for source in notebook.ran)
    assert "users-own-cell" not in notebook.deleted
    assert {d.gate for d in loaded.decisions if d.choice} >= {"task", "leakage"}  # asked afresh


async def test_a_step_with_code_is_always_gated_even_if_it_says_otherwise(tmp_path):
    session = approved_custom_step(tmp_path)
    session.plan = session.plan[1:]  # only the step that claims no gate
    session.decisions = []
    kernel = FakeKernel(churn_diagnosis())
    notebook = FakeNotebook(kernel)
    coordinator = Coordinator(session, kernel, notebook, policy=ApprovalPolicy(mode="recommended"))
    assert await coordinator.run_until_blocked() == "blocked"
    assert session.open_decisions()[0].gate == "custom_code"
    assert not any("PWNED" in source for source in notebook.ran)


def test_a_file_that_is_not_a_session_starts_afresh_and_says_so(tmp_path):
    notebook = tmp_path / "nb.ipynb"
    for text in ("[1, 2]", "{not json", json.dumps({"plan": [{"no": "step"}]}), "[" * 100_000):
        sidecar_path(notebook).write_text(text)
        session = Session.for_notebook(notebook, frame="df")
        assert session.plan == [] and "is not a co-pilot session file" in session.warnings[0]


def test_fields_of_a_newer_version_are_ignored_when_loading(tmp_path):
    session = approved_custom_step(tmp_path)
    session.save()
    data = json.loads(Path(session.path).read_text())
    data["from_the_future"] = 1
    rest = {k: v for k, v in data.items() if k != "signature"}
    Path(session.path).write_text(signatures.signed(signatures.serialize(rest)))
    assert Session.load(session.path).trusted is True


@pytest.mark.parametrize("content,message", [
    ({"columns": 5}, "'columns' must be an object, not a number"),
    ({"leakge": "drop"}, "unknown key 'leakge' (did you mean 'leakage'?)"),
    ({"custom_code": "run"}, "custom code is never approved by a decisions file"),
    ({"*": "everything"}, "'*' must be one of ['recommended', 'ask']"),
    ({"outliers": {"age": ["keep"]}}, "'outliers' must be an option id, or an object mapping columns"),
    ([], "must be an object, not a list"),
])
def test_decisions_files_are_checked_against_the_schema_in_one_line(tmp_path, content, message):
    path = tmp_path / "decisions.json"
    path.write_text(json.dumps(content))
    with pytest.raises(ValueError) as info:
        ApprovalPolicy.from_spec(str(path), files=True)
    assert message in str(info.value) and "\n" not in str(info.value)


def test_the_documented_schema_is_the_one_enforced():
    text = DOCS.read_text()
    block = re.search(r"<!-- decisions-schema -->\s*```json\n(.*?)```", text, re.S)
    assert block is not None, "docs/demo.md must hold the decisions file's JSON Schema"
    assert json.loads(block.group(1)) == decisions_file.SCHEMA
