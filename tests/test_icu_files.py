"""Every file of a hierarchy handed over together reaches the model (issue 26, session 16): parents
joined many-to-one on their key (a birth date becoming the age at admission), long records summarised
per entity over a window the expert sets, units reconciled per item, and a file that cannot be joined
said, with why. The data are generated, under other names than benchmarks/icu_shapes.py's: no rule
here may key on MIMIC's names. Before: only the first other file was joined (the others silently
left out), an item in two units was averaged across them, and the 24 h window was fixed."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import kernel_tools as kt
from jupyter_dcpilot.engine.join_cells import join_files_code

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import icu_shapes  # noqa: E402

RENAMED = {"subject_id": "person_id", "hadm_id": "visit_id", "icustay_id": "unit_stay_id",
           "admittime": "admission_time", "charttime": "obs_time", "itemid": "lab_code", "valuenum": "result_num",
           "valueuom": "unit", "dob": "birth_date", "dod": "death_date", "gender": "sex", "row_id": "row_no",
           icu_shapes.TARGET: "died_in_hospital", "intime": "unit_in_time", "outtime": "unit_out_time"}


@pytest.fixture(scope="module")
def frames() -> dict[str, pd.DataFrame]:
    tables = icu_shapes.cohort(n_patients=90, seed=4)
    names = {"admissions": "visits", "patients": "people", "icustays": "unit_stays", "chartevents": "obs",
             "labevents": "labs"}
    # as read from CSV: clock times are text
    return {names[k]: t.rename(columns=RENAMED).astype({c: str for c in t.rename(columns=RENAMED).columns
                                                        if c.endswith(("_time", "_date")) or "time" in c})
            for k, t in tables.items()}


def test_units_of_one_item_are_reconciled_or_kept_apart():
    rng = np.random.default_rng(0)
    n = 320  # most temperatures in °C, most glucose in mg/dL: the unit each is put in
    person = np.repeat(np.arange(40), 8)
    measure = np.tile(["body_temp"] * 3 + ["glucose_serum"] * 3 + ["k77"] * 2, 40)
    celsius = rng.normal(37.5, 0.6, n)
    glucose = rng.normal(110, 20, n)  # mg/dL
    units = np.tile(["degF", "°C", "°C", "mg/dL", "mg/dL", "mmol/L", "U/L", "IU"], 40)
    reading = np.select([units == "degF", units == "°C", units == "mg/dL", units == "mmol/L"],
                        [celsius * 1.8 + 32, celsius, glucose, glucose / 18.016], rng.normal(50, 5, n))
    records = pd.DataFrame({"person": person, "t": 0, "measure": measure, "reading": reading, "units": units})
    out, report = kt.summarize_records(records, "person", "t", key="measure", value="reading", unit_column="units",
                                       how="mean")
    out = out.set_index("person")
    is_temp = measure == "body_temp"
    expected = pd.Series(celsius[is_temp], index=person[is_temp]).groupby(level=0).mean()
    assert np.allclose(out["body_temp_mean"], expected)  # before: °F and °C averaged (~67)
    expected = pd.Series(glucose[measure == "glucose_serum"], index=person[measure == "glucose_serum"])
    assert np.allclose(out["glucose_serum_mean"], expected.groupby(level=0).mean(), rtol=1e-3)
    assert {"k77 [U/L]_mean", "k77 [IU]_mean"} <= set(out.columns) and "k77_mean" not in out
    said = " ".join(report.details["units"])
    assert "'body_temp' in degF converted to °C" in said and "'k77' kept apart by unit" in said
    replayed = report.apply(records)  # the fitted summary converts new records the same way
    assert np.allclose(replayed.set_index("person")["body_temp_mean"], out["body_temp_mean"])


def test_every_file_around_the_target_is_planned_and_the_window_asked(frames):
    found = kt.diagnose_join(frames, target="died_in_hospital").findings
    joins = [f for f in found if f.kind == "join_keys"]
    assert len(joins) == 1 and joins[0].gate == "join"  # one plan for the five files; the window is asked
    plan = joins[0]
    by_frame = {e["frame"]: e for e in plan.evidence["files"]}
    assert by_frame["people"]["on"] == "person_id" and by_frame["people"]["birth"] == "birth_date"
    assert by_frame["obs"]["records"]["unit_column"] == "unit" and by_frame["labs"]["on"] == "visit_id"
    assert "finer level" in by_frame["unit_stays"]["why"]  # said, not silently skipped
    assert "'unit_stays' not joined" in plan.summary and "default the first 24 h" in plan.summary
    options = {o.id: o for o in plan.options}
    assert [o.id for o in plan.options if o.recommended] == ["join_files_24h"]
    assert {"join_files_6h", "join_files_48h", "keep"} <= set(options)
    # the evidence of each window: entities with records in it, counted here directly
    visits, obs = frames["visits"], frames["obs"]
    start = obs["visit_id"].map(visits.set_index("visit_id")["admission_time"].map(pd.Timestamp))
    hours = (pd.to_datetime(obs["obs_time"]) - start) / pd.Timedelta(hours=1)
    for w in (6, 24, 48):
        n = obs.loc[hours <= w, "visit_id"].nunique()
        assert f"'obs': {n:,} of {len(visits):,} rows with records" in options[f"join_files_{w}h"].description
    call = options["join_files_6h"].action["params"]
    assert [f["frame"] for f in call["files"]] == ["people", "obs", "labs"]
    assert all(f["records"]["until"] == 6 for f in call["files"] if f["records"])
    assert (call["birth"], call["at"]) == ("birth_date", "admission_time")


def test_the_files_join_many_to_one_and_each_join_is_said(frames):
    visits = frames["visits"]
    obs, _ = kt.summarize_records(frames["obs"], "visit_id", "obs_time", until=24, key="lab_code", value="result_num",
                                  unit_column="unit", index=visits, anchor="admission_time")
    labs, lab_report = kt.summarize_records(frames["labs"], "visit_id", "obs_time", until=24, key="lab_code",
                                            value="result_num", unit_column="unit", index=visits,
                                            anchor="admission_time")
    assert any("kept apart by unit" in s for s in lab_report.details["units"])  # a lab code names no substance
    out, report = kt.join_files(visits, [frames["people"], obs, labs], on=["person_id", "visit_id", "visit_id"],
                                names=["people.csv", "obs.csv", "labs.csv"], birth="birth_date", at="admission_time")
    assert len(out) == len(visits) and "birth_date" not in out and "row_no_people" not in out
    born = visits["person_id"].map(frames["people"].set_index("person_id")["birth_date"].map(pd.Timestamp))
    years = (pd.to_datetime(visits["admission_time"]) - born).dt.days / 365.25
    assert np.allclose(out["age_at_admission_time"], years, atol=0.06) and years.between(18, 100).all()
    assert {"records_before_index_obs", "records_before_index_labs"} <= set(out.columns)
    said = report.details["joins"]
    assert said[0].startswith(f"people.csv joined many-to-one on 'person_id': {len(visits)} → {len(visits)} rows")
    assert len(said) == 4 and "age at 'admission_time'" in said[-1]
    assert report.apply(visits).columns.tolist() == out.columns.tolist()  # replayed on new rows
    with pytest.raises(ValueError, match="repeats in obs.csv"):
        kt.join_files(visits, [frames["obs"]], on=["visit_id"], names=["obs.csv"])


def test_records_counted_in_days_join_without_a_window_question():
    rng = np.random.default_rng(1)
    people = pd.DataFrame({"member_id": np.arange(60), "outcome": rng.integers(0, 2, 60)})
    visits = pd.DataFrame({"member_id": np.repeat(np.arange(60), 4), "study_day": np.tile([-30, -5, 0, 40], 60),
                           "test": np.tile(["hb", "wbc"], 120), "result": rng.normal(10, 2, 240)})
    region = pd.DataFrame({"member_id": np.arange(60), "region": rng.choice(["n", "s"], 60)})
    other = pd.DataFrame({"colour": rng.choice(["red", "blue"], 30), "size": rng.normal(size=30)})
    plan = next(f for f in kt.diagnose_join({"people": people, "visits": visits, "region": region, "other": other},
                                            target="outcome").findings if f.kind == "join_keys")
    assert plan.gate is None and [o.id for o in plan.options if o.recommended] == ["join_files"]
    assert "'other' not joined: no column" in plan.summary
    files = plan.options[0].action["params"]["files"]
    assert [(f["frame"], (f["records"] or {}).get("until")) for f in files] == [("visits", 0), ("region", None)]


def test_the_cell_sets_the_window_as_a_parameter():
    params = {"files": [{"frame": "df_2", "on": "pid", "records": None},
                        {"frame": "df_3", "on": "vid", "records": {"id": "vid", "time": "ts", "key": "code",
                                                                   "value": "v", "unit_column": None,
                                                                   "anchor": "start_time", "unit": "h", "until": 6}}],
              "birth": None, "at": None}
    lines = join_files_code("df", "joined", params, ["df", "df_2", "df_3"], ["/d/a.csv", "/d/b.csv", "/d/c.csv"])
    assert lines[0].startswith("window_h = 6  # hours after 'start_time'")
    assert lines[1] == ("df_3_window, records_df_3 = kt.summarize_records(df_3, id='vid', until=window_h, time='ts', "
                        "key='code', value='v', anchor='start_time', unit='h', index=df)")
    assert lines[2] == ("df, joined = kt.join_files(df, [df_2, df_3_window], on=['pid', 'vid'], "
                        "names=['b.csv', 'c.csv'])")


def test_two_files_with_clock_times_ask_the_window(frames):
    stays = frames["unit_stays"].drop(columns="row_no").merge(frames["visits"][["visit_id", "died_in_hospital"]])
    (join,) = [f for f in kt.diagnose_join({"stays": stays, "obs": frames["obs"]}, target="died_in_hospital").findings
               if f.kind == "join_keys"]
    windows = {o.id: o for o in join.options if o.id.startswith("summarize_then_join")}
    assert join.gate == "join" and set(windows) == {"summarize_then_join_6h", "summarize_then_join",
                                                    "summarize_then_join_48h"}
    assert windows["summarize_then_join"].recommended and windows["summarize_then_join"].action["params"]["until"] == 24
    assert windows["summarize_then_join_6h"].action["params"]["unit_column"] == "unit"
    assert "rows have records in it" in windows["summarize_then_join_48h"].description

