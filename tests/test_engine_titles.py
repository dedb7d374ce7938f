"""A step's title says what the step does: once its question is answered, the chosen option's
words (with the columns it acts on), not the episode's name; asked again, the plan's title."""

from __future__ import annotations

import pytest

from jupyter_dcpilot.engine import alike, history
from jupyter_dcpilot.engine.session import Decision, Session, Step, answered_title, encode
from jupyter_dcpilot.engine.task import Task
from jupyter_dcpilot.engine.wire import DecisionOption

OPTIONS = [DecisionOption(id="drop_empty_intervals", label="Keep the intervals, leave out those that span no time",
                          description="", risk="", action={"function": "drop_empty_intervals", "params": {}}),
           DecisionOption(id="keep", label="Keep rows, group by entity", description="", risk=""),
           DecisionOption(id="drop", label="Drop id", description="", risk="", action={"function": "drop_columns", "params": {}})]


def asked(gate: str = "aggregation") -> tuple[Session, Step, Decision]:
    s = Session(task=Task(kind="survival", target="status", time="stop", confirmed=True))
    step = Step(id="s4", episode="aggregate", title="Aggregate repeated measurements: id, start", gate=gate,
                columns=["id", "start"], status="awaiting_decision")
    decision = Decision(id="d1-abc", step_id="s4", gate=gate, question="?", options=list(OPTIONS),
                        recommended="keep", columns=["id", "start"])
    step.decision_id = decision.id
    s.plan, s.decisions = [step], [decision]
    return s, step, decision


@pytest.mark.parametrize(("choice", "title"), [
    ("keep", "Keep rows, group by entity: id, start"),
    ("drop_empty_intervals", "Keep the intervals, leave out those that span no time: id, start"),
    ("drop", "Drop id"),  # the label names a column: not again
    ("skip", "Aggregate repeated measurements: id, start"),  # a skipped step is the plan's, marked skipped
])
def test_an_answer_titles_its_step_by_what_it_does(choice, title):
    s, step, decision = asked()
    s.decide(decision.id, choice, by="policy")
    assert step.title == title


def test_a_question_asked_again_titles_its_step_by_the_plan_and_the_new_answer_by_itself():
    s, step, decision = asked()
    s.decide(decision.id, "keep", by="user")
    history.reset(s, step, "the model failed", ask_user=True)
    assert step.title == "Aggregate repeated measurements: id, start"
    s.decide(decision.id, "drop_empty_intervals", by="user")
    assert step.title == "Keep the intervals, leave out those that span no time: id, start"
    again = Step.from_dict(encode(step))  # kept in the sidecar: a restarted server asks with the plan's title
    assert (again.title, again.planned_title) == (step.title, "Aggregate repeated measurements: id, start")


def test_the_task_card_keeps_its_title():
    s, step, decision = asked(gate="task")
    step.title = "Confirm task and target"
    s.decide(decision.id, "keep", by="user")
    assert step.title == "Confirm task and target"


def test_a_column_is_named_as_a_word_not_as_part_of_one():
    assert answered_title("Keep as is", "Remove leakage: a", ["a"]) == "Keep as is: a"  # not the 'a' of "as"
    assert answered_title("Drop 'visit'", "Remove leakage: visit", ["visit"]) == "Drop 'visit'"


def test_a_group_of_columns_is_not_listed_where_the_plan_did_not_list_it():
    columns = [f"sparse_{i}" for i in range(25)]
    assert answered_title("Drop 25 columns", "Drop 25 mostly-missing columns", columns) == "Drop 25 columns"


def leakage_step(reason: str, function: str = "drop_columns", planned: str = "Remove leakage: leak",
                 gate: str = "leakage") -> tuple[Session, Step, Decision]:
    """A gated drop as the rule planner makes it: the step's function is its recommended call's."""
    s = Session(task=Task(kind="classification", target="y", confirmed=True))
    step = Step(id="s3", episode="remove_leakage", title=planned, gate=gate, columns=["leak"],
                function=function, status="awaiting_decision")
    drop = DecisionOption(id="drop", label="Drop leak", description="", risk="",
                          action={"function": "drop_columns", "params": {"columns": ["leak"], "reason": reason}})
    keep = DecisionOption(id="keep", label="Keep as is", description="", risk="")
    impute = DecisionOption(id="impute_auto", label="Impute (model-based) + indicators", description="", risk="",
                            action={"function": "impute", "params": {"columns": ["leak"], "reason": "gaps"}})
    decision = Decision(id="d3-abc", step_id="s3", gate=gate, question="?", options=[drop, keep, impute],
                        recommended="drop", columns=["leak"])
    step.decision_id = decision.id
    s.plan, s.decisions = [step], [decision]
    return s, step, decision


@pytest.mark.parametrize(("reason", "title"), [
    ("may give the outcome away", "Drop leak (may give the outcome away)"),
    ("recorded after the prediction time", "Drop leak (recorded after the prediction time)"),
])
def test_a_drop_answered_as_the_plan_proposed_keeps_its_reason_in_the_title(reason, title):
    s, step, decision = leakage_step(reason)
    s.decide(decision.id, "drop", by="user")
    assert step.title == title
    history.reset(s, step, "the model failed", ask_user=True)  # asked again: the plan's title
    assert step.title == "Remove leakage: leak"


def test_another_answer_says_no_reason_it_does_not_act_on():
    s, step, decision = leakage_step("may give the outcome away")
    s.decide(decision.id, "keep", by="user")
    assert step.title == "Keep as is: leak"


def test_a_drop_answered_where_the_plan_proposed_imputing_says_what_it_drops_and_nothing_of_imputing():
    s, step, decision = leakage_step("mostly missing", function="impute", planned="Impute missing values: leak",
                                     gate="imputation")
    s.decide(decision.id, "drop", by="user")
    assert step.title == "Drop leak"
    # planned as a drop (the recommended call of a mostly-missing column): its reason, still no 'Impute'
    s, step, decision = leakage_step("mostly missing", planned="Impute missing values: leak", gate="imputation")
    s.decide(decision.id, "drop", by="user")
    assert step.title == "Drop leak (mostly missing)"
    # and the imputation answered to it does not take the drop's reason
    s, step, decision = leakage_step("mostly missing", planned="Impute missing values: leak", gate="imputation")
    s.decide(decision.id, "impute_auto", by="user")
    assert step.title == "Impute (model-based) + indicators: leak"


def test_a_reason_the_label_already_says_is_not_said_twice():
    assert answered_title("Drop 25 mostly-missing columns", "Drop 25 mostly-missing columns", [],
                          "mostly missing") == "Drop 25 mostly-missing columns"
    assert answered_title("Drop 3 columns (may give the outcome away)", "Drop 3 columns (may give the outcome away)",
                          [], "may give the outcome away") == "Drop 3 columns (may give the outcome away)"


def test_a_group_names_a_long_reason_after_its_columns():
    assert alike.columns_for(25, "mostly missing") == "25 mostly-missing columns"
    assert alike.columns_for(3, "may give the outcome away") == "3 columns (may give the outcome away)"
    assert alike.columns_for(3, None) == "3 columns"
