"""The co-pilot's small vocabularies, declared once.

Every layer (kernel_tools, the engine, the server, the panel through the exported JSON Schema)
reads these instead of spelling its own copy. They are ``StrEnum``s, so a member *is* its string:
``Severity.CRITICAL == "critical"`` and JSON carries plain strings.

A detector may declare a finding kind of its own where it registers
(:func:`kernel_tools.diagnosis.registry.detector`); :func:`finding_kinds` lists both.
"""

from __future__ import annotations

import sys
from enum import Enum

if sys.version_info >= (3, 11):
    from enum import StrEnum
else:  # Python 3.10 (kernel_tools supports it): what StrEnum does for the members here

    class StrEnum(str, Enum):
        def __str__(self) -> str:
            return str(self.value)


class Severity(StrEnum):
    """How much a finding matters; ``rank`` orders the most severe first."""

    CRITICAL = "critical"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        return list(Severity).index(self)


def severity_rank(value: object) -> int:
    """Rank of a severity given as a string (unknown ones last): the sort key everyone uses."""
    try:
        return Severity(str(value)).rank
    except ValueError:
        return len(Severity)


class Gate(StrEnum):
    """Decisions only a domain expert can take: a step behind a gate waits for its answer."""

    LEAKAGE = "leakage"
    AGGREGATION = "aggregation"
    IDENTIFIERS = "identifiers"
    OUTLIERS = "outliers"
    LABEL_ISSUES = "label_issues"
    IMPUTATION = "imputation"
    ROW_REMOVAL = "row_removal"
    JOIN = "join"  # which key joins two files, and how (records over time summarised first)


class StepGate(StrEnum):
    """The gates a step may have that no finding raises: confirming the task, and running custom
    (LLM-written) code. A decision's gate is a :class:`Gate` or one of these."""

    TASK = "task"
    CUSTOM_CODE = "custom_code"


class TaskKind(StrEnum):
    CLASSIFICATION = "classification"
    REGRESSION = "regression"
    SURVIVAL = "survival"

    @property
    def metric(self) -> str:
        """The task's primary metric: what a model of this task is judged by."""
        return METRIC[self]


METRIC = {TaskKind.CLASSIFICATION: "roc_auc", TaskKind.REGRESSION: "r2", TaskKind.SURVIVAL: "c_index"}
# the metrics as a reader names them (notes, cards, reports): never "changes the c_index"
METRIC_WORDS = {"roc_auc": "AUROC", "r2": "R²", "c_index": "C-index"}


def metric_words(metric: object) -> str:
    """``"c_index"`` → ``"C-index"``; a metric without a name in words as it is."""
    return METRIC_WORDS.get(str(metric), str(metric))
# ranking metrics, where 1.0 means perfect: a score this high from one column or one model is
# more likely a leak than a discovery
RANKING_METRICS = ("roc_auc", "c_index")
LEAKAGE_SCORE = 0.98


class Confidence(StrEnum):
    """How sure a structural inference is. ``GIVEN``: the user said so; ``HIGH``: clear evidence
    (one row per subject, a named id, a 0/1 target); ``LOW``: a guess between close alternatives
    or on weak evidence (names only), which an expert must confirm."""

    GIVEN = "given"
    HIGH = "high"
    LOW = "low"


class InferenceKind(StrEnum):
    """The structural choices a diagnosis infers, each with its confidence and evidence."""

    TASK = "task"  # the task kind and how the target is coded
    DURATION = "duration"  # the follow-up time of a survival task
    ENTITY = "entity"  # the column whose rows belong to one subject (or none)
    INDEX = "index"  # when a prediction is made
    JOIN_KEY = "join_key"  # the column joining two files
    GROUPING = "grouping"  # what becomes of a column grouping several subjects (a matched set, a centre)
    TIMING = "timing"  # when one column is known, relative to the index


class TimelineGroup(StrEnum):
    """The groups of the column timeline, in time order."""

    BASELINE = "baseline"  # known at the index
    DURING_FOLLOW_UP = "during_follow_up"  # recorded after the index, before the outcome
    AT_OR_AFTER_OUTCOME = "at_or_after_outcome"  # recorded with or because of the outcome
    UNKNOWN = "unknown"  # the evidence disagrees or is too weak to place it


class EvidenceSource(StrEnum):
    """Where the evidence for a column's timing comes from: a timeline reads them all."""

    VALUES = "values"  # tests on the data (bounded by the duration, dated after the index ...)
    STRUCTURE = "structure"  # the table's shape: (time, indicator) pairs, waves, records over time
    NAMES = "names"  # what a column's name says (a time, a process, the outcome event)
    DICTIONARY = "dictionary"  # the study's codebook
    PROPOSAL = "proposal"  # a planner's (LLM's) proposal from the schema


class FindingKind(StrEnum):
    """The issue taxonomy, in the order findings of equal severity are shown (most structural
    first: a diagnosis that could not run, leaks, repeated entities ...)."""

    DIAGNOSIS_INCOMPLETE = "diagnosis_incomplete"
    # rows that are not data (a repeated header, a total): set aside before any other check
    STRAY_ROWS = "stray_rows"
    TARGET_LEAKAGE = "target_leakage"
    # raised by the model audit, not a detector: a near-perfect score carried by one feature
    SUSPECTED_LEAKAGE = "suspected_leakage"
    REPEATED_MEASUREMENTS = "repeated_measurements"
    SURVIVAL_SETUP = "survival_setup"
    ID_COLUMN = "id_column"
    # an identifier of a group of subjects (a matched set, a batch, a centre): not a measurement
    GROUPING_COLUMN = "grouping_column"
    TRAIN_TEST_SHIFT = "train_test_shift"
    DUPLICATE_ROWS = "duplicate_rows"
    LABEL_ISSUES = "label_issues"
    MISSING_VALUES = "missing_values"
    NUMERIC_AS_TEXT = "numeric_as_text"
    MIXED_UNITS = "mixed_units"
    INCONSISTENT_CATEGORIES = "inconsistent_categories"
    OUTLIERS = "outliers"
    CLASS_IMBALANCE = "class_imbalance"
    REDUNDANT_FEATURES = "redundant_features"
    CONSTANT_COLUMN = "constant_column"
    FREE_TEXT = "free_text"
    JOIN_KEYS = "join_keys"


class Basis(StrEnum):
    """Where a finding's numbers come from on a lazy (Dask) frame (``evidence["basis"]``)."""

    WHOLE_DATA = "whole data"  # counts over every row
    SAMPLE = "sample"  # a model or a statistic of the sample of whole entities


class Chart(StrEnum):
    """The small bar charts a decision card draws of a finding's evidence
    (``jupyter_dcpilot/engine/charts.py`` draws each), or none."""

    LEAKAGE = "leakage"  # the suspect column's single-feature score beside the best other's
    MODEL_SCORE = "model_score"  # the model's too-good cross-validated and holdout scores
    MISSING = "missing"  # missing values per column
    OUTLIERS = "outliers"  # values outside the fences per column
    LABEL_ISSUES = "label_issues"  # rows flagged as mislabelled, by recorded class
    ROWS_PER_ENTITY = "rows_per_entity"  # rows per entity (a model wants one)
    DUPLICATES = "duplicates"  # exact and near duplicate rows
    NONE = "none"  # no chart fits its evidence (a finding says so, so no host asks its detector)


_DECLARED: dict[str, int] = {}  # kinds declared by registered detectors -> their display order


def declare_kind(kind: str, order: int | None = None) -> None:
    """Make ``kind`` a finding kind (called by the detector registry, next to its detector)."""
    if kind in values(FindingKind):
        return
    _DECLARED[kind] = len(FindingKind) + len(_DECLARED) if order is None else order


def finding_kinds() -> tuple[str, ...]:
    """Every finding kind: the taxonomy's, then those detectors declared."""
    return (*values(FindingKind), *sorted(_DECLARED, key=_DECLARED.__getitem__))


def kind_rank(kind: str) -> int:
    """Display order of a finding kind (unknown ones last)."""
    kinds = finding_kinds()
    return kinds.index(kind) if kind in kinds else len(kinds)


class StepStatus(StrEnum):
    """Where a plan step is. ``PROPOSED`` and ``AWAITING_DECISION`` are pending: not run yet."""

    PROPOSED = "proposed"
    AWAITING_DECISION = "awaiting_decision"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    UNDONE = "undone"
    SKIPPED = "skipped"


PENDING = (StepStatus.PROPOSED, StepStatus.AWAITING_DECISION)
# a step that ran to its end, one way or another: what an undo takes back
RAN = (StepStatus.DONE, StepStatus.FAILED, StepStatus.RUNNING, StepStatus.SKIPPED)


class SessionState(StrEnum):
    """Where a co-pilot session is: ``BLOCKED`` waits for the expert's answer."""

    IDLE = "idle"
    RUNNING = "running"
    BLOCKED = "blocked"
    FINISHED = "finished"
    FAILED = "failed"


class EventType(StrEnum):
    """What a session tells its host (panel, CLI, chat) changed; ``SessionModel.apply`` in the
    panel handles the ones it shows."""

    STATE = "state"
    ACTIVITY = "activity"
    PLAN = "plan"
    STEP = "step"
    FINDING = "finding"
    DECISION = "decision"
    AWAITING_DECISION = "awaiting_decision"
    IMPACT = "impact"
    CELL = "cell"
    UNDO = "undo"
    REJECTION = "rejection"
    INSTRUCTION = "instruction"
    TRANSCRIPT = "transcript"
    VALIDITY = "validity"
    PROGRESS = "progress"
    PLANNER_FALLBACK = "planner_fallback"
    LLM_USAGE = "llm_usage"
    RENAMED = "renamed"
    CLOSED = "closed"
    TIMELINE = "timeline"  # a column moved on the timeline (the card, with the moves)


def values(vocabulary: type[StrEnum]) -> tuple[str, ...]:
    """The members as plain strings (for messages and JSON: a tuple of members prints its reprs)."""
    return tuple(m.value for m in vocabulary)


SEVERITIES = values(Severity)
GATES = values(Gate)
TASK_KINDS = values(TaskKind)

VOCABULARIES: dict[str, type[StrEnum]] = {
    "Severity": Severity, "Gate": Gate, "StepGate": StepGate, "TaskKind": TaskKind, "FindingKind": FindingKind,
    "StepStatus": StepStatus, "SessionState": SessionState, "EventType": EventType, "Confidence": Confidence,
    "InferenceKind": InferenceKind, "TimelineGroup": TimelineGroup, "EvidenceSource": EvidenceSource,
    "ChartKind": Chart,  # (the panel's Chart is a drawn one, engine/wire.py)
}


def vocabulary_values(name: str, kinds: tuple[str, ...] | None = None) -> tuple[str, ...]:
    """The strings of the vocabulary ``name``; for ``FindingKind``, ``kinds`` (every kind, with
    those the detectors declare: :func:`kernel_tools.diagnosis.registry.every_finding_kind`),
    else the kinds declared so far."""
    if name == "FindingKind":
        return kinds if kinds is not None else finding_kinds()
    return values(VOCABULARIES[name])


def typescript(kinds: tuple[str, ...] | None = None) -> str:
    """The vocabularies as a TypeScript module (``labextension/src/vocabulary.ts``): the panel
    imports these instead of spelling the strings; a test keeps the file equal to this text.
    ``kinds``: every finding kind (:func:`kernel_tools.diagnosis.registry.every_finding_kind`)."""

    def const(name: str, items: tuple[str, ...]) -> str:
        body = "".join(f"\n  '{v}'," for v in items)
        return f"export const {name} = [{body}\n] as const;\n"

    lines = ["// Generated by `python -m kernel_tools.vocabulary --typescript > labextension/src/vocabulary.ts`",
             "// from kernel_tools/vocabulary.py, the one place these strings are declared: do not edit.", ""]
    for name in VOCABULARIES:
        plural = _CONSTANT[name]
        lines += [const(plural, vocabulary_values(name, kinds)), f"export type {name} = (typeof {plural})[number];", ""]
    lines += [const("PENDING", tuple(m.value for m in PENDING)),
              "/** A step not run yet (proposed, or waiting for the expert's answer). */",
              "export function isPending(status: string): boolean {",
              "  return (PENDING as readonly string[]).includes(status);", "}", "",
              "/** The primary metric of each task kind. */",
              "export const METRIC: { [kind in TaskKind]: string } = {"]
    lines += [f"  {kind.value}: '{metric}'," for kind, metric in METRIC.items()]
    lines += ["};", "", "/** The metrics as a reader names them. */",
              "export const METRIC_WORDS: { [metric: string]: string } = {"]
    lines += [f"  {metric}: '{words}'," for metric, words in METRIC_WORDS.items()]
    lines += ["};", ""]
    return "\n".join(lines)


_CONSTANT = {"Severity": "SEVERITIES", "Gate": "GATES", "StepGate": "STEP_GATES", "TaskKind": "TASK_KINDS",
             "FindingKind": "FINDING_KINDS", "StepStatus": "STEP_STATUSES", "SessionState": "SESSION_STATES",
             "EventType": "EVENT_TYPES", "Confidence": "CONFIDENCES", "InferenceKind": "INFERENCE_KINDS",
             "TimelineGroup": "TIMELINE_GROUPS", "EvidenceSource": "EVIDENCE_SOURCES", "ChartKind": "CHART_KINDS"}


if __name__ == "__main__":
    import sys

    # this file runs as __main__: the detectors declare their kinds in kernel_tools.vocabulary
    from kernel_tools.diagnosis.registry import every_finding_kind
    from kernel_tools.vocabulary import typescript as generated

    if sys.argv[1:] != ["--typescript"]:
        sys.exit("usage: python -m kernel_tools.vocabulary --typescript")
    sys.stdout.write(generated(every_finding_kind()))
