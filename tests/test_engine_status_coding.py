"""A status of several codes on the engine's side (issue 26): the task card offers the other codes
as censored and the codes as classes (never regression), says the uncertain coding once, and an
answer naming another censoring code recodes with that code; classes plan no recode at all. The
kernel is the engine's fake, which tells the diagnosis's task from what it is told."""

from __future__ import annotations

import pytest
from engine_fakes import FakeKernel, FakeNotebook, finding, option

from jupyter_dcpilot.engine import structure_cards
from jupyter_dcpilot.engine.coordinator import ApprovalPolicy, Coordinator
from jupyter_dcpilot.engine.session import Session
from jupyter_dcpilot.engine.structure import Structure, unconfirmed
from jupyter_dcpilot.engine.task import Given, Inputs, Task
from kernel_tools.inferences import Alternative, Inference

RANK_TEST = ("the rows coded 2 were followed longest (median 7.11 against 1: 1.71, 3: 1.42; rank test p = 1.2e-56): "
             "the subjects still event-free when follow-up ended")
COLUMNS = ["age", "time", "status"]
ROW = {"kind": "row", "label": "each row's own time"}


def status_inference() -> Inference:
    """The task as the diagnosis reads a status coded 1/2/3 with 2 followed longest."""
    return Inference("task", "survival", "low",
                     ["'status' is a status of 3 codes next to the follow-up time 'time': 2 censored, codes 1, 3 "
                      "merged as 'any event' (follow-up ends at the first)", RANK_TEST],
                     [Alternative("survival with 1 censored", ["its rows were followed 1.71 (median) against 7.11 "
                                                               "for 2"], 0.4),
                      Alternative("survival with 3 censored", ["its rows were followed 1.42 (median) against 7.11 "
                                                               "for 2"], 0.2),
                      Alternative("classification", ["the 3 codes as classes"], 0.1)],
                     details={"event_codes": ["1", "2", "3"], "censored": "2", "events": ["1", "3"]})


def diagnosis(task: str | None) -> dict:
    """What the kernel's diagnosis says, told ``task``: classification has no survival setup."""
    if task == "classification":
        return {"findings": [], "shape": [300, 3], "elapsed_s": 0.1, "sample_size": 300, "inferences": [],
                "task": {"kind": "classification", "target": "status", "reason": "classification (given)"}}
    setup = finding("survival_setup", ["time", "status"], None,
                    [option("recode", True, "recode_status", column="status", censored=2), option("keep")])
    return {"findings": [setup], "shape": [300, 3], "elapsed_s": 0.1, "sample_size": 300,
            "inferences": [status_inference().to_dict()],
            "task": {"kind": "survival", "target": "status", "time": "time", "event": "status", "censored": "2",
                     "reason": "survival: status 'status' next to follow-up time 'time', 2 censored"}}


class StatusKernel(FakeKernel):
    """The fake kernel whose diagnosis follows the task it is told."""

    def diagnose_json(self, name, **hints):
        self.diagnosis = diagnosis(hints.get("task"))
        return super().diagnose_json(name, **hints)


def run(tmp_path, choices: dict) -> tuple[Session, FakeNotebook, StatusKernel]:
    kernel = StatusKernel(diagnosis(None), model={"metric": "c_index", "cv_score": 0.7, "holdout_score": 0.7,
                                                  "cv_scores": [0.7] * 3, "model_name": "CoxPH", "warnings": [],
                                                  "importance": []})
    kernel.columns = list(COLUMNS)
    notebook = FakeNotebook(kernel)
    session = Session(notebook=str(tmp_path / "nb.ipynb"), path=str(tmp_path / ".nb.ipynb.dcpilot.json"),
                      task=Task(given=Given(target="status")), inputs=Inputs(frames=["df"]))
    session.variables["imports"] = True
    coordinator = Coordinator(session, kernel, notebook, policy=ApprovalPolicy(mode="file", choices=choices))
    assert __import__("asyncio").run(coordinator.run_until_blocked()) == "finished"
    return session, notebook, kernel


def recode_cells(notebook: FakeNotebook) -> list[str]:
    return [c for c in notebook.sources() if "kt.recode_status(" in c]


def test_the_recommended_reading_recodes_with_its_code_and_stays_unconfirmed(tmp_path):
    session, notebook, _ = run(tmp_path, {"*": "recommended"})
    (cell,) = recode_cells(notebook)
    assert "df, status_coding = kt.recode_status(df, column='status', censored=2)" in cell
    assert session.task.kind == "survival" and session.task.censored == "2"
    assert [i.id for i in unconfirmed(session, [])] == ["task"]  # the policy's answer confirms nothing


def test_a_decisions_file_naming_another_censoring_code_recodes_with_it_and_confirms_the_task(tmp_path):
    session, notebook, _ = run(tmp_path, {"task": "censored:3", "*": "recommended"})
    (cell,) = recode_cells(notebook)
    assert "kt.recode_status(df, column='status', censored=3)" in cell
    assert session.task.censored == "3" and session.task.given.censored == "3" and session.task.kind == "survival"
    assert unconfirmed(session, []) == []


def test_classes_are_diagnosed_again_and_plan_no_recode(tmp_path):
    session, notebook, kernel = run(tmp_path, {"task": "classification", "*": "recommended"})
    assert recode_cells(notebook) == [] and session.task.kind == "classification" and session.task.censored is None
    told = [kw.get("task") for name, _, kw in kernel.calls if name == "diagnose_json"]
    assert told[-1] == "classification"


def test_an_answer_on_the_structure_names_the_cards_choice_and_regression_is_no_reading_of_codes():
    s = Structure([status_inference()])
    assert s.answer("task", "survival with 3 censored", "chat", "now") == "censored:3"
    assert s.answer("task", "classification", "chat", "now") == "classification"
    with pytest.raises(ValueError, match="'regression' is not an answer to task"):
        s.answer("task", "regression", "chat", "now")


def test_the_card_says_the_uncertain_coding_once_the_rank_test_once_and_each_option_in_a_line():
    task = Task(kind="survival", target="status", time="time", censored="2", reason="survival: status 'status' ...",
                index=ROW)
    q = structure_cards.task_card(task, Structure([status_inference()]))
    assert q.question == ("Is this the task? A survival task: predict the time to the event in 'status'. In 'status', "
                          "2 means censored and any other code is an event. The survival time is 'time'. Predictions are "
                          "made at each row's own time. Which code of 'status' means censored: 2, 1 or 3? Or none, if the "
                          "codes are classes?")
    assert q.evidence["status_coding"] == [RANK_TEST] and "uncertain" not in q.evidence
    assert [o.id for o in q.options] == ["confirm", "censored:1", "censored:3", "classification"]
    confirm, one, three, classes = q.options
    assert confirm.recommended and confirm.risk == "wrong if another code of 'status' means censored"
    # the recommended reading named as the others are (the panel showed a bare "Confirm" beside them)
    assert [o.label for o in q.options] == ["Survival with 2 censored", "Survival with 1 censored",
                                            "Survival with 3 censored", "It is classification"]
    assert one.description == "Recode 'status': 1 -> 0 (censored), 2, 3 -> 1 (any event)."
    assert three.risk == "its rows were followed 1.42 (median) against 7.11 for 2"
    assert classes.description == "The codes of 'status' as classes, ignoring the follow-up."
    words = " ".join([q.question, *(f"{o.label} {o.description} {o.risk}" for o in q.options)])
    assert words.count("rank test") == 0 and words.count("merged as") == 0  # the evidence is said once, apart
    # each alternative in a line; the confirm option says the task as the question does, in short sentences
    assert all("\n" not in o.description and o.description.count(". ") == 0 for o in q.options[1:])
    assert q.question.startswith(f"Is this the task? {confirm.description} Which code")


def test_a_plain_survival_task_card_is_unchanged_by_the_status_reading():
    plain = Inference("task", "survival", "high", ["'status' holds event codes ['0', '1']"],
                      [Alternative("classification", ["censored rows would count as 'no event'"], 0.2)])
    q = structure_cards.task_card(Task(kind="survival", target="status", time="time", reason="r", index=ROW),
                                  Structure([plain]))
    assert q.question == ("Is this the task? A survival task: predict the time to the event in 'status'. The survival "
                          "time is 'time'. Predictions are made at each row's own time. Why: r.")
    assert [o.id for o in q.options] == ["confirm", "classification", "regression"]
    assert q.options[0].label == "Confirm"


def test_a_coding_the_follow_up_leaves_uncertain_reaches_the_card_as_a_question_even_given_as_survival():
    # the diagnosis itself (in this process): 1's rows followed longest, but only 1.3x 0's
    import numpy as np
    import pandas as pd
    from dev_tables import quiet_diagnose

    rng = np.random.default_rng(1)
    medians, counts = {0: 5.0, 1: 6.5, 2: 2.0}, {0: 150, 1: 60, 2: 150}
    df = pd.DataFrame({"age": rng.normal(60, 10, 360).round(),
                       "time": np.concatenate([m * rng.uniform(0.8, 1.2, counts[k]) for k, m in medians.items()]),
                       "status": np.concatenate([np.full(n, k) for k, n in counts.items()])})
    d = quiet_diagnose(df, target="status", task="survival", time="time")
    assert d.task["censored"] == "0"  # the convention, not overruled
    task = Task(kind="survival", target="status", time="time", censored="0", reason="r", index=ROW)
    q = structure_cards.task_card(task, Structure([d.inference("task")]))
    assert "Which code of 'status' means censored: 0, 1 or 2?" in q.question
    assert "uncertain" in q.evidence["status_coding"][0]
    assert q.options[0].risk == "wrong if another code of 'status' means censored"
