"""The coordinator's parts on their own (plan_merge, gatekeeping, history, model_audit, the
worker's cell): they read what an episode does from its entry, never from its id, so an
episode under another name behaves the same."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest

from jupyter_dcpilot.engine import gatekeeping, history, model_audit, plan_merge
from jupyter_dcpilot.engine.episodes import library
from jupyter_dcpilot.engine.planners import PlanUpdate
from jupyter_dcpilot.engine.session import Session, Step
from jupyter_dcpilot.engine.structure import Structure
from jupyter_dcpilot.engine.task import Inputs, Task
from jupyter_dcpilot.engine.worker import Worker
from kernel_tools.findings import Finding, Option
from kernel_tools.inferences import Inference


def renamed(episodes, old, new, **changes):
    """The library with one episode under another id (and other fields changed)."""
    out = {k: v for k, v in episodes.items() if k != old}
    out[new] = replace(episodes[old], id=new, **changes)
    return out


def test_a_planner_revision_keeps_ids_decisions_and_what_only_the_expert_drops():
    episodes = renamed(library(), "custom", "free_code")  # only_expert_drops travels with the entry
    s = Session(task=Task(kind="classification", target="y"))
    kept = Step(id="s1", episode="free_code", title="my code", code="df = df", gate="custom_code")
    impute = Step(id="s2", episode="impute", title="Impute", finding_ids=["missing:a"], decision_id="d1")
    stale = Step(id="s3", episode="outliers", title="Outliers", finding_ids=["outliers:b"])
    s.plan, s.counter = [kept, impute, stale], 3
    again = Step(id="", episode="impute", title="Impute (reworded)", finding_ids=["missing:a"])
    split = Step(id="", episode="split", title="Split")
    plan_merge.merge(s, PlanUpdate(steps=[again, split], observation="two steps"), episodes)
    assert [st.id for st in s.plan][:2] == ["s1", "s2"]  # kept first, the same impute step
    assert s.plan[1] is impute and impute.title == "Impute"  # decided: its wording stays
    assert "s3" not in [st.id for st in s.plan] and split.id == "s4"
    assert s.variables["observation"] == "two steps"


def test_the_task_card_is_asked_by_an_episode_whose_answer_is_the_task_whatever_its_id():
    episodes = renamed(library(), "confirm_task", "check_task")
    s = Session(task=Task(kind="regression", target="y", time="t", id="pid"))
    step = Step(id="s1", episode="check_task", title="Task", gate="task")
    decision = gatekeeping.new_decision(s, step, episodes["check_task"])
    ids = [o.id for o in decision.options]
    assert ids[0] == "confirm" and {"classification", "survival", "index:first", "index:row"} <= set(ids)
    assert step.decision_id == decision.id and s.decisions == [decision]
    assert decision.rejects is None  # confirmed or corrected, never rejected ("Reject (It is classification)")
    gatekeeping.apply_task_answer(s, "index:row")
    assert s.task.given.index == "row" and s.diagnosed_version == -1 and s.task.confirmed
    assert s.task.diagnosis_args()["index"] == "row"  # the user's word, told to the next diagnosis


def test_a_policy_answers_and_a_reopened_decision_waits_for_the_expert():
    s = Session(findings=[Finding("missing_values", ["a"], "warning", "a is missing", {}, [
        Option("impute", "Impute", "", "", True, {"function": "impute", "params": {}}),
        Option("keep", "Keep", "", "")], "imputation")])
    step = Step(id="s1", episode="impute", title="Impute", gate="imputation", finding_ids=["missing_values:a"])
    s.plan = [step]
    decision = gatekeeping.new_decision(s, step, library()["impute"])
    assert decision.rejects == "keep"  # the option that changes nothing declines the step
    policy = gatekeeping.ApprovalPolicy(mode="recommended")
    assert asyncio.run(gatekeeping.answer(s, step, decision, policy)) and decision.choice == "impute"
    decision.reopen("undone by the user")
    assert not asyncio.run(gatekeeping.answer(s, step, decision, policy))
    assert step.status == "awaiting_decision" and not decision.decided


def test_the_model_report_is_the_last_done_step_of_the_model_stage():
    episodes = renamed(library(), "train_evaluate", "fit_model")
    s = Session()
    s.plan = [Step(id="s1", episode="fit_model", title="m", status="done", result={"report": {"metric": "a"}}),
              Step(id="s2", episode="fit_model", title="m", status="failed", result={"report": {"metric": "b"}}),
              Step(id="s3", episode="fit_model", title="m", status="done", result={"report": {"metric": "c"}}),
              Step(id="s4", episode="explain", title="e", status="done", result={"report": {"metric": "d"}})]
    assert model_audit.model_report(s, episodes) == {"metric": "c"}
    assert model_audit.model_report(s, library()) is None  # no episode of that id in the model stage


def test_a_backtrack_request_takes_the_experts_rejection_first():
    s = Session()
    done = Step(id="s1", episode="impute", title="Impute", status="done", checkpoint_id="c1")
    s.plan = [done]
    s.rejections = [{"step_id": "s1", "reason": "wrong method"}]
    update = PlanUpdate(steps=[], backtrack={"step_id": "s1", "reason": "planner"})
    assert history.backtrack_request(s, update, 3) == (done, "the expert rejected the result: wrong method")
    assert history.backtrack_request(s, update, 3) == (done, "rules planner: planner")
    assert history.backtrack_request(s, update, 0) is None  # no backtracks left


def test_an_episode_without_a_call_runs_its_own_cell_whatever_its_id():
    episodes = renamed(library(), "explain", "importance", source="model.importance[:3]")
    s = Session(task=Task(kind="classification", target="y"), variables={"imports": True})
    step = Step(id="s1", episode="importance", title="Importance")
    source = Worker(s, None, None, episodes).code(step, None, {})  # type: ignore[arg-type]
    assert source is not None and source.splitlines()[-1] == "model.importance[:3]"


def test_the_rules_planner_joins_several_files_with_the_episode_that_combines_frames():
    from jupyter_dcpilot.engine.planners import RulePlanner

    episodes = renamed(library(), "join_files", "merge_inputs")
    s = Session(task=Task(kind="regression", target="y"), inputs=Inputs(frames=["a", "b"]))
    s.findings = [Finding("join_keys", ["pid"], "info", "pid joins a and b", options=[
        Option("join", "Join", "", "", True, {"function": "join_frames", "params": {"on": "pid"}})])]
    steps = RulePlanner(episodes).propose(s)
    join = [st for st in steps if st.episode == "merge_inputs"]
    assert len(join) == 1 and join[0].finding_ids == ["join_keys:pid"] and join[0].params["on"] == "pid"
    s.plan = [replace(join[0], id="s1", status="done")]
    assert not [st for st in RulePlanner(episodes).propose(s) if st.episode == "merge_inputs"]


def _done(id_, episode, function=None, **result):
    return Step(id=id_, episode=episode, title=episode, status="done", result={"function": function, **result})


def test_the_verdict_finds_the_aggregation_split_model_and_custom_steps_whatever_their_ids():
    from jupyter_dcpilot.engine.validity import audit, verdict

    episodes = renamed(renamed(renamed(renamed(library(), "aggregate", "one_row_each"), "split", "hold_out"),
                               "train_evaluate", "fit_model"), "custom", "free_code")
    model = {"model_name": "CoxPH", "metric": "c_index", "cv_score": 0.72, "holdout_score": 0.70,
             "cv_scores": [0.7, 0.72, 0.74], "features": ["age"], "grouped": True, "warnings": [], "importance": []}
    s = Session(task=Task(kind="survival", target="status", time="futime", id="id",
                          index={"kind": "entity_start", "label": "each entity's first record"}),
                diagnosis={"shape": [312, 18]},
                structure=Structure([Inference("task", "survival", "high"), Inference("entity", "id", "high"),
                                     Inference("index", "each entity's first record", "high")]))
    s.findings = [Finding("repeated_measurements", ["id", "day"], "critical", "",
                          {"time_varying_columns": ["age"]})]
    s.plan = [_done("s1", "one_row_each", "aggregate_per_entity", params={"how": "baseline"}),
              _done("s2", "hold_out", "split", report={"details": {"kind": "grouped", "test_rows": 62}}),
              _done("s3", "fit_model", "fit_evaluate", report=model,
                    split_audit={"train_rows": 250, "test_rows": 62, "shared_rows": 0, "shared_entities": 0})]
    checks = audit(s, episodes=episodes)
    assert verdict(checks), [c for c in checks if not c.passed]
    assert not verdict(audit(s))  # the built-in library knows none of these ids: no model, no split
    s.plan.insert(2, Step(id="s4", episode="free_code", title="my code", status="done", code="df = df"))
    untouched = {c.check: c for c in audit(s, episodes=episodes)}["test_untouched"]
    assert not untouched.passed and "custom code ran after the split" in untouched.detail


def test_plan_edits_read_required_addable_and_params_from_the_entry_whatever_its_id():
    from jupyter_dcpilot.engine import plan_edits

    episodes = renamed(renamed(renamed(library(), "split", "hold_out"), "outliers", "extremes"),
                       "remove_leakage", "drop_leaks")
    s = Session(task=Task(kind="classification", target="y"), variables={"columns": ["a", "y"]})
    s.plan = [Step(id="s1", episode="hold_out", title="Split"), Step(id="s2", episode="extremes", title="Out")]
    with pytest.raises(plan_edits.EditRefused, match="a valid model needs it"):
        plan_edits.check(s, {"op": "skip", "step": "s1"}, episodes)
    plan_edits.check(s, {"op": "params", "step": "s1", "params": {"test_size": 0.3}}, episodes)
    plan_edits.check(s, {"op": "params", "step": "s2", "params": {"method": "mad", "threshold": 3}}, episodes)
    assert plan_edits.parse_pairs("extremes", ["threshold=3", "columns=a"], episodes) == {
        "threshold": 3, "columns": ["a"]}
    with pytest.raises(ValueError, match="needs 'columns'"):
        plan_edits.check(s, {"op": "add", "episode": "drop_leaks"}, episodes)
    with pytest.raises(ValueError, match="is the target"):
        plan_edits.check(s, {"op": "add", "episode": "drop_leaks", "columns": ["y"]}, episodes)
    listed = {e["id"]: e for e in plan_edits.library(s, renamed(episodes, "report", "summary"))}
    assert listed["extremes"]["params"]["threshold"]["kind"] == "number"
    assert listed["summary"]["why_not"] == "the report is always the last step"
    assert listed["hold_out"]["required"] and not listed["extremes"]["required"]  # the panel reads it
    with pytest.raises(ValueError, match="cannot be skipped"):
        plan_edits.check_standing([{"op": "skip", "episode": "hold_out"}], episodes, "plan.json")


def test_default_budgets_are_the_episodes_own_whatever_their_ids():
    from jupyter_dcpilot.engine.budgets import Budgets

    episodes = renamed(library(), "train_evaluate", "fit_model")
    budgets = Budgets.from_spec(None, episodes=episodes)
    assert budgets.of("fit_model") == library()["train_evaluate"].budget == 300.0
    assert budgets.of("split") == budgets.of("*") == 60.0  # an episode without its own budget
    assert Budgets.from_spec({"fit_model": 900}, episodes=episodes).of("fit_model") == 900
    with pytest.raises(ValueError, match="not a kind of step"):
        Budgets.from_spec({"train_evaluate": 900}, episodes=episodes)
