"""The kinds the fifth fresh batch's development half showed (session 16, probe16), each tested on
generated data with other names and on the development table that showed it:

- numbered 0/1 columns that exclude each other (``educ1``, ``educ2``, ``educ3``: the dummies of one
  category) are known together, not later waves of the first (COUNT's mdvis: both dropped as
  follow-up, a false leak flag each);
- a status whose one value is the event (a trial in which every patient died) beside a column named
  as a time is survival with no one censored, asked, not "nothing to predict" (asaur's pancreatic2:
  the run refused its target); without such a time it is still refused, in the kernel and on the
  command line.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from dev_tables import dev_rdataset, quiet_diagnose  # noqa: E402

import kernel_tools as kt  # noqa: E402
from jupyter_dcpilot.inputs import InputError, check_run_inputs  # noqa: E402

DURING, BASELINE = "during_follow_up", "baseline"


def _survey(n: int = 900, seed: int = 0) -> pd.DataFrame:
    """A survey: a three-level smoking status written as its dummies, and a flag asked twice."""
    rng = np.random.default_rng(seed)
    level = rng.choice(3, n, p=[0.35, 0.3, 0.35])
    age = rng.normal(45, 10, n).round()
    visits = rng.poisson(np.exp(0.3 * level + 0.02 * (age - 45)))
    frame = pd.DataFrame({"age": age, "visits": visits})
    for k in range(3):
        frame[f"smoker{k + 1}"] = (level == k).astype(int)
    return frame


def test_the_dummies_of_one_category_are_not_waves():
    d = quiet_diagnose(_survey(), target="visits")
    for c in ("smoker1", "smoker2", "smoker3"):
        assert d.timeline.columns[c].group == BASELINE, c


def test_a_yes_no_measure_asked_again_is_still_a_wave():
    # a flag that is often 1 at both times: the same answer at a later wave, not a level of a category
    rng = np.random.default_rng(1)
    n = 900
    first = rng.integers(0, 2, n)
    again = np.where(rng.random(n) < 0.85, first, 1 - first)
    frame = pd.DataFrame({"age": rng.normal(45, 10, n).round(), "seeking1": first, "seeking2": again,
                          "wage": rng.normal(20, 5, n)})
    d = quiet_diagnose(frame, target="wage")
    assert d.timeline.columns["seeking2"].group == DURING


def test_mdvis_education_dummies_stay_at_baseline():
    d = quiet_diagnose(dev_rdataset("COUNT", "mdvis"), target="numvisit")
    for c in ("educ1", "educ2", "educ3", "age1", "age2", "age3"):
        assert d.timeline.columns[c].group == BASELINE, c
    assert "target_leakage" not in {f.kind for f in d.findings if set(f.columns) & {"educ2", "educ3"}}


def _every_patient_died(n: int = 120, seed: int = 0, time: str = "months") -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    grade = rng.integers(1, 4, n)
    age = rng.normal(62, 9, n).round()
    return pd.DataFrame({"age": age, "grade": grade, time: rng.exponential(12 / grade).round(2) + 0.1,
                         "dead": 1})


def test_a_status_where_everyone_died_is_survival_over_the_time_beside_it_asked():
    d = quiet_diagnose(_every_patient_died(), target="dead")
    assert d.task["kind"] == "survival" and d.task["time"] == "months"
    task = d.inference("task")
    assert task.confidence == "low"
    assert "no one censored" in " ".join(task.evidence)


def test_a_single_value_without_a_time_is_still_nothing_to_predict():
    frame = _every_patient_died().drop(columns="months")
    with pytest.raises(ValueError, match="single value"):
        kt.diagnose(frame, target="dead")
    with pytest.raises(ValueError, match="single value"):
        kt.diagnose(_every_patient_died(), target="dead", task="classification")


def test_a_survival_model_fits_a_status_where_everyone_died():
    frame = _every_patient_died(n=200)
    report = kt.fit_evaluate(frame, target="dead", task="survival", time="months", cv=3)
    assert report.metric == "c_index" and report.cv_score > 0.6  # grade orders the deaths


def test_the_command_line_passes_an_all_events_status_with_a_time_to_the_diagnosis(tmp_path):
    path = tmp_path / "trial.csv"
    _every_patient_died().to_csv(path, index=False)
    assert check_run_inputs([path], target="dead") == []
    _every_patient_died().drop(columns="months").to_csv(path, index=False)
    with pytest.raises(InputError, match="--target 'dead' has the single value '1'"):
        check_run_inputs([path], target="dead")


def test_pancreatic2_is_survival_over_os_with_pfs_during_follow_up():
    d = quiet_diagnose(dev_rdataset("asaur", "pancreatic2"), target="status")
    assert d.task["kind"] == "survival" and d.task["time"] == "os"
    assert d.timeline.columns["pfs"].group == DURING


def test_a_dask_frame_where_everyone_died_is_diagnosed_as_the_in_memory_one():
    """The lazy diagnosis refused an all-events status as 'nothing to predict' before its sample
    reached the task's inference, which reads it as survival with no one censored, asked."""
    dd = pytest.importorskip("dask.dataframe")
    frame = _every_patient_died(n=400)
    d = kt.diagnose(dd.from_pandas(frame, npartitions=3), target="dead")
    assert d.task["kind"] == "survival" and d.task["time"] == "months"
    assert d.inference("task").confidence == "low"
    with pytest.raises(ValueError, match="single value"):
        kt.diagnose(dd.from_pandas(frame.drop(columns="months"), npartitions=3), target="dead")
