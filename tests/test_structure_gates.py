"""The structure a run rests on, engine side (issue 26): the verdict's ``structure_confirmed``,
the questions that ask uncertain inferences with their alternatives ranked, a person's answers and
moves on the column timeline, and the decisions file's timeline form."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest

from jupyter_dcpilot.engine import gatekeeping, structure_cards
from jupyter_dcpilot.engine.episodes import library
from jupyter_dcpilot.engine.observation import observe
from jupyter_dcpilot.engine.session import Decision, Session, Step
from jupyter_dcpilot.engine.structure import (
    FROM_FILE,
    Structure,
    apply_file_timeline,
    confirmations,
    moved,
    timeline_group,
    unconfirmed,
)
from jupyter_dcpilot.engine.structure_cards import inferences_view
from jupyter_dcpilot.engine.task import Task
from jupyter_dcpilot.engine.validity import audit
from kernel_tools.inferences import Alternative, ColumnTimeline, Inference, Placement, TimelineColumn
from kernel_tools.vocabulary import Chart

INDEX_FIRST = {"kind": "entity_start", "label": "each entity's first record"}
NAMED = Placement("during_follow_up", "names", "name_time", "its name says days after the index", strong=False)


def structure(entity: str = "high") -> Structure:
    """A survival table's structure: the entity as sure as asked, a timeline with one column a
    name places during follow-up (weak: low confidence) and two plain baseline columns."""
    timeline = ColumnTimeline({"age": TimelineColumn("age", "baseline", "high"),
                               "bili": TimelineColumn("bili", "baseline", "high"),
                               "bili_day7": TimelineColumn("bili_day7", "during_follow_up", "low", (NAMED,))},
                              "each entity's first record")
    alternatives = [Alternative("centre", ["repeats, whole numbers"], 0.4), Alternative(None, ["no entity"], 0.1)]
    return Structure([Inference("task", "survival", "high"),
                      Inference("entity", "id", entity, ["'id' repeats: 2.1 rows each"], alternatives),
                      Inference("index", "each entity's first record", "high")], timeline)


def session(s: Structure, features=("age", "bili")) -> Session:
    out = Session(task=Task(kind="survival", target="status", time="futime", id="id", index=INDEX_FIRST),
                  diagnosis={"shape": [312, 18]}, structure=s, variables={"columns": ["id", "age", "bili", "bili_day7",
                                                                                      "status", "futime"]})
    model = {"model_name": "CoxPH", "metric": "c_index", "cv_score": 0.72, "holdout_score": 0.70,
             "cv_scores": [0.7, 0.72, 0.74], "features": list(features), "grouped": True, "warnings": [], "importance": []}
    out.plan = [Step(id="s1", episode="aggregate", title="aggregate", status="done", function="aggregate_per_entity",
                     params={"how": "baseline"}),
                Step(id="s2", episode="split", title="split", status="done", function="split",
                     result={"report": {"details": {"kind": "grouped", "test_rows": 62}}}),
                Step(id="s3", episode="train_evaluate", title="train", status="done", function="fit_evaluate",
                     result={"report": model, "split_audit": {"train_rows": 250, "test_rows": 62, "shared_rows": 0,
                                                              "shared_entities": 0}})]
    return out


def check(s: Session, name: str = "structure_confirmed"):
    return next(c for c in audit(s) if c.check == name)


def test_a_plain_structure_passes_and_an_uncertain_entity_fails_in_words():
    assert check(session(structure())).passed
    c = check(session(structure(entity="low")))
    assert not c.passed
    assert "the entity: id — 'id' repeats: 2.1 rows each — or centre, none?" in c.detail
    assert "the task card" in c.detail and "1 structural choice" in c.detail


def test_no_recorded_inference_is_a_check_that_could_not_run():
    c = check(session(Structure()))
    assert not c.passed and "could not be checked" in c.detail


def task_decision(s: Session, choice: str, by: str, via: str, rationale: str) -> Decision:
    step = Step(id="s0", episode="confirm_task", title="task", gate="task")
    s.plan.insert(0, step)
    d = gatekeeping.new_decision(s, step, library()["confirm_task"])
    s.decide(d.id, choice, rationale, by=by, via=via)  # type: ignore[arg-type]
    step.status = "done"
    return d


def test_the_policy_confirms_nothing_a_person_and_a_file_naming_the_answer_do():
    s = session(structure(entity="low"))
    d = task_decision(s, "confirm", "policy", "approval policy", "recommended option (--approve recommended)")
    assert [i["id"] for i in d.inferences] == ["task", "entity", "index"]
    assert not check(s).passed
    s = session(structure(entity="low"))
    task_decision(s, "confirm", "policy", "decisions file", "recommended option (decisions file)")
    assert not check(s).passed
    s = session(structure(entity="low"))
    task_decision(s, "confirm", "policy", "decisions file", FROM_FILE)
    assert check(s).passed
    s = session(structure(entity="low"))
    task_decision(s, "confirm", "user", "panel", "")
    c = check(s)
    assert c.passed and "(task, entity, index by the user in the panel)" in c.detail


def test_a_file_whose_star_is_recommended_answers_as_the_policy():
    policy = gatekeeping.ApprovalPolicy.from_spec({"*": "recommended"})
    s = session(structure(entity="low"))
    step = Step(id="s0", episode="confirm_task", title="task", gate="task")
    d = gatekeeping.new_decision(s, step, library()["confirm_task"])
    choice, rationale = policy.choose(d)
    assert choice == "confirm" and rationale != FROM_FILE


def test_the_task_card_asks_an_uncertain_entity_with_its_candidates_ranked():
    s = session(structure(entity="low"))
    q = structure_cards.task_card(s.task, s.structure)
    ids = [o.id for o in q.options]
    assert ids[0] == "confirm" and "confirms what is uncertain: the entity: id" in q.options[0].risk
    assert ids.index("entity:centre") < ids.index("entity:none")
    assert q.question.startswith("Is this the task? A survival task: predict the time to the event in 'status'. The "
                                 "survival time is 'futime'. Each 'id' is one entity. "
                                 "Predictions are made at each entity's first record.")
    # the guess said once, then what was seen and each alternative with its own evidence
    assert q.question.endswith("Unsure of the entity: 'id' repeats: 2.1 rows each. Or centre: repeats, whole "
                               "numbers; or none: no entity?")
    # an answer there re-diagnoses with the entity the expert named, or none
    assert s.task.answer("entity:none") and s.task.id is None and s.task.diagnosis_args()["id"] == ""
    # a sure entity offers no entity options
    plain = session(structure())
    assert not any(o.id.startswith("entity:") for o in structure_cards.task_card(plain.task, plain.structure).options)


def test_a_low_timing_of_a_feature_is_named_and_a_move_confirms_it():
    s = session(structure(), features=("age", "bili", "bili_day7"))
    c = check(s)
    assert not c.passed and "the timing of 'bili_day7': during follow up" in c.detail and "column timeline" in c.detail
    assert [i.id for i in unconfirmed(s, {"age", "bili_day7"})] == ["timing:bili_day7"]
    move = s.structure.move("bili_day7", "baseline", "panel", "now", "measured at enrolment")
    moved(s, move)
    assert check(s).passed and check(s, "known_at_index").passed
    assert s.structure.card().columns["bili_day7"].confidence == "given"


def test_a_column_a_person_places_after_the_index_fails_known_at_index_and_is_asked_to_drop():
    s = session(structure(), features=("age", "bili"))
    moved(s, s.structure.move("bili", "follow-up", "chat", "now", "measured on day 30"))
    c = check(s, "known_at_index")
    assert not c.passed and "'bili' (during follow up, moved by the user (chat))" in c.detail
    (finding,) = [f for f in s.findings if f.evidence.get("source") == "timeline"]
    assert finding.columns == ["bili"] and finding.evidence["timing"] == "follow_up" and finding.gate == "leakage"
    assert [o.id for o in finding.options] == ["drop", "keep"] and finding.options[0].recommended
    assert any(e["kind"] == "timeline" for e in s.transcript)
    assert finding.chart == Chart.LEAKAGE  # said by the engine: drawn without loading the detectors


def test_timeline_words_and_bad_moves_say_what_is_wrong():
    assert timeline_group("Follow-up") == "during_follow_up" and timeline_group("outcome") == "at_or_after_outcome"
    with pytest.raises(ValueError, match="not a place on the timeline"):
        timeline_group("later")
    s = structure()
    with pytest.raises(KeyError, match="did you mean 'bili'"):
        s.move("bilu", "baseline", "panel", "now")


def test_an_answer_confirms_the_inferred_value_or_names_the_task_cards_choice():
    s = session(structure(entity="low"))
    assert s.structure.answer("entity", "id", "panel", "now") is None
    view = {i["id"]: i for i in inferences_view(s)}
    assert view["entity"]["confidence"] == "given" and view["entity"]["evidence"][0].startswith("Confirmed by the user")
    assert check(s).passed
    assert s.structure.answer("entity", None, "panel", "now") == "entity:none"
    assert {i["id"]: i for i in inferences_view(s)}["entity"]["value"] is None
    with pytest.raises(ValueError, match="say one of"):
        s.structure.answer("entity", "age", "panel", "now")
    with pytest.raises(KeyError, match="no structural inference"):
        s.structure.answer("join_key:a+b", "id", "panel", "now")
    assert s.structure.answer("timing:bili_day7", "baseline", "panel", "now") is None
    # an agent's answer is a proposal: it confirms nothing
    agent = session(structure(entity="low"))
    agent.structure.answer("entity", "id", "agent claude", "now")
    assert not check(agent).passed


def test_the_structure_survives_the_sidecar():
    s = session(structure(entity="low"))
    s.structure.answer("entity", "id", "panel", "now", "a patient number")
    s.structure.move("bili_day7", "baseline", "magic", "now")
    back = Session.from_dict(s.to_dict())
    assert back.structure.to_dict() == s.structure.to_dict()
    assert check(back).passed


def test_a_decisions_files_timeline_moves_columns_once_and_warns_of_unknown_ones():
    s = session(structure(), features=("age", "bili"))
    policy = gatekeeping.ApprovalPolicy.from_spec({"*": "recommended", "timeline": {"bili": "follow_up",
                                                                                   "nosuch": "baseline"}})
    apply_file_timeline(s, policy.choices.get("timeline"))
    apply_file_timeline(s, policy.choices.get("timeline"))
    assert [(m.column, m.group, m.via) for m in s.structure.moves] == [("bili", "during_follow_up", "decisions file")]
    assert any("'nosuch' is not on the column timeline" in w for w in s.warnings)
    assert not check(s, "known_at_index").passed
    with pytest.raises(ValueError, match="timeline"):
        gatekeeping.ApprovalPolicy.from_spec({"timeline": {"bili": "later"}})


def test_observe_keeps_a_persons_late_column_as_a_finding_after_a_new_diagnosis():
    from engine_fakes import FakeKernel, churn_diagnosis

    from jupyter_dcpilot.engine.budgets import Budgets
    from jupyter_dcpilot.engine.kernel_calls import KernelCalls

    s = Session(frame="df", structure=Structure(timeline=ColumnTimeline(
        {"income": TimelineColumn("income", "baseline", "high")})))
    s.structure.move("income", "during_follow_up", "panel", "now")
    kernel = FakeKernel(churn_diagnosis())
    asyncio.run(observe(s, KernelCalls(kernel), library(), budgets=Budgets()))
    assert [f.columns for f in s.findings if f.evidence.get("source") == "timeline"] == [["income"]]
    assert {i.what for i in s.structure.inferences} == {"task", "entity", "index"}


def test_an_uncertain_join_key_makes_the_join_a_question_that_confirms_it():
    from jupyter_dcpilot.engine.planners import RulePlanner
    from kernel_tools.findings import Finding, Option

    s = Session(task=Task(kind="regression", target="y"), structure=Structure([
        Inference("join_key", "pid", "low", ["80% of 'a' rows match"], [Alternative("rownames", ["row numbers"], 1.0)],
                  subject="a+b")]))
    s.inputs.frames = ["a", "b"]
    s.findings = [Finding("join_keys", ["pid"], "warning", "pid joins a and b", options=[
        Option("join_left", "Join", "", "", True, {"function": "join_frames", "params": {"on": "pid"}}),
        Option("keep", "Keep separate", "", "", False, None)], gate="join")]
    (join,) = [st for st in RulePlanner(library()).propose(s) if st.episode == "join_files"]
    assert join.gate == "join"
    s.plan = [replace(join, id="s1")]
    d = gatekeeping.new_decision(s, s.plan[0], library()["join_files"])
    assert [i["id"] for i in d.inferences] == ["join_key:a+b"]
    assert not check(session_with(s.structure)).passed
    s.decide(d.id, "join_left", "", by="user", via="panel")
    assert "join_key:a+b" in confirmations(s)


def session_with(s: Structure) -> Session:
    return session(Structure([*structure().inferences, *s.inferences], structure().timeline))


def grouping_session(columns=("id", "age", "bili", "status", "futime", "case_id")) -> tuple[Session, Decision]:
    """A survival table with a matched-set id the diagnosis asks about (drop recommended), its
    question opened on the identifiers gate."""
    from jupyter_dcpilot.engine.planners import RulePlanner
    from kernel_tools.diagnosis.groupings import _finding, _question

    evidence = {"groups": 40, "rows": 150, "rows_per_group_mean": 3.75, "rows_per_group_max": 4,
                "share_rows_in_shared_groups": 1.0, "missing": 6, "subject_id": "id"}
    s = session(Structure([*structure().inferences, _question("case_id", evidence)], structure().timeline))
    s.variables["columns"] = list(columns)
    s.findings = [_finding("case_id", evidence)]
    done, s.plan = s.plan, []
    (step,) = [st for st in RulePlanner(library()).propose(s) if st.episode == "grouping_columns"]
    s.plan = done
    assert step.gate == "identifiers" and step.columns == ["case_id"]
    s.plan = [replace(step, id="s9"), *s.plan]
    return s, gatekeeping.new_decision(s, s.plan[0], library()["grouping_columns"])


def test_a_grouping_column_is_a_structural_question_the_policy_does_not_confirm():
    s, d = grouping_session()
    assert [i["id"] for i in d.inferences] == ["grouping:case_id"] and d.recommended == "drop"
    assert [o.id for o in d.options] == ["drop", "group", "keep"]
    s.decide(d.id, "drop", "recommended option (--approve recommended)", by="policy", via="approval policy")
    c = check(s)
    assert not c.passed and "the use of 'case_id': drop" in c.detail and "the identifiers' questions" in c.detail
    s, d = grouping_session()
    s.decide(d.id, "group", "", by="user", via="panel")
    assert check(s).passed and "grouping:case_id" in confirmations(s)
    # the task card neither asks it nor confirms it
    assert not any("case_id" in o.id for o in structure_cards.task_card(s.task, s.structure).options)


def test_grouping_by_a_column_the_expert_chose_groups_the_split_and_the_folds():
    from jupyter_dcpilot.engine.worker import Worker

    s, d = grouping_session()
    s.task.id = None  # each row its own subject: nothing else groups the split
    worker = Worker(s, None, None, library())  # type: ignore[arg-type]
    assert worker.chosen_groups() is None
    assert "groups" not in worker._split_code("split_report", {})[0]
    s.decide(d.id, "group", "", by="user", via="panel")
    assert worker.chosen_groups() == "case_id"
    assert "groups='case_id', missing_ids='own'" in worker._split_code("split_report", {})[0]
    assert "groups='case_id'" in worker._model_code({})[0]
    s.variables["columns"] = ["id", "age", "bili", "status", "futime"]  # dropped since: nothing to group by
    assert worker.chosen_groups() is None
