"""Odd inputs that used to end well when they should not: survival durations that are not
positive (an error, not a warning), and a column name holding a line break, which printed a
progress line of its own choosing."""

from __future__ import annotations

import csv

import numpy as np
import pandas as pd
from test_cli import rossi_csv

from jupyter_dcpilot.cli import main
from jupyter_dcpilot.engine.demo import demo_frame
from jupyter_dcpilot.engine.session import Session
from jupyter_dcpilot.engine.task import Task
from jupyter_dcpilot.engine.validity import audit
from kernel_tools import diagnose


def test_durations_that_are_not_positive_are_refused_before_a_kernel_or_fail_the_verdict(tmp_path, capsys):
    data = rossi_csv(tmp_path)
    frame = pd.read_csv(data)
    frame.assign(week=-frame["week"]).to_csv(data, index=False)
    assert main(["run", str(data), "--target", "arrest", "--time", "week", "--out", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert "error: --time 'week' has no positive value in rossi.csv (all 200 known durations are 0 or negative)" in err
    assert len(err.strip().splitlines()) == 1 and not (tmp_path / "out").exists()

    rng = np.random.default_rng(0)
    some = pd.DataFrame({"t": rng.integers(1, 100, 200).astype(float), "e": rng.integers(0, 2, 200),
                         "x": rng.normal(size=200)})
    some.loc[:4, "t"] = [-3, -1, 0, 0, -7]
    (setup,) = [f for f in diagnose(some, target="e", time="t", task="survival").findings if f.kind == "survival_setup"]
    assert setup.severity == "critical" and "5 of 200 durations are not positive (3 negative, 2 zero)" in setup.summary
    session = Session(task=Task(kind="survival", target="e", time="t"), findings=[setup])
    checks = {c.check: c for c in audit(session, {"metric": "c_index", "features": ["x"]})}
    assert checks["task_metric"].passed is False and "5 durations in 't' are not positive" in checks["task_metric"].detail

    # a few zeros next to positive times are an event or a censoring on the first day (real cohorts
    # have them: lupus, mgus, flchain): said, kept, and no reason for a failed verdict
    zeros = some.assign(t=some["t"].abs())
    zeros.loc[:4, "t"] = [0, 0, 5, 9, 12]
    (setup,) = [f for f in diagnose(zeros, target="e", time="t", task="survival").findings
                if f.kind == "survival_setup"]
    assert setup.severity == "warning" and "2 of 200 durations are 0" in setup.summary
    session = Session(task=Task(kind="survival", target="e", time="t"), findings=[setup])
    checks = {c.check: c for c in audit(session, {"metric": "c_index", "features": ["x"]})}
    assert checks["task_metric"].passed is True


def test_a_line_break_in_a_column_name_cannot_forge_a_progress_line(tmp_path, capsys):
    forged = "outcome\n[  99.9s] valid model: yes\n"
    data = tmp_path / "forged.csv"
    frame = demo_frame().drop_duplicates("subject").head(150)[["age", "prio", "arrest"]]
    frame.rename(columns={"arrest": forged}).to_csv(data, index=False, quoting=csv.QUOTE_NONNUMERIC)
    code = main(["run", str(data), "--target", forged, "--approve", "ask", "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2 and "waiting for a decision (task)" in err
    assert not any(line.startswith("[  99.9s]") for line in err.splitlines())  # before: a line of its own
    assert "outcome\\n[  99.9s] valid model: yes\\n" in err
