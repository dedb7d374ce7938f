"""The verdict: is the model valid? One audit over named checks, each with its evidence.

``valid`` is true only when every check passed. A check that could not run fails and says why:
a missing piece of evidence never reads as "valid". The checks ask of every row and column
whether it is known at prediction time, and of the model whether it was judged honestly:

- ``model_trained``: there is a model to judge;
- ``diagnosis_complete``: every detector of the last diagnosis ran;
- ``no_identifiers``: no identifier (row number, record key, the entity id) is a feature;
- ``no_follow_up``: no column recorded after the prediction time (follow-up or derived from
  the outcome) is a feature;
- ``no_leakage``: no other column flagged as giving the outcome away is a feature;
- ``entities_together``: the records of one entity never sit on both sides of a split or fold;
- ``known_at_index``: the rows the model learns from hold only what is known at the index
  (e.g. each entity's first record, not its latest; or every record as a (start, stop]
  interval that a time-varying model uses only from its start on), and no feature is a column a
  person placed after the index on the column timeline;
- ``structure_confirmed``: every structural choice the run rests on (the task kind and target
  coding, the survival time, the entity, the prediction time, a join key, the timing of each
  feature) was given, is clear from the data (high confidence) or was confirmed by a person; an
  approval policy's recommended answer confirms nothing (see :mod:`.structure`);
- ``task_metric``: the metric fits the task (AUROC, R², C-index);
- ``cv_stable``: no fold scores far below the others and no better than the trivial predictor:
  one broken fold (a wild prediction on a value typed x100) must not decide the cross-validated
  estimate; folds too small to judge are said so (:mod:`.folds`);
- ``holdout_confirms_cv``: the held-out score is not implausibly low for the cross-validated one,
  given the size of both; a holdout too small to tell a gap must at least show some skill where
  the cross-validation claims it (:mod:`.holdout`);
- ``test_untouched``: no fit saw the test rows (disjoint rows and entities, nothing removed
  from the test set, no custom code after the split);
- ``no_suspect_score``: no unexplained too-good-to-be-true score;
- ``approved_steps_ran``: every step the expert or the approval policy approved (or the user added
  or changed) ran: a failed one stops the run, and is never silently left out of a valid result.

The checks find the steps they judge by what their episode declares, never by its id: the
aggregation is the step of the ``aggregation`` gate, the split the step of the ``split`` stage,
the model the step of the ``model`` stage, custom code a step of an episode whose cell is
``free_code``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from kernel_tools.findings import Finding
from kernel_tools.inferences import ColumnTimeline
from kernel_tools.plurals import counted
from kernel_tools.vocabulary import METRIC, FindingKind, Gate, InferenceKind, StepStatus, TaskKind, TimelineGroup

from .episodes import Episode, library, stage_of
from .folds import cv_stable
from .holdout import holdout_confirms
from .session import Session, Step
from .structure import by_a_person, confirmations, in_words, unconfirmed

# the names of the checks, in the order the verdict lists them
CHECKS = ("model_trained", "diagnosis_complete", "no_identifiers", "no_follow_up", "no_leakage",
          "entities_together", "known_at_index", "structure_confirmed", "task_metric", "cv_stable",
          "holdout_confirms_cv", "test_untouched",
          "no_suspect_score", "approved_steps_ran")
TIMED = ("follow_up", "outcome_derived")
BASELINE_HOWS = ("baseline", "first")
# names that say nothing of what a column measures or when (v1, var12, q3, x4, item7, C2)
CODED_NAME = re.compile(r"^(v|var|q|x|item|col|c|f|field|z)[._]?\d{1,4}$", re.I)
# findings that say an entity has several rows: repeated measurements, a REDCap export's events
REPEATED = ("repeated_measurements", "redcap_events")


@dataclass
class Check:
    """One named check of the verdict, whether it passed, and what it found."""

    check: str
    passed: bool
    detail: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def all_findings(session: Session) -> list[Finding]:
    """Every finding the session has seen (the latest diagnosis and those before each step)."""
    findings = list(session.findings)
    for cp in session.checkpoints:
        findings += cp.snapshot.findings
    return findings


def _columns(findings: list[Finding], test: Callable[[Finding], bool]) -> list[str]:
    out: list[str] = []
    for f in findings:
        if f.kind != FindingKind.SUSPECTED_LEAKAGE and test(f):
            out += [c for c in f.columns if c not in out]
    return out


def flagged_columns(session: Session) -> dict[str, list[str]]:
    """Columns flagged as identifiers, as recorded after the prediction time, and as leakage."""
    findings = all_findings(session)
    timed = _columns(findings, lambda f: f.kind == FindingKind.TARGET_LEAKAGE and f.evidence.get("timing") in TIMED)
    leak = _columns(findings, lambda f: (f.kind == FindingKind.TARGET_LEAKAGE or f.gate == Gate.LEAKAGE)
                    and f.kind != FindingKind.REPEATED_MEASUREMENTS)
    ids = _columns(findings, lambda f: f.kind in (FindingKind.ID_COLUMN, FindingKind.GROUPING_COLUMN))
    entity = session.task.id
    # a person's word on the timeline over the data's: a column they placed at baseline is known then
    baseline = {m.column for m in session.structure.moves} & set(
        (session.structure.card() or ColumnTimeline({})).groups()[TimelineGroup.BASELINE])
    # as is one a person kept at the question of the co-pilot's own guess that it was recorded late
    baseline |= {c for d in session.decisions if d.gate == Gate.LEAKAGE and d.choice == "keep" and by_a_person(d)
                 for c in d.columns} & guessed_late(session)
    return {"identifiers": [c for c in ids if c != entity], "timed": [c for c in timed if c not in baseline],
            "leakage": [c for c in leak if c not in timed and c not in baseline]}


def _names(columns: list[str]) -> str:
    shown = ", ".join(f"'{c}'" for c in columns[:8])
    return shown + (f" and {len(columns) - 8} more" if len(columns) > 8 else "")


def _done(session: Session, episodes: dict[str, Episode], role: Callable[[Episode], bool]) -> Step | None:
    """The last done step of an episode ``role`` picks."""
    return next((st for st in reversed(session.plan) if st.status == StepStatus.DONE and st.episode in episodes
                 and role(episodes[st.episode])), None)


def _aggregation(ep: Episode) -> bool:  # the step that decides how an entity's records become rows
    return ep.gate == Gate.AGGREGATION


def _split(ep: Episode) -> bool:
    return ep.stage == "split"


def _model(ep: Episode) -> bool:
    return ep.stage == "model"


def _kept_by(session: Session, column: str) -> str:
    """Who left ``column`` in: a decision that kept it, or a step removing it that was skipped."""
    d = next((d for d in session.decisions if column in d.columns and d.choice == "keep"), None)
    if d is not None:
        return f" (kept by decision {d.id.split('-')[0]}, by {d.by})"
    st = next((st for st in session.plan if column in st.columns and st.status == StepStatus.SKIPPED), None)
    if st is None:
        return ""
    d = next((d for d in session.decisions if d.id == st.decision_id and d.decided), None)
    who = ("the user, in the plan" if "skipped" in st.by_user
           else f"decision {d.id.split('-')[0]}, by {d.by}" if d is not None else "the approval policy")
    return f" (the step that removes it, {st.id} '{st.title}', was skipped by {who})"


def _features_check(name: str, features: set[str], columns: list[str], what: str, none_found: str,
                    session: Session) -> Check:
    used = [c for c in columns if c in features]
    if used:
        return Check(name, False, f"{what} among the features: "
                     + "; ".join(f"'{c}'{_kept_by(session, c)}" for c in used))
    if columns:
        return Check(name, True, f"{what} found and kept out of the features: {_names(columns)}")
    return Check(name, True, none_found)


def _diagnosis_complete(session: Session) -> Check:
    if not session.diagnosis and not session.findings:
        return Check("diagnosis_complete", False, "the data was never diagnosed")
    failed = [f for f in session.findings if f.kind == FindingKind.DIAGNOSIS_INCOMPLETE]
    if failed:
        return Check("diagnosis_complete", False, "; ".join(f.summary for f in failed)[:600])
    return Check("diagnosis_complete", True, "every detector of the last diagnosis ran")


def _entities_together(session: Session, model: dict[str, Any], episodes: dict[str, Episode]) -> Check:
    repeated = [f for f in all_findings(session) if f.kind in REPEATED]
    if not repeated:
        return Check("entities_together", True, "no entity has several rows")
    entity = (repeated[-1].columns or [session.task.id or "?"])[0]
    aggregate = _done(session, episodes, _aggregation)
    if aggregate is not None and aggregate.result.get("function") == "aggregate_per_entity":
        return Check("entities_together", True, f"one row per '{entity}' (aggregated)")
    if aggregate is not None and aggregate.result.get("function") == "redcap_baseline":
        return Check("entities_together", True, f"one row per '{entity}' (its baseline event)")
    split = _done(session, episodes, _split)
    split_kind = str(((split.result.get("report") or {}).get("details") or {}).get("kind", "")) if split else ""
    grouped_split = "grouped" in split_kind or bool(session.inputs.test_path)
    if model.get("grouped") and grouped_split:
        return Check("entities_together", True, f"split and cross-validation grouped by '{entity}'")
    missing = [w for w, ok in (("the split", grouped_split), ("the cross-validation", model.get("grouped"))) if not ok]
    return Check("entities_together", False, f"rows repeat per '{entity}' but {' and '.join(missing)} "
                 "did not keep each entity on one side")


def _intervals(session: Session, episodes: dict[str, Episode]) -> Check | None:
    """The verdict on (start, stop] interval rows, or None when the rows are not intervals."""
    task = session.task
    aggregate = _done(session, episodes, _aggregation)
    made = aggregate is not None and aggregate.result.get("function") == "to_intervals"
    given = task.index.get("start") and (
        aggregate is None or aggregate.result.get("function") != "aggregate_per_entity")
    if not made and not given:
        return None
    start = task.start or task.index.get("start")
    stop = task.stop or task.time
    model_step = _done(session, episodes, _model)
    if model_step is None or model_step.result.get("function") != "fit_evaluate_intervals":
        return Check("known_at_index", False, f"the rows are ('{start}', '{stop}'] intervals, but the model "
                     "did not fit them as intervals: counted from 0, a later interval knows its entity "
                     "survived until its start")
    return Check("known_at_index", True, f"every row is a ('{start}', '{stop}'] interval whose values were "
                 "recorded by its start, and the time-varying model uses each only from then on"
                 + _empty_intervals_left_out(_left_out_step(session) or aggregate))


def _left_out_step(session: Session) -> Step | None:
    """The done step that left out intervals spanning no time or repeated (the repeated rows' question
    may be asked again after it, its answer to keep the rows then the last of that gate)."""
    return next((st for st in reversed(session.plan) if st.status == StepStatus.DONE
                 and st.result.get("function") == "drop_empty_intervals"), None)


def _empty_intervals_left_out(aggregate: Step | None) -> str:
    """What was decided about rows that spanned no time (``kt.drop_empty_intervals``), or ""."""
    if aggregate is None or aggregate.result.get("function") != "drop_empty_intervals":
        return ""
    details = (aggregate.result.get("report") or {}).get("details", {})
    removed = details.get("rows_removed", 0)
    repeated = details.get("rows_repeated", 0)
    empty = details.get("rows_empty", removed - repeated)
    said = []
    if empty:
        said.append(f"{counted(empty, 'row')} whose stop was at or before {'its' if empty == 1 else 'their'} start "
                    f"{'was' if empty == 1 else 'were'} left out")
    if repeated:
        said.append(f"{counted(repeated, 'row')} repeating an earlier interval of {'its' if repeated == 1 else 'their'}"
                    " entity exactly (events at one time) counted once")
    return "; " + " and ".join(said) + ", as decided" if said else ""


def _known_at_index(session: Session, episodes: dict[str, Episode]) -> Check:
    index = session.task.index
    kind = index.get("kind")
    if kind is None:
        return Check("known_at_index", False, "the prediction time (index) was never established")
    label = index.get("label") or kind
    intervals = _intervals(session, episodes) if session.task.kind == TaskKind.SURVIVAL else None
    if intervals is not None:
        return intervals
    redcap = _redcap_events(session, episodes) if kind == "entity_start" else None
    if redcap is not None:
        return redcap
    repeated = [f for f in all_findings(session) if f.kind == FindingKind.REPEATED_MEASUREMENTS]
    varying: list[str] = next((list(f.evidence["time_varying_columns"]) for f in reversed(repeated)
                               if f.evidence.get("time_varying_columns")), [])
    if kind != "entity_start" or not repeated:
        return Check("known_at_index", True, f"predictions at {label}; the timing of every column "
                     "was checked against it")
    aggregate = _done(session, episodes, _aggregation)
    params = (aggregate.result.get("params") or {}) if aggregate is not None else {}
    if aggregate is None or aggregate.result.get("function") != "aggregate_per_entity":
        if not varying and session.task.kind != TaskKind.SURVIVAL:
            return Check("known_at_index", True, f"predictions at {label}; no column changes between records")
        return Check("known_at_index", False, f"predictions are made at {label}, but every record is a "
                     "training row: later records hold what is only known after the prediction time"
                     + (f" ({_names(varying)} change between records)" if varying else ""))
    how, landmark = params.get("how"), params.get("landmark")
    if landmark is not None:
        return Check("known_at_index", True, f"features are what was known by the landmark "
                     f"{params.get('time')} = {landmark}")
    if how in BASELINE_HOWS or (not varying and how not in ("mean", "median", "min", "max", "sum", "count", "any")):
        return Check("known_at_index", True, f"the features are each entity's first record "
                     f"(aggregated with '{how}'), as known at the prediction time")
    return Check("known_at_index", False, f"predictions are made at {label}, but the features take the "
                 f"'{how}' of all records: measured after the prediction time"
                 + (f" ({_names(varying)} change between records)" if varying else ""))


def _placed_after(session: Session, features: set[str]) -> Check | None:
    """``known_at_index`` failed by the confirmed timeline: a feature a person placed during
    follow-up or at the outcome (None: there is none)."""
    card = session.structure.card()
    moved = {m.column: m for m in session.structure.moves}
    late = [c for c in sorted(features) if card is not None and c in moved and c in card.columns
            and not card.columns[c].known_at_index and card.columns[c].group != TimelineGroup.UNKNOWN]
    if not late:
        return None
    return Check("known_at_index", False, "features a person placed after the prediction time on the column "
                 "timeline: " + "; ".join(f"'{c}' ({card.columns[c].group.replace('_', ' ')}, moved "  # type: ignore[union-attr]
                                          f"{_via(moved[c].via)})" for c in late)
                 + ": the timeline step that drops them ran before the move (undo it, or reopen it)")


def _via(via: str) -> str:
    return "by an agent" if via.startswith("agent ") else f"by the user ({via})"


WHERE = {InferenceKind.TASK: "the task card", InferenceKind.DURATION: "the task card",
         InferenceKind.ENTITY: "the task card", InferenceKind.INDEX: "the task card",
         InferenceKind.JOIN_KEY: "the join question", InferenceKind.TIMING: "the column timeline",
         InferenceKind.GROUPING: "the identifiers' questions"}


def guessed_late(session: Session) -> set[str]:
    """Columns kept out of the features only on the co-pilot's unconfirmed guess of their place
    (after the index): their timing is a choice the model rests on as much as a feature's."""
    return {c for f in all_findings(session) if f.kind == FindingKind.TARGET_LEAKAGE
            and f.evidence.get("source") == "placement" for c in f.columns}


def _structure_confirmed(session: Session, features: set[str]) -> Check:
    s = session.structure
    if not s.inferences:
        return Check("structure_confirmed", False, "the diagnosis recorded no structural choice (task, entity, "
                     "prediction time) with its confidence: the structure the model rests on could not be checked")
    missing = unconfirmed(session, features | guessed_late(session))
    if missing:
        where = sorted({WHERE[InferenceKind(i.what)] for i in missing}, key=list(WHERE.values()).index)
        # numbered: each choice's evidence has its own colons and semicolons
        shown = " ".join(f"({n}) {in_words(i)}" if len(missing) > 1 else in_words(i) for n, i in enumerate(missing[:8], 1))
        shown += f" (and {len(missing) - 8} more)" if len(missing) > 8 else ""
        return Check("structure_confirmed", False, f"{counted(len(missing), 'structural choice')} an expert must confirm "
                     f"(inferred with low confidence; an approval policy's answer confirms nothing): {shown}. "
                     f"Confirm or correct them on {' and '.join(where)}")
    confirmed = confirmations(session)
    by_person = [i for i in [*s.table()] if i.id in confirmed]
    return Check("structure_confirmed", True, f"{counted(len(s.table()), 'structural choice')} and the timing of "
                 f"{counted(len(features), 'feature')} given, clear from the data or confirmed by a person"
                 + (f" ({', '.join(i.id for i in by_person)} {confirmed[by_person[0].id]})" if by_person else ""))


def _redcap_events(session: Session, episodes: dict[str, Episode]) -> Check | None:
    """The verdict on a REDCap export's rows per record and event (None: not one)."""
    found = [f for f in all_findings(session) if f.kind == "redcap_events"]
    if not found:
        return None
    evidence = found[-1].evidence
    aggregate = _done(session, episodes, _aggregation)
    if aggregate is not None and aggregate.result.get("function") == "redcap_baseline":
        params = aggregate.result.get("params") or {}
        events = params.get("events") or evidence.get("events") or ["?"]
        outcome = params.get("outcome_event") or evidence.get("outcome_event")
        return Check("known_at_index", True, f"the features are what each record's baseline event "
                     f"'{params.get('baseline_event') or events[0]}' holds"
                     + (f"; the outcome is taken from '{outcome}'" if outcome else ""))
    if aggregate is not None and aggregate.result.get("function") == "aggregate_per_entity":
        how = (aggregate.result.get("params") or {}).get("how")
        if how in BASELINE_HOWS:
            return Check("known_at_index", True, f"the features are each record's first event (aggregated "
                         f"with '{how}'), as known at enrolment")
        return Check("known_at_index", False, f"predictions are made at enrolment, but the features take the "
                     f"'{how}' of every event of a REDCap record: measured after enrolment")
    return Check("known_at_index", False, "the rows are a REDCap export's events: every event of a record "
                 "is a training row, and later events hold what is only known after enrolment")


def _documented(session: Session, features: set[str]) -> Check | None:
    """Whether what the columns are and when they were measured could be read: from a codebook,
    else from their names. A REDCap export comes with a data dictionary (its identifiers are
    flagged only there), and names like v1..v9 say nothing: value tests alone cannot see a
    follow-up measure only mildly related to the outcome. None: nothing to say (named columns)."""
    book = session.diagnosis.get("codebook") or {}
    if book:
        name = str(book.get("source") or "").replace("\\", "/").rsplit("/", 1)[-1]
        return Check("documented", True, f"the codebook {name} ({book.get('format')}) was read: what it says "
                     "of each column's timing and identity was weighed with the data")
    if any(f.kind == "redcap_events" for f in all_findings(session)):
        return Check("documented", False, "a REDCap export without its data dictionary: the identifiers the "
                     "project flags (Identifier?) and the timing of its forms could not be checked; give the "
                     "dictionary (--dictionary)")
    coded = sorted(c for c in features if CODED_NAME.match(str(c)))
    if len(coded) >= 3 and len(coded) * 2 >= len(features):
        return Check("documented", False, f"{len(coded)} of {len(features)} features have names that say "
                     f"nothing of what or when they measure ({_names(coded)}) and no codebook was given: a "
                     "follow-up measure among them could not be told apart; give one (--dictionary)")
    return None


def _cv_stable(session: Session, model: dict[str, Any]) -> Check:
    """The cross-validated estimate is the model's usual skill, not one broken fold's (:mod:`.folds`)."""
    return Check("cv_stable", *cv_stable(model, [st.title for st in session.plan if st.status == StepStatus.DONE]))


def _holdout_confirms(model: dict[str, Any]) -> Check:
    """A test that accounts for the holdout's size (:mod:`.holdout`), not a fixed floor."""
    return Check("holdout_confirms_cv", *holdout_confirms(model))


def _test_untouched(session: Session, train_step: Step | None, episodes: dict[str, Episode]) -> Check:
    split = _done(session, episodes, _split)
    if split is None:
        return Check("test_untouched", False, "there is no train/test split")
    split_at = session.plan.index(split)
    custom = [st for st in session.plan[split_at + 1:] if st.status == StepStatus.DONE and st.episode in episodes
              and episodes[st.episode].free_code]
    if custom:
        return Check("test_untouched", False, f"custom code ran after the split ({custom[0].title}): it "
                     "may have used the test rows")
    audit = (train_step.result.get("split_audit") if train_step is not None else None) or {}
    if not audit:
        return Check("test_untouched", False, "the train and test sets could not be compared")
    problems = []
    if audit.get("shared_rows"):
        problems.append(f"{counted(audit['shared_rows'], 'row')} {'is' if audit['shared_rows'] == 1 else 'are'} in both "
                        "train and test")
    if audit.get("shared_entities"):
        problems.append(f"{counted(audit['shared_entities'], 'entity')} "
                        f"{'is' if audit['shared_entities'] == 1 else 'are'} in both train and test")
    split_test = ((split.result.get("report") or {}).get("details") or {}).get("test_rows")
    if isinstance(split_test, int) and isinstance(audit.get("test_rows"), int) and audit["test_rows"] < split_test:
        problems.append(f"test rows were removed after the split ({split_test} → {audit['test_rows']}): "
                        "the holdout no longer stands for new data")
    if problems:
        return Check("test_untouched", False, "; ".join(problems))
    fitted = [st.title for st in session.plan[split_at + 1:] if st.status == StepStatus.DONE and st.result.get("var")
              and stage_of(episodes, st.episode) not in ("model", "final")]
    return Check("test_untouched", True, f"train {audit.get('train_rows')} and test {audit.get('test_rows')} "
                 "rows share no row" + (" or entity" if audit.get("groups") else "")
                 + (f"; {counted(len(fitted), 'step')} fitted on train only and replayed on test" if fitted else ""))


def _suspect_score(session: Session, model: dict[str, Any]) -> Check:
    leaky = [w for w in model.get("warnings", []) if str(w).startswith("suspect leakage")]
    top = next((i.get("feature") for i in model.get("importance") or [] if i.get("feature")), None)
    if leaky and f"cleared_leakage:{top}" not in session.handled:
        return Check("no_suspect_score", False, str(leaky[0]))
    if leaky:
        return Check("no_suspect_score", True, f"a very high score, but its top feature '{top}' was "
                     "examined by the diagnosis and is a measured predictor")
    return Check("no_suspect_score", True, "no too-good-to-be-true score")


def audit(session: Session, model: dict[str, Any] | None = None,
          episodes: dict[str, Episode] | None = None) -> list[Check]:
    """The checks of the verdict for the session's model (its last trained one when None).

    ``episodes``: the library the session's steps come from (default: the built-in one); the
    checks find the steps they judge by what these episodes declare."""
    episodes = episodes if episodes is not None else library()
    train_step = _done(session, episodes, _model)
    if model is None and train_step is not None:
        model = train_step.result.get("report")
    checks = [_diagnosis_complete(session)]
    if not model:
        # what an expert must confirm is still said: a wrong task or entity may be why no model trained
        unsure = _structure_confirmed(session, set()) if session.structure.inferences else None
        skipped = next((st for st in reversed(session.plan) if st.status == StepStatus.SKIPPED
                        and st.episode in episodes and _model(episodes[st.episode]) and NOTHING_TO_FIT in st.note),
                       None)
        return [Check("model_trained", False, skipped.note if skipped is not None else "no model was trained"), *checks,
                *([unsure] if unsure is not None and not unsure.passed else [])]
    features = set(model.get("features") or [])
    flagged = flagged_columns(session)
    entity = session.task.id
    ids = flagged["identifiers"] + ([entity] if entity and entity in features else [])
    checks = [
        Check("model_trained", True, f"{model.get('model_name') or 'a model'} on "
              f"{counted(len(features), 'feature')}"),
        *checks,
        _features_check("no_identifiers", features, ids, "identifiers",
                        "no column was found to be an identifier", session),
        _features_check("no_follow_up", features, flagged["timed"],
                        "columns recorded after the prediction time",
                        "no column was found to be recorded after the prediction time", session),
        _features_check("no_leakage", features, flagged["leakage"], "columns flagged as giving the outcome away",
                        "no column was found to give the outcome away", session),
        _entities_together(session, model, episodes),
        _placed_after(session, features) or _known_at_index(session, episodes),
        _structure_confirmed(session, features),
        *[c for c in (_documented(session, features),) if c is not None],
        _task_metric(session, model),
        _cv_stable(session, model),
        _holdout_confirms(model),
        _test_untouched(session, train_step, episodes),
        _suspect_score(session, model),
        _approved_steps_ran(session),
    ]
    return checks


def _task_metric(session: Session, model: dict[str, Any]) -> Check:
    kind = session.task.kind
    expected = METRIC.get(kind) if kind is not None else None
    target = session.task.target
    # a status of several codes next to a follow-up time (alive / died of X / died of Y) is an
    # event type with censoring: which class a row is in depends on how long it was followed
    censored = [f for f in all_findings(session) if kind == TaskKind.CLASSIFICATION
                and f.kind == FindingKind.TARGET_LEAKAGE
                and f.evidence.get("follow_up_time") and f.evidence.get("classes", 0) >= 3]
    if censored:
        time = (censored[0].columns or ["?"])[0]
        return Check("task_metric", False, f"'{target}' has {censored[0].evidence['classes']} codes next to the "
                     f"follow-up time '{time}': event types with censoring (competing risks), so the task is "
                     "survival (c_index) with the event of interest chosen; a classifier ignores how long each "
                     "row was followed")
    metric = model.get("metric")
    setup = next((f for f in session.findings if f.kind == FindingKind.SURVIVAL_SETUP), None)
    evidence = setup.evidence if setup is not None else {}
    bad = int(evidence.get("negative_durations") or 0) + int(evidence.get("zero_durations") or 0)
    # the last diagnosis, of the rows the model learned from
    if kind == TaskKind.SURVIVAL and evidence.get("impossible_durations"):
        return Check("task_metric", False, f"{bad} durations in '{evidence.get('duration')}' are not positive "
                     f"({evidence.get('negative_durations')} negative, {evidence.get('zero_durations')} zero): "
                     "a survival time must be, so the survival model and its C-index are not valid")
    if kind == TaskKind.REGRESSION and session.task.ranks:
        return _ranked(session, metric, expected)
    if session.task.transitions:
        return _multistate(session, metric, expected)
    return Check("task_metric", metric == expected and expected is not None,
                 f"{metric} for a {kind} task" + ("" if metric == expected else f" (expected {expected})")
                 + _durations_left_out(session))


def _multistate(session: Session, metric: str | None, expected: str | None) -> Check:
    """Survival on multi-state rows: valid once a reading made one row per subject (first_transition
    ran) and a person chose that reading on the task card (an approval policy's answer is no
    expert's: which transition is the outcome is the study's question)."""
    found = session.task.transitions or {}
    step = next((s for s in session.plan if s.status == StepStatus.DONE and s.result.get("function") == "first_transition"),
                None)
    if step is None:
        return Check("task_metric", False, f"the rows are multi-state rows ({found.get('reason', '')}): fitted as they "
                     f"are, each counts from 0 and each '{found.get('id')}' once per possible transition; choose a "
                     "reading on the task card (the first transition, one transition, or a multi-state model)")
    into = (step.result.get("params") or {}).get("into")
    what = "the first transition, whichever" if into is None else f"the transition into {into}"
    card = next((d for d in reversed(session.decisions) if d.gate == "task" and d.decided), None)
    if card is None or not by_a_person(card):
        return Check("task_metric", False, f"the multi-state rows were read as one row per '{found.get('id')}' with "
                     f"{what} as the event by the approval policy: which transition the model predicts is an "
                     "expert's choice; confirm it on the task card")
    return Check("task_metric", metric == expected, f"{metric} for the time in state {found.get('initial')} until "
                 f"{what}, one row per '{found.get('id')}' (multi-state rows read on the task card)"
                 + ("" if metric == expected else f" (expected {expected})"))


def _ranked(session: Session, metric: str | None, expected: str | None) -> Check:
    """A regression on an ordered target of labels: valid once its levels were ranked in their
    order (rank_levels ran), judged by R² on the ranks."""
    target, ranks = session.task.target, session.task.ranks or {}
    levels = " < ".join(map(str, ranks.get("levels") or []))
    ranked = any(s.status == StepStatus.DONE and s.result.get("function") == "rank_levels" for s in session.plan)
    if not ranked:
        return Check("task_metric", False, f"'{target}' is an ordered score ({levels}) read as a regression, but its "
                     "labels were never ranked: the model has no numbers in their order to learn from")
    return Check("task_metric", metric == expected,
                 f"{metric} for a regression on the ranks of '{target}' ({levels} as 1 to "
                 f"{len(ranks.get('levels') or [])}, written in the cell and replayed on new data): errors count "
                 "how many levels apart a prediction is" + ("" if metric == expected else f" (expected {expected})"))


def _durations_left_out(session: Session) -> str:
    """What was decided about rows whose follow-up time was not positive (the survival setup's
    question), or ""."""
    chosen = {d.id for d in session.decisions if d.decided and d.choice == "leave_out_durations"}
    step = next((st for st in session.plan if st.status == StepStatus.DONE and st.decision_id in chosen), None)
    if step is None:
        return ""
    removed = (step.result.get("report") or {}).get("details", {}).get("rows_removed", 0)
    was = "was" if removed == 1 else "were"
    return f"; {counted(removed, 'row')} whose follow-up time was 0 or less {was} left out, as decided"


def approved_by(session: Session, step: Step) -> str | None:
    """Who approved ``step`` to run, in words (None when nobody did: a step the planner chose,
    with no gate and not touched by the user, may be left out when it fails)."""
    decision = next((d for d in session.decisions if d.id == step.decision_id and d.decided), None)
    if decision is not None and decision.choice != "skip":
        who = {"user": "the user", "agent": "an agent", "policy": "the approval policy"}.get(decision.by or "", "the policy")
        return f"approved by {who}"
    if {"added", "params"} & set(step.by_user):
        return "added by the user" if "added" in step.by_user else "its parameters set by the user"
    return None


def _approved_steps_ran(session: Session) -> Check:
    """A failed approved step counts as run once a later step of its episode on its columns is done."""
    missing = []
    for i, st in enumerate(session.plan):
        who = approved_by(session, st) if st.status == StepStatus.FAILED else None
        if who is None:
            continue
        redone = any(later.status == StepStatus.DONE and later.episode == st.episode and later.columns == st.columns
                     for later in session.plan[i + 1:])
        if not redone:
            missing.append(f"{st.id} '{st.title}' ({who}) failed: {(st.error or st.note or 'no reason given')[:200]}")
    if missing:
        return Check("approved_steps_ran", False, "approved steps did not run: " + "; ".join(missing))
    return Check("approved_steps_ran", True, "every approved step ran")


# the model step's error when every column was taken out (kernel_tools.models.evaluate)
NO_FEATURES = "no usable feature columns left"
NOTHING_TO_FIT = "no valid model could be fitted"


def nothing_to_fit_words(session: Session, step: Step) -> str:
    """Why no model could be fitted, in words: what each step took out, what is left."""
    removed = [(st.title, (st.result.get("report") or {}).get("columns_removed") or []) for st in session.plan
               if st.status == StepStatus.DONE and isinstance(st.result.get("report"), dict)]
    taken = [f"{_names(cols)} ({title})" for title, cols in removed if cols]
    task = session.task
    outcome = [c for c in (task.target, task.time if task.kind == TaskKind.SURVIVAL else None) if c]
    return (f"{NOTHING_TO_FIT}: no feature is left to learn from"
            + (f" — the steps took out {'; '.join(taken)}" if taken else "")
            + (f", and {_names(outcome)} {'is' if len(outcome) == 1 else 'are'} the outcome" if outcome else "")
            + ". With a table this small, keep a column the co-pilot removed (undo its step) only if it is truly "
              "known at prediction time, or collect more columns")


def verdict(checks: list[Check]) -> bool:
    """Valid only when there are checks and every one passed."""
    return bool(checks) and all(c.passed for c in checks)
