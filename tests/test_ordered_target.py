"""An ordered target (no < perhaps < yes, none < mild < severe, 1 < 2 < 3 codes the data follow) is
read as a score by the recommended answer: its levels ranked in a cell (replayed on new data), a
regression judged by R² on the ranks, the verdict's task check naming the ranking, and the task asked.
A class too small to cross-validate under the classes reading sends the run back to the task card.
Binary and named classes stay classification with high confidence; a count stays regression.
(Generated data with other names; real kernels through ``jupyter dcpilot run``.)"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import kernel_tools as kt
from jupyter_dcpilot.cli import main
from jupyter_dcpilot.engine.reask import task_alternative
from jupyter_dcpilot.engine.session import Session
from jupyter_dcpilot.engine.task import Task
from kernel_tools.models import fit_evaluate
from kernel_tools.vocabulary import TaskKind

SEVERITY = ["none", "mild", "moderate", "severe"]


def graded(n: int = 300, labels: list | None = None, seed: int = 0) -> pd.DataFrame:
    """``n`` rows whose ``grade`` follows ``x`` in the order of ``labels`` (numbers 1..k when None)."""
    rng = np.random.default_rng(seed)
    x, z = rng.normal(size=n), rng.normal(size=n)
    k = len(labels) if labels else 3
    cuts = np.quantile(x, np.linspace(0, 1, k + 1)[1:-1])
    level = np.digitize(x + 0.3 * z + rng.normal(scale=0.4, size=n), cuts)
    grade = np.asarray(labels, dtype=object)[level] if labels else level + 1
    return pd.DataFrame(
        {
            "age": rng.normal(50, 10, n).round(),
            "x": x.round(3),
            "z": z.round(3),
            "centre": rng.choice(["north", "south"], n),
            "grade": grade,
        }
    )


@pytest.mark.parametrize(
    "labels",
    [SEVERITY, ["No", "Perhaps", "Yes"], ["nunca", "a veces", "siempre"], ["rarely", "sometimes", "often", "always"]],
)
def test_ordered_labels_recommend_a_regression_on_their_ranks(labels):
    if labels[0] == "nunca":  # a scale in another language: not known, stays the classes' question-free reading
        task = kt.diagnose(graded(labels=labels), target="grade").inference("task")
        assert task.value == "classification"
        return
    diagnosis = kt.diagnose(graded(labels=labels), target="grade")
    task = diagnosis.inference("task")
    assert task.value == "regression" and task.confidence == "low"
    assert [a.value for a in task.alternatives] == ["classification"]
    assert " < ".join(labels) in task.evidence[0]
    assert diagnosis.task["ranks"] == {"column": "grade", "levels": labels}


def test_ordered_codes_the_data_follow_are_a_score_and_unordered_codes_stay_classes():
    frame = graded()
    task = kt.diagnose(frame, target="grade").inference("task")
    assert task.value == "regression" and task.confidence == "low" and "'x'" in task.evidence[0]
    assert "ranks" not in kt.diagnose(frame, target="grade").task  # numbers need no ranking
    shuffled = frame.assign(grade=frame["grade"].map({1: 2, 2: 1, 3: 3}))  # the middle code is not in the middle
    task = kt.diagnose(shuffled, target="grade").inference("task")
    assert task.value == "classification" and task.confidence == "low"


def test_binary_named_classes_and_counts_keep_their_task():
    frame = graded(labels=["cat", "dog", "bird"])
    assert kt.diagnose(frame, target="grade").inference("task").confidence == "high"
    binary = graded(labels=["low", "high"])
    task = kt.diagnose(binary, target="grade").inference("task")
    assert task.value == "classification" and task.confidence == "high"
    rng = np.random.default_rng(3)
    counts = graded().assign(grade=rng.poisson(np.exp(1.5 + 0.5 * graded()["x"])))
    assert kt.diagnose(counts, target="grade").inference("task").value == "regression"


def test_rank_levels_ranks_in_order_and_replays_on_new_data():
    frame = graded(labels=SEVERITY)
    frame.loc[[0, 1], "grade"] = [None, "  "]
    ranked, report = kt.rank_levels(frame, column="grade", levels=SEVERITY)
    assert ranked["grade"].isna().sum() == 2 and set(ranked["grade"].dropna()) == {1, 2, 3, 4}
    assert (ranked.loc[frame["grade"] == "severe", "grade"] == 4).all()
    assert frame["grade"].iloc[5] in SEVERITY  # the input is not changed
    new = pd.DataFrame({"age": [40.0], "x": [0.1], "z": [0.0], "centre": ["north"], "grade": ["mild"]})
    assert report.apply(new)["grade"].tolist() == [2]
    with pytest.raises(ValueError, match="not among its levels"):
        report.apply(new.assign(grade="extreme"))


def test_the_classes_of_ordered_labels_too_small_say_the_ordered_reading():
    frame = graded(labels=SEVERITY)
    frame.loc[[3, 4], "grade"] = "very severe"
    with pytest.raises(ValueError) as info:
        fit_evaluate(frame, target="grade", task="classification")
    message = str(info.value)
    assert (
        "ordered score (regression on their ranks)" in message
        and "none < mild < moderate < severe < very severe" in message
    )
    session = Session(task=Task(kind=TaskKind.CLASSIFICATION, target="grade"))
    assert task_alternative(session, message) == "regression"


def _run(folder: Path, frame: pd.DataFrame, *args: str) -> tuple[dict, dict, str]:
    data = folder / "pain.csv"
    frame.to_csv(data, index=False)
    out = folder / "out"
    assert main(["run", str(data), "--target", "grade", "--approve", "recommended", "--out", str(out), *args]) == 0
    report = json.loads((out / "report.json").read_text())
    session = json.loads((out / ".notebook.ipynb.dcpilot.json").read_text())
    cells = "\n".join("".join(c["source"]) for c in json.loads((out / "notebook.ipynb").read_text())["cells"])
    return report, session, cells


def test_the_recommended_answer_fits_a_regression_on_the_ranks(tmp_path, capsys):
    report, session, cells = _run(tmp_path, graded(labels=SEVERITY))
    assert "kt.rank_levels(df, column='grade', levels=['none', 'mild', 'moderate', 'severe'])" in cells
    assert report["task"]["kind"] == "regression" and report["model"]["metric"] == "r2"
    assert report["model"]["cv_score"] > 0.3
    checks = {c["check"]: c for c in report["validity"]}
    assert checks["task_metric"]["passed"] and "ranks of 'grade'" in checks["task_metric"]["detail"]
    assert not checks["structure_confirmed"]["passed"] and not report["valid"]  # asked: an expert confirms


def test_classes_too_small_under_the_classes_reading_go_back_to_the_task_card(tmp_path, capsys):
    frame = graded(labels=SEVERITY)
    frame.loc[[7, 8, 9], "grade"] = "very severe"  # three rows: two after the split
    report, session, cells = _run(tmp_path, frame, "--task", "classification")
    cards = [d for d in session["decisions"] if d["gate"] == "task"]
    assert [d["choice"] for d in cards] == ["confirm", "regression"] and session["backtracks"] == 1
    assert "ordered score (regression on their ranks)" in cards[1]["question"]
    assert "kt.rank_levels(df, column='grade'" in cells
    assert report["task"]["kind"] == "regression" and report["model"]["metric"] == "r2"
    assert {c["check"]: c["passed"] for c in report["validity"]}["task_metric"]
