"""The structure of a session's data: what its diagnoses inferred, and what a person confirmed.

Every structural choice a run rests on — the task kind and target coding, the survival time, the
entity, the prediction index, a join key, each feature's timing — is a
:class:`~kernel_tools.inferences.Inference` with its confidence, recorded here the first time a
diagnosis makes it. The first word is the inference's own: once the task card is answered, later
diagnoses are told the whole task and call it "given", even when only an approval policy answered.

A person confirms a choice by answering the question that asked it — the task card, the
aggregation, the join, the column timeline — in the panel, the chat, a magic, at the terminal or by
naming the answer in a decisions file. An approval policy's answer (``--approve recommended``, a
decisions file's ``"recommended"``) takes the recommended answer and confirms nothing. The expert
moves columns on the timeline (:meth:`Structure.move`); the card (:meth:`Structure.card`) is the
timeline with a planner's proposals and the moves applied; :func:`unconfirmed` lists what the
verdict's ``structure_confirmed`` names.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from kernel_tools.findings import Finding, Option
from kernel_tools.inferences import (
    GROUPS,
    ORDER,
    STATUS_READING,
    ColumnTimeline,
    Inference,
    Placement,
    TimelineColumn,
)
from kernel_tools.vocabulary import (
    Chart,
    Confidence,
    EventType,
    EvidenceSource,
    FindingKind,
    InferenceKind,
    TaskKind,
    TimelineGroup,
)

from .evidence_lines import unnested
from .hosts import Via, agent_name, by_the_user
from .task import BLOCKS, NO_ENTITY
from .validation import did_you_mean

if TYPE_CHECKING:  # the session holds a Structure; these functions read a session
    from .session import Decision, Session

# the table-level choices, in the order the verdict names them
TABLE = (InferenceKind.TASK, InferenceKind.DURATION, InferenceKind.ENTITY, InferenceKind.INDEX)
# the choices of a table asked on their own question, not on the task card
ASKED_ELSEWHERE = (InferenceKind.JOIN_KEY, InferenceKind.GROUPING)
# a decisions file's explicit answer, as gatekeeping records it (its "recommended" is the policy's)
FROM_FILE = "from the decisions file"
# what people call the groups: the vocabulary's words, and the short forms a chat or a file uses
GROUP_WORDS = {
    **{g: g for g in GROUPS},
    "follow_up": TimelineGroup.DURING_FOLLOW_UP, "followup": TimelineGroup.DURING_FOLLOW_UP,
    "during_followup": TimelineGroup.DURING_FOLLOW_UP, "follow": TimelineGroup.DURING_FOLLOW_UP,
    "outcome": TimelineGroup.AT_OR_AFTER_OUTCOME, "outcome_derived": TimelineGroup.AT_OR_AFTER_OUTCOME,
    "at_outcome": TimelineGroup.AT_OR_AFTER_OUTCOME, "after_outcome": TimelineGroup.AT_OR_AFTER_OUTCOME,
    "at_or_after_the_outcome": TimelineGroup.AT_OR_AFTER_OUTCOME, "base": TimelineGroup.BASELINE,
    "known": TimelineGroup.BASELINE, "baseline_known_at_index": TimelineGroup.BASELINE,
}


def timeline_group(word: str) -> str:
    """The :class:`TimelineGroup` a word names (``"follow-up"``, ``"outcome"``, ``"baseline"`` ...);
    ValueError in one line otherwise."""
    key = re.sub(r"[\s\-]+", "_", str(word).strip().lower())
    if key in GROUP_WORDS:
        return str(GROUP_WORDS[key])
    raise ValueError(f"{word!r} is not a place on the timeline: say one of {list(GROUPS)} (or follow_up, "
                     f"outcome){did_you_mean(key, list(GROUP_WORDS))}")


@dataclass
class TimelineMove:
    """One column moved on the timeline by a person (or proposed there by an agent)."""

    column: str
    group: str  # a TimelineGroup
    via: str  # the host it came through (hosts.Via), or "agent <name>"
    at: str = ""
    rationale: str = ""
    before: str = ""  # the group it was in

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class InferenceAnswer:
    """A person's answer to one structural question: the inferred value, or an alternative."""

    id: str  # the inference's id
    value: Any
    via: str
    at: str = ""
    rationale: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Structure:
    """The structural inferences of a session's diagnoses, its column timeline, the expert's
    moves and a planner's proposals (column -> (group, reason))."""

    inferences: list[Inference] = field(default_factory=list)
    timeline: ColumnTimeline | None = None
    moves: list[TimelineMove] = field(default_factory=list)
    proposals: dict[str, dict[str, str]] = field(default_factory=dict)
    answers: list[InferenceAnswer] = field(default_factory=list)

    def inference(self, inference_id: str) -> Inference | None:
        return next((i for i in self.inferences if i.id == inference_id), None)

    def table(self) -> list[Inference]:
        """The table-level choices, the join keys and what becomes of each column grouping
        subjects, in the verdict's order."""
        order = {k: n for n, k in enumerate(TABLE)}
        chosen = [i for i in self.inferences if i.what in order or i.what in ASKED_ELSEWHERE]
        return sorted(chosen, key=lambda i: order.get(InferenceKind(i.what), len(order)))

    def record(self, inferences: list[Inference], timeline: ColumnTimeline | None) -> None:
        """A diagnosis's inferences: a choice seen before keeps its first word; a column on the
        timeline keeps its first place unless this one is later (evidence that a column was
        recorded after the index is never lost when the column that showed it is gone). A later place
        that only a name proposes (a guess relative to the other columns: ``re75`` the latest of its
        series once ``re78`` was dropped) does not move a column the first diagnosis saw whole."""
        seen = {i.id for i in self.inferences}
        self.inferences += [i for i in inferences if i.id not in seen and i.what != InferenceKind.TIMING]
        if timeline is None:
            return
        if self.timeline is None:
            self.timeline = timeline
            return
        columns = dict(self.timeline.columns)
        for name, entry in timeline.columns.items():
            old = columns.get(name)
            if old is None or _later(entry.group, old.group) and _decisive(entry):
                columns[name] = entry
        derived = self.timeline.derived + [d for d in timeline.derived if d not in self.timeline.derived]
        self.timeline = ColumnTimeline(columns, self.timeline.index or timeline.index, derived)

    def move(self, column: str, group: str, via: str, at: str, rationale: str = "") -> TimelineMove:
        """Record that a person put ``column`` in ``group`` (a word :func:`timeline_group` reads);
        KeyError for a column not on the timeline, ValueError for a place that is not one."""
        card = self.on_card(column)
        move = TimelineMove(column, timeline_group(group), via, at, rationale, card.columns[column].group)
        self.moves.append(move)
        return move

    def on_card(self, column: str) -> ColumnTimeline:
        """The card, which has ``column``; KeyError in one line (close names suggested) otherwise."""
        card = self.card()
        if card is None or column not in card.columns:
            known = sorted(card.columns) if card is not None else []
            raise KeyError(f"{column!r} is not on the column timeline"
                           + (did_you_mean(column, known) or (f"; its columns are {known[:12]}" if known else
                                                              ": the data was not diagnosed with a target yet")))
        return card

    def value(self, inferred: Inference) -> Any:
        """The inference's value as a person last answered it (else as inferred)."""
        said = [a for a in self.answers if a.id == inferred.id]
        return said[-1].value if said else inferred.value

    def answer(self, inference_id: str, value: Any, via: str, at: str, rationale: str = "") -> str | None:
        """A person's answer to a structural question (the panel's, the chat's): the value as
        inferred or one of its alternatives; a timing (``timing:<column>``) is a move on the
        timeline. Returns the task card's choice that applies another value (``entity:...``,
        ``time:...``, a task kind, ``index:...``), None when the answer confirms what is.
        KeyError: no such inference; ValueError: a value it does not offer, in one line."""
        if inference_id.startswith(f"{InferenceKind.TIMING}:"):
            self.move(inference_id.split(":", 1)[1], str(value), via, at, rationale)
            return None
        inferred = self.inference(inference_id)
        if inferred is None:
            known = [i.id for i in self.table()]
            raise KeyError(f"no structural inference {inference_id!r}" + (did_you_mean(inference_id, known)
                                                                          or f"; there are {known}"))
        offered = self.offered(inferred)
        if value not in offered:
            raise ValueError(f"{value!r} is not an answer to {inference_id}: say one of {offered}")
        choice = None if value == self.value(inferred) else task_choice(inferred, value)
        self.answers.append(InferenceAnswer(inference_id, value, via, at, rationale))
        return choice

    @staticmethod
    def offered(inferred: Inference) -> list[Any]:
        """The answers a structural question takes: the value as inferred, its alternatives, and
        for an entity whose rows come in blocks of one entity's records, the blocks (``BLOCKS``)."""
        blocks = [BLOCKS] if inferred.what == InferenceKind.ENTITY and inferred.details.get("blocks") else []
        return [inferred.value, *(a.value for a in inferred.alternatives), *blocks]

    def askable(self) -> list[str]:
        """The columns a planner may propose a place for: unknown or of low confidence on the
        diagnosis's timeline, and not placed by a person."""
        if self.timeline is None:
            return []
        moved = {m.column for m in self.moves}
        return [c for c, e in self.timeline.columns.items() if c not in moved and _open(e)]

    def propose(self, column: str, group: str, reason: str, by: str) -> bool:
        """A planner's proposal for a column's place: kept only for a column it may speak about
        (:meth:`askable`: never one a rule placed with high confidence); False when refused.
        ValueError for a place that is not one."""
        place_ = timeline_group(group)
        if column not in self.askable():
            return False
        self.proposals[column] = {"group": place_, "reason": reason, "by": by}
        return True

    def card(self) -> ColumnTimeline | None:
        """The timeline as the expert sees it: the diagnosis's evidence, a planner's proposals
        beside it, and the expert's moves over them (a moved column is ``given``). A proposal is
        evidence shown (``source`` "proposal") and an alternative to weigh; it moves nothing and
        confirms nothing: the column keeps the rules' place and confidence until a person says."""
        if self.timeline is None:
            return None
        columns = dict(self.timeline.columns)
        for name, p in self.proposals.items():
            if name in columns and _open(columns[name]):  # a later diagnosis may have settled it
                proposal = Placement(p["group"], EvidenceSource.PROPOSAL, "proposed",
                                     f"proposed by {p['by']} from the column's name and schema: {p['reason']}", False,
                                     {"by": p["by"]})
                columns[name] = replace(columns[name], evidence=(*columns[name].evidence, proposal))
        timeline = ColumnTimeline(columns, self.timeline.index, self.timeline.derived)
        for move in self.moves:
            if move.column in timeline.columns:
                timeline = timeline.move(move.column, move.group)
        return timeline

    def card_dict(self) -> dict[str, Any] | None:
        """The card as the panel reads it: the timeline's JSON and the moves."""
        card = self.card()
        if card is None:
            return None
        return {**card.to_dict(), "moves": [m.to_dict() for m in self.moves]}

    def to_dict(self) -> dict[str, Any]:
        return {"inferences": [i.to_dict() for i in self.inferences],
                "timeline": self.timeline.to_dict() if self.timeline is not None else None,
                "moves": [m.to_dict() for m in self.moves], "proposals": dict(self.proposals),
                "answers": [a.to_dict() for a in self.answers]}

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> Structure:
        data = data or {}
        return cls([Inference.from_dict(i) for i in data.get("inferences") or []],
                   ColumnTimeline.from_dict(data["timeline"]) if data.get("timeline") else None,
                   [TimelineMove(**m) for m in data.get("moves") or []], dict(data.get("proposals") or {}),
                   [InferenceAnswer(**a) for a in data.get("answers") or []])


def _open(entry: TimelineColumn) -> bool:
    """Whether a column's place is open to a proposal: unknown, or of low confidence."""
    return entry.group == TimelineGroup.UNKNOWN or entry.confidence == Confidence.LOW


def _decisive(entry: TimelineColumn) -> bool:
    """Whether some evidence for the column's place is decisive on its own (data or structure)."""
    return any(p.strong for p in entry.evidence if p.group == entry.group)


def _later(group: str, than: str) -> bool:
    return ORDER[TimelineGroup(group)] > ORDER[TimelineGroup(than)]


DATE_INDEX = re.compile(r"^the date in '(.+)'$")


def task_choice(inferred: Inference, value: Any) -> str:
    """The task card's option that gives ``inferred`` another ``value`` (what :meth:`.task.Task.answer`
    reads); ValueError for a choice made elsewhere (a join key: on the join question)."""
    what = InferenceKind(inferred.what)
    if what == InferenceKind.TASK and value in {k.value for k in TaskKind}:
        return str(value)
    if what == InferenceKind.TASK and (status := STATUS_READING.match(str(value))) is not None:
        return f"censored:{status.group(1)}"
    if what == InferenceKind.DURATION and value:
        return f"time:{value}"
    if what == InferenceKind.ENTITY and value == BLOCKS and value not in {a.value for a in inferred.alternatives}:
        return BLOCKS  # the rows numbered in blocks (a column named so is a column)
    if what == InferenceKind.ENTITY:
        return f"entity:{NO_ENTITY if value is None else value}"
    if what == InferenceKind.INDEX and isinstance(value, str):
        if value.startswith("each entity's first record"):
            return "index:first"
        if value == "each row's own time":
            return "index:row"
        if (date := DATE_INDEX.match(value)) is not None:
            return f"index:{date.group(1)}"
    raise ValueError(f"{inferred.id} cannot be changed to {value!r} here: "
                     + ("answer the join question (undo to it)" if what == InferenceKind.JOIN_KEY else
                        "answer its question on the identifiers (undo to it)" if what == InferenceKind.GROUPING else
                        "say it on the task card"))


def by_a_person(decision: Decision) -> bool:
    """Whether a person answered ``decision``: the user through any host, or a decisions file that
    names the answer (its ``"recommended"`` is the policy's, like ``--approve recommended``)."""
    if not decision.decided:
        return False
    return decision.by == "user" or (decision.via == Via.DECISIONS_FILE and decision.rationale == FROM_FILE)


def confirmations(session: Session) -> dict[str, str]:
    """Inference id -> who confirmed it, in words: the questions a person answered (each names
    the inferences it asked about), and the columns a person moved on the timeline."""
    out: dict[str, str] = {}
    for d in session.decisions:
        if by_a_person(d) and d.choice != "skip":
            who = by_the_user(d.via)
            out.update({i["id"]: who for i in d.inferences})
    for move in session.structure.moves:  # an agent's move is a proposal, as its answers are
        if agent_name(move.via) is None:
            out[f"{InferenceKind.TIMING}:{move.column}"] = by_the_user(move.via)
    for said in session.structure.answers:
        if agent_name(said.via) is None:
            out[said.id] = by_the_user(said.via)
    return out


def placed_late(session: Session, findings: list[Finding]) -> list[Finding]:
    """A leakage finding for each column placed after the prediction time that is still in the
    frame and that no finding of ``findings`` already flags as recorded late: placed there by a
    person (their word is the evidence), or the co-pilot's own best guess, asked (low confidence):
    its drop is recommended as the guess says, and the timing stays unconfirmed until a person
    answers. A column a person placed at baseline is known then, and stays a feature."""
    card = session.structure.card()
    if card is None:
        return []
    columns = set(session.variables.get("columns") or [])
    flagged = {c for f in findings if f.kind == FindingKind.TARGET_LEAKAGE and f.evidence.get("timing")
               for c in f.columns}
    # a guess adds no second question to a column any leakage finding already asks about
    asked = {c for f in findings if f.kind == FindingKind.TARGET_LEAKAGE for c in f.columns}
    moves = {m.column: m for m in session.structure.moves}
    out = []
    for column, entry in card.columns.items():
        move = moves.get(column)
        if (entry.known_at_index or entry.group == TimelineGroup.UNKNOWN or column in flagged
                or (columns and column not in columns)
                or (move is None and (entry.confidence != Confidence.LOW or column in asked))):
            continue
        out.append(_late_finding(entry, move))
    return out


def _late_finding(entry: TimelineColumn, move: TimelineMove | None) -> Finding:
    """The drop, asked, of a column placed after the prediction time (by ``move``, or by the
    co-pilot's own guess when None)."""
    column, where = entry.column, entry.group.replace("_", " ").replace("follow up", "follow-up")
    timing = "outcome_derived" if entry.group == TimelineGroup.AT_OR_AFTER_OUTCOME else "follow_up"
    if move is not None:
        why, source, rationale = f"placed {where} on the column timeline {by_the_user(move.via)}", "timeline", move.rationale
    else:
        said = next((p.reason for p in entry.evidence if p.group == entry.group), "")
        why = f"placed {where} on the column timeline by the co-pilot's best guess, unconfirmed" + (
            f" ({said})" if said else "")
        source, rationale = "placement", ""
    undo = "move it to baseline on the column timeline" if move is None else "keep it"
    return Finding(FindingKind.TARGET_LEAKAGE, [column], "critical",
                   f"'{column}' is not known when a prediction is made: {why}.",
                   {"timing": timing, "reason": why, "source": source, "rationale": rationale},
                   [Option("drop", f"Drop {column}", f"Remove {column} from the data before "
                           "modelling (recorded after the prediction time).", "if it is truly known at "
                           f"prediction time, the model loses a real predictor: {undo}", True,
                           {"function": "drop_columns", "params": {"columns": [column], "reason":
                                                                   "recorded after the prediction time"}}),
                    Option("keep", "Keep as is", "Keep it after all: it is known when a prediction is made.",
                           "a column recorded after the prediction time inflates every score", False, None)],
                   "leakage", Chart.LEAKAGE)


def apply_file_timeline(session: Session, timeline: dict[str, str] | None) -> None:
    """A decisions file's ``"timeline": {column: group}``: each column placed as it says, once
    the diagnosis put it on the timeline (a person's word: it confirms the column's timing); a
    column not on it is a warning, the run goes on."""
    s = session
    if not timeline or s.structure.card() is None:
        return
    for column, group in timeline.items():
        if any(m.column == column and m.via == Via.DECISIONS_FILE for m in s.structure.moves):
            continue
        try:
            at = datetime.now(timezone.utc).isoformat(timespec="seconds")
            move = s.structure.move(column, group, Via.DECISIONS_FILE, at, "the decisions file's timeline")
        except KeyError as error:
            warning = f"decisions file: {error.args[0]}"
            if warning not in s.warnings:
                s.warnings.append(warning)
                s.log("warning", warning)
            continue
        moved(s, move)


def moved(session: Session, move: TimelineMove) -> None:
    """After a person's move: the leakage finding it makes (if any) replaces the one of the
    co-pilot's guess, and the hosts hear of the card."""
    s = session
    # the person's word replaces the co-pilot's guess of the column's place (and its question)
    s.findings = [f for f in s.findings if not (f.evidence.get("source") == "placement" and move.column in f.columns)]
    seen = {f.id for f in s.findings}
    s.findings += [f for f in placed_late(s, s.findings) if f.id not in seen]
    s.log("timeline", f"'{move.column}' moved to {move.group.replace('_', ' ')} {by_the_user(move.via)}"
          + (f": {move.rationale}" if move.rationale else ""), column=move.column, group=move.group)
    s.changed(EventType.TIMELINE, timeline=s.structure.card_dict(), move=move.to_dict())


def unconfirmed(session: Session, features: list[str] | set[str]) -> list[Inference]:
    """The structural choices of the run that are neither of high confidence (or given) nor
    confirmed by a person: the table's, and the timing of each of ``features`` (the model's)."""
    confirmed = confirmations(session)
    s = session.structure
    card = s.card()
    timing = [card.columns[c].inference() for c in sorted(features) if card is not None and c in card.columns]
    return [_as_taken(session, i) for i in [*s.table(), *timing]
            if i.confidence not in (Confidence.GIVEN, Confidence.HIGH) and i.id not in confirmed]


def _as_taken(session: Session, inference: Inference) -> Inference:
    """The entity as the run took it when an approval numbered the rows' blocks: the block
    column, with the blocks' evidence (not the guess of no entity the blocks were found beside)."""
    if inference.what != InferenceKind.ENTITY or not session.task.blocks:
        return inference
    return replace(inference, value=f"'{session.task.blocks['column']}' (consecutive rows numbered in blocks by a step)",
                   evidence=[e for e in inference.evidence if "block" in e], alternatives=[])


def named(inference: Inference) -> str:
    """Which choice an inference is, in words: "the task", "the timing of 'x'"."""
    what = {InferenceKind.TASK: "the task", InferenceKind.DURATION: "the survival time",
            InferenceKind.ENTITY: "the entity", InferenceKind.INDEX: "the prediction time",
            InferenceKind.JOIN_KEY: "the join key", InferenceKind.TIMING: "the timing of",
            InferenceKind.GROUPING: "the use of"}[InferenceKind(inference.what)]
    if inference.what in (InferenceKind.TIMING, InferenceKind.GROUPING):
        what = f"{what} '{inference.subject}'"
    return what


def in_words(inference: Inference, what_if: bool = False, short: bool = False) -> str:
    """One unconfirmed choice, as the verdict names it: what was chosen, why, and the
    alternatives an expert weighs (``what_if``: each with what choosing it would do, as a card
    says it; ``short``: only what was chosen)."""
    value = "none" if inference.value is None else str(inference.value).replace("_", " ")
    if short:
        return f"{named(inference)}: {value}"
    # the first evidence often starts by naming the choice again ("classification: target has 2 classes")
    evidence = [e.removeprefix(f"{value}: ") for e in inference.evidence[:2]]
    why = "; ".join(evidence)
    others = ", ".join(("none" if a.value is None else str(a.value).replace("_", " "))
                       + (f": {a.evidence[0]}" if what_if and a.evidence else "")
                       for a in inference.alternatives[:3])
    # the evidence as an aside, not in brackets: its own brackets would nest in them
    return unnested(f"{named(inference)}: {value}" + (f" — {why}" if why else "") + (f" — or {others}?" if others else ""))


__all__ = ["FROM_FILE", "InferenceAnswer", "Structure", "TimelineMove", "by_a_person", "confirmations",
           "apply_file_timeline", "in_words", "moved", "named", "placed_late", "task_choice", "timeline_group", "unconfirmed"]
