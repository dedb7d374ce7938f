"""Privacy of what the co-pilot sends to an LLM, on a real kernel and the real ``anthropic`` SDK.

The frame carries distinctive sentinel values (strings in an identifier column and in a
category column, an extreme number); the fake Messages API records every request body.
With the default policy (share="schema") none of them appears in any request; every payload
is in the session's audit log (time, model, bytes, the payload itself) and in its sidecar;
with share="samples" (the user's explicit choice) example values and a few rows do appear.
"""

from __future__ import annotations

import asyncio
import json
from datetime import datetime

import pytest
from copilot_runs import claude_coordinator, plan_all_candidates, start_host
from fake_anthropic import FakeAnthropic

from jupyter_dcpilot.engine.llm import LLMConfig
from jupyter_dcpilot.engine.planners import ClaudePlanner
from jupyter_dcpilot.engine.planners.claude import state_for_llm
from jupyter_dcpilot.engine.session import Session, Step
from jupyter_dcpilot.engine.task import Task
from kernel_tools.findings import Finding, Option

pytestmark = pytest.mark.timeout(120)

SENTINELS = ["NOTE-SENTINEL-", "Zorblax-City-77", "Quuxville-91", "quuxville-91", "987654", "OUTPUT-SENTINEL"]
FRAME = """
import numpy as np, pandas as pd
import kernel_tools as kt
rng = np.random.default_rng(0)
n = 240
age = rng.normal(45, 12, n).round()
income = rng.normal(50000, 8000, n).round(2)
city = rng.choice(["Zorblax-City-77", "Quuxville-91", "quuxville-91 "], n)
y = (rng.random(n) < 1 / (1 + np.exp(0.05 * (age - 45)))).astype(int)
df = pd.DataFrame({"member_code": [f"NOTE-SENTINEL-{i:04d}" for i in range(n)], "age": age,
                   "income": income, "city": city,
                   "complained": np.where(rng.random(n) < 0.03, 1 - y, y), "churned": y})
df.loc[3, "income"] = 987654.321
df.loc[rng.random(n) < 0.1, "age"] = np.nan
print("OUTPUT-SENTINEL")
"""


async def run_with(tmp_path, share, policy="fast"):
    host = await start_host(tmp_path, FRAME)
    try:
        with FakeAnthropic(respond=plan_all_candidates) as fake:
            coord, session = claude_coordinator(tmp_path, host, fake.url, target="churned", share=share,
                                                kernel=host, policy=policy)
            state = await coord.run_until_blocked()
        return state, session, fake
    finally:
        await host.stop()


@pytest.mark.slow
async def test_default_policy_sends_no_cell_value_and_audits_every_payload(tmp_path):
    state, session, fake = await run_with(tmp_path, share=None)  # the default: schema only
    assert state == "finished", session.warnings
    assert len(fake.requests) >= 3  # the LLM planned every turn
    sent = json.dumps(fake.requests)
    leaked = [s for s in SENTINELS if s in sent]
    assert leaked == [], f"raw values reached the LLM: {leaked}"
    # what it did see: the schema and aggregates, including the column names
    first = json.loads(fake.requests[0]["messages"][0]["content"])
    assert {"member_code", "city", "income", "churned"} <= set(first["columns"])
    assert first["share"] == "schema" and "samples" not in first
    city = next(f for f in first["findings"] if f["kind"] == "inconsistent_categories")
    assert "'…'" in city["summary"] and "'city'" in city["summary"]
    # the audit log: one entry per request, byte for byte what the server received
    assert len(session.llm_payloads) == len(fake.requests)
    for entry, body in zip(session.llm_payloads, fake.requests):
        assert entry["payload"]["messages"] == body["messages"]
        assert entry["payload"]["system"] == body["system"]
        assert entry["model"] == body["model"] == "claude-sonnet-4-6"
        assert entry["bytes"] == len(json.dumps(entry["payload"]).encode())
        assert datetime.fromisoformat(entry["at"]).tzinfo is not None
        assert entry["purpose"] in ("plan", "repair")
    on_disk = json.loads(open(session.path).read())
    assert len(on_disk["llm_payloads"]) == len(fake.requests)
    assert on_disk["llm_payloads"][-1]["payload"]["messages"] == fake.requests[-1]["messages"]


@pytest.mark.slow
async def test_share_samples_is_explicit_and_then_values_appear(tmp_path):
    state, session, fake = await run_with(tmp_path, share="samples", policy="ask")
    assert state == "blocked", session.warnings  # on the task question: one planning call is enough
    first = json.loads(fake.requests[0]["messages"][0]["content"])
    assert first["share"] == "samples"
    assert first["samples"]["member_code"][0].startswith("NOTE-SENTINEL-")
    # and a few whole rows, so it can read how columns relate
    rows = first["sample_rows"]
    assert len(rows) == 5 and all(set(r) == set(first["columns"]) for r in rows)
    assert all(r["member_code"].startswith("NOTE-SENTINEL-") for r in rows)
    assert len({r["member_code"] for r in rows}) == 5
    sent = json.dumps(fake.requests)
    assert "NOTE-SENTINEL-" in sent and ("Zorblax-City-77" in sent or "Quuxville-91" in sent)
    assert len(session.llm_payloads) == len(fake.requests)


def test_schema_state_redacts_values_in_texts_and_evidence():
    session = Session(task=Task(kind="classification", target="y"))
    session.variables["columns"] = ["city", "income", "y"]
    session.findings = [Finding(
        "inconsistent_categories", ["city"], "warning", "'city' writes 'Secret-A' and \"secret-a\" alike",
        {"variants": {"Secret-A": ["secret-a"]}, "variant_count": 1, "example": 41.5,
         "most_extreme": 987654.0, "max": 987654.0, "rate": 0.2, "sample_size": 200},
        [Option("normalize", "Normalise", "", "", True, {"params": {"mapping": {"secret-a": "Secret-A"}}})])]
    session.plan = [Step(id="s1", episode="fix_dtypes", title="Fix 'Secret-A'", status="done",
                         checks=[{"message": "value 'Secret-A' lost"}])]
    state = state_for_llm(session, [], {}, share="schema")
    text = json.dumps(state)
    assert "Secret" not in text and "secret" not in text and "987654" not in text and "41.5" not in text
    assert state["findings"][0]["evidence"] == {"variant_count": 1, "rate": 0.2, "sample_size": 200}
    assert state["findings"][0]["summary"] == "'city' writes '…' and '…' alike"
    assert state_for_llm(session, [], {}, share="samples")["findings"][0]["summary"].count("Secret-A") == 1
    with pytest.raises(ValueError, match="share must be one of"):
        state_for_llm(session, [], {}, share="rows")
    with pytest.raises(ValueError, match="share must be one of"):
        ClaudePlanner(LLMConfig(api_key="k"), share="everything")


def test_columns_a_codebook_marks_private_are_redacted_whatever_the_share_setting():
    session = Session(task=Task(kind="classification", target="y"))
    session.variables["columns"] = ["mrn", "age", "y"]
    session.diagnosis = {"column_stats": {"private": {"mrn": "flagged as an identifier in the codebook"}}}
    session.findings = [
        Finding("outliers", ["mrn"], "info", "'mrn' has the extreme value '4417023'", {"most_extreme": "4417023", "count": 1}),
        Finding("outliers", ["age"], "info", "'age' has the extreme value '107'", {"most_extreme": "107", "count": 1})]
    samples = {"examples": {"mrn": ["4417023"], "age": [51]}, "rows": [{"mrn": "4417023", "age": 51, "y": 1}]}
    state = state_for_llm(session, [], {}, share="samples", samples=samples)
    assert "4417023" not in json.dumps(state)
    assert state["findings"][0]["summary"] == "'mrn' has the extreme value '…'"
    assert state["findings"][0]["evidence"] == {"count": 1}
    assert state["findings"][1]["summary"] == "'age' has the extreme value '107'"  # shared, as chosen
    assert state["samples"] == {"age": [51]} and state["sample_rows"] == [{"age": 51, "y": 1}]


async def test_repair_requests_redact_values_in_code_and_errors(tmp_path):
    captured = []

    def respond(body):
        captured.append(body)
        from fake_anthropic import tool_use
        return tool_use("repair_step", {"params": [{"name": "columns", "value": "y"},
                                                   {"name": "method", "value": "median"},
                                                   {"name": "target", "value": "x"}],
                                        "reason": "the data told me to"})

    with FakeAnthropic(respond=respond) as fake:
        config = LLMConfig(api_key="k", base_url=fake.url, max_retries=0, model="claude-sonnet-4-6")
        planner = ClaudePlanner(config)
        session = Session(path=str(tmp_path / "s.json"))
        session.variables["columns"] = ["city", "y"]
        planner.session = session
        step = Step(id="s3", episode="impute", title="Impute missing values", gate="imputation")
        params = await planner.repair(step, "train, imputation = kt.impute(train, fill={'city': 'Zorblax-City-77'})",
                                      {"ename": "ValueError", "evalue": "could not convert string to float: 'Quuxville-91'"})
    sent = json.dumps(captured)
    assert "Zorblax" not in sent and "Quuxville" not in sent and "'city'" in sent
    assert params == {"method": "median"}  # never which columns or target the step touches
    assert any("ignored repaired parameters" in t["text"] for t in session.transcript)
    assert len(session.llm_payloads) == 1 and session.llm_payloads[0]["purpose"] == "repair"


@pytest.mark.slow
async def test_server_hosted_claude_sessions_send_no_cell_value(jp_fetch, jp_ws_fetch, jp_serverapp, tmp_path, monkeypatch):
    """The same guarantee through the server: POST sessions {planner: "claude"} with the default share."""
    import test_server_sessions as tss

    registry = jp_serverapp.web_app.settings["dcpilot_sessions"]
    kernel_id = await tss.start_notebook_kernel(jp_fetch, "private.ipynb")
    client = tss.kernel_client(jp_serverapp, kernel_id, "panel")
    serving = None
    with FakeAnthropic(respond=plan_all_candidates) as fake:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        try:
            await client.wait_for_ready(timeout=60)
            await client.execute_interactive(FRAME, timeout=60)
            created = await tss.post(jp_fetch, "dcpilot", "api", "sessions",
                                     body={"path": "private.ipynb", "frame": "df", "target": "churned",
                                           "planner": "claude", "approve": tss.ONLY_LEAKAGE_ASKS})
            ws = await jp_ws_fetch("dcpilot", "api", "sessions", created["id"], "events")
            serving = asyncio.create_task(tss.Frontend(ws, client).serve())

            async def leakage_waits():
                state = await tss.get_session(jp_fetch, created["id"])
                waiting = [d for d in state["decisions"] if d["gate"] == "leakage" and d["choice"] is None]
                return state if waiting and state["state"] == "blocked" else None

            state = await tss.wait_for(leakage_waits, "the leakage question", timeout=120)
        finally:
            if serving is not None:
                serving.cancel()
            await registry.close()
            client.stop_channels()
    assert len(fake.requests) >= 2
    sent = json.dumps(fake.requests)
    assert [s for s in SENTINELS if s in sent] == []
    assert len(state["llm_payloads"]) == len(fake.requests)
    assert json.loads(fake.requests[0]["messages"][0]["content"])["share"] == "schema"
