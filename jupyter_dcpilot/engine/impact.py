"""Decision impact: what each option of a gate card would do to the model, filled in while the
expert reads the card.

:func:`estimate` starts :class:`kernel_tools.impact.ImpactJob` in the kernel (a background thread
there: the user's cells and the co-pilot's probes are not held up), polls it, and writes each
option's result into ``decision.options[i].impact`` as it arrives — ``{"metric", "mean",
"sd", "rows", "columns", "top_features", "flags"}`` — and the comparison into
``decision.impact`` (``status``, ``best``, ``spread``, ``note``). Cancelling the task (the expert
answered, edited the step, or asked it to stop) stops the kernel's job before its next fit.

The validity flags follow the session's evidence, not names: the columns the diagnosis found
recorded after the prediction time (timing evidence of its findings), flagged as leakage or as
identifiers, and the index (a per-entity prediction time makes "the last visit" a look ahead).
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

from jupyter_dcpilot.probe import ProbeError
from kernel_tools.vocabulary import FindingKind, TaskKind, metric_words

from .episodes import Episode
from .errors import in_words
from .groups import step_groups
from .hosts import KernelProbe
from .kernel_calls import KernelCalls
from .plan_edits import call_params
from .session import Decision, Session
from .validity import flagged_columns
from .wire import Impact, ImpactSummary

GATES = ("leakage", "aggregation", "outliers", "label_issues", "imputation", "row_removal")
TOLERANCE = 0.005  # options whose mean scores differ by less: the card says the choice barely matters
POLL_S = 0.3


def wanted(session: Session, decision: Decision) -> bool:
    """Whether a decision's options get an impact estimate: an open gate of :data:`GATES` with
    two options or more, one of which runs a call, and a target to score."""
    return (decision.gate in GATES and not decision.decided and len(decision.options) > 1
            and any(o.action for o in decision.options) and bool(session.task.target)
            and session.task.kind is not None)


def request(session: Session, decision: Decision, episodes: dict[str, Episode]) -> dict[str, Any]:
    """The arguments of ``impact_start_json`` for a decision: the frame its step changes, its
    options' calls (with the expert's parameters), the task and the validity evidence."""
    step = session.step(decision.step_id)
    ep = episodes.get(step.episode)
    post = ep is not None and ep.stage == "post_split"
    task = session.task
    columns = session.variables.get("train_columns" if post else "columns") or []
    groups = step_groups(session, columns)
    options: list[dict[str, Any]] = []
    unchanged = False
    for o in decision.options:
        action = o.action
        if not action:
            if unchanged:  # "keep" and "skip" both leave the data as it is: estimated once
                continue
            unchanged = True
        else:
            params = call_params(step, action["function"], action.get("params") or {}, ep)
            action = {"function": action["function"],
                      "params": ep.with_entity(action["function"], params, groups) if ep else params}
        options.append({"id": o.id, "action": action})
    flagged = flagged_columns(session)
    varying: list[str] = []
    for f in session.findings:  # the frame as it is now: after an aggregation no record repeats
        if f.kind == FindingKind.REPEATED_MEASUREMENTS:
            varying = list(f.evidence.get("time_varying_columns") or varying)
    return {"name": "train" if post else session.frame, "options": options, "target": task.target,
            "task": task.kind.value if task.kind else None,
            "time": task.time if task.kind == TaskKind.SURVIVAL else None,
            "groups": groups,
            "stage": "post_split" if post else "pre_split",
            "flagged": {**flagged, "time_varying": varying},
            "index": task.index.get("kind")}


def summary(decision: Decision, tolerance: float = TOLERANCE) -> dict[str, Any]:
    """The comparison of the options estimated so far: ``best``, the best score among the options
    that leave a valid model (no flag: a leak's 0.99 is not "best"; None while none is scored),
    the spread of all the scores, and a note in words."""
    scored: dict[str, float] = {o.id: float(mean) for o in decision.options
                                if o.impact is not None and isinstance(mean := o.impact.get("mean"), (int, float))}
    valid = {o.id: scored[o.id] for o in decision.options if o.id in scored and o.impact and not o.impact.get("flags")}
    best = max(valid, key=valid.__getitem__) if valid else None
    metric = next((o.impact["metric"] for o in decision.options if o.impact), None)
    if len(scored) < 2:
        return {"best": best, "spread": None, "barely_differ": False, "note": ""}
    spread = max(scored.values()) - min(scored.values())
    barely = spread < tolerance
    note = (f"the choice changes the score by < {tolerance}" if barely
            else f"the choice changes the {metric_words(metric)} by up to {spread:.3f}")
    return {"best": best, "spread": round(spread, 6), "barely_differ": barely, "note": note}


async def estimate(session: Session, kernel: KernelProbe, decision: Decision,
                   episodes: dict[str, Episode], poll: float = POLL_S) -> dict[str, Any]:
    """Estimate the impact of every option of ``decision`` and fill the card as results come;
    returns ``decision.impact``. Cancelling the calling task cancels the kernel's job."""
    args = request(session, decision, episodes)
    name, options = args.pop("name"), args.pop("options")
    job = uuid.uuid4().hex[:12]  # named here: a cancel reaches the job even before it answered
    _set(session, decision, {"status": "running", "options": [o["id"] for o in options]})
    seen: set[str] = set()
    try:
        await KernelCalls(kernel).impact_start(name, options, job=job, **args)
        while True:
            await asyncio.sleep(poll)
            state = await KernelCalls(kernel).impact_poll(job)
            fresh = {k: v for k, v in state["results"].items() if k not in seen}
            for option in decision.options:
                if option.id in fresh:
                    option.impact = _public(fresh[option.id])
            for option in decision.options:  # the option estimated once for both "keep" and "skip"
                if not option.action and option.impact is None:
                    twin = next((o for o in decision.options if not o.action and o.impact), None)
                    if twin is not None and twin.impact is not None:
                        option.impact = Impact(**twin.impact)
            seen |= set(fresh)
            done = state["status"] != "running"
            if fresh or done:
                info = {"status": state["status"], "sample_rows": state.get("sample_rows"),
                        "elapsed_s": state.get("elapsed_s"), "perturbations": 5, **summary(decision)}
                if state.get("error"):
                    info["error"] = state["error"]
                _set(session, decision, info)
            if done:
                return dict(decision.impact or {})
    except asyncio.CancelledError:
        try:
            await KernelCalls(kernel).impact_cancel(job)
        finally:
            _set(session, decision, {**(decision.impact or {}), "status": "cancelled"})
        raise
    except ProbeError as error:  # the kernel restarted under it, or an old kernel_tools
        return dict(_set(session, decision, {**(decision.impact or {}), "status": "failed",
                                             "error": in_words(error, "estimating the options")[:300]}))


def _public(impact: dict[str, Any]) -> Impact:
    keys = ("metric", "mean", "sd", "rows", "columns", "top_features", "flags", "scores", "error", "elapsed_s")
    return Impact(**{k: impact.get(k) for k in keys if k in impact})  # type: ignore[typeddict-item]


def _set(session: Session, decision: Decision, info: dict[str, Any]) -> ImpactSummary:
    decision.impact = ImpactSummary(**info)  # type: ignore[typeddict-item]
    session.changed("impact", decision_id=decision.id, impact=info, options=[
        {"id": o.id, "impact": o.impact} for o in decision.options])
    return decision.impact


__all__ = ["GATES", "TOLERANCE", "estimate", "request", "summary", "wanted"]
