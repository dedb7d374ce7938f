"""The default planner: the order data work usually follows, driven by the findings.

Deterministic and offline. It turns unhandled findings into steps through the episode library
(one step per finding for gated episodes, so each gets its own decision), adds the steps every
valid model needs (confirm the task, split, train and evaluate, explain, report) and sorts them
by episode order.
"""

from __future__ import annotations

from typing import Any

from kernel_tools.findings import Finding
from kernel_tools.plurals import counted
from kernel_tools.vocabulary import Severity, StepStatus, severity_rank

from .. import alike
from ..episodes import Episode, episode_for, library, recommended_action, step_title
from ..session import Session, Step
from . import PlanUpdate


class RulePlanner:
    """Plan from findings with the episode library; see the module docstring."""

    name = "rules"

    def __init__(self, episodes: dict[str, Episode] | None = None) -> None:
        self.episodes = episodes if episodes is not None else library()

    async def revise(self, session: Session) -> PlanUpdate:
        for instruction in session.instructions:
            if instruction.get("status") == "pending":
                instruction["status"] = "needs_llm"
                session.log("planner", "free-text instructions need the Claude planner; "
                            f"ignored: {instruction['text']!r}")
        return PlanUpdate(steps=self.propose(session), planner=self.name,
                          observation=self.observe(session))

    def observe(self, session: Session) -> str:
        kinds = sorted({f.kind for f in session.findings})
        open_ = [f for f in session.findings if f.id not in session.handled]
        return (f"{counted(len(session.findings), 'finding')} ({', '.join(kinds) or 'none'}); "
                f"{len(open_)} not handled yet")

    def propose(self, session: Session) -> list[Step]:
        """All remaining steps, in the order the work should happen."""
        finished = {s.episode for s in session.plan if s.status in (StepStatus.DONE, StepStatus.SKIPPED)}
        stage_done = {self.episodes[e].stage for e in finished if e in self.episodes}
        steps: list[Step] = []

        def add(ep: Episode, **kw: Any) -> None:
            steps.append(Step(id="", episode=ep.id, title=kw.pop("title", ep.name),
                              gate=kw.pop("gate", ep.gate), function=kw.pop("function", ep.function),
                              **kw))

        for episode in self.episodes.values():
            answered = getattr(session.task, episode.when.get("task") or "", None)  # the task card said to
            if episode.id not in finished and (episode.when.get("always") or isinstance(answered, dict)):
                add(episode, params=dict(answered or {}), reason=episode.coordinator.split(". ")[0])
        # a join that failed was left out, and one backtracked with no key left is not tried again:
        # proposed again without a key it would fail at every turn, and the run would never end
        tried = {s.episode for s in session.plan if s.status in (StepStatus.FAILED, StepStatus.UNDONE)}
        open_joins = {ep.id for f in session.findings if f.id not in session.handled
                      for ep in [episode_for(f, self.episodes)] if ep is not None}
        for join_ep in self.episodes.values():
            if (join_ep.combines_frames and join_ep.id not in finished
                    and not (join_ep.id in tried and join_ep.id not in open_joins)
                    and len(session.inputs.frames) >= join_ep.when["min_frames"]):
                add(join_ep, params=dict(join_ep.params), reason="several input files: join them first")

        groups: dict[str, list[Finding]] = {}
        gone = removed_columns(session)
        for finding in sorted(session.findings, key=lambda f: severity_rank(f.severity)):
            if finding.id in session.handled or (finding.columns and set(finding.columns) <= gone):
                continue  # handled, or about columns a step has removed since it was found
            ep = episode_for(finding, self.episodes)
            if ep is None or ep.combines_frames and ep.id in finished:
                continue
            if ep.stage == "pre_split" and "split" in stage_done:
                continue  # the data is split: a pre-split fix would need a backtrack
            if not [o for o in finding.options if o.id not in session.exclusions.get(finding.id, [])]:
                continue
            if not (finding.gate or ep.gate or ep.combines_frames) and not recommended_action(finding):
                continue  # no decision to make and nothing recommended to run: it is information
            if finding.severity == Severity.INFO and not finding.gate and not recommended_action(finding):
                continue  # diagnose found it harmless (e.g. rows equal by chance): nothing to ask
            groups.setdefault(ep.id, []).append(finding)

        for ep_id, found in groups.items():
            ep = self.episodes[ep_id]
            join = next((s for s in steps if s.episode == ep_id), None)
            if ep.combines_frames and join is not None:
                join.finding_ids = [f.id for f in found]
                join.params = _merged_params(ep, found)
                action = recommended_action(found[0]) or {}
                if action.get("function") not in (None, ep.function):  # records summarised, then joined
                    join.function, join.params = action["function"], dict(action.get("params") or {})
                join.gate = next((f.gate for f in found if f.gate), join.gate)  # an uncertain key asks
            elif ep.per_finding or any(f.gate for f in found):
                for group in [g for g in alike.groups(found) if len(g) > 1]:  # asked once (:mod:`..alike`)
                    action = recommended_action(group[0]) or {}
                    columns = [c for f in group for c in f.columns]
                    add(ep, title=alike.title(ep.name, group), gate=group[0].gate or ep.gate,
                        finding_ids=[f.id for f in group], function=action.get("function") or ep.function,
                        columns=columns, params={**(action.get("params") or {}), "columns": columns},
                        reason=alike.question(group))
                for f in [g[0] for g in alike.groups(found) if len(g) == 1]:
                    action = recommended_action(f) or {}
                    function = action.get("function") or ep.function
                    params = _merged_params(ep, [f]) if function == ep.function else dict(action.get("params") or {})
                    add(ep, title=step_title(ep, [f]) if f.columns else f"{ep.name}: all rows",
                        gate=f.gate or ep.gate, finding_ids=[f.id], function=function,
                        columns=list(f.columns), params=params, reason=f.summary)
            else:
                columns = sorted({c for f in found for c in f.columns})
                add(ep, title=step_title(ep, found),
                    finding_ids=[f.id for f in found], columns=columns,
                    params=_merged_params(ep, found),
                    reason="; ".join(f.summary for f in found[:3]))
        for step in steps:  # a step after the split acts on train, which no longer has them
            if isinstance(step.params.get("columns"), list) and gone & set(step.params["columns"]):
                step.params["columns"] = [c for c in step.params["columns"] if c not in gone]
        steps.sort(key=lambda s: self.episodes[s.episode].order)
        return steps


def removed_columns(session: Session) -> set[str]:
    """The columns the done steps removed and none added back: findings after the split are not
    diagnosed again, so one may still name a column dropped since (a mostly-missing column with
    outliers)."""
    gone: set[str] = set()
    for step in session.plan:
        report = step.result.get("report") if step.status == StepStatus.DONE else None
        if isinstance(report, dict):
            gone = (gone | set(report.get("columns_removed") or [])) - set(report.get("columns_added") or [])
    return gone


def _merged_params(ep: Episode, findings: list[Finding]) -> dict[str, Any]:
    """The episode's defaults updated by the findings' recommended calls (lists unioned, dicts merged)."""
    params = dict(ep.params)
    for f in findings:
        action = recommended_action(f)
        if not action or action.get("function") != ep.function:
            continue
        for key, value in (action.get("params") or {}).items():
            if isinstance(value, list) and isinstance(params.get(key), list):
                params[key] = params[key] + [v for v in value if v not in params[key]]
            elif isinstance(value, dict) and isinstance(params.get(key), dict):
                params[key] = {**params[key], **value}
            else:
                params[key] = value
    return params
