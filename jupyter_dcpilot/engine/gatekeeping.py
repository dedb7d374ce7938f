"""Gatekeeping: the question a gated step asks, and who answers it.

A gated step gets a :class:`~.session.Decision` (its options from the step's finding, the task
card, or custom code to read); :func:`answer` has an :class:`ApprovalPolicy` or an interactive
prompt answer it, or leaves it open for the expert. The coordinator runs a step only once its
decision is answered; these functions never run one.
"""

from __future__ import annotations

import os
import sys
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from jupyter_dcpilot.terminal import one_line
from kernel_tools.vocabulary import Gate, InferenceKind, StepGate, StepStatus

from . import alike, decisions_file, structure_cards
from .charts import chart_for
from .episodes import Episode
from .session import Decision, Session, Step
from .structure import FROM_FILE
from .structure_cards import Question
from .task import BLOCKS, MULTISTATE
from .validation import did_you_mean
from .wire import DecisionOption, InferenceWire, skip_option

Prompt = Callable[[Decision, Step], Awaitable[tuple[str, str] | None]]
APPROVE_MODES = ("ask", "recommended", "none")


@dataclass
class ApprovalPolicy:
    """Who answers gates when no one is asked: ``ask``, ``recommended``, ``none`` or a file.

    A decisions file (:mod:`.decisions_file`, checked against its JSON Schema) maps gates and
    columns to option ids, ``"recommended"`` or ``"ask"``, e.g.
    ``{"leakage": "drop", "outliers": {"age": "keep", "*": "clip"}, "columns": {"bmi": "keep"}}``;
    ``"*": "recommended"`` takes the recommended option for every gate the file does not name.
    LLM-written custom code (gate ``custom_code``) is never approved by a policy.
    ``prompt`` (an async callable) asks a human interactively; without it ``ask`` blocks.
    """

    mode: str = "ask"
    choices: dict[str, Any] = field(default_factory=dict)
    prompt: Prompt | None = None

    @classmethod
    def from_spec(cls, spec: Any, prompt: Prompt | None = None, files: bool = False) -> ApprovalPolicy:
        """The one reader of an ``approve`` setting, whichever host gives it: ``"ask"`` (also
        None), ``"recommended"``, ``"none"``, a decisions file's object (a REST or chat request)
        or, with ``files`` (the command line and the magics, run by the user on their own
        files), its path. ValueError in one line otherwise."""
        if spec is None or (isinstance(spec, str) and spec in APPROVE_MODES):
            return cls(mode=spec or "ask", prompt=prompt)
        if isinstance(spec, dict):
            return cls(mode="file", choices=decisions_file.check(spec, "approve"), prompt=prompt)
        if not isinstance(spec, (str, os.PathLike)) or not files:
            raise ValueError(f"approve must be 'ask', 'recommended', 'none' or an object of choices, not {spec!r}")
        spec = str(spec)
        if not Path(spec).is_file():
            if spec.lower().endswith(".json"):
                raise ValueError(f"decisions file not found: {spec}")
            raise ValueError(f"--approve must be ask, recommended, none or a JSON file; {spec!r} is none of "
                             f"these{did_you_mean(spec, list(APPROVE_MODES))}")
        return cls(mode="file", choices=decisions_file.read(spec), prompt=prompt)

    @property
    def via(self) -> str:
        """Where its answers come from, in words (a decision's ``via``)."""
        return "decisions file" if self.mode == "file" else "approval policy"

    @property
    def plan_edits(self) -> Any:
        """The plan edits a decisions file makes (its ``plan`` entry), None without a file."""
        return self.choices.get("plan") if self.mode == "file" else None

    def choose(self, decision: Decision) -> tuple[str, str] | None:
        """``(choice, rationale)`` decided by policy, or None when a human must answer."""
        if decision.gate == StepGate.CUSTOM_CODE:
            return ("skip", "custom code is skipped without expert steps") if self.mode == "none" else None
        if self.mode == "recommended" and decision.recommended:
            return decision.recommended, "recommended option (--approve recommended)"
        if self.mode == "none":
            return "skip", "no expert steps (--approve none)"
        if self.mode == "file":
            choice = self._from_file(decision)
            if choice == "recommended":
                return (decision.recommended, "recommended option (decisions file)") if decision.recommended else None
            if choice is not None and choice != "ask":
                if decision.option(choice) is None:
                    ids = [o.id for o in decision.options]
                    raise ValueError(f"decisions file: {choice!r} is not an option of the "
                                     f"{decision.gate} decision on {decision.columns} (options: {ids})")
                return choice, FROM_FILE
        return None

    def _from_file(self, decision: Decision) -> str | None:
        by_column = self.choices.get("columns", {})
        for column in decision.columns:
            if column in by_column:
                return by_column[column]
        entry = self.choices.get(decision.gate)
        if isinstance(entry, dict):
            for column in decision.columns:
                if column in entry:
                    return entry[column]
            entry = entry.get("*")
        if entry is None and self.choices.get("*") == "recommended":
            return "recommended"  # the policy's answer, not the file's: it confirms nothing
        return entry


async def answer(session: Session, step: Step, decision: Decision, policy: ApprovalPolicy) -> bool:
    """Have the policy (else its prompt) answer an open decision; False when it stays open for
    the expert (the step then awaits it). A decision the user undid is theirs to answer again,
    never the policy's."""
    picked = None if decision.reopened else policy.choose(decision)
    by: Any = "policy"
    via = policy.via
    if picked is None and policy.prompt is not None:
        picked, by, via = await policy.prompt(decision, step), "user", "terminal"
    if picked is None:
        step.status = StepStatus.AWAITING_DECISION
        session.changed("awaiting_decision", step=step.id, decision=decision.to_dict())
        return False
    choice, rationale = picked
    session.decide(decision.id, choice, rationale, by=by, via=via)
    return True


def new_decision(session: Session, step: Step, episode: Episode | None) -> Decision:
    """The question a gated step asks, added to the session: the task card for an episode whose
    answer is the task, the code itself for custom code, else its finding's options less those a backtrack excluded (with the entity's candidates at
    an uncertain aggregation; the join key's inference at a join)."""
    s = session
    answers_task = episode is not None and episode.runs == "task"
    if answers_task:
        q = structure_cards.task_card(s.task, s.structure)
    elif step.code is not None:
        q = Question([DecisionOption(id="run", label="Run this code", description=step.code,
                                     risk="custom code: read it before running", recommended=True), skip_option()],
                     f"Run this custom step? {step.reason}", {})
    else:
        q = Question(*finding_options(s, step))
        if step.gate == Gate.AGGREGATION:
            more, q.inferences = structure_cards.entity_options(s.structure)
            q.options += more
        elif step.gate == Gate.JOIN:
            q.inferences = structure_cards.join_inferences(s.structure, s.inputs.frames)
        elif step.gate == Gate.IDENTIFIERS:  # a column grouping subjects: its use is the structural choice
            q.inferences = structure_cards.grouping_inferences(s.structure, list(step.columns))
        elif step.gate == Gate.LEAKAGE:  # a column the co-pilot only guessed was recorded late: its timing
            q.inferences = structure_cards.timing_inferences(s.structure, list(step.columns))
    options = q.options
    recommended = next((o.id for o in options if o.recommended), None)
    if recommended is None:  # the recommended option was excluded: the next one that acts
        recommended = next((o.id for o in options if o.action), options[0].id)
    finding = s.finding(step.finding_ids[0]) if step.finding_ids and step.code is None else None
    rejects = None if answers_task else next(
        (o.id for o in options if o.id == "skip"),
        next((o.id for o in options if o.id != recommended and not o.action), None))
    # a random suffix: a decision id of another notebook's session never matches one here
    decision = Decision(id=f"{s.new_id('d')}-{uuid.uuid4().hex[:8]}", step_id=step.id, gate=step.gate or "",
                        question=q.question, evidence=q.evidence, options=options, recommended=recommended,
                        columns=list(step.columns), chart=chart_for(finding), rejects=rejects,
                        inferences=[cast(InferenceWire, i.to_dict()) for i in q.inferences])
    s.decisions.append(decision)
    step.decision_id = decision.id
    s.changed("decision", decision=decision.to_dict())
    return decision


def finding_options(session: Session, step: Step) -> tuple[list[DecisionOption], str, dict[str, Any]]:
    """``(options, question, evidence)`` of a step's first finding, without the options a
    backtrack excluded; one "run" option when none is left."""
    finding = session.finding(step.finding_ids[0]) if step.finding_ids else None
    excluded: set[str] = set()
    for fid in step.finding_ids:
        excluded |= set(session.exclusions.get(fid, []))
    options = [DecisionOption.of(o) for o in (finding.options if finding else []) if o.id not in excluded]
    if not options:
        options = [DecisionOption(id="run", label=step.title, description=step.reason, risk="", recommended=True,
                                  action={"function": step.function, "params": step.params})]
    if finding is None:
        return options, step.reason, {}
    found = [f for f in (session.finding(fid) for fid in step.finding_ids) if f is not None]
    keys = {alike.alike_key(f) for f in found}
    if len(found) > 1 and len(keys) == 1 and None not in keys:  # columns alike, asked once
        # the first finding's evidence stands for the group (what it rests on: the data, a codebook line)
        return (alike.merged_options(options, found), alike.question(found),
                {**dict(finding.evidence), "alike_columns": len(step.columns)})
    return options, finding.summary, dict(finding.evidence)


def restructure(session: Session, decision: Decision) -> str | None:
    """An answer at another gate that changes the structure instead of running the step (the
    entity at the aggregation: ``entity:<column>`` or ``entity:none``): applied to the task, the
    data diagnosed again; what happened, in words (None: not such an answer)."""
    choice = decision.choice or ""
    if decision.gate == StepGate.TASK or not choice.startswith("entity:"):
        return None
    apply_task_answer(session, choice)
    entity = session.task.given.id
    return (f"the entity is now '{entity}'" if entity else "no entity: each row is its own subject") + (
        "; the data is diagnosed again")


def apply_task_answer(session: Session, choice: str | None) -> None:
    """The task card's answer into the session's task (:meth:`.task.Task.answer`); another
    moment of prediction has the data diagnosed again, as the options follow it; rows said to be
    blocks of one entity's records take the blocks' numbering from the entity's inference."""
    if choice == BLOCKS:
        session.task.blocks = structure_cards.block_call(session.structure.inference(InferenceKind.ENTITY))
    if (choice or "").startswith(f"{MULTISTATE}:"):
        session.task.multistate = structure_cards.multistate_call(session.task, choice or "")
    if session.task.answer(choice):
        session.diagnosed_version = -1


def warm_functions(decision: Decision | None, step: Step) -> list[str]:
    """The kernel_tools functions an answer to the decision may call, to import ahead."""
    functions = {o.action["function"] for o in (decision.options if decision else [])
                 if o.action and o.action.get("function")}
    return sorted(functions | ({step.function} if step.function else set()))


def stdin_prompt(stream_in: Any = None, stream_out: Any = None) -> Prompt:
    """An interactive prompt for ``--approve ask`` on a terminal."""
    stream_in = stream_in or sys.stdin
    stream_out = stream_out or sys.stderr

    async def ask(decision: Decision, step: Step) -> tuple[str, str] | None:
        # one line per part: a name holding a line break must not print a line of its own
        stream_out.write(f"\n[{decision.gate}] {one_line(step.title)}\n  {one_line(decision.question)}\n")
        for line in decision.evidence_lines:  # in words, as the card says it
            stream_out.write(f"  - {one_line(line)}\n")
        for i, o in enumerate(decision.options, 1):
            mark = " (recommended)" if o.id == decision.recommended else ""
            stream_out.write(f"  {i}. {one_line(o.id)}{mark}: {one_line(o.label)} — risk: {one_line(o.risk)}\n")
        while True:
            stream_out.write("choose a number or an option id [Enter = recommended]: ")
            stream_out.flush()
            line = stream_in.readline()
            if not line:
                return None
            answer = line.strip()
            if not answer:
                return decision.recommended or decision.options[0].id, "accepted at the prompt"
            if answer.isdigit() and 1 <= int(answer) <= len(decision.options):
                return decision.options[int(answer) - 1].id, "chosen at the prompt"
            if decision.option(answer) is not None:
                return answer, "chosen at the prompt"
            stream_out.write(f"  not an option: {answer!r}\n")

    return ask
