"""The plan-edit magics on a real in-process IPython shell: %dcskip, %dcmove, %dcadd, %dcparams,
%dcreopen, and what each refuses (one line, nothing changed)."""

from __future__ import annotations

import pytest
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output
from test_magics import magics, markdown, run, shell  # noqa: F401 (the shell fixture)


def step_of(session, episode):
    return next(s for s in session.plan if s.episode == episode)


def refused(sh, name, line, words):
    before = magics(sh).pilot.session.to_json()
    with pytest.raises(UsageError, match=words):
        sh.run_line_magic(name, line)
    assert magics(sh).pilot.session.to_json() == before  # nothing changed


def test_skip_move_params_and_their_refusals(shell):  # noqa: F811
    run(shell, "dcplan", "df --target y")
    pilot = magics(shell).pilot
    assert {"dcskip", "dcmove", "dcadd", "dcparams", "dcreopen"} <= set(shell.magics_manager.magics["line"])
    split, explain = step_of(pilot.session, "split"), step_of(pilot.session, "explain")
    refused(shell, "dcskip", split.id, "%dcskip: .*a valid model needs it")
    refused(shell, "dcskip", "s999", "%dcskip: no step 's999'")
    out = markdown(run(shell, "dcskip", f'{explain.id} --why "no time"'))
    assert explain.status == "skipped" and f"skipped {explain.id}" in out and "no time" in out

    added = run(shell, "dcadd", "outliers --columns x1 x2 threshold=3")
    step = pilot.session.step(pilot.session.plan_edits[-1].step)
    assert step.columns == ["x1", "x2"] and step.user_params == {"threshold": 3} and "added" in step.by_user
    assert "added" in markdown(added)
    refused(shell, "dcadd", "outlier", "unknown episode 'outlier'.*did you mean 'outliers'")
    refused(shell, "dcadd", "outliers --columns x9", "'x9' is not a column")
    listing = markdown(run(shell, "dcadd", "--list"))
    assert "| `outliers` |" in listing and "| `custom` |" in listing and "no: custom code" in listing

    run(shell, "dcparams", f"{step.id} method=mad threshold=2.5 columns=x1")
    assert step.user_params == {"threshold": 2.5, "method": "mad", "columns": ["x1"]}
    refused(shell, "dcparams", f"{step.id} threshold=high", "threshold must be a number")
    refused(shell, "dcparams", f"{step.id} thresh=2", "take no parameter 'thresh'.*'threshold'")
    refused(shell, "dcparams", f"{step.id} 2.5", "not key=value")
    refused(shell, "dcmove", f"{step.id} --before {split.id}", "only among the steps of its stage")
    refused(shell, "dcmove", f"{step.id}", "either 'before' or 'after'")
    run(shell, "dcadd", "impute --columns x2 method=median")
    impute = pilot.session.step(pilot.session.plan_edits[-1].step)
    pending = [s.id for s in pilot.session.plan if s.pending]
    assert pending.index(impute.id) < pending.index(step.id)  # imputation comes before outliers
    run(shell, "dcmove", f"{step.id} --before {impute.id}")
    pending = [s.id for s in pilot.session.plan if s.pending]
    assert pending.index(step.id) < pending.index(impute.id)
    report = markdown(run(shell, "dcreport"))
    assert "Plan edits (by the user)" in report and f"skipped {explain.id}" in report


def test_reopen_undoes_a_done_step_in_the_kernel(shell):  # noqa: F811
    run(shell, "dcplan", "df --target y")
    pilot = magics(shell).pilot
    task = pilot.session.open_decisions()[0]
    run(shell, "dcdecide", f"{task.id} confirm")
    leakage = pilot.session.open_decisions()[0]
    refused(shell, "dcreopen", leakage.step_id, "only a done or skipped step can be reopened")
    run(shell, "dcdecide", f"{leakage.id} drop")
    assert "leak" not in shell.user_ns["df"].columns
    with capture_output():
        shell.run_line_magic("dcreopen", leakage.step_id)
    assert "leak" in shell.user_ns["df"].columns
    decision = pilot.session.decision(leakage.id)
    assert decision.history[-1]["choice"] == "drop"
    assert pilot.session.state == "blocked" and pilot.session.open_decisions()[0].id == leakage.id  # asked again
    assert any("### Plan edited by the user with a magic" in c["source"] for c in pilot.notebook.cells
               if c["cell_type"] == "markdown")
