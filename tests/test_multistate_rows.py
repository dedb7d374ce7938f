"""Multi-state rows (a row per possible transition of each subject: from, to, a transition number,
(start, stop], a status; mstate's long layout) are found from the data and asked: the task card
offers the readings (the first transition out of the starting state, recommended and runnable end
to end; one transition, the others censoring; the rows kept), and the run is not valid until a
person chooses. Wide tables (one row per subject) and chained (start, stop] rows are not such rows.
Generated tables with other names; real kernels through ``jupyter dcpilot run``."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import kernel_tools as kt
from jupyter_dcpilot.cli import main

NAMES = {
    "subject": "patient_id",
    "from": "state_from",
    "to": "state_to",
    "trans": "transition",
    "Tstart": "entry",
    "Tstop": "exit",
    "status": "event",
    "time": "sojourn",
}
GERMAN = {
    "subject": "pat",
    "from": "von",
    "to": "nach",
    "trans": "uebergang",
    "Tstart": "beginn",
    "Tstop": "ende",
    "status": "ereignis",
    "time": "dauer",
}


def illness_death(n: int = 300, seed: int = 0, names: dict | None = None) -> pd.DataFrame:
    """Healthy (1) -> ill (2) -> dead (3), and healthy -> dead, in the long layout: a row per possible
    transition out of each state a subject was in, the status 1 on the one made."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        age, arm, marker = round(float(rng.normal(60, 10)), 1), int(rng.integers(0, 2)), round(float(rng.normal()), 2)
        risk = np.exp(0.03 * (age - 60) - 0.5 * arm + 0.4 * marker)
        t_ill, t_die, cens = rng.exponential(8 / risk), rng.exponential(15 / risk), rng.uniform(2, 20)
        base = {"subject": 5000 + i, "age": age, "arm": arm, "marker": marker}
        t1 = min(t_ill, t_die, cens)
        for to, trans, happened in ((2, 1, t1 == t_ill), (3, 2, t1 == t_die)):
            rows.append(
                {
                    **base,
                    "from": 1,
                    "to": to,
                    "trans": trans,
                    "Tstart": 0.0,
                    "Tstop": round(t1, 3),
                    "status": int(happened),
                }
            )
        if t1 == t_ill:
            t2 = t_ill + rng.exponential(5 / risk)
            rows.append(
                {
                    **base,
                    "from": 2,
                    "to": 3,
                    "trans": 3,
                    "Tstart": round(t1, 3),
                    "Tstop": round(min(t2, cens + 5), 3),
                    "status": int(t2 < cens + 5),
                }
            )
    frame = pd.DataFrame(rows)
    frame["time"] = (frame["Tstop"] - frame["Tstart"]).round(3)
    return frame.rename(columns=names or {})


@pytest.mark.parametrize("names", [None, NAMES, GERMAN])
def test_multi_state_rows_are_found_and_asked(names):
    frame = illness_death(names=names)
    n = names or {k: k for k in NAMES}
    diagnosis = kt.diagnose(frame, target=n["status"])
    task = diagnosis.inference("task")
    assert task.value == "survival" and task.confidence == "low"
    found = diagnosis.task["transitions"]
    assert (found["id"], found["start"], found["stop"], found["from"], found["to"], found["trans"]) == (
        n["subject"],
        n["Tstart"],
        n["Tstop"],
        n["from"],
        n["to"],
        n["trans"],
    )
    assert found["initial"] == 1 and found["out_of_initial"] == [2, 3] and found["durations"] == [n["time"]]
    given = kt.diagnose(frame, target=n["status"], time=n["Tstop"], task="survival").inference("task")
    assert given.confidence == "low"  # the user said survival: the rows are still no survival data as they are


def test_wide_and_chained_tables_are_no_multi_state_rows():
    long = illness_death()
    first = long[long["from"] == 1]
    wide = (
        first.groupby("subject")
        .agg(
            age=("age", "first"),
            arm=("arm", "first"),
            marker=("marker", "first"),
            ill_time=("Tstop", "first"),
            death_time=("Tstop", "first"),
        )
        .reset_index()
    )
    wide["ill"] = first[first["to"] == 2].set_index("subject")["status"].reindex(wide["subject"]).to_numpy()
    wide["death"] = first[first["to"] == 3].set_index("subject")["status"].reindex(wide["subject"]).to_numpy()
    assert "transitions" not in kt.diagnose(wide, target="death").task
    rng = np.random.default_rng(1)
    rows = []
    for p in range(150):  # recurrences: chained ('begin', 'end'] intervals, one row each
        t, follow, dose = 0, int(rng.integers(20, 60)), round(float(rng.normal()), 2)
        while t < follow:
            end = min(t + 1 + int(rng.exponential(15)), follow)
            rows.append(
                {
                    "patient": p,
                    "dose": dose,
                    "begin": t,
                    "end": end,
                    "episode": len(rows) % 3,
                    "relapse": int(end < follow),
                }
            )
            t = end
    assert "transitions" not in kt.diagnose(pd.DataFrame(rows), target="relapse").task


def test_first_transition_makes_one_row_per_subject_and_replays():
    frame = illness_death()
    kept = frame.copy()
    out, report = kt.first_transition(
        frame,
        id="subject",
        start="Tstart",
        stop="Tstop",
        state_from="from",
        state_to="to",
        event="status",
        initial=1,
        drop=["trans", "time"],
    )
    assert len(out) == 300 and out["subject"].is_unique
    assert list(out.columns) == ["subject", "age", "arm", "marker", "Tstop", "status"]
    made = frame[(frame["from"] == 1)].groupby("subject")["status"].max()
    assert (out.set_index("subject")["status"] == made).all()
    into_ill, _ = kt.first_transition(
        frame,
        id="subject",
        start="Tstart",
        stop="Tstop",
        state_from="from",
        state_to="to",
        event="status",
        initial=1,
        into=2,
        drop=["trans", "time"],
    )
    ill = frame[(frame["from"] == 1) & (frame["to"] == 2)].set_index("subject")["status"]
    assert (into_ill.set_index("subject")["status"] == ill).all() and into_ill["status"].sum() < out["status"].sum()
    assert report.apply(frame.head(5))["subject"].tolist() == [5000, 5001]
    pd.testing.assert_frame_equal(frame, kept)  # the input is not changed


def test_the_recommended_reading_runs_end_to_end_and_is_not_valid_until_a_person_chooses(tmp_path: Path, capsys):
    data = tmp_path / "states.csv"
    illness_death(names=NAMES).to_csv(data, index=False)
    out = tmp_path / "out"
    assert main(["run", str(data), "--target", "event", "--approve", "recommended", "--out", str(out)]) == 0
    report = json.loads((out / "report.json").read_text())
    session = json.loads((out / ".notebook.ipynb.dcpilot.json").read_text())
    card = next(d for d in session["decisions"] if d["gate"] == "task")
    assert card["choice"] == "multistate:first" and card["recommended"] == "multistate:first"
    assert {"multistate:into:2", "multistate:into:3"} <= {o["id"] for o in card["options"]}
    cells = "\n".join("".join(c["source"]) for c in json.loads((out / "notebook.ipynb").read_text())["cells"])
    assert "kt.first_transition(df, id='patient_id', start='entry', stop='exit'" in cells
    assert report["model"]["metric"] == "c_index" and report["model"]["cv_score"] > 0.6
    assert set(report["model"]["features"]) == {"age", "arm", "marker"}
    checks = {c["check"]: c for c in report["validity"]}
    assert not checks["task_metric"]["passed"] and "approval policy" in checks["task_metric"]["detail"]
    assert not report["valid"]
    answered = tmp_path / "answers.json"
    answered.write_text(json.dumps({"task": "multistate:into:3", "*": "recommended"}))
    out2 = tmp_path / "out2"
    assert main(["run", str(data), "--target", "event", "--approve", str(answered), "--out", str(out2)]) == 0
    report = json.loads((out2 / "report.json").read_text())
    checks = {c["check"]: c for c in report["validity"]}
    assert checks["task_metric"]["passed"] and "transition into 3" in checks["task_metric"]["detail"]
