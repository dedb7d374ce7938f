"""The JSON Schema of findings, options and decisions (``jupyter_dcpilot/engine/schema.py``): the
committed schema and the panel's generated types are what the Python types give, and what
``diagnose`` and a real session write conforms to it."""

from __future__ import annotations

import asyncio
import functools
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from jsonschema import Draft202012Validator

from jupyter_dcpilot.engine import impact
from jupyter_dcpilot.engine.coordinator import ApprovalPolicy, Coordinator
from jupyter_dcpilot.engine.hosts import HeadlessHost
from jupyter_dcpilot.engine.model_audit import leak_finding
from jupyter_dcpilot.engine.schema import json_schema, json_text, typescript
from jupyter_dcpilot.engine.session import Session, sidecar_path
from jupyter_dcpilot.engine.task import Given, Task
from kernel_tools import diagnose

ROOT = Path(__file__).resolve().parents[1]


@functools.cache  # one validator per definition: the schema is the committed code's, fixed for the run
def validator(name: str) -> Draft202012Validator:
    schema = json_schema()
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator({"$ref": f"#/$defs/{name}", "$defs": schema["$defs"]})


def errors(name: str, instance: Any) -> list[str]:
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator(name).iter_errors(instance)]


def test_the_committed_schema_and_panel_types_are_generated_from_the_python_types():
    """After changing Finding, Option, Decision or a part of them (engine/wire.py), regenerate:
    ``python -m jupyter_dcpilot.engine.schema --json > jupyter_dcpilot/engine/findings.schema.json``
    and ``... --typescript > labextension/src/findingTypes.ts``."""
    shipped = (ROOT / "jupyter_dcpilot" / "engine" / "findings.schema.json").read_text()
    assert shipped == json_text(), "regenerate jupyter_dcpilot/engine/findings.schema.json"
    panel = (ROOT / "labextension" / "src" / "findingTypes.ts").read_text()
    assert panel == typescript(), "regenerate labextension/src/findingTypes.ts"


def test_the_types_follow_the_dataclasses_and_the_vocabularies():
    from dataclasses import fields

    from jupyter_dcpilot.engine.session import Decision
    from kernel_tools.vocabulary import Gate, Severity, StepGate, finding_kinds, values

    defs = json_schema()["$defs"]
    # the evidence in words is a property to_dict writes before the fields (the panel shows it)
    assert list(defs["Decision"]["properties"]) == ["evidence_lines", *[f.name for f in fields(Decision)]]
    assert defs["Decision"]["required"] == ["evidence_lines", *[f.name for f in fields(Decision)
                                                                if not f.metadata.get("may_be_absent")]]
    assert list(defs["Finding"]["properties"])[0] == "id"  # the property to_dict writes first
    assert defs["FindingKind"]["enum"] == list(finding_kinds()) and "date_out_of_range" in finding_kinds()
    assert defs["Gate"]["enum"] == list(values(Gate)) and defs["StepGate"]["enum"] == list(values(StepGate))
    assert defs["Severity"]["enum"] == list(values(Severity))
    assert defs["DecisionOption"]["required"] == list(defs["Option"]["properties"])  # impact may be absent
    panel = typescript()
    assert "  gate: Gate | StepGate;" in panel and "  kind: FindingKind;" in panel
    assert "  impact?: IImpact | null;" in panel and "  options: IDecisionOption[];" in panel


def small_frame(n: int = 240, seed: int = 0) -> pd.DataFrame:
    """A frame with several kinds of problem: an id, a proxy of the target, missing values,
    numbers as text, a constant, placeholder dates and duplicated rows."""
    rng = np.random.default_rng(seed)
    age = rng.normal(50, 10, n).round()
    y = (rng.random(n) < 1 / (1 + np.exp(-(age - 50) / 8))).astype(int)
    df = pd.DataFrame(
        {
            "patient_id": rng.permutation(np.arange(10_000, 10_000 + n)),
            "age": age,
            "weight": [f"{w:.1f}" for w in rng.normal(75, 12, n)],
            "site": "A",
            "visit": pd.to_datetime("2020-01-01") + pd.to_timedelta(rng.integers(0, 700, n), unit="D"),
            "outcome_code": np.where(rng.random(n) < 0.02, 1 - y, y),
            "y": y,
        }
    )
    df.loc[rng.random(n) < 0.15, "age"] = np.nan
    df.loc[:5, "visit"] = pd.Timestamp("1900-01-01")
    return pd.concat([df, df.iloc[:6]], ignore_index=True)


@pytest.fixture(scope="module")
def diagnosed() -> list[Any]:
    """One diagnosis of :func:`small_frame` for the tests that only read its findings."""
    return diagnose(small_frame(), target="y").findings


def test_findings_of_a_real_diagnosis_conform(diagnosed):
    findings = diagnosed
    kinds = {f.kind for f in findings}
    assert len(kinds) >= 5, kinds  # the frame is built to show several kinds
    assert any(f.gate for f in findings) and any(f.options for f in findings)
    for f in findings:
        assert errors("Finding", f.to_dict()) == [], f.kind
        for option in f.to_dict()["options"]:
            assert errors("Option", option) == []


def test_the_model_audits_suspected_leak_is_a_finding_like_any_other():
    """The finding the engine raises itself (a near-perfect score carried by one feature) is
    built from the same types, so it validates and the panel reads it like a detector's."""
    finding = leak_finding("complained", {"metric": "roc_auc", "cv_score": 0.999, "holdout_score": 0.998},
                           0.999).to_dict()
    assert finding["kind"] == "suspected_leakage" and finding["id"] == "suspected_leakage:complained"
    assert errors("Finding", finding) == []
    assert [o["id"] for o in finding["options"] if o["recommended"]] == ["drop"]


def test_the_schema_refuses_what_the_panel_would_misread(diagnosed):
    finding = next(f for f in diagnosed if f.options).to_dict()
    assert errors("Finding", {**finding, "kind": "suspected_leak"})  # not a kind
    assert errors("Finding", {k: v for k, v in finding.items() if k != "gate"})  # always written
    assert errors("Finding", {**finding, "synthetic": True})  # a key the types do not declare
    assert errors("Finding", {**finding, "severity": "high"})
    option = finding["options"][0]
    assert errors("Option", {**option, "impact": None})  # only a decision's option has one
    assert errors("DecisionOption", {**option, "impact": None}) == []
    assert errors("DecisionOption", {**option, "impact": {"metric": "roc_auc"}})  # half an estimate


SETUP = """
import numpy as np, pandas as pd
rng = np.random.default_rng(3)
n = 240
age = rng.normal(45, 12, n).round()
tenure = rng.integers(0, 20, n)
y = (rng.random(n) < 1 / (1 + np.exp(0.04 * (age - 45) + 0.12 * (tenure - 10)))).astype(int)
df = pd.DataFrame({"customer_id": rng.permutation(np.arange(50_000, 50_000 + n)), "age": age,
                   "tenure": tenure, "complained": np.where(rng.random(n) < 0.03, 1 - y, y), "churned": y})
df.loc[rng.random(n) < 0.1, "age"] = np.nan
"""


async def answered_session(folder: Path) -> Session:
    """A real session on a real kernel: three rounds of questions answered with the recommended
    option (one leakage card with its impact estimated first), then the last gated step undone, so
    its decision carries an earlier answer."""
    notebook = folder / "nb.ipynb"
    session = Session(
        notebook=str(notebook),
        path=str(sidecar_path(notebook)),
        frame="df",
        task=Task(given=Given(target="churned", kind="classification")),
    )
    async with HeadlessHost(notebook) as host:
        await host.run_cell(SETUP, {})
        session.variables["imports"] = True
        coordinator = Coordinator(session, host, host, policy=ApprovalPolicy(mode="ask"))
        state = await coordinator.run_until_blocked()
        for _ in range(3):
            assert state == "blocked", session.transcript[-3:]
            for decision in session.open_decisions():
                if decision.gate == "leakage" and impact.wanted(session, decision):
                    await impact.estimate(session, host, decision, coordinator.episodes, poll=0.1)
                session.decide(decision.id, decision.recommended or decision.options[0].id, "as recommended")
            state = await coordinator.run_until_blocked()
        gated = next(c for c in reversed(session.checkpoints) if session.step(c.step_id).decision_id)
        await coordinator.undo(gated.id)
    return Session.load(session.path)


@pytest.fixture(scope="module")
def session_json(tmp_path_factory) -> dict[str, Any]:
    session = asyncio.run(answered_session(tmp_path_factory.mktemp("schema")))
    assert "evidence_lines" not in Path(session.path).read_text()  # a view: computed for the wire, never stored
    return session.to_dict()  # what the panel gets (REST; its events encode decisions the same way)


def test_a_real_sessions_decisions_conform(session_json):
    decisions = session_json["decisions"]
    assert len(decisions) >= 3
    gates = {d["gate"] for d in decisions}
    assert {"task", "leakage"} <= gates, gates
    assert any(d["chart"] for d in decisions)  # the leakage card's chart
    assert any(d["impact"] and d["impact"]["status"] == "done" for d in decisions)
    assert any(o.get("impact") for d in decisions for o in d["options"])
    assert any(d["history"] for d in decisions)  # the undone step's answer
    for d in decisions:
        assert errors("Decision", d) == [], d["gate"]


def test_a_real_sessions_findings_conform(session_json):
    findings = session_json["findings"]
    assert findings
    for f in findings:
        assert errors("Finding", f) == [], f["kind"]
