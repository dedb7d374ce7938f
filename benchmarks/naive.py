"""The naive pipeline: what a general co-pilot typically writes for "train a model on this".

Mean / most-frequent imputation, one-hot encoding, every column but the target as a feature
(identifiers, leaked columns and the follow-up time included), a random 80/20 row split, a
default random forest, accuracy (classification, survival treated as "did the event happen")
or R² (regression) on that split. ``fit_naive`` returns the model and its self-reported score;
``score_holdout`` rates any predictions with the task's right metric on the honest holdout.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
from sklearn.impute import SimpleImputer
from sklearn.metrics import accuracy_score, r2_score, roc_auc_score
from sklearn.model_selection import train_test_split
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import FunctionTransformer, OneHotEncoder

RIGHT_METRIC = {"classification": "roc_auc", "regression": "r2", "survival": "c_index"}


@dataclass
class NaiveResult:
    pipeline: Pipeline
    features: list[str]
    self_metric: str
    self_score: float
    task: str  # what the naive pipeline treated the problem as


def _as_text(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.astype(object).where(frame.notna(), np.nan).astype(str).replace("nan", np.nan)


def _preprocessor(X: pd.DataFrame) -> ColumnTransformer:
    numeric = [c for c in X.columns if pd.api.types.is_numeric_dtype(X[c]) or pd.api.types.is_bool_dtype(X[c])]
    other = [c for c in X.columns if c not in numeric]
    categorical = make_pipeline(
        FunctionTransformer(_as_text),
        SimpleImputer(strategy="most_frequent"),
        OneHotEncoder(handle_unknown="ignore"),
    )
    return ColumnTransformer([("num", SimpleImputer(strategy="mean"), numeric),
                              ("cat", categorical, other)])


def fit_naive(train: pd.DataFrame, target: str, task: str, random_state: int = 0) -> NaiveResult:
    """Fit the naive pipeline on ``train`` (rows without a target are dropped, as they must be)."""
    data = train[train[target].notna()]
    X, y = data.drop(columns=[target]), data[target]
    as_regression = task == "regression"
    if not as_regression:
        y = y.astype(str)
    X_fit, X_val, y_fit, y_val = train_test_split(X, y, test_size=0.2, random_state=random_state)
    model = (RandomForestRegressor if as_regression else RandomForestClassifier)(random_state=random_state, n_jobs=1)
    pipeline = Pipeline([("prep", _preprocessor(X)), ("model", model)])
    pipeline.fit(X_fit, y_fit)
    predicted = pipeline.predict(X_val)
    if as_regression:
        metric, score = "r2", r2_score(y_val, predicted)
    else:
        metric, score = "accuracy", accuracy_score(y_val, predicted)
    return NaiveResult(pipeline, list(X.columns), metric, float(score),
                       "regression" if as_regression else "classification")


def predict_scores(result: NaiveResult, frame: pd.DataFrame) -> np.ndarray:
    """Regression: predictions; binary: P(second class); multiclass: the probability matrix."""
    X = frame[result.features]
    if result.task == "regression":
        return result.pipeline.predict(X)
    proba = result.pipeline.predict_proba(X)
    return proba[:, 1] if proba.shape[1] == 2 else proba


def score_holdout(task: str, y_true: pd.Series, scores: np.ndarray, *, classes: list[str] | None = None,
                  time: pd.Series | None = None) -> float:
    """The task's right metric: AUROC (macro one-vs-rest for several classes), R², Harrell's C."""
    if task == "regression":
        return float(r2_score(y_true, scores))
    if task == "survival":
        from lifelines.utils import concordance_index

        return float(concordance_index(time.to_numpy(), -np.asarray(scores), y_true.astype(int).to_numpy()))
    y = y_true.astype(str).to_numpy()
    if np.ndim(scores) == 1:
        return float(roc_auc_score(y == classes[1], scores))
    present = np.isin(classes, y)
    return float(roc_auc_score(y, np.asarray(scores)[:, present] / np.asarray(scores)[:, present].sum(1, keepdims=True),
                               multi_class="ovr", average="macro", labels=list(np.asarray(classes)[present])))
