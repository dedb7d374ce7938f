"""A decision's evidence as a person reads it (issue 26): lines in words, never ``key = value``, no
bracket inside another, nothing the question already says; the evidence dict (the machine form)
stays as it is. One rendering: the panel's ``evidence_lines``, report.html, the notebook's decision
record, ``%dcstatus`` and the chat all show the same lines. Development-half tables and synthetic
frames only."""

from __future__ import annotations

import io
import json

import pandas as pd
import pytest
from dev_tables import dev_rdataset, quiet_diagnose
from test_block_ids import households
from test_person_periods import synthetic

from jupyter_dcpilot.engine.evidence_lines import evidence_lines, nested, sentence_lines, unnested
from jupyter_dcpilot.engine.gatekeeping import stdin_prompt
from jupyter_dcpilot.engine.notebook import decision_markdown
from jupyter_dcpilot.engine.session import Decision, Session, Step
from jupyter_dcpilot.engine.structure import Structure, in_words
from jupyter_dcpilot.engine.structure_cards import inferences_view, task_card
from jupyter_dcpilot.engine.task import Given, Task
from jupyter_dcpilot.engine.wire import DecisionOption


def card(df: pd.DataFrame, target: str) -> tuple[Decision, Structure, list[Decision]]:
    """The task card's decision for ``df`` as the engine asks it, its structure, and a decision per finding."""
    d = quiet_diagnose(df, target=target)
    structure = Structure(list(d.inferences))
    q = task_card(Task.inferred(d.task, Given(target=target)), structure)
    asked = [Decision(id=f"d{i}", step_id="s", gate=f.gate or "", question=f.summary, evidence=dict(f.evidence))
             for i, f in enumerate(d.findings)]
    return Decision(id="d", step_id="s", gate="task", question=q.question, evidence=q.evidence), structure, asked


def test_the_task_in_words_and_what_the_question_says_left_out():
    evidence = {"kind": "regression", "target": "income", "id": "household", "prediction_time": "each row's own time",
                "prediction_time_reason": "no dates or repeated entities: each row is one prediction at its own time"}
    assert evidence_lines(evidence) == [
        "The task: regression", "The target: 'income'", "The entity: 'household'",
        "Predictions are made at: each row's own time",
        "Why then: no dates or repeated entities: each row is one prediction at its own time"]
    task, _, _ = card(households(), "income")
    assert task.evidence["kind"] == "regression"  # the machine form is left as it is
    assert task.to_dict()["evidence_lines"] == task.evidence_lines == [
        "Why then: no dates or repeated entities: each row is one prediction at its own time"]


def test_the_entity_and_its_repeated_records_in_words():
    d = quiet_diagnose(dev_rdataset("lme4", "sleepstudy"), target="Reaction")
    found = d.by_kind("repeated_measurements")[0]
    assert evidence_lines(found.evidence) == [
        "The entity: 'Subject'", "The visit: 'Days'", "Entities: 18", "Rows: 180", "Rows per entity mean: 10",
        "Rows per entity max: 10", "Share entities with several rows: 100%", "Varying columns: Days",
        "Target constant within entity: 0"]
    # the summary names the entity and the visit: the card does not say them again
    assert evidence_lines(found.evidence, found.summary)[:2] == ["Entities: 18", "Rows: 180"]


def test_the_timing_of_a_column_and_a_person_period_layout_in_words():
    d = quiet_diagnose(dev_rdataset("survival", "mgus2"), target="death")
    (leak,) = [f for f in d.by_kind("target_leakage") if f.columns == ["ptime"]]
    assert evidence_lines(leak.evidence, leak.summary) == [
        "Score: C-index 0.964, ranked 1 of 8 features scored, the next best 0.649", "On a sample of 1,384 rows",
        "Share equal: 92%", "Timing: outcome derived", "Timing tests: equals duration"]
    task, structure, _ = card(synthetic(), "E")
    assert task.evidence_lines == [
        "Why then: 't' changes between the records of an entity: it counts from each record's own time"]
    # the verdict names each unsure choice with its evidence as an aside, never in brackets within brackets
    assert in_words(structure.inference("duration")) == (
        "the survival time: t — each 'id' is followed until its last 't' (from the data's layout)")
    said = in_words(structure.inference("task"))
    assert said.startswith("the task: survival — 'E' holds event codes ['0', '1'] and the rows are periods of each "
                           "'id' (725 rows, 120 entities)") and not nested(said)


def view(df: pd.DataFrame, target: str) -> dict[str, dict]:
    """The structure section's inferences (what the panel shows), by id."""
    d = quiet_diagnose(df, target=target)
    session = Session(task=Task.inferred(d.task, Given(target=target)), structure=Structure(list(d.inferences)))
    return {i["id"]: i for i in inferences_view(session)}


def test_the_structure_section_says_the_person_period_and_the_blocks_inference_in_short_lines():
    task = view(synthetic(), "E")["task"]
    assert task["evidence"] == [
        "'E' holds event codes ['0', '1'] and the rows are periods of each 'id' (725 rows, 120 entities)",
        "'t' rises by one from each row of an entity to its next (605 of 605 steps), 120 of 120 entities from 0",
        "The target is 0 on every row before an entity's last and 99 entities end with the event",
        "Were 99 events on rows at random, all would be on the 120 last rows of 725 with probability below 0.0001",
        "Discrete-time survival, each row the period (t-1, t], modelled as one row per 'id' followed until its last"]
    assert task["alternatives"][0]["evidence"] == [
        "'E' as classes with each row a unit",
        "The periods of one 'id' would count as many subjects, and a row's class would say whether it is the last"]
    entity = view(households(), "income")["entity"]
    assert entity["evidence"] == [
        "No column repeats like a subject's id: each row is its own subject",
        "Rows may be blocks of 6 records of one entity (120 blocks of 6 consecutive rows)",
        "'province', 'tenure', 'head_sex', 'schooling' are the same within nearly every block and change between "
        "them, and 'head_age' rises by one within each block",
        "No column names the entity, so a random split would put one entity's records on both sides"]
    # a short sentence is kept whole; a long one cut at its clauses, a long aside its own line
    assert sentence_lines(["regression: numeric target with 662 distinct values."]) == [
        "Regression: numeric target with 662 distinct values"]
    long = ("the rows look like periods of one subject each (were the events on rows at random, all would "
            "fall on last rows (of 725) rarely); then survival.")
    assert sentence_lines([long]) == ["The rows look like periods of one subject each",
                                      "Were the events on rows at random, all would fall on last rows (of 725) rarely",
                                      "Then survival"]


def test_brackets_inside_brackets_are_dropped_their_words_kept():
    assert unnested("a (b (c) d) e [f (g, h] i)") == "a (b c d) e [f g, h i)"
    assert nested("x (y (z))") and not nested("each row the period (t-1, t], then (a)")


@pytest.mark.parametrize("table", [("lme4", "sleepstudy", "Reaction"), ("survival", "mgus2", "death"),
                                   ("survival", "jasa", "fustat"), ("Ecdat", "Wages", "lwage"),
                                   ("mstate", "ebmt1", "srvstat"), ("AER", "Affairs", "affairs"),
                                   ("openintro", "ncbirths", "weight"), ("synthetic", "person_periods", "E"),
                                   ("synthetic", "households", "income")])
def test_no_evidence_line_reads_key_equals_value_or_nests_brackets(table):
    package, item, target = table
    df = {"person_periods": synthetic, "households": households}[item]() if package == "synthetic" \
        else dev_rdataset(package, item)
    task, structure, asked = card(df, target)
    lines = [line for d in [task, *asked] for line in d.evidence_lines]
    lines += [in_words(i) for i in structure.inferences]
    assert lines
    assert not [line for line in lines if " = " in line or nested(line) or "_" in line.split(":")[0]], lines


def test_every_host_shows_the_same_lines():
    leak = Decision(id="d1", step_id="s1", gate="leakage", question="'ptime' is not known when a prediction is made.",
                    evidence={"score": 0.9642, "metric": "c_index", "rank": 1, "features_scored": 8,
                              "timing": "outcome_derived", "columns": {"ptime": {"rate": 0.1}}}, choice="drop",
                    by="user", at="now")
    lines = ["Score: C-index 0.964, ranked 1 of 8 features scored", "Timing: outcome derived"]
    assert leak.evidence_lines == lines
    markdown = decision_markdown(leak, Step(id="s1", episode="remove_leakage", title="Remove leakage"))
    assert "*Evidence:*\n- Score: C-index 0.964, ranked 1 of 8 features scored\n- Timing: outcome derived\n" in markdown
    assert " = " not in markdown and "features_scored" not in markdown  # report.html: test_report_html


async def test_the_terminals_prompt_says_the_evidence_lines_before_the_options():
    leak = Decision(id="d1", step_id="s1", gate="leakage", question="Is 'ptime' known at the prediction time?",
                    evidence={"score": 0.9642, "metric": "c_index", "timing": "outcome_derived"}, recommended="drop",
                    options=[DecisionOption("drop", "Drop it", "", "none", recommended=True)])
    out = io.StringIO()
    answer = await stdin_prompt(io.StringIO("\n"), out)(leak, Step(id="s1", episode="remove_leakage", title="Leak"))
    assert answer == ("drop", "accepted at the prompt")
    assert ("  Is 'ptime' known at the prediction time?\n  - Score: C-index 0.964\n  - Timing: outcome derived\n"
            "  1. drop (recommended)") in out.getvalue()


def test_the_sidecar_keeps_the_evidence_not_its_lines_and_an_older_one_with_lines_loads(tmp_path):
    from jupyter_dcpilot.engine import signatures
    from jupyter_dcpilot.engine.session import sidecar_path

    notebook = tmp_path / "nb.ipynb"
    session = Session(notebook=str(notebook), path=str(sidecar_path(notebook)), frame="df")
    session.decisions = [Decision(id="d1", step_id="s1", gate="leakage", question="Drop 'ptime'?",
                                  evidence={"score": 0.9642, "metric": "c_index", "timing": "outcome_derived"})]
    session.save()
    stored = json.loads(sidecar_path(notebook).read_text())
    assert "evidence_lines" not in stored["decisions"][0] and stored["decisions"][0]["evidence"]["score"] == 0.9642
    # the wire form (the panel's events and REST answers) still says them
    assert session.to_dict()["decisions"][0]["evidence_lines"] == ["Score: C-index 0.964", "Timing: outcome derived"]
    # a sidecar written before: its lines say another score than its evidence; the evidence is read, trusted
    stored.pop(signatures.SIGNATURE_KEY)
    stored["decisions"][0]["evidence_lines"] = ["Score: C-index 0.5"]
    sidecar_path(notebook).write_text(signatures.signed(signatures.serialize(stored)))
    loaded = Session.load(sidecar_path(notebook))
    assert loaded.trusted and loaded.decisions[0].evidence_lines == ["Score: C-index 0.964", "Timing: outcome derived"]
    loaded.decisions[0].evidence["score"] = 0.71  # an edit: the lines follow the evidence
    assert loaded.decisions[0].to_dict()["evidence_lines"][0] == "Score: C-index 0.71"


def test_a_guessed_late_measure_says_its_timing_without_an_empty_rationale():
    # the card of a measure named between the start and the target's time (analgesia at 48 h
    # beside pain on day 3) showed "Rationale:" with nothing after it, and "during follow up"
    import numpy as np

    from jupyter_dcpilot.engine.structure import placed_late
    from kernel_tools.inferences import ColumnTimeline

    rng = np.random.default_rng(5)
    pain = rng.integers(0, 11, 400)
    df = pd.DataFrame({"age": rng.normal(55, 12, 400).round(), "analgesia_48h": (5 * pain + rng.normal(0, 5, 400)),
                       "pain_day3": pain})
    d = quiet_diagnose(df, target="pain_day3")
    session = Session(notebook="nb.ipynb", path="nb.dcpilot.json", task=Task(given=Given(target="pain_day3")))
    session.structure.record(list(d.inferences), ColumnTimeline.from_dict(d.timeline.to_dict()))
    (late,) = placed_late(session, list(d.findings))
    assert late.summary.startswith("'analgesia_48h' is not known when a prediction is made: placed during follow-up "
                                   "on the column timeline by the co-pilot's best guess, unconfirmed (named at '48h'")
    lines = evidence_lines(late.evidence, late.summary)
    assert lines and not [line for line in lines if line.rstrip().endswith(":")]
    assert evidence_lines({"rationale": "", "source": "placement"}) == ["Source: placement"]


def test_a_joins_key_candidates_are_no_python_repr():
    # the panel's join card showed "Candidates: {'left': 'stay_id', 'right': 'stay_id', 'unique_left': True, ..."
    import numpy as np

    import kernel_tools as kt

    rng = np.random.default_rng(0)
    stays = pd.DataFrame({"stay_id": np.arange(1001, 1101), "age": rng.integers(20, 90, 100),
                          "died": rng.integers(0, 2, 100)})
    vitals = pd.DataFrame({"stay_id": np.repeat(stays["stay_id"].to_numpy(), 3), "hr": rng.normal(80, 10, 300)})
    (join,) = [f for f in kt.diagnose_join({"stays": stays, "vitals": vitals}, target="died").findings
               if f.kind == "join_keys"]
    assert join.evidence["candidates"]  # the machine form keeps them
    lines = evidence_lines(join.evidence, join.summary)
    assert lines == ["Left frame: stays", "Right frame: vitals"]
    assert not [line for line in lines if "{" in line or "'unique_left'" in line]
