"""Seeded study data with a codebook: a longitudinal REDCap project and a labelled Stata file.

Both are built so that value tests cannot see what only the codebook says: follow-up measures
only mildly related to the outcome (a quality-of-life score at month 6, a length of stay since
enrolment), an identifier that looks like a number and is not unique (a hospital reference
shared by a few records), personal data (a telephone number, a date of birth).

``redcap_project`` writes what REDCap would: the data dictionary CSV (REDCap's own header), the
instrument–event mapping CSV and the export (one row per record and event, repeated adverse
events as a repeating instrument). ``labelled_stata`` writes a one-row-per-patient Stata file
whose column names say nothing (``v1`` ... ``v9``); its variable labels say everything.
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pandas as pd

HEADER = ["Variable / Field Name", "Form Name", "Section Header", "Field Type", "Field Label",
          "Choices, Calculations, OR Slider Labels", "Field Note", "Text Validation Type OR Show Slider Number",
          "Text Validation Min", "Text Validation Max", "Identifier?", "Branching Logic (Show field only if...)",
          "Required Field?", "Custom Alignment", "Question Number (surveys only)", "Matrix Group Name",
          "Matrix Ranking?", "Field Annotation"]
EVENTS = ["baseline_arm_1", "month_6_arm_1", "month_12_arm_1"]
FORMS = {
    "baseline_arm_1": ["enrolment", "contact", "labs"],
    "month_6_arm_1": ["labs", "follow_up_visit", "adverse_events"],
    "month_12_arm_1": ["outcome"],
}
# (name, form, type, label, choices, note, validation, min, max, identifier)
FIELDS = [
    ("record_id", "enrolment", "text", "Record ID", "", "", "", "", "", ""),
    ("age", "enrolment", "text", "Age (years)", "", "", "integer", "18", "100", ""),
    ("sex", "enrolment", "radio", "Sex", "1, Male | 2, Female", "", "", "", "", ""),
    ("bmi", "enrolment", "text", "Body mass index (kg/m2)", "", "", "number", "12", "70", ""),
    ("smoker", "enrolment", "yesno", "Current smoker", "", "", "", "", "", ""),
    ("comorb", "enrolment", "checkbox", "Comorbidities", "1, Diabetes | 2, Hypertension | 3, COPD", "", "", "", "",
     ""),
    ("hosp_ref", "enrolment", "text", "Hospital reference", "", "", "integer", "", "", "y"),
    ("phone", "contact", "text", "Telephone number", "", "", "", "", "", ""),
    ("dob", "contact", "text", "Date of birth", "", "", "date_ymd", "", "", ""),
    ("sbp", "labs", "text", "Systolic blood pressure", "", "mmHg", "number", "60", "260", ""),
    ("creat", "labs", "text", "Creatinine", "", "mg/dL", "number", "0.2", "15", ""),
    ("qol_score", "follow_up_visit", "text", "Quality of life score", "", "", "integer", "0", "100", ""),
    ("hosp_days", "follow_up_visit", "text", "Length of hospital stay since enrolment (days)", "", "", "integer",
     "0", "365", ""),
    ("readmit", "follow_up_visit", "yesno", "Readmitted to hospital", "", "", "", "", "", ""),
    ("ae_term", "adverse_events", "text", "Adverse event", "", "", "", "", "", ""),
    ("ae_grade", "adverse_events", "radio", "Grade", "1, Mild | 2, Moderate | 3, Severe", "", "", "", "", ""),
    ("death", "outcome", "yesno", "Died", "", "", "", "", "", ""),
    ("death_cause", "outcome", "dropdown", "Cause", "1, Cardiovascular | 2, Infection | 3, Other", "", "", "", "",
     "[death] = '1'"),
]
FOLLOW_UP = ["qol_score", "hosp_days", "readmit"]  # collected only at month 6
RECORDED_WITH_OUTCOME = ["death_cause"]
IDENTIFIERS = ["hosp_ref", "phone", "dob"]


def _people(n: int, rng: np.random.Generator) -> pd.DataFrame:
    age = rng.integers(35, 90, n)
    smoker = rng.random(n) < 0.3
    frailty = rng.normal(0, 1, n)  # unmeasured at baseline; shows mildly in follow-up measures
    sbp = np.round(rng.normal(135, 18, n) + 0.3 * (age - 60), 0)
    risk = -2.4 + 0.045 * (age - 60) + 0.6 * smoker + 0.012 * (sbp - 135) + 0.45 * frailty
    death = (rng.random(n) < 1 / (1 + np.exp(-risk))).astype(int)
    return pd.DataFrame({
        "record_id": np.arange(1, n + 1), "age": age, "sex": rng.integers(1, 3, n),
        "bmi": np.round(rng.normal(27, 4.5, n), 1), "smoker": smoker.astype(int),
        "comorb___1": (rng.random(n) < 0.2).astype(int), "comorb___2": (rng.random(n) < 0.4).astype(int),
        "comorb___3": (rng.random(n) < 0.1).astype(int),
        # a clinic's reference: numbers, shared by some records (not unique), flagged only in the codebook
        "hosp_ref": rng.integers(1000, 2600, n),
        "phone": [f"07{rng.integers(100_000_000, 999_999_999)}" for _ in range(n)],
        "dob": (pd.Timestamp("2020-01-01") - pd.to_timedelta(age * 365.25 + rng.integers(0, 365, n), unit="D"))
        .strftime("%Y-%m-%d"),
        "sbp": sbp, "creat": np.round(rng.lognormal(0, 0.3, n), 2), "frailty": frailty,
        # month 6: mildly related to the outcome (through frailty), not enough for a value test to flag
        "sbp6": np.round(sbp + rng.normal(-2, 12, n), 0), "creat6": np.round(rng.lognormal(0, 0.3, n), 2),
        "qol_score": np.clip(np.round(68 - 4 * frailty + rng.normal(0, 15, n)), 0, 100).astype(int),
        "hosp_days": rng.poisson(np.exp(0.6 + 0.25 * frailty)),
        "readmit": (rng.random(n) < 1 / (1 + np.exp(-(-1.5 + 0.3 * frailty)))).astype(int),
        "death": death,
        "death_cause": np.where(death == 1, rng.integers(1, 4, n), np.nan),
    })


def redcap_export(n: int = 400, seed: int = 0) -> pd.DataFrame:
    """The export REDCap writes (raw codes): a row per record and event, adverse events as rows
    of a repeating instrument at month 6, blank cells where an event does not hold a form."""
    rng = np.random.default_rng(seed)
    p = _people(n, rng)
    p.loc[p.index[:3], "sbp"] = [300, 310, 295]  # outside the valid range (60-260)
    p.loc[p.index[3:5], "sex"] = 3  # a code the codebook does not list
    base = p[["record_id", "age", "sex", "bmi", "smoker", "comorb___1", "comorb___2", "comorb___3", "hosp_ref",
              "phone", "dob", "sbp", "creat"]].assign(redcap_event_name="baseline_arm_1", enrolment_complete=2,
                                                      contact_complete=2, labs_complete=2)
    six = p[["record_id", "qol_score", "hosp_days", "readmit"]].assign(
        sbp=p["sbp6"], creat=p["creat6"], redcap_event_name="month_6_arm_1", labs_complete=2,
        follow_up_visit_complete=2)
    twelve = p[["record_id", "death", "death_cause"]].assign(redcap_event_name="month_12_arm_1", outcome_complete=2)
    ae_counts = rng.poisson(np.exp(-0.7 + 0.4 * p["frailty"]))
    ae = pd.DataFrame({"record_id": np.repeat(p["record_id"], ae_counts)})
    ae["redcap_event_name"] = "month_6_arm_1"
    ae["redcap_repeat_instrument"] = "adverse_events"
    ae["redcap_repeat_instance"] = ae.groupby("record_id").cumcount() + 1
    ae["ae_term"] = rng.choice(["nausea", "fall", "rash", "infection"], len(ae))
    ae["ae_grade"] = rng.integers(1, 4, len(ae))
    ae["adverse_events_complete"] = 2
    rows = pd.concat([base, six, twelve, ae], ignore_index=True)
    event_rank = rows["redcap_event_name"].map({e: i for i, e in enumerate(EVENTS)})
    rows = rows.assign(_e=event_rank, _i=rows.get("redcap_repeat_instance", 0)).sort_values(
        ["record_id", "_e", "_i"], na_position="first", kind="stable").drop(columns=["_e", "_i"])
    # checkboxes are 0 on every row, as REDCap writes them, even on events without their form
    for c in ("comorb___1", "comorb___2", "comorb___3"):
        rows[c] = rows[c].fillna(0).astype(int)
    order = ["record_id", "redcap_event_name", "redcap_repeat_instrument", "redcap_repeat_instance", "age", "sex",
             "bmi", "smoker", "comorb___1", "comorb___2", "comorb___3", "hosp_ref", "enrolment_complete", "phone",
             "dob", "contact_complete", "sbp", "creat", "labs_complete", "qol_score", "hosp_days", "readmit",
             "follow_up_visit_complete", "ae_term", "ae_grade", "adverse_events_complete", "death", "death_cause",
             "outcome_complete"]
    return rows[order].reset_index(drop=True)


def write_dictionary(path: Path) -> Path:
    with open(path, "w", newline="", encoding="utf-8-sig") as handle:  # REDCap writes a BOM
        writer = csv.writer(handle)
        writer.writerow(HEADER)
        for name, form, kind, label, choices, note, validation, low, high, ident in FIELDS:
            branching = ident if name == "death_cause" else ""
            writer.writerow([name, form, "", kind, label, choices, note, validation, low, high,
                             "y" if ident == "y" else "", branching] + [""] * 6)
    return path


def write_mapping(path: Path) -> Path:
    with open(path, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["arm_num", "unique_event_name", "form"])
        for event in EVENTS:
            for form in FORMS[event]:
                writer.writerow([1, event, form])
    return path


def redcap_project(folder: Path, n: int = 400, seed: int = 0) -> dict[str, Path]:
    """The project's three files in ``folder``: export.csv, dictionary.csv, mapping.csv."""
    folder.mkdir(parents=True, exist_ok=True)
    export = folder / "export.csv"
    redcap_export(n, seed).to_csv(export, index=False)
    return {"export": export, "dictionary": write_dictionary(folder / "dictionary.csv"),
            "mapping": write_mapping(folder / "mapping.csv")}


# -- a labelled Stata file -----------------------------------------------------------------------
STATA_LABELS = {
    "pid": "Participant number",
    "v1": "Age at enrolment (years)",
    "v2": "Sex",
    "v3": "Systolic blood pressure at baseline (mmHg)",
    "v4": "Current smoker at enrolment",
    "v5": "Systolic BP at the 6-month visit (mmHg)",
    "v6": "Length of stay since enrolment (days)",
    "v7": "Quality of life score at 12 months",
    "v8": "Hospital number",
    "v9": "Date of birth",
    "died": "Died within two years of enrolment",
}
STATA_FOLLOW_UP = ["v5", "v6", "v7"]
STATA_IDENTIFIERS = ["v8", "v9"]
STATA_VALUE_LABELS = {"v2": {1: "Male", 2: "Female"}, "v4": {0: "No", 1: "Yes"}, "died": {0: "Alive", 1: "Died"}}


def labelled_frame(n: int = 600, seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    p = _people(n, rng)
    return pd.DataFrame({
        "pid": np.arange(1, n + 1), "v1": p["age"], "v2": p["sex"], "v3": p["sbp"], "v4": p["smoker"],
        "v5": p["sbp6"], "v6": p["hosp_days"], "v7": p["qol_score"], "v8": p["hosp_ref"],
        "v9": pd.to_datetime(p["dob"]), "died": p["death"]})


def labelled_stata(path: Path, n: int = 600, seed: int = 1) -> Path:
    import pyreadstat

    frame = labelled_frame(n, seed)
    pyreadstat.write_dta(frame, str(path), column_labels=STATA_LABELS, variable_value_labels=STATA_VALUE_LABELS,
                         file_label="Cohort with labelled follow-up measures")
    return path
