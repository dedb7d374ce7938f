"""The Weibull AFT candidate fitted by its exact gradient is lifelines' WeibullAFTFitter: the same
coefficients, medians and survival curves, and on the benchmark's survival table the same fold
scores and the same chosen model; when the optimiser misses, lifelines fits."""

from __future__ import annotations

import importlib.util
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from lifelines import WeibullAFTFitter
from lifelines.datasets import load_rossi

import kernel_tools as kt
from kernel_tools.models import weibull
from kernel_tools.models.survival import AFTEstimator, survival_target
from kernel_tools.models.weibull import fit_weibull_aft

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"


def rossi_matrix() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rossi = load_rossi()  # lifelines' recidivism data (development half: ll_rossi)
    X = rossi.drop(columns=["week", "arrest"]).to_numpy(dtype=float)
    return X, rossi["week"].to_numpy(dtype=float), rossi["arrest"].to_numpy(dtype=float)


def lifelines_fit(X, duration, event, penalizer=0.01) -> tuple[WeibullAFTFitter, pd.DataFrame]:
    frame = pd.DataFrame(X, columns=[f"x{i}" for i in range(X.shape[1])])
    model = WeibullAFTFitter(penalizer=penalizer)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(frame.assign(_d=duration, _e=event), duration_col="_d", event_col="_e")
    return model, frame


@pytest.mark.parametrize("penalizer", [0.01, 0.5])
def test_the_gradient_fit_is_lifelines_fit(penalizer):
    X, duration, event = rossi_matrix()
    fit = fit_weibull_aft(X, duration, event, penalizer)
    reference, frame = lifelines_fit(X, duration, event, penalizer)
    assert fit.by == "gradient"
    lam = reference.params_.loc["lambda_"]
    np.testing.assert_allclose(fit.coef, lam[frame.columns].to_numpy(), atol=1e-4)
    assert fit.intercept == pytest.approx(lam["Intercept"], abs=1e-4)
    assert fit.log_rho == pytest.approx(reference.params_.loc[("rho_", "Intercept")], abs=1e-4)
    np.testing.assert_allclose(np.exp(fit.log_median(X)), reference.predict_median(frame).to_numpy(), rtol=1e-4)
    times = np.array([0.0, 10, 30, 52])
    curves = reference.predict_survival_function(frame.iloc[:20], times=times).to_numpy().T
    np.testing.assert_allclose(fit.survival(X[:20], times), curves, atol=1e-5)


def test_a_missed_optimum_falls_back_to_lifelines(monkeypatch):
    X, duration, event = rossi_matrix()
    monkeypatch.setattr(weibull, "GRADIENT_TOLERANCE", 0.0)  # no gradient is ever small enough
    fit = fit_weibull_aft(X, duration, event, 0.01)
    assert fit.by == "lifelines"
    monkeypatch.undo()
    np.testing.assert_allclose(fit.coef, fit_weibull_aft(X, duration, event, 0.01).coef, atol=1e-4)


def test_the_estimator_ranks_by_the_median_and_refuses_what_lifelines_refused():
    X, duration, event = rossi_matrix()
    X = np.column_stack([X, np.ones(len(X))])  # a constant column carries no weight
    aft = AFTEstimator(penalizer=0.01).fit(X, survival_target(duration, event))
    reference, frame = lifelines_fit(X[:, :-1], duration, event)
    risk = aft.predict(X)
    assert np.allclose(risk, -np.log(reference.predict_median(frame).to_numpy()), atol=1e-4)
    assert aft.predict_survival(X[:3], [10, 52]).shape == (3, 2)
    with pytest.raises(ValueError, match="positive durations"):
        AFTEstimator().fit(X, survival_target(duration - 100, event))
    with pytest.raises(ValueError, match="finite features"):
        AFTEstimator().fit(np.where(X > 40, np.inf, X), survival_target(duration, event))
    with pytest.raises(ValueError, match="weibull"):
        AFTEstimator("lognormal").fit(X, survival_target(duration, event))


def _benchmark_survival_model_step(rows: int):
    spec = importlib.util.spec_from_file_location("_bench_scale_weibull", BENCH / "bench_scale.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    df = module.make_tables(rows)[1]
    df, _ = kt.fix_dtypes(df, columns=["admitted"], na_tokens=[], sentinels={})
    df, _ = kt.aggregate_per_entity(df, id="patient_id", time="admitted", how="baseline")
    train, test, _ = kt.split(df, target="died", groups="patient_id")
    gaps = [c for c in train.columns if train[c].isna().any()]
    train, imputation = kt.impute(train, method="auto", indicators=True, target="died", columns=gaps)
    return lambda: kt.fit_evaluate(train, target="died", task="survival", time="days", groups="patient_id",
                                   budget=300, test=imputation.apply(test), preprocess=[imputation])


@pytest.mark.slow
def test_the_benchmark_survival_step_chooses_and_scores_as_with_lifelines(monkeypatch):
    """The 1,000-row survival table of bench_scale.py (synthetic), as the CLI's notebook runs it."""
    step = _benchmark_survival_model_step(1000)
    fast = step()
    monkeypatch.setattr(weibull, "GRADIENT_TOLERANCE", 0.0)  # every fit by lifelines, as before
    slow = step()
    assert fast.model_name == slow.model_name
    assert fast.metrics == pytest.approx(slow.metrics, abs=1e-6)
    for name, result in slow.candidates.items():
        assert fast.candidates[name]["cv_scores"] == pytest.approx(result["cv_scores"], abs=1e-4), name
