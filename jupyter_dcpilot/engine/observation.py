"""Observation: the kernel's diagnosis of the frame, read into the session.

The frame is diagnosed whenever a step changed it before the split (the session's
``data_version`` moved past ``diagnosed_version``); after the split the findings stand. A
diagnosis that could not run becomes a finding, so the run goes on but cannot be valid.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from jupyter_dcpilot.probe import ProbeError
from kernel_tools.findings import Finding
from kernel_tools.inferences import ColumnTimeline, Inference
from kernel_tools.plurals import counted
from kernel_tools.vocabulary import Chart, FindingKind, Severity, StepStatus

from .budgets import Budgets
from .episodes import Episode
from .groups import chosen_groups
from .kernel_calls import KernelCalls
from .memory import memory_warning
from .progress import TICK_S, Progress
from .session import Session
from .structure import placed_late
from .task import Task


async def observe(session: Session, calls: KernelCalls, episodes: dict[str, Episode], *,
                  budgets: Budgets, tick: float | None = None,
                  interrupted: Callable[[], bool] = lambda: False) -> None:
    """Diagnose the session's frame if it changed since; ``interrupted`` tells a diagnosis the
    user stopped (raised again: diagnosed again next run) from one that failed."""
    s = session
    if s.diagnosed_version == s.data_version or _done(s, episodes, lambda ep: ep.stage == "split"):
        return
    hints = diagnosis_args(s)
    progress = Progress(s, f"diagnosing {s.frame}", budget=budgets.of("diagnose"), tick=tick or TICK_S)
    try:
        # the kernel's diagnosis keeps to its budget itself (skipping what it cannot reach, and saying so)
        diagnosis = await progress.run(calls.diagnose(s.frame, **hints, budget=budgets.of("diagnose")))
    except ProbeError as exc:
        if interrupted() or exc.ename == "KeyboardInterrupt":
            raise  # not a failed diagnosis: the user stopped it (diagnosed again next run)
        diagnosis_failed(s, exc)
        return
    findings = [Finding.from_dict(f) for f in diagnosis.get("findings", [])]
    inferences = [Inference.from_dict(i) for i in diagnosis.get("inferences") or []]
    frames = s.inputs.frames
    if len(frames) > 1 and not _done(s, episodes, lambda ep: ep.combines_frames):  # joined: one frame
        try:
            joined = await calls.diagnose_join(frames, **hints)
            findings += [Finding.from_dict(f) for f in joined.get("findings", [])]
            inferences += [Inference.from_dict(i) for i in joined.get("inferences") or []]
        except ProbeError as exc:
            s.log("error", f"diagnose_join failed: {exc}")
    timeline = diagnosis.get("timeline")
    s.structure.record(inferences, ColumnTimeline.from_dict(timeline) if timeline else None)
    seen = {g.id for g in findings}
    findings += placed_late(s, findings)  # what a person or the co-pilot's guess placed after the index
    s.findings = findings + timing_kept(s, findings) + [
        f for f in s.findings if f.kind == FindingKind.SUSPECTED_LEAKAGE and f.id not in seen]
    s.diagnosis = {k: diagnosis.get(k) for k in ("shape", "elapsed_s", "sample_size")}
    stats = diagnosis.get("column_stats") or {}
    # what the diagnosis measured per feature, so a model's too-good score can be read against it
    s.diagnosis.update({"metric": stats.get("metric"), "feature_scores": stats.get("feature_scores") or {},
                        "leakage": stats.get("leakage") or []})
    book = stats.get("codebook") or {}
    if book.get("format") not in (None, "none"):  # the codebook the diagnosis read (not a bare REDCap layout)
        s.diagnosis["codebook"] = {"source": book.get("source"), "format": book.get("format")}
    s.variables.setdefault("initial_shape", diagnosis.get("shape"))
    if not s.variables.get("columns"):
        info = await calls.frame_info([s.frame])
        s.variables["columns"] = (info.get(s.frame) or {}).get("columns") or []
        s.variables["frame_library"] = (info.get(s.frame) or {}).get("library")
        tight = memory_warning(s.frame, info.get(s.frame) or {})
        if tight and tight not in s.warnings:
            s.warnings.append(tight)
            s.log("warning", tight)
    if not s.task.confirmed:
        s.task = Task.inferred(diagnosis.get("task") or {}, s.task.given)
    else:
        s.task.observed(diagnosis.get("task") or {})
    s.diagnosed_version = s.data_version
    s.log("observe", f"diagnosed {s.frame} {diagnosis.get('shape')}: "
          f"{counted(len(s.findings), 'finding')} in {diagnosis.get('elapsed_s', 0):.1f}s",
          kinds=sorted({f.kind for f in s.findings}))


def diagnosis_args(session: Session) -> dict[str, Any]:
    """What the diagnosis is told: the task as the user gave or confirmed it
    (:meth:`.task.Task.diagnosis_args`), the grouping column the expert chose to keep together
    (no feature, and not asked about again), and the study's codebook (with REDCap's event mapping)."""
    args = session.task.diagnosis_args()
    columns = list(session.variables.get("columns") or [])
    if columns and (groups := chosen_groups(session, columns)):
        args["groups"] = groups
    if session.inputs.dictionary:  # read in the kernel
        args.update(dictionary=session.inputs.dictionary, events=session.inputs.events)
    return args


def timing_kept(session: Session, findings: list[Finding]) -> list[Finding]:
    """Follow-up findings of the last diagnosis that this one lost only because the column
    that showed them was dropped since: a column's timing does not change when another
    column goes (a donor-match score filled in only where the transplant date is stays
    recorded after the index once that date is dropped; charges stay so without the stay)."""
    s = session
    columns = set(s.variables.get("columns") or [])
    seen = {f.id for f in findings}
    return [f for f in s.findings if f.kind == FindingKind.TARGET_LEAKAGE
            and f.evidence.get("timing") in ("follow_up", "outcome_derived")
            and f.id not in seen and f.id not in s.handled
            and columns and all(c in columns for c in f.columns)]


def diagnosis_failed(session: Session, exc: ProbeError) -> None:
    """A diagnosis that could not run is a finding: the run goes on, but cannot be valid."""
    s = session
    error = " ".join(str(exc).split())[:300]
    s.findings = [Finding(FindingKind.DIAGNOSIS_INCOMPLETE, [], Severity.CRITICAL,
                          f"The diagnosis could not run ({error}): nothing was checked, so no model "
                          "built on this data can be called valid.",
                          evidence={"detector": "diagnose", "error": error}, chart=Chart.NONE)]
    s.warnings.append(f"diagnose failed: {error}")
    s.log("error", f"the diagnosis failed ({error}); the co-pilot carries on, but the result "
          "cannot be valid until the diagnosis runs")
    s.diagnosed_version = s.data_version
    if s.task.kind is None:
        s.task = Task.from_request(s.task.given)


def _done(session: Session, episodes: dict[str, Episode], what: Callable[[Episode], bool]) -> bool:
    """Whether a step of an episode with that property is done."""
    return any(st.status == StepStatus.DONE and st.episode in episodes and what(episodes[st.episode])
               for st in session.plan)
