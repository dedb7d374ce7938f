"""Outliers: robust per column (far outside the interquartile fences) and multivariate.

Extreme values are often real (a very high lab value in a very sick patient), so the finding
always asks the expert before anything changes; flagging keeps every value.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from kernel_tools.diagnosis.columns import ColumnProfile, numeric_values
from kernel_tools.diagnosis.dtypes import find_sentinels
from kernel_tools.diagnosis.options import call, keep
from kernel_tools.diagnosis.registry import NO_CLOCK, Clock, Context, KindData, detector
from kernel_tools.findings import Finding, Option
from kernel_tools.plurals import counted
from kernel_tools.vocabulary import Basis, Chart, FindingKind

IQR_K = 3.0
MAX_RATE = 0.05  # more than this outside the fences is a heavy tail, not a few outliers
MV_ROWS = 1500
QUANTILE_ROWS = 20_000


def column_outliers(v: np.ndarray, seed: int = 0) -> dict | None:
    """Counts and fences for one numeric array (log scale for long right tails).

    Fences come from at most QUANTILE_ROWS values (quantiles of a random sample are within
    a fraction of a percent of the exact ones); every row is then counted against them.
    """
    finite = v[np.isfinite(v)]
    if finite.size < 20:
        return None
    ref = finite
    if finite.size > QUANTILE_ROWS:
        ref = finite[np.random.default_rng(seed).choice(finite.size, QUANTILE_ROWS, replace=False)]
    q = np.percentile(ref, [1, 25, 50, 75, 99])
    # a long right tail of non-negative values (incomes, lab values) is judged on log scale
    log = bool(finite.min() >= 0 and q[2] > q[0] and (q[4] - q[2]) / (q[2] - q[0]) > 2)
    x = np.log1p(finite) if log else finite
    q1, q3 = np.log1p(q[[1, 3]]) if log else q[[1, 3]]
    iqr = q3 - q1
    if iqr <= 0:
        return None
    lo, hi = q1 - IQR_K * iqr, q3 + IQR_K * iqr
    # on log scale only the right tail counts: values near zero are not extreme
    out = (x > hi) if log else (x < lo) | (x > hi)
    count = int(out.sum())
    if count == 0 or count / finite.size > MAX_RATE:
        return None
    # a value just past the fence is a tail, not an outlier: one must lie well beyond it
    margin = max(iqr, 0.5 * (hi - (np.log1p(q[2]) if log else q[2])))
    if not (_cut_off(x, hi, margin) or (not log and _cut_off(-x, -lo, margin))):
        return None
    lo_v, hi_v = (np.expm1(lo), np.expm1(hi)) if log else (lo, hi)
    extreme = finite[out]
    order = np.argsort(-np.abs(extreme - q[2]))[:5]
    return {"count": count, "rate": round(count / finite.size, 5), "lower_fence": float(lo_v),
            "upper_fence": float(hi_v), "median": float(q[2]), "log_scale": log,
            "most_extreme": [float(e) for e in extreme[order]]}


def _cut_off(x: np.ndarray, fence: float, margin: float) -> bool:
    """Whether the values above ``fence`` reach ``margin`` past it *and* are set apart from the
    values inside it by a gap wider than ``margin / 2``.

    The largest value of a smooth tail (a Poisson count, a normal measurement) keeps growing
    with the number of rows, so distance alone would call a tail outliers at millions of rows;
    a tail runs on past the fence in small steps, values typed ten times too large do not.
    """
    above = x[x > fence]
    if above.size == 0 or above.max() - fence < margin:
        return False
    inside = x[x <= fence]
    steps = np.diff(np.unique(np.concatenate([[inside.max()] if inside.size else [fence], above])))
    return bool(steps.size and steps.max() > margin / 2)


def multivariate_share(frame: pd.DataFrame, profiles, columns: list[str], seed: int = 0) -> float | None:
    """Share of rows an isolation forest isolates unusually fast (on at most MV_ROWS rows)."""
    if len(columns) < 2 or len(frame) < 50:
        return None
    from sklearn.ensemble import IsolationForest
    from threadpoolctl import threadpool_limits

    sub = frame.iloc[np.random.default_rng(seed).permutation(len(frame))[:MV_ROWS]]
    X = np.column_stack([numeric_values(sub[c], profiles[c]) for c in columns])
    X = X[:, np.isfinite(X).any(axis=0)]  # a column blank on every sampled row (a REDCap form of another event)
    if X.shape[1] < 2:
        return None
    med = np.nanmedian(X, axis=0)
    X = np.where(np.isfinite(X), X, np.where(np.isfinite(med), med, 0.0))
    with threadpool_limits(limits=1, user_api="openmp"):
        forest = IsolationForest(n_estimators=30, random_state=seed).fit(X)
    return round(float((forest.predict(X) == -1).mean()), 4)


def outliers_summary(total: int, columns: list[str], worst: str) -> str:
    """"1 extreme value in 'bp'; it may be real ...", "3 extreme values in 2 columns (most in 'bp'); they
    may be ..." (the lazy diagnosis says it again with the whole data's count)."""
    where = f"in '{worst}'" if len(columns) == 1 else f"in {counted(len(columns), 'column')} (most in '{worst}')"
    they, errors = ("it", "an entry error") if total == 1 else ("they", "entry errors")
    return (f"{counted(total, 'extreme value')} {where}; {they} may be real (e.g. a very sick patient's lab "
            f"value) or {errors} — only a domain expert can tell.")


def flag_label(total: int) -> str:
    """The flag option's label, agreeing with the count: "Flag the 1 extreme value (keep it)"."""
    return f"Flag the {counted(total, 'extreme value')} (keep {'it' if total == 1 else 'them'})"


def find_outliers(df: pd.DataFrame, frame: pd.DataFrame, profiles: dict[str, ColumnProfile],
                  exclude: set[str], clock: Clock = NO_CLOCK) -> tuple[list[Finding], dict[str, float]]:
    per_col, rates = {}, {}
    numeric = [c for c, p in profiles.items() if c not in exclude and p.kind == "numeric"
               and p.nunique > 10 and not pd.api.types.is_timedelta64_dtype(df[c].dtype)]
    for c in clock.reach("outliers", numeric):
        v = numeric_values(df[c], profiles[c])
        codes = find_sentinels(v)  # codes such as 999 are reported as such, not as outliers
        res = column_outliers(np.where(np.isin(v, codes), np.nan, v) if codes else v)
        n_inf = profiles[c].n_inf
        if res is None and n_inf == 0:
            continue
        res = res or {"count": 0, "rate": 0.0}
        if n_inf:
            res["infinite_values"] = n_inf
        per_col[c] = res
        rates[c] = res["rate"]
    if not per_col:
        return [], rates
    cols = list(per_col)
    mv = multivariate_share(frame, profiles, numeric)
    total = sum(v["count"] for v in per_col.values())
    worst = max(cols, key=lambda c: per_col[c]["rate"])
    evidence = {"columns": per_col, "method": f"IQR fences at {IQR_K:g}×IQR (log scale for long tails)",
                "multivariate_outlier_share": mv, "multivariate_sample_size": min(len(frame), MV_ROWS)}
    summary = outliers_summary(total, cols, worst)
    has_inf = any("infinite_values" in v for v in per_col.values())
    severity = "warning" if has_inf or per_col[worst]["rate"] >= 0.005 else "info"

    def handle(action: str) -> dict:
        return call("handle_outliers", columns=cols, action=action, method="iqr")

    options = [
        Option("flag", flag_label(total),
               "Add an indicator column per affected column and keep every value.",
               "extra columns; the extreme values still pull linear models", True, handle("flag")),
        Option("clip", "Clip to the fences",
               "Cap values at the fences learned on the training split.",
               "real extreme cases lose their true magnitude", False, handle("clip")),
        Option("set_missing", "Treat as missing",
               "Replace extreme values by missing and let imputation fill them.",
               "turns possibly real measurements into guesses", False, handle("set_missing")),
        Option("remove", "Remove the rows",
               "Drop rows holding an extreme value.",
               "drops real, often the most important (sickest, richest) cases; can bias the model",
               False, handle("remove")),
        keep("Keep the values unchanged (tree models are robust to them).",
             "linear models and distances can be dominated by a few values"),
    ]
    return [Finding("outliers", cols, severity, summary, evidence, options, "outliers")], rates


@detector("outliers", order=50, finds={FindingKind.OUTLIERS: KindData(chart=Chart.OUTLIERS, basis=Basis.WHOLE_DATA)})
def find_outliers_in(ctx: Context) -> list[Finding]:
    found, rates = find_outliers(ctx.df, ctx.frame, ctx.profiles,
                                 ctx.structural | set(ctx.id_cols)
                                 | ({ctx.entity.id} if ctx.entity.id is not None else set()), ctx.clock)
    ctx.column_stats["outlier_rate"] = rates  # for the plots
    return found
