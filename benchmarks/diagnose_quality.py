"""Precision and recall of kernel_tools.diagnose on real data with known problems
(../shared/data: bank churn, the ICR join, cirrhosis follow-up, raha-baran dirty vs clean,
adult label flips, obesity duplicates).

    python benchmarks/diagnose_quality.py            # every case
    python benchmarks/diagnose_quality.py --quick    # a smoke test: small cases only

The ground truth comes from each folder's SOURCE.md (and, for raha-baran, from comparing the
dirty file with the clean one cell by cell). Nothing in kernel_tools is tuned to these names.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

import pandas as pd

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from kernel_tools.diagnosis import diagnose, diagnose_join  # noqa: E402

DATA = (os.environ.get("DCPILOT_DATA") or os.environ.get("DCPILOT_SHARED_DATA")
        or os.path.join(os.path.dirname(HERE), "..", "shared", "data"))
CELL_KINDS = ("inconsistent_categories", "mixed_units", "numeric_as_text", "missing_values")


def pr(found: set, truth: set) -> tuple[float, float]:
    hit = len(found & truth)
    precision = hit / len(found) if found else (1.0 if not truth else 0.0)
    recall = hit / len(truth) if truth else 1.0
    return precision, recall


def columns_of(d, *kinds) -> set:
    return {c for f in d.findings if f.kind in kinds for c in f.columns}


def report(case: str, what: str, found: set, truth: set, rows: list) -> None:
    p, r = pr(found, truth)
    rows.append((case, what, p, r, sorted(map(str, found))[:8], sorted(map(str, truth))[:8]))


def bank_churn(rows, quick):
    df = pd.read_csv(os.path.join(DATA, "dseval-bank-churn", "Customer-Churn-Records.csv"))
    d = diagnose(df, target="Exited")
    report("bank-churn", "target_leakage", columns_of(d, "target_leakage"), {"Complain", "Satisfaction Score"}, rows)
    report("bank-churn", "id_column", columns_of(d, "id_column"), {"RowNumber", "CustomerId", "Surname"}, rows)
    report("bank-churn", "class_imbalance", columns_of(d, "class_imbalance"), {"Exited"}, rows)
    return d


def icr_join(rows, quick):
    src = os.path.join(DATA, "da-code", "ml-competition-003", "source")
    train = pd.read_csv(os.path.join(src, "train.csv"))
    greeks = pd.read_csv(os.path.join(src, "greeks.csv"))
    d = diagnose_join({"train": train, "greeks": greeks}, target="Class")
    keys = {f.evidence["best"]["left"] for f in d.by_kind("join_keys")}
    report("icr-join", "join_keys", keys, {"Id"}, rows)
    # Alpha and Gamma each determine Class exactly (checked on all rows)
    report("icr-join", "target_leakage (via join)", columns_of(d, "target_leakage"), {"Alpha", "Gamma"}, rows)
    d2 = diagnose(train, target="Class")
    report("icr-train", "class_imbalance", columns_of(d2, "class_imbalance"), {"Class"}, rows)
    report("icr-train", "id_column", columns_of(d2, "id_column"), {"Id", "Id.1"}, rows)
    missing_truth = set(train.columns[train.isna().any()])
    report("icr-train", "missing_values", columns_of(d2, "missing_values"), missing_truth, rows)
    report("icr-train", "target_leakage (none expected)", columns_of(d2, "target_leakage"), set(), rows)
    return d


def cirrhosis(rows, quick):
    src = os.path.join(DATA, "da-code", "ml-competition-005", "source")
    df = pd.read_csv(os.path.join(src, "train.csv"))
    d = diagnose(df, target="Status")
    report("cirrhosis", "target_leakage (follow-up time)", columns_of(d, "target_leakage"), {"N_Days"}, rows)
    report("cirrhosis", "class_imbalance", columns_of(d, "class_imbalance"), {"Status"}, rows)
    report("cirrhosis", "id_column", columns_of(d, "id_column"), {"id"}, rows)
    return d


def raha(rows, quick):
    names = ["beers", "hospital", "flights", "rayyan"] if not quick else ["beers"]
    for name in names:
        folder = os.path.join(DATA, "raha-baran", name)
        dirty = pd.read_csv(os.path.join(folder, "dirty.csv"), dtype=str, keep_default_na=False)
        clean = pd.read_csv(os.path.join(folder, "clean.csv"), dtype=str, keep_default_na=False)
        errors = (dirty != clean).sum()
        truth = set(errors[errors > 0].index)
        typed = pd.read_csv(os.path.join(folder, "dirty.csv"))  # as a user would load it
        d = diagnose(typed)
        report(f"raha-{name}", "dirty columns (cell-level kinds)", columns_of(d, *CELL_KINDS), truth, rows)


def adult(rows, quick):
    folder = os.path.join(DATA, "raha-baran", "adult")
    dirty = pd.read_csv(os.path.join(folder, "dirty.csv"))
    clean = pd.read_csv(os.path.join(folder, "clean.csv"))
    flipped = set(dirty.index[dirty["income"].astype(str) != clean["income"].astype(str)])
    sample = 5000 if quick else None
    d = diagnose(dirty, target="income", sample=sample)
    issues = d.by_kind("label_issues")
    found = set(issues[0].evidence["rows"]) if issues else set()
    checked = issues[0].evidence["sample_size"] if issues else 0
    truth = flipped if sample is None else flipped & set(found)  # quick: precision only
    p, r = pr(found, flipped)
    rows.append(("adult", f"label_issues rows (checked {checked} rows)", p, r if sample is None else float("nan"),
                 [f"{len(found)} flagged"], [f"{len(flipped)} flipped"]))
    report("adult", "dirty columns (cell-level kinds)", columns_of(d, *CELL_KINDS),
           set(c for c in dirty.columns if (dirty[c].astype(str) != clean[c].astype(str)).any()) - {"income"}, rows)
    return truth


def obesity(rows, quick):
    df = pd.read_csv(os.path.join(DATA, "uci-obesity", "ObesityDataSet_raw_and_data_sinthetic.csv"))
    d = diagnose(df, target="NObeyesdad")
    dup = d.by_kind("duplicate_rows")
    exact = dup[0].evidence["exact_duplicates"] if dup else 0
    rows.append(("obesity", "duplicate_rows (exact)", 1.0 if exact == 24 else min(exact, 24) / max(exact, 1),
                 min(exact, 24) / 24, [f"{exact} found"], ["24 exact"]))


CASES = {"bank-churn": bank_churn, "icr": icr_join, "cirrhosis": cirrhosis, "raha": raha, "adult": adult,
         "obesity": obesity}


def collect(names: list[str], quick: bool = False, log=None) -> list[dict]:
    """The precision/recall rows of the named cases, as data (for the generated report)."""
    rows: list = []
    if not os.path.isdir(DATA):
        return []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in names:
            t0 = time.perf_counter()
            CASES[name](rows, quick)
            if log:
                log(f"diagnose quality {name}: {time.perf_counter() - t0:.1f} s")
    return [{"case": c, "what": w, "precision": p, "recall": r, "found": f, "truth": t}
            for c, w, p, r, f, t in rows]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="small cases only (a smoke test)")
    ap.add_argument("--cases", default=",".join(CASES))
    args = ap.parse_args()
    if not os.path.isdir(DATA):
        print(f"no shared data at {DATA}: nothing to measure")
        return
    warnings.simplefilter("ignore")
    rows: list = []
    for name in args.cases.split(","):
        t0 = time.perf_counter()
        CASES[name](rows, args.quick)
        print(f"{name}: {time.perf_counter() - t0:.1f} s", flush=True)
    print("\n| case | what | precision | recall | found | truth |")
    print("|---|---|---|---|---|---|")
    for case, what, p, r, found, truth in rows:
        print(f"| {case} | {what} | {p:.2f} | {r:.2f} | {', '.join(found)} | {', '.join(truth)} |")


if __name__ == "__main__":
    main()
