"""The co-pilot engine: session, episodes, planners, coordinator and worker (no Jupyter server code).

It talks to a kernel and a notebook only through :class:`KernelProbe` and :class:`NotebookHost`
(see :mod:`.hosts`), so the server extension, the command line and the tests host the same engine.

Its names are imported when first used: the command line imports :mod:`.hosts` to start its
kernel before the coordinator (which pulls in scikit-learn through the model audit) is loaded.
"""

from __future__ import annotations

import importlib
from typing import Any

_WHERE = {
    "Coordinator": "coordinator", "EPISODES": "episodes", "Episode": "episodes", "library": "episodes",
    "ApprovalPolicy": "gatekeeping", "CellResult": "hosts", "ClientProbe": "hosts", "HeadlessHost": "hosts",
    "KernelProbe": "hosts", "NotebookHost": "hosts", "LLMClient": "llm", "LLMConfig": "llm", "LLMError": "llm",
    "ClaudePlanner": "planners", "PlanUpdate": "planners", "RulePlanner": "planners", "Checkpoint": "session",
    "Decision": "session", "Session": "session", "Step": "session", "sidecar_path": "session",
}


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)


__all__ = [
    "ApprovalPolicy", "CellResult", "Checkpoint", "ClientProbe", "ClaudePlanner", "Coordinator", "Decision",
    "EPISODES", "Episode", "HeadlessHost", "KernelProbe", "LLMClient", "LLMConfig", "LLMError",
    "NotebookHost", "PlanUpdate", "RulePlanner", "Session", "Step", "library", "sidecar_path",
]
