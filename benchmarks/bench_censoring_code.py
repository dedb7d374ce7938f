"""How stable is the censoring code read from a status of 3+ codes (``event_codes.censoring_code``)?

On the development-half survival tables whose status has three codes or more (ss_cgvhd, the
status of survival::pbc that survival/pbcseq starts from, and survival/mgus2 coded as the
survival package's competing-risks example: progression 1, else death 2, else censored 0), the
code chosen on the whole table and on subsamples (without replacement, ``--seeds`` each): how
often it is the same, how often none is chosen (the codes stay classes), how often the choice is
uncertain (marked ``?``: asked as such), and the rank test's p. Never on a sealed-half table
(``halves.half``). Then generated data, ``--seeds`` tables each, for what the real tables (all
censored 0) cannot show: a censoring code other than 0 beside a 0 (how often it is found, and
sure), and classes next to a time unrelated to them (how often read as a status at all).

    python benchmarks/bench_censoring_code.py --fractions 0.5 0.8 --seeds 10
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE)]

import fresh  # noqa: E402
import halves  # noqa: E402
import sweep  # noqa: E402
from scipy.stats import mannwhitneyu  # noqa: E402

from kernel_tools.diagnosis.event_codes import censoring_code  # noqa: E402
from kernel_tools.diagnosis.task import FOLLOW_UP_NAME  # noqa: E402


def tables() -> dict[str, tuple[np.ndarray, np.ndarray, str]]:
    """name -> (status, follow-up, the follow-up's column name)."""
    catalog = {d.name: d for d in [*sweep.catalog(), *fresh.catalog()]}
    out = {}
    for name in ("ss_cgvhd", "survival/pbcseq", "survival/mgus2"):
        assert halves.half(name) == "dev", name
        d = catalog[name]
        df = d.load()
        if name == "survival/mgus2":  # the competing-risks reading of its pstat/death pairs
            status = np.where(df["pstat"] == 1, 1, 2 * df["death"])
            time = np.where(df["pstat"] == 1, df["ptime"], df["futime"])
            out[f"{name} (pstat/death)"] = (status.astype(float), time.astype(float), "etime")
        else:
            out[name] = (df[d.target].to_numpy(float), df[d.time].to_numpy(float), str(d.time))
    return out


def reading(status: np.ndarray, time: np.ndarray, named: bool) -> dict:
    """The chosen code (None: the codes stay classes), the longest-followed code and its rank test."""
    coding = censoring_code(status, time, named)
    medians = {c: float(np.median(time[status == c])) for c in np.unique(status)}
    order = sorted(medians, key=lambda c: -medians[c])
    top = order[0]
    p = float(mannwhitneyu(time[status == top], time[status != top], alternative="greater").pvalue)
    chosen = None if coding is None else f"{coding.censored:g}" + ("?" if coding.uncertain else "")
    return {"chosen": chosen, "longest": top, "p": p,
            "ratio": medians[top] / medians[order[1]], "zeros": int((status == 0).sum())}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--fractions", type=float, nargs="+", default=[0.5, 0.8])
    ap.add_argument("--seeds", type=int, default=10)
    args = ap.parse_args()
    for name, (status, time, column) in tables().items():
        ok = ~np.isnan(status) & ~np.isnan(time)
        status, time = status[ok], time[ok]
        named = bool(FOLLOW_UP_NAME.search(column))
        full = reading(status, time, named)
        counts = {f"{c:g}": int((status == c).sum()) for c in np.unique(status)}
        print(f"{name}: {len(status)} rows, codes {counts}, follow-up '{column}' named as one: {named}")
        print(f"  whole table: chosen {full['chosen']}, longest-followed {full['longest']:g}, "
              f"p {full['p']:.3g}, median ratio {full['ratio']:.2f}")
        for frac in args.fractions:
            rows = []
            for seed in range(args.seeds):
                idx = np.random.default_rng(seed).choice(len(status), int(frac * len(status)), replace=False)
                rows.append(reading(status[idx], time[idx], named))
            r = pd.DataFrame(rows)
            chosen = r["chosen"].fillna("none").value_counts().to_dict()
            print(f"  {frac:.0%} subsamples x{args.seeds}: chosen {chosen}, longest-followed "
                  f"{r['longest'].map('{:g}'.format).value_counts().to_dict()}, p median {r['p'].median():.3g} "
                  f"(range {r['p'].min():.2g}-{r['p'].max():.2g}), ratio {r['ratio'].min():.2f}-{r['ratio'].max():.2f}, "
                  f"rows coded 0: {r['zeros'].min()}-{r['zeros'].max()}")
    synthetic(args.seeds)


def registry(codes: dict[int, float], censored: int | None, n: int, seed: int,
             entry: float = 4.0) -> tuple[np.ndarray, np.ndarray]:
    """(status, time) of a cohort whose status takes ``codes`` (code -> share); the rows of
    ``censored`` are followed until the study ends (after ``entry`` to 10 years: a small ``entry``
    is a cohort still recruiting, some of it followed briefly), the others until their event
    (``censored`` None: the codes are classes and the time has nothing to do with them)."""
    rng = np.random.default_rng(seed)
    status = rng.choice(list(codes), n, p=list(codes.values())).astype(float)
    end = rng.uniform(entry, 10, n)
    if censored is None:
        return status, end
    return status, np.where(status == censored, end, np.minimum(rng.exponential(3.0, n), end))


def synthetic(seeds: int) -> None:
    cases = {"censored 1 beside 0 (15% of 200 rows)": ({0: 0.45, 1: 0.15, 2: 0.4}, 1, 200, 4.0),
             "censored 1 beside 0 (8% of 100 rows), still recruiting": ({0: 0.5, 1: 0.08, 2: 0.42}, 1, 100, 0.5),
             "censored 2 in 1/2/3 (10% of 150 rows), still recruiting": ({1: 0.5, 2: 0.1, 3: 0.4}, 2, 150, 0.5),
             "censored 0 (4% of 100 rows), still recruiting": ({0: 0.04, 1: 0.86, 2: 0.1}, 0, 100, 0.5),
             "classes 0/1/2 next to an unrelated time (300 rows)": ({0: 0.5, 1: 0.3, 2: 0.2}, None, 300, 0.5),
             "classes 0/1/2/3 next to an unrelated time (60 rows)": ({0: 0.4, 1: 0.3, 2: 0.2, 3: 0.1}, None, 60, 0.5)}
    for label, (codes, censored, n, entry) in cases.items():
        for named in (False, True):
            chosen = pd.Series([reading(*registry(codes, censored, n, seed, entry), named)["chosen"]
                                for seed in range(seeds)]).fillna("none").value_counts().to_dict()
            print(f"synthetic {label}, time named as a follow-up: {named}: chosen {chosen} of {seeds}")


if __name__ == "__main__":
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        main()
