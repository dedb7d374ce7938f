"""A status of two codes whose reading the name or the follow-up puts in doubt (issue 26): the
event coding becomes a question with its evidence (share and median time of each code), the
recommended answer the reading the data support; a name that says the event, or data that agree
with the usual reading, ask nothing. Synthetic cohorts and development-half tables only."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from dev_tables import dev_rdataset, quiet_diagnose


def cohort(n: int = 400, seed: int = 0, end_of_study: bool = True, censored_code: int = 1,
           name: str = "status") -> pd.DataFrame:
    """A cohort whose ``name`` marks the censored with ``censored_code`` (the other code, of 0/1, the
    event): censored at the study's common end (60-80 days after entry), or lost as often and as
    early as events happen (the follow-up then cannot tell the codes apart)."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    event_time = rng.exponential(40 * np.exp(-0.7 * x))
    censor_time = rng.uniform(60, 80, n) if end_of_study else rng.exponential(40 * np.exp(-0.7 * x))
    event = event_time <= censor_time
    return pd.DataFrame({"age": rng.normal(60, 10, n).round(), "marker": x.round(3),
                         "time": np.minimum(event_time, censor_time).round(1) + 0.1,
                         name: np.where(event, 1 - censored_code, censored_code)})


def task_inference(d):
    return next(i for i in d.inferences if i.what == "task")


@pytest.mark.parametrize("given", [True, False])
def test_a_status_whose_event_code_was_followed_longest_is_asked_with_the_data_reading(given):
    d = quiet_diagnose(cohort(), target="status", time="time" if given else None,
                       task="survival" if given else None)
    task = task_inference(d)
    assert d.task["kind"] == "survival" and d.task["censored"] == "1"  # recommended: what the data support
    assert task.confidence == "low"
    assert [a.value for a in task.alternatives][0] == "survival with 0 censored"
    words = " ".join(task.evidence)
    assert "median time" in words and "% of rows" in words and "1 is likely censored" in words
    setup = next(f for f in d.findings if f.kind == "survival_setup")
    assert setup.recommended.action["params"]["censored"] == 1


def test_a_name_that_says_censoring_is_asked_unless_the_follow_up_agrees():
    lost = cohort(end_of_study=False, censored_code=0, name="cens")
    followed = cohort(censored_code=0, name="cens")
    # 'cens' lost as early as events happen: the follow-up does not tell, the usual reading is asked
    task = task_inference(quiet_diagnose(lost, target="cens", time="time", task="survival"))
    assert task.confidence == "low" and "may count censoring" in " ".join(task.evidence)
    # the same name where 0's rows reach the study's end: the usual reading stands, unasked
    assert task_inference(quiet_diagnose(followed, target="cens", time="time", task="survival")).confidence == "given"


def test_a_name_that_says_the_event_is_taken_whatever_the_follow_up():
    d = quiet_diagnose(cohort(name="death"), target="death", time="time", task="survival")
    assert task_inference(d).confidence == "given" and d.task.get("censored") is None


def test_plain_survival_tables_gain_no_question():
    # development-half tables whose 1 = event is plain: by name, or the censored followed longest
    tables = [("boot", "channing", "cens", "time"), ("KMsurv", "bfeed", "delta", "duration"),
              ("Ecdat", "UnempDur", "censor1", "spell"), ("survival", "myeloma", "death", "futime"),
              ("KMsurv", "hodg", "delta", "time")]
    for package, item, target, time in tables:
        d = quiet_diagnose(dev_rdataset(package, item), target=target, time=time)
        assert d.task.get("censored") is None, item
        assert task_inference(d).confidence in ("given", "high"), item


def test_a_documented_censoring_flag_is_asked_with_the_censored_code_recommended():
    # wooldridge::recid: "cens: =1 if duration right censored", beside its observed time 'durat'
    d = quiet_diagnose(dev_rdataset("wooldridge", "recid"), target="cens", time="durat")
    assert d.task["censored"] == "1" and task_inference(d).confidence == "low"
