"""The co-pilot engine: session, episodes, planners, coordinator and worker (no Jupyter server code).

It talks to a kernel and a notebook only through :class:`KernelProbe` and :class:`NotebookHost`
(see :mod:`.hosts`), so the server extension, the command line and the tests host the same engine.
"""

from .coordinator import Coordinator
from .episodes import EPISODES, Episode, library
from .gatekeeping import ApprovalPolicy
from .hosts import CellResult, ClientProbe, HeadlessHost, KernelProbe, NotebookHost
from .llm import LLMClient, LLMConfig, LLMError
from .planners import ClaudePlanner, PlanUpdate, RulePlanner
from .session import Checkpoint, Decision, Session, Step, sidecar_path

__all__ = [
    "ApprovalPolicy", "CellResult", "Checkpoint", "ClientProbe", "ClaudePlanner", "Coordinator", "Decision",
    "EPISODES", "Episode", "HeadlessHost", "KernelProbe", "LLMClient", "LLMConfig", "LLMError",
    "NotebookHost", "PlanUpdate", "RulePlanner", "Session", "Step", "library", "sidecar_path",
]
