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


@dataclass(repr=False)
class ModelReport:
    """The result of :func:`kernel_tools.fit_evaluate`.

    ``pipeline`` = the already-fitted preprocessing transformers + the chosen model refit on
    all training rows; it takes raw data as it was before those preprocessing steps.
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

    def __repr__(self) -> str:
        """One paragraph: what a reader (or the co-pilot reading text output) needs first."""
        folds = f"{len(self.cv_scores)} {'grouped ' if self.grouped else ''}folds"
        text = (
            f"ModelReport({self.task} of {self.target!r}: {self.model_name}, {self.metric} cv "
            f"{_plain(self.cv_score)} ± {_plain(self.metrics.get('cv_' + self.metric + '_std'))} "
            f"({folds})"
        )
        if self.holdout_score is not None:
            text += f", holdout {_plain(self.holdout_score)} (n={self.n_test})"
        text += f"; {self.n_train} rows, {len(self.features)} features"
        if self.importance:
            text += f"; top feature {self.importance[0]['feature']!r}"
        if self.warnings:
            text += "; warnings: " + " | ".join(self.warnings)
        return text + ")"

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
            }
        )

    def _repr_html_(self) -> str:
        e = html.escape
        folds = f"{len(self.cv_scores)} {'grouped ' if self.grouped else ''}folds"
        head = (
            f"<h4>{e(self.model_name)} &mdash; {e(self.task)} of <code>{e(self.target)}</code></h4>"
            f"<p><b>{e(self.metric)}</b>: cv {_fmt(self.cv_score)} "
            f"(&plusmn; {_fmt(self.metrics.get('cv_' + self.metric + '_std'))}, {folds})"
        )
        if self.holdout_score is not None:
            head += f", holdout {_fmt(self.holdout_score)} (n={self.n_test})"
        head += f"; trained on {self.n_train} rows, {len(self.features)} features.</p>"
        warnings = "".join(f"<li>{e(w)}</li>" for w in self.warnings)
        if warnings:
            head += f"<ul style='color:#b00020'>{warnings}</ul>"
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
        return f"<div>{head}{table}{metrics}{self._plots_html()}</div>"

    def _plots_html(self) -> str:
        try:
            import matplotlib

            matplotlib.use("Agg", force=False)
            from matplotlib.figure import Figure
        except ImportError:  # display without plots rather than fail
            return ""
        panels = 2 if self.risk_groups else 1
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
        fig.tight_layout()
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", dpi=80)
        data = base64.b64encode(buffer.getvalue()).decode("ascii")
        return f"<img src='data:image/png;base64,{data}'/>"


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
