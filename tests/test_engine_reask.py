"""A failed step is a question, not an end: a step that fails because of the task sends the run
back to the task card (real kernels, ``jupyter dcpilot run``), and what a user reads says values
as people write them (no ``np.int64(6)``, no ``np.True_``)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import kernel_tools as kt
from jupyter_dcpilot.cli import main
from jupyter_dcpilot.engine.errors import cell_error, in_words
from kernel_tools.models import fit_evaluate

NUMPY_REPR = re.compile(r"\bnp\.\w+\(|\bnp\.(True|False)_")


def strings(value: Any) -> list[str]:
    """Every string in a JSON value (keys included)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in [str(k), *strings(v)]]
    if isinstance(value, list):
        return [s for v in value for s in strings(v)]
    return []


def shown_to_a_user(out: Path) -> list[str]:
    """What a person reads of a run: the report, the session's transcript, questions, warnings
    and step errors, and the notebook's markdown."""
    report = json.loads((out / "report.json").read_text())
    session = json.loads((out / ".notebook.ipynb.dcpilot.json").read_text())
    notebook = json.loads((out / "notebook.ipynb").read_text())
    shown = strings(report) + strings(session["transcript"]) + strings(session["decisions"])
    shown += strings(session["warnings"]) + [st.get("error") or "" for st in session["plan"]]
    return shown + ["".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "markdown"]


def scores(folder: Path, tiny: Any, name: str) -> Path:
    """300 rows whose target takes 0-5 often and ``tiny`` on three rows (two after the split)."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(300, 3))
    y = np.clip(np.round(2.5 + 1.2 * x[:, 0] + rng.normal(size=300) * 0.5), 0, 5).astype(int).astype(object)
    y[[7, 8, 9]] = tiny
    path = folder / f"{name}.csv"
    pd.DataFrame(x, columns=["a", "b", "c"]).assign(**{name: y}).to_csv(path, index=False)
    return path


def test_numpy_reprs_are_said_as_values():
    message = "class np.int64(6) has a single row; flagged np.True_ at np.float64(0.5)"
    assert cell_error("ValueError", message) == "class 6 has a single row; flagged True at 0.5"
    assert in_words(ValueError(message), "training") == "training failed: class 6 has a single row; flagged True at 0.5"


def test_a_class_too_small_to_cross_validate_is_said_in_words_with_what_to_do(tmp_path):
    frame = pd.read_csv(scores(tmp_path, 6, "score")).drop(index=[9])
    with pytest.raises(ValueError) as info:
        fit_evaluate(frame, target="score", task="classification")
    assert str(info.value).startswith("1 class has too few rows to cross-validate: 6 (2 rows); each class needs at least 3")
    assert "ordered score (regression)" in str(info.value)
    named = frame.assign(score=frame["score"].map(lambda v: f"grade {v}"))
    with pytest.raises(ValueError) as info:
        fit_evaluate(named, target="score", task="classification")
    assert "'grade 6' (2 rows)" in str(info.value) and "regression" not in str(info.value)
    event = frame.assign(score=(frame["score"] == 6).astype(int))  # two codes: an event, no ordered score
    with pytest.raises(ValueError) as info:
        fit_evaluate(event, target="score", task="classification")
    assert "1 (2 rows)" in str(info.value) and "regression" not in str(info.value)


def test_a_class_too_small_sends_the_run_back_to_the_task_question(tmp_path, capsys):
    """An ordered 0-6 score taken for seven classes (as asked) fails to cross-validate: the run
    goes back, asks the task card again with the failure in words, and (recommended) regression
    finishes it."""
    data = scores(tmp_path, 6, "score")
    out = tmp_path / "out"
    code = main(["run", str(data), "--target", "score", "--task", "classification", "--approve", "recommended",
                 "--out", str(out)])
    assert code == 0
    report = json.loads((out / "report.json").read_text())
    assert report["task"]["kind"] == "regression" and report["model"]["metric"] == "r2" and report["valid"]
    session = json.loads((out / ".notebook.ipynb.dcpilot.json").read_text())
    task_cards = [d for d in session["decisions"] if d["gate"] == "task"]
    assert [d["choice"] for d in task_cards] == ["confirm", "regression"]
    again = task_cards[1]
    assert again["question"].startswith("Train and evaluate failed because of the task: 1 class has too few rows "
                                        "to cross-validate: 6 (2 rows)")
    assert again["recommended"] == "regression" and session["backtracks"] == 1
    assert any(t["kind"] == "backtrack" and "the task is asked again" in t["text"] for t in session["transcript"])
    leaked = [s for s in shown_to_a_user(out) if NUMPY_REPR.search(s)]
    assert not leaked, leaked[:3]


@pytest.mark.slow
def test_named_classes_too_rare_stop_the_run_with_the_failure_in_words(tmp_path, capsys):
    """No other task would do for named classes: the run stops, saying which class and what to do."""
    data = scores(tmp_path, "rare", "grade")
    frame = pd.read_csv(data)
    frame.assign(grade=frame["grade"].map(lambda v: v if v == "rare" else f"g{v}")).to_csv(data, index=False)
    out = tmp_path / "out"
    assert main(["run", str(data), "--target", "grade", "--approve", "recommended", "--out", str(out)]) == 1
    session = json.loads((out / ".notebook.ipynb.dcpilot.json").read_text())
    assert session["backtracks"] == 0
    assert any("'rare' (2 rows)" in w and "merge the rare classes" in w for w in session["warnings"])
    leaked = [s for s in shown_to_a_user(out) if NUMPY_REPR.search(s)]
    assert not leaked, leaked[:3]


def recurrent(folder: Path, n: int = 120, seed: int = 0) -> Path:
    """Recurrent relapses as ('begin', 'end'] intervals of each 'patient' (a higher 'dose', sooner);
    two intervals span no time (a relapse recorded at the start of follow-up, a slip)."""
    rng = np.random.default_rng(seed)
    rows = []
    for p in range(n):
        dose, grade, t, follow = round(float(rng.normal()), 3), int(rng.integers(1, 4)), 0, int(rng.integers(20, 60))
        while True:
            end = min(t + max(1, int(rng.exponential(25 / np.exp(0.6 * dose)))), follow)
            rows.append({"patient": 1000 + p, "dose": dose, "grade": grade, "begin": t, "end": end,
                         "relapse": int(end < follow)})
            if end >= follow:
                break
            t = end
    frame = pd.DataFrame(rows)
    frame.loc[[0, 40], "end"] = frame.loc[[0, 40], "begin"]
    path = folder / "relapses.csv"
    frame.to_csv(path, index=False)
    return path


def test_intervals_that_span_no_time_are_left_out_by_a_rule():
    frame = pd.DataFrame({"begin": [0, 5, 3, np.nan], "end": [0, 9, 2, 4], "x": [1, 2, 3, 4]})
    out, report = kt.drop_empty_intervals(frame, start="begin", stop="end")
    assert out.index.tolist() == [1, 3] and report.details["rows_removed"] == 2  # a missing start is kept
    kept, report = kt.drop_empty_intervals(out, start="begin", stop="end")
    assert kept.equals(out) and "nothing was left out" in report.warnings[0]


def test_intervals_that_span_no_time_send_the_run_back_to_the_repeated_rows_question(tmp_path, capsys):
    """Rows kept as intervals for the time-varying model, two of which span no time: the model
    fails, the run goes back to the repeated rows' question with the failure in words, and
    (recommended) leaving those rows out gives a model whose verdict says so."""
    out = tmp_path / "out"
    code = main(["run", str(recurrent(tmp_path)), "--target", "relapse", "--approve", "recommended",
                 "--planner", "rules", "--out", str(out)])
    assert code == 0
    report = json.loads((out / "report.json").read_text())
    assert report["model"]["metric"] == "c_index" and report["task"]["kind"] == "survival"
    session = json.loads((out / ".notebook.ipynb.dcpilot.json").read_text())
    layout = [d for d in session["decisions"] if d["gate"] == "aggregation"]
    assert [d["choice"] for d in layout] == ["keep", "drop_empty_intervals"] and session["backtracks"] == 1
    assert layout[1]["question"].startswith("Train and evaluate failed because of intervals that span no time: ")
    assert "'begin' >= 'end'" in layout[1]["question"]
    # the step says what its answer did, not the question it asked ("Aggregate repeated measurements")
    (step,) = [st for st in session["plan"] if st["id"] == layout[1]["step_id"]]
    assert step["title"].startswith("Keep the intervals, leave out those that span no time")
    known = next(c for c in report["validity"] if c["check"] == "known_at_index")
    assert known["passed"] and "2 rows whose stop was at or before their start were left out" in known["detail"]
    leaked = [s for s in shown_to_a_user(out) if NUMPY_REPR.search(s)]
    assert not leaked, leaked[:3]


def test_a_join_whose_keys_never_meet_is_asked_again_and_not_joining_goes_on(tmp_path, capsys):
    """Two files whose 'visit_code' values never meet: the join fails in words (it would add only
    missing values), is asked again with "keep separate" recommended, and the run ends in a model
    of the first file's columns."""
    rng = np.random.default_rng(4)
    first = pd.DataFrame({"visit_code": np.arange(300, 500), "weight": rng.normal(70, 9, 200).round(1),
                          "smoker": rng.choice(["yes", "no"], 200)})
    first["readmitted"] = (first["weight"] + rng.normal(0, 9, 200) > 70).astype(int)
    labs = pd.DataFrame({"visit_code": np.arange(800, 1000), "sodium": rng.normal(140, 3, 200).round()})
    first.to_csv(tmp_path / "visits.csv", index=False)
    labs.to_csv(tmp_path / "labs.csv", index=False)
    with pytest.raises(ValueError, match="no value of 'visit_code' matches between the two frames"):
        kt.join_frames(first, labs, on="visit_code")
    out = tmp_path / "out"
    code = main(["run", str(tmp_path / "visits.csv"), str(tmp_path / "labs.csv"), "--target", "readmitted",
                 "--approve", "recommended", "--planner", "rules", "--out", str(out)])
    assert code == 0
    session = json.loads((out / ".notebook.ipynb.dcpilot.json").read_text())
    joins = [d for d in session["decisions"] if d["gate"] == "join"]
    assert joins[-1]["choice"] == "keep" and joins[-1]["question"].startswith("Left-join labs failed because of the join: ")
    report = json.loads((out / "report.json").read_text())
    assert report["model"]["metric"] and "sodium" not in report["model"]["features"]
    leaked = [s for s in shown_to_a_user(out) if NUMPY_REPR.search(s)]
    assert not leaked, leaked[:3]
