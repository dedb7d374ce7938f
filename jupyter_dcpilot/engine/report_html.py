"""report.html: the report.json content plus the session's decisions and charts, rendered with
the Jinja2 template ``templates/report.html.j2`` into one self-contained page (no scripts, no
external assets; charts are inline SVG coloured by CSS, so they follow a light or dark system
theme like the rest of the page).

:func:`report_details` collects what report.json does not hold (each decision's evidence,
options and rationale; the charts the notebook draws: decision evidence, missingness, feature
importance, Kaplan-Meier curves by risk group, calibration); :func:`render_html` renders.
The verdict reads the validity checklist when report.json has one: a failed check is never
shown next to a green "valid".
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import jinja2

from kernel_tools.vocabulary import FindingKind, severity_rank

from .charts import chart_for
from .codebook import codebook_citation
from .notebook import score_text
from .session import Session
from .validity import all_findings

WIDTH, BAR_HEIGHT, LABEL_WIDTH = 560, 18, 190  # px of an inline bar chart
PLOT_HEIGHT, MARGIN = 220, 60  # px of a line chart and the room for its axes

_env = jinja2.Environment(loader=jinja2.PackageLoader("jupyter_dcpilot.engine", "templates"),
                          autoescape=True, trim_blocks=True, lstrip_blocks=True)


def render_html(report: dict[str, Any], details: dict[str, Any] | None = None) -> str:
    """The page for a report.json dict; ``details`` from :func:`report_details` adds the
    decisions' evidence and rationale and the charts (without it: what report.json holds)."""
    details = details or {}
    checks = report.get("validity")
    failed = [c for c in checks or [] if not c.get("passed")]
    valid = bool(report.get("valid")) and not failed
    findings = sorted(report.get("findings") or [],
                      key=lambda f: severity_rank(f.get("severity")))
    return _env.get_template("report.html.j2").render(
        report=report, task=report.get("task") or {}, dataset=report.get("dataset") or {},
        model=report.get("model") or {}, checks=checks, failed=failed, valid=valid,
        contradiction=bool(report.get("valid")) and bool(failed), findings=findings,
        decisions=details.get("decisions"), charts=details.get("charts") or {},
        score=_score, score_text=score_text, impact_text=impact_text)


def impact_text(impact: dict[str, Any] | None) -> str:
    """An option's estimated impact in one line: score ± spread, rows × columns, top features."""
    if not impact or not _finite(impact.get("mean")):
        return (impact or {}).get("error") or "not estimated"
    sd = f" ± {impact['sd']:.3f}" if _finite(impact.get("sd")) else ""
    top = impact.get("top_features") or []
    return (f"{impact.get('metric')} {impact['mean']:.3f}{sd}; {impact.get('rows')} rows × {impact.get('columns')} columns"
            + (f"; top: {', '.join(map(str, top[:3]))}" if top else ""))


def report_details(session: Session, model: dict[str, Any] | None) -> dict[str, Any]:
    """What report.html shows beyond report.json: every decision with its evidence, options,
    answer and rationale, and the charts (as SVG geometry for the template)."""
    findings = all_findings(session)
    by_id = {f.id: f for f in findings}
    decisions = []
    for d in session.decisions:
        step = next((s for s in session.plan if s.id == d.step_id), None)
        finding = next((by_id[i] for i in (step.finding_ids if step else []) if i in by_id), None)
        chart = d.chart or chart_for(finding)
        decisions.append({
            "id": d.id, "gate": d.gate, "question": d.question, "columns": d.columns,
            "title": step.title if step else d.gate, "evidence": d.evidence_lines,
            "options": [o.to_dict() for o in d.options], "recommended": d.recommended, "choice": d.choice, "by": d.by,
            "at": d.at, "rationale": d.rationale, "history": d.history, "impact": d.impact,
            "chart": bar_svg(chart) if chart else None, "codebook": codebook_citation(d.evidence),
        })
    charts: dict[str, Any] = {}
    missing = next((chart_for(f) for f in findings if f.kind == FindingKind.MISSING_VALUES), None)
    if missing:
        charts["missingness"] = bar_svg(missing)
    model = model or {}
    importance = [(i.get("feature"), i.get("importance")) for i in model.get("importance") or []]
    if importance:
        charts["importance"] = bar_svg({
            "title": f"Permutation importance (drop in {model.get('metric')})", "unit": model.get("metric"),
            "bars": [{"label": str(k), "value": v} for k, v in importance[:12] if _finite(v)],
            "threshold": None})
    curves = model.get("risk_groups") or {}
    if curves:
        charts["kaplan_meier"] = line_svg(
            "Kaplan-Meier survival by predicted risk tertile", model.get("time") or "time",
            "survival probability",
            [{"label": f"{name} (n={c.get('n')})", "x": c.get("time") or [], "y": c.get("survival") or [],
              "step": True} for name, c in curves.items()], y_range=(0.0, 1.0))
    calibration = calibration_points(model.get("calibration"))
    if calibration:
        predicted, observed = calibration
        charts["calibration"] = line_svg(
            "Calibration: predicted against observed", "predicted", "observed",
            [{"label": "perfect calibration", "x": [0, 1], "y": [0, 1], "reference": True},
             {"label": "model", "x": predicted, "y": observed, "points": True}],
            x_range=(0.0, 1.0), y_range=(0.0, 1.0))
    return {"decisions": decisions, "charts": charts}


def calibration_points(calibration: Any) -> tuple[list[float], list[float]] | None:
    """(predicted, observed) from a model report's calibration, whichever of the plain shapes
    it takes: ``{"predicted": [...], "observed": [...]}``, the same under ``"bins"``, or a list
    of ``{"predicted", "observed"}`` bins (``mean_predicted`` / ``fraction_observed`` too).
    None when there is none or it is not one of these."""
    if isinstance(calibration, dict) and isinstance(calibration.get("bins"), (list, dict)):
        calibration = calibration["bins"]
    pairs: list[tuple[Any, Any]]
    if isinstance(calibration, list):
        pairs = [(b.get("predicted", b.get("mean_predicted")), b.get("observed", b.get("fraction_observed")))
                 for b in calibration if isinstance(b, dict)]
    elif isinstance(calibration, dict):
        predicted = calibration.get("predicted", calibration.get("mean_predicted")) or []
        observed = calibration.get("observed", calibration.get("fraction_observed")) or []
        pairs = list(zip(predicted, observed)) if isinstance(predicted, list) and isinstance(observed, list) else []
    else:
        return None
    points = [(float(p), float(o)) for p, o in pairs if _finite(p) and _finite(o)]
    return ([p for p, _ in points], [o for _, o in points]) if points else None


# -- chart geometry (the template draws it) --------------------------------------------------

def bar_svg(chart: Mapping[str, Any]) -> dict[str, Any] | None:
    """Horizontal bars of a chart spec (``engine.charts``): positions in px for the template."""
    bars = [b for b in chart.get("bars") or [] if _finite(b.get("value"))]
    if not bars:
        return None
    threshold = chart.get("threshold") if _finite(chart.get("threshold")) else None
    # a negative value (an importance below zero: no use) is drawn as no bar, its number kept
    top = max([b["value"] for b in bars] + ([threshold] if threshold is not None else []) + [0.0]) or 1.0
    span = WIDTH - LABEL_WIDTH - 90  # room right of the longest bar for its value and the threshold's
    rows = [{"label": b["label"], "text": _number_text(b["value"]), "y": 24 + i * (BAR_HEIGHT + 6),
             "width": max(1.0, span * b["value"] / top),
             "over": threshold is not None and b["value"] >= threshold} for i, b in enumerate(bars)]
    height = 24 + len(rows) * (BAR_HEIGHT + 6) + 8
    return {"title": chart.get("title") or "", "unit": chart.get("unit") or "", "rows": rows,
            "width": WIDTH, "height": height, "label_width": LABEL_WIDTH, "bar_height": BAR_HEIGHT,
            "threshold_x": LABEL_WIDTH + span * threshold / top if threshold is not None else None,
            "threshold_text": _number_text(threshold) if threshold is not None else None}


def line_svg(title: str, x_label: str, y_label: str, series: list[dict[str, Any]],
             x_range: tuple[float, float] | None = None,
             y_range: tuple[float, float] | None = None) -> dict[str, Any] | None:
    """Lines (or step curves, or points) on shared axes: SVG paths in px for the template."""
    series = [s for s in series if s.get("x") and len(s["x"]) == len(s.get("y") or [])]
    xs = [float(v) for s in series for v in s["x"] if _finite(v)]
    ys = [float(v) for s in series for v in s["y"] if _finite(v)]
    if not xs or not ys:
        return None
    x0, x1 = x_range or (min(xs), max(xs))
    y0, y1 = y_range or (min(ys), max(ys))
    x1, y1 = (x1 if x1 > x0 else x0 + 1.0), (y1 if y1 > y0 else y0 + 1.0)
    inner_w, inner_h = WIDTH - 2 * MARGIN, PLOT_HEIGHT

    def px(x: float, y: float) -> tuple[float, float]:
        return (round(MARGIN + inner_w * (x - x0) / (x1 - x0), 1),
                round(16 + inner_h * (1 - (y - y0) / (y1 - y0)), 1))

    drawn = []
    for i, s in enumerate(series):
        points = [px(float(x), float(y)) for x, y in zip(s["x"], s["y"]) if _finite(x) and _finite(y)]
        if s.get("step"):  # a survival curve holds its value until the next event
            stepped = []
            for (ax, ay), (bx, _) in zip(points, points[1:] + [points[-1]]):
                stepped += [(ax, ay), (bx, ay)]
            points = stepped
        drawn.append({"label": s["label"], "index": i, "reference": bool(s.get("reference")),
                      "points_only": bool(s.get("points")),
                      "path": " ".join(f"{x},{y}" for x, y in points), "dots": points})
    ticks = [(round(x0 + (x1 - x0) * k / 4, 6), round(y0 + (y1 - y0) * k / 4, 6)) for k in range(5)]
    return {"title": title, "x_label": x_label, "y_label": y_label, "series": drawn,
            "width": WIDTH, "height": PLOT_HEIGHT + 16 + MARGIN, "left": MARGIN,
            "bottom": 16 + inner_h, "right": MARGIN + inner_w, "top": 16,
            "x_ticks": [{"x": px(tx, y0)[0], "text": _number_text(tx)} for tx, _ in ticks],
            "y_ticks": [{"y": px(x0, ty)[1], "text": _number_text(ty)} for _, ty in ticks]}


# -- helpers ---------------------------------------------------------------------------------

def _finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _number_text(value: Any) -> str:
    if not _finite(value):
        return str(value)
    return f"{value:.3g}" if abs(value) < 1000 else f"{value:,.0f}"


def _score(value: Any) -> str:
    return f"{value:.3f}" if _finite(value) else "n/a"
