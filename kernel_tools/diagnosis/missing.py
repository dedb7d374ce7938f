"""Missing values: how many, and evidence about why (the mechanism decides the remedy).

Missing completely at random is harmless to impute; missingness explained by other columns
(MAR) calls for a model-based imputer; missingness that predicts the outcome is information
in itself, so indicator columns should be kept.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import rankdata

from kernel_tools.diagnosis.codebook import real_profiles
from kernel_tools.diagnosis.columns import ColumnProfile, numeric_values
from kernel_tools.diagnosis.leakage import strength
from kernel_tools.diagnosis.options import call, drop, keep
from kernel_tools.diagnosis.registry import NO_CLOCK, Clock, Context, KindData, detector
from kernel_tools.diagnosis.scoring import metric_name, missingness_score
from kernel_tools.findings import Finding, Option
from kernel_tools.plurals import counted
from kernel_tools.vocabulary import Basis, Chart, FindingKind

DROP_RATE = 0.6


def _rank_matrix(frame: pd.DataFrame, profiles: dict[str, ColumnProfile], columns: list[str]):
    cols, ranks = [], []
    for c in columns:
        v = numeric_values(frame[c], profiles[c])
        if np.isfinite(v).sum() < 10:
            continue
        v = np.where(np.isfinite(v), v, np.nanmedian(v))
        cols.append(c)
        ranks.append(rankdata(v))
    return cols, (np.column_stack(ranks) if ranks else np.empty((len(frame), 0)))


NOT_ESTIMATED = "not estimated: the diagnosis's time budget ran out first"


def mechanism_evidence(frame, profiles, columns, outcome, folds, clock: Clock = NO_CLOCK,
                       memo: Any = None) -> dict[str, dict]:
    """Per column: which other column best predicts its missingness, and the target's link (for
    the columns ``clock`` reaches; the others say it was not estimated, never a guess).
    ``memo``: the target links already computed (:func:`~.scoring.missingness_score`)."""
    others = [c for c in profiles if profiles[c].kind in ("numeric", "bool", "datetime")
              or profiles[c].parsed_as in ("numeric", "bool", "datetime")]
    names, ranks = _rank_matrix(frame, profiles, others[:60])
    out = {c: {"mechanism": NOT_ESTIMATED} for c in columns}
    for c in clock.reach("missing values", columns):
        miss = frame[c].isna().to_numpy()
        n1 = int(miss.sum())
        n0 = len(miss) - n1
        ev: dict = {}
        if n1 and n0 and ranks.shape[1]:
            auc = (ranks[miss].sum(axis=0) - n1 * (n1 + 1) / 2) / (n1 * n0)
            auc = np.where(np.array(names) == c, 0.5, auc)
            g = np.abs(2 * auc - 1)
            j = int(np.argmax(g))
            ev["best_predictor_of_missingness"] = names[j]
            ev["predictor_auroc"] = round(float(max(auc[j], 1 - auc[j])), 4)
        if outcome is not None and outcome.target is not None and n1 and n0:
            s = missingness_score(miss, outcome, folds, memo)
            ev["target_link_" + metric_name(outcome.kind)] = round(s, 4)
            ev["target_link_strength"] = round(strength(s, outcome.kind), 4)
        link = ev.get("target_link_strength", 0.0)
        pred = ev.get("predictor_auroc", 0.5)
        if link >= 0.2:
            ev["mechanism"] = "informative: missingness is linked to the outcome (MNAR or MAR)"
        elif pred >= 0.65:
            ev["mechanism"] = f"MAR-like: explained by '{ev['best_predictor_of_missingness']}'"
        else:
            ev["mechanism"] = "MCAR-like: not explained by other columns or the outcome"
        out[c] = ev
    return out


def find_missing(df: pd.DataFrame, frame: pd.DataFrame, profiles: dict[str, ColumnProfile],
                 exclude: set[str], outcome, folds, clock: Clock = NO_CLOCK, memo: Any = None) -> list[Finding]:
    cols = [c for c, p in profiles.items() if p.n_missing > 0 and c not in exclude]
    if not cols:
        return []
    target = outcome.target if outcome is not None else None
    mech = mechanism_evidence(frame, profiles, [c for c in cols if profiles[c].n_present > 0],
                              outcome if target else None, folds, clock, memo)
    findings = []
    heavy = [c for c in cols if profiles[c].missing_rate >= DROP_RATE]
    light = [c for c in cols if profiles[c].missing_rate < DROP_RATE]
    for c in heavy:
        rate = profiles[c].missing_rate
        ev = {"missing_rate": round(rate, 4), "missing_count": profiles[c].n_missing,
              "sample_size": len(frame), **mech.get(c, {})}
        findings.append(Finding(
            "missing_values", [c], "warning" if rate < 1 else "critical",
            f"'{c}' is missing in {rate:.0%} of rows: too sparse to impute reliably.",
            ev,
            [drop([c], "mostly missing", "loses whatever the few recorded values say"),
             Option("impute_auto", "Impute with indicator",
                    f"Fill '{c}' with a model-based imputer and add a 'was missing' indicator.",
                    "imputed values are mostly invented when so much is missing", False,
                    call("impute", method="auto", indicators=True, target=target, columns=[c])),
             keep("Leave the gaps for a model that handles missing values natively.",
                  "most models need complete data")],
            "imputation",
        ))
    if light:
        per_col = {c: {"missing_rate": round(profiles[c].missing_rate, 4),
                       "missing_count": profiles[c].n_missing, **mech.get(c, {})} for c in light}
        informative = any(v.get("target_link_strength", 0) >= 0.2 for v in per_col.values())
        mar = any(v.get("predictor_auroc", 0.5) >= 0.65 for v in per_col.values())
        worst = max(light, key=lambda c: profiles[c].missing_rate)
        total = sum(profiles[c].n_missing for c in light)
        rows_any = int(df[light].isna().any(axis=1).sum())
        severity = "warning" if profiles[worst].missing_rate >= 0.05 else "info"
        where = (f"{counted(len(light), 'column')} have missing values ({counted(total, 'cell')}, up to "
                 f"{profiles[worst].missing_rate:.0%} in '{worst}')" if len(light) > 1
                 else f"'{worst}' has missing values ({counted(total, 'cell')}, {profiles[worst].missing_rate:.0%})")
        summary = (where
                   + ("; whether a value is missing is linked to the outcome" if informative
                      else "; the gaps are explained by other columns" if mar else "")
                   + ".")
        options = [
            Option("impute_auto", "Impute (model-based) + indicators",
                   "Fill the gaps with an imputer chosen for the data size (iterative/model-based), "
                   "fitted on the training split only, and keep 'was missing' indicator columns.",
                   "imputed values are estimates; the indicators add columns", True,
                   call("impute", method="auto", indicators=True, target=target, columns=light)),
            Option("impute_median", "Impute median / most frequent",
                   "Fill numbers with the median and categories with the most frequent value.",
                   "ignores relations between columns; shrinks variance" +
                   ("; loses the information that a value was missing" if informative else ""),
                   False, call("impute", method="median", indicators=informative, target=target, columns=light)),
            Option("impute_missforest", "Impute with MissForest",
                   "Random-forest imputation (hyperimpute's when installed, else scikit-learn's), "
                   "strong for mixed data.",
                   "slow on large data", False,
                   call("impute", method="missforest", indicators=informative, target=target,
                        columns=light)),
            keep("Leave the gaps for a model that handles missing values natively (gradient boosting).",
                 "limits the choice of models; linear and survival models need complete data"),
        ]
        findings.append(Finding(
            "missing_values", light, severity, summary,
            {"columns": per_col, "rows_with_any_missing": rows_any, "sample_size": len(frame)},
            options, "imputation",
        ))
    return findings


@detector("missing values", order=40, finds={FindingKind.MISSING_VALUES: KindData(chart=Chart.MISSING, basis=Basis.WHOLE_DATA)})
def find_missing_in(ctx: Context) -> list[Finding]:
    # blanks by design (forms a REDCap event does not hold) are structure, not missing values
    return find_missing(ctx.df, ctx.frame, real_profiles(ctx), ctx.structural, ctx.sub if ctx.target else None,
                        ctx.folds, ctx.clock, ctx.memo)
