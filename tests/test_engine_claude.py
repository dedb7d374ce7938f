"""The Claude planner through the real ``anthropic`` SDK against a fake Messages API on 127.0.0.1."""

from __future__ import annotations

import json

import pytest
from engine_fakes import FakeKernel, FakeNotebook, churn_diagnosis
from fake_anthropic import FakeAnthropic, hang, status, text, tool_use, tool_uses

from jupyter_dcpilot.engine.coordinator import ApprovalPolicy, Coordinator
from jupyter_dcpilot.engine.llm import LLMConfig, cost_usd
from jupyter_dcpilot.engine.planners import ClaudePlanner
from jupyter_dcpilot.engine.session import Session
from jupyter_dcpilot.engine.task import Given, Inputs, Task


def plan_answer(steps=(), backtrack=None):
    return tool_uses([
        ("record_observation", {"summary": "a leak and an id column", "concerns": ["complained"]}),
        ("decide_backtrack", backtrack or {"backtrack": False, "reason": "nothing went wrong"}),
        ("update_plan", {"steps": list(steps)}),
    ])


def setup(tmp_path, url, policy="recommended", retries=2, timeout=5.0, fail_on=(), diagnosis=None, corrections=2):
    diagnosis = diagnosis or churn_diagnosis()
    kernel = FakeKernel(diagnosis)
    notebook = FakeNotebook(kernel, fail_on=fail_on)
    session = Session(notebook=str(tmp_path / "nb.ipynb"), path=str(tmp_path / ".nb.ipynb.dcpilot.json"),
                      task=Task(given=Given(target="y")), inputs=Inputs(frames=["df"]))
    session.variables["imports"] = True
    config = LLMConfig(api_key="test-key", base_url=url, max_retries=retries, corrections=corrections,
                       timeout=timeout, model="claude-sonnet-4-6")
    planner = ClaudePlanner(config)
    coordinator = Coordinator(session, kernel, notebook, planner=planner,
                              policy=ApprovalPolicy.from_spec(policy, files=True))
    return coordinator, kernel, notebook, session


def tools_of(body):
    return [t["name"] for t in body.get("tools", [])]


@pytest.mark.slow
async def test_valid_tool_calls_plan_and_the_engine_keeps_what_a_valid_model_needs(tmp_path):
    diagnosis = churn_diagnosis()
    diagnosis["findings"][1]["evidence"]["example"] = "ROW-VALUE-42"  # must never leave the machine
    # Claude drops the imputation and outlier steps, forgets the leakage step, invents one
    answer = plan_answer([
        {"episode": "confirm_task", "reason": "check the target first"},
        {"episode": "deduplicate", "finding_ids": ["duplicate_rows:"], "reason": "invented"},
        {"episode": "drop_identifiers", "finding_ids": ["id_column:customer_id"], "reason": "ids memorise rows"},
        {"episode": "split", "reason": "before learning"},
        {"episode": "train_evaluate", "reason": "fit"},
        {"episode": "explain", "reason": "why"}, {"episode": "report", "reason": "done"}])
    with FakeAnthropic(respond=lambda body: answer) as fake:
        coord, kernel, notebook, session = setup(tmp_path, fake.url, diagnosis=diagnosis)
        assert await coord.run_until_blocked() == "finished"
    done = [s.episode for s in session.plan if s.status == "done"]
    assert "remove_leakage" in done  # kept by the engine although Claude left it out
    assert "impute" not in done and "outliers" not in done  # Claude's choice to leave them out
    assert "complained" not in kernel.columns
    leak = next(s for s in session.plan if s.episode == "remove_leakage")
    assert session.decision(leak.decision_id).by == "policy"
    assert any("not a candidate" in t["text"] for t in session.transcript)
    first = fake.requests[0]
    assert first["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert first["tools"][-1]["cache_control"] == {"type": "ephemeral"}
    assert tools_of(first) == ["record_observation", "decide_backtrack", "update_plan", "propose_custom_step"]
    assert first["max_tokens"] > 0 and first["model"] == "claude-sonnet-4-6"
    bodies = json.dumps(fake.requests)
    assert "ROW-VALUE-42" not in bodies
    # usage and every payload are recorded in the session
    assert len(session.llm_usage) == len(fake.requests) == len(session.llm_payloads)
    assert session.llm_usage[0]["cost_usd"] == pytest.approx(cost_usd("claude-sonnet-4-6", session.llm_usage[0]))
    assert coord.report()["llm_usage"]["calls"] == len(fake.requests)


async def test_malformed_answers_are_retried_with_a_correction(tmp_path):
    script = [text("Sure! Here is my plan: drop the leak."),
              tool_use("update_plan", {"steps": "not a list"}),
              plan_answer()]
    with FakeAnthropic(script, respond=lambda body: plan_answer()) as fake:
        coord, kernel, notebook, session = setup(tmp_path, fake.url)
        assert await coord.run_until_blocked() == "finished"
    assert fake.requests[1]["messages"][-1]["content"][0]["type"] == "text"  # no tool_use to answer
    correction = fake.requests[2]["messages"][-1]["content"][0]
    assert correction["type"] == "tool_result" and correction["is_error"] is True
    assert "is not of type 'array'" in correction["content"]
    assert session.llm_payloads[2]["attempt"] == 3
    assert not any(t["kind"] == "fallback" for t in session.transcript)


async def test_the_sdk_retries_a_rate_limit_after_its_retry_after(tmp_path):
    """One 429 with retry-after: 1 s, then an answer. The SDK retries it (its retry-count header
    says so) after the second the server asked for; no correction round is spent on it."""
    with FakeAnthropic([status(429, retry_after=1)], respond=lambda body: plan_answer()) as fake:
        coord, kernel, notebook, session = setup(tmp_path, fake.url, retries=2)
        assert await coord.run_until_blocked() == "finished"
    assert [h.get("x-stainless-retry-count") for h in fake.headers[:2]] == ["0", "1"]
    assert fake.times[1] - fake.times[0] >= 0.95  # waited as the server asked
    assert session.llm_payloads[0]["attempt"] == 1 and session.llm_payloads[1]["attempt"] == 1
    assert len(fake.requests) == len(session.llm_payloads) + 1  # the retry is the SDK's, not ours
    assert not any("Claude planner unavailable" in w for w in session.warnings)


@pytest.mark.parametrize("code", [408, 409, 500, 529])
async def test_the_sdk_retries_timeouts_conflicts_and_server_errors(tmp_path, code):
    with FakeAnthropic([status(code, retry_after=0.01)], respond=lambda body: plan_answer()) as fake:
        coord, kernel, notebook, session = setup(tmp_path, fake.url, retries=1)
        assert await coord.run_until_blocked() == "finished"
    assert fake.headers[1].get("x-stainless-retry-count") == "1"
    assert not session.warnings or not any("unavailable" in w for w in session.warnings)


async def test_errors_left_after_the_sdk_retries_fall_back_to_the_rules_visibly(tmp_path):
    script = [status(429, retry_after=0.01), status(500, retry_after=0.01), status(529, retry_after=0.01)]
    events = []
    with FakeAnthropic(script) as fake:  # every answer after the script is a 500
        coord, kernel, notebook, session = setup(tmp_path, fake.url, retries=2)
        session.subscribe(events.append)
        assert await coord.run_until_blocked() == "finished"
        calls = len(fake.requests)
    assert calls == 3  # 1 + the SDK's 2 retries, then the LLM is off for the rest of the run
    assert [h.get("x-stainless-retry-count") for h in fake.headers] == ["0", "1", "2"]
    assert any("Claude planner unavailable" in w and "API error 529" in w for w in session.warnings)
    assert any(e["type"] == "planner_fallback" for e in events)
    assert any(t["kind"] == "fallback" for t in session.transcript)
    assert any(s.episode == "remove_leakage" and s.status == "done" for s in session.plan)


def test_every_tool_is_strict_with_closed_objects_and_no_unsupported_keywords():
    from jupyter_dcpilot.engine.planners.claude import REPAIR_TOOL, _tools

    unsupported = {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
                   "minLength", "maxLength", "pattern", "oneOf", "not", "allOf"}

    def objects(schema):
        if isinstance(schema, dict):
            assert not unsupported & set(schema), schema
            if schema.get("type") == "object":
                yield schema
            for value in schema.values():
                yield from objects(value)
        elif isinstance(schema, list):
            for value in schema:
                yield from objects(value)

    for tool in _tools(["split", "impute"]) + [REPAIR_TOOL]:
        assert tool["strict"] is True, tool["name"]
        found = list(objects(tool["input_schema"]))
        assert found and all(o.get("additionalProperties") is False for o in found), tool["name"]
        assert all(set(o["required"]) <= set(o["properties"]) for o in found)


async def test_the_tools_are_sent_strict_and_a_call_outside_the_schema_is_corrected(tmp_path):
    """A plan step that tries to set which columns a step drops is outside the (closed) schema:
    sent back once with the problem, then the valid answer is used."""
    bad = plan_answer([{"episode": "split", "reason": "r", "params": {"columns": ["y"]}}])
    with FakeAnthropic([bad], respond=lambda body: plan_answer()) as fake:
        coord, kernel, notebook, session = setup(tmp_path, fake.url)
        assert await coord.run_until_blocked() == "finished"
    assert all(t["strict"] is True for t in fake.requests[0]["tools"])
    correction = fake.requests[1]["messages"][-1]["content"]
    assert any("Additional properties are not allowed ('columns'" in c["content"] for c in correction)
    assert session.llm_payloads[1]["attempt"] == 2
    assert not any("unavailable" in w for w in session.warnings)


async def test_timeouts_fall_back_to_the_rule_planner(tmp_path):
    with FakeAnthropic([hang(1.5), hang(1.5)]) as fake:
        coord, kernel, notebook, session = setup(tmp_path, fake.url, retries=1, timeout=0.3)
        assert await coord.run_until_blocked() == "finished"
        assert len(fake.requests) == 2
    assert any("APITimeoutError" in w for w in session.warnings)


async def test_gated_steps_never_run_undecided_even_when_claude_asks_for_them(tmp_path):
    answer = plan_answer([{"episode": "remove_leakage", "finding_ids": ["target_leakage:complained"],
                           "reason": "drop it now", "params": {"test_size": 0.3}},
                          {"episode": "confirm_task", "reason": "later"}])
    with FakeAnthropic(respond=lambda body: answer) as fake:
        coord, kernel, notebook, session = setup(tmp_path, fake.url, policy="ask")
        assert await coord.run_until_blocked() == "blocked"
        assert notebook.ran == []
        waiting = session.open_decisions()[0]
        assert waiting.gate in ("task", "leakage")
        session.decide(waiting.id, waiting.recommended)
        state = await coord.run_until_blocked()
        assert state == "blocked" and all(not session.step(d.step_id).cell_ids for d in session.open_decisions())
    # Claude's params never replace a gated step's decided action
    leak = next(s for s in session.plan if s.episode == "remove_leakage")
    assert "test_size" not in leak.params


async def test_custom_code_from_an_instruction_is_shown_and_never_auto_approved(tmp_path):
    custom = ("propose_custom_step", {"instruction": 0, "title": "Drop negative incomes",
                                      "code": "df = df[df['income'] >= 0]", "reason": "the user asked",
                                      "changes": ["df"]})

    def respond(body):
        pending = json.loads(body["messages"][0]["content"])["instructions"]
        calls = [("update_plan", {"steps": []})]
        return tool_uses(calls + [custom] if pending else calls)

    with FakeAnthropic(respond=respond) as fake:
        coord, kernel, notebook, session = setup(tmp_path, fake.url, policy="recommended")
        session.instruct("remove rows with a negative income")
        assert await coord.run_until_blocked() == "blocked"
        step = next(s for s in session.plan if s.episode == "custom")
        decision = session.decision(step.decision_id)
        assert decision.gate == "custom_code" and decision.choice is None
        assert "df = df[df['income'] >= 0]" in decision.options[0].description
        assert not any("income'] >= 0" in c for c in notebook.ran)
        session.decide(decision.id, "run", "checked the code")
        assert await coord.run_until_blocked() == "finished"
    cell = next(c for c in notebook.cells if c["metadata"].get("dcpilot", {}).get("step") == step.id
                and c["type"] == "code")
    assert "df = df[df['income'] >= 0]" in cell["source"]
    assert session.decision(step.decision_id).by == "user"


async def test_claude_repairs_a_failing_call_with_new_parameters(tmp_path):
    def respond(body):
        if "repair_step" in tools_of(body):
            return tool_use("repair_step", {"params": [{"name": "method", "value": "most_frequent"}],
                                            "reason": "try mode"})
        return plan_answer([{"episode": e, "reason": "r"} for e in ("confirm_task",)] +
                           [{"episode": "impute", "finding_ids": ["missing_values:age"], "reason": "fill"}])

    with FakeAnthropic(respond=respond) as fake:
        coord, kernel, notebook, session = setup(tmp_path, fake.url, fail_on=("method='median'",))
        assert await coord.run_until_blocked() == "finished"
        repairs = [r for r in fake.requests if "repair_step" in tools_of(r)]
    assert len(repairs) == 1 and "scripted failure" in repairs[0]["messages"][0]["content"]
    impute = next(s for s in session.plan if s.episode == "impute" and s.status == "done")
    cell = next(c for c in notebook.cells if c["metadata"].get("dcpilot", {}).get("step") == impute.id
                and c["type"] == "code")
    assert "kt.impute(train, method='most_frequent', target='y', budget=180)" in cell["source"]
    assert any(t["kind"] == "repair" for t in session.transcript)


async def test_claude_can_decide_to_backtrack_a_finished_step(tmp_path):
    asked = []

    def respond(body):
        state = json.loads(body["messages"][0]["content"])
        done = [h for h in state["history"] if h["episode"] == "outliers" and h["status"] == "done"]
        if done and not asked:
            asked.append(done[0]["id"])
            return plan_answer(backtrack={"backtrack": True, "step_id": done[0]["id"],
                                          "reason": "removing rows biased the sample"})
        return plan_answer([{"episode": e, "finding_ids": f, "reason": "r"} for e, f in (
            ("confirm_task", []), ("impute", ["missing_values:age"]), ("outliers", ["outliers:income"]))])

    with FakeAnthropic(respond=respond) as fake:
        coord, kernel, notebook, session = setup(tmp_path, fake.url)
        assert await coord.run_until_blocked() == "finished"
    undone = session.step(asked[0])
    assert undone.status == "undone" and "removing rows biased the sample" in undone.note
    redo = next(s for s in session.plan if s.episode == "outliers" and s.status == "done")
    assert session.decision(redo.decision_id).choice == "clip"  # 'remove' was excluded
    assert undone.checkpoint_id in kernel.restored
