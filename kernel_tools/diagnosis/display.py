"""Notebook display of a Diagnosis: a table of findings and small inline plots.

Plots are drawn from the per-column numbers the diagnosis already holds, so showing it costs
a few small matplotlib figures and never touches the data again.
"""

from __future__ import annotations

import base64
import html
import io
import warnings
from typing import Any

from kernel_tools.plurals import counted


def escape(text: Any) -> str:
    """HTML-escape any value."""
    return html.escape(str(text))


_COLOURS = {"critical": "#c62828", "warning": "#ef6c00", "info": "#1565c0"}
MAX_BARS = 15


def _png(draw, height: float) -> str:
    from matplotlib.figure import Figure  # no pyplot: the user's backend stays untouched

    fig = Figure(figsize=(4.2, height), dpi=80)
    ax = fig.add_subplot(111)
    draw(ax)
    with warnings.catch_warnings():  # long labels on a tiny figure: layout is best effort
        warnings.simplefilter("ignore")
        fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _bars(values: dict, title: str, xlabel: str, colour: str, vline: float | None = None,
          highlight: frozenset = frozenset()):
    items = sorted(values.items(), key=lambda kv: -(kv[1] or 0))[:MAX_BARS][::-1]
    if not items:
        return None

    def draw(ax):
        colours = ["#c62828" if k in highlight else colour for k, _ in items]
        ax.barh([str(k)[:24] for k, _ in items], [v or 0 for _, v in items], color=colours)
        if vline is not None:
            ax.axvline(vline, color="#888", lw=0.8, ls="--")
        ax.set_title(title, fontsize=9)
        ax.set_xlabel(xlabel, fontsize=8)
        ax.tick_params(labelsize=7)

    return _png(draw, max(1.6, 0.7 + 0.18 * len(items)))


def plots(diagnosis) -> list[tuple[str, str]]:
    stats = diagnosis.column_stats or {}
    out = []
    miss = stats.get("missing_rate") or {}
    img = _bars(miss, "Missing values", "share of rows", "#8e24aa")
    if img:
        out.append(("Missingness", img))
    scores = stats.get("feature_scores") or {}
    metric = stats.get("metric")
    if scores:
        base = 0.0 if metric == "r2" else 0.5
        img = _bars(scores, "Single-feature predictive power (red: suspected leakage)", metric or "score",
                    "#2e7d32", base, frozenset(stats.get("leakage") or []))
        if img:
            out.append(("Predictive power", img))
    rates = {k: v for k, v in (stats.get("outlier_rate") or {}).items() if v}
    img = _bars(rates, "Outliers (outside 3×IQR)", "share of rows", "#ef6c00")
    if img:
        out.append(("Outliers", img))
    return out


def diagnosis_html(diagnosis) -> str:
    task = diagnosis.task or {}
    head = (f"<b>Diagnosis</b> — {diagnosis.shape[0]} rows × {diagnosis.shape[1]} columns; "
            f"task: <b>{escape(task.get('kind'))}</b>"
            + (f" (target <code>{escape(task.get('target'))}</code>)" if task.get("target") else "")
            + f" — {escape(task.get('reason', ''))}; {counted(len(diagnosis.findings), 'finding')} in "
            f"{diagnosis.elapsed_s:.2f} s (model checks on {diagnosis.sample_size} rows)")
    rows = []
    for f in diagnosis.findings:
        rec = f.recommended
        rows.append(
            "<tr>"
            f"<td style='color:{_COLOURS[f.severity]};font-weight:bold'>{escape(f.severity)}</td>"
            f"<td>{escape(f.kind)}</td>"
            f"<td>{escape(', '.join(f.columns[:4]) + (' …' if len(f.columns) > 4 else ''))}</td>"
            f"<td style='text-align:left'>{escape(f.summary)}</td>"
            f"<td>{escape(rec.label if rec else '')}</td>"
            f"<td>{escape(f.gate or '')}</td>"
            "</tr>"
        )
    table = ("<table><thead><tr><th>severity</th><th>kind</th><th>columns</th><th>summary</th>"
             "<th>recommended</th><th>needs decision</th></tr></thead><tbody>"
             + "".join(rows) + "</tbody></table>") if rows else "<p>No issues found.</p>"
    images = "".join(
        f"<figure style='display:inline-block;margin:4px'><img alt='{escape(t)}' "
        f"src='data:image/png;base64,{img}'/></figure>" for t, img in plots(diagnosis))
    return f"<div class='kt-diagnosis'><p>{head}</p>{_timing_html(diagnosis)}{table}<div>{images}</div></div>"


def _timing_html(diagnosis) -> str:
    """When predictions are made, and which columns are not known then (or known to be)."""
    index = (diagnosis.task or {}).get("index") or {}
    if not index:
        return ""
    groups: dict[str, list[str]] = {}
    for column, t in (diagnosis.column_stats.get("timing") or {}).items():
        groups.setdefault(t["timing"], []).append(column)
    named = {"outcome_derived": "derived from the outcome", "follow_up": "recorded during follow-up",
             "baseline": "known at the index"}
    parts = [f"{label}: {escape(', '.join(groups[k][:12]))}" for k, label in named.items() if groups.get(k)]
    return (f"<p>Predictions are made at <b>{escape(index.get('label'))}</b> ({escape(index.get('reason'))})"
            + ("; " + "; ".join(parts) if parts else "") + ".</p>")
