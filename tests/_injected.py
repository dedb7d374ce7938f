"""Seeded frames with injected, known data problems and their ground truth (for diagnose tests).

``kitchen_sink(n, seed)`` returns (df, truth) where truth maps a finding kind to the set of
columns that must be reported under it; everything else in the frame is clean, so any other
column reported under that kind is a false positive.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

CITIES = ["Boston", "Chicago", "Denver", "Seattle", "Austin"]


def base_frame(n: int, rng: np.random.Generator, positive_rate: float = 0.35) -> pd.DataFrame:
    """Clean features and a binary target with ordinary (not perfect) predictors."""
    x = rng.normal(size=(n, 6))
    cat = rng.choice(["a", "b", "c", "d"], n)
    logit = 1.2 * x[:, 0] + 0.8 * x[:, 1] + 0.6 * (cat == "b") + rng.normal(0, 1.0, n)
    threshold = np.quantile(logit, 1 - positive_rate)
    df = pd.DataFrame({f"x{i}": x[:, i] for i in range(6)})
    df["cat_a"] = cat
    df["cat_b"] = rng.choice(["low", "mid", "high"], n)
    df["count"] = rng.poisson(4, n)
    df["flag"] = rng.random(n) < 0.4
    df["age"] = rng.integers(18, 90, n)
    df["y"] = (logit > threshold).astype(int)
    return df


def kitchen_sink(n: int = 2000, seed: int = 0) -> tuple[pd.DataFrame, dict[str, set[str]]]:
    rng = np.random.default_rng(seed)
    df = base_frame(n, rng)
    y = df["y"].to_numpy()
    truth: dict[str, set[str]] = {}
    # target leakage: a proxy, a column filled only when the event happened, a post-hoc value
    df["complained"] = np.where(rng.random(n) < 0.02, 1 - y, y)
    df["refund_amount"] = np.where(y == 1, rng.gamma(2, 50, n), np.nan)
    df["final_score"] = y * 3 + rng.normal(0, 0.3, n)
    truth["target_leakage"] = {"complained", "refund_amount", "final_score"}
    # identifiers
    df["record_id"] = rng.permutation(n) + 100_000
    df["row_no"] = np.arange(n)
    truth["id_column"] = {"record_id", "row_no"}
    # missing values: MCAR and MAR
    x2 = df["x2"].to_numpy().copy()
    x2[rng.random(n) < 0.15] = np.nan
    df["x2"] = x2
    x3 = df["x3"].to_numpy().copy()
    x3[(df["x4"].to_numpy() > 0.8) & (rng.random(n) < 0.8)] = np.nan
    df["x3"] = x3
    truth["missing_values"] = {"x2", "x3", "refund_amount"}
    # outliers
    x5 = df["x5"].to_numpy().copy()
    idx = rng.choice(n, max(3, n // 200), replace=False)
    x5[idx] = x5[idx] * 40 + 60
    df["x5"] = x5
    truth["outliers"] = {"x5"}
    # constant and redundant columns
    df["source"] = "survey"
    truth["constant_column"] = {"source"}
    df["x0_in_cm"] = df["x0"] * 2.54 + rng.normal(0, 1e-3, n)
    truth["redundant_features"] = {"x0", "x0_in_cm"}
    # inconsistent categories: case, spacing and typos
    city = rng.choice(CITIES, n).astype(object)
    k = rng.choice(n, n // 25, replace=False)
    variants = {"Boston": ["boston", " Boston"], "Chicago": ["CHICAGO", "Chicgo"],
                "Denver": ["denver "], "Seattle": ["Seattel"], "Austin": ["austin"]}
    city[k] = [rng.choice(variants[c]) for c in city[k]]
    df["city"] = city
    truth["inconsistent_categories"] = {"city"}
    # mixed units
    kg = rng.normal(75, 12, n)
    lb = rng.random(n) < 0.3
    df["weight"] = np.where(lb, [f"{w * 2.2046:.0f} lb" for w in kg], [f"{w:.1f} kg" for w in kg])
    truth["mixed_units"] = {"weight"}
    # numbers as text with N/A tokens, and a sentinel code
    income = np.round(rng.lognormal(10, 0.5, n)).astype(int).astype(str).astype(object)
    income[rng.random(n) < 0.05] = "?"
    income[rng.random(n) < 0.03] = "n/a"
    df["income"] = income
    score = np.round(rng.normal(50, 10, n), 1)
    score[rng.random(n) < 0.04] = 999
    df["score"] = score
    truth["numeric_as_text"] = {"income", "score"}
    # free text
    words = np.array("the patient reported mild pain after walking and slept poorly during night "
                     "with some fever noted by nurse".split())
    df["notes"] = [" ".join(rng.choice(words, rng.integers(6, 14))) for _ in range(n)]
    truth["free_text"] = {"notes"}
    # duplicate rows: exact copies
    dup = df.sample(30, random_state=seed)
    df = pd.concat([df, dup], ignore_index=True)
    truth["duplicate_rows"] = {"__rows__"}
    return df, truth


def noisy_labels(n: int = 2000, seed: int = 0, rate: float = 0.08) -> tuple[pd.DataFrame, np.ndarray]:
    """A learnable target with ``rate`` of its labels flipped; returns the flipped positions."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 5))
    logit = 3 * x[:, 0] - 2 * x[:, 1] + 1.5 * x[:, 2]
    y = (logit > 0).astype(int)
    flipped = np.sort(rng.choice(n, int(rate * n), replace=False))
    y[flipped] = 1 - y[flipped]
    df = pd.DataFrame({f"f{i}": x[:, i] for i in range(5)})
    df["label"] = np.where(y == 1, "yes", "no")
    return df, flipped


def repeated(n_entities: int = 150, seed: int = 0) -> pd.DataFrame:
    """Patients with 1-6 visits: baseline age/sex/treatment, a varying lab value per visit."""
    rng = np.random.default_rng(seed)
    visits = rng.integers(1, 7, n_entities)
    pid = np.repeat(np.arange(1, n_entities + 1), visits)
    visit_no = np.concatenate([np.arange(v) for v in visits])
    age = np.repeat(rng.integers(30, 85, n_entities), visits)
    sex = np.repeat(rng.choice(["F", "M"], n_entities), visits)
    treat = np.repeat(rng.choice(["drug", "placebo"], n_entities), visits)
    lab = rng.normal(100, 15, len(pid)) + visit_no * 2
    outcome = np.repeat(rng.integers(0, 2, n_entities), visits)
    date = pd.Timestamp("2020-01-01") + pd.to_timedelta(
        np.repeat(rng.integers(0, 300, n_entities), visits) + visit_no * 30, "D")
    df = pd.DataFrame({"patient": pid, "visit_date": date, "age": age, "sex": sex, "treatment": treat,
                       "lab": lab, "outcome": outcome})
    return df.sample(frac=1, random_state=seed).reset_index(drop=True)


def survival(n: int = 400, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    age = rng.integers(40, 85, n)
    stage = rng.integers(1, 4, n)
    hazard = 0.01 * np.exp(0.03 * (age - 60) + 0.4 * stage)
    t_event = rng.exponential(1 / hazard)
    t_cens = rng.uniform(10, 200, n)
    days = np.minimum(t_event, t_cens).round(1) + 0.1
    event = (t_event <= t_cens).astype(int)
    return pd.DataFrame({"age": age, "stage": stage, "marker": rng.normal(size=n),
                         "followup_days": days, "died": event})
