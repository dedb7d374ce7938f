"""kernel_tools.impact on its own: what each option of a decision does to a refit model."""

from __future__ import annotations

import json
import types

import IPython
import numpy as np
import pandas as pd
import pytest

from jupyter_dcpilot.probe import probe_expression
from kernel_tools import probes
from kernel_tools.impact import ImpactCancelled, ImpactJob, option_impacts, sample_frame

DROP = {"id": "drop", "action": {"function": "drop_columns", "params": {"columns": ["leak"], "reason": "leak"}}}
KEEP = {"id": "keep", "action": None}


def churn(n=600, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    y = (x + rng.normal(size=n) > 0).astype(int)
    return pd.DataFrame({"x": x, "noise": rng.normal(size=n), "city": rng.choice(["a", "b", "c"], n),
                         "leak": np.where(rng.random(n) < 0.03, 1 - y, y), "y": y})


def test_a_leaked_column_shows_in_the_score_the_features_and_the_flags():
    df = churn()
    before = df.copy()
    impacts = option_impacts(df, [DROP, KEEP], target="y", task="classification",
                             flagged={"leakage": ["leak"]})
    drop, keep = impacts["drop"], impacts["keep"]
    assert set(drop) >= {"metric", "mean", "sd", "rows", "columns", "top_features", "flags"}
    assert drop["metric"] == "roc_auc" and len(drop["scores"]) == 5 and drop["sd"] > 0
    assert keep["mean"] > 0.95 > drop["mean"] > 0.6
    assert keep["top_features"][0] == "leak" and "leak" not in drop["top_features"]
    assert drop["columns"] == 4 and keep["columns"] == 5 and drop["rows"] == keep["rows"] == 600
    assert drop["flags"] == [] and any("giving the outcome away: 'leak'" in f for f in keep["flags"])
    assert any("too good to be true" in f for f in keep["flags"])
    pd.testing.assert_frame_equal(df, before)  # pure: the frame is not touched
    again = option_impacts(df, [DROP, KEEP], target="y", task="classification", flagged={"leakage": ["leak"]})
    assert {k: v["scores"] for k, v in again.items()} == {k: v["scores"] for k, v in impacts.items()}


def test_perturbations_keep_each_entity_on_one_side():
    """A feature that only names the entity memorises its outcome: held-out rows of entities seen
    in training would score it near 1, held-out entities score chance."""
    rng = np.random.default_rng(1)
    entities = 150
    y = rng.integers(0, 2, entities)
    code = rng.normal(size=entities)
    rows = np.repeat(np.arange(entities), 6)
    df = pd.DataFrame({"pid": rows, "code": code[rows], "y": y[rows]})
    grouped = option_impacts(df, [KEEP], target="y", task="classification", groups="pid")["keep"]
    by_row = option_impacts(df, [KEEP], target="y", task="classification")["keep"]
    assert grouped["mean"] < 0.65 < 0.85 < by_row["mean"]


def test_post_split_options_remove_rows_only_on_the_training_side():
    df = churn(400)
    df.loc[:9, "x"] = 50.0  # ten extreme values
    options = [{"id": "remove", "action": {"function": "handle_outliers",
                                           "params": {"columns": ["x"], "action": "remove"}}},
               {"id": "clip", "action": {"function": "handle_outliers", "params": {"columns": ["x"], "action": "clip"}}},
               KEEP]
    impacts = option_impacts(df, options, target="y", task="classification", stage="post_split")
    assert impacts["remove"]["rows"] < impacts["clip"]["rows"] == impacts["keep"]["rows"] == 400
    assert all(isinstance(v["mean"], float) for v in impacts.values())


def test_an_option_that_cannot_run_says_why_and_the_others_are_estimated():
    bad = {"id": "bad", "action": {"function": "drop_columns", "params": {"columns": ["nope"]}}}
    evil = {"id": "evil", "action": {"function": "eval", "params": {}}}
    impacts = option_impacts(churn(200), [bad, evil, KEEP], target="y", task="classification")
    assert impacts["bad"]["mean"] is None and "nope" in impacts["bad"]["error"]
    assert "does not refit 'eval'" in impacts["evil"]["error"]
    for impact in (impacts["bad"], impacts["evil"]):  # in words, never "ValueError: ..."
        assert not impact["error"].split(":")[0].endswith("Error"), impact["error"]
    assert isinstance(impacts["keep"]["mean"], float)
    with pytest.raises(ValueError, match="task must be one of"):
        option_impacts(churn(50), [KEEP], target="y", task="ranking")


def test_aggregation_options_are_flagged_when_they_look_past_the_prediction_time():
    rng = np.random.default_rng(2)
    n = 120
    rows = np.repeat(np.arange(n), 3)
    y = rng.integers(0, 2, n)[rows]
    df = pd.DataFrame({"pid": rows, "visit": np.tile([1, 2, 3], n), "lab": rng.normal(size=3 * n) + y, "y": y})
    agg = lambda how: {"id": how, "action": {"function": "aggregate_per_entity",  # noqa: E731
                                             "params": {"id": "pid", "time": "visit", "how": how}}}
    impacts = option_impacts(df, [agg("baseline"), agg("last"), KEEP], target="y", task="classification",
                             flagged={"time_varying": ["lab"]}, index="entity_start")
    assert impacts["baseline"]["flags"] == [] and impacts["baseline"]["rows"] == n
    assert any("'last' of every record" in f for f in impacts["last"]["flags"])
    assert any("every record is a training row" in f for f in impacts["keep"]["flags"])


def test_intervals_are_not_estimated_and_the_card_says_why_in_words():
    """Issue 29, 3: "time-varying Cox: ValueError: 'to_intervals' is not a transform whose impact
    can be estimated" on a card."""
    intervals = {"id": "intervals", "action": {"function": "to_intervals", "params": {"id": "pid"}}}
    impact = option_impacts(churn(200), [intervals, KEEP], target="y", task="classification")["intervals"]
    assert impact["mean"] is None and "Error" not in impact["error"] and "'to_intervals'" not in impact["error"]
    assert impact["error"].startswith("not estimated:") and "time-varying model" in impact["error"]


def test_flags_are_computed_on_the_frame_as_it_is_now():
    """Issue 29, 4: after aggregation to one row per id, "keep" or "skip" on a later card is no
    "every record is a training row", whatever the earlier diagnosis said of time-varying columns."""
    rng = np.random.default_rng(2)
    n = 200
    y = rng.integers(0, 2, n)
    one_row_each = pd.DataFrame({"pid": np.arange(n), "lab": rng.normal(size=n) + y, "y": y})
    impacts = option_impacts(one_row_each, [KEEP], target="y", task="classification", groups="pid",
                             flagged={"time_varying": ["lab"]}, index="entity_start")
    assert not any("every record" in f for f in impacts["keep"]["flags"])


def test_regression_and_survival_use_their_metric():
    rng = np.random.default_rng(3)
    n = 300
    x = rng.normal(size=n)
    reg = pd.DataFrame({"x": x, "z": rng.normal(size=n), "y": 2 * x + rng.normal(size=n)})
    assert option_impacts(reg, [KEEP], target="y", task="regression")["keep"]["metric"] == "r2"
    surv = pd.DataFrame({"x": x, "time": rng.exponential(np.exp(-x)), "event": rng.integers(0, 2, n)})
    result = option_impacts(surv, [KEEP], target="event", task="survival", time="time", perturbations=2)["keep"]
    assert result["metric"] == "c_index" and result["mean"] > 0.55


def test_cancel_stops_before_the_next_fit_and_each_option_is_heard_when_done():
    heard = []
    option_impacts(churn(200), [DROP, KEEP], target="y", task="classification",
                   on_option=lambda k, v: heard.append(k))
    assert heard == ["drop", "keep"]
    with pytest.raises(ImpactCancelled):
        option_impacts(churn(200), [DROP, KEEP], target="y", task="classification", cancel=lambda: True)


def test_the_sample_takes_whole_entities_and_at_most_the_rows_asked():
    df = pd.DataFrame({"pid": np.repeat(np.arange(1000), 5), "v": np.arange(5000)})
    sample = sample_frame(df, "pid", max_rows=1000)
    assert len(sample) <= 1005 and sample.groupby("pid").size().eq(5).all()
    assert list(sample.index) == list(range(len(sample)))
    assert len(sample_frame(df, None, max_rows=700)) == 700


def test_a_job_runs_in_the_background_and_can_be_cancelled():
    job = ImpactJob(churn(300), [DROP, KEEP], target="y", task="classification").start()
    assert job.wait(120) and job.state()["status"] == "done"
    assert set(job.state()["results"]) == {"drop", "keep"}
    cancelled = ImpactJob(churn(300), [DROP, KEEP], target="y", task="classification")
    cancelled.cancel()  # before its first fit
    cancelled.start()
    assert cancelled.wait(60) and cancelled.state()["status"] == "cancelled" and not cancelled.state()["results"]


@pytest.fixture
def user_ns(monkeypatch):
    namespace: dict = {}
    monkeypatch.setattr(IPython, "get_ipython", lambda: types.SimpleNamespace(user_ns=namespace))
    return namespace


def test_the_probes_start_poll_and_cancel_a_job(user_ns):
    user_ns["df"] = churn(300)
    started = json.loads(eval(probe_expression("impact_start_json", "df", [DROP, KEEP], target="y",
                                               task="classification", flagged={"leakage": ["leak"]})))
    assert started["sample_rows"] == 300 and set(user_ns) == {"df"}  # nothing bound in the namespace
    probes._IMPACT_JOBS[started["job"]].wait(120)
    state = json.loads(eval(probe_expression("impact_poll_json", started["job"])))
    assert state["status"] == "done" and state["results"]["keep"]["mean"] > state["results"]["drop"]["mean"]
    assert json.loads(eval(probe_expression("impact_cancel_json", started["job"])))["known"]
    with pytest.raises(KeyError, match="no impact estimate"):
        eval(probe_expression("impact_poll_json", "nope"))


def test_a_job_cancelled_before_its_start_arrives_never_starts(user_ns):
    user_ns["df"] = churn(100)
    assert not json.loads(eval(probe_expression("impact_cancel_json", "early1")))["known"]
    started = json.loads(eval(probe_expression("impact_start_json", "df", [KEEP], job="early1", target="y",
                                               task="classification")))
    assert started["status"] == "cancelled" and "early1" not in probes._IMPACT_JOBS


def test_removing_a_pasted_header_is_estimated_like_any_row_removal():
    import io

    clean = churn()
    half = len(clean) // 2
    pasted = pd.read_csv(io.StringIO(clean.iloc[:half].to_csv(index=False) + clean.iloc[half:].to_csv(index=False)))
    drop_header = {"id": "drop_rows", "action": {"function": "drop_rows",
                                                 "params": {"where": [{c: c for c in clean.columns}]}}}
    impact = option_impacts(pasted, [drop_header], target="y", task="classification")["drop_rows"]
    assert impact.get("error") is None and impact["rows"] == len(clean) and impact["mean"] is not None
