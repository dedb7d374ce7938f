"""Coordinator and worker on fake hosts: gates, policies, checkpoints, backtracking, undo, repair."""

from __future__ import annotations

import asyncio
import json

import pytest
from engine_fakes import FakeKernel, FakeNotebook, churn_diagnosis, finding, option

from jupyter_dcpilot.engine.coordinator import ApprovalPolicy, Coordinator
from jupyter_dcpilot.engine.report import model_validity
from jupyter_dcpilot.engine.session import Session
from jupyter_dcpilot.engine.task import Given, Inputs, Task


def make(tmp_path, policy="recommended", diagnosis=None, fail_on=(), **kernel):
    kernel_ = FakeKernel(diagnosis or churn_diagnosis(), **kernel)
    notebook = FakeNotebook(kernel_, fail_on=fail_on)
    session = Session(notebook=str(tmp_path / "nb.ipynb"), path=str(tmp_path / ".nb.ipynb.dcpilot.json"),
                      task=Task(given=Given(target="y")), inputs=Inputs(frames=["df"]))
    session.variables["imports"] = True
    pol = policy if isinstance(policy, ApprovalPolicy) else ApprovalPolicy.from_spec(policy, files=True)
    return Coordinator(session, kernel_, notebook, policy=pol), kernel_, notebook, session


def step_of(session, episode, status="done"):
    return [s for s in session.plan if s.episode == episode and s.status == status]


async def test_ask_blocks_and_gated_steps_never_run_undecided(tmp_path):
    coord, kernel, notebook, session = make(tmp_path, policy="ask")
    assert await coord.run_until_blocked() == "blocked"
    assert session.plan[0].episode == "confirm_task" and session.plan[0].status == "awaiting_decision"
    assert notebook.ran == []  # nothing ran before the task was confirmed
    seen_gates = []
    for _ in range(10):
        waiting = session.open_decisions()
        if not waiting:
            break
        decision = waiting[0]
        seen_gates.append(decision.gate)
        step = session.step(decision.step_id)
        # the step behind an open decision has not produced any cell
        assert not step.cell_ids and not any(c.get("metadata", {}).get("dcpilot", {}).get("step") == step.id
                                             and c["type"] == "code" for c in notebook.cells)
        choice = "clip" if decision.gate == "outliers" else decision.recommended
        session.decide(decision.id, choice, "expert says so")
        state = await coord.run_until_blocked()
    assert state == "finished"
    assert seen_gates == ["task", "leakage", "identifiers", "imputation", "outliers"]
    assert all(d.by == "user" for d in session.decisions)
    code = notebook.sources()
    assert "kt.drop_columns(df, columns=['complained']" in code[0]
    assert code[0].startswith("# ")  # a one-line comment says why
    assert any("train, test, split_report = kt.split(df, target='y'" in c for c in code)
    assert any("test = imputation.apply(test)" in c for c in code)
    assert any("preprocess=[imputation, outliers]" in c for c in code)
    markdown = notebook.sources("markdown")
    assert any("Decision (leakage)" in m and "decided by the user" in m for m in markdown)
    for cell in notebook.cells:
        if cell["type"] == "code":
            tag = cell["metadata"]["dcpilot"]
            assert tag["step"] and tag["episode"] and "checkpoint" in tag


async def test_recommended_policy_backtracks_when_too_few_rows_are_kept(tmp_path):
    coord, kernel, notebook, session = make(tmp_path, retention={"action='remove'": 0.3})
    assert await coord.run_until_blocked() == "finished"
    undone = step_of(session, "outliers", "undone")
    done = step_of(session, "outliers", "done")
    assert len(undone) == 1 and len(done) == 1
    assert session.decision(undone[0].decision_id).choice == "remove"
    assert session.decision(done[0].decision_id).choice == "clip"  # the excluded option is gone
    assert "remove" not in [o.id for o in session.decision(done[0].decision_id).options]
    assert session.exclusions["outliers:income"] == ["remove"]
    assert undone[0].checkpoint_id in kernel.restored and kernel.rows == 200
    assert not any("action='remove'" in c for c in notebook.sources())  # its cell was deleted
    assert any("Backtracked" in m for m in notebook.sources("markdown"))
    assert any(t["kind"] == "backtrack" and "rows" in t["text"] for t in session.transcript)
    assert all(d.by == "policy" for d in session.decisions)
    report = coord.report()
    assert report["valid"] is True and "complained" in report["dropped_columns"] or \
        "complained" not in report["model"]["features"]


async def test_none_policy_skips_gated_steps_and_the_model_is_not_valid(tmp_path):
    coord, kernel, notebook, session = make(tmp_path, policy="none")
    assert await coord.run_until_blocked() == "finished"
    skipped = [s for s in session.plan if s.status == "skipped"]
    assert {s.episode for s in skipped} == {"confirm_task", "remove_leakage", "drop_identifiers",
                                            "impute", "outliers"}
    assert all(session.decision(s.decision_id).choice == "skip" for s in skipped)
    assert all(session.decision(s.decision_id).by == "policy" for s in skipped)
    report = coord.report()
    assert report["valid"] is False
    assert any("leakage" in w for w in report["warnings"])
    failed = {c["check"] for c in report["validity"] if not c["passed"]}
    assert "no_leakage" in failed  # the verdict says why, check by check


async def test_decisions_file_maps_gates_and_columns(tmp_path):
    path = tmp_path / "decisions.json"
    path.write_text(json.dumps({"task": "confirm", "leakage": "keep", "identifiers": "drop",
                                "imputation": "keep", "outliers": {"income": "clip", "*": "keep"}}))
    coord, kernel, notebook, session = make(tmp_path, policy=str(path))
    assert await coord.run_until_blocked() == "finished"
    choices = {d.gate: (d.choice, d.by) for d in session.decisions}
    assert choices == {"task": ("confirm", "policy"), "leakage": ("keep", "policy"),
                       "identifiers": ("drop", "policy"), "imputation": ("keep", "policy"),
                       "outliers": ("clip", "policy")}
    assert "complained" in kernel.columns
    assert coord.report()["valid"] is False  # the expert kept a column flagged as leakage


async def test_decisions_file_with_an_unknown_choice_is_a_clear_error(tmp_path):
    path = tmp_path / "decisions.json"
    path.write_text(json.dumps({"task": "confirm", "leakage": "delete"}))
    coord, _, _, session = make(tmp_path, policy=str(path))
    with pytest.raises(ValueError, match="'delete' is not an option of the leakage decision"):
        await coord.run_until_blocked()
    assert Session.load(session.path).state == "failed"
    assert "the co-pilot stopped: planning the next step failed: decisions file: 'delete'" in session.transcript[-1]["text"]


def test_policy_spec_errors():
    with pytest.raises(ValueError, match="ask, recommended, none or a JSON file"):
        ApprovalPolicy.from_spec("sometimes", files=True)


async def test_suspicious_score_backtracks_before_the_split_and_asks_about_the_top_feature(tmp_path):
    diagnosis = churn_diagnosis()
    diagnosis["findings"] = [f for f in diagnosis["findings"] if f["kind"] != "target_leakage"]
    coord, kernel, notebook, session = make(tmp_path, diagnosis=diagnosis, leak_scores=True)
    assert await coord.run_until_blocked() == "finished"
    assert [s.status for s in session.plan if s.episode == "split"] == ["undone", "done"]
    leak_step = step_of(session, "remove_leakage")[0]
    assert leak_step.finding_ids == ["suspected_leakage:complained"]
    assert session.decision(leak_step.decision_id).choice == "drop"
    assert "complained" not in kernel.columns
    report = coord.report()
    assert report["model"]["cv_score"] == pytest.approx(0.81) and report["valid"] is True
    assert session.backtracks == 1


async def test_a_high_score_spread_over_many_features_is_a_warning_not_a_backtrack(tmp_path):
    diagnosis = churn_diagnosis()
    diagnosis["findings"] = [f for f in diagnosis["findings"] if f["kind"] != "target_leakage"]
    model = {"metric": "roc_auc", "cv_score": 0.995, "holdout_score": 0.99, "model_name": "hgb",
             "cv_scores": [0.994, 0.995, 0.996],
             "warnings": [], "grouped": False,
             "importance": [{"feature": "complained", "importance": 0.2},
                            {"feature": "income", "importance": 0.18},
                            {"feature": "age", "importance": 0.15}]}
    coord, kernel, _, session = make(tmp_path, diagnosis=diagnosis, model=model)
    assert await coord.run_until_blocked() == "finished"
    assert session.backtracks == 0 and "complained" in kernel.columns
    assert any("spread over several features" in w for w in session.warnings)


async def test_a_top_feature_the_diagnosis_examined_and_cleared_is_not_asked_about_again(tmp_path):
    diagnosis = churn_diagnosis()
    diagnosis["findings"] = [f for f in diagnosis["findings"] if f["kind"] != "target_leakage"]
    # scored as strong as a leak, yet not flagged (its values overlap between the outcomes)
    diagnosis["column_stats"] = {"metric": "roc_auc", "feature_scores": {"complained": 0.97, "income": 0.7},
                                 "leakage": []}
    coord, kernel, _, session = make(tmp_path, diagnosis=diagnosis, leak_scores=True)
    assert await coord.run_until_blocked() == "finished"
    assert session.backtracks == 0 and "complained" in kernel.columns
    assert any("the diagnosis examined it" in w and "0.970" in w for w in session.warnings)
    # the model's own "suspect leakage" note about that feature no longer makes the result invalid
    model = next(s for s in session.plan if s.episode == "train_evaluate").result["report"]
    flagged = {**model, "warnings": ["suspect leakage: cv roc_auc 0.995 > 0.98; top feature 'complained'"]}
    assert model_validity(session, flagged) == (True, [])
    # a top feature that alone is only moderately strong still sends the run back to ask
    diagnosis["column_stats"]["feature_scores"]["complained"] = 0.8
    coord, kernel, _, session = make(tmp_path / "b", diagnosis=diagnosis, leak_scores=True)
    assert await coord.run_until_blocked() == "finished"
    assert session.backtracks == 1 and "complained" not in kernel.columns
    assert model_validity(session, flagged)[0] is False  # not cleared: the warning still counts


async def test_undo_restores_kernel_cells_and_plan(tmp_path):
    coord, kernel, notebook, session = make(tmp_path)
    await coord.run_until_blocked()
    leak = step_of(session, "remove_leakage")[0]
    checkpoint = leak.checkpoint_id
    cells_before = len(notebook.cells)
    await coord.undo(checkpoint)
    assert kernel.restored[-1] == checkpoint and "complained" in kernel.columns
    assert len(notebook.cells) < cells_before and notebook.cells  # co-pilot cells after it are gone
    # every step from the undone one on is pending again, ready to resume
    assert all(s.status == "proposed" for s in session.plan if s.episode != "confirm_task")
    assert session.step(leak.id).status == "proposed" and session.step(leak.id).checkpoint_id is None
    assert session.state == "idle"
    assert [c.id for c in session.checkpoints] == []  # the first change's checkpoint was the earliest
    reloaded = Session.load(session.path)
    assert reloaded == session


async def test_a_gated_step_cannot_be_executed_without_its_decision(tmp_path):
    coord, kernel, notebook, session = make(tmp_path, policy="ask")
    await coord.run_until_blocked()
    step = session.plan[0]
    with pytest.raises(RuntimeError, match="gate violated"):
        await coord.execute(step, 0)
    assert notebook.ran == []


async def test_worker_falls_back_to_safer_parameters_and_cleans_failed_cells(tmp_path):
    coord, kernel, notebook, session = make(tmp_path, fail_on=("method='median'",))
    assert await coord.run_until_blocked() == "finished"
    impute = step_of(session, "impute")[0]
    assert impute.attempts == 3 and impute.error is None
    cell = next(c for c in notebook.cells if c["metadata"].get("dcpilot", {}).get("step") == impute.id
                and c["type"] == "code")
    # the budget is the step's (180 s), passed whatever the option the fallback took
    assert "kt.impute(train, method='mean', target='y', budget=180)" in cell["source"]
    assert not any("method='median'" in c for c in notebook.sources())
    assert sum(t["kind"] == "fallback" for t in session.transcript) == 2


async def test_a_model_that_cannot_be_trained_fails_the_run(tmp_path):
    coord, kernel, notebook, session = make(tmp_path, fail_on=("kt.fit_evaluate",))
    assert await coord.run_until_blocked() == "failed"
    assert step_of(session, "train_evaluate", "failed")[0].attempts == 2  # once more with cv=3
    assert session.state == "failed" and any("Train and evaluate failed" in w for w in session.warnings)


async def test_ask_on_a_terminal_prompts_and_records_the_user_as_decider(tmp_path):
    import io

    from jupyter_dcpilot.engine.coordinator import stdin_prompt

    # Enter=recommended, by id (twice), bad then number, number
    answers = io.StringIO("\n" "keep\n" "drop\n" "nonsense\n2\n" "3\n")
    shown = io.StringIO()
    policy = ApprovalPolicy("ask", prompt=stdin_prompt(answers, shown))
    coord, kernel, notebook, session = make(tmp_path, policy=policy)
    assert await coord.run_until_blocked() == "finished"
    choices = [(d.gate, d.choice, d.by) for d in session.decisions]
    assert choices == [("task", "confirm", "user"), ("leakage", "keep", "user"), ("identifiers", "drop", "user"),
                       ("imputation", "keep", "user"), ("outliers", "keep", "user")]
    assert "not an option: 'nonsense'" in shown.getvalue() and "(recommended)" in shown.getvalue()


async def test_undo_during_a_run_waits_for_one_step_not_the_whole_run(tmp_path):
    coord, kernel, notebook, session = make(tmp_path)
    leak_ran = asyncio.Event()
    run_cell = notebook.run_cell

    async def slow_run_cell(source, metadata):  # every cell after the leakage drop takes a while
        if leak_ran.is_set():
            await asyncio.sleep(0.3)
        result = await run_cell(source, metadata)
        if "drop_columns" in source:
            leak_ran.set()
        return result

    notebook.run_cell = slow_run_cell
    run = asyncio.create_task(coord.run_until_blocked())
    await asyncio.wait_for(leak_ran.wait(), 30)
    leak = step_of(session, "remove_leakage")[0]
    await asyncio.wait_for(coord.undo(leak.checkpoint_id), 10)
    assert await run == "idle"  # the run stopped at its next turn for the undo
    assert "complained" in kernel.columns
    assert not [s for s in session.plan if s.episode == "train_evaluate" and s.status == "done"]
    # and carries on afterwards: the undone leakage decision is the expert's to answer again
    assert await coord.run_until_blocked() == "blocked"
    assert session.decision(leak.decision_id).choice is None


async def test_checkpoints_hold_the_sessions_frame_whatever_its_name(tmp_path):
    """A session on ``visits`` snapshots ``visits`` before a step that changes the frame (the
    episodes call it ``df``): otherwise an undo cannot bring it back, and the split's checks fail."""
    coord, kernel, notebook, session = make(tmp_path)
    session.frame = "visits"
    assert await coord.run_until_blocked() == "finished"
    saved = [args[0] for name, args, _ in kernel.calls if name == "checkpoint_save_json"]
    leak = next(s for s in session.plan if s.episode == "remove_leakage")
    split = next(s for s in session.plan if s.episode == "split")
    assert all("df" not in names for names in saved) and ["visits", "leakage_drop"] in saved
    by_step = {cp.step_id: cp.names for cp in session.checkpoints}
    assert by_step[leak.id] == ["visits"] and by_step[split.id] == ["visits", "train", "test"]


async def test_a_blocked_run_warms_the_kernel_for_the_answer_and_the_cell_follows_its_decision(tmp_path):
    coord, kernel, notebook, session = make(tmp_path, policy=ApprovalPolicy(
        mode="file", choices={"task": "confirm"}))
    assert await coord.run_until_blocked() == "blocked"
    leak = session.open_decisions()[0]
    assert leak.gate == "leakage"
    # while the expert reads the question, the kernel imports what the answer runs
    assert kernel.calls[-1] == ("warm_json", [["drop_columns"]], {})

    order: list[str] = []
    write = notebook.insert_markdown

    async def slow_markdown(source, metadata):  # a panel that takes its time to insert it
        await asyncio.sleep(0.2)
        order.append("markdown written")
        return await write(source, metadata)

    notebook.insert_markdown = slow_markdown
    save = kernel.checkpoint_save_json
    kernel.checkpoint_save_json = lambda names, label: (order.append("checkpoint"), save(names, label))[1]
    session.decide(leak.id, "drop")
    await coord.run_until_blocked()
    # the checkpoint did not wait for the decision's cell; the code cell did
    assert order[:2] == ["checkpoint", "markdown written"]
    step = session.step(leak.step_id)
    kinds = [(c["kind"], c["step"]) for c in session.cells if c["step"] == step.id]
    assert kinds == [("decision", step.id), ("code", step.id)]
    mine = [c for c in notebook.cells if c["metadata"].get("dcpilot", {}).get("step") == step.id]
    assert [c["type"] for c in mine] == ["markdown", "code"]


@pytest.mark.parametrize("takes_budget", [True, False])
async def test_the_model_step_gets_its_budget_when_the_kernels_fit_evaluate_takes_one(tmp_path, takes_budget):
    from jupyter_dcpilot.engine.budgets import Budgets

    coord, kernel, notebook, session = make(tmp_path)
    coord.worker.budgets = Budgets.from_spec({"train_evaluate": 90})
    if not takes_budget:  # a kernel_tools from before budgets
        kernel.parameters_json = lambda function: ["df", "target", "task", "test", "preprocess"]
    assert await coord.run_until_blocked() == "finished"
    fit = next(c for c in notebook.sources() if "kt.fit_evaluate(" in c)
    assert ("budget=90" in fit) is takes_budget
    # so does imputation, with its own budget (its episode's default, 3 minutes)
    impute = next(c for c in notebook.sources() if "kt.impute(" in c)
    assert ("budget=180)" in impute) is takes_budget
    asked = [c[1][0] for c in kernel.calls if c[0] == "parameters_json"]
    assert sorted(asked) == sorted(set(asked)) and "fit_evaluate" in asked  # each function asked once


def visits_with_label_issues(entity):
    """Several rows per patient (``pid``), kept per record, and labels that look wrong."""
    diagnosis = churn_diagnosis()
    diagnosis["findings"] = [finding("label_issues", ["y"], "label_issues",
                                     [option("flag", True, "handle_label_issues", target="y", action="flag"),
                                      option("keep")])]
    diagnosis["task"]["id"] = entity
    return diagnosis


@pytest.mark.parametrize("entity", ["pid", None])
async def test_the_label_issues_cell_judges_an_entitys_rows_together(tmp_path, entity):
    coord, kernel, notebook, session = make(tmp_path, diagnosis=visits_with_label_issues(entity))
    kernel.columns = ["pid", "age", "income", "plan", "y"]
    assert await coord.run_until_blocked() == "finished"
    label = [c for c in notebook.sources() if "kt.handle_label_issues(" in c]
    by_entity = ", groups='pid'" if entity else ""
    assert len(label) == 1 and f"kt.handle_label_issues(train, target='y', action='flag'{by_entity})" in label[0]
    split = next(c for c in notebook.sources() if "kt.split(" in c)
    assert ("groups='pid'" in split) is bool(entity)  # one entity concept for the split and the labels


async def test_the_label_issues_cell_leaves_out_an_entity_id_no_longer_in_the_frame(tmp_path):
    diagnosis = visits_with_label_issues("pid")
    diagnosis["findings"].append(finding("id_column", ["pid"], "identifiers",
                                         [option("drop", True, "drop_columns", columns=["pid"], reason="identifier"),
                                          option("keep")]))
    coord, kernel, notebook, session = make(tmp_path, diagnosis=diagnosis)
    kernel.columns = ["pid", "age", "income", "plan", "y"]
    assert await coord.run_until_blocked() == "finished"
    label = next(c for c in notebook.sources() if "kt.handle_label_issues(" in c)
    assert "kt.handle_label_issues(train, target='y', action='flag')" in label
