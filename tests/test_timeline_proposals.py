"""Claude's proposals for the column timeline (issue 26, item 5), through the real ``anthropic``
SDK against the fake Messages API: asked only about the columns the rules are unsure of, from the
schema (no cell value), shown on the card as Claude's, moving and confirming nothing; a reply
that cannot be used is a note, and the run goes on."""

from __future__ import annotations

import json

import pytest
from copilot_runs import kernel_value, plan_all_candidates, start_host
from engine_fakes import FakeKernel, FakeNotebook, churn_diagnosis
from fake_anthropic import FakeAnthropic, text, tool_use

from jupyter_dcpilot.engine.coordinator import ApprovalPolicy, Coordinator
from jupyter_dcpilot.engine.llm import LLMConfig
from jupyter_dcpilot.engine.planners import ClaudePlanner
from jupyter_dcpilot.engine.session import Session
from jupyter_dcpilot.engine.structure import Structure, unconfirmed
from jupyter_dcpilot.engine.task import Given, Inputs, Task

SENTINEL = "SENTINEL-CELL-4711"


def placement(group, source, test, strong):
    return {"group": group, "source": source, "test": test, "reason": f"{test} says {group}", "strong": strong}


def timeline_diagnosis():
    """churn's diagnosis with a timeline: 'income' placed later by its name only (low), 'plan'
    unknown (the data says baseline, its name later), 'complained' after the outcome by the data
    (high), 'age' baseline (nothing says otherwise: high)."""
    d = churn_diagnosis()
    d["timeline"] = {"index": "each row's own time", "columns": {
        "age": {"column": "age", "group": "baseline", "confidence": "high", "evidence": []},
        "income": {"column": "income", "group": "during_follow_up", "confidence": "low",
                   "evidence": [placement("during_follow_up", "names", "named_after_index", False)]},
        "plan": {"column": "plan", "group": "unknown", "confidence": "low",
                 "evidence": [placement("baseline", "values", "constant_in_entity", True),
                              placement("at_or_after_outcome", "names", "named_process", False)]},
        "complained": {"column": "complained", "group": "at_or_after_outcome", "confidence": "high",
                       "evidence": [placement("at_or_after_outcome", "values", "implies_event", True)]}}}
    return d


class ProfiledKernel(FakeKernel):
    """A fake kernel whose profile holds example values (what must never reach Claude)."""

    def profile_json(self, name, **kwargs):
        return {"rows": self.rows, "columns_detail": [
            {"name": c, "dtype": "float64" if c in ("age", "income") else "object", "kind": "numeric",
             "missing_share": 0.1, "unique": 40, "examples": [SENTINEL, 987654.321]} for c in self.columns]}


def setup(tmp_path, url, diagnosis, corrections=2):
    kernel = ProfiledKernel(diagnosis)
    session = Session(notebook=str(tmp_path / "nb.ipynb"), path=str(tmp_path / ".nb.ipynb.dcpilot.json"),
                      task=Task(given=Given(target="y")), inputs=Inputs(frames=["df"]))
    session.variables["imports"] = True
    config = LLMConfig(api_key="test-key", base_url=url, max_retries=0, corrections=corrections, timeout=5.0,
                       model="claude-sonnet-4-6")
    planner = ClaudePlanner(config, kernel=kernel)
    return Coordinator(session, kernel, FakeNotebook(kernel), planner=planner,
                       policy=ApprovalPolicy.from_spec("recommended", files=True)), session


def answering(timings):
    """The fake API: ``timings`` (a scripted answer, or a function of the request) for the timing
    question, every candidate for a plan."""
    def respond(body):
        if any(t["name"] == "propose_timings" for t in body.get("tools", [])):
            return timings(body) if callable(timings) else timings
        return plan_all_candidates(body)
    return respond


def timing_requests(fake):
    return [r for r in fake.requests if any(t["name"] == "propose_timings" for t in r.get("tools", []))]


def without_llm(diagnosis) -> Structure:
    """The structure the same diagnosis leaves with no LLM (what the proposals must not change)."""
    from kernel_tools.inferences import ColumnTimeline, Inference

    s = Structure()
    s.record([Inference.from_dict(i) for i in diagnosis["inferences"]], ColumnTimeline.from_dict(diagnosis["timeline"]))
    return s


async def test_claude_proposes_places_for_the_unsure_columns_from_the_schema_only(tmp_path):
    answer = tool_use("propose_timings", {"proposals": [
        {"column": "income", "group": "at_or_after_outcome", "reason": "income reported at the exit interview"},
        {"column": "plan", "group": "baseline", "reason": "the plan is chosen at sign-up"}]})
    with FakeAnthropic(respond=answering(answer)) as fake:
        coord, session = setup(tmp_path, fake.url, timeline_diagnosis())
        assert await coord.run_until_blocked() == "finished"
    (asked,) = timing_requests(fake)  # asked once, not every turn
    sent = json.loads(asked["messages"][0]["content"])
    assert [c["name"] for c in sent["asked"]] == ["income", "plan"]  # never 'age' or 'complained' (high)
    income = sent["asked"][0]
    assert (income["dtype"], income["missing_share"], income["distinct"]) == ("float64", 0.1, 40)
    assert income["rules"] == {"group": "during_follow_up", "confidence": "low",
                               "tests": ["names:named_after_index:during_follow_up"]}
    assert "examples" not in income and SENTINEL not in json.dumps(fake.requests) and "987654" not in json.dumps(fake.requests)
    assert asked["tools"][0]["input_schema"]["properties"]["proposals"]["items"]["properties"]["column"]["enum"] == [
        "income", "plan"]

    card = session.structure.card()
    # shown as Claude's, beside the rules' evidence: nothing moved, nothing confirmed
    assert (card.columns["income"].group, card.columns["income"].confidence) == ("during_follow_up", "low")
    assert (card.columns["plan"].group, card.columns["plan"].confidence) == ("unknown", "low")
    proposal = card.columns["income"].evidence[-1]
    assert (proposal.source, proposal.group, proposal.numbers) == ("proposal", "at_or_after_outcome", {"by": "Claude"})
    assert "proposed by Claude" in proposal.reason and "exit interview" in proposal.reason
    alternatives = {a.value: a.evidence for a in card.columns["income"].inference().alternatives}
    assert any("proposed by Claude" in e for e in alternatives["at_or_after_outcome"])
    features = ["age", "income", "plan", "complained"]
    same = [i.id for i in unconfirmed(session, features)]
    assert "timing:income" in same and "timing:plan" in same
    bare = Session(structure=without_llm(timeline_diagnosis()))
    assert same == [i.id for i in unconfirmed(bare, features)]  # structure_confirmed as without Claude
    assert any("Claude proposed timings for 2 of 2" in e["text"] for e in session.transcript)
    assert any(u["purpose"] == "timeline" for u in session.llm_usage)
    # the proposals live in the sidecar with the timeline
    assert Structure.from_dict(json.loads(json.dumps(session.structure.to_dict()))).proposals["plan"]["by"] == "Claude"


async def test_a_malformed_reply_is_a_note_and_the_run_goes_on(tmp_path):
    with FakeAnthropic(respond=answering(text("income is probably later, I guess"))) as fake:
        coord, session = setup(tmp_path, fake.url, timeline_diagnosis(), corrections=1)
        assert await coord.run_until_blocked() == "finished"
    assert len(timing_requests(fake)) == 2  # the answer, and one correction; then not asked again
    assert session.structure.proposals == {}
    (warning,) = [w for w in session.warnings if "Claude proposed no timings" in w]
    assert "2 columns" in warning and "the rules' timeline stands" in warning
    assert session.settings.get("planner") != "rules (fallback)" and not any(
        "rule planner takes over" in w for w in session.warnings)  # the planner itself still plans


async def test_a_column_a_rule_placed_with_high_confidence_is_never_proposed_for(tmp_path):
    structure = without_llm(timeline_diagnosis())
    assert structure.askable() == ["income", "plan"]
    assert not structure.propose("complained", "baseline", "surely known", "Claude")
    assert not structure.propose("age", "during_follow_up", "measured later", "Claude")
    assert structure.proposals == {} and structure.card().columns["complained"].group == "at_or_after_outcome"
    with pytest.raises(ValueError, match="not a place on the timeline"):
        structure.propose("income", "later", "?", "Claude")
    # a plain table: nothing is open, so nothing is asked
    plain = churn_diagnosis()
    plain["timeline"] = {"index": "", "columns": {c: {"column": c, "group": "baseline", "confidence": "high",
                                                      "evidence": []} for c in ("age", "income")}}
    with FakeAnthropic(respond=answering(text("unused"))) as fake:
        coord, _ = setup(tmp_path, fake.url, plain)
        assert await coord.run_until_blocked() == "finished"
    assert timing_requests(fake) == [] and len(fake.requests) >= 2


FRAME = f"""
import numpy as np, pandas as pd
rng = np.random.default_rng(3)
n = 200
x1 = rng.normal(size=n)
y = (x1 + rng.normal(size=n) > 0).astype(int)
df = pd.DataFrame({{"x1": x1, "ward": rng.choice(["{SENTINEL}", "B-ward"], n),
                   "albumin_at_discharge": rng.normal(35, 4, n).round(1),
                   "sample_received_min": rng.gamma(2, 30, n).round(), "y": y}})
df.loc[0, "albumin_at_discharge"] = 987654.321
"""


@pytest.mark.slow
@pytest.mark.timeout(180)
async def test_in_a_real_kernel_the_request_holds_the_schema_and_no_cell_value(tmp_path):
    from copilot_runs import claude_coordinator

    def propose(body):
        asked = [c["name"] for c in json.loads(body["messages"][0]["content"])["asked"]]
        return tool_use("propose_timings", {"proposals": [
            {"column": c, "group": "during_follow_up", "reason": "named for a later time"} for c in asked]})

    host = await start_host(tmp_path, FRAME)
    try:
        with FakeAnthropic(respond=answering(propose)) as fake:
            coord, session = claude_coordinator(tmp_path, host, fake.url, target="y", kernel=host)
            assert await coord.run_until_blocked() == "finished", session.warnings
        assert await kernel_value(host, "list(df.columns)")  # the kernel is still the user's
    finally:
        await host.stop()
    (asked,) = timing_requests(fake)
    sent = json.loads(asked["messages"][0]["content"])
    names = {c["name"]: c for c in sent["asked"]}
    assert set(names) == {"albumin_at_discharge", "sample_received_min"}
    assert names["albumin_at_discharge"]["dtype"] == "float64" and names["albumin_at_discharge"]["distinct"] > 100
    everything = json.dumps(fake.requests)
    assert SENTINEL not in everything and "987654" not in everything and "B-ward" not in everything
    card = session.structure.card()
    assert card.columns["sample_received_min"].group == "at_or_after_outcome"  # the rules' place, kept
    assert card.columns["sample_received_min"].evidence[-1].source == "proposal"
    assert {c["check"]: c["passed"] for c in session.validity}["structure_confirmed"] is False
