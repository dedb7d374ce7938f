"""Session 11's first run of new development-half tables: three structures the co-pilot read
silently wrong, each tested on generated cohorts with other names and on a development table.

- a two-valued text status ('alive' / 'dead') next to a follow-up time is survival, not classes;
- a column whose level says whether the row had the event ('censor' / 'death' / 'relapse') is
  the event recorded again, though a C-index alone scores it modestly;
- records of a subject that are its endpoints (one per code, the rest repeating) are asked, not
  pooled as repeated records.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd

from kernel_tools.vocabulary import Confidence

sys.path.insert(0, str(Path(__file__).resolve().parent))
from dev_tables import dev_rdataset, quiet_diagnose  # noqa: E402


def _leaks(d) -> set[str]:
    return {c for f in d.by_kind("target_leakage") for c in f.columns}


def _inference(d, kind: str):
    return next(i for i in d.inferences if str(i.id) == kind or getattr(i.id, "value", None) == kind)


def _waitlist(n: int = 300, seed: int = 0, words: tuple[str, str] = ("alive", "died")) -> pd.DataFrame:
    """Patients on a waiting list: a procedure some receive while followed (its day and a flag),
    the days followed, and the status at the end in words."""
    rng = np.random.default_rng(seed)
    days = rng.gamma(1.5, 200, n).round() + 1
    died = rng.random(n) < 0.6
    got = rng.random(n) < 0.4
    day_of = np.where(got, (days * rng.uniform(0.1, 0.9, n)).round(), np.nan)
    return pd.DataFrame({"pt": np.arange(1, n + 1) * 7, "age_at_listing": rng.normal(50, 9, n).round(),
                         "prior_op": rng.choice(["no", "yes"], n), "op_received": np.where(got, "yes", "no"),
                         "op_day": day_of, "followup_days": days,
                         "vital": np.where(died, words[1], words[0])})


def test_a_text_status_next_to_a_follow_up_time_is_survival():
    d = quiet_diagnose(_waitlist(), target="vital")
    assert d.task["kind"] == "survival" and d.task["time"] == "followup_days"
    assert _inference(d, "task").confidence == Confidence.HIGH  # the words name the event
    assert "op_day" in _leaks(d)  # measured while followed, not at listing
    assert "age_at_listing" not in _leaks(d)


def test_a_text_status_whose_words_do_not_say_the_event_is_asked():
    d = quiet_diagnose(_waitlist(words=("group_a", "group_b")), target="vital")
    assert d.task["kind"] == "survival"
    assert _inference(d, "task").confidence == Confidence.LOW


def test_an_event_that_sorts_first_is_asked():
    # the models read the later of two values as the event: 'deceased' < 'living' must be confirmed
    d = quiet_diagnose(_waitlist(words=("living", "deceased")), target="vital")
    assert _inference(d, "task").confidence == Confidence.LOW


def test_text_classes_beside_a_time_no_name_calls_a_follow_up_stay_classes():
    # openintro's ncbirths: 'low' / 'not low' birth weight beside the 'weeks' of pregnancy
    df = _waitlist(words=("heavy", "light")).rename(columns={"followup_days": "weeks"})
    assert quiet_diagnose(df, target="vital").task["kind"] == "classification"


def test_text_classes_without_a_follow_up_time_stay_classes():
    df = _waitlist().drop(columns=["followup_days", "op_day"])
    assert quiet_diagnose(df, target="vital").task["kind"] == "classification"


def _progressions(n: int = 150, seed: int = 1) -> pd.DataFrame:
    """A cohort in (start, stop] rows: a first interval ending in progression, death or
    censoring, and for those who progressed a second ending in death or censoring; the event's
    type in words beside the 0/1 status. Few are censored: a value that implies the event is then
    no surprise by chance alone, and only the levels deciding the status tell."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        base = {"subj": f"S{i:04d}", "albumin": round(rng.normal(3.5, 0.5), 1), "sex": rng.choice(["f", "m"])}
        first = rng.gamma(2, 400) + 1
        kind = rng.choice(["censored", "died", "progressed"], p=[0.03, 0.5, 0.47])
        rows.append({**base, "t0": 0.0, "t1": round(first), "ended": int(kind != "censored"), "how": kind})
        if kind == "progressed":
            more = rng.gamma(2, 300) + 1
            end = rng.choice(["censored", "died"], p=[0.05, 0.95])
            rows.append({**base, "t0": round(first), "t1": round(first + more), "ended": int(end == "died"),
                         "how": end})
    return pd.DataFrame(rows)


def test_the_type_of_the_event_recorded_beside_the_status_is_a_leak():
    d = quiet_diagnose(_progressions(), target="ended")
    assert d.task["kind"] == "survival"
    assert "how" in _leaks(d)
    assert {"albumin", "sex"}.isdisjoint(_leaks(d))


def test_monoclonal_gammopathy_in_start_stop_rows():
    # survival's mgus1: 'event: a factor containing the event type: censor, death, or plasma cell malignancy'
    d = quiet_diagnose(dev_rdataset("survival", "mgus1"), target="status")
    assert "event" in _leaks(d)
    assert {"age", "sex", "alb", "hgb"}.isdisjoint(_leaks(d))


def _endpoints(n: int = 250, seed: int = 2, visits: bool = False) -> pd.DataFrame:
    """Each patient's two endpoints as two records ('kind' 'a' and 'b'), each with its own event
    and days from the same start; ``visits``: a lab value that changes between the records (two
    visits, not two endpoints)."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        base = {"patient": 1000 + i, "arm": rng.choice(["x", "y"]), "score": int(rng.integers(0, 5)),
                "age": int(rng.normal(60, 10))}
        for kind in ("a", "b"):
            lab = {"lab": round(rng.normal(1, 0.3), 2)} if visits else {}
            rows.append({**base, **lab, "kind": kind, "days": int(rng.gamma(2, 300)) + 1,
                         "event": int(rng.random() < 0.4)})
    return pd.DataFrame(rows)


def test_records_that_are_a_patients_endpoints_are_asked():
    d = quiet_diagnose(_endpoints(), target="event")
    index = _inference(d, "index")
    assert index.confidence == Confidence.LOW
    assert "endpoints" in index.evidence[0]


def test_records_that_measure_something_new_are_not_endpoints():
    d = quiet_diagnose(_endpoints(visits=True), target="event")
    assert "endpoints" not in _inference(d, "index").evidence[0]


def _long_with_labels(n: int = 60, visits: int = 5, seed: int = 3) -> pd.DataFrame:
    """A long table as R's reshape() names its rows: 'subject.visit' (1.1, 1.2, ..., 2.1, ...),
    read back from CSV as numbers with one decimal."""
    rng = np.random.default_rng(seed)
    subject = np.repeat(np.arange(1, n + 1), visits)
    visit = np.tile(np.arange(1, visits + 1), n)
    return pd.DataFrame({"row_label": subject + visit / 10, "unit": subject, "week": visit * 2,
                         "dose": np.repeat(rng.choice([0, 1], n), visits),
                         "grade": rng.integers(1, 4, n * visits)})


def test_entity_dot_record_row_labels_are_identifiers():
    d = quiet_diagnose(_long_with_labels(), target="grade")
    assert "row_label" in {f.columns[0] for f in d.by_kind("id_column")}


def test_distinct_measurements_with_one_decimal_are_not_row_labels():
    df = _long_with_labels()
    df["row_label"] = np.random.default_rng(4).permutation(np.arange(len(df))) / 10 + 30
    assert "row_label" not in {f.columns[0] for f in quiet_diagnose(df, target="grade").by_kind("id_column")}


def test_ordinal_scores_of_a_crossover_trial():
    # geepack's koch: rows named '1.1', '1.2', ... by id and occasion
    d = quiet_diagnose(dev_rdataset("geepack", "koch"), target="y")
    assert "rownames" in {f.columns[0] for f in d.by_kind("id_column")}


def _relapses(n: int = 400, seed: int = 5) -> pd.DataFrame:
    """Relapse (0/1) beside the days to relapse or to the end of follow-up, in a column no name
    calls a time ('gap_rl'); a stage and an age known at diagnosis."""
    rng = np.random.default_rng(seed)
    stage = rng.integers(1, 5, n)
    # relapses come early, mostly within two years; the follow-up runs two to sixteen
    relapses = rng.random(n) < 0.1 * stage
    to_event = np.where(relapses, rng.gamma(2, 200, n), np.inf)
    followed = rng.uniform(300, 6000, n)
    return pd.DataFrame({"case_no": np.arange(n) + 1, "stage": stage, "age_mo": rng.integers(6, 120, n),
                         "wbc": rng.lognormal(2, 0.4, n).round(1), "site": rng.choice(["a", "b", "c"], n),
                         "gap_rl": np.minimum(to_event, followed).round(), "rl": (to_event <= followed).astype(int)})


def test_a_leak_far_shorter_for_the_events_asks_whether_it_is_survival():
    d = quiet_diagnose(_relapses(), target="rl")
    assert d.task["kind"] == "classification"
    task = _inference(d, "task")
    assert task.confidence == Confidence.LOW and task.alternatives[0].value == "survival"


def test_a_plain_classification_stays_confident():
    d = quiet_diagnose(_relapses().drop(columns="gap_rl"), target="rl")
    assert _inference(d, "task").confidence == Confidence.HIGH


def test_a_measurement_that_defines_the_classes_is_not_a_time():
    # a cut of the leak defines the class (a weight under a threshold): no overlap, no follow-up
    df = _relapses()
    df["gap_rl"] = np.where(df["rl"] == 1, df["gap_rl"] % 500, 500 + df["gap_rl"])
    d = quiet_diagnose(df, target="rl")
    assert _inference(d, "task").confidence == Confidence.HIGH


def test_entity_dot_record_row_labels_past_nine_records_are_identifiers():
    # 'subject.visit' with up to 14 visits: read as numbers, '3.10' is 3.1 again (not distinct)
    df = _long_with_labels(n=40, visits=14)
    df["row_label"] = [float(f"{s}.{v}") for s, v in zip(df["unit"], np.tile(np.arange(1, 15), 40))]
    assert df["row_label"].nunique() < len(df)
    assert "row_label" in {f.columns[0] for f in quiet_diagnose(df, target="grade").by_kind("id_column")}


def test_repeated_measurements_with_decimals_in_blocks_are_not_row_labels():
    df = _long_with_labels(n=40, visits=14)
    rng = np.random.default_rng(6)
    df["row_label"] = df["unit"] + rng.integers(1, 10, len(df)) / 10  # a value per row, not a count
    assert "row_label" not in {f.columns[0] for f in quiet_diagnose(df, target="grade").by_kind("id_column")}
