"""One place that builds a co-pilot for a host: the command line, the magics and the server.

A host turns what it was asked into a :class:`Request` — the frame, what the user named
(:class:`~.task.Given`), the inputs, who answers the gates (``approve``), the time budgets and
the planner — and gives its two interfaces (a :class:`~.hosts.KernelProbe` and a
:class:`~.hosts.NotebookHost`). :func:`open_session` loads the notebook's session or starts one,
:func:`build` makes its coordinator. Every host reads ``approve`` with the same parser
(:meth:`.gatekeeping.ApprovalPolicy.from_spec`), answers decisions with the same rules
(:meth:`.session.Session.decide`) and edits the plan on the same path (:mod:`.plan_edits`),
naming itself (:class:`.hosts.Via`) in the decision log.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .budgets import Budgets
from .coordinator import Coordinator
from .gatekeeping import ApprovalPolicy, Prompt
from .hosts import KernelProbe, NotebookHost
from .llm import LLMConfig
from .session import Session, sidecar_path
from .sharing import SHARE_MODES
from .task import Given, Inputs, Task
from .worker import Stop

PLANNERS = ("rules", "claude")


@dataclass
class Request:
    """What a host was asked to start: see the module docstring. ``approve``: ask, recommended,
    none, a decisions file's object (or its path, where the host may read the user's files);
    ``budget``: seconds per kind of step (:mod:`.budgets`); ``planner``: rules or claude;
    ``impact``: estimate every gated decision's impact before it is answered (headless runs)."""

    frame: str = "df"
    given: Given = field(default_factory=Given)
    inputs: Inputs = field(default_factory=Inputs)
    approve: Any = None
    budget: Any = None
    planner: str = "rules"
    model: str | None = None
    impact: bool = False

    def __post_init__(self) -> None:
        if not self.frame.isidentifier():
            raise ValueError(f"frame must be a Python variable name, not {self.frame!r}")
        if self.planner not in PLANNERS:
            raise ValueError(f"planner must be one of {list(PLANNERS)}, not {self.planner!r}")
        if self.inputs.share not in SHARE_MODES:
            raise ValueError(f"share must be one of {list(SHARE_MODES)}, not {self.inputs.share!r}")

    def policy(self, prompt: Prompt | None = None, files: bool = False) -> ApprovalPolicy:
        """The approval policy ``approve`` names (``files``: a path may name a decisions file)."""
        return ApprovalPolicy.from_spec(self.approve, prompt=prompt, files=files)

    def resumed_by(self, session: Session) -> bool:
        """Whether a saved session answers this request: the same frame, what the user named,
        and the kernel that holds it (another kernel's checkpoints cannot be restored)."""
        return (session.frame == self.frame and session.task.given == self.given
                and session.inputs.kernel == self.inputs.kernel
                and (session.inputs.dictionary, session.inputs.events) == (self.inputs.dictionary, self.inputs.events))


def open_session(request: Request, notebook: str | os.PathLike[str], *, fresh: bool = False) -> Session:
    """The notebook's session for ``request``: its sidecar's when that session answers the same
    request (:meth:`Request.resumed_by`), else a new one saved there. ``fresh``: always new."""
    path = sidecar_path(notebook)
    session = None if fresh else Session.for_notebook(notebook, frame=request.frame)
    if session is not None and not session.trusted:  # history only: this request says what to do now
        session.task.given, session.inputs = request.given, request.inputs
    elif session is None or (session.transcript or session.plan) and not request.resumed_by(session):
        path.unlink(missing_ok=True)
        session = Session(notebook=str(notebook), path=str(path), frame=request.frame)
    if not session.plan:  # nothing done yet: the request's words
        session.task, session.inputs = Task(given=request.given), request.inputs
    session.notebook = str(Path(notebook))  # a sidecar moved with a renamed notebook or folder
    session.inputs.share = request.inputs.share
    return session


def build(request: Request, session: Session, kernel: KernelProbe, notebook: NotebookHost, *,
          policy: ApprovalPolicy | None = None, llm: LLMConfig | None = None, base: Budgets | None = None,
          stop: Stop | None = None, tick: float | None = None) -> Coordinator:
    """The coordinator of ``session`` as ``request`` asks: its policy (``policy``, else the one
    ``approve`` names), budgets (over ``base``) and planner (Claude with ``llm``, reading the
    kernel through ``kernel``; the rule planner without a key, said in the session's warnings)."""
    budgets = Budgets.from_spec(request.budget, base=base)
    planner = None
    if request.planner == "claude":
        if llm is not None and llm.available:
            from .planners import ClaudePlanner

            planner = ClaudePlanner(llm, share=session.inputs.share, kernel=kernel)
        else:
            session.warnings.append("no Anthropic API key (ANTHROPIC_API_KEY or the system keyring): "
                                    "using the rule planner")
    session.settings = {"planner": request.planner if planner is not None else "rules",
                        "model": llm.model if planner is not None and llm is not None else None,
                        "share": session.inputs.share, "approve": _setting(request.approve),
                        "budgets": budgets.to_dict(), **({"impact": True} if request.impact else {})}
    return Coordinator(session, kernel, notebook, planner=planner,
                       policy=policy if policy is not None else request.policy(),
                       budgets=budgets, stop=stop, tick=tick, estimate_impact=request.impact)


def _setting(approve: Any) -> Any:
    """``approve`` as the sidecar keeps it (a path as text)."""
    return str(approve) if isinstance(approve, os.PathLike) else approve


__all__ = ["PLANNERS", "SHARE_MODES", "Request", "build", "open_session"]
