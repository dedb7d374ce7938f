"""Follow-up times of 0 or less next to a status are a question at the survival setup (issue 26):
leave those rows out (recommended) or keep them (the time measured another way, the model then not
valid). Under the recommended answers the run leaves them out and ends in a valid survival model
whose verdict says what was decided. A synthetic cohort (other column names than any real table)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from dev_tables import quiet_diagnose, run_recommended


def cohort(n: int = 240, bad: int = 9, seed: int = 0) -> pd.DataFrame:
    """A plain survival cohort whose ``followup_weeks`` is negative or 0 on ``bad`` rows."""
    rng = np.random.default_rng(seed)
    dose = rng.uniform(0, 10, n).round(1)
    weeks = rng.exponential(30 + 4 * dose).round(1) + 0.5
    df = pd.DataFrame({"participant": [f"P{i:04d}" for i in range(n)], "dose": dose,
                       "bmi": rng.normal(26, 4, n).round(1), "arm": rng.choice(["A", "B"], n),
                       "followup_weeks": weeks, "relapse": (rng.random(n) < 0.6).astype(int)})
    rows = rng.choice(n, bad, replace=False)
    df.loc[rows, "followup_weeks"] = np.where(np.arange(bad) % 3 == 0, 0.0, -rng.uniform(1, 20, bad).round(1))
    return df


def test_nonpositive_times_are_asked_leaving_them_out_recommended():
    df = cohort()
    d = quiet_diagnose(df, target="relapse", time="followup_weeks")
    (setup,) = [f for f in d.findings if f.kind == "survival_setup"]
    assert setup.severity == "critical"
    first = setup.options[0]
    assert first.recommended and first.action["function"] == "drop_rows"
    assert sorted(first.action["params"]["index"]) == sorted(df.index[df["followup_weeks"] <= 0])
    assert [o.recommended for o in setup.options].count(True) == 1
    assert any(o.id == "keep" for o in setup.options)


@pytest.mark.parametrize(("bad", "label"), [(1, "Leave out the row whose 'followup_weeks' is 0 or less"),
                                             (9, "Leave out the 9 rows whose 'followup_weeks' is 0 or less")])
def test_the_option_counts_its_rows_in_words(bad, label):
    df = cohort(bad=bad)
    df.loc[df["followup_weeks"] <= 0, "followup_weeks"] = -3.0  # negative: a lone 0 is no slip to ask about
    d = quiet_diagnose(df, target="relapse", time="followup_weeks")
    (setup,) = [f for f in d.findings if f.kind == "survival_setup"]
    assert setup.options[0].label == label
    assert f"{bad} of 240 rows {'has' if bad == 1 else 'have'} a follow-up time" in setup.options[0].description


def test_a_plain_cohort_keeps_its_single_recommended_survival_model():
    d = quiet_diagnose(cohort(bad=0), target="relapse", time="followup_weeks")
    (setup,) = [f for f in d.findings if f.kind == "survival_setup"]
    assert setup.recommended.id == "keep" and setup.severity != "critical"


@pytest.mark.slow
def test_recommended_run_leaves_the_rows_out_and_ends_valid(tmp_path: Path):
    report = run_recommended(cohort(), "relapse", tmp_path)
    checks = {c["check"]: c for c in report["validity"]}
    assert checks["task_metric"]["passed"], checks["task_metric"]
    assert checks["task_metric"]["detail"] == ("c_index for a survival task; 9 rows whose follow-up time was 0 or "
                                               "less were left out, as decided")
    assert report["valid"] is True, {k: v for k, v in checks.items() if not v["passed"]}


def test_many_nonpositive_times_are_not_offered_row_by_row():
    # 540 rows of 14,400 (3.75%): a cell naming each row is no readable step; the model stays not valid
    df = pd.concat([cohort(seed=s) for s in range(60)], ignore_index=True)
    d = quiet_diagnose(df.assign(participant=[f"P{i:05d}" for i in range(len(df))]), target="relapse",
                       time="followup_weeks")
    (setup,) = [f for f in d.findings if f.kind == "survival_setup"]
    assert setup.severity == "critical" and all(o.action is None or o.action["function"] != "drop_rows"
                                                for o in setup.options)
