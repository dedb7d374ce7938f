"""Claude for the browser tests: the fake Messages API of the Python tests (tests/fake_anthropic.py)
on 127.0.0.1, started in the test server's process by jupyter_server_test_config.py, with its
API key and base URL set for that server only. A session planned with the rule planner (the
panel's default) never calls it; one the test starts with the Claude planner gets these answers:

- ``propose_timings``: every column asked about is proposed for *baseline*, with a reason that
  says it is this script's (the card shows it as Claude's proposal);
- ``repair_step``: no repair;
- a plan: every candidate step the planner was offered, in its order.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from fake_anthropic import FakeAnthropic, tool_use, tool_uses  # noqa: E402

REASON = "measured before the operation in this study (the browser tests' scripted answer)"


def respond(body: dict[str, Any]) -> dict[str, Any]:
    tools = {t["name"] for t in body.get("tools", [])}
    state = json.loads(body["messages"][0]["content"])
    if "propose_timings" in tools:
        return tool_use("propose_timings", {"proposals": [
            {"column": c["name"], "group": "baseline", "reason": REASON} for c in state["asked"]]})
    if "repair_step" in tools:
        return tool_use("repair_step", {"params": [], "reason": "no repair"})
    steps = [{"episode": c["episode"], "finding_ids": c["finding_ids"], "reason": "planned"}
             for c in state.get("candidates", [])]
    return tool_uses([("record_observation", {"summary": "as the rules found"}),
                      ("decide_backtrack", {"backtrack": False, "reason": "nothing went wrong"}),
                      ("update_plan", {"steps": steps})])


def start() -> FakeAnthropic:
    """The fake API, serving until the process ends."""
    return FakeAnthropic(respond=respond).__enter__()
