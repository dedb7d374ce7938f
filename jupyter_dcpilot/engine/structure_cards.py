"""The structural questions: what a gate asks about the table's structure, with the alternatives
ranked and their evidence, and what an answer changes.

- **The task card** (gate ``task``): the task kind, the survival time, the entity and the moment
  of prediction as inferred, each with its evidence; an uncertain one offers its alternatives
  (another task kind, ``time:<column>``, ``entity:<column>`` or ``entity:none``, ``index:...``).
- **The aggregation** (gate ``aggregation``): when the entity is uncertain, its ranked candidates
  and "no entity" beside the ways to aggregate.
- **The join** (gate ``join``): the key's inference beside the finding's options (a key per
  candidate, never row numbers; records over time summarised up to the index first).

Each question lists the inferences it asks about (``Decision.inferences``): a person's answer
confirms them (:func:`.structure.confirmations`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kernel_tools.inferences import STATUS_READING, Inference
from kernel_tools.plurals import counted
from kernel_tools.vocabulary import Confidence, InferenceKind, TaskKind

if TYPE_CHECKING:  # the panel's view reads a session
    from .session import Session

from .evidence_lines import sentence_lines
from .structure import ASKED_ELSEWHERE, Structure, confirmations, in_words, named, task_choice
from .task import BLOCKS, MULTISTATE, NO_ENTITY, Task
from .wire import DecisionOption

# the other moments a prediction can be made, offered on the task card
INDEX_CHOICES = {
    "index:first": ("Predict at each entity's first record",
                    "Predictions are made at enrolment (the first record of each entity): later "
                    "records are not known then.", "later measurements cannot be used as they are"),
    "index:row": ("Predict at every record",
                  "Each record is a prediction at its own time; the outcome and any duration are "
                  "counted from that record.", "wrong when the outcome or duration counts from the "
                  "first record: later records would know the future"),
}


@dataclass
class Question:
    """What a structural gate asks: options, the question in words, its evidence, and the
    inferences it settles."""

    options: list[DecisionOption]
    question: str
    evidence: dict[str, Any]
    inferences: list[Inference] = field(default_factory=list)


def _unsure(inference: Inference | None) -> bool:
    return inference is not None and inference.confidence == Confidence.LOW


def _said(alt_evidence: list[str]) -> str:
    said = "; ".join(alt_evidence[:2])
    return f" {said[:1].upper()}{said[1:]}." if said else ""  # a sentence of its own


def task_card(task: Task, structure: Structure) -> Question:
    """The task card: confirm, or another task kind, survival time, entity or moment of prediction."""
    t = task
    kind = t.kind.value if t.kind else None
    asked = {InferenceKind(i.what): i for i in structure.table() if i.what not in ASKED_ELSEWHERE}
    status = _status(t, asked.get(InferenceKind.TASK))
    desc = task_words(t, status is not None)
    # a status's coding is asked in its own words below; every other uncertain choice as the verdict names it
    unsure = [i for i in asked.values() if _unsure(i) and not (status is not None and i.what == InferenceKind.TASK)]
    ids = missing_id_options(t)
    blocks = block_options(asked.get(InferenceKind.ENTITY))
    # the status's coding asked: the recommended reading named as its alternatives are ("Survival with 1 censored")
    # and an ordered target read as a score names its reading too ("Regression on the ranks")
    confirm = (f"Survival with {t.censored} censored" if _unsure(status)
               else "Regression on the ranks" if t.ranks else "Confirm")
    readings = multistate_options(t)
    options = [DecisionOption(id="confirm", label=confirm, description=desc,
                              recommended=not ids and not any(o.recommended for o in blocks + readings),
                              risk=_confirm_risk(t, status, unsure, bool(ids)))]
    if readings:
        options[0].label, options[0].risk = "Keep the rows as they are", (
            "each row counts from 0 and each subject once per possible transition: no valid survival model; "
            "a multi-state model of the rows with their start is for a multi-state package (R's mstate)")
    options += ids + readings + blocks
    options += _censored(t, status)
    options += _kinds(t, asked.get(InferenceKind.TASK), status is not None)
    options += _times(asked.get(InferenceKind.DURATION))
    options += _entities(asked.get(InferenceKind.ENTITY))
    for choice, (label, description, risk) in INDEX_CHOICES.items():
        index_kind = {"index:first": "entity_start", "index:row": "row"}[choice]
        if t.index.get("kind") != index_kind and (choice != "index:first" or t.id):
            options.append(DecisionOption(id=choice, label=label, description=description, risk=risk))
    evidence: dict[str, Any] = {k: v for k, v in (("kind", kind), ("target", t.target), ("time", t.time),
                                                  ("event", t.event), ("id", t.id), ("visit", t.visit)) if v}
    if t.index:
        evidence["prediction_time"] = t.index.get("label")
        evidence["prediction_time_reason"] = t.index.get("reason")
    if status is not None:
        evidence["status_coding"] = status.evidence[1:]  # the follow-up of each code: why this one is censored
    # an uncertain task says its reason below, once
    told = status is not None or any(i.what == InferenceKind.TASK for i in unsure)
    question = f"Is this the task? {desc}" + ("" if told else f" Why: {t.reason.removeprefix(f'{kind}: ')}.")
    if _unsure(status):
        assert status is not None
        codes = [str(t.censored)] + [m.group(1) for a in status.alternatives if (m := STATUS_READING.match(str(a.value)))]
        question += (f" Which code of '{t.target}' means censored: " + ", ".join(codes[:-1]) + f" or {codes[-1]}?"
                     + (" Or none, if the codes are classes?" if TaskKind.CLASSIFICATION in _alternative_values(status)
                        else ""))
    if ids:
        evidence["rows_without_id"] = t.id_missing
        question += (f" {t.id_missing} row{'s have' if t.id_missing != 1 else ' has'} no '{t.id}'. Drop "
                     f"{'them' if t.id_missing != 1 else 'it'}, take each as an entity of its own, or choose another "
                     "entity, or none.")
    if unsure:
        question += _uncertain(unsure)
    return Question(options, question, evidence, list(asked.values()))


# what each task kind predicts, in words a clinician reads (its name first, as the options say it)
KIND_WORDS = {TaskKind.CLASSIFICATION: "A classification task: predict the class of '{}'.",
              TaskKind.REGRESSION: "A regression task: predict the value of '{}'.",
              TaskKind.SURVIVAL: "A survival task: predict the time to the event in '{}'."}


def task_words(task: Task, status: bool = False) -> str:
    """The task as read, in short sentences: what is predicted, the kind, the status's coding
    (``status``: a status of several codes), the survival time, the entity and the moment of prediction."""
    t = task
    said = [KIND_WORDS[t.kind].format(t.target) if t.kind else f"Predict '{t.target}'."]
    if status:
        said.append(f"In '{t.target}', {t.censored} means censored and any other code is an event.")
    if t.time:
        said.append(f"The survival time is '{t.time}'.")
    if t.id:
        said.append(f"Each '{t.id}' is one entity.")
    if t.index_label:
        said.append(f"Predictions are made at {t.index_label}.")
    return " ".join(said)


def _uncertain(unsure: list[Inference]) -> str:
    """The uncertain choices, each said once (the question named every guess before): the first
    with what made it uncertain (its evidence after the guess's own reason) and what each
    alternative would do, the others by name (their options and the risk of confirming say the rest)."""
    first, rest = unsure[0], unsure[1:]
    value = "none" if first.value is None else str(first.value).replace("_", " ")
    seen = (first.evidence[1:2] or first.evidence[:1])[0].removeprefix(f"{value}: ") if first.evidence else ""
    said = f" Unsure of {named(first)}" + (f": {seen}" + ("" if seen.endswith("?") else ".") if seen else ".")
    # blocks of one entity: the alternatives are the columns rejected as its id; the options say what else
    others = [] if "blocks" in first.details else [
        ("none" if a.value is None else str(a.value).replace("_", " ")) + (f": {a.evidence[0]}" if a.evidence else "")
        for a in first.alternatives[:3]]
    said += (" Or " + "; or ".join(others) + "?") if others else ""
    return said + (" Unsure too: " + ", ".join(named(i) for i in rest) + "." if rest else "")


def _confirm_risk(task: Task, status: Inference | None, unsure: list[Inference], ids_missing: bool) -> str:
    """What confirming the task as read risks: rows without an id stop the split; else the status's
    coding and each uncertain choice are taken as they are."""
    if ids_missing:
        many = task.id_missing != 1
        return (f"the {counted(task.id_missing, 'row')} without an id in '{task.id}' stop{'' if many else 's'} the "
                f"split: say what {'they are' if many else 'it is'}")
    risks = [f"wrong if another code of '{task.target}' means censored"] if _unsure(status) else []
    if unsure:
        risks.append("confirms what is uncertain: " + "; ".join(in_words(i, short=True) for i in unsure))  # the question says why
    return "; ".join(risks)


def missing_id_options(task: Task, asked: bool = False) -> list[DecisionOption]:
    """What rows without an id in the entity in force are, when some are (or ``asked``: a step
    failed on them) and it is not said yet: dropped (recommended: a record whose subject is
    unknown cannot be kept with its subject's other records), or each an entity of its own (a
    subject outside every group)."""
    if not task.id or not (task.id_missing or asked) or task.missing_ids:
        return []
    n, key = task.id_missing, task.id
    rows = (counted(n, "row") if n else "rows") + f" without an id in '{key}'"
    whose, they = ("it is", "it is a subject") if n == 1 else ("they are", "they are subjects")
    return [DecisionOption(id="ids:drop", label=f"Drop the {rows}", recommended=True,
                           description=f"Leave out the {rows}: whose records {whose} is not known.",
                           risk=f"{counted(n, 'fewer row')}; wrong if {they} of their own"),
            DecisionOption(id="ids:own", label=f"Take each of the {rows} as its own entity",
                           description=f"Each row without an id in '{key}' is a subject of its own (outside every "
                           "group), kept apart from every other row.",
                           risk="wrong if they are records of subjects who have other rows: the same subject "
                           "on both sides of the split")]


def block_options(inferred: Inference | None) -> list[DecisionOption]:
    """When the rows come in consecutive blocks of one entity's records with no id (the entity's
    ``details["blocks"]``): group them (recommended when the evidence is strong: a step numbers the
    blocks, the number is the entity), or the rows are independent."""
    found = inferred.details.get("blocks") if _unsure(inferred) and inferred is not None else None
    if not found:
        return []
    column, counter = found["column"], found["counter"]
    if found.get("size"):
        label = f"Group the rows in blocks of {found['size']} consecutive records (one entity each)"
        rule = f"every {found['size']} rows"
    else:
        label = f"Group the rows in blocks that start where '{counter}' does not rise by one (one entity each)"
        rule = f"wherever '{counter}' does not rise by one from the row before"
    return [DecisionOption(id=BLOCKS, label=label, recommended=bool(found.get("strong")),
                           description=f"A step adds the column '{column}' numbering the blocks (a new one {rule}); "
                           f"it is the entity: a split keeps each block's records on one side.",
                           risk="wrong if a block is not one entity's records: entities merged or cut in two"),
            DecisionOption(id=f"entity:{NO_ENTITY}", label="The rows are independent: each row is its own subject",
                           description="The blocks are a coincidence of the row order: rows are not grouped.",
                           risk="rows of one entity on both sides of a split score too well")]


def multistate_options(task: Task) -> list[DecisionOption]:
    """Readings of multi-state rows (``task.transitions``) not yet chosen: the first transition out
    of the starting state, whichever (recommended: one row per subject, every event counted), or
    the transition into one state, the others censoring the subject when they happen."""
    found = task.transitions
    if not found or task.multistate:
        return []
    subject, initial, stop = found["id"], found["initial"], found["stop"]
    out_of = found.get("out_of_initial") or []
    options = [DecisionOption(
        id=f"{MULTISTATE}:first", recommended=True,
        label=f"Time in state {initial} until its first transition, whichever (one row per '{subject}')",
        description=f"A step keeps each '{subject}''s rows leaving state {initial}: the time in it ('{stop}' counted "
        f"from '{found['start']}') and whether it ended by a transition (into {', '.join(map(str, out_of))}); "
        f"'{found['from']}', '{found['to']}', '{found['start']}'"
        + (f", '{found['trans']}'" if found.get("trans") else "") + " are left out.",
        risk="the transitions are one composite event: which one happened is not predicted")]
    for state in out_of:
        options.append(DecisionOption(
            id=f"{MULTISTATE}:into:{state}",
            label=f"Time in state {initial} until the transition into {state} (the others censor)",
            description=f"One row per '{subject}' as above, the event being the move into {state} only.",
            risk="a transition into another state ends the follow-up as censoring: its risk competes"))
    return options


def multistate_call(task: Task, choice: str) -> dict[str, Any] | None:
    """The parameters of ``first_transition`` for the task card's reading ``choice`` of the
    multi-state rows (``multistate:first`` or ``multistate:into:<state>``); None without them."""
    found = task.transitions
    if not found:
        return None
    into: Any = None
    if choice.startswith(f"{MULTISTATE}:into:"):
        wanted = choice.removeprefix(f"{MULTISTATE}:into:")
        into = next((s for s in found.get("out_of_initial") or [] if str(s) == wanted), wanted)
    drop = [c for c in [found.get("trans"), *(found.get("durations") or [])] if c]
    return {"id": found["id"], "start": found["start"], "stop": found["stop"], "state_from": found["from"],
            "state_to": found["to"], "event": task.target, "initial": found["initial"], "into": into, "drop": drop}


def block_call(inferred: Inference | None) -> dict[str, Any] | None:
    """The parameters of ``number_blocks`` for the blocks ``inferred`` found (None: none found)."""
    found = inferred.details.get("blocks") if inferred is not None else None
    if not found:
        return None
    return {"column": found["column"], **({"size": found["size"]} if found.get("size") else {"counter": found["counter"]})}


def answer_option(choice: str, task: Task) -> DecisionOption:
    """The task card's option for ``choice`` when the card did not offer it (a step failed
    because of the entity: rows without an id, or no entity to split by)."""
    if choice.startswith("ids:"):
        return next(o for o in missing_id_options(task, asked=True) if o.id == choice)
    if choice == f"entity:{NO_ENTITY}":
        return DecisionOption(id=choice, label="No entity: each row is its own subject",
                              description=f"Rows are not merged or grouped by '{task.id}'.",
                              risk="rows of one subject on both sides of a split score too well")
    raise ValueError(f"the task card has no option {choice!r}")


def _status(task: Task, inferred: Inference | None) -> Inference | None:
    """The task's inference when the task is survival on a status of several codes (the
    diagnosis named the code read as censored), else None."""
    if task.kind != TaskKind.SURVIVAL or task.censored is None or inferred is None:
        return None
    return inferred if "censored" in inferred.details else None


def _alternative_values(inferred: Inference) -> set[str]:
    return {str(a.value) for a in inferred.alternatives}


def _censored(task: Task, status: Inference | None) -> list[DecisionOption]:
    """Survival with another code of the status censored: the inference's readings, ranked."""
    if not _unsure(status):
        return []
    assert status is not None
    codes = list(status.details.get("event_codes") or [])
    options = []
    for a in status.alternatives:
        m = STATUS_READING.match(str(a.value))
        if m is None or m.group(1) == task.censored:
            continue
        code = m.group(1)
        events = ", ".join(c for c in codes if c != code)
        options.append(DecisionOption(id=f"censored:{code}", label=f"Survival with {code} censored",
                                      description=f"Recode '{task.target}': {code} -> 0 (censored), {events} -> 1 "
                                      "(any event).", risk=(a.evidence or [""])[0]))
    return options


def _kinds(task: Task, inferred: Inference | None, status: bool = False) -> list[DecisionOption]:
    """The other task kinds, the inference's alternatives first (with their evidence); never
    regression for a status of codes (regression is no reading of codes)."""
    ranked = {str(a.value): a for a in (inferred.alternatives if inferred is not None else [])}
    # survival needs a time: the task's own, or one the alternative names (a person-period layout);
    # regression needs more than two values (a 0/1 target is no score), and numbers or ordered levels:
    # class labels in words with no order (cat, dog, bird) are no value to regress on, while ordered ones
    # (none < mild < severe) are regressed on their ranks (kt.rank_levels)
    words = inferred is not None and inferred.details.get("labels") == "words"
    scoreless = status or words or (_values(inferred) or 3) <= 2
    kinds = [k for k in TaskKind if k != task.kind and (k != TaskKind.SURVIVAL or task.time or k.value in ranked)
             and not (scoreless and k == TaskKind.REGRESSION)]
    kinds.sort(key=lambda k: (k.value not in ranked, -(ranked[k.value].score if k.value in ranked else 0)))
    if status:  # the codes as classes: one line, the reason it is not the recommended reading as its risk
        return [DecisionOption(id=k.value, label=f"It is {k.value}",
                               description=f"The codes of '{task.target}' as classes, ignoring the follow-up.",
                               risk="a row's class would depend on how long it was followed") for k in kinds]
    return [DecisionOption(id=k.value, label=f"It is {k.value}",
                           description=f"Treat '{task.target}' as a {k.value} target."
                           + _said(ranked[k.value].evidence if k.value in ranked else []),
                           risk="a wrong task means a wrong metric") for k in kinds]


def _values(inferred: Inference | None) -> int | None:
    """How many values the target takes, as the task's inference counted them (None: not counted)."""
    details = inferred.details if inferred is not None else {}
    for key in ("classes", "distinct_values", "event_codes"):
        if details.get(key) is not None:
            return len(details[key]) if isinstance(details[key], list) else int(details[key])
    return None


def _times(inferred: Inference | None) -> list[DecisionOption]:
    if not _unsure(inferred):
        return []
    assert inferred is not None
    return [DecisionOption(id=f"time:{a.value}", label=f"The survival time is '{a.value}'",
                           description=f"Count the follow-up in '{a.value}'." + _said(a.evidence),
                           risk="the data is diagnosed again with this time")
            for a in inferred.alternatives if a.value is not None]


def _entities(inferred: Inference | None) -> list[DecisionOption]:
    """The ranked entity candidates and "no entity", when the entity is uncertain."""
    if not _unsure(inferred):
        return []
    assert inferred is not None
    options = [DecisionOption(id=f"entity:{a.value}", label=f"One entity = '{a.value}'",
                              description=f"Rows sharing '{a.value}' are one subject's records." + _said(a.evidence),
                              risk="the data is diagnosed again with this entity")
               for a in sorted(inferred.alternatives, key=lambda a: -a.score) if a.value is not None and a.score > 0]
    if inferred.value is not None:
        options.append(DecisionOption(id=f"entity:{NO_ENTITY}", label="No entity: each row is its own subject",
                                      description=f"'{inferred.value}' groups rows of different subjects (a matched "
                                      "set, a family, a centre) or is a measurement: rows are not merged or grouped "
                                      "by it.", risk="rows of one subject on both sides of a split score too well"))
    return options


def entity_options(structure: Structure) -> tuple[list[DecisionOption], list[Inference]]:
    """What the aggregation question adds when the entity is uncertain: its candidates and none."""
    entity = structure.inference(InferenceKind.ENTITY)
    if not _unsure(entity):
        return [], []
    assert entity is not None
    return _entities(entity), [entity]


def join_inferences(structure: Structure, frames: list[str]) -> list[Inference]:
    """The join key inferences between the session's frames (what the join question settles)."""
    return [i for i in structure.inferences if i.what == InferenceKind.JOIN_KEY
            and set(str(i.subject or "").split("+")) <= set(frames)]


def grouping_inferences(structure: Structure, columns: list[str]) -> list[Inference]:
    """What becomes of each of ``columns`` that groups subjects (what its identifier question settles)."""
    return [i for i in structure.inferences if i.what == InferenceKind.GROUPING and i.subject in columns]


def timing_inferences(structure: Structure, columns: list[str]) -> list[Inference]:
    """The unsure timing of each of ``columns`` on the card (what a leakage question on the
    co-pilot's own guess of their place settles: a person's answer confirms it)."""
    card = structure.card()
    return [card.columns[c].inference() for c in columns
            if card is not None and c in card.columns and card.columns[c].confidence == Confidence.LOW]


def inferences_view(session: Session) -> list[dict[str, Any]]:
    """The table's structural choices as the panel shows them (``Inference.to_dict``): with a
    person's answer, its value and confidence ``given`` (nothing left to ask); an entity whose
    rows come in blocks takes the block numbered by a step as its value once the run took it.
    The evidence, its own and each alternative's, in short lines (:func:`.evidence_lines.sentence_lines`)."""
    confirmed = confirmations(session)
    s = session.structure
    out = []
    for inferred in s.table():
        d = inferred.to_dict()
        d["value"] = in_force(session, inferred)
        d["options"] = structure_options(inferred)
        if inferred.id in confirmed:
            d["confidence"] = Confidence.GIVEN
            d["evidence"] = [f"confirmed {confirmed[inferred.id]}", *d["evidence"]]
        d["evidence"] = sentence_lines(d["evidence"])
        for alternative in d["alternatives"]:
            alternative["evidence"] = sentence_lines(alternative["evidence"])
        out.append(d)
    return out


def structure_options(inferred: Inference) -> list[dict[str, Any]]:
    """The task card's options for a question the structure section asks in its own way (the
    blocks of one entity's records: :func:`block_options`), each with the answer
    (:meth:`.structure.Structure.answer`'s value) that takes it; empty: the value and its
    alternatives are the answers."""
    offered = Structure.offered(inferred)
    return [{**o.to_dict(), "value": next(v for v in offered if task_choice(inferred, v) == o.id)}
            for o in block_options(inferred)]


def in_force(session: Session, inferred: Inference) -> Any:
    """The inference's value the run rests on: a person's last answer, else the blocks when the task
    card took them (a person or a policy: the block numbered by a step is the entity), else as inferred."""
    answered = any(a.id == inferred.id for a in session.structure.answers)
    if inferred.what == InferenceKind.ENTITY and session.task.blocks is not None and not answered:
        return BLOCKS
    return session.structure.value(inferred)


def answer(session: Session, inference_id: str, value: Any, via: str, at: str, rationale: str = "") -> str | None:
    """A person's answer in the structure section (:meth:`.structure.Structure.answer`), measured
    against the value in force (:func:`in_force`): the task card's choice that applies another value,
    None when the answer confirms what the run rests on."""
    inferred = session.structure.inference(inference_id)
    before = in_force(session, inferred) if inferred is not None else None
    choice = session.structure.answer(inference_id, value, via, at, rationale)
    if inferred is None:  # a timing: a move on the timeline
        return choice
    return None if value == before else task_choice(inferred, value)
