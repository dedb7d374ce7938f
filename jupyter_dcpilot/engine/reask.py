"""A failed step is a question, not an end: back to the decision that led there.

A step can fail because of a structural choice made earlier, and then the step is not broken: the
choice may be wrong, and is asked again, the failure in words first and the alternative that would
not fail recommended (so ``--approve recommended`` takes it):

- **the task**: a model that cannot be cross-validated because a class has two rows (an ordered
  0-10 score taken for eleven classes, or ordered labels such as none < mild < severe taken as
  classes) goes back to the task card, regression recommended (on the labels' ranks);
- **the entity**: rows without an entity id that stop a grouped split or fold go back to the task
  card (where the entity is asked), dropping those rows recommended; an entity with a single
  value (nothing to split by) goes back to it with "no entity" recommended;
- **the join**: a join that fails (a key that repeats where it must not, keys that never meet) is
  asked again without the key that failed, the next one recommended, else not joining;
- **the layout**: (start, stop] rows kept as intervals, some of which span no time (stop <= start),
  stop the time-varying model: the repeated-rows question is asked again, leaving those rows out
  recommended (one row per entity stays offered).

Going back is a backtrack: the steps after the decision are undone (the planner proposes them
again). Each decision is asked again at most once for each cause, and never past the session's
backtracks, so it never loops; where no alternative would do (named classes too rare to
cross-validate, no other key), the run stops with the failure in words, as before.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from kernel_tools.models.messages import AS_A_SCORE, ORDERED_AS_A_SCORE, TOO_FEW_TO_CROSS_VALIDATE
from kernel_tools.vocabulary import Confidence, Gate, InferenceKind, StepStatus, TaskKind

from . import gatekeeping, history, structure_cards
from . import notebook as nb
from .episodes import Episode
from .hosts import NotebookHost
from .kernel_calls import KernelCalls
from .session import Decision, Session, Step
from .task import NO_ENTITY
from .wire import DecisionOption

EMPTY_INTERVALS_OPTION = "drop_empty_intervals"

# the words of kernel_tools' errors about the entity (transforms.splitting, models.evaluate,
# models.time_varying): rows without an id, and an entity that cannot be split by
ENTITY_IDS_MISSING = re.compile(r"no '.+' \(the entity\)|has missing values; every (row|interval) needs an entity")
# models.time_varying's words about intervals that span no time
EMPTY_INTERVALS = re.compile(r"intervals? of .+ ha(?:s|ve) '(?P<start>.+)' >= '(?P<stop>.+)': an interval must span time")
# ... and about intervals that repeat an earlier one of their entity exactly (several events at one time)
REPEATED_INTERVALS = re.compile(r"intervals? of .+ repeats? an earlier interval of (?:its|their) '(?P<id>.+)' exactly "
                                r"\(the same '(?P<start>.+)' and '(?P<stop>.+)': several events at one time\)")
ENTITY_TOO_FEW = re.compile(r"has a single entity: nothing to split by|the number of groups is [01] \(need at least 2\)")


@dataclass(frozen=True)
class Cause:
    """Why a step failed, as a decision to ask again: which decision (``"task"``: the task
    card; ``"join"``: the join's question; ``"layout"``: the repeated rows' question), what in
    words, and the answer recommended then (None: the next option left)."""

    decision: str
    what: str
    alternative: str | None

    @property
    def key(self) -> str:
        return f"{self.decision}: {self.what}"


def task_alternative(session: Session, error: str) -> str | None:
    """The task kind that would not fail as ``error`` says, or None when the failure is not the
    task's or no other kind would do (named classes too rare)."""
    if TOO_FEW_TO_CROSS_VALIDATE not in error or session.task.kind != TaskKind.CLASSIFICATION:
        return None
    return TaskKind.REGRESSION.value if AS_A_SCORE in error or ORDERED_AS_A_SCORE in error else None


def cause_of(session: Session, failed: Step, episode: Episode | None) -> Cause | None:
    """The decision that led to ``failed``'s failure, or None when it is not a structural one."""
    error = failed.error or ""
    if episode is None:
        return None
    if episode.combines_frames:
        return Cause("join", "the join", None)
    if episode.stage not in ("split", "post_split", "model"):
        return None
    kind = task_alternative(session, error)
    if kind is not None:
        return Cause("task", "the task", kind)
    if session.task.id and ENTITY_IDS_MISSING.search(error) and not session.task.missing_ids:
        return Cause("task", "the entity", "ids:drop")
    if session.task.id and ENTITY_TOO_FEW.search(error):
        return Cause("task", "the entity", f"entity:{NO_ENTITY}")
    if EMPTY_INTERVALS.search(error):
        return Cause("layout", "intervals that span no time", EMPTY_INTERVALS_OPTION)
    if REPEATED_INTERVALS.search(error):
        return Cause("layout", "intervals repeated exactly", EMPTY_INTERVALS_OPTION)
    return None


def asked_again(session: Session, cause: Cause) -> bool:
    """Whether this decision was already asked again for this cause (once is all)."""
    return any(t.get("kind") == "backtrack" and t.get("reasked") == cause.key for t in session.transcript)


async def reask(session: Session, calls: KernelCalls, notebook: NotebookHost, failed: Step,
                episodes: dict[str, Episode], max_backtracks: int) -> bool:
    """Go back and ask again the decision that led to ``failed``'s failure (see the module
    docstring); False (nothing done) when the failure is not a structural choice's, no
    alternative would do, it was asked again already, or no backtrack is left."""
    cause = cause_of(session, failed, episodes.get(failed.episode))
    if cause is None or session.backtracks >= max_backtracks or asked_again(session, cause):
        return False
    if cause.decision == "join":
        return await _reask_join(session, notebook, failed, episodes, cause)
    if cause.decision == "layout":
        return await _reask_layout(session, calls, notebook, failed, episodes, cause)
    return await _reask_task_card(session, calls, notebook, failed, episodes, cause)


async def _reask_task_card(session: Session, calls: KernelCalls, notebook: NotebookHost, failed: Step,
                           episodes: dict[str, Episode], cause: Cause) -> bool:
    """Back to before the first step after the task card, and the card asked again."""
    s = session
    assert cause.alternative is not None
    card = next((st for st in s.plan if st.status == StepStatus.DONE and st.episode in episodes
                 and episodes[st.episode].runs == "task"), None)
    if card is None:
        return False
    reason = f"{failed.title} failed because of {cause.what}: {failed.error or ''}"
    if s.checkpoints:  # the steps after the task card are undone; the planner proposes them again
        await history.go_back(s, calls, notebook, s.checkpoints[0].id, f"backtracked: {reason}")
    card = s.step(card.id)  # going back put the plan's steps back as they were: the card is another object
    s.diagnosed_version = -1  # findings and options follow the task
    if cause.what == "the entity":
        _doubted(s, InferenceKind.ENTITY, reason)
    decision = _ask_again(s, card, episodes[card.episode], reason)
    if decision.option(cause.alternative) is None:  # e.g. "no entity" for an entity inferred with confidence
        decision.options.append(structure_cards.answer_option(cause.alternative, s.task))
    _recommend(decision, cause.alternative)
    s.changed("decision", decision=decision.to_dict())
    await _said(s, notebook, failed, reason, cause, f"{cause.what} is asked again on the task card",
                excluded=s.task.kind.value if cause.what == "the task" and s.task.kind else None)
    return True


async def _reask_join(session: Session, notebook: NotebookHost, failed: Step, episodes: dict[str, Episode],
                      cause: Cause) -> bool:
    """The join asked again without the option that failed (its cell was undone by the worker),
    the next option that joins recommended, else one that does not join."""
    s = session
    taken = s.decision(failed.decision_id).choice if failed.decision_id else None
    finding = s.finding(failed.finding_ids[0]) if failed.finding_ids else None
    if finding is None:
        return False
    taken = taken or (finding.recommended.id if finding.recommended else None)
    excluded = {o for fid in failed.finding_ids for o in s.exclusions.get(fid, [])} | {taken}
    # the next key that joins, else not joining ("keep separate"): the run goes on without the join
    left = ([o for o in finding.options if o.id not in excluded and o.action]
            or [o for o in finding.options if o.id not in excluded])
    if not left or taken is None:
        return False
    for fid in failed.finding_ids:
        s.exclusions.setdefault(fid, []).append(taken)
    label = next((o.label for o in finding.options if o.id == taken), taken)
    named = "" if failed.title.startswith(str(label)) else f" ({label})"  # the answer's title names it already
    reason = f"{failed.title} failed because of {cause.what}{named}: {failed.error or ''}"
    failed.gate = failed.gate or Gate.JOIN  # a join that ran unasked is asked now
    decision = _ask_again(s, failed, episodes[failed.episode], reason)
    _recommend(decision, left[0].id)
    s.changed("decision", decision=decision.to_dict())
    await _said(s, notebook, failed, reason, cause, "the join is asked again without it", excluded=taken)
    return True


async def _reask_layout(session: Session, calls: KernelCalls, notebook: NotebookHost, failed: Step,
                        episodes: dict[str, Episode], cause: Cause) -> bool:
    """Back to the repeated rows' question (rows kept as intervals), asked again with leaving out
    the intervals that span no time recommended."""
    s = session
    layout = next((st for st in s.plan if st.status == StepStatus.DONE and st.episode in episodes
                   and episodes[st.episode].gate == Gate.AGGREGATION), None)
    words = EMPTY_INTERVALS.search(failed.error or "") or REPEATED_INTERVALS.search(failed.error or "")
    if layout is None or words is None:
        return False
    since = _checkpoint_since(s, layout)
    reason = f"{failed.title} failed because of {cause.what}: {failed.error or ''}"
    if since is not None:  # the steps after the question are undone; the planner proposes them again
        await history.go_back(s, calls, notebook, since, f"backtracked: {reason}")
    layout = s.step(layout.id)  # going back put the plan's steps back as they were
    s.handled = [f for f in s.handled if f not in layout.finding_ids]  # so the planner proposes it again
    decision = _ask_again(s, layout, episodes[layout.episode], reason)
    decision.options.insert(0, empty_intervals_option(words["start"], words["stop"], s.task.id or None,
                                                      s.task.target or None))
    _recommend(decision, EMPTY_INTERVALS_OPTION)
    s.changed("decision", decision=decision.to_dict())
    await _said(s, notebook, failed, reason, cause, "the repeated rows are asked again")
    return True


def empty_intervals_option(start: str, stop: str, entity: str | None = None, event: str | None = None
                           ) -> DecisionOption:
    """Keep the rows as intervals, less those that span no time (and, with the ``entity``, less the
    exact repeats of an interval, one kept with the ``event`` if any of them had it)."""
    repeats = (f" A row that repeats an earlier interval of its '{entity}' exactly (several events found at one "
               f"time) is kept once, with the event if any of the repeats had it." if entity else "")
    params = {"start": start, "stop": stop, "reason": "an interval must span time"}
    if entity:
        params.update({"id": entity, **({"event": event} if event else {})})
    return DecisionOption(
        id=EMPTY_INTERVALS_OPTION, label="Keep the intervals, leave out those that span no time",
        description=f"Rows whose '{stop}' is at or before their '{start}' hold no time at risk (an event "
        "recorded at the start of follow-up, or a data-entry slip); the other rows stay intervals, grouped "
        f"by entity, for the time-varying model.{repeats}",
        risk=f"check those rows: a '{start}' and '{stop}' swapped or on another clock is an error to correct"
        + ("; a repeated event counts once" if entity else ""),
        recommended=True, action={"function": "drop_empty_intervals", "params": params})


def _checkpoint_since(session: Session, step: Step) -> str | None:
    """The checkpoint before ``step`` if it ran a cell, else the first taken after it (None: none)."""
    if step.checkpoint_id:
        return step.checkpoint_id
    ids = [st.id for st in session.plan]
    later = {st.checkpoint_id for st in session.plan[ids.index(step.id) + 1:] if st.checkpoint_id}
    return next((cp.id for cp in session.checkpoints if cp.id in later), None)


def _doubted(session: Session, what: InferenceKind, reason: str) -> None:
    """A step failed because of this choice: evidence against it, so it is low-confidence (the
    verdict's structure_confirmed names it until a person answers the question again)."""
    s = session.structure
    s.inferences = [replace(i, confidence=Confidence.LOW, evidence=[reason, *i.evidence]) if i.what == what else i
                    for i in s.inferences]


def _ask_again(session: Session, step: Step, episode: Episode, reason: str) -> Decision:
    """``step`` pending again with a new question, the failure in words first (the earlier
    answer stays in the decision log)."""
    step.status, step.note = StepStatus.PROPOSED, reason
    step.decision_id = None
    step.titled_by(None)  # the earlier answer no longer says what it does
    decision = gatekeeping.new_decision(session, step, episode)
    decision.question = f"{reason.rstrip('.')}. {decision.question}"
    return decision


def _recommend(decision: Decision, choice: str) -> None:
    for option in decision.options:
        option.recommended = option.id == choice
    decision.recommended = choice


async def _said(session: Session, notebook: NotebookHost, failed: Step, reason: str, cause: Cause, then: str,
                excluded: str | None = None) -> None:
    """A backtrack spent, said in the notebook and the transcript."""
    s = session
    s.backtracks += 1
    cell = await notebook.insert_markdown(nb.backtrack_markdown(failed, reason),
                                          {"dcpilot": {"step": failed.id, "kind": "backtrack"}})
    s.cells.append({"id": cell, "step": failed.id, "kind": "backtrack"})
    s.log("backtrack", f"{failed.id} ({failed.title}): {reason}; {then}", step_id=failed.id,
          excluded=excluded, reasked=cause.key)
