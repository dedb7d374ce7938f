"""Person-period rows (id, t, E, var...: the event 0 on every row but possibly an entity's last)
are discrete-time survival, asked (issue 26): found from the layout, collapsed to one row per
entity (follow-up = its last period, event = its last row's, covariates from its first), on
generated data and on the development-half table ll_rossi (benchmarks/halves.py) expanded into
one row per week; repeated measures whose target varies stay classification. Small tables too
(5-10 entities, lifelines' panel shape ``id, t, E, var``): the layout must then hold for every
entity and the events' fall on last rows be unlikely by chance; the kinds that look alike (a
target that varies or recurs, an event on a middle row, periods that skip, one period per entity,
an outcome read at the end of a balanced panel) are not found."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import kernel_tools as kt

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import halves  # noqa: E402
from dev_tables import quiet_diagnose, run_recommended  # noqa: E402


def expand(subjects: pd.DataFrame, duration: str, event: str, first: int = 1, shuffle: bool = True) -> pd.DataFrame:
    """One row per subject and period ``first`` .. its duration; the event on its last row only."""
    subjects = subjects.reset_index(drop=True)
    subjects.insert(0, "id", np.arange(1, len(subjects) + 1))
    rows = subjects.loc[subjects.index.repeat(subjects[duration].astype(int))].copy()
    rows["t"] = rows.groupby("id").cumcount() + first
    rows["E"] = ((rows["t"] == rows[duration] + first - 1) & (rows[event] == 1)).astype(int)
    rows = rows.drop(columns=[duration, event])
    return (rows.sample(frac=1, random_state=0) if shuffle else rows).reset_index(drop=True)


def synthetic(n: int = 120, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    periods = np.minimum(rng.geometric(0.15 * np.exp(0.5 * x)), 12)
    event = (periods < 12).astype(int)
    return expand(pd.DataFrame({"x": x.round(3), "group": rng.choice(["a", "b"], n), "months": periods,
                                "died": event}), "months", "died", first=0)


def _rossi(n: int = 150) -> pd.DataFrame:
    from lifelines.datasets import load_rossi

    assert halves.half("ll_rossi") == "dev"
    return expand(load_rossi().sample(n, random_state=0), "week", "arrest")


def test_generated_person_period_rows_are_survival_asked_with_the_layout_as_evidence():
    d = quiet_diagnose(synthetic(), target="E")
    task = d.inference("task")
    assert d.task["kind"] == "survival" and d.task["time"] == "t" and task.confidence == "low"
    assert task.details["person_period"] is True and task.details["id"] == "id" and task.details["period"] == "t"
    assert "rises by one" in task.evidence[0] and "0 on every row before an entity's last" in task.evidence[0]
    assert [a.value for a in task.alternatives] == ["classification"]
    assert d.inference("duration").confidence == "low"


def test_the_question_collapses_to_one_row_per_entity_followed_until_its_last_period():
    df = synthetic(seed=1)
    d = quiet_diagnose(df, target="E")
    finding = d.by_kind("repeated_measurements")[0]
    option = next(o for o in finding.options if o.recommended)
    assert option.action["params"] == {"id": "id", "time": "t", "how": "baseline", "outcome": ["E", "t"]}
    out, _ = kt.aggregate_per_entity(df, **option.action["params"])
    last = df.sort_values(["id", "t"]).groupby("id").last()
    first = df.sort_values(["id", "t"]).groupby("id").first()
    out = out.set_index("id").loc[last.index]
    assert (out["t"] == last["t"]).all() and (out["E"] == last["E"]).all() and (out["x"] == first["x"]).all()


def test_repeated_measures_whose_target_varies_stay_classification():
    rng = np.random.default_rng(2)
    n, visits = 120, 6
    df = pd.DataFrame({"id": np.repeat(np.arange(n), visits), "visit": np.tile(np.arange(1, visits + 1), n),
                       "x": rng.normal(size=n * visits)})
    df["flare"] = (df["x"] + rng.normal(size=len(df)) > 0.5).astype(int)  # 1 then 0 within a subject
    d = quiet_diagnose(df, target="flare")
    assert d.task["kind"] == "classification" and "person_period" not in d.inference("task").details


def test_one_row_per_subject_with_a_0_1_event_and_a_time_stays_plain_survival():
    rng = np.random.default_rng(3)
    df = pd.DataFrame({"id": np.arange(200), "time": rng.integers(1, 60, 200), "status": rng.integers(0, 2, 200),
                       "x": rng.normal(size=200)})
    d = quiet_diagnose(df, target="status")
    assert d.task["kind"] == "survival" and d.inference("task").confidence == "high"


def test_the_dev_table_rossi_expanded_per_week_is_found():
    d = quiet_diagnose(_rossi(), target="E")
    task = d.inference("task")
    assert d.task["kind"] == "survival" and d.task["time"] == "t" and task.confidence == "low"
    assert task.details["id"] == "id"


def test_a_time_may_be_an_outcome_of_the_aggregation_but_not_with_a_landmark():
    df = pd.DataFrame({"id": [1, 1, 2], "t": [1, 2, 1], "E": [0, 1, 0], "x": [5.0, 6.0, 7.0]})
    out, _ = kt.aggregate_per_entity(df, id="id", time="t", how="baseline", outcome=["E", "t"])
    assert out.set_index("id")[["t", "E", "x"]].to_dict("index") == {1: {"t": 2, "E": 1, "x": 5.0},
                                                                    2: {"t": 1, "E": 0, "x": 7.0}}
    with pytest.raises(ValueError, match="time column with a landmark"):
        kt.aggregate_per_entity(df, id="id", time="t", how="last", outcome=["E", "t"], landmark=1)


@pytest.mark.slow
def test_rossi_per_week_under_the_recommended_policy_is_survival_per_subject(tmp_path):
    report = run_recommended(_rossi(), "E", tmp_path)
    assert report["task"]["kind"] == "survival" and report["model"]["metric"] == "c_index"
    assert [s["status"] for s in report["steps"] if s["episode"] == "aggregate"] == ["done"]
    assert {"t", "E", "id"}.isdisjoint(report["model"]["features"]) and "prio" in report["model"]["features"]
    checks = {c["check"]: c for c in report["validity"]}
    assert checks["entities_together"]["passed"] and checks["task_metric"]["passed"]
    assert not checks["structure_confirmed"]["passed"] and report["valid"] is False
    assert "rows are periods of each 'id'" in checks["structure_confirmed"]["detail"]


def test_start_stop_rows_whose_flag_turns_on_are_not_person_periods():
    # a time-varying 0/1 covariate (a transplant) rises by one between an entity's two intervals
    rng = np.random.default_rng(5)
    rows = []
    for i in range(80):
        end = int(rng.integers(5, 60))
        event = int(rng.random() < 0.6)
        if rng.random() < 0.6:
            cut = int(rng.integers(1, end))
            rows += [(i, 0, cut, 0, 0), (i, cut, end, event, 1)]
        else:
            rows.append((i, 0, end, event, 0))
    df = pd.DataFrame(rows, columns=["id", "start", "stop", "event", "transplant"])
    df["age"] = rng.normal(50, 8, len(df)).round(1)
    d = quiet_diagnose(df, target="event")
    assert d.task["kind"] == "survival" and "person_period" not in d.inference("task").details


def small(periods: list[int], events: list[int], first: int = 1, seed: int = 0) -> pd.DataFrame:
    """lifelines' panel shape: ``id, t, E, var1``, entity i followed for ``periods[i]`` periods
    from ``first``, ending with the event when ``events[i]``."""
    x = np.random.default_rng(seed).normal(size=len(periods)).round(2)
    return expand(pd.DataFrame({"var1": x, "k": periods, "e": events}), "k", "e", first=first, shuffle=False)


SEVEN = ([5, 4, 4, 5, 3, 5, 5], [1, 1, 0, 1, 1, 1, 0])  # 31 rows, 5 events, two entities censored


def _task(df: pd.DataFrame, target: str = "E"):
    return quiet_diagnose(df, target=target).inference("task")


@pytest.mark.parametrize("first", [0, 1])
def test_a_small_table_of_seven_entities_is_found_with_its_counts_in_words(first):
    task = _task(small(*SEVEN, first=first))
    assert task.value == "survival" and task.details["person_period"] is True and task.details["period"] == "t"
    words = task.evidence[0]
    assert "(31 rows, 7 entities)" in words and "24 of 24 steps" in words and f"7 of 7 entities from {first}" in words
    assert "5 entities end with the event" in words and "probability 0.00012" in words


def test_a_censored_entity_keeps_its_last_period_and_no_event():
    df = small(*SEVEN)
    finding = quiet_diagnose(df, target="E").by_kind("repeated_measurements")[0]
    params = next(o for o in finding.options if o.recommended).action["params"]
    out = kt.aggregate_per_entity(df, **params)[0].set_index("id")
    assert out.loc[[3, 7], ["t", "E"]].to_dict("index") == {3: {"t": 4, "E": 0}, 7: {"t": 5, "E": 0}}
    assert out.loc[1, "t"] == 5 and out.loc[1, "E"] == 1 and len(out) == 7


def test_a_small_table_with_too_few_events_to_tell_from_chance_is_not_found():
    # events on rows at random, all on the 7 last rows of 31: 3 events 0.8% of the time, 2 events 4.5%
    assert "person_period" in _task(small(SEVEN[0], [1, 1, 1, 0, 0, 0, 0])).details
    assert "person_period" not in _task(small(SEVEN[0], [1, 1, 0, 0, 0, 0, 0])).details


def test_a_small_table_whose_periods_skip_or_start_apart_is_not_found():
    df = small(*SEVEN)
    gap = df.copy()
    gap.loc[(gap["id"] == 2) & (gap["t"] >= 3), "t"] += 1  # one entity skips a period: 1, 2, 4, 5
    assert "person_period" not in _task(gap).details
    assert "person_period" not in _task(df.assign(t=df["t"] * 2)).details  # every other period: 2, 4, 6
    late = df.copy()
    late.loc[late["id"] == 4, "t"] += 1  # one of seven entities enters a period late
    assert "person_period" not in _task(late).details


def test_a_small_table_with_the_event_on_a_middle_row_is_not_found():
    df = small(*SEVEN)
    df.loc[(df["id"] == 3) & (df["t"] == 2), "E"] = 1  # a censored entity's second of four periods
    assert "person_period" not in _task(df).details


def test_small_repeated_measures_whose_target_varies_are_not_found():
    rng = np.random.default_rng(4)
    df = pd.DataFrame({"id": np.repeat(np.arange(1, 8), 4), "t": np.tile(np.arange(1, 5), 7),
                       "x": rng.normal(size=28).round(2)})
    df["E"] = (df["x"] > 0.3).astype(int)
    assert df.groupby("id")["E"].sum().max() > 1  # it turns on, off and on again
    task = _task(df)
    assert task.value == "classification" and "person_period" not in task.details


def test_a_balanced_panel_of_firms_is_not_person_periods():
    # every firm each year 2001-2008: a yearly outcome that recurs after a 1, and one read in the last year only
    rng = np.random.default_rng(6)
    firms = pd.DataFrame({"firm": np.repeat(np.arange(1, 9), 8), "year": np.tile(np.arange(2001, 2009), 8),
                          "debt": rng.normal(size=64).round(2)})
    recurs = firms.assign(default=(rng.random(64) < 0.3).astype(int))
    assert recurs.groupby("firm")["default"].sum().max() > 1
    assert "person_period" not in _task(recurs, "default").details
    at_the_end = firms.assign(default=((firms["year"] == 2008) & (firms["firm"] % 2 == 0)).astype(int))
    assert "person_period" not in _task(at_the_end, "default").details


def test_one_period_per_entity_is_not_person_periods():
    df = pd.DataFrame({"id": np.arange(1, 31), "t": np.arange(1, 31), "x": np.arange(30) % 7,
                       "E": np.arange(30) % 3 == 0})
    assert "person_period" not in _task(df.assign(E=df["E"].astype(int))).details
    df = pd.DataFrame({"id": np.arange(1, 8), "t": 1, "x": np.arange(7), "E": [1, 0, 1, 1, 0, 1, 0]})
    assert "person_period" not in _task(df).details


def _leukemia(entities: int, seed: int) -> pd.DataFrame:
    """The dev table ll_leukemia cut to a few patients, its weeks counted in 4-week periods."""
    from lifelines.datasets import load_leukemia

    assert halves.half("ll_leukemia") == "dev"
    cut = load_leukemia().sample(entities, random_state=seed)
    return expand(cut.assign(periods=np.ceil(cut.pop("t") / 4)), "periods", "status")


@pytest.mark.parametrize("entities", [5, 7, 10])
def test_the_dev_table_leukemia_cut_to_a_few_patients_is_found(entities):
    task = _task(_leukemia(entities, seed=0))
    assert task.value == "survival" and task.details["person_period"] is True and task.details["id"] == "id"
    assert f"{entities} of {entities} entities from 1" in task.evidence[0]


@pytest.mark.slow
def test_ten_leukemia_patients_per_period_under_the_recommended_policy_are_survival_per_patient(tmp_path):
    report = run_recommended(_leukemia(10, seed=1), "E", tmp_path)
    assert report["task"]["kind"] == "survival" and report["model"]["metric"] == "c_index"
    assert [s["status"] for s in report["steps"] if s["episode"] == "aggregate"] == ["done"]
    assert {"t", "E", "id"}.isdisjoint(report["model"]["features"])
    checks = {c["check"]: c for c in report["validity"]}
    assert not checks["structure_confirmed"]["passed"] and report["valid"] is False
    assert "(37 rows, 10 entities)" in checks["structure_confirmed"]["detail"]


@pytest.mark.parametrize("seed", range(3))
def test_a_handful_of_entities_is_found_when_every_one_holds_the_layout(seed):
    """Small exports of this layout exist (a few subjects over a few periods): five to nine entities
    are read as person periods only when every row rises by one from the same first period."""
    df = synthetic(n=7, seed=seed)
    assert df["id"].nunique() == 7
    d = quiet_diagnose(df, target="E")
    assert d.task["kind"] == "survival" and d.inference("task").details["person_period"] is True
    assert "7 entities" in d.inference("task").evidence[0]


def test_a_handful_of_entities_that_break_the_layout_once_stay_classification():
    df = synthetic(n=7, seed=0)
    late = df.index[df["id"] == df["id"].iloc[0]]
    gap = df.copy()
    gap.loc[late, "t"] = gap.loc[late, "t"] + np.where(gap.loc[late, "t"] > gap.loc[late, "t"].min(), 1, 0)  # a gap
    shifted = df.copy()
    shifted.loc[late, "t"] += 3  # one entity counted from another first period
    for broken in (gap, shifted):
        d = quiet_diagnose(broken, target="E")
        assert "person_period" not in d.inference("task").details
    few = synthetic(n=4, seed=0)
    assert "person_period" not in quiet_diagnose(few, target="E").inference("task").details


def test_two_events_of_a_small_panel_on_last_rows_by_luck_are_not_person_periods():
    """6 firms x 5 years, an outcome that happened twice, both in a firm's last year: 1 time in 25
    by chance (6 of 30 rows are last rows), too often to read the panel as periods to an event."""
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"firm": np.repeat(np.arange(6), 5), "year": np.tile(np.arange(2001, 2006), 6),
                       "x": rng.normal(size=30).round(2)})
    df["default"] = 0
    df.loc[[4, 19], "default"] = 1  # the last years of firms 0 and 3
    d = quiet_diagnose(df, target="default")
    assert "person_period" not in d.inference("task").details


# A layout too weak to read alone (too few events to tell from chance, or a handful of entities not
# counted from the same first period) is a hint: the rows stay a classification, asked, with survival
# over the periods as the first alternative; the answer "survival" reads the layout.

TWO_EVENTS = (SEVEN[0], [1, 1, 0, 0, 0, 0, 0])  # 2 events on the 7 last rows of 31: by chance 4.5% of the time


def test_a_layout_with_too_few_events_stays_classification_asked_with_survival_first():
    task = _task(small(*TWO_EVENTS))
    assert task.value == "classification" and task.confidence == "low"
    assert task.details["periods_hint"] is True and (task.details["id"], task.details["period"]) == ("id", "t")
    assert [a.value for a in task.alternatives] == ["survival"]
    assert "one row per 'id', followed until its last 't'" in task.alternatives[0].evidence[0]
    assert "2 events too few to tell that from chance" in task.evidence[1] and "probability 0.045" in task.evidence[-1]


def test_a_handful_of_entities_not_started_together_is_a_hint_not_a_reading():
    late = small(*SEVEN)
    late.loc[late["id"] == 4, "t"] += 1  # one of seven entities enters a period late
    task = _task(late)
    assert task.value == "classification" and task.details["periods_hint"] is True
    assert "only 6 of 7 entities start at 1" in task.evidence[1]


def test_a_hint_is_not_given_where_the_layout_breaks_or_events_could_well_be_chance():
    one_event = _task(small(SEVEN[0], [1, 0, 0, 0, 0, 0, 0]))  # 1 event on 7 last rows of 31: 23%
    mid = small(*TWO_EVENTS)
    mid.loc[(mid["id"] == 3) & (mid["t"] == 2), "E"] = 1  # an event on a middle row
    for task in (one_event, _task(mid)):
        assert "periods_hint" not in task.details and task.confidence == "high"


def test_survival_given_on_a_weak_layout_reads_the_periods():
    d = quiet_diagnose(small(*TWO_EVENTS), target="E", task="survival")
    assert d.task["kind"] == "survival" and d.task["time"] == "t" and d.task["id"] == "id"
    assert d.inference("task").confidence == "given" and d.inference("task").details["person_period"] is True
    (finding,) = d.by_kind("repeated_measurements")
    assert next(o for o in finding.options if o.recommended).action["function"] == "aggregate_per_entity"


def test_the_task_card_of_a_hint_offers_survival_though_the_rows_have_no_time():
    from jupyter_dcpilot.engine import structure_cards
    from jupyter_dcpilot.engine.structure import Structure
    from jupyter_dcpilot.engine.task import Task

    inference = _task(small(*TWO_EVENTS))
    card = structure_cards.task_card(Task(kind="classification", target="E", reason="classification"),
                                     Structure([inference]))
    survival = next(o for o in card.options if o.id == "survival")
    assert "One row per 'id', followed until its last 't'" in survival.description
    assert [o.id for o in card.options][:2] == ["confirm", "survival"]
    assert "regression" not in [o.id for o in card.options]  # a 0/1 target is no score
    assert "too few to tell that from chance" in card.question
    # said once: what was guessed, what was seen, then what choosing survival would do
    assert card.question.count("classification") == 1 and card.question.count("followed until") == 1
    assert card.question.endswith("Or survival: one row per 'id', followed until its last 't'?")
    assert len(card.question) <= 350, card.question
    assert card.options[0].risk == "confirms what is uncertain: the task: classification"
    assert "2 classes" not in json.dumps(card.evidence)  # the question says it; the evidence does not again


def few_events(entities: int = 40, seed: int = 3) -> pd.DataFrame:
    """Person-period rows of ``entities`` subjects followed 3-8 periods, 2 of them ending in the event."""
    rng = np.random.default_rng(seed)
    events = np.zeros(entities, int)
    events[:2] = 1
    return expand(pd.DataFrame({"age": rng.normal(50, 10, entities).round(), "dose": rng.choice(["a", "b"], entities),
                                "k": rng.integers(3, 9, entities), "e": events}), "k", "e")


def test_rows_whose_target_changes_within_entities_keep_the_outcome_from_the_last_record():
    """Taken at the first record, the target would be each entity's state at enrolment (here 0 for
    all), not the outcome: the baseline row keeps it from the entity's last."""
    df = few_events()
    (finding,) = quiet_diagnose(df, target="E").by_kind("repeated_measurements")
    first = next(o for o in finding.options if o.id == "aggregate_first")
    assert first.recommended and first.action["params"]["outcome"] == ["E"]
    assert "'E' from its last record" in first.description
    out = kt.aggregate_per_entity(df, **first.action["params"])[0]
    assert len(out) == 40 and out["E"].sum() == 2
    plain = quiet_diagnose(_rossi(), target="E")  # survival: the event's own options, unchanged
    assert all("outcome" not in (o.action or {}).get("params", {}) or o.id != "aggregate_first"
               for f in plain.findings for o in f.options)


@pytest.mark.slow
def test_a_weak_layout_under_the_recommended_policy_ends_not_valid_and_never_as_a_regression(tmp_path):
    """Two events among 40 subjects: too few to read the layout and too few to cross-validate the
    rows' classes; a 0/1 target is no ordered score, so the run ends on the failure in words."""
    import asyncio
    import io

    from jupyter_dcpilot.cli import run_job

    few_events().to_csv(tmp_path / "data.csv", index=False)
    state, report = asyncio.run(run_job([str(tmp_path / "data.csv")], target="E", approve="recommended",
                                        planner="rules", out=str(tmp_path / "out"), stream=io.StringIO()))
    assert state != "finished" and report["valid"] is False and report["task"]["kind"] == "classification"
    said = " ".join(report["warnings"])
    assert "1 class has too few rows to cross-validate: 1 (2 rows)" in said and "regression" not in said
    checks = {c["check"]: c for c in report["validity"]}
    assert "2 events too few to tell that from chance" in checks["structure_confirmed"]["detail"]


# One search serves both readings: a strong layout is read as survival, a weak one only asked, and a
# two-code target without a strong layout is not searched a second time for the hint.

@pytest.mark.parametrize("df", [small(*SEVEN), small(*TWO_EVENTS), small(SEVEN[0], [1, 0, 0, 0, 0, 0, 0])],
                         ids=["strong", "weak", "none"])
def test_the_person_period_search_runs_once_per_diagnosis(df, monkeypatch):
    from kernel_tools.diagnosis import task as task_module

    calls = []
    search = task_module.find_person_periods
    monkeypatch.setattr(task_module, "find_person_periods", lambda *a, **kw: calls.append(1) or search(*a, **kw))
    _task(df)
    assert len(calls) == 1


# Survival given with no time: a named follow-up time makes one row per subject even where the rows
# also hold a period layout; the periods are read only when no column but the period is a duration.

def _with_follow_up(seed: int = 0) -> pd.DataFrame:
    """Person-period rows that also carry each subject's follow-up in days (its last period's end)."""
    df = synthetic(seed=seed)
    days = np.random.default_rng(seed).integers(0, 30, df["id"].max() + 1)
    df["futime"] = (df.groupby("id")["t"].transform("max") + 1) * 30 + days[df["id"]]
    return df


def test_survival_given_with_a_named_follow_up_reads_it_though_the_rows_are_periods():
    d = quiet_diagnose(_with_follow_up(), target="E", task="survival")
    assert d.task["kind"] == "survival" and d.task["time"] == "futime"
    assert "person_period" not in d.inference("task").details and d.inference("task").confidence == "given"


def test_survival_given_on_periods_alone_reads_them_though_the_period_is_named_as_a_time():
    df = synthetic()
    from kernel_tools.diagnosis.columns import profile_columns
    from kernel_tools.diagnosis.task import find_duration

    assert find_duration(df, profile_columns(df), {"E"}) == "t"  # without the layout, 't' would be the time
    d = quiet_diagnose(df, target="E", task="survival")
    assert d.task["kind"] == "survival" and d.task["time"] == "t" and d.task["id"] == "id"
    assert d.inference("task").details["person_period"] is True


@pytest.mark.slow
def test_survival_chosen_on_the_task_card_of_a_hint_reads_the_periods(tmp_path):
    """The card offers survival though the task has no time: the answer diagnoses the data again,
    which reads the layout, so the model is fitted on one row per subject followed until its last period."""
    import asyncio
    import io

    from jupyter_dcpilot.cli import run_job

    few_events().to_csv(tmp_path / "data.csv", index=False)
    (tmp_path / "answers.json").write_text(json.dumps({"task": "survival", "*": "recommended"}))
    _, report = asyncio.run(run_job([str(tmp_path / "data.csv")], target="E", planner="rules",
                                    approve=str(tmp_path / "answers.json"), out=str(tmp_path / "out"),
                                    stream=io.StringIO()))
    assert report["task"]["kind"] == "survival" and report["task"]["time"] == "t" and report["task"]["id"] == "id"
    session = json.loads(next((tmp_path / "out").rglob("*.dcpilot.json")).read_text())
    assert any(d["choice"] == "aggregate_periods" for d in session["decisions"])
