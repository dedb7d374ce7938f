"""Small bar charts of a decision's evidence, for the panel's decision cards.

A chart is plain JSON — ``{"title", "unit", "bars": [{"label", "value"}], "threshold"}`` — so
the panel draws it as an SVG without a plotting library and the sidecar keeps it. One small
function per :class:`~kernel_tools.vocabulary.Chart` reads the evidence its finding kinds' detector
writes (``kernel_tools/diagnosis/*``); which chart a kind gets is declared where its detector
registers (``registry.KindData``), and each finding carries it from the kernel (``Finding.chart``).
A kind without a chart, or evidence without the numbers, gets None rather than a misleading picture.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from typing import Any

from kernel_tools.findings import Finding
from kernel_tools.vocabulary import LEAKAGE_SCORE, metric_words
from kernel_tools.vocabulary import Chart as ChartKind

from .wire import Chart, ChartBar

MAX_BARS = 12

# kernel_tools.diagnosis.leakage.ABSOLUTE: the single-feature strength (2·AUROC−1, 2·C−1 or
# R²) no honest feature reaches. Repeated here so the server never imports the kernel's stack.
LEAKAGE_STRENGTH = 0.9
MISSING_DROP_RATE = 0.6  # kernel_tools.diagnosis.missing.DROP_RATE: above it, dropping is recommended
OUTLIER_HEAVY_TAIL = 0.05  # kernel_tools.diagnosis.outliers.MAX_RATE: above it, a heavy tail


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def _chart(title: str, unit: str, bars: list[tuple[str, Any]], threshold: float | None = None) -> Chart | None:
    kept = [ChartBar(label=str(label), value=round(v, 6)) for label, value in bars
            if (v := _number(value)) is not None]
    if not kept:
        return None
    return Chart(title=title, unit=unit, bars=kept[:MAX_BARS], threshold=threshold)


def leakage_chart(evidence: dict[str, Any], columns: list[str]) -> Chart | None:
    """The suspect column's single-feature score next to the best other feature's."""
    metric = str(evidence.get("metric") or "score")
    # a score whose strength is LEAKAGE_STRENGTH: AUROC / C-index = (1 + s) / 2, R² = s
    threshold = LEAKAGE_STRENGTH if metric == "r2" else (1 + LEAKAGE_STRENGTH) / 2
    name = columns[0] if columns else "this column"
    bars = [(name, evidence.get("score")), ("best other feature", evidence.get("next_best_score"))]
    if _number(evidence.get("score")) is None and _number(evidence.get("missingness_score")) is not None:
        bars = [(f"{name} (is missing)", evidence.get("missingness_score"))]
    if _number(evidence.get("agreement")) is not None:  # a copy of the outcome under another name
        bars = [(f"{name} equals the outcome", evidence.get("agreement")),
                ("by chance (majority class)", evidence.get("chance_agreement"))]
        return _chart("Rows where the column's value is the outcome's own label", "share", bars)
    return _chart(f"Outcome predicted from one feature alone ({metric_words(metric)})", metric_words(metric), bars,
                  threshold)


def suspected_leakage_chart(evidence: dict[str, Any], columns: list[str]) -> Chart | None:
    """The model's too-good scores (the engine raises this finding after a fit)."""
    metric = str(evidence.get("metric") or "score")
    bars = [("cross-validated", evidence.get("cv_score")), ("holdout", evidence.get("holdout_score"))]
    return _chart(f"Model score ({metric}): too good to be true?", metric, bars, LEAKAGE_SCORE)


def missing_chart(evidence: dict[str, Any], columns: list[str]) -> Chart | None:
    per_column = evidence.get("columns") or {}
    bars = [(c, (v or {}).get("missing_rate")) for c, v in per_column.items() if isinstance(v, dict)]
    if not bars and columns:  # a mostly-missing column has its own finding, its rate at the top
        bars = [(columns[0], evidence.get("missing_rate"))]
    bars.sort(key=lambda b: -(_number(b[1]) or 0.0))
    return _chart("Missing values per column", "share of rows", bars, MISSING_DROP_RATE)


def outliers_chart(evidence: dict[str, Any], columns: list[str]) -> Chart | None:
    per_column = evidence.get("columns") or {}
    bars = [(c, (v or {}).get("rate")) for c, v in per_column.items() if isinstance(v, dict)]
    bars.sort(key=lambda b: -(_number(b[1]) or 0.0))
    return _chart("Values outside the IQR fences per column", "share of rows", bars, OUTLIER_HEAVY_TAIL)


def label_issues_chart(evidence: dict[str, Any], columns: list[str]) -> Chart | None:
    """Flagged rows per recorded class, as a share of the rows checked."""
    labels = evidence.get("given_labels") or []
    rows = _number(evidence.get("sample_size")) or _number(evidence.get("rows"))
    if not labels or not rows:
        return _chart("Rows flagged as possibly mislabelled", "share of rows",
                      [("all classes", evidence.get("rate"))], None)
    counts = Counter(str(label) for label in labels)
    bars = [(f"recorded '{label}'", n / rows) for label, n in counts.most_common()]
    title = "Rows flagged as possibly mislabelled, by recorded class"
    if evidence.get("rows_truncated"):
        title += " (the most confident issues only)"
    return _chart(title, "share of rows", bars, None)


def aggregation_chart(evidence: dict[str, Any], columns: list[str]) -> Chart | None:
    """Rows per entity: a model wants one (the threshold)."""
    bars = [("mean", evidence.get("rows_per_entity_mean")), ("max", evidence.get("rows_per_entity_max"))]
    entity = evidence.get("entity_id") or (columns[0] if columns else "entity")
    return _chart(f"Rows per {entity}", "rows", bars, 1.0)


def duplicates_chart(evidence: dict[str, Any], columns: list[str]) -> Chart | None:
    rows = _number(evidence.get("rows"))
    if not rows:
        return None
    bars = [("exact duplicates", (_number(evidence.get("exact_duplicates")) or 0) / rows),
            ("near duplicates", (_number(evidence.get("near_duplicates")) or 0) / rows)]
    return _chart("Duplicate rows", "share of rows", bars, None)


# how each chart is drawn (which kind gets which: its detector's declaration; ChartKind.NONE: none)
CHARTS: dict[str, Callable[[dict[str, Any], list[str]], Chart | None]] = {
    ChartKind.LEAKAGE: leakage_chart,
    ChartKind.MODEL_SCORE: suspected_leakage_chart,
    ChartKind.MISSING: missing_chart,
    ChartKind.OUTLIERS: outliers_chart,
    ChartKind.LABEL_ISSUES: label_issues_chart,
    ChartKind.ROWS_PER_ENTITY: aggregation_chart,
    ChartKind.DUPLICATES: duplicates_chart,
}


def chart_for(finding: Finding | None) -> Chart | None:
    """The chart of a finding's evidence, or None for a kind (or evidence) without one."""
    if finding is None:
        return None
    kind = finding.chart
    if kind is None:  # written without it (an old sidecar or decisions file, an older kernel_tools):
        # its detector's declaration, read only then: it loads every detector's module and pandas,
        # seconds of CPU the command line's process otherwise never spends
        from kernel_tools.diagnosis.registry import declared_chart

        kind = declared_chart(finding.kind)
    build = CHARTS.get(kind) if kind is not None else None
    if build is None or not isinstance(finding.evidence, dict):
        return None
    return build(finding.evidence, list(finding.columns))
