"""Plan edits in the engine (fake hosts): skip, move, add, params, reopen, their refusals, the
decisions file's plan, and that no edit lets a gated step run without its decision."""

from __future__ import annotations

import asyncio

import pytest
from engine_fakes import FakeKernel, FakeNotebook, churn_diagnosis, finding, option

from jupyter_dcpilot.engine import plan_edits
from jupyter_dcpilot.engine.coordinator import ApprovalPolicy, Coordinator
from jupyter_dcpilot.engine.plan_edits import EditRefused
from jupyter_dcpilot.engine.report import build_report
from jupyter_dcpilot.engine.session import Session
from jupyter_dcpilot.engine.task import Given, Inputs, Task
from jupyter_dcpilot.engine.validity import audit


class Kernel(FakeKernel):
    """The fake kernel, with a fit_evaluate whose keywords a test chooses."""

    fit_evaluate_keywords = ["df", "target", "task", "time", "groups", "test", "preprocess"]

    def parameters_json(self, function):
        return list(self.fit_evaluate_keywords)


def make(tmp_path, policy="ask", diagnosis=None):
    kernel = Kernel(diagnosis or churn_diagnosis())
    notebook = FakeNotebook(kernel)
    session = Session(notebook=str(tmp_path / "nb.ipynb"), path=str(tmp_path / ".nb.ipynb.dcpilot.json"),
                      task=Task(given=Given(target="y")), inputs=Inputs(frames=["df"]))
    session.variables["imports"] = True
    pol = policy if isinstance(policy, ApprovalPolicy) else ApprovalPolicy.from_spec(policy, files=True)
    return Coordinator(session, kernel, notebook, policy=pol), kernel, notebook, session


def step(session, episode, status=None):
    found = [s for s in session.plan if s.episode == episode and (status is None or s.status == status)]
    assert found, f"no {episode} step ({status}) in {[(s.episode, s.status) for s in session.plan]}"
    return found[-1]


def cells_of(notebook, step_id, kind="code"):
    return [c for c in notebook.cells if c["type"] == kind and c["metadata"]["dcpilot"].get("step") == step_id]


async def answer_all(coord, session, choose=None, limit=20):
    """Answer every question as the expert would (the recommended option unless ``choose`` says
    otherwise) until the plan finishes."""
    state = await coord.run_until_blocked()
    for _ in range(limit):
        if state != "blocked":
            return state
        decision = session.open_decisions()[0]
        session.decide(decision.id, (choose or {}).get(decision.gate, decision.recommended), "expert")
        state = await coord.run_until_blocked()
    raise AssertionError("the plan did not finish")


async def test_skip_keeps_a_step_from_running_and_is_logged_by_user(tmp_path):
    coord, kernel, notebook, session = make(tmp_path)
    assert await coord.run_until_blocked() == "blocked"  # the task card
    outliers = step(session, "outliers", "proposed")
    record = await coord.edit_plan({"op": "skip", "step": outliers.id, "reason": "values are real"}, via="panel")
    assert record.by == "user" and record.op == "skip" and "values are real" in record.text
    assert outliers.status == "skipped" and "skipped" in outliers.by_user
    assert await answer_all(coord, session) == "finished"
    assert outliers.status == "skipped" and not cells_of(notebook, outliers.id)
    assert not any("handle_outliers" in c for c in notebook.sources())
    assert any(c.startswith("### Plan edited by the user") and outliers.id in c for c in notebook.sources("markdown"))
    assert any(t["kind"] == "edit" and outliers.id in t["text"] for t in session.transcript)
    report = build_report(session, coord.report().get("model") and step(session, "train_evaluate").result["report"])
    assert report["plan_edits"][0]["step"] == outliers.id and report["plan_edits"][0]["by"] == "user"
    assert any("Plan edits (by the user)" in c for c in notebook.sources("markdown"))  # the summary cell


async def test_a_skipped_leakage_drop_leaves_the_model_not_valid_and_says_why(tmp_path):
    coord, kernel, notebook, session = make(tmp_path)
    await coord.run_until_blocked()
    leak = step(session, "remove_leakage", "proposed")
    await coord.edit_plan({"op": "skip", "step": leak.id}, via="panel")
    assert await answer_all(coord, session) == "finished"
    checks = {c.check: c for c in audit(session)}
    assert not checks["no_leakage"].passed
    assert "'complained'" in checks["no_leakage"].detail
    assert f"the step that removes it, {leak.id}" in checks["no_leakage"].detail
    assert "skipped by the user, in the plan" in checks["no_leakage"].detail


async def test_move_reorders_within_a_stage_and_the_order_survives_replanning(tmp_path):
    coord, kernel, notebook, session = make(tmp_path)
    await coord.run_until_blocked()
    leak, ids = step(session, "remove_leakage"), step(session, "drop_identifiers")
    await coord.edit_plan({"op": "move", "step": ids.id, "before": leak.id}, via="panel")
    pending = [s.id for s in session.plan if s.pending]
    assert pending.index(ids.id) < pending.index(leak.id)
    session.decide(session.open_decisions()[0].id, "confirm")
    assert await coord.run_until_blocked() == "blocked"  # planned again: the identifiers still come first
    assert session.open_decisions()[0].step_id == ids.id
    impute, split = step(session, "impute"), step(session, "split")
    with pytest.raises(EditRefused, match="only among the steps of its stage"):
        await coord.edit_plan({"op": "move", "step": impute.id, "before": split.id}, via="panel")
    with pytest.raises(ValueError, match="either 'before' or 'after'"):
        await coord.edit_plan({"op": "move", "step": impute.id}, via="panel")
    with pytest.raises(KeyError, match="s999"):
        await coord.edit_plan({"op": "move", "step": impute.id, "after": "s999"}, via="panel")


async def test_add_from_the_library_asks_before_a_gated_step_runs(tmp_path):
    coord, kernel, notebook, session = make(tmp_path)
    await coord.run_until_blocked()
    with pytest.raises(ValueError, match="unknown episode 'dedup'.*did you mean 'deduplicate'"):
        await coord.edit_plan({"op": "add", "episode": "dedup"}, via="panel")
    with pytest.raises(EditRefused, match="in the plan already"):
        await coord.edit_plan({"op": "add", "episode": "split"}, via="panel")
    with pytest.raises(ValueError, match="'incme' is not a column.*'income'"):
        await coord.edit_plan({"op": "add", "episode": "outliers", "columns": ["incme"]}, via="panel")
    record = await coord.edit_plan({"op": "add", "episode": "deduplicate", "columns": ["age", "plan"]}, via="panel")
    added = session.step(record.step)
    assert added.gate == "row_removal" and "added" in added.by_user and added.params["subset"] == ["age", "plan"]
    question = session.decision(added.decision_id)
    assert [o.id for o in question.options] == ["run", "skip"] and not question.decided
    seen = []
    state = await coord.run_until_blocked()
    while state == "blocked":
        decision = session.open_decisions()[0]
        seen.append(decision.step_id)
        if decision.step_id == added.id:
            assert not cells_of(notebook, added.id)  # it waits for its answer
        session.decide(decision.id, decision.recommended, "expert")
        state = await coord.run_until_blocked()
    assert added.id in seen and added.status == "done"
    assert any("kt.deduplicate(df, subset=['age', 'plan'])" in c for c in notebook.sources())
    # the split has run: a step before it can no longer be added
    with pytest.raises(EditRefused, match="Split train/test has run: reopen it"):
        await coord.edit_plan({"op": "add", "episode": "remove_leakage", "columns": ["age"]}, via="panel")


async def test_params_change_the_call_and_reopen_an_answer_already_given(tmp_path):
    coord, kernel, notebook, session = make(tmp_path)
    state = await coord.run_until_blocked()
    while not any(d.gate == "outliers" for d in session.open_decisions()):
        session.decide(session.open_decisions()[0].id, session.open_decisions()[0].recommended)
        state = await coord.run_until_blocked()
    assert state == "blocked"
    outliers = step(session, "outliers", "awaiting_decision")
    decision = session.decision(outliers.decision_id)
    session.decide(decision.id, "clip", "expert")  # answered, not yet run...
    with pytest.raises(ValueError, match="take no parameter 'treshold'.*'threshold'"):
        await coord.edit_plan({"op": "params", "step": outliers.id, "params": {"treshold": 3}}, via="panel")
    with pytest.raises(ValueError, match="threshold must be above 0"):
        await coord.edit_plan({"op": "params", "step": outliers.id, "params": {"threshold": 0}}, via="panel")
    with pytest.raises(ValueError, match="method must be one of"):
        await coord.edit_plan({"op": "params", "step": outliers.id, "params": {"method": "zscore"}}, via="panel")
    await coord.edit_plan({"op": "params", "step": outliers.id, "params": {"threshold": 3, "method": "mad"}}, via="panel")
    assert not decision.decided and decision.history[-1]["choice"] == "clip"  # ...so asked again
    assert decision.option("clip").action["params"]["threshold"] == 3  # the card shows the new call
    assert await coord.run_until_blocked() == "blocked" and session.open_decisions()[0].id == decision.id
    assert not cells_of(notebook, outliers.id)
    session.decide(decision.id, "clip", "expert")
    assert await answer_all(coord, session) == "finished"
    cell = cells_of(notebook, outliers.id)[0]["source"]
    assert "action='clip'" in cell and "method='mad'" in cell and "threshold=3" in cell
    # a done step's parameters are not edited: it is reopened first
    with pytest.raises(EditRefused, match="reopen it first"):
        await coord.edit_plan({"op": "params", "step": outliers.id, "params": {"threshold": 2}}, via="panel")


async def test_split_size_and_model_candidates(tmp_path):
    coord, kernel, notebook, session = make(tmp_path)
    await coord.run_until_blocked()
    split, model = step(session, "split"), step(session, "train_evaluate")
    with pytest.raises(ValueError, match="test_size must be at most 0.5"):
        await coord.edit_plan({"op": "params", "step": split.id, "params": {"test_size": 0.9}}, via="panel")
    await coord.edit_plan({"op": "params", "step": split.id, "params": {"test_size": 0.3}}, via="panel")
    with pytest.raises(EditRefused, match="takes no 'candidates'"):
        await coord.edit_plan({"op": "params", "step": model.id, "params": {"candidates": ["Ridge"]}}, via="panel")
    kernel.fit_evaluate_keywords = [*Kernel.fit_evaluate_keywords, "candidates"]
    await coord.edit_plan({"op": "params", "step": model.id, "params": {"candidates": ["LogisticRegression"]}}, via="panel")
    assert await answer_all(coord, session) == "finished"
    code = notebook.sources()
    assert any("kt.split(df, target='y', test_size=0.3" in c for c in code)
    assert any("candidates=['LogisticRegression']" in c for c in code)


async def test_reopen_undoes_a_done_step_and_asks_its_question_again(tmp_path):
    coord, kernel, notebook, session = make(tmp_path, policy=ApprovalPolicy.from_spec("ask"))
    await coord.run_until_blocked()
    while not step(session, "remove_leakage").status == "done":
        session.decide(session.open_decisions()[0].id, session.open_decisions()[0].recommended)
        await coord.run_until_blocked()
    leak = step(session, "remove_leakage", "done")
    assert "complained" not in kernel.columns
    with pytest.raises(EditRefused, match="only a done or skipped step can be reopened"):
        await coord.edit_plan({"op": "reopen", "step": session.open_decisions()[0].step_id}, via="panel")
    await coord.edit_plan({"op": "reopen", "step": leak.id}, via="panel")
    assert "complained" in kernel.columns and leak.checkpoint_id is None  # restored in the kernel
    assert leak.status == "proposed" and not cells_of(notebook, leak.id)
    decision = session.decision(leak.decision_id)
    assert not decision.decided and decision.history[-1]["undone"] == "reopened by the user"
    assert session.plan_edits[-1].op == "reopen" and session.plan_edits[-1].checkpoint
    assert await coord.run_until_blocked() == "blocked" and session.open_decisions()[0].id == decision.id
    # confirm_task changed no data: nothing to go back to
    with pytest.raises(EditRefused, match="no checkpoint"):
        await coord.edit_plan({"op": "reopen", "step": step(session, "confirm_task").id}, via="panel")


async def test_reopening_a_skipped_step_proposes_it_again(tmp_path):
    coord, kernel, notebook, session = make(tmp_path)
    await coord.run_until_blocked()
    ids = step(session, "drop_identifiers")
    await coord.edit_plan({"op": "skip", "step": ids.id}, via="panel")
    await coord.edit_plan({"op": "reopen", "step": ids.id}, via="panel")
    assert ids.status == "proposed" and "skipped" not in ids.by_user
    assert await answer_all(coord, session) == "finished"
    assert ids.status == "done"


async def test_what_cannot_be_edited_is_refused_and_nothing_changes(tmp_path):
    coord, kernel, notebook, session = make(tmp_path)
    await coord.run_until_blocked()
    before = session.to_json()
    for edit, error, match in [
        ({"op": "skip", "step": step(session, "split").id}, EditRefused, "a valid model needs it"),
        ({"op": "skip", "step": step(session, "confirm_task").id}, EditRefused, "a valid model needs it"),
        ({"op": "add", "episode": "custom"}, EditRefused, "free-text instruction"),
        ({"op": "add", "episode": "remove_leakage"}, ValueError, "needs 'columns'"),
        ({"op": "add", "episode": "aggregate"}, EditRefused, "needs the entity id"),
        ({"op": "delete", "step": "s1"}, ValueError, "op must be one of"),
        ({"op": "skip"}, ValueError, "needs 'step'"),
        ({"op": "skip", "step": "s99"}, KeyError, "s99"),
        ({"op": "params", "step": step(session, "explain").id, "params": {"x": 1}}, ValueError, "no parameters"),
    ]:
        with pytest.raises(error, match=match):
            await coord.edit_plan(edit, via="panel")
    assert session.to_json() == before  # a refused edit changes nothing
    # while a run holds the loop, every edit waits its turn: refused at once
    async with coord._lock:
        with pytest.raises(EditRefused, match="running"):
            await coord.edit_plan({"op": "skip", "step": step(session, "outliers").id}, via="panel")


async def test_a_decisions_file_edits_the_plan_ahead_of_time(tmp_path):
    spec = tmp_path / "decisions.json"
    spec.write_text('{"*": "recommended", "plan": ['
                    '{"op": "skip", "episode": "drop_identifiers"},'
                    '{"op": "params", "episode": "outliers", "params": {"threshold": 2.5, "method": "mad"}},'
                    '{"op": "add", "episode": "deduplicate", "reason": "two exports were merged"}]}')
    coord, kernel, notebook, session = make(tmp_path, policy=str(spec))
    assert await coord.run_until_blocked() == "finished"
    ids, outliers, dedup = step(session, "drop_identifiers"), step(session, "outliers"), step(session, "deduplicate")
    assert ids.status == "skipped" and not cells_of(notebook, ids.id)
    assert "threshold=2.5" in cells_of(notebook, outliers.id)[0]["source"]
    assert dedup.status == "done" and session.decision(dedup.decision_id).by == "policy"
    sources = {e.via for e in session.plan_edits}
    assert sources == {"decisions file"} and len([e for e in session.plan_edits if e.op == "add"]) == 1
    assert all(e.by == "user" for e in session.plan_edits)


def test_the_engine_knows_the_transforms_choices():
    from kernel_tools.transforms.aggregation import AGGS
    from kernel_tools.transforms.imputation import METHODS as IMPUTE
    from kernel_tools.transforms.outliers import METHODS as OUTLIERS

    assert plan_edits.OUTLIER_METHODS == OUTLIERS
    assert plan_edits.IMPUTE_METHODS == IMPUTE
    assert plan_edits.AGGREGATIONS == AGGS


def test_the_library_lists_every_episode_in_one_line_and_what_can_be_added(tmp_path):
    coord, kernel, notebook, session = make(tmp_path)
    entries = {e["id"]: e for e in plan_edits.library(session, coord.episodes)}
    assert set(entries) == set(coord.episodes)
    assert all(e["line"].endswith(".") and "\n" not in e["line"] for e in entries.values())
    assert entries["outliers"]["addable"] and set(entries["outliers"]["params"]) == {"columns", "method", "threshold"}
    assert not entries["custom"]["addable"] and "instruction" in entries["custom"]["why_not"]


# -- no plan op bypasses a gate -----------------------------------------------------------------
GATED = churn_diagnosis()
GATED["findings"].append(finding("duplicate_rows", ["plan"], "row_removal",
                                 [option("deduplicate", True, "deduplicate"), option("keep")]))


def guard(coord, session):
    """Fail the test the moment a gated step reaches the worker without the expert's answer."""
    real = coord.worker.execute
    ran = []

    async def execute(step, mark, *args, **kwargs):
        if step.gate:
            decision = session.decision(step.decision_id) if step.decision_id else None
            assert decision is not None and decision.decided and decision.by == "user", \
                f"{step.id} ({step.gate}) ran without the expert's answer"
            assert decision.choice != "skip"
        ran.append(step.id)
        return await real(step, mark, *args, **kwargs)

    coord.worker.execute = execute
    return ran


async def _edit_for(op, coord, session, turn):
    """The edit a test of ``op`` makes at a turn of the run (None: no edit then)."""
    gated = [s for s in session.plan if s.pending and s.gate and s.episode != "confirm_task"]
    if op == "skip" and turn == 1:
        return {"op": "skip", "step": gated[-1].id}
    if op == "move" and turn == 1:
        dedup = next(s for s in gated if s.episode == "deduplicate")
        return {"op": "move", "step": dedup.id, "before": gated[0].id}
    if op == "add" and turn == 1:
        return {"op": "add", "episode": "outliers", "columns": ["age"]}
    if op == "params":
        outliers = next((s for s in gated if s.episode == "outliers"), None)
        if outliers is not None and outliers.decision_id and not session.decision(outliers.decision_id).history:
            session.decide(outliers.decision_id, "clip", "expert")  # answered; then the call changes
            return {"op": "params", "step": outliers.id, "params": {"threshold": 2}}
    if op == "reopen" and turn in (4, 6):
        done = [s for s in session.plan if s.status == "done" and s.gate and s.checkpoint_id]
        if done:
            return {"op": "reopen", "step": done[-1].id}
    return None


@pytest.mark.parametrize("op", ["skip", "move", "add", "params", "reopen"])
async def test_no_plan_op_makes_a_gated_step_run_without_its_decision(tmp_path, op):
    coord, kernel, notebook, session = make(tmp_path, diagnosis=GATED)
    ran = guard(coord, session)
    state = await coord.run_until_blocked()
    edits = []
    for turn in range(40):
        if state != "blocked":
            break
        edit = await _edit_for(op, coord, session, turn)
        if edit is not None:
            edits.append(await coord.edit_plan(edit, via="panel"))
            state = await coord.run_until_blocked()
            assert state == "blocked" and session.open_decisions(), "after an edit the open gate still asks"
            if op in ("params", "reopen"):  # the edited step's question is asked again
                assert session.open_decisions()[0].step_id == edits[-1].step
            continue
        decision = session.open_decisions()[0]
        session.decide(decision.id, decision.recommended, "expert")
        state = await coord.run_until_blocked()
    assert state == "finished" and edits, f"no {op} edit was made"
    assert ran  # steps ran, and the guard saw every gated one answered by the expert first


async def test_the_run_never_executes_an_undecided_gated_step_even_if_marked_proposed(tmp_path):
    coord, kernel, notebook, session = make(tmp_path)
    await coord.run_until_blocked()
    leak = step(session, "remove_leakage")
    with pytest.raises(RuntimeError, match="gate violated"):
        await coord.execute(leak, len(session.cells))
    assert not cells_of(notebook, leak.id)


def test_edits_survive_the_sidecar(tmp_path):
    coord, kernel, notebook, session = make(tmp_path)
    asyncio.run(coord.run_until_blocked())
    outliers = step(session, "outliers")
    asyncio.run(coord.edit_plan({"op": "params", "step": outliers.id, "params": {"threshold": 4}}, via="panel"))
    again = Session.load(session.path)
    assert again.step(outliers.id).user_params == {"threshold": 4}
    assert again.step(outliers.id).by_user == ["params"] and again.plan_edits[0].op == "params"


class Replanned(Kernel):
    """Outliers in 'income' and 'complained' while the leak is there; once it is dropped the
    diagnosis of the data as it is now names 'income' alone (a new finding), or nothing."""

    def __init__(self, after):
        super().__init__(churn_diagnosis())
        self.after = after  # ["income"], or None: no outliers any more

    def diagnose_json(self, name, **hints):
        d = super().diagnose_json(name, **hints)
        outliers = finding("outliers", ["income", "complained"] if "complained" in self.columns else self.after or [],
                           "outliers", [option("clip", True, "handle_outliers", action="clip"), option("keep")])
        d["findings"] = [f for f in d["findings"] if f["kind"] != "outliers"]
        if "complained" in self.columns or self.after:
            d["findings"].append(outliers)
        return d


async def edited_outliers(tmp_path, after):
    """Issue 29, 2: 'Handle outliers' with threshold=4, moved up, before the plan is rebuilt."""
    kernel = Replanned(after)
    notebook = FakeNotebook(kernel)
    session = Session(notebook=str(tmp_path / "nb.ipynb"), path=str(tmp_path / ".nb.dcpilot.json"),
                      task=Task(given=Given(target="y")), inputs=Inputs(frames=["df"]))
    session.variables["imports"] = True
    coord = Coordinator(session, kernel, notebook, policy=ApprovalPolicy())
    assert await coord.run_until_blocked() == "blocked"
    outliers, impute = step(session, "outliers"), step(session, "impute")
    assert outliers.finding_ids == ["outliers:income,complained"]
    await coord.edit_plan({"op": "params", "step": outliers.id, "params": {"threshold": 4}}, via="panel")
    await coord.edit_plan({"op": "move", "step": outliers.id, "before": impute.id}, via="panel")
    assert await answer_all(coord, session) == "finished"
    return session, notebook, outliers.id, impute.id


async def test_an_edited_moved_step_survives_a_replan_that_changes_its_finding(tmp_path):
    session, notebook, outliers_id, impute_id = await edited_outliers(tmp_path, after=["income"])
    outliers = session.step(outliers_id)  # the re-planned step carries the id the expert edited
    assert outliers.finding_ids == ["outliers:income"] and outliers.status == "done"
    assert outliers.user_params == {"threshold": 4} and set(outliers.by_user) == {"params", "moved"}
    assert "threshold=4" in cells_of(notebook, outliers_id)[0]["source"]
    order = [st.id for st in session.plan]
    assert order.index(outliers_id) < order.index(impute_id)  # still where the expert moved it
    assert not any(e.lapsed for e in session.plan_edits)


async def test_an_edit_a_replan_leaves_nothing_to_apply_to_is_said_in_the_notebook_and_transcript(tmp_path):
    session, notebook, outliers_id, _ = await edited_outliers(tmp_path, after=None)
    assert not [st for st in session.plan if st.episode == "outliers" and st.status == "done"]
    lapsed = [e for e in session.plan_edits if e.lapsed]
    assert {e.op for e in lapsed} == {"params", "move"} and all(e.step == outliers_id for e in lapsed)
    assert "no longer finds what" in lapsed[0].lapsed and "(drop: complained (leak))" in lapsed[0].lapsed
    notes = [c["source"] for c in notebook.cells if c["source"].startswith("### A plan edit no longer applies")]
    assert len(notes) == 2 and any("set threshold=4" in n for n in notes)
    said = [t["text"] for t in session.transcript if "no longer applies" in t["text"]]
    assert len(said) == 2 and any("set threshold=4" in t for t in said)
    summary = next(c["source"] for c in notebook.cells if c["source"].startswith("## Summary"))
    assert "set threshold=4" in summary and "no longer applies" in summary


async def test_a_skipped_step_keeps_its_place_in_the_plan(tmp_path):
    coord, kernel, notebook, session = make(tmp_path)
    assert await coord.run_until_blocked() == "blocked"
    before = [st.id for st in session.plan]
    outliers = step(session, "outliers")
    await coord.edit_plan({"op": "skip", "step": outliers.id}, via="panel")
    await coord.run_until_blocked()
    after = [st.id for st in session.plan]
    assert after.index(outliers.id) == before.index(outliers.id)  # not at the top with the done steps
    assert session.step(outliers.id).note == "skipped by the user in the panel"
    assert session.plan_edits[-1].via == "panel"
    assert any("### Plan edited by the user in the panel" in c["source"] for c in notebook.cells)
