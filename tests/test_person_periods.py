"""Person-period rows (id, t, E, var...: the event 0 on every row but possibly an entity's last)
are discrete-time survival, asked (issue 26): found from the layout, collapsed to one row per
entity (follow-up = its last period, event = its last row's, covariates from its first), on
generated data and on the development-half table ll_rossi (benchmarks/halves.py) expanded into
one row per week; repeated measures whose target varies stay classification."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import kernel_tools as kt

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import halves  # noqa: E402
from dev_tables import quiet_diagnose, run_recommended  # noqa: E402


def expand(subjects: pd.DataFrame, duration: str, event: str, first: int = 1) -> pd.DataFrame:
    """One row per subject and period ``first`` .. its duration; the event on its last row only."""
    subjects = subjects.reset_index(drop=True)
    subjects.insert(0, "id", np.arange(1, len(subjects) + 1))
    rows = subjects.loc[subjects.index.repeat(subjects[duration].astype(int))].copy()
    rows["t"] = rows.groupby("id").cumcount() + first
    rows["E"] = ((rows["t"] == rows[duration] + first - 1) & (rows[event] == 1)).astype(int)
    return rows.drop(columns=[duration, event]).sample(frac=1, random_state=0).reset_index(drop=True)


def synthetic(n: int = 120, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    periods = np.minimum(rng.geometric(0.15 * np.exp(0.5 * x)), 12)
    event = (periods < 12).astype(int)
    return expand(pd.DataFrame({"x": x.round(3), "group": rng.choice(["a", "b"], n), "months": periods,
                                "died": event}), "months", "died", first=0)


def _rossi(n: int = 150) -> pd.DataFrame:
    from lifelines.datasets import load_rossi

    assert halves.half("ll_rossi") == "dev"
    return expand(load_rossi().sample(n, random_state=0), "week", "arrest")


def test_generated_person_period_rows_are_survival_asked_with_the_layout_as_evidence():
    d = quiet_diagnose(synthetic(), target="E")
    task = d.inference("task")
    assert d.task["kind"] == "survival" and d.task["time"] == "t" and task.confidence == "low"
    assert task.details["person_period"] is True and task.details["id"] == "id" and task.details["period"] == "t"
    assert "rises by one" in task.evidence[0] and "0 on every row before an entity's last" in task.evidence[0]
    assert [a.value for a in task.alternatives] == ["classification"]
    assert d.inference("duration").confidence == "low"


def test_the_question_collapses_to_one_row_per_entity_followed_until_its_last_period():
    df = synthetic(seed=1)
    d = quiet_diagnose(df, target="E")
    finding = d.by_kind("repeated_measurements")[0]
    option = next(o for o in finding.options if o.recommended)
    assert option.action["params"] == {"id": "id", "time": "t", "how": "baseline", "outcome": ["E", "t"]}
    out, _ = kt.aggregate_per_entity(df, **option.action["params"])
    last = df.sort_values(["id", "t"]).groupby("id").last()
    first = df.sort_values(["id", "t"]).groupby("id").first()
    out = out.set_index("id").loc[last.index]
    assert (out["t"] == last["t"]).all() and (out["E"] == last["E"]).all() and (out["x"] == first["x"]).all()


def test_repeated_measures_whose_target_varies_stay_classification():
    rng = np.random.default_rng(2)
    n, visits = 120, 6
    df = pd.DataFrame({"id": np.repeat(np.arange(n), visits), "visit": np.tile(np.arange(1, visits + 1), n),
                       "x": rng.normal(size=n * visits)})
    df["flare"] = (df["x"] + rng.normal(size=len(df)) > 0.5).astype(int)  # 1 then 0 within a subject
    d = quiet_diagnose(df, target="flare")
    assert d.task["kind"] == "classification" and "person_period" not in d.inference("task").details


def test_one_row_per_subject_with_a_0_1_event_and_a_time_stays_plain_survival():
    rng = np.random.default_rng(3)
    df = pd.DataFrame({"id": np.arange(200), "time": rng.integers(1, 60, 200), "status": rng.integers(0, 2, 200),
                       "x": rng.normal(size=200)})
    d = quiet_diagnose(df, target="status")
    assert d.task["kind"] == "survival" and d.inference("task").confidence == "high"


def test_the_dev_table_rossi_expanded_per_week_is_found():
    d = quiet_diagnose(_rossi(), target="E")
    task = d.inference("task")
    assert d.task["kind"] == "survival" and d.task["time"] == "t" and task.confidence == "low"
    assert task.details["id"] == "id"


def test_a_time_may_be_an_outcome_of_the_aggregation_but_not_with_a_landmark():
    df = pd.DataFrame({"id": [1, 1, 2], "t": [1, 2, 1], "E": [0, 1, 0], "x": [5.0, 6.0, 7.0]})
    out, _ = kt.aggregate_per_entity(df, id="id", time="t", how="baseline", outcome=["E", "t"])
    assert out.set_index("id")[["t", "E", "x"]].to_dict("index") == {1: {"t": 2, "E": 1, "x": 5.0},
                                                                    2: {"t": 1, "E": 0, "x": 7.0}}
    with pytest.raises(ValueError, match="time column with a landmark"):
        kt.aggregate_per_entity(df, id="id", time="t", how="last", outcome=["E", "t"], landmark=1)


@pytest.mark.slow
def test_rossi_per_week_under_the_recommended_policy_is_survival_per_subject(tmp_path):
    report = run_recommended(_rossi(), "E", tmp_path)
    assert report["task"]["kind"] == "survival" and report["model"]["metric"] == "c_index"
    assert [s["status"] for s in report["steps"] if s["episode"] == "aggregate"] == ["done"]
    assert {"t", "E", "id"}.isdisjoint(report["model"]["features"]) and "prio" in report["model"]["features"]
    checks = {c["check"]: c for c in report["validity"]}
    assert checks["entities_together"]["passed"] and checks["task_metric"]["passed"]
    assert not checks["structure_confirmed"]["passed"] and report["valid"] is False
    assert "rows are periods of each 'id'" in checks["structure_confirmed"]["detail"]


def test_start_stop_rows_whose_flag_turns_on_are_not_person_periods():
    # a time-varying 0/1 covariate (a transplant) rises by one between an entity's two intervals
    rng = np.random.default_rng(5)
    rows = []
    for i in range(80):
        end = int(rng.integers(5, 60))
        event = int(rng.random() < 0.6)
        if rng.random() < 0.6:
            cut = int(rng.integers(1, end))
            rows += [(i, 0, cut, 0, 0), (i, cut, end, event, 1)]
        else:
            rows.append((i, 0, end, event, 0))
    df = pd.DataFrame(rows, columns=["id", "start", "stop", "event", "transplant"])
    df["age"] = rng.normal(50, 8, len(df)).round(1)
    d = quiet_diagnose(df, target="event")
    assert d.task["kind"] == "survival" and "person_period" not in d.inference("task").details


@pytest.mark.parametrize("seed", range(3))
def test_a_handful_of_entities_is_found_when_every_one_holds_the_layout(seed):
    """Small exports of this layout exist (a few subjects over a few periods): five to nine entities
    are read as person periods only when every row rises by one from the same first period."""
    df = synthetic(n=7, seed=seed)
    assert df["id"].nunique() == 7
    d = quiet_diagnose(df, target="E")
    assert d.task["kind"] == "survival" and d.inference("task").details["person_period"] is True
    assert "7 entities" in d.inference("task").evidence[0]


def test_a_handful_of_entities_that_break_the_layout_once_stay_classification():
    df = synthetic(n=7, seed=0)
    late = df.index[df["id"] == df["id"].iloc[0]]
    gap = df.copy()
    gap.loc[late, "t"] = gap.loc[late, "t"] + np.where(gap.loc[late, "t"] > gap.loc[late, "t"].min(), 1, 0)  # a gap
    shifted = df.copy()
    shifted.loc[late, "t"] += 3  # one entity counted from another first period
    for broken in (gap, shifted):
        d = quiet_diagnose(broken, target="E")
        assert "person_period" not in d.inference("task").details
    few = synthetic(n=4, seed=0)
    assert "person_period" not in quiet_diagnose(few, target="E").inference("task").details


def test_two_events_of_a_small_panel_on_last_rows_by_luck_are_not_person_periods():
    """6 firms x 5 years, an outcome that happened twice, both in a firm's last year: 1 time in 25
    by chance (6 of 30 rows are last rows), too often to read the panel as periods to an event."""
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"firm": np.repeat(np.arange(6), 5), "year": np.tile(np.arange(2001, 2006), 6),
                       "x": rng.normal(size=30).round(2)})
    df["default"] = 0
    df.loc[[4, 19], "default"] = 1  # the last years of firms 0 and 3
    d = quiet_diagnose(df, target="default")
    assert "person_period" not in d.inference("task").details
