"""The kinds the fifth fresh batch's development half showed (session 16, probe16), each tested on
generated data with other names and on the development table that showed it:

- numbered 0/1 columns that exclude each other (``educ1``, ``educ2``, ``educ3``: the dummies of one
  category) are known together, not later waves of the first (COUNT's mdvis: both dropped as
  follow-up, a false leak flag each);
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from dev_tables import dev_rdataset, quiet_diagnose  # noqa: E402

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
