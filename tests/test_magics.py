"""The inline co-pilot magics on a real in-process IPython shell (no panel, no server)."""

from __future__ import annotations

import threading

import numpy as np
import pandas as pd
import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output

from jupyter_dcpilot.engine.session import sidecar_path
from jupyter_dcpilot.kernel_thread import Interrupted
from jupyter_dcpilot.magics import DCPilotMagics, MainThreadBridge
from jupyter_dcpilot.widget_cards import DecisionCard


def leaky_frame(n: int = 150, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x1, x2 = rng.normal(size=n), rng.normal(size=n)
    y = (x1 + rng.normal(size=n) > 0).astype(int)
    leak = np.where(rng.random(n) < 0.02, 1 - y, y)  # recorded after the outcome
    return pd.DataFrame({"x1": x1, "x2": x2, "leak": leak, "y": y})


@pytest.fixture()
def shell(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the inline sidecar goes into the cwd
    sh = InteractiveShell.instance()
    sh.user_ns["df"] = leaky_frame()
    sh.run_line_magic("load_ext", "jupyter_dcpilot")
    yield sh
    sh.extension_manager.loaded.discard("jupyter_dcpilot")  # the next load_ext registers afresh
    for name in ("df", "train", "test", "model"):
        sh.user_ns.pop(name, None)


def magics(sh) -> DCPilotMagics:
    return sh.magics_manager.registry["DCPilotMagics"]


def run(sh, name: str, line: str = ""):
    with capture_output() as captured:
        sh.run_line_magic(name, line)
    return captured


def markdown(captured) -> str:
    return "\n".join(o.data.get("text/markdown", "") for o in captured.outputs)


# --- the extension and %dccheck ---------------------------------------------------------------

def test_load_ext_registers_the_magics(shell):
    lines = shell.magics_manager.magics["line"]
    assert {"dccheck", "dcplan", "dcstatus", "dccheckpoints", "dcundo", "dcreport", "dcdecide"} <= set(lines)


def test_dccheck_displays_a_diagnosis_naming_the_leak(shell):
    before = shell.user_ns["df"].copy()
    captured = run(shell, "dccheck", "df --target y")
    html = captured.outputs[0].data["text/html"]
    assert "target_leakage" in html and "leak" in html
    pd.testing.assert_frame_equal(shell.user_ns["df"], before)  # nothing touched


def test_magics_without_a_session_say_how_to_start_one(shell):
    with pytest.raises(RuntimeError, match="%dcplan"):
        shell.run_line_magic("dcstatus", "")


def test_dcplan_argument_errors_are_usage_errors_naming_the_close_names(shell, tmp_path):
    # a UsageError is shown as one line, without a traceback
    with pytest.raises(UsageError, match="no DataFrame named 'dff'.*did you mean 'df'"):
        shell.run_line_magic("dcplan", "dff --target y")
    with pytest.raises(UsageError, match="--target 'yy' is not a column of df.*did you mean 'y'"):
        shell.run_line_magic("dcplan", "df --target yy")
    with pytest.raises(UsageError, match="--time 'x3'"):
        shell.run_line_magic("dcplan", "df --target y --time x3")
    with pytest.raises(UsageError, match="needs the name of a DataFrame variable"):
        shell.run_line_magic("dcplan", "df.head() --target y")
    (tmp_path / "d.json").write_text('{"columns": 5}')
    with pytest.raises(UsageError, match="'columns' must be an object"):
        shell.run_line_magic("dcplan", f"df --target y --approve {tmp_path / 'd.json'}")
    with pytest.raises(UsageError, match="did you mean 'recommended'"):
        shell.run_line_magic("dcplan", "df --target y --approve recomended")
    assert magics(shell).pilot is None  # nothing was started


def test_dccheck_argument_errors_are_usage_errors(shell):
    shell.user_ns["n"] = 3
    with pytest.raises(UsageError, match="cannot evaluate 'nope': NameError"):
        shell.run_line_magic("dccheck", "nope")
    with pytest.raises(UsageError, match="needs a DataFrame; 'n' is a int"):
        shell.run_line_magic("dccheck", "n --target y")
    with pytest.raises(UsageError, match="--target 'Y' is not a column of df.*did you mean 'y'"):
        shell.run_line_magic("dccheck", "df --target Y")
    with pytest.raises(UsageError, match="--id 'patient'"):
        shell.run_line_magic("dccheck", "df --target y --id patient")
    with pytest.raises(UsageError, match="--index 'visit_date'"):
        shell.run_line_magic("dccheck", "df --target y --index visit_date")
    shell.user_ns.pop("n")


# --- %dcplan with a policy, %dcstatus, %dcreport ----------------------------------------------

def test_recommended_policy_runs_to_the_end_and_reports_policy_decisions(shell, tmp_path):
    run(shell, "dcplan", "df --target y --approve recommended")
    session = magics(shell).pilot.session
    assert session.state == "finished"
    assert all(st.status in ("done", "skipped") for st in session.plan)
    assert "leak" not in shell.user_ns["df"].columns
    assert shell.user_ns["model"].metric == "roc_auc"
    assert sidecar_path(tmp_path / ".dcpilot-inline.ipynb").exists()  # the sidecar, in the cwd
    leakage = next(d for d in session.decisions if d.gate == "leakage")
    assert (leakage.choice, leakage.by) == ("drop", "policy")

    status = markdown(run(shell, "dcstatus"))
    assert "finished" in status and "drop (by policy)" in status

    report = markdown(run(shell, "dcreport"))
    assert "`leak`" in report and "decided by the approval policy" in report
    assert "Model: " in report and "roc_auc" in report
    # the verdict as its checks, the same list the report and the panel show
    assert "*Valid model:*" in report and "**known_at_index**" in report and "**no_leakage**" in report


@pytest.mark.slow
def test_dcplan_budget_reaches_the_steps_and_the_widget_shows_progress_against_it(shell):
    run(shell, "dcplan", "df --target y --approve recommended --budget train_evaluate=77 --budget 30")
    pilot = magics(shell).pilot
    assert pilot.session.settings["budgets"]["train_evaluate"] == 77
    model_step = next(st for st in pilot.session.plan if st.episode == "train_evaluate")
    assert model_step.budget_s == 77 and model_step.elapsed_s is not None
    assert next(st for st in pilot.session.plan if st.episode == "split").budget_s == 30
    assert pilot.progress.value == ""  # nothing runs any more
    pilot._on_event({"type": "progress", "step": "s9", "title": "s9 Train and evaluate", "elapsed_s": 95.0,
                     "budget_s": 77})
    assert pilot.progress.value == ("Running <b>s9 Train and evaluate</b> · 1 min 35 s of its "
                                    "1 min 17 s budget — over budget")
    with pytest.raises(UsageError, match="'fitting' is not a kind of step"):
        shell.run_line_magic("dcplan", "df --target y --budget fitting=5 --new")


# --- %dcplan ask: decision cards ---------------------------------------------------------------

def test_ask_shows_cards_and_a_click_records_a_user_decision_then_the_step_runs(shell):
    run(shell, "dcplan", "df --target y --approve ask")
    pilot = magics(shell).pilot
    assert pilot.session.state == "blocked"
    card = pilot.cards[0]
    assert card.decision.gate == "task"
    recommended = card.buttons[card.decision.recommended]
    assert "recommended" in recommended.description and recommended.button_style == "success"

    progress: list[str] = []
    pilot.progress.observe(lambda change: progress.append(change["new"]), "value")
    with capture_output():
        recommended.click()  # what the frontend does; the run resumes until the next gate
    assert any(p.startswith("Estimating what each option does to the model · ") for p in progress)
    card = next(c for c in pilot.cards if c.decision.gate == "leakage")
    assert "leak" in card.decision.columns and card.decision.evidence
    assert len(pilot.cards) == 1  # one question at a time (issue 29)
    # what each option does to the model, estimated before the card asks (as the panel's card shows)
    assert card.decision.impact is not None and card.decision.impact["status"] == "done"
    chart = card.impact.value
    assert 'data-option="drop"' in chart and "AUROC" in chart and "recommended" in chart
    card.rationale.value = "filed after the outcome"
    with capture_output():
        card.buttons["drop"].click()
    decision = pilot.session.decision(card.decision.id)
    assert (decision.choice, decision.by, decision.rationale) == ("drop", "user", "filed after the outcome")
    step = pilot.session.step(decision.step_id)
    assert step.status == "done" and step.checkpoint_id
    assert "leak" not in shell.user_ns["df"].columns
    assert all(b.disabled for b in card.buttons.values())

    report = markdown(run(shell, "dcreport"))
    assert "decided by the analyst" in report and "filed after the outcome" in report

    # %dcundo with that step's checkpoint restores the variable the step changed
    checkpoints = markdown(run(shell, "dccheckpoints"))
    assert step.checkpoint_id in checkpoints
    run(shell, "dcundo", step.checkpoint_id)
    assert "leak" in shell.user_ns["df"].columns
    assert pilot.session.step(step.id).status == "proposed"  # pending again: the session resumes
    assert all(c.id != step.checkpoint_id for c in pilot.session.checkpoints)
    assert pilot.session.decision(decision.id).choice is None

    # %dcplan carries on: the same decision is asked again (a card), and answering runs the step again
    run(shell, "dcplan", "df --target y --approve ask")
    assert pilot.session.state == "blocked" and magics(shell).pilot is pilot
    card = next(c for c in pilot.cards if c.decision.gate == "leakage")
    assert card.decision.id == decision.id
    assert pilot.session.step(step.id).status == "awaiting_decision"
    with capture_output():
        card.buttons["drop"].click()
    assert pilot.session.step(step.id).status == "done" and "leak" not in shell.user_ns["df"].columns
    assert [h["choice"] for h in pilot.session.decision(decision.id).history] == ["drop"]


def test_no_impact_asks_without_estimating(shell):
    run(shell, "dcplan", "df --target y --approve ask --no-impact")
    pilot = magics(shell).pilot
    with capture_output():
        pilot.cards[0].buttons[pilot.cards[0].decision.recommended].click()
    (card,) = pilot.cards
    assert card.decision.gate == "leakage" and card.decision.impact is None and card.impact.value == ""
    assert pilot.coordinator.estimate_impact is False


def test_dcdecide_answers_without_widgets_and_dcundo_defaults_to_the_last_checkpoint(shell):
    run(shell, "dcplan", "df --target y --no-impact")  # the cards' impact is test_ask_shows_cards_...'s
    pilot = magics(shell).pilot
    task = pilot.session.open_decisions()[0]
    run(shell, "dcdecide", f"{task.id} confirm")
    leakage = pilot.session.open_decisions()[0]
    assert leakage.gate == "leakage"
    with pytest.raises(ValueError, match="unknown option"):
        shell.run_line_magic("dcdecide", f"{leakage.id} nonsense")
    run(shell, "dcdecide", f"{leakage.id} drop")
    assert "leak" not in shell.user_ns["df"].columns
    last = pilot.session.checkpoints[-1].id
    captured = run(shell, "dcundo")
    assert f"`{last}`" in markdown(captured)
    assert last not in {c.id for c in pilot.session.checkpoints}


def test_a_stale_card_never_rewrites_the_decision_log(shell):
    """Issue 29, 1: after the task card was answered and the run went on, "It is regression" on
    that card (shown again, say by %dcstatus in Notebook 7) changed the decision log. The
    in-kernel host refuses a second answer as the server does (409), and says so."""
    df = shell.user_ns["df"]
    shell.user_ns["df"] = df.assign(y=df["y"] + (df["x2"] > 1))  # three codes: another task kind is offered too
    run(shell, "dcplan", "df --target y --approve ask --no-impact")  # the log is checked here, not the impact
    pilot = magics(shell).pilot
    task_card = pilot.cards[0]
    # the codes follow 'x2' in order: regression recommended, classes offered (session 17); either way another kind
    other = next(k for k in ("regression", "classification") if k in task_card.buttons)
    assert task_card.decision.gate == "task"
    with capture_output():
        task_card.buttons["confirm"].click()
    task = pilot.session.decision(task_card.decision.id)
    assert (task.choice, task.via) == ("confirm", "magic")
    assert task_card not in pilot.cards and all(b.disabled for b in task_card.buttons.values())
    assert "Answered: <b>" in task_card.status.value and "takes no other answer" in task_card.status.value
    stale = DecisionCard(task, "Confirm task and target", pilot._choose)  # live buttons, answered question
    with capture_output() as shown:
        stale.buttons[other].click()
    assert "Not recorded" in markdown(shown) and "already answered" in markdown(shown)
    assert (task.choice, task.history) == ("confirm", []) and pilot.session.task.kind != other
    with pytest.raises(UsageError, match="already answered"):
        shell.run_line_magic("dcdecide", f"{task.id} {other}")
    status = markdown(run(shell, "dcstatus"))
    # the question (shown again) names the other kind; the log's answer is the first one only
    assert f"{other} (by" not in status and "confirm (by user)" in status
    assert f"{other} (by" not in markdown(run(shell, "dcreport"))
    # %dcstatus shows a card only for the question asked now (none when none is)
    asked = pilot.session.next_decision()
    assert [c.decision for c in pilot.cards] == ([asked] if asked is not None else [])


def test_a_second_dcplan_resumes_the_same_session_and_new_starts_over(shell):
    run(shell, "dcplan", "df --target y")
    first = magics(shell).pilot
    run(shell, "dcplan", "df --target y")
    assert magics(shell).pilot is first
    run(shell, "dcplan", "df --target y --new")
    assert magics(shell).pilot is not first and magics(shell).pilot.session.decisions[0].choice is None


# --- the in-kernel hosts ----------------------------------------------------------------------

def test_shell_hosts_run_cells_capture_outputs_and_errors(shell):
    import asyncio

    from jupyter_dcpilot.magics import ShellNotebook, ShellProbe
    from jupyter_dcpilot.probe import ProbeError

    bridge = MainThreadBridge()
    notebook = ShellNotebook(shell, bridge)
    with capture_output():
        ok = asyncio.run(notebook.run_cell("print('hi')\nrows = len(df)\nrows", {"dcpilot": {"step": "s1"}}))
        bad = asyncio.run(notebook.run_cell("1 / 0", {}))
    assert ok.error is None and "hi" in ok.text() and "150" in ok.text()
    assert shell.user_ns["rows"] == 150
    assert bad.error["ename"] == "ZeroDivisionError" and bad.error["traceback"]
    assert [c["id"] for c in notebook.cells] == [ok.cell_id, bad.cell_id]
    asyncio.run(notebook.delete_cells([bad.cell_id]))
    assert [c["id"] for c in notebook.cells][:1] == [ok.cell_id]

    # a shell message dispatched while the cell's output is captured sets the parent of the
    # display publisher in place: it must not fail (the message would be lost)
    parented = asyncio.run(notebook.run_cell("get_ipython().display_pub.set_parent({'header': {}})", {}))
    assert parented.error is None, parented.error

    probe = ShellProbe(shell, bridge)
    info = asyncio.run(probe.evaluate("__import__('kernel_tools.probes', fromlist=['_']).frame_info_json(['df'])"))
    assert info["df"]["rows"] == 150 and "leak" in info["df"]["columns"]
    with pytest.raises(ProbeError, match="KeyError"):
        asyncio.run(probe.evaluate("__import__('kernel_tools.probes', fromlist=['_']).report_json('nope')"))
    shell.user_ns.pop("rows")


# --- the bridge between the kernel thread and the engine's loop --------------------------------

def test_bridge_runs_shell_calls_on_the_calling_thread_and_reraises_errors():
    bridge = MainThreadBridge()
    here = threading.get_ident()

    async def work():
        seen = await bridge.call(threading.get_ident)
        return seen, threading.get_ident()

    seen, engine_thread = bridge.run(work)
    assert seen == here and engine_thread != here

    async def fails():
        await bridge.call(lambda: 1 / 0)

    with pytest.raises(ZeroDivisionError):
        bridge.run(fails)
    assert bridge.run(work)[0] == here  # usable again after an error


def test_an_interrupt_on_the_kernel_thread_stops_the_engine_and_reaches_the_user():
    bridge = MainThreadBridge()
    seen: list[str] = []

    def interrupt():
        raise KeyboardInterrupt

    async def work():
        try:
            await bridge.call(interrupt)
        except RuntimeError as exc:  # the engine unwinds normally (its lock is released)
            seen.append(str(exc))
            raise

    with pytest.raises(KeyboardInterrupt):
        bridge.run(work)
    assert seen == ["interrupted by the user"]


def test_an_interrupt_the_engine_is_told_of_lets_it_roll_back_before_it_stops():
    told: list[str] = []
    bridge = MainThreadBridge(on_interrupt=lambda: told.append("stop the step"))
    seen: list[str] = []

    def interrupt():
        raise KeyboardInterrupt

    async def work():
        try:
            await bridge.call(interrupt)
        except Interrupted as exc:  # the call cut short; the engine goes on to put things back
            seen.append(str(exc))
        seen.append(await bridge.call(lambda: "restored"))
        return "idle"

    assert bridge.run(work) == "idle"  # the run ends as the engine says, no KeyboardInterrupt
    assert told == ["stop the step"] and seen == ["interrupted by the user", "restored"]


# --- the same in a real ipykernel (the kernel's own loop is running there) -----------------------

@pytest.mark.slow
def test_in_a_real_kernel_plan_cards_and_clicks_work(tmp_path):
    import os
    from pathlib import Path

    from jupyter_client.manager import start_new_kernel

    import jupyter_dcpilot

    root = str(Path(jupyter_dcpilot.__file__).resolve().parent.parent)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])}
    km, kc = start_new_kernel(kernel_name="python3", cwd=str(tmp_path), env=env)
    try:
        def execute(code):
            streams: list[str] = []
            reply = kc.execute_interactive(code, timeout=120, output_hook=lambda m: streams.append(
                m["content"].get("text", "")) if m["msg_type"] == "stream" else None)
            assert reply["content"]["status"] == "ok", reply["content"]
            return "".join(streams)

        execute("import numpy as np, pandas as pd\n"
                "rng = np.random.default_rng(0); n = 150\n"
                "x1, x2 = rng.normal(size=n), rng.normal(size=n)\n"
                "y = (x1 + rng.normal(size=n) > 0).astype(int)\n"
                "df = pd.DataFrame({'x1': x1, 'x2': x2, 'leak': np.where(rng.random(n) < 0.02, 1 - y, y), 'y': y})\n"
                "%load_ext jupyter_dcpilot\n"
                "%dcplan df --target y")
        out = execute("p = get_ipython().magics_manager.registry['DCPilotMagics'].pilot\n"
                      "p.cards[0].buttons[p.cards[0].decision.recommended].click()\n"
                      "c = p.cards[0]; print(len(p.cards), c.decision.gate, 'data-option=\"drop\"' in c.impact.value)\n"
                      "c.buttons['drop'].click()\n"
                      "d = [d for d in p.session.decisions if d.gate == 'leakage'][0]\n"
                      "print(d.by, p.session.step(d.step_id).status, 'leak' in df.columns)")
        # one card, with its impact chart, in the kernel Notebook 7 and JupyterLab run
        assert out.split() == ["1", "leakage", "True", "user", "done", "False"]
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def test_dcplan_and_dccheck_read_the_codebook(shell, tmp_path):
    from codebook_data import redcap_project

    from kernel_tools.privacy import forget_private

    files = redcap_project(tmp_path / "study", n=120)
    shell.user_ns["df"] = pd.read_csv(files["export"])
    try:
        html = run(shell, "dccheck", f"df --target death --dictionary {files['dictionary']}").outputs[0].data["text/html"]
        assert "hosp_ref" in html and "dictionary.csv, line 8" in html  # only the dictionary says so
        with pytest.raises(UsageError, match="%dcplan: --dictionary .*export.csv: export.csv is not a codebook"):
            shell.run_line_magic("dcplan", f"df --target death --dictionary {files['export']}")
        run(shell, "dcplan", f"df --target death --approve recommended --dictionary {files['dictionary']} "
                             f"--events {files['mapping']}")
        session = magics(shell).pilot.session
        assert session.inputs.dictionary == str(files["dictionary"]) and session.state == "finished"
        assert len(shell.user_ns["df"]) == 120 and "hosp_ref" not in shell.user_ns["df"].columns
        assert "qol_score" not in shell.user_ns["df"].columns
    finally:
        forget_private()
