"""The co-pilot's model vs an external strong reference, on the same prepared data.

After the co-pilot ran a quality case (``quality.py``), its notebook is re-run in this process
up to the model cell, so ``train``, ``test`` and the ``kt.fit_evaluate(...)`` call are exactly
the co-pilot's. Then, one after the other:

- **co-pilot**: that ``fit_evaluate`` call, timed (wall and CPU seconds);
- **reference**: for classification and regression FLAML's AutoML (LightGBM, XGBoost, random
  forests, extra trees, linear models; grouped folds when the co-pilot grouped) with a fixed
  time budget; for survival a random survival forest (scikit-survival) tuned by Optuna over the
  same grouped folds within the same budget;

on the same features, scored on the same prepared holdout with the same metric and a bootstrap
95% interval (whole entities resampled when the holdout has an entity column).

    python benchmarks/reference.py NOTEBOOK --seconds 120
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from pandas.api import types as ptypes

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

MODEL_EPISODE = "train_evaluate"


class _Recorder:
    """``kernel_tools`` as the notebook sees it, but ``fit_evaluate`` keeps its call and time."""

    def __init__(self, module):
        self._module = module
        self.calls: list[dict[str, Any]] = []

    def __getattr__(self, name):
        return getattr(self._module, name)

    def fit_evaluate(self, *args, **kwargs):
        wall, cpu = time.perf_counter(), time.process_time()
        report = self._module.fit_evaluate(*args, **kwargs)
        self.calls.append({"args": args, "kwargs": kwargs, "report": report,
                           "seconds": time.perf_counter() - wall, "cpu_s": time.process_time() - cpu})
        return report


def replay(notebook: Path) -> dict[str, Any]:
    """Run the co-pilot's cells in order through its model cell; the recorded call."""
    import nbformat

    import kernel_tools

    nb = nbformat.read(notebook, as_version=4)
    namespace: dict[str, Any] = {"__name__": "__dcpilot_replay__"}
    recorder = _Recorder(kernel_tools)
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        source = "\n".join(line for line in cell.source.splitlines() if not line.lstrip().startswith(("%", "!")))
        is_model = (cell.metadata.get("dcpilot") or {}).get("episode") == MODEL_EPISODE
        if is_model:
            namespace["kt"] = recorder
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            exec(compile(source, f"<cell {cell.metadata.get('dcpilot', {}).get('step', '?')}>", "exec"), namespace)
        if is_model:
            break
    if not recorder.calls:
        raise RuntimeError(f"{notebook} has no model cell ({MODEL_EPISODE}) that called fit_evaluate")
    return recorder.calls[-1]


def _holdout(report, test: pd.DataFrame, score: np.ndarray, y_test: np.ndarray, classes, groups):
    from kernel_tools.models.evaluate import PRIMARY_METRIC, _metrics
    from kernel_tools.models.uncertainty import bootstrap_interval

    metric = PRIMARY_METRIC[report.task]
    value = _metrics(report.task, y_test, score, classes, primary_only=True)[metric]
    entity = test[groups].to_numpy() if groups and groups in test.columns else None
    interval, _ = bootstrap_interval(
        lambda rows: _metrics(report.task, y_test[rows], score[rows], classes, primary_only=True)[metric],
        len(y_test), entity)
    return value, interval


def flaml_reference(train, test, report, kwargs, seconds: float, random_state: int = 0) -> dict[str, Any]:
    from flaml import AutoML

    from kernel_tools.models.evaluate import _target

    target, groups = kwargs["target"], kwargs.get("groups")
    y, classes = _target(train, target, None, report.task)
    y_test, _ = _target(test, target, None, report.task, classes=classes)
    X, X_test = _plain(train[report.features]), _plain(test[report.features])
    settings: dict[str, Any] = {"task": report.task, "time_budget": seconds, "n_jobs": 1, "verbose": 0,
                                "seed": random_state, "eval_method": "cv", "n_splits": 5}
    if report.task == "classification":
        settings["metric"] = "roc_auc" if len(classes) == 2 else "roc_auc_ovr"
    else:
        settings["metric"] = "r2"
    if groups:
        settings.update(split_type="group", groups=train[groups].to_numpy())
    wall, cpu = time.perf_counter(), time.process_time()
    automl = AutoML()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        automl.fit(X, y, **settings)
        if report.task == "classification":
            proba = automl.predict_proba(X_test)
            score = np.zeros((len(X_test), len(classes)))
            score[:, np.searchsorted(classes, automl.classes_)] = proba
        else:
            score = np.asarray(automl.predict(X_test), dtype=float)
    seconds_used, cpu_used = time.perf_counter() - wall, time.process_time() - cpu
    value, interval = _holdout(report, test, score, y_test, classes, groups)
    return {"name": f"FLAML ({automl.best_estimator})", "holdout": value, "holdout_ci": interval,
            "seconds": seconds_used, "cpu_s": cpu_used, "budget": seconds,
            "config": {k: v for k, v in (automl.best_config or {}).items()}}


def rsf_reference(train, test, report, kwargs, seconds: float, random_state: int = 0) -> dict[str, Any]:
    import optuna
    from sklearn.impute import SimpleImputer
    from sklearn.pipeline import Pipeline
    from sksurv.ensemble import RandomSurvivalForest

    from kernel_tools.models.evaluate import _folds, _target
    from kernel_tools.models.pipelines import FeatureFrame
    from kernel_tools.models.survival import _structured, concordance

    target, time_col, groups = kwargs["target"], kwargs["time"], kwargs.get("groups")
    y, _ = _target(train, target, time_col, "survival")
    y_test, _ = _target(test, target, time_col, "survival")
    numeric = [c for c in report.features if ptypes.is_numeric_dtype(train[c]) or ptypes.is_bool_dtype(train[c])]
    categorical = [c for c in report.features if c not in numeric]
    folds, _ = _folds("survival", y, train[groups].to_numpy() if groups else None, 3, random_state)
    X = train[report.features]

    def forest(params):
        return Pipeline([("features", FeatureFrame(numeric, categorical)),
                         ("impute", SimpleImputer(strategy="median", add_indicator=True)),
                         ("model", RandomSurvivalForest(random_state=random_state, n_jobs=1, **params))])

    def objective(trial):
        params = {"n_estimators": trial.suggest_int("n_estimators", 100, 400, step=100),
                  "min_samples_leaf": trial.suggest_int("min_samples_leaf", 3, 60, log=True),
                  "max_features": trial.suggest_categorical("max_features", ["sqrt", 0.33, 0.66]),
                  "max_depth": trial.suggest_categorical("max_depth", [4, 8, 16])}
        scores = []
        for train_idx, val_idx in folds:
            model = forest(params).fit(X.iloc[train_idx], _structured(y[train_idx]))
            scores.append(concordance(y[val_idx], model.predict(X.iloc[val_idx])))
        return float(np.nanmean(scores))

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    wall, cpu = time.perf_counter(), time.process_time()
    study = optuna.create_study(direction="maximize", sampler=optuna.samplers.TPESampler(seed=random_state))
    # the library default first, so the search can only improve on it
    study.enqueue_trial({"n_estimators": 100, "min_samples_leaf": 3, "max_features": "sqrt", "max_depth": 16})
    study.optimize(objective, timeout=seconds)
    model = forest(study.best_params).fit(X, _structured(y))
    score = np.asarray(model.predict(test[report.features]), dtype=float)
    seconds_used, cpu_used = time.perf_counter() - wall, time.process_time() - cpu
    value, interval = _holdout(report, test, score, y_test, None, groups)
    return {"name": f"random survival forest (Optuna, {len(study.trials)} trials)", "holdout": value,
            "holdout_ci": interval, "seconds": seconds_used, "cpu_s": cpu_used, "budget": seconds,
            "config": study.best_params}


def _plain(frame: pd.DataFrame) -> pd.DataFrame:
    """Text columns as pandas categories (mixed types as text): what AutoML libraries take."""
    out = frame.copy()
    for name in out.columns:
        column = out[name]
        if not (ptypes.is_numeric_dtype(column) or ptypes.is_bool_dtype(column)):
            out[name] = column.astype(str).where(column.notna(), None).astype("category")
    return out


def compare(notebook: Path, seconds: float, random_state: int = 0) -> dict[str, Any]:
    """The co-pilot's model and the reference on the co-pilot's prepared train / test."""
    call = replay(notebook)
    report, kwargs = call["report"], dict(call["kwargs"])
    train = call["args"][0] if call["args"] else kwargs.pop("df")
    test = kwargs.get("test")
    if test is None or report.holdout_score is None:
        raise RuntimeError("the co-pilot's model cell had no scored holdout to compare on")
    if report.task == "survival":
        reference = rsf_reference(train, test, report, kwargs, seconds, random_state)
    else:
        reference = flaml_reference(train, test, report, kwargs, seconds, random_state)
    copilot = {"name": report.model_name, "holdout": report.holdout_score, "holdout_ci": report.holdout_ci,
               "seconds": call["seconds"], "cpu_s": call["cpu_s"], "candidates_tried": report.candidates_tried,
               "selection": report.selection, "cv_sd": report.cv_sd,
               "calibration": {k: v for k, v in (report.calibration or {}).items() if k != "curve"}}
    return {"metric": report.metric, "task": report.task, "train_rows": len(train), "test_rows": len(test),
            "features": len(report.features), "copilot": copilot, "reference": reference,
            "gap": copilot["holdout"] - reference["holdout"],
            "time_ratio": copilot["seconds"] / reference["seconds"] if reference["seconds"] else None}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("notebook", type=Path, help="the co-pilot's notebook.ipynb")
    ap.add_argument("--seconds", type=float, default=120, help="the reference's time budget")
    args = ap.parse_args()
    print(json.dumps(compare(args.notebook, args.seconds), indent=2, default=str))


if __name__ == "__main__":
    main()
