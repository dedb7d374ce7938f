"""Another endpoint's (time, indicator) beside the chosen follow-up is during follow-up (issue 26):
a time to progression chosen (death censors it), overall survival and its indicator go on after
it ends, so no bound catches them, and a death does not imply a progression; the duration rules would have offered the time as the follow-up, and the two
times end together where the target is censored. Synthetic cohorts (two endpoints, baseline
look-alikes, a single endpoint that must not change), then development-half tables
(benchmarks/halves.py): survival::mgus2 read from its progression (the other endpoint is death at
futime), and KMsurv::hodg, whose second time (waiting time to transplant) has no indicator."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import halves  # noqa: E402
from dev_tables import dev_rdataset, quiet_diagnose  # noqa: E402


def cohort(n: int = 400, seed: int = 0, os_from_diagnosis: bool = False) -> pd.DataFrame:
    """Time to progression (censored at death or the last contact) and overall survival, each with
    its indicator; and baseline columns, some named like times (since diagnosis, a waiting time)
    or yes/no and prognostic (the treatment)."""
    rng = np.random.default_rng(seed)
    treat = rng.integers(0, 2, n)
    death = rng.exponential(np.where(treat == 1, 40, 25), n)
    progression = rng.exponential(20, n)
    contact = rng.uniform(6, 60, n)
    os_time = np.minimum(death, contact)
    ttp_time = np.minimum(progression, os_time)
    since = rng.uniform(1, 24, n).round(1)
    return pd.DataFrame({
        "age": rng.normal(62, 9, n).round(), "sex": rng.choice(["F", "M"], n), "treat": treat,
        "months_since_diagnosis": since, "wait_days": rng.integers(3, 90, n),
        "ttp_time": ttp_time.round(2) + 0.01, "ttp_status": (progression <= os_time).astype(int),
        "os_time": (os_time + (since if os_from_diagnosis else 0)).round(2) + 0.01,
        "os_status": (death <= contact).astype(int)})


def timeline(d) -> dict[str, tuple[str, str, list[str]]]:
    return {c: (str(e.group), str(e.confidence), [p.test for p in e.evidence]) for c, e in d.timeline.columns.items()}


BASELINE = ("age", "sex", "treat", "months_since_diagnosis", "wait_days")


def test_overall_survival_beside_a_chosen_time_to_progression_is_during_follow_up():
    d = quiet_diagnose(cohort(), target="ttp_status", time="ttp_time")
    placed = timeline(d)
    for c in ("os_time", "os_status"):
        assert placed[c][:2] == ("during_follow_up", "high") and "other_endpoint" in placed[c][2], placed[c]
    (evidence,) = [p for p in d.timeline.columns["os_status"].evidence if p.test == "other_endpoint"]
    assert evidence.reason.startswith("'os_time' with 'os_status' is another endpoint's (time, indicator): "
                                      "the target's alternatives")
    assert "where 'ttp_status' is censored it ends with 'ttp_time' on 100% of rows" in evidence.reason
    assert all(placed[c][0] == "baseline" for c in BASELINE), {c: placed[c] for c in BASELINE}
    leaks = {c for f in d.findings if f.kind == "target_leakage" for c in f.columns}
    assert {"os_time", "os_status"} <= leaks and not leaks & set(BASELINE)


def test_another_endpoint_from_another_origin_is_asked_not_decided():
    d = quiet_diagnose(cohort(os_from_diagnosis=True), target="ttp_status", time="ttp_time")
    placed = timeline(d)
    assert placed["os_time"][:2] == ("during_follow_up", "low") and "other_endpoint" in placed["os_time"][2]
    reason = next(p.reason for p in d.timeline.columns["os_time"].evidence if p.test == "other_endpoint")
    assert "another origin?" in reason
    assert all(placed[c][0] == "baseline" for c in BASELINE)


def test_an_indicator_named_as_an_event_pairs_with_its_time_by_the_data():
    # no shared stem: 'survtime' and 'dead'; the flag's censored rows were followed longer
    df = cohort(seed=1).rename(columns={"os_time": "survtime", "os_status": "dead"})
    placed = timeline(quiet_diagnose(df, target="ttp_status", time="ttp_time"))
    assert placed["survtime"][:2] == ("during_follow_up", "high") and placed["dead"][:2] == ("during_follow_up", "high")
    assert placed["treat"][0] == "baseline"  # yes/no and prognostic, but not named as an event


def test_a_single_endpoint_table_is_unchanged():
    df = cohort(seed=2).drop(columns=["ttp_time", "ttp_status"])
    d = quiet_diagnose(df, target="os_status", time="os_time")
    placed = timeline(d)
    assert all(g == ("baseline", "high", []) for g in placed.values()), placed
    # the chosen overall survival: progression is bounded by it, as before (not another endpoint)
    both = timeline(quiet_diagnose(cohort(seed=2), target="os_status", time="os_time"))
    assert both["ttp_time"][0] == "during_follow_up" and "other_endpoint" not in both["ttp_time"][2]


def test_mgus2_read_from_progression_puts_death_at_futime_during_follow_up():
    df = dev_rdataset("survival", "mgus2")
    d = quiet_diagnose(df, target="pstat", time="ptime")
    placed = timeline(d)
    assert placed["death"][:2] == ("during_follow_up", "high") and "other_endpoint" in placed["death"][2]
    assert placed["futime"][0] in ("during_follow_up", "at_or_after_outcome")
    assert all(placed[c][0] == "baseline" for c in ("age", "sex", "dxyr", "hgb", "creat", "mspike"))
    # read from death, progression is bounded by futime and found as before
    placed = timeline(quiet_diagnose(df, target="death"))
    assert placed["pstat"][0] == "during_follow_up" and "other_endpoint" not in placed["pstat"][2]


def test_hodg_waiting_time_without_an_indicator_stays_baseline():
    assert halves.half("KMsurv/hodg") == "dev"
    df = dev_rdataset("KMsurv", "hodg")
    placed = timeline(quiet_diagnose(df, target="delta", time="time"))
    assert placed["wtime"][0] == "baseline" and not any("other_endpoint" in tests for _, _, tests in placed.values())
