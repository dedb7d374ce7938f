"""End to end with real kernels and the rule planner: the headless job on small generated data."""

from __future__ import annotations

import asyncio
import io
import json

import nbformat
import numpy as np
import pandas as pd
import pytest

from jupyter_dcpilot.cli import run_job
from jupyter_dcpilot.engine import sidecar_io
from jupyter_dcpilot.engine.coordinator import ApprovalPolicy, Coordinator
from jupyter_dcpilot.engine.hosts import HeadlessHost
from jupyter_dcpilot.engine.notebook import load_cell
from jupyter_dcpilot.engine.session import Session, sidecar_path
from jupyter_dcpilot.engine.task import Given, Inputs, Task
from jupyter_dcpilot.probe import probe_expression


def churn_frame(n=400, seed=1):
    rng = np.random.default_rng(seed)
    age = rng.normal(45, 12, n).round()
    income = rng.lognormal(10, 0.4, n).round(2)
    tenure = rng.integers(0, 20, n)
    plan = rng.choice(["basic", "plus", "premium"], n)
    logit = -0.04 * (age - 45) - 0.12 * (tenure - 10) + (plan == "basic") * 0.8 - 0.5
    y = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(int)
    complained = np.where(rng.random(n) < 0.03, 1 - y, y)  # filed after leaving: a target proxy
    df = pd.DataFrame({"customer_id": rng.permutation(np.arange(50_000, 50_000 + n)), "age": age,
                       "income": income, "tenure": tenure, "plan": plan, "complained": complained,
                       "churned": y})
    df.loc[rng.random(n) < 0.1, "age"] = np.nan
    return df


def fast_policy(folder):
    """Recommended options, except label-issue search (cross-validated boosting: slow on 2 cores)."""
    path = folder / "decisions.json"
    path.write_text(json.dumps({"label_issues": "keep", "*": "recommended"}))
    return str(path)


@pytest.fixture(scope="module")
def churn_run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("churn")
    df = churn_frame()
    df.iloc[:320].to_csv(folder / "train.csv", index=False)
    df.iloc[320:].to_csv(folder / "test.csv", index=False)
    log = io.StringIO()
    state, report = asyncio.run(run_job([str(folder / "train.csv")], target="churned", test=str(folder / "test.csv"),
                                        approve=fast_policy(folder), out=str(folder / "out"), stream=log))
    return folder / "out", state, report, log.getvalue()


@pytest.mark.slow
def test_classification_run_is_valid_and_leak_free(churn_run):
    out, state, report, log = churn_run
    assert state == "finished", log
    assert {k: v for k, v in report["task"].items() if k != "index"} == {
        "kind": "classification", "target": "churned", "time": None, "id": None}
    assert report["task"]["index"]["kind"] == "row"  # one row per customer, no dates
    assert report["valid"] is True, report["warnings"]
    assert {"complained", "customer_id"} <= set(report["dropped_columns"])
    features = set(report["model"]["features"])
    assert not features & {"complained", "customer_id", "churned"}
    assert report["model"]["metric"] == "roc_auc"
    assert 0.5 < report["model"]["holdout_score"] < 0.98  # scored on the separate test file
    assert report["dataset"]["rows_in"] == 320 and report["dataset"]["cols_in"] == 7
    on_disk = json.loads((out / "report.json").read_text())
    assert set(on_disk) >= {"dataset", "task", "findings", "steps", "dropped_columns", "model", "valid", "warnings"}
    page = (out / "report.html").read_text()
    # every decision of the run, with its evidence chart and who decided why
    decided = [s for s in report["steps"] if s["decision"]]
    assert page.count('<section class="decision"') == len(decided) > 0
    assert page.count("recommended option (--approve recommended)") + page.count("decisions file") >= 1
    assert "Outcome predicted from one feature alone" in page and "Permutation importance" in page
    leak = next(s for s in report["steps"] if s["episode"] == "remove_leakage")
    assert leak["decision"] == {"choice": "drop", "by": "policy"}
    assert "decided by the approval policy" in log or "drop (by policy)" in log


def test_written_notebook_is_tagged_and_records_decisions(churn_run):
    out, *_ = churn_run
    nb = nbformat.read(out / "notebook.ipynb", as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert "pd.read_csv(" in code[0].source and "import kernel_tools as kt" in code[0].source
    assert all(c.outputs for c in code) and not any(o.output_type == "error" for c in code for o in c.outputs)
    tagged = [c.metadata["dcpilot"] for c in code[1:]]
    assert all(t["step"] and t["episode"] for t in tagged)
    split = next(c for c in code[1:] if c.metadata["dcpilot"]["episode"] == "split")
    assert "test.csv" in split.source and ".apply(test)" in split.source  # pre-split steps replayed
    decisions = [c.source for c in nb.cells if c.cell_type == "markdown" and "Decision (" in c.source]
    assert any("Decision (leakage)" in d and "decided by the approval policy" in d for d in decisions)


def test_session_sidecar_reloads_exactly(churn_run):
    out, *_ = churn_run
    path = sidecar_path(out / "notebook.ipynb")
    session = Session.load(path)
    assert session.state == "finished" and session.checkpoints
    # the file stores each checkpoint's plan and findings once (engine/sidecar_io.py)
    assert Session.from_dict(sidecar_io.expand(json.loads(path.read_text())), path=str(path)) == session


def test_the_first_cell_says_how_to_install_kernel_tools(churn_run):
    import importlib.metadata

    out, *_ = churn_run
    first = nbformat.read(out / "notebook.ipynb", as_version=4).cells[0]
    version = importlib.metadata.version("dcpilot-kernel-tools")  # the distribution that ran it
    assert f'pip install "dcpilot-kernel-tools=={version}"' in first.source.splitlines()[1]
    assert "import kernel_tools as kt" in first.source


@pytest.mark.slow
def test_notebook_reruns_to_the_same_metrics_with_only_kernel_tools(churn_run):
    from nbclient import NotebookClient

    out, _, report, _ = churn_run
    written = nbformat.read(out / "notebook.ipynb", as_version=4)
    nb = nbformat.read(out / "notebook.ipynb", as_version=4)
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(out)}}).execute()

    def model_text(notebook):
        cell = next(c for c in notebook.cells if c.cell_type == "code" and "kt.fit_evaluate(" in c.source)
        return cell.outputs[-1]["data"]["text/plain"]

    assert model_text(nb) == model_text(written)  # same model, same scores
    assert f"{report['model']['holdout_score']:.3f}" in model_text(nb)


def regression_files(folder, seed=2):
    rng = np.random.default_rng(seed)
    n = 300
    ids = [f"P{i:04d}" for i in range(n)]
    bmi = rng.normal(27, 4, n).round(1)
    age = rng.integers(20, 80, n)
    chol = rng.normal(5, 1, n).round(2)
    sex = rng.choice(["F", "f", "M", "m ", "M"], n)  # inconsistent category spellings
    sbp = 90 + 0.6 * age + 1.2 * bmi + 4 * chol + rng.normal(0, 6, n)
    pd.DataFrame({"patient_id": ids, "age": age, "bmi": bmi, "sex": sex, "sbp": sbp.round(1)}).to_csv(
        folder / "patients.csv", index=False)
    pd.DataFrame({"patient_id": ids[::-1], "cholesterol": chol[::-1]}).to_csv(folder / "labs.csv", index=False)


@pytest.mark.slow
def test_regression_with_a_join_of_two_files(tmp_path):
    regression_files(tmp_path)
    state, report = asyncio.run(run_job([str(tmp_path / "patients.csv"), str(tmp_path / "labs.csv")],
                                        target="sbp", approve=fast_policy(tmp_path), out=str(tmp_path / "out"),
                                        stream=io.StringIO()))
    assert state == "finished"
    assert report["task"]["kind"] == "regression" and report["model"]["metric"] == "r2"
    episodes = {s["episode"]: s["status"] for s in report["steps"]}
    assert episodes["join_files"] == "done"
    assert "cholesterol" in report["model"]["features"]  # came from the second file
    assert "patient_id" not in report["model"]["features"]
    assert report["model"]["holdout_score"] > 0.5 and report["valid"] is True


@pytest.mark.slow
async def test_rejected_step_backtracks_in_a_real_kernel(tmp_path):
    df = churn_frame(n=300, seed=3)
    df.to_csv(tmp_path / "data.csv", index=False)
    notebook = tmp_path / "nb.ipynb"
    session = Session(notebook=str(notebook), path=str(sidecar_path(notebook)),
                      task=Task(given=Given(target="churned")), inputs=Inputs(frames=["df"]))
    async with HeadlessHost(notebook) as host:
        await host.run_cell(load_cell([str(tmp_path / "data.csv")], ["df"]), {"dcpilot": {"step": "load"}})
        session.variables["imports"] = True
        coord = Coordinator(session, host, host, policy=ApprovalPolicy.from_spec(fast_policy(tmp_path), files=True))
        assert await coord.run_until_blocked() == "finished"
        first = next(s for s in session.plan if s.episode == "impute" and s.status == "done")
        first_choice = session.decision(first.decision_id).choice
        first_cells = list(first.cell_ids)
        session.reject(first.id, "imputed incomes look implausible")
        assert await coord.run_until_blocked() == "finished"
        second = next(s for s in session.plan if s.episode == "impute" and s.status == "done")
        assert session.step(first.id).status == "undone" and second.id != first.id
        assert session.decision(second.decision_id).choice != first_choice
        assert first_choice in session.exclusions[first.finding_ids[0]]
        ids = {c.id for c in host.notebook.cells}
        assert not set(first_cells) & ids  # the rejected step's cell is gone from the notebook
        shapes = await host.evaluate(probe_expression("frame_info_json", ["train", "test", "model"]))
        assert shapes["model"]["type"] == "ModelReport" and shapes["train"]["rows"] == 240
    assert any(t["kind"] == "backtrack" and "implausible" in t["text"] for t in session.transcript)
    assert Session.load(session.path) == session
