"""A hidden panel answered with one click (issue 26): the task card offers "group the rows in blocks
of k consecutive records", whose step adds a block id (``kt.number_blocks``) that becomes the
entity, so splits keep each block together; "the rows are independent" stays an option. Answered
by a person the entity is confirmed; taken by ``--approve recommended`` it is a guess and the run
stays not valid. A table sorted by a column and a panel with its id get no such option.
Synthetic households surveyed yearly (names of no real table), run headless in a real kernel."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from dev_tables import quiet_diagnose
from test_hidden_panel import workers

from jupyter_dcpilot.cli import main
from jupyter_dcpilot.engine import gatekeeping, structure_cards
from jupyter_dcpilot.engine.coordinator import ApprovalPolicy, Coordinator
from jupyter_dcpilot.engine.hosts import HeadlessHost
from jupyter_dcpilot.engine.notebook import load_cell
from jupyter_dcpilot.engine.session import Session, sidecar_path
from jupyter_dcpilot.engine.structure import Structure, confirmations
from jupyter_dcpilot.engine.task import Given, Inputs, Task
from jupyter_dcpilot.probe import probe_expression
from kernel_tools import number_blocks


def households(n: int = 120, waves: int = 6, seed: int = 3, with_id: bool = False) -> pd.DataFrame:
    """``n`` households, ``waves`` consecutive yearly rows each; province, tenure, head's sex and
    schooling fixed per household, the head's age rising by one; income follows schooling."""
    rng = np.random.default_rng(seed)
    school = np.repeat(rng.integers(6, 18, n), waves)
    df = pd.DataFrame({
        "province": np.repeat(rng.choice(["A", "B", "C", "D", "E"], n), waves),
        "tenure": np.repeat(rng.choice(["own", "rent"], n), waves),
        "head_sex": np.repeat(rng.choice(["f", "m"], n), waves),
        "schooling": school,
        "head_age": (np.repeat(rng.integers(25, 60, n), waves) + np.tile(np.arange(waves), n)),
        "members": rng.integers(1, 7, n * waves),
        "income": (20 + 3 * school + np.repeat(rng.normal(0, 4, n), waves) + rng.normal(0, 2, n * waves)).round(2)})
    if with_id:
        df.insert(0, "household", np.repeat(np.arange(5000, 5000 + n), waves))
    return df


def card(df: pd.DataFrame, target: str) -> structure_cards.Question:
    d = quiet_diagnose(df, target=target)
    task = Task(kind="regression", target=target, reason="r", index={"kind": "row", "label": "each row's own time"})
    return structure_cards.task_card(task, Structure([d.inference("entity")]))


def run(df: pd.DataFrame, folder: Path, approve: str) -> tuple[dict, dict, str]:
    data = folder / "households.csv"
    df.to_csv(data, index=False)
    out = folder / "out"
    assert main(["run", str(data), "--target", "income", "--planner", "rules", "--out", str(out),
                 "--approve", approve]) == 0
    report = json.loads((out / "report.json").read_text())
    session = json.loads((out / ".notebook.ipynb.dcpilot.json").read_text())
    cells = json.loads((out / "notebook.ipynb").read_text())["cells"]
    return report, session, "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")


def test_number_blocks_every_k_rows_and_replays_on_new_data():
    df = households(n=30)
    out, report = number_blocks(df, column="hh", size=6)
    assert list(out.columns) == ["hh", *df.columns] and "hh" not in df.columns  # the input is left as it is
    assert out["hh"].tolist()[:13] == [1] * 6 + [2] * 6 + [3]
    assert report.details["blocks"] == 30 and report.details["rule"] == "a new block every 6 rows"
    assert report.apply(households(n=4, seed=9))["hh"].tolist() == list(np.repeat([1, 2, 3, 4], 6))
    with pytest.raises(ValueError, match="13 rows are not whole blocks of 6"):
        report.apply(df.iloc[:13])
    with pytest.raises(ValueError, match="is a column already"):
        number_blocks(out, column="hh", size=6)


def test_number_blocks_where_a_counter_does_not_rise_by_one():
    df = pd.DataFrame({"wave": [3, 4, 5, 1, 2, 7, 8, 9, 10, np.nan, 2], "x": range(11)})
    out, report = number_blocks(df, counter="wave")
    assert out["block"].tolist() == [1, 1, 1, 2, 2, 3, 3, 3, 3, 4, 5]
    assert (report.details["shortest"], report.details["longest"]) == (1, 4)
    assert "wherever 'wave' does not rise by one" in report.details["said"]


def test_the_task_card_offers_to_group_the_blocks_recommended():
    q = card(households(), "income")
    ids = [o.id for o in q.options]
    assert ids[:3] == ["confirm", "blocks", "entity:none"]
    blocks, independent = q.options[1], q.options[2]
    assert blocks.label == "Group the rows in blocks of 6 consecutive records (one entity each)"
    assert blocks.recommended and not q.options[0].recommended
    assert "adds the column 'block' numbering the blocks (a new one every 6 rows)" in blocks.description
    assert independent.label == "The rows are independent: each row is its own subject"
    assert q.question == ("Is this the task? A regression task: predict the value of 'income'. Predictions are made at "
                          "each row's own time. Why: r. Unsure of the entity: rows may be blocks of 6 records of one "
                          "entity (120 blocks of 6 consecutive rows): 'province', 'tenure', 'head_sex', 'schooling' are "
                          "the same within nearly every block and change between them, and 'head_age' rises by one "
                          "within each block; no column names the entity, so a random split would put one entity's "
                          "records on both sides.")
    assert " Or " not in q.question  # the columns rejected as its id are no answer


def test_the_structure_section_answers_the_blocks_as_the_task_card_does():
    """Its options are the card's (one definition); "blocks" there is the card's choice, applied the
    same way and confirmed by the user; once a policy took the blocks, they are the value in force:
    keeping them confirms, "independent" is the card's other choice."""
    d = quiet_diagnose(households(), target="income")
    task = Task(kind="regression", target="income", reason="r", index={"kind": "row", "label": "each row's own time"})
    s = Session(task=task, structure=Structure([d.inference("entity")]))
    on_card = [o.to_dict() for o in structure_cards.task_card(task, s.structure).options if o.id in ("blocks", "entity:none")]
    (entity,) = [i for i in structure_cards.inferences_view(s) if i["id"] == "entity"]
    assert [{k: v for k, v in o.items() if k != "value"} for o in entity["options"]] == on_card
    assert [o["value"] for o in entity["options"]] == ["blocks", None] and entity["value"] is None
    assert structure_cards.answer(s, "entity", "blocks", "panel", "now") == "blocks"
    gatekeeping.apply_task_answer(s, "blocks")
    assert s.task.blocks == {"column": "block", "size": 6}
    assert confirmations(s)["entity"] == "by the user in the panel"
    (entity,) = [i for i in structure_cards.inferences_view(s) if i["id"] == "entity"]
    assert (entity["value"], entity["confidence"]) == ("blocks", "given")

    taken = Session(task=replace(task, blocks={"column": "block", "size": 6}), structure=Structure([d.inference("entity")]))
    assert [i["value"] for i in structure_cards.inferences_view(taken) if i["id"] == "entity"] == ["blocks"]
    assert structure_cards.answer(taken, "entity", "blocks", "panel", "now") is None  # in force: confirmed
    assert structure_cards.answer(taken, "entity", None, "panel", "now") == "entity:none"
    with pytest.raises(ValueError, match="say one of"):
        structure_cards.answer(taken, "entity", "province", "panel", "now")


def test_a_table_sorted_by_a_column_and_a_panel_with_its_id_get_no_block_option():
    rng = np.random.default_rng(4)
    n = 720
    sorted_rows = pd.DataFrame({"province": rng.choice(["A", "B", "C"], n), "tenure": rng.choice(["own", "rent"], n),
                                "head_age": rng.integers(25, 70, n), "members": rng.integers(1, 7, n),
                                "income": rng.normal(50, 10, n).round(2)}).sort_values(["province", "tenure", "head_age"])
    for df in (sorted_rows.reset_index(drop=True), households(with_id=True)):
        ids = [o.id for o in card(df, "income").options]
        assert "blocks" not in ids, ids


def test_grouping_the_blocks_answered_by_a_person_makes_the_block_the_confirmed_entity(tmp_path, capsys):
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps({"task": "blocks", "*": "recommended"}))
    report, session, code = run(households(), tmp_path, str(answers))
    assert "df, blocks = kt.number_blocks(df, column='block', size=6)" in code
    assert "kt.split(df, target='income', groups='block')" in code
    step = next(st for st in session["plan"] if st["episode"] == "number_blocks")
    assert step["status"] == "done" and step["result"]["report"]["columns_added"] == ["block"]
    assert session["task"]["id"] == "block"
    checks = {c["check"]: c for c in report["validity"]}
    assert checks["entities_together"]["passed"] and "grouped by 'block'" in checks["entities_together"]["detail"]
    assert checks["structure_confirmed"]["passed"], checks["structure_confirmed"]["detail"]


def test_grouping_taken_by_the_approval_policy_stays_a_guess(tmp_path, capsys):
    report, session, code = run(households(), tmp_path, "recommended")
    task_card = next(d for d in session["decisions"] if d["gate"] == "task")
    assert task_card["recommended"] == task_card["choice"] == "blocks"
    assert "groups='block'" in code
    check = next(c for c in report["validity"] if c["check"] == "structure_confirmed")
    assert not report["valid"] and not check["passed"]
    # the verdict names the choice the run took (the numbered blocks) and the blocks' evidence, not "none"
    assert "the entity: 'block' (consecutive rows numbered in blocks by a step) — rows may be blocks of" in check["detail"]
    assert "the entity: none" not in check["detail"] and "each row is its own subject" not in check["detail"]


def test_unequal_blocks_are_numbered_where_the_counter_does_not_rise_by_one(tmp_path, capsys):
    df = workers()
    blocks = card(df, "log_pay").options[1]
    assert blocks.id == "blocks" and blocks.recommended
    assert blocks.label == "Group the rows in blocks that start where 'tenure_yrs' does not rise by one (one entity each)"
    data = tmp_path / "workers.csv"
    df.to_csv(data, index=False)
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps({"task": "blocks", "*": "recommended"}))
    assert main(["run", str(data), "--target", "log_pay", "--planner", "rules", "--out", str(tmp_path / "out"),
                 "--approve", str(answers)]) == 0
    session = json.loads((tmp_path / "out" / ".notebook.ipynb.dcpilot.json").read_text())
    step = next(st for st in session["plan"] if st["episode"] == "number_blocks")
    assert step["params"] == {"column": "block", "counter": "tenure_yrs"} and step["status"] == "done"
    assert step["result"]["report"]["details"]["blocks"] == int((df["tenure_yrs"].diff() != 1).sum())
    cells = json.loads((tmp_path / "out" / "notebook.ipynb").read_text())["cells"]
    code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
    assert "kt.number_blocks(df, column='block', counter='tenure_yrs')" in code and "groups='block'" in code


async def test_numbering_the_blocks_is_undone_like_every_step(tmp_path):
    """Undo restores the frame without the block id and the task without its entity; run on, the
    task card's answer stands and the step numbers the blocks again."""
    households(n=40).to_csv(tmp_path / "households.csv", index=False)
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps({"task": "blocks", "*": "recommended"}))
    notebook = tmp_path / "nb.ipynb"
    session = Session(notebook=str(notebook), path=str(sidecar_path(notebook)),
                      task=Task(given=Given(target="income")), inputs=Inputs(frames=["df"]))
    async with HeadlessHost(notebook) as host:
        await host.run_cell(load_cell([str(tmp_path / "households.csv")], ["df"]), {"dcpilot": {"step": "load"}})
        session.variables["imports"] = True
        coord = Coordinator(session, host, host, policy=ApprovalPolicy.from_spec(str(answers), files=True))
        assert await coord.run_until_blocked() == "finished"
        step = next(s for s in session.plan if s.episode == "number_blocks")
        assert step.status == "done" and session.task.id == "block"
        await coord.undo(step.checkpoint_id)
        shape = (await host.evaluate(probe_expression("frame_info_json", ["df"])))["df"]
        assert "block" not in shape["columns"] and session.task.id is None and session.task.blocks is not None
        assert await coord.run_until_blocked() == "finished"
        assert step.status == "done" and session.task.id == "block"  # pending again after the undo, run again
        shape = (await host.evaluate(probe_expression("frame_info_json", ["df"])))["df"]
        assert shape["columns"][0] == "block"
