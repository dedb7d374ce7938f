"""A column filled only for the rows or entities whose outcome took a given level is recorded at or
after the outcome (issue 26): the subtype of the malignancy a subject progressed to, filled on every
record of the subjects who progressed and on no other. Synthetic long tables in (start, stop]
intervals with an event type beside the status (the pattern decided, nearly decided, or missing
for a baseline group or at random), then the development-half table survival::mgus1."""

from __future__ import annotations

import numpy as np
import pandas as pd
from dev_tables import dev_rdataset, quiet_diagnose


def intervals(n: int = 300, seed: int = 0, filled_others: float = 0.0, missed: float = 0.0) -> pd.DataFrame:
    """Subjects followed from 0: some relapse (then followed on to death or the end, a second
    interval), others die or are censored. ``relapse_grade`` is filled for the subjects who relapse
    (missing for a share ``missed`` of them) and for a share ``filled_others`` of the rest;
    ``smoker_years`` is missing for the women, who relapse more often; ``ferritin`` is missing at
    random."""
    rng = np.random.default_rng(seed)
    rows = []
    for s in range(n):
        woman = rng.random() < 0.5
        relapses = rng.random() < (0.45 if woman else 0.25)
        graded = rng.random() >= missed if relapses else rng.random() < filled_others
        base = {"subject": 1000 + s, "enrol_age": int(rng.integers(40, 85)), "gender": "F" if woman else "M",
                "marker": round(float(rng.normal(3, 1)), 2),
                "smoker_years": np.nan if woman else float(rng.integers(0, 40)),
                "relapse_grade": rng.choice(["I", "II", "III"]) if graded else None}
        first = float(rng.uniform(50, 3000))
        if relapses:
            end = first + float(rng.uniform(50, 2000))
            dies = rng.random() < 0.7
            rows += [{**base, "t0": 0.0, "t1": first, "ended": 1, "kind": "relapse", "seq": 1},
                     {**base, "t0": first, "t1": end, "ended": int(dies), "kind": "died" if dies else "lost", "seq": 2}]
        else:
            dies = rng.random() < 0.6
            rows.append({**base, "t0": 0.0, "t1": first, "ended": int(dies), "kind": "died" if dies else "lost",
                         "seq": 1})
    df = pd.DataFrame(rows)
    df["ferritin"] = rng.normal(100, 30, len(df)).round(1)
    df.loc[rng.random(len(df)) < 0.1, "ferritin"] = np.nan
    return df


def placed(d, column: str) -> tuple[str, str, list[str]]:
    e = d.timeline.columns[column]
    return str(e.group), str(e.confidence), [p.test for p in e.evidence]


def leaks(d) -> set[str]:
    return {c for f in d.findings if f.kind == "target_leakage" for c in f.columns}


def test_a_column_filled_exactly_for_the_entities_with_an_event_type_is_at_or_after_the_outcome():
    df = intervals()
    d = quiet_diagnose(df, target="ended", time="t1")
    assert d.task["id"] == "subject"
    assert placed(d, "relapse_grade")[:2] == ("at_or_after_outcome", "high"), placed(d, "relapse_grade")
    assert "relapse_grade" in leaks(d)
    (p,) = [p for p in d.timeline.columns["relapse_grade"].evidence if p.test == "filled_by_outcome"]
    relapsed = df.loc[df["kind"] == "relapse", "subject"].nunique()
    assert p.reason.startswith(f"filled for {relapsed} of {relapsed} 'subject' values with a row of 'kind' equal to "
                               f"'relapse' and 0 of {df['subject'].nunique() - relapsed} others"), p.reason
    for c in ("enrol_age", "gender", "marker", "smoker_years", "ferritin"):
        assert placed(d, c)[0] == "baseline", (c, placed(d, c))


def test_a_nearly_decided_column_is_asked_not_dropped():
    d = quiet_diagnose(intervals(filled_others=0.03, missed=0.04, seed=1), target="ended", time="t1")
    # constant within a subject says baseline, the pattern says later: the disagreement is asked
    group, confidence, tests = placed(d, "relapse_grade")
    assert confidence == "low" and "filled_by_outcome" in tests and group != "baseline", placed(d, "relapse_grade")
    assert "relapse_grade" not in leaks(d)
    assert "timing:relapse_grade" in {i.id for i in d.inferences if str(i.confidence) == "low"}


def test_mgus1_pcdx_is_filled_only_for_the_subjects_who_progressed():
    d = quiet_diagnose(dev_rdataset("survival", "mgus1"), target="status")
    assert placed(d, "pcdx")[:2] == ("at_or_after_outcome", "high")
    assert "pcdx" in leaks(d)
    assert all(placed(d, c)[0] == "baseline" for c in ("age", "sex", "alb", "creat", "hgb", "mspike"))


def test_a_column_filled_exactly_where_an_event_during_follow_up_happened_is_during_follow_up():
    # one row per subject; the relapse's (time, indicator) is during follow-up, its grade with it
    rng = np.random.default_rng(3)
    n = 400
    death, relapse, contact = rng.exponential(900, n), rng.exponential(700, n), rng.uniform(200, 2000, n)
    end = np.minimum(death, contact)
    relapsed = relapse < end
    df = pd.DataFrame({"enrol_age": rng.integers(30, 80, n), "marker": rng.normal(3, 1, n).round(2),
                       "os_days": end.round(1) + 1, "died": (death <= contact).astype(int),
                       "relapse_days": np.where(relapsed, relapse, end).round(1) + 1, "relapse_flag": relapsed.astype(int),
                       "relapse_grade": np.where(relapsed, rng.choice(["I", "II"], n), None)})
    d = quiet_diagnose(df, target="died", time="os_days")
    group, confidence, tests = placed(d, "relapse_grade")
    assert (group, confidence) == ("during_follow_up", "high") and "relapse_grade" in leaks(d), placed(d, "relapse_grade")
    assert placed(d, "enrol_age")[0] == placed(d, "marker")[0] == "baseline"
