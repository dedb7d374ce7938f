"""The Claude planner's path through a table whose rows are hidden blocks of one entity's records
(issue 26): the same task card as the rules planner (the block question, recommended), and,
answered "blocks", the same ``number_blocks`` step, split grouped by the block and confirmed entity
— even when Claude's plan leaves the step out. A real kernel, the real ``anthropic`` SDK against
the fake Messages API; synthetic households (names of no real table)."""

from __future__ import annotations

from typing import Any

import pytest
from copilot_runs import kernel_value, plan_all_candidates, start_host
from fake_anthropic import FakeAnthropic, tool_use
from test_block_ids import households

from jupyter_dcpilot.engine.coordinator import Coordinator
from jupyter_dcpilot.engine.gatekeeping import ApprovalPolicy
from jupyter_dcpilot.engine.hosts import HeadlessHost
from jupyter_dcpilot.engine.llm import LLMConfig
from jupyter_dcpilot.engine.planners import ClaudePlanner
from jupyter_dcpilot.engine.session import Session, sidecar_path
from jupyter_dcpilot.engine.structure import confirmations
from jupyter_dcpilot.engine.task import Given, Inputs, Task

pytestmark = pytest.mark.timeout(300)


def all_but_blocks(body: dict[str, Any]) -> dict[str, Any]:
    """Claude plans every candidate except the block numbering (a step it did not see the need of)."""
    answer = plan_all_candidates(body)
    for block in answer["body"]["content"]:
        if block["name"] == "update_plan":
            block["input"]["steps"] = [s for s in block["input"]["steps"] if s["episode"] != "number_blocks"]
    return answer


def claude(plan):
    """Claude's answers: no timing proposal (none asked of these columns), ``plan`` for the plan."""
    def respond(body: dict[str, Any]) -> dict[str, Any]:
        if any(t["name"] == "propose_timings" for t in body.get("tools", [])):
            return tool_use("propose_timings", {"proposals": []})
        return plan(body)
    return respond


async def run(tmp_path, url: str | None, answers: dict[str, Any]) -> tuple[Coordinator, HeadlessHost, str]:
    """The households run until blocked; with ``url`` Claude plans, else the rules planner."""
    households().to_csv(tmp_path / "households.csv", index=False)
    host = await start_host(tmp_path, f"import pandas as pd\ndf = pd.read_csv({str(tmp_path / 'households.csv')!r})")
    notebook = tmp_path / "nb.ipynb"
    session = Session(notebook=str(notebook), path=str(sidecar_path(notebook)), frame="df",
                      task=Task(given=Given(target="income")), inputs=Inputs(frames=["df"]))
    session.variables["imports"] = True
    planner = ClaudePlanner(LLMConfig(api_key="test-key", base_url=url, max_retries=1, timeout=10.0,
                                      model="claude-sonnet-4-6")) if url else None
    coord = Coordinator(session, host, host, planner=planner,
                        policy=ApprovalPolicy.from_spec(answers) if answers else ApprovalPolicy())
    state = await coord.run_until_blocked()
    return coord, host, state


def task_card(session: Session) -> dict[str, Any]:
    d = next(d for d in session.decisions if d.gate == "task")
    return {"question": d.question, "options": [o.to_dict() for o in d.options], "recommended": d.recommended}


@pytest.mark.slow  # two runs, two kernels
async def test_claude_asks_the_block_question_the_rules_planner_asks(tmp_path):
    (tmp_path / "rules").mkdir()
    (tmp_path / "claude").mkdir()
    rules, host, state = await run(tmp_path / "rules", None, {})
    await host.stop()
    assert state == "blocked"
    with FakeAnthropic(respond=claude(plan_all_candidates)) as fake:
        coord, host, state = await run(tmp_path / "claude", fake.url, {})
        await host.stop()
    session = coord.session
    assert state == "blocked" and fake.requests
    assert session.llm_usage and not session.warnings  # Claude planned: no fallback to the rules
    assert task_card(session) == task_card(rules.session)
    assert task_card(session)["recommended"] == "blocks"


@pytest.mark.parametrize("plan", [pytest.param(plan_all_candidates, marks=pytest.mark.slow), all_but_blocks],
                         ids=["all", "forgets_blocks"])
async def test_answered_blocks_claude_numbers_them_and_splits_by_the_block(tmp_path, plan):
    with FakeAnthropic(respond=claude(plan)) as fake:
        coord, host, state = await run(tmp_path, fake.url, {"task": "blocks", "*": "recommended"})
        session = coord.session
        try:
            assert state == "finished", session.warnings
            assert await kernel_value(host, "df['block'].nunique()") == 120
            code = "\n".join(str(c.source) for c in host.notebook.cells if c.cell_type == "code")
        finally:
            await host.stop()
    assert session.llm_usage and not any("unavailable" in w for w in session.warnings)  # Claude planned
    step = next(s for s in session.plan if s.episode == "number_blocks")
    assert step.status == "done" and step.params == {"column": "block", "size": 6}
    assert "kt.number_blocks(df, column='block', size=6)" in code and "groups='block'" in code
    assert session.task.id == "block"
    assert confirmations(session)["entity"]
    checks = {c["check"]: c for c in coord.report()["validity"]}
    assert checks["entities_together"]["passed"] and "grouped by 'block'" in checks["entities_together"]["detail"]
    assert checks["structure_confirmed"]["passed"], checks["structure_confirmed"]["detail"]
    if plan is all_but_blocks:
        assert any("a valid model needs it" in t["text"] and "block" in t["text"].lower() for t in session.transcript)
