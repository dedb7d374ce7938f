"""Columns that need the same action are one step and one question (real kernel, ``jupyter
dcpilot run``): a wide table with 25 mostly-missing columns is "Drop 25 mostly-missing columns",
and two such columns stay two steps."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from jupyter_dcpilot.cli import main


def wide(folder: Path, sparse: int) -> Path:
    """400 rows: 10 measured columns, ``sparse`` columns 90% missing, a 0/1 outcome of the first."""
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(rng.normal(size=(400, 10)), columns=[f"m{i}" for i in range(10)])
    for i in range(sparse):
        values = rng.normal(size=400)
        values[rng.random(400) < 0.9] = np.nan
        frame[f"sparse_{i}"] = values
    frame["y"] = (frame["m0"] + rng.logistic(size=400) > 0).astype(int)
    path = folder / f"wide_{sparse}.csv"
    frame.to_csv(path, index=False)
    return path


def run(folder: Path, sparse: int) -> tuple[dict, dict]:
    out = folder / f"out_{sparse}"
    assert main(["run", str(wide(folder, sparse)), "--target", "y", "--approve", "recommended",
                 "--out", str(out)]) == 0
    return (json.loads((out / "report.json").read_text()),
            json.loads((out / ".notebook.ipynb.dcpilot.json").read_text()))


def test_twenty_five_mostly_missing_columns_are_one_step_and_one_question(tmp_path, capsys):
    report, session = run(tmp_path, 25)
    sparse = {f"sparse_{i}" for i in range(25)}
    grouped = [st for st in session["plan"] if set(st["columns"]) & sparse]
    assert [st["title"] for st in grouped] == ["Drop 25 mostly-missing columns"]  # the answer's words, with its reason
    assert grouped[0]["status"] == "done" and len(grouped[0]["finding_ids"]) == 25
    questions = [d for d in session["decisions"] if d["gate"] == "imputation"]
    assert len(questions) == 1 and questions[0]["choice"] == "drop"
    assert questions[0]["question"].startswith("25 columns need the same decision (sparse_0, sparse_1")
    drop = next(o for o in questions[0]["options"] if o["id"] == "drop")
    assert drop["label"] == "Drop 25 mostly-missing columns" and set(drop["action"]["params"]["columns"]) == sparse
    assert sparse <= set(report["dropped_columns"]) and report["valid"]
    assert not sparse & set(report["model"]["features"])


def test_two_alike_columns_stay_two_questions(tmp_path, capsys):
    _, session = run(tmp_path, 2)
    titles = [st["title"] for st in session["plan"] if st["episode"] == "impute"]
    # what was chosen and why, as the group's "Drop 25 mostly-missing columns"; not "Impute missing values"
    assert titles == ["Drop sparse_0 (mostly missing)", "Drop sparse_1 (mostly missing)"]
