"""A step's title says what the step does: once its question is answered, the chosen option's
words (with the columns it acts on), not the episode's name; asked again, the plan's title."""

from __future__ import annotations

import pytest

from jupyter_dcpilot.engine import history
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
