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
  interval that a time-varying model uses only from its start on);
- ``task_metric``: the metric fits the task (AUROC, R², C-index);
- ``holdout_confirms_cv``: the held-out score confirms the cross-validated one;
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

from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from kernel_tools.vocabulary import METRIC, FindingKind

from .episodes import Episode, library, stage_of
from .session import Session, Step

# the names of the checks, in the order the verdict lists them
CHECKS = ("model_trained", "diagnosis_complete", "no_identifiers", "no_follow_up", "no_leakage",
          "entities_together", "known_at_index", "task_metric", "holdout_confirms_cv", "test_untouched",
          "no_suspect_score", "approved_steps_ran")
TIMED = ("follow_up", "outcome_derived")
BASELINE_HOWS = ("baseline", "first")
HOLDOUT_FLOOR = {"roc_auc": 0.55, "c_index": 0.55, "r2": 0.0}  # no better than chance...
CV_CLAIM = {"roc_auc": 0.60, "c_index": 0.60, "r2": 0.2}  # ...while cross-validation claims this


@dataclass
class Check:
    """One named check of the verdict, whether it passed, and what it found."""

    check: str
    passed: bool
    detail: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def all_findings(session: Session) -> list[dict[str, Any]]:
    """Every finding the session has seen (the latest diagnosis and those before each step)."""
    findings = list(session.findings)
    for cp in session.checkpoints:
        findings += cp.snapshot.get("findings", [])
    return findings


def _columns(findings: list[dict[str, Any]], test) -> list[str]:
    out: list[str] = []
    for f in findings:
        if f.get("kind") != FindingKind.SUSPECTED_LEAKAGE and test(f):
            out += [c for c in f.get("columns", []) if c not in out]
    return out


def flagged_columns(session: Session) -> dict[str, list[str]]:
    """Columns flagged as identifiers, as recorded after the prediction time, and as leakage."""
    findings = all_findings(session)
    timed = _columns(findings, lambda f: f.get("kind") == "target_leakage"
                     and (f.get("evidence") or {}).get("timing") in TIMED)
    leak = _columns(findings, lambda f: (f.get("kind") == "target_leakage" or f.get("gate") == "leakage")
                    and f.get("kind") != "repeated_measurements")
    ids = _columns(findings, lambda f: f.get("kind") == "id_column")
    entity = session.task.get("id")
    return {"identifiers": [c for c in ids if c != entity], "timed": timed,
            "leakage": [c for c in leak if c not in timed]}


def _names(columns: list[str]) -> str:
    shown = ", ".join(f"'{c}'" for c in columns[:8])
    return shown + (f" and {len(columns) - 8} more" if len(columns) > 8 else "")


def _done(session: Session, episodes: dict[str, Episode], role: Callable[[Episode], bool]) -> Step | None:
    """The last done step of an episode ``role`` picks."""
    return next((st for st in reversed(session.plan) if st.status == "done" and st.episode in episodes
                 and role(episodes[st.episode])), None)


def _aggregation(ep: Episode) -> bool:  # the step that decides how an entity's records become rows
    return ep.gate == "aggregation"


def _split(ep: Episode) -> bool:
    return ep.stage == "split"


def _model(ep: Episode) -> bool:
    return ep.stage == "model"


def _kept_by(session: Session, column: str) -> str:
    """Who left ``column`` in: a decision that kept it, or a step removing it that was skipped."""
    d = next((d for d in session.decisions if column in d.columns and d.choice == "keep"), None)
    if d is not None:
        return f" (kept by decision {d.id.split('-')[0]}, by {d.by})"
    st = next((st for st in session.plan if column in st.columns and st.status == "skipped"), None)
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
    failed = [f for f in session.findings if f.get("kind") == "diagnosis_incomplete"]
    if failed:
        return Check("diagnosis_complete", False, "; ".join(f.get("summary", "") for f in failed)[:600])
    return Check("diagnosis_complete", True, "every detector of the last diagnosis ran")


def _entities_together(session: Session, model: dict[str, Any], episodes: dict[str, Episode]) -> Check:
    repeated = [f for f in all_findings(session) if f.get("kind") == "repeated_measurements"]
    if not repeated:
        return Check("entities_together", True, "no entity has several rows")
    entity = (repeated[-1].get("columns") or [session.task.get("id")])[0]
    aggregate = _done(session, episodes, _aggregation)
    if aggregate is not None and aggregate.result.get("function") == "aggregate_per_entity":
        return Check("entities_together", True, f"one row per '{entity}' (aggregated)")
    split = _done(session, episodes, _split)
    split_kind = str(((split.result.get("report") or {}).get("details") or {}).get("kind", "")) if split else ""
    grouped_split = "grouped" in split_kind or bool(session.hints.get("test_path"))
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
    given = (task.get("index") or {}).get("start") and (
        aggregate is None or aggregate.result.get("function") != "aggregate_per_entity")
    if not made and not given:
        return None
    start = task.get("start") or (task.get("index") or {}).get("start")
    stop = task.get("stop") or task.get("time")
    model_step = _done(session, episodes, _model)
    if model_step is None or model_step.result.get("function") != "fit_evaluate_intervals":
        return Check("known_at_index", False, f"the rows are ('{start}', '{stop}'] intervals, but the model "
                     "did not fit them as intervals: counted from 0, a later interval knows its entity "
                     "survived until its start")
    return Check("known_at_index", True, f"every row is a ('{start}', '{stop}'] interval whose values were "
                 "recorded by its start, and the time-varying model uses each only from then on")


def _known_at_index(session: Session, episodes: dict[str, Episode]) -> Check:
    index = session.task.get("index") or {}
    kind = index.get("kind")
    if kind is None:
        return Check("known_at_index", False, "the prediction time (index) was never established")
    label = index.get("label") or kind
    intervals = _intervals(session, episodes) if session.task.get("kind") == "survival" else None
    if intervals is not None:
        return intervals
    repeated = [f for f in all_findings(session) if f.get("kind") == "repeated_measurements"]
    varying: list[str] = next((f.get("evidence", {}).get("time_varying_columns") for f in reversed(repeated)
                    if f.get("evidence", {}).get("time_varying_columns")), [])
    if kind != "entity_start" or not repeated:
        return Check("known_at_index", True, f"predictions at {label}; the timing of every column "
                     "was checked against it")
    aggregate = _done(session, episodes, _aggregation)
    params = (aggregate.result.get("params") or {}) if aggregate is not None else {}
    if aggregate is None or aggregate.result.get("function") != "aggregate_per_entity":
        if not varying and session.task.get("kind") != "survival":
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


def _holdout_confirms(model: dict[str, Any]) -> Check:
    metric = model.get("metric")
    cv, holdout = model.get("cv_score"), model.get("holdout_score")
    if not isinstance(holdout, (int, float)):
        return Check("holdout_confirms_cv", False, "no holdout score: the model was never scored on held-out rows")
    if not isinstance(cv, (int, float)):
        return Check("holdout_confirms_cv", False, "no cross-validated score to compare the holdout with")
    floor, claim = (HOLDOUT_FLOOR.get(metric), CV_CLAIM.get(metric)) if isinstance(metric, str) else (None, None)
    ci, sd = model.get("holdout_ci"), model.get("cv_sd")
    text = (f"{metric} holdout {holdout:.3f}"
            + (f" [95% interval {ci[0]:.3f}–{ci[1]:.3f}]" if ci and None not in ci else "")
            + f", cross-validated {cv:.3f}" + (f" ± {sd:.3f}" if isinstance(sd, (int, float)) else ""))
    if floor is not None and claim is not None and holdout <= floor and cv >= claim:
        return Check("holdout_confirms_cv", False, f"the holdout does not confirm the model: {text}")
    return Check("holdout_confirms_cv", True, text)


def _test_untouched(session: Session, train_step: Step | None, episodes: dict[str, Episode]) -> Check:
    split = _done(session, episodes, _split)
    if split is None:
        return Check("test_untouched", False, "there is no train/test split")
    split_at = session.plan.index(split)
    custom = [st for st in session.plan[split_at + 1:] if st.status == "done" and st.episode in episodes
              and episodes[st.episode].free_code]
    if custom:
        return Check("test_untouched", False, f"custom code ran after the split ({custom[0].title}): it "
                     "may have used the test rows")
    audit = (train_step.result.get("split_audit") if train_step is not None else None) or {}
    if not audit:
        return Check("test_untouched", False, "the train and test sets could not be compared")
    problems = []
    if audit.get("shared_rows"):
        problems.append(f"{audit['shared_rows']} rows are in both train and test")
    if audit.get("shared_entities"):
        problems.append(f"{audit['shared_entities']} entities are in both train and test")
    split_test = ((split.result.get("report") or {}).get("details") or {}).get("test_rows")
    if isinstance(split_test, int) and isinstance(audit.get("test_rows"), int) and audit["test_rows"] < split_test:
        problems.append(f"test rows were removed after the split ({split_test} → {audit['test_rows']}): "
                        "the holdout no longer stands for new data")
    if problems:
        return Check("test_untouched", False, "; ".join(problems))
    fitted = [st.title for st in session.plan[split_at + 1:] if st.status == "done" and st.result.get("var")
              and stage_of(episodes, st.episode) not in ("model", "final")]
    return Check("test_untouched", True, f"train {audit.get('train_rows')} and test {audit.get('test_rows')} "
                 "rows share no row" + (" or entity" if audit.get("groups") else "")
                 + (f"; {len(fitted)} step(s) fitted on train only and replayed on test" if fitted else ""))


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
        return [Check("model_trained", False, "no model was trained"), *checks]
    features = set(model.get("features") or [])
    flagged = flagged_columns(session)
    entity = session.task.get("id")
    ids = flagged["identifiers"] + ([entity] if entity and entity in features else [])
    checks = [
        Check("model_trained", True, f"{model.get('model_name') or 'a model'} on "
              f"{len(features)} features"),
        *checks,
        _features_check("no_identifiers", features, ids, "identifiers",
                        "no column was found to be an identifier", session),
        _features_check("no_follow_up", features, flagged["timed"],
                        "columns recorded after the prediction time",
                        "no column was found to be recorded after the prediction time", session),
        _features_check("no_leakage", features, flagged["leakage"], "columns flagged as giving the outcome away",
                        "no column was found to give the outcome away", session),
        _entities_together(session, model, episodes),
        _known_at_index(session, episodes),
        _task_metric(session, model),
        _holdout_confirms(model),
        _test_untouched(session, train_step, episodes),
        _suspect_score(session, model),
        _approved_steps_ran(session),
    ]
    return checks


def _task_metric(session: Session, model: dict[str, Any]) -> Check:
    kind = session.task.get("kind")
    expected = METRIC.get(kind) if kind is not None else None
    target = session.task.get("target")
    # a status of several codes next to a follow-up time (alive / died of X / died of Y) is an
    # event type with censoring: which class a row is in depends on how long it was followed
    censored = [f for f in all_findings(session) if kind == "classification" and f.get("kind") == "target_leakage"
                and (f.get("evidence") or {}).get("follow_up_time") and (f.get("evidence") or {}).get("classes", 0) >= 3]
    if censored:
        time = (censored[0].get("columns") or ["?"])[0]
        return Check("task_metric", False, f"'{target}' has {censored[0]['evidence']['classes']} codes next to the "
                     f"follow-up time '{time}': event types with censoring (competing risks), so the task is "
                     "survival (c_index) with the event of interest chosen; a classifier ignores how long each "
                     "row was followed")
    metric = model.get("metric")
    setup = next((f for f in session.findings if f.get("kind") == "survival_setup"), None)
    evidence = (setup or {}).get("evidence") or {}
    bad = int(evidence.get("negative_durations") or 0) + int(evidence.get("zero_durations") or 0)
    if kind == "survival" and bad:  # the last diagnosis, of the rows the model learned from
        return Check("task_metric", False, f"{bad} durations in '{evidence.get('duration')}' are not positive "
                     f"({evidence.get('negative_durations')} negative, {evidence.get('zero_durations')} zero): "
                     "a survival time must be, so the survival model and its C-index are not valid")
    return Check("task_metric", metric == expected and expected is not None,
                 f"{metric} for a {kind} task" + ("" if metric == expected else f" (expected {expected})"))


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
        who = approved_by(session, st) if st.status == "failed" else None
        if who is None:
            continue
        redone = any(later.status == "done" and later.episode == st.episode and later.columns == st.columns
                     for later in session.plan[i + 1:])
        if not redone:
            missing.append(f"{st.id} '{st.title}' ({who}) failed: {(st.error or st.note or 'no reason given')[:200]}")
    if missing:
        return Check("approved_steps_ran", False, "approved steps did not run: " + "; ".join(missing))
    return Check("approved_steps_ran", True, "every approved step ran")


def verdict(checks: list[Check]) -> bool:
    """Valid only when there are checks and every one passed."""
    return bool(checks) and all(c.passed for c in checks)
