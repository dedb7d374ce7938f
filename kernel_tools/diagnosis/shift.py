"""Train/test shift: per-column drift and an adversarial-validation score.

If a classifier can tell training rows from test rows, the test set is not a sample of the
same population and a cross-validated score will not hold on it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import ks_2samp

from kernel_tools.diagnosis.columns import ColumnProfile, numeric_values, profile_columns
from kernel_tools.diagnosis.labels import model_matrix
from kernel_tools.diagnosis.options import drop, keep
from kernel_tools.diagnosis.registry import Context, KindData, detector
from kernel_tools.diagnosis.scoring import auroc
from kernel_tools.findings import Finding
from kernel_tools.vocabulary import Basis, FindingKind

SAMPLE = 5000


def _sample(df: pd.DataFrame, size: int, seed: int) -> pd.DataFrame:
    if len(df) <= size:
        return df
    return df.iloc[np.sort(np.random.default_rng(seed).choice(len(df), size, replace=False))]


def column_drift(a: pd.Series, b: pd.Series, prof: ColumnProfile) -> dict:
    va = numeric_values(a, prof)
    if not np.isnan(va).all():
        vb = numeric_values(b, prof)
        va, vb = va[np.isfinite(va)], vb[np.isfinite(vb)]
        if va.size < 5 or vb.size < 5:
            return {}
        res = ks_2samp(va, vb)
        return {"statistic": "ks", "value": round(float(res.statistic), 4), "p_value": float(res.pvalue)}
    pa = a.astype(str).value_counts(normalize=True)
    pb = b.astype(str).value_counts(normalize=True)
    tvd = 0.5 * float(pa.subtract(pb, fill_value=0).abs().sum())
    return {"statistic": "total_variation", "value": round(tvd, 4)}


def adversarial_auc(train: pd.DataFrame, test: pd.DataFrame, profiles, features: list[str], seed: int = 0) -> float:
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.model_selection import StratifiedKFold

    both = pd.concat([train[features], test[features]], ignore_index=True)
    y = np.r_[np.zeros(len(train)), np.ones(len(test))].astype(int)
    X, is_cat = model_matrix(both, profiles, features)
    from threadpoolctl import threadpool_limits

    pred = np.zeros(len(y))
    with threadpool_limits(limits=1, user_api="openmp"):  # see labels.out_of_fold_probabilities
        for tr, te in StratifiedKFold(3, shuffle=True, random_state=seed).split(X, y):
            model = HistGradientBoostingClassifier(max_iter=50, early_stopping=False, random_state=seed,
                                                   categorical_features=is_cat if is_cat.any() else None)
            pred[te] = model.fit(X[tr], y[tr]).predict_proba(X[te])[:, 1]
    return auroc(pred, y == 1)


def find_shift(df: pd.DataFrame, test: pd.DataFrame, profiles: dict[str, ColumnProfile],
               exclude: set[str], seed: int = 0) -> Finding | None:
    features = [c for c in df.columns if c in test.columns and c not in exclude
                and profiles[c].kind != "empty" and profiles[c].nunique > 1]
    missing_in_test = [c for c in df.columns if c not in test.columns and c not in exclude]
    extra_in_test = [str(c) for c in test.columns if c not in df.columns]
    if not features:
        raise ValueError("test shares no feature column with the training frame")
    a, b = _sample(df, SAMPLE, seed), _sample(test, SAMPLE, seed)
    test_profiles = profile_columns(b[features])
    drift = {}
    for c in features:
        prof = profiles[c]
        if prof.kind == "categorical" and prof.parsed_as is None and test_profiles[c].kind != "categorical":
            prof = test_profiles[c]
        drift[c] = column_drift(a[c], b[c], prof)
    drifting = [c for c, d in drift.items() if d and d["value"] >= 0.1 and d.get("p_value", 0) < 0.01]
    drifting.sort(key=lambda c: -drift[c]["value"])
    auc = adversarial_auc(a, b, profiles, features, seed)
    if auc < 0.6 and not drifting:
        return None
    severity = "warning" if auc >= 0.7 or len(drifting) >= 3 else "info"
    evidence = {"adversarial_auroc": round(auc, 4), "sample_size": [len(a), len(b)],
                "drift": {c: drift[c] for c in drifting[:30]},
                "columns_missing_in_test": missing_in_test, "columns_only_in_test": extra_in_test}
    summary = (f"The test data differ from the training data (a classifier tells them apart with "
               f"AUROC {auc:.2f}" + (f"; most in '{drifting[0]}'" if drifting else "")
               + "): cross-validated scores may not hold on it.")
    options = [keep("Keep all columns; report the shift and evaluate on data like the deployment.",
                    "the model may rely on relations that do not hold in the test data",
                    recommended=True, label="Keep, report shift")]
    if drifting:
        options.append(drop(drifting[:5], "drifts between train and test",
                            "removes real signal if the drift is harmless", recommended=False,
                            label="Drop the most drifting columns"))
    return Finding("train_test_shift", drifting or features[:0], severity, summary, evidence, options, None)


@detector("train/test shift", order=120, needs_test=True,
          finds={FindingKind.TRAIN_TEST_SHIFT: KindData(chart=None, basis=Basis.SAMPLE)})
def find_shift_in(ctx: Context) -> list[Finding]:
    assert ctx.test is not None  # needs_test
    found = find_shift(ctx.df, ctx.test, ctx.profiles, ctx.structural | set(ctx.id_cols), ctx.random_state)
    return [found] if found is not None else []
