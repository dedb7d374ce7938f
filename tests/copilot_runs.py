"""Run the co-pilot with the Claude planner on a real kernel against the fake Messages API.

Shared by the privacy, prompt-injection and fault tests: a :class:`HeadlessHost` (a real
ipykernel with ``kernel_tools``), the real ``anthropic`` SDK talking HTTP to
:class:`fake_anthropic.FakeAnthropic` on 127.0.0.1, and helpers to script Claude's answers.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fake_anthropic import tool_uses

from jupyter_dcpilot.engine.coordinator import ApprovalPolicy, Coordinator
from jupyter_dcpilot.engine.hosts import HeadlessHost
from jupyter_dcpilot.engine.llm import LLMConfig
from jupyter_dcpilot.engine.planners import ClaudePlanner
from jupyter_dcpilot.engine.session import Session, sidecar_path
from jupyter_dcpilot.engine.task import Given, Inputs, Task

# every gate answered with its recommended option, except the (slow) label-issue search
FAST_POLICY = {"label_issues": "keep", "*": "recommended"}


def state_of(body: dict[str, Any]) -> dict[str, Any]:
    """The JSON state the planner sent as the first user message."""
    return json.loads(body["messages"][0]["content"])


def plan_all_candidates(body: dict[str, Any], extra: list[tuple[str, dict[str, Any]]] = (),
                        params: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    """A well-behaved answer: every candidate in the given order (``params`` by episode)."""
    if any(t["name"] == "repair_step" for t in body.get("tools", [])):
        return tool_uses([("repair_step", {"params": [], "reason": "no idea"})])
    state = state_of(body)
    steps = [{"episode": c["episode"], "finding_ids": c["finding_ids"], "reason": "planned",
              **({"params": params[c["episode"]]} if params and c["episode"] in params else {})}
             for c in state["candidates"]]
    return tool_uses([("record_observation", {"summary": "ok"}),
                      ("decide_backtrack", {"backtrack": False, "reason": "fine"}),
                      ("update_plan", {"steps": steps}), *extra])


async def start_host(folder: Path, setup_code: str) -> HeadlessHost:
    host = HeadlessHost(folder / "nb.ipynb")
    await host.start()
    result = await host.run_cell(setup_code, {})
    assert result.error is None, result.error
    return host


def claude_coordinator(folder: Path, host: HeadlessHost, url: str, *, target: str, task: str = "auto",
                       share: str | None = None,
                       policy: dict[str, Any] | str = "fast", retries: int = 1, timeout: float = 10.0,
                       kernel: Any = None) -> tuple[Coordinator, Session]:
    notebook = folder / "nb.ipynb"
    session = Session(notebook=str(notebook), path=str(sidecar_path(notebook)), frame="df",
                      task=Task(given=Given(target=target, kind=task)), inputs=Inputs(frames=["df"]))
    session.variables["imports"] = True
    config = LLMConfig(api_key="test-key", base_url=url, max_retries=retries,
                       timeout=timeout, model="claude-sonnet-4-6")
    planner = ClaudePlanner(config, share=share, kernel=kernel)
    if policy == "fast":
        policy = FAST_POLICY
    approval = ApprovalPolicy(mode=policy) if isinstance(policy, str) else ApprovalPolicy(mode="file", choices=policy)
    return Coordinator(session, host, host, planner=planner, policy=approval), session


async def kernel_value(host: HeadlessHost, expression: str) -> Any:
    """The JSON value of ``expression`` in the kernel (run as a cell of the headless notebook)."""
    result = await host.run_cell(f"import json as _j; print(_j.dumps({expression}))", {})
    assert result.error is None, result.error
    return json.loads(result.text().strip().splitlines()[-1])

