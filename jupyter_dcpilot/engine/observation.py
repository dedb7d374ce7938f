"""Observation: the kernel's diagnosis of the frame, read into the session.

The frame is diagnosed whenever a step changed it before the split (the session's
``data_version`` moved past ``diagnosed_version``); after the split the findings stand. A
diagnosis that could not run becomes a finding, so the run goes on but cannot be valid.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from jupyter_dcpilot.probe import ProbeError
from kernel_tools.vocabulary import FindingKind

from .budgets import Budgets
from .episodes import Episode
from .kernel_calls import KernelCalls
from .memory import memory_warning
from .progress import TICK_S, Progress
from .session import Session


async def observe(session: Session, calls: KernelCalls, episodes: dict[str, Episode], *,
                  budgets: Budgets, tick: float | None = None,
                  interrupted: Callable[[], bool] = lambda: False) -> None:
    """Diagnose the session's frame if it changed since; ``interrupted`` tells a diagnosis the
    user stopped (raised again: diagnosed again next run) from one that failed."""
    s = session
    if s.diagnosed_version == s.data_version or _done(s, episodes, lambda ep: ep.stage == "split"):
        return
    hints = diagnosis_hints(s)
    progress = Progress(s, f"diagnosing {s.frame}", budget=budgets.of("diagnose"), tick=tick or TICK_S)
    try:
        # the kernel's diagnosis keeps to its budget itself (skipping what it cannot reach, and saying so)
        diagnosis = await progress.run(calls.diagnose(s.frame, **hints, budget=budgets.of("diagnose")))
    except ProbeError as exc:
        if interrupted() or exc.ename == "KeyboardInterrupt":
            raise  # not a failed diagnosis: the user stopped it (diagnosed again next run)
        diagnosis_failed(s, exc)
        return
    findings = list(diagnosis.get("findings", []))
    frames = s.hints.get("frames", [])
    if len(frames) > 1 and not _done(s, episodes, lambda ep: ep.combines_frames):  # joined: one frame
        try:
            joined = await calls.diagnose_join(frames, **hints)
            findings += joined.get("findings", [])
        except ProbeError as exc:
            s.log("error", f"diagnose_join failed: {exc}")
    s.findings = findings + timing_kept(s, findings) + [
        f for f in s.findings if f.get("kind") == FindingKind.SUSPECTED_LEAKAGE and f.get("id") not in {g.get("id") for g in findings}]
    s.diagnosis = {k: diagnosis.get(k) for k in ("shape", "elapsed_s", "sample_size")}
    stats = diagnosis.get("column_stats") or {}
    # what the diagnosis measured per feature, so a model's too-good score can be read against it
    s.diagnosis.update({"metric": stats.get("metric"), "feature_scores": stats.get("feature_scores") or {},
                        "leakage": stats.get("leakage") or []})
    s.variables.setdefault("initial_shape", diagnosis.get("shape"))
    if not s.variables.get("columns"):
        info = await calls.frame_info([s.frame])
        s.variables["columns"] = (info.get(s.frame) or {}).get("columns") or []
        s.variables["frame_library"] = (info.get(s.frame) or {}).get("library")
        tight = memory_warning(s.frame, info.get(s.frame) or {})
        if tight and tight not in s.warnings:
            s.warnings.append(tight)
            s.log("warning", tight)
    if not s.task.get("confirmed"):
        s.task = _task(s, diagnosis.get("task") or {})
    s.diagnosed_version = s.data_version
    s.log("observe", f"diagnosed {s.frame} {diagnosis.get('shape')}: "
          f"{len(s.findings)} findings in {diagnosis.get('elapsed_s', 0):.1f}s",
          kinds=sorted({f.get("kind") for f in s.findings}))


def diagnosis_hints(session: Session) -> dict[str, Any]:
    """What the diagnosis is told of the task: the expert's word once given, else the hints."""
    s = session
    source = s.task if s.task.get("confirmed") else s.hints
    hints = {k: source.get(k) for k in ("target", "time", "id")}
    kind = s.task.get("kind") if s.task.get("confirmed") else s.hints.get("task")
    if kind not in (None, "auto"):
        hints["task"] = kind
    if s.hints.get("index"):
        hints["index"] = s.hints["index"]
    return hints


def _task(session: Session, detected: dict[str, Any]) -> dict[str, Any]:
    """The task the diagnosis detected, with what the hints name set over it."""
    task = dict(detected)
    for key in ("target", "time", "id"):
        if session.hints.get(key):
            task[key] = session.hints[key]
    if session.hints.get("task") not in (None, "auto"):
        task["kind"] = session.hints["task"]
    return task


def timing_kept(session: Session, findings: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Follow-up findings of the last diagnosis that this one lost only because the column
    that showed them was dropped since: a column's timing does not change when another
    column goes (a donor-match score filled in only where the transplant date is stays
    recorded after the index once that date is dropped; charges stay so without the stay)."""
    s = session
    columns = set(s.variables.get("columns") or [])
    seen = {f.get("id") for f in findings}
    return [f for f in s.findings if f.get("kind") == "target_leakage"
            and (f.get("evidence") or {}).get("timing") in ("follow_up", "outcome_derived")
            and f.get("id") not in seen and f.get("id") not in s.handled
            and columns and all(c in columns for c in f.get("columns", []))]


def diagnosis_failed(session: Session, exc: ProbeError) -> None:
    """A diagnosis that could not run is a finding: the run goes on, but cannot be valid."""
    s = session
    error = " ".join(str(exc).split())[:300]
    s.findings = [{"id": "diagnosis_incomplete:", "kind": "diagnosis_incomplete", "columns": [],
                   "severity": "critical", "gate": None, "options": [],
                   "summary": f"The diagnosis could not run ({error}): nothing was checked, so no "
                              "model built on this data can be called valid.",
                   "evidence": {"detector": "diagnose", "error": error}}]
    s.warnings.append(f"diagnose failed: {error}")
    s.log("error", f"the diagnosis failed ({error}); the co-pilot carries on, but the result "
          "cannot be valid until the diagnosis runs")
    s.diagnosed_version = s.data_version
    if not s.task:
        s.task = {"kind": s.hints.get("task") or "classification",
                  "target": s.hints.get("target"), "time": s.hints.get("time"),
                  "id": s.hints.get("id"), "reason": "from the command line"}


def _done(session: Session, episodes: dict[str, Episode], what: Callable[[Episode], bool]) -> bool:
    """Whether a step of an episode with that property is done."""
    return any(st.status == "done" and st.episode in episodes and what(episodes[st.episode])
               for st in session.plan)
