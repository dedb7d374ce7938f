"""A generated MIMIC-shaped ICU cohort, handed over as a judge would hand over "ICU tables".

Nothing here is a real table: generic MIMIC-like names on synthetic values, so no rule can be
tuned on a real table's names and no sealed table is involved (issue 26, session 15).

The truth of every variant (``TRUTH``): the task is in-hospital mortality predicted 24 h after
ICU admission. The prediction unit is the ICU stay (``icustay_id``); stays of one patient
(``subject_id``) belong in one split group; an admission (``hadm_id``) may hold several stays and
a patient several admissions. Known at the index (``intime`` + 24 h): demographics, admission
type, and vitals/labs charted at or before it. Not known: ``los``, ``outtime``, ``dischtime``,
``discharge_location``, ``deathtime``/``dod``, any measurement after the index, and
``hospital_expire_flag`` itself. ``row_id`` is a row number in every file, never a key.

Traps: several admissions and stays per patient; creatinine in mg/dL and µmol/L; text values
('>100', 'ERROR', '') with no ``valuenum``; charttimes after death; dates shifted into the
22nd century (MIMIC shifts years); lab rows without ``icustay_id`` (labs belong to an admission).

Variants (``write(variant, folder)`` returns the files to pass to ``jupyter dcpilot run``):
``wide`` one file, one row per stay, first-24 h summaries with ``los`` and ``dischtime`` beside
the outcome; ``multi`` five files (patients, admissions, icustays, chartevents, labevents);
``long`` a stays file and one long vitals file. ``python icu_shapes.py FOLDER`` writes all three.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd

TARGET = "hospital_expire_flag"
TRUTH = {
    "entity": "icustay_id",
    "group": "subject_id",
    "index": "intime + 24 h",
    "target": TARGET,
    "not_known_at_index": ("los", "outtime", "dischtime", "discharge_location", "deathtime", "dod",
                           "expire_flag", TARGET),
    "never_keys": ("row_id",),
    "window_hours": 24,
}
VARIANTS = ("wide", "multi", "long")
# itemid -> (label, unit, healthy mean, sd, shift per unit of severity)
VITALS = {211: ("heart_rate", "bpm", 85.0, 12.0, 12.0), 618: ("resp_rate", "insp/min", 18.0, 4.0, 4.0),
          456: ("mean_bp", "mmHg", 80.0, 10.0, -9.0), 646: ("spo2", "%", 97.0, 1.5, -2.0)}
LABS = {50912: ("creatinine", "mg/dL", 1.0, 0.3, 0.7), 50813: ("lactate", "mmol/L", 1.5, 0.5, 1.2)}
CREATININE_UMOL = 88.4  # µmol/L per mg/dL


def _stays(n_patients: int, rng: np.random.Generator) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Patients, admissions and ICU stays, nested; a latent severity drives death and measurements."""
    subject = np.arange(n_patients) + 101
    shift = pd.to_timedelta(rng.integers(100, 200, n_patients) * 365, unit="D")  # years shifted ahead
    patients = pd.DataFrame({"subject_id": subject, "gender": rng.choice(["M", "F"], n_patients),
                             "dob": pd.Timestamp("2001-01-01") + shift
                             - pd.to_timedelta(rng.integers(18 * 365, 90 * 365, n_patients), unit="D")})
    adm_rows, stay_rows = [], []
    hadm, icu = 100000, 200000
    for i, sid in enumerate(subject):
        start = pd.Timestamp("2001-01-01") + shift[i] + pd.Timedelta(days=int(rng.integers(0, 3000)))
        for _ in range(rng.choice([1, 1, 1, 2, 3])):
            hadm += 1
            severity = rng.normal()
            admit = start + pd.Timedelta(hours=int(rng.integers(0, 48)))
            died = rng.random() < 1 / (1 + np.exp(-(1.6 * severity - 2.0)))
            stay_start = admit + pd.Timedelta(hours=int(rng.integers(1, 30)))
            for k in range(rng.choice([1, 1, 1, 2])):
                icu += 1
                los = float(np.round(rng.gamma(2.0, 1.5) + 1.05 + (2 * died if k == 0 else 0), 4))
                stay_rows.append({"subject_id": sid, "hadm_id": hadm, "icustay_id": icu, "intime": stay_start,
                                  "outtime": (stay_start + pd.Timedelta(days=los)).floor("min"), "los": los,
                                  "first_careunit": rng.choice(["MICU", "SICU", "CCU", "CSRU"]),
                                  "severity": severity})
                stay_start = (stay_start + pd.Timedelta(days=los + float(rng.uniform(0.5, 3)))).floor("h")
            disch = stay_start.floor("min") + pd.Timedelta(hours=int(rng.integers(2, 96)))
            if died:  # in the ICU, hours before its out-time: charting goes on past the death
                disch = stay_rows[-1]["outtime"] - pd.Timedelta(hours=int(rng.integers(1, 8)))
            adm_rows.append({"subject_id": sid, "hadm_id": hadm, "admittime": admit, "dischtime": disch,
                             "deathtime": disch if died else pd.NaT,
                             "admission_type": rng.choice(["EMERGENCY", "ELECTIVE", "URGENT"], p=[.7, .2, .1]),
                             "insurance": rng.choice(["Medicare", "Private", "Medicaid"]),
                             "discharge_location": "DEAD/EXPIRED" if died else rng.choice(["HOME", "SNF", "REHAB"]),
                             TARGET: int(died)})
            if died:
                break
            start = disch + pd.Timedelta(days=int(rng.integers(30, 700)))
    admissions, stays = pd.DataFrame(adm_rows), pd.DataFrame(stay_rows)
    dod = admissions[admissions[TARGET] == 1].set_index("subject_id")["deathtime"]
    patients["dod"] = patients["subject_id"].map(dod)
    patients["expire_flag"] = patients["dod"].notna().astype(int)
    return patients, admissions, stays


def _events(stays: pd.DataFrame, items: dict, per_day: int, rng: np.random.Generator,
            with_stay: bool) -> pd.DataFrame:
    """Long records over each whole stay (and past death): severity shows in the first day too."""
    rows = []
    for s in stays.itertuples():
        hours = np.sort(rng.uniform(-6 if not with_stay else 0, s.los * 24 + 12, int(per_day * (s.los + 1))))
        for h in hours:
            itemid = int(rng.choice(list(items)))
            label, unit, mean, sd, slope = items[itemid]
            value = max(rng.normal(mean + slope * s.severity * (1 + h / 96), sd), mean / 10)
            if label == "creatinine" and rng.random() < 0.4:
                value, unit = value * CREATININE_UMOL, "umol/L"
            text, num = f"{value:.1f}", round(float(value), 1)
            roll = rng.random()
            if roll < 0.02:
                text, num = ">100" if label != "spo2" else "ERROR", np.nan
            elif roll < 0.03:
                text, num = "ERROR", np.nan
            rows.append({"subject_id": s.subject_id, "hadm_id": s.hadm_id,
                         "icustay_id": s.icustay_id if with_stay else np.nan,
                         "charttime": (s.intime + pd.Timedelta(hours=float(h))).floor("min"), "itemid": itemid,
                         "value": text, "valuenum": num, "valueuom": unit})
    events = pd.DataFrame(rows)
    if not with_stay:  # labs carry no stay id and repeat across an admission's stays
        events = events.drop(columns="icustay_id").drop_duplicates(["hadm_id", "charttime", "itemid"])
    return events


def _first_day(stays: pd.DataFrame, events: pd.DataFrame, items: dict, key: str) -> pd.DataFrame:
    """Per stay: mean/min/max of each item's numeric values in the first 24 h (creatinine in mg/dL)."""
    ev = events.merge(stays[["icustay_id", "hadm_id", "intime"]], on=key, suffixes=("", "_s"))
    ev = ev[(ev["charttime"] >= ev["intime"]) & (ev["charttime"] <= ev["intime"] + pd.Timedelta(hours=24))]
    ev = ev.assign(v=np.where(ev["valueuom"] == "umol/L", ev["valuenum"] / CREATININE_UMOL, ev["valuenum"]),
                   item=ev["itemid"].map(lambda i: items[i][0]))
    wide = ev.pivot_table(index="icustay_id", columns="item", values="v", aggfunc=["mean", "min", "max"])
    wide.columns = [f"{item}_{stat}" for stat, item in wide.columns]
    return wide.round(2).reset_index()


def cohort(n_patients: int = 400, seed: int = 0) -> dict[str, pd.DataFrame]:
    """The five MIMIC-shaped tables, each with a leading ``row_id``."""
    rng = np.random.default_rng(seed)
    patients, admissions, stays = _stays(n_patients, rng)
    chart = _events(stays, VITALS, 12, rng, with_stay=True)
    labs = _events(stays, LABS, 4, rng, with_stay=False)
    tables = {"patients": patients, "admissions": admissions, "icustays": stays.drop(columns="severity"),
              "chartevents": chart, "labevents": labs}
    return {name: t.reset_index(drop=True).rename_axis("row_id").reset_index() for name, t in tables.items()}


def wide(tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """One row per stay: demographics, first-day summaries, and the end-of-stay fields beside the outcome."""
    stays, adm, pat = tables["icustays"], tables["admissions"], tables["patients"]
    out = (stays.drop(columns="row_id").merge(adm.drop(columns="row_id"), on=["subject_id", "hadm_id"])
           .merge(pat[["subject_id", "gender", "dob"]], on="subject_id"))
    out["age"] = ((out["intime"] - out["dob"]).dt.days / 365.25).round(1)
    out = out.drop(columns=["dob", "admittime"])
    out = out.merge(_first_day(stays, tables["chartevents"], VITALS, "icustay_id"), on="icustay_id", how="left")
    out = out.merge(_first_day(stays, tables["labevents"], LABS, "hadm_id"), on="icustay_id", how="left")
    return out.rename_axis("row_id").reset_index()


def write(variant: str, folder: str | Path, n_patients: int = 400, seed: int = 0) -> list[Path]:
    """Write one variant's CSV files into ``folder``; returns them in the order to pass them."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    tables = cohort(n_patients, seed)
    if variant == "wide":
        named = {"icu_stays_extract": wide(tables)}
    elif variant == "multi":
        named = tables
    elif variant == "long":
        stays = wide(tables)[["row_id", "subject_id", "hadm_id", "icustay_id", "intime", "outtime", "los",
                              "first_careunit", "age", "gender", "admission_type", "dischtime",
                              "discharge_location", TARGET]]
        named = {"stays": stays, "vitals": tables["chartevents"]}
    else:
        raise ValueError(f"variant must be one of {VARIANTS}, not {variant!r}")
    paths = []
    for name, t in named.items():
        paths.append(folder / f"{name}.csv")
        t.to_csv(paths[-1], index=False)
    return paths


def main(argv: list[str] | None = None) -> int:
    folder = Path((argv or sys.argv[1:] or ["icu_shapes"])[0])
    for v in VARIANTS:
        print(v, *write(v, folder / v))
    return 0


if __name__ == "__main__":
    sys.exit(main())
