"""ModelReport: what fit_evaluate found, for the coordinator (``to_dict``) and for people
(``_repr_html_``: scores, warnings first, importance and, for survival, risk-group curves)."""

from __future__ import annotations

import base64
import html
import io
import math
from dataclasses import dataclass, field
from typing import Any

from sklearn.pipeline import Pipeline

from kernel_tools.vocabulary import TaskKind


@dataclass(repr=False)
class ModelReport:
    """The result of :func:`kernel_tools.fit_evaluate`.

    ``pipeline`` = the already-fitted preprocessing transformers + the chosen model refit on
    all training rows; it takes raw data as it was before those preprocessing steps (it
    pickles: ``joblib.dump(report.pipeline, path)``).

    How sure and how good the score is:

    - ``holdout_ci``: ``[lo, hi]``, bootstrap 95% interval of the holdout metric (None without
      a holdout); ``cv_sd``: standard deviation of the chosen model's fold scores.
    - ``cv_score``: the mean of ``cv_scores`` (a regression's: of each fold's own R², low on tiny
      folds; the mean of ``cv_shared_scores`` is its pooled out-of-fold R²).
    - ``cv_interval``: ``[lo, hi]``, 95% interval of the cross-validated mean (corrected for the
      folds sharing rows; of the same scores ``cv_score`` averages), ``cv_se`` its standard error; ``cv_repeats``: how many random
      partitions into folds it averages; ``estimate``: which estimate it is and why, in a sentence.
    - ``cv_shared_scores`` (regression): each fold's R² against the variance of every
      cross-validated target, not its own few rows' (:func:`~kernel_tools.models.stability.shared_scale`):
      what the fold stability check reads; their mean is the pooled out-of-fold R².
      ``cv_fold_skill`` (regression): each fold's R² against predicting the training folds' mean
      on its rows: at or below 0 a fold far below the others is broken, above it merely worse;
      ``cv_fold_suspects``: per fold, the row that dominates its errors with a far-out value (a
      likely entry error, in words) or None.
    - ``calibration``: for classification ``{"brier", "curve"}``; for survival
      ``{"integrated_brier", "time" (the median follow-up), "curve"}``; ``curve`` holds lists
      ``predicted``, ``observed``, ``n`` per group; ``on`` says holdout or out-of-fold.
    - ``candidates_tried``: settings cross-validated in all (the search counts each);
      ``selection``: why this model, in a sentence.
    - ``sampled``: sentences saying which parts that only rank or explain ran on a sample
      because the table is large (:mod:`kernel_tools.scale`; never the scores or intervals);
    - ``degraded``: sentences saying what was cut to stay within ``budget`` seconds;
      ``timings``: wall seconds per phase.
    """

    task: str
    target: str
    metric: str
    cv_score: float
    cv_scores: list[float]
    holdout_score: float | None
    metrics: dict[str, float]
    model_name: str
    candidates: dict[str, dict[str, Any]]
    features: list[str]
    importance: list[dict[str, Any]]
    warnings: list[str]
    pipeline: Pipeline
    grouped: bool
    n_train: int
    n_test: int
    time: str | None = None
    groups: str | None = None
    risk_groups: dict[str, dict[str, Any]] | None = field(default=None, repr=False)
    holdout_ci: list[float] | None = None
    cv_sd: float | None = None
    calibration: dict[str, Any] | None = None
    candidates_tried: int = 0
    selection: str = ""
    sampled: list[str] = field(default_factory=list)
    degraded: list[str] = field(default_factory=list)
    budget: float | None = None
    timings: dict[str, float] = field(default_factory=dict)
    cv_interval: list[float] | None = None
    cv_se: float | None = None
    cv_repeats: int = 1
    estimate: str = ""
    cv_shared_scores: list[float] | None = None
    cv_fold_skill: list[float] | None = None
    cv_fold_suspects: list[str | None] | None = None

    def __repr__(self) -> str:
        """One paragraph: what a reader (or the co-pilot reading text output) needs first."""
        text = (
            f"ModelReport({self.task} of {self.target!r}: {self.model_name}, {self.metric} cv "
            f"{_plain(self.cv_score)}{_interval(self.cv_interval, _plain)} ± "
            f"{_plain(self.metrics.get('cv_' + self.metric + '_std'))} ({self._folds()})"
        )
        if self.holdout_score is not None:
            text += f", holdout {_plain(self.holdout_score)}{_interval(self.holdout_ci, _plain)} (n={self.n_test})"
        if self.cv_repeats > 1:
            text += f"; {self.estimate}"
        text += f"; {self.n_train} rows, {len(self.features)} features"
        text += f"; {self.candidates_tried} settings tried"
        if self.importance:
            text += f"; top feature {self.importance[0]['feature']!r}"
        if self.warnings:
            text += "; warnings: " + " | ".join(self.warnings)
        if self.sampled:
            text += "; on a sample: " + " | ".join(self.sampled)
        if self.degraded:
            text += "; degraded to fit the budget: " + " | ".join(self.degraded)
        return text + ")"

    def _folds(self) -> str:
        """'5 grouped folds', or '5 × 5 grouped folds' when the partition was repeated."""
        grouped = "grouped " if self.grouped else ""
        if self.cv_repeats > 1:
            return f"{self.cv_repeats} × {len(self.cv_scores) // self.cv_repeats} {grouped}folds"
        return f"{len(self.cv_scores)} {grouped}folds"

    def to_dict(self) -> dict[str, Any]:
        """Everything but the pipeline, JSON-safe (NaN becomes None)."""
        return _json_safe(
            {
                "task": self.task,
                "target": self.target,
                "time": self.time,
                "groups": self.groups,
                "metric": self.metric,
                "cv_score": self.cv_score,
                "cv_scores": self.cv_scores,
                "cv_shared_scores": self.cv_shared_scores,
                "cv_fold_skill": self.cv_fold_skill,
                "cv_fold_suspects": self.cv_fold_suspects,
                "holdout_score": self.holdout_score,
                "metrics": self.metrics,
                "model_name": self.model_name,
                "candidates": self.candidates,
                "features": self.features,
                "importance": self.importance,
                "warnings": self.warnings,
                "grouped": self.grouped,
                "n_train": self.n_train,
                "n_test": self.n_test,
                "risk_groups": self.risk_groups,
                "holdout_ci": self.holdout_ci,
                "cv_sd": self.cv_sd,
                "cv_interval": self.cv_interval,
                "cv_se": self.cv_se,
                "cv_repeats": self.cv_repeats,
                "estimate": self.estimate,
                "calibration": self.calibration,
                "candidates_tried": self.candidates_tried,
                "selection": self.selection,
                "sampled": self.sampled,
                "degraded": self.degraded,
                "budget": self.budget,
                "timings": self.timings,
                "model_card": self.model_card(),
            }
        )

    def model_card(self) -> dict[str, Any]:
        """The model's part of a model card (JSON-safe): what it is, how good and how sure,
        how calibrated, on which features, for what use, and its known limits. The data and
        the decisions that prepared it belong to whoever ran the preparation."""
        metric = {"name": self.metric, "cv": self.cv_score, "cv_sd": self.cv_sd, "cv_interval": self.cv_interval,
                  "cv_folds": len(self.cv_scores) // max(self.cv_repeats, 1), "cv_repeats": self.cv_repeats,
                  "estimate": self.estimate, "grouped": self.grouped,
                  "holdout": self.holdout_score, "holdout_ci": self.holdout_ci, "n_test": self.n_test}
        calibration = None
        if self.calibration:
            keys = ("on", "brier", "integrated_brier", "time")
            calibration = {k: self.calibration[k] for k in keys if k in self.calibration}
        kind = {"classification": f"the probability of each class of {self.target!r}",
                "regression": f"the value of {self.target!r}",
                "survival": f"the risk of the event {self.target!r} over time {self.time!r} "
                            "(a relative risk and survival curves)"}[self.task]
        limits = [f"scored on {self.n_test} held-out rows" if self.n_test
                  else f"no holdout: the score is cross-validated only, for the best of "
                       f"{self.candidates_tried} settings chosen on the same folds (slightly optimistic)"]
        if self.holdout_ci and self.holdout_ci[1] - self.holdout_ci[0] > 0.1:
            limits.append("the holdout interval is wide: the score is uncertain")
        return _json_safe({
            "model": self.model_name,
            "task": self.task,
            "intended_use": (f"predicts {kind} for new rows drawn like the training data "
                             f"({self.n_train} rows); not validated outside it, nor for decisions "
                             "about individuals without review"),
            "metric": metric,
            "calibration": calibration,
            "features": list(self.features),
            "top_features": [i["feature"] for i in self.importance[:5]],
            "candidates_tried": self.candidates_tried,
            "selection": self.selection,
            "limitations": limits + list(self.warnings),
            "degraded": list(self.degraded),
        })

    def _repr_html_(self) -> str:
        e = html.escape
        head = (
            f"<h4>{e(self.model_name)} &mdash; {e(self.task)} of <code>{e(self.target)}</code></h4>"
            f"<p><b>{e(self.metric)}</b>: cv {_fmt(self.cv_score)}{e(_interval(self.cv_interval, _plain, '95% CI '))} "
            f"(&plusmn; {_fmt(self.metrics.get('cv_' + self.metric + '_std'))}, {e(self._folds())})"
        )
        if self.holdout_score is not None:
            head += (f", holdout {_fmt(self.holdout_score)}"
                     f"{e(_interval(self.holdout_ci, _plain, '95% CI '))} (n={self.n_test})")
        head += f"; trained on {self.n_train} rows, {len(self.features)} features.</p>"
        head += f"<p>{e(self.selection)} ({self.candidates_tried} settings tried)</p>" if self.selection else ""
        head += f"<p>Estimate: {e(self.estimate)}</p>" if self.estimate else ""
        warnings = "".join(f"<li>{e(w)}</li>" for w in self.warnings)
        if warnings:
            head += f"<ul style='color:#b00020'>{warnings}</ul>"
        sampled = "".join(f"<li>{e(d)}</li>" for d in self.sampled)
        head += f"<p>On a sample (the table is large):</p><ul>{sampled}</ul>" if sampled else ""
        degraded = "".join(f"<li>{e(d)}</li>" for d in self.degraded)
        if degraded:
            head += f"<p>Cut to stay within the {self.budget:.0f} s budget:</p><ul style='color:#a05a00'>{degraded}</ul>"
        rows = "".join(
            f"<tr><td>{e(name)}</td><td>{_fmt(info.get('cv_mean'))}</td>"
            f"<td>{_fmt(info.get('cv_std'))}</td><td>{'chosen' if name == self.model_name else ''}</td></tr>"
            for name, info in self.candidates.items()
        )
        table = (
            "<table><tr><th>candidate</th><th>cv mean</th><th>cv std</th><th></th></tr>"
            f"{rows}</table>"
        )
        metric_rows = "".join(
            f"<tr><td>{e(k)}</td><td>{_fmt(v)}</td></tr>" for k, v in self.metrics.items()
        )
        metrics = f"<details><summary>all metrics</summary><table>{metric_rows}</table></details>"
        return f"<div>{head}{table}{metrics}{self._calibration_html()}{self._plots_html()}</div>"

    def _calibration_html(self) -> str:
        c = self.calibration
        if not c:
            return ""
        if c["kind"] == TaskKind.CLASSIFICATION:
            return (f"<p><b>Calibration</b> ({html.escape(c['on'])}, {html.escape(c['of'])}): "
                    f"Brier score {_fmt(c['brier'])}</p>")
        return (f"<p><b>Calibration</b> ({html.escape(c['on'])}): integrated Brier score "
                f"{_fmt(c['integrated_brier'])}; observed vs predicted survival at the median "
                f"follow-up {c['time']:.4g}</p>")

    def _plots_html(self) -> str:
        try:
            import matplotlib

            matplotlib.use("Agg", force=False)
            from matplotlib.figure import Figure
        except ImportError:  # display without plots rather than fail
            return ""
        panels = 1 + bool(self.risk_groups) + bool(self.calibration)
        fig = Figure(figsize=(4.5 * panels, 3.2))
        ax = fig.add_subplot(1, panels, 1)
        top = self.importance[:15][::-1]
        ax.barh([str(i["feature"]) for i in top], [i["importance"] for i in top], color="#4477aa")
        ax.set_xlabel(f"permutation importance (drop in {self.metric})")
        ax.set_title("feature importance", fontsize=10)
        if self.risk_groups:
            km = fig.add_subplot(1, panels, 2)
            for name, curve in self.risk_groups.items():
                km.step(curve["time"], curve["survival"], where="post", label=f"{name} (n={curve['n']})")
            km.set_xlabel(self.time or "time")
            km.set_ylabel("survival probability")
            km.set_ylim(0, 1.02)
            km.set_title("Kaplan-Meier by predicted risk tertile", fontsize=10)
            km.legend(fontsize=8)
        if self.calibration:
            cal = fig.add_subplot(1, panels, panels)
            curve = self.calibration["curve"]
            cal.plot([0, 1], [0, 1], color="#999999", linestyle="--", linewidth=1)
            cal.plot(curve["predicted"], curve["observed"], marker="o", color="#cc6677")
            cal.set_xlim(0, 1)
            cal.set_ylim(0, 1)
            if self.calibration["kind"] == TaskKind.SURVIVAL:
                cal.set_xlabel(f"predicted survival at {self.calibration['time']:.4g}")
                cal.set_ylabel("observed (Kaplan-Meier)")
                cal.set_title(f"calibration, IBS {self.calibration['integrated_brier']:.3f}", fontsize=10)
            else:
                cal.set_xlabel(f"predicted {self.calibration['of']}")
                cal.set_ylabel("observed frequency")
                cal.set_title(f"calibration, Brier {self.calibration['brier']:.3f}", fontsize=10)
        fig.tight_layout()
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", dpi=80)
        data = base64.b64encode(buffer.getvalue()).decode("ascii")
        return f"<img src='data:image/png;base64,{data}'/>"


def _interval(interval: list[float] | None, fmt, prefix: str = "") -> str:
    return "" if not interval else f" [{prefix}{fmt(interval[0])}, {fmt(interval[1])}]"


def _plain(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    return f"{value:.3f}"


def _fmt(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "&ndash;"
    return f"{value:.3f}"


def _json_safe(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(v) for v in value]
    if isinstance(value, float):
        return None if math.isnan(value) or math.isinf(value) else value
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):  # numpy scalars
        return _json_safe(value.item())
    return value
