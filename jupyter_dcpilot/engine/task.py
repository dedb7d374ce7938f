"""What the session predicts, and what the user asked for: :class:`Task`, :class:`Given`, :class:`Inputs`.

One precedence rule: **what the user said wins over what the diagnosis inferred.** The user
speaks twice — in the request that started the session (``--target y --time t --id c --task
survival --index first``: :class:`Given`) and in the answer to the task card (another task kind,
another moment of prediction, which :meth:`Task.answer` records in the same :class:`Given`). The
task is always the diagnosis's inference with the given values over it (:meth:`Task.inferred`).
Once the task card is answered (``confirmed``) the whole task is the user's word, and the next
diagnosis is told all of it (:meth:`Task.diagnosis_args`).

:class:`Inputs` holds the rest of a request: the frames, the files they came from, the engine,
a separate test file, the kernel that owns the session, the goal and what an LLM may see.

Sidecars written before these types held ``task`` and ``hints`` as two dicts;
:func:`from_old_sidecar` reads them.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any, TypedDict

from kernel_tools.vocabulary import TaskKind

# the other moments a prediction can be made, as the user names them (--index first | row | a column)
INDEX_WORDS = {"first": "entity_start", "row": "row"}
NO_ENTITY = "none"  # the task card's entity:none: each row is its own subject
BLOCKS = "blocks"  # the task card's answer that the rows are consecutive blocks of one entity's records
# the task card's answers for multi-state rows: multistate:first (any transition out of the starting
# state) or multistate:into:<state> (the transition into that state, the others censoring)
MULTISTATE = "multistate"
# the task card's ids:<how> for rows without an entity id (kernel_tools.transforms.entity_ids)
MISSING_IDS = ("drop", "own")


class PredictionIndex(TypedDict, total=False):
    """When a prediction is made, as the diagnosis found it (``kernel_tools.diagnosis.timing``)."""

    kind: str  # entity_start | row | date | ...
    column: str | None
    reason: str
    given: bool
    start: str | None  # the start column of (start, stop] intervals
    label: str


def task_kind(value: Any) -> TaskKind | None:
    """A task kind from a word: None for "auto" or nothing; ValueError for anything else."""
    if value in (None, "", "auto"):
        return None
    try:
        return TaskKind(value)
    except ValueError:
        raise ValueError(f"task must be auto or one of {[k.value for k in TaskKind]}, not {value!r}") from None


@dataclass
class Given:
    """What the user named: the values that stand whatever the diagnosis infers."""

    target: str | None = None
    time: str | None = None
    id: str | None = None  # "": no entity, each row is its own subject (an answer to the task card)
    kind: TaskKind | None = None
    index: str | None = None  # first | row | a date column
    censored: str | None = None  # the code of a status of several codes that means censored

    def __post_init__(self) -> None:
        self.kind = task_kind(self.kind)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Given:
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})


@dataclass
class Task:
    """The task of a session: what is predicted (``target``, with ``time`` and ``event`` for
    survival), for which entity (``id``, its records ordered by ``visit``), at which moment
    (``index``), judged by which ``metric``; see the module docstring for whose word counts."""

    kind: TaskKind | None = None
    target: str | None = None
    time: str | None = None  # the duration (survival), else the visit/order column the user named
    event: str | None = None
    id: str | None = None
    visit: str | None = None
    index: PredictionIndex = field(default_factory=lambda: PredictionIndex())
    reason: str = ""
    metric: str | None = None
    target_missing: int | None = None
    start: str | None = None  # (start, stop] intervals made by to_intervals
    stop: str | None = None
    id_missing: int = 0  # rows without an id in ``id`` (the diagnosis's count)
    missing_ids: str | None = None  # what they are: "drop" | "own" (the task card's ids:<how>)
    censored: str | None = None  # a status of several codes: the one read as censored (recoded to 0)
    blocks: dict[str, Any] | None = None  # number_blocks' parameters when the task card said the rows are blocks
    # rank_levels' parameters (column, levels in order) while an ordered target of labels is read as a score
    ranks: dict[str, Any] | None = None
    transitions: dict[str, Any] | None = None  # the diagnosis found multi-state rows: their layout
    multistate: dict[str, Any] | None = None  # first_transition's parameters: the task card's reading of them
    confirmed: bool = False
    given: Given = field(default_factory=Given)

    def __post_init__(self) -> None:
        self.kind = task_kind(self.kind)

    @classmethod
    def inferred(cls, detected: dict[str, Any], given: Given) -> Task:
        """The diagnosis's task (kernel JSON) with what the user named over it."""
        known = {f.name for f in fields(cls)} - {"given", "confirmed"}
        task = cls(**{k: v for k, v in detected.items() if k in known}, given=given)
        task.target = given.target or task.target
        task.time = given.time or task.time
        task.id = None if given.id == "" else given.id or task.id
        task.kind = given.kind or task.kind
        task.censored = given.censored or task.censored
        if task.kind != TaskKind.REGRESSION:
            task.ranks = None  # the user said classes: the levels stay labels
        return task

    @classmethod
    def from_request(cls, given: Given, reason: str = "from the request") -> Task:
        """The task as the user gave it, before (or without) a diagnosis."""
        return cls(kind=given.kind or TaskKind.CLASSIFICATION, target=given.target, time=given.time,
                   id=given.id, reason=reason, given=given)

    def diagnosis_args(self) -> dict[str, Any]:
        """What the diagnosis is told: the whole task once the user confirmed it, else what they
        named; the moment of prediction whenever they named one."""
        source: Task | Given = self if self.confirmed else self.given
        args: dict[str, Any] = {"target": source.target, "time": source.time,
                                "id": "" if self.given.id == "" else source.id}
        if source.kind is not None:
            args["task"] = source.kind.value
        if self.given.index:
            args["index"] = self.given.index
        return args

    def answer(self, choice: str | None) -> bool:
        """The task card's answer: another task kind, moment of prediction, survival time,
        entity (``entity:none``: each row is its own subject) or code of a status read as
        censored (``censored:<code>``) — the user's word, kept in :attr:`given` — or what rows
        without an entity id are (``ids:drop``, ``ids:own``), or that the rows are blocks of one
        entity's records (``blocks``: :attr:`blocks` is set by the caller); confirmed either way. True when the
        data must be diagnosed again (the options follow the moment of prediction, the time and
        the entity; a status of codes read as another task is no longer recoded; survival chosen
        without a time finds it)."""
        self.confirmed = True
        if choice in {k.value for k in TaskKind}:
            recoded = self.censored is not None and choice != TaskKind.SURVIVAL
            # survival without a time: the diagnosis reads it (a person-period layout the card offered)
            timeless = choice == TaskKind.SURVIVAL and self.time is None
            # an ordered target's labels read as a score: the diagnosis reads their order (ranks)
            scored = choice == TaskKind.REGRESSION and self.kind != TaskKind.REGRESSION
            self.kind = self.given.kind = TaskKind(choice)
            if recoded:
                self.censored = self.given.censored = None
            if self.kind != TaskKind.REGRESSION:
                self.ranks = None
            return recoded or timeless or scored
        part, _, value = (choice or "").partition(":")
        if part == "censored" and value:
            self.kind = self.given.kind = TaskKind.SURVIVAL
            self.censored = self.given.censored = value
            return False
        if part == "index" and value:
            self.given.index = value
        elif part == "time" and value:
            self.given.time = self.time = value
        elif part == "entity" and value:
            self.given.id = "" if value == NO_ENTITY else value
            self.id = self.given.id or None
        elif part == "ids" and value in MISSING_IDS:
            self.missing_ids = value
            return False
        elif choice == BLOCKS:  # a step numbers the blocks; its number becomes the entity then
            return False
        else:
            return False
        return True

    def observed(self, detected: dict[str, Any]) -> None:
        """What a diagnosis tells the confirmed task: the rows without an id in the data as it is
        now, and the survival time it read where the user chose survival without one (the
        person-period layout a hint offered)."""
        if detected.get("id") == self.id:
            self.id_missing = int(detected.get("id_missing") or 0)
        if self.kind == TaskKind.SURVIVAL and self.time is None and detected.get("kind") == TaskKind.SURVIVAL:
            self.time = detected.get("time")
        if self.kind == TaskKind.REGRESSION and self.ranks is None and detected.get("ranks"):
            self.ranks = detected["ranks"]  # regression chosen on the card for an ordered target of labels

    @property
    def index_label(self) -> str | None:
        return self.index.get("label")

    def to_dict(self) -> dict[str, Any]:
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        out["kind"] = self.kind.value if self.kind else None
        out["index"] = dict(self.index)
        out["given"] = self.given.to_dict()
        if out["given"]["kind"] is not None:
            out["given"]["kind"] = out["given"]["kind"].value
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any], given: Given | None = None) -> Task:
        known = {f.name for f in fields(cls)} - {"given"}
        task = cls(**{k: v for k, v in data.items() if k in known})
        task.index = PredictionIndex(**(data.get("index") or {}))
        task.given = given if given is not None else Given.from_dict(data.get("given") or {})
        return task


@dataclass
class Inputs:
    """The rest of what started a session: where the data is and what may leave the machine."""

    frames: list[str] = field(default_factory=list)  # the kernel's frames, the first the session's
    data: list[str] = field(default_factory=list)  # the files they were loaded from (headless runs)
    engine: str = "pandas"  # pandas | dask
    test_path: str | None = None  # a separate test file
    kernel: str | None = None  # the kernel that hosts the session (the magics)
    goal: str | None = None
    share: str = "schema"  # what an LLM may see: schema | samples
    dictionary: str | None = None  # the study's codebook, read in the kernel (docs/codebooks.md)
    events: str | None = None  # REDCap's instrument-event mapping, with a REDCap dictionary

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Inputs:
        known = {f.name for f in fields(cls)}
        inputs = cls(**{k: v for k, v in data.items() if k in known and v is not None})
        return inputs


def from_old_sidecar(task: dict[str, Any], hints: dict[str, Any]) -> tuple[Task, Inputs]:
    """A sidecar of before these types: ``task`` (the diagnosis's, with ``confirmed``) and
    ``hints`` (the request: target, time, task, id, index, frames, ...) as two dicts."""
    given = Given(target=hints.get("target"), time=hints.get("time"), id=hints.get("id"),
                  kind=hints.get("task"), index=hints.get("index"))
    return Task.from_dict(task, given) if task else Task(given=given), Inputs.from_dict(hints)


__all__ = ["INDEX_WORDS", "NO_ENTITY", "Given", "Inputs", "PredictionIndex", "Task", "from_old_sidecar", "task_kind"]
