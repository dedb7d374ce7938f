"""report.json and report.html: what was done, decided and measured, and whether it is valid."""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

from .session import Session

METRIC_FOR_TASK = {"classification": "roc_auc", "regression": "r2", "survival": "c_index"}
LEAKAGE_KINDS = ("target_leakage", "leakage", "target_proxy", "post_outcome", "suspected_leakage")
IDENTIFIER_KINDS = ("id_column", "identifier", "identifiers", "row_index")


def flagged_columns(session: Session) -> tuple[set[str], set[str]]:
    """Columns flagged as leakage and as identifiers by any finding the session has seen."""
    leak, ids = set(), set()
    findings = list(session.findings)
    for cp in session.checkpoints:
        findings += cp.snapshot.get("findings", [])
    for f in findings:
        if f.get("synthetic"):  # a suspicion from the score, answered by the expert
            continue
        if f.get("kind") in LEAKAGE_KINDS or (f.get("gate") == "leakage"):
            leak |= set(f.get("columns", []))
        elif f.get("kind") in IDENTIFIER_KINDS:
            ids |= set(f.get("columns", []))
    ids.discard(session.task.get("id"))
    return leak, ids


def model_validity(session: Session, model: dict[str, Any] | None) -> tuple[bool, list[str]]:
    """Valid only if no leaked column is a feature, entities are handled, the metric fits the task
    and no sanity warning of suspected leakage remains."""
    problems: list[str] = []
    if not model:
        return False, ["no model was trained"]
    features = set(model.get("features") or [])
    leak, ids = flagged_columns(session)
    if features & leak:
        problems.append(f"columns flagged as leakage are model features: {sorted(features & leak)}")
    task = session.task
    aggregated = any(s.episode == "aggregate" and s.status == "done" and s.result.get("function")
                     == "aggregate_per_entity" for s in session.plan)
    repeated = any(f.get("kind") == "repeated_measurements" for f in _all_findings(session))
    if repeated and not (model.get("grouped") or aggregated):
        problems.append("rows repeat per entity but the model was neither grouped nor aggregated")
    if task.get("id") and task["id"] in features:
        problems.append(f"the entity id {task['id']!r} is a model feature")
    expected = METRIC_FOR_TASK.get(task.get("kind"))
    if model.get("metric") != expected:
        problems.append(f"metric {model.get('metric')!r} does not fit a {task.get('kind')} task "
                        f"(expected {expected!r})")
    leaky = [w for w in model.get("warnings", []) if str(w).startswith("suspect leakage")]
    top = next((i.get("feature") for i in model.get("importance") or [] if i.get("feature")), None)
    if leaky and f"cleared_leakage:{top}" not in session.handled:  # not examined by the diagnosis
        problems.append(f"sanity warning: {leaky[0]}")
    return not problems, problems


def _all_findings(session: Session) -> list[dict[str, Any]]:
    findings = list(session.findings)
    for cp in session.checkpoints:
        findings += cp.snapshot.get("findings", [])
    return findings


def build_report(session: Session, model: dict[str, Any] | None) -> dict[str, Any]:
    """The report.json content (key names are a public contract)."""
    v = session.variables
    rows_in, cols_in = (v.get("initial_shape") or [None, None])[:2]
    rows_out, cols_out = (v.get("shape") or [None, None])[:2]
    dropped: list[str] = []
    for s in session.plan:
        if s.status == "done":
            for c in (s.result.get("report") or {}).get("columns_removed", []) or []:
                if c not in dropped:
                    dropped.append(c)
    decisions = {d.id: d for d in session.decisions}
    steps = []
    for s in session.plan:
        d = decisions.get(s.decision_id) if s.decision_id else None
        steps.append({"id": s.id, "episode": s.episode, "status": s.status, "gate": s.gate,
                      "decision": {"choice": d.choice, "by": d.by} if d is not None else None,
                      "title": s.title, "note": s.note})
    valid, problems = model_validity(session, model)
    _, ids = flagged_columns(session)
    kept_ids = sorted(set((model or {}).get("features") or []) & ids)
    if kept_ids:
        problems.append(f"identifier columns are model features: {kept_ids}")
    task = session.task
    return {
        "dataset": {"rows_in": rows_in, "cols_in": cols_in, "rows_out": rows_out, "cols_out": cols_out},
        "task": {"kind": task.get("kind"), "target": task.get("target"), "time": task.get("time"),
                 "id": task.get("id")},
        "findings": [{"kind": f.get("kind"), "columns": f.get("columns", []),
                      "severity": f.get("severity"), "summary": f.get("summary")}
                     for f in _unique(_all_findings(session))],
        "steps": steps,
        "dropped_columns": dropped,
        "model": None if not model else {
            "name": model.get("model_name"), "metric": model.get("metric"),
            "cv_score": model.get("cv_score"), "holdout_score": model.get("holdout_score"),
            "features": model.get("features"),
        },
        "valid": valid,
        "warnings": problems + list(session.warnings) + list((model or {}).get("warnings", [])),
        "llm_usage": {"calls": len(session.llm_usage),
                      "cost_usd": round(sum(u.get("cost_usd", 0) for u in session.llm_usage), 6)},
    }


def _unique(findings: list[dict[str, Any]]) -> list[dict[str, Any]]:
    seen, out = set(), []
    for f in findings:
        if f.get("id") not in seen:
            seen.add(f.get("id"))
            out.append(f)
    return out


def write_reports(report: dict[str, Any], out_dir: str | Path) -> tuple[Path, Path]:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    json_path, html_path = out / "report.json", out / "report.html"
    json_path.write_text(json.dumps(report, indent=2, default=str))
    html_path.write_text(render_html(report))
    return json_path, html_path


def render_html(report: dict[str, Any]) -> str:
    """A readable single-page report (no scripts, no external assets)."""
    e = lambda x: html.escape("" if x is None else str(x))  # noqa: E731
    ds, task, model = report["dataset"], report["task"], report.get("model") or {}
    verdict = ("<span style='color:#1a7f37'>valid</span>" if report["valid"]
               else "<span style='color:#cf222e'>not valid</span>")
    rows = "".join(
        f"<tr><td>{e(s['id'])}</td><td>{e(s.get('title') or s['episode'])}</td><td>{e(s['status'])}</td>"
        f"<td>{e(s['gate'] or '')}</td><td>{e((s['decision'] or {}).get('choice', ''))}"
        f"{' (' + e(s['decision']['by']) + ')' if s['decision'] and s['decision'].get('by') else ''}</td></tr>"
        for s in report["steps"])
    findings = "".join(
        f"<tr><td>{e(f['kind'])}</td><td>{e(', '.join(f['columns']))}</td><td>{e(f['severity'])}</td>"
        f"<td>{e(f['summary'])}</td></tr>" for f in report["findings"])
    warnings = "".join(f"<li>{e(w)}</li>" for w in report["warnings"])

    def score(x: Any) -> str:
        return f"{x:.3f}" if isinstance(x, (int, float)) else "n/a"

    return f"""<!doctype html><html><head><meta charset="utf-8"><title>dcpilot report</title>
<style>body{{font-family:system-ui,sans-serif;margin:2em;max-width:1100px}}table{{border-collapse:collapse;margin:1em 0}}
td,th{{border:1px solid #ccc;padding:4px 8px;text-align:left;vertical-align:top}}th{{background:#f4f4f4}}</style>
</head><body><h1>Data-centric co-pilot report</h1>
<p><b>Task:</b> {e(task['kind'])} — target <code>{e(task['target'])}</code>
{'— duration <code>' + e(task['time']) + '</code>' if task.get('time') else ''}
{'— entity <code>' + e(task['id']) + '</code>' if task.get('id') else ''}</p>
<p><b>Data:</b> {e(ds['rows_in'])} × {e(ds['cols_in'])} in → {e(ds['rows_out'])} × {e(ds['cols_out'])} out;
dropped: {e(', '.join(report['dropped_columns']) or 'none')}</p>
<p><b>Model:</b> {e(model.get('name'))} — {e(model.get('metric'))} cv {score(model.get('cv_score'))},
holdout {score(model.get('holdout_score'))} — {verdict}</p>
<h2>Steps</h2><table><tr><th>id</th><th>step</th><th>status</th><th>gate</th><th>decision</th></tr>{rows}</table>
<h2>Findings</h2><table><tr><th>kind</th><th>columns</th><th>severity</th><th>summary</th></tr>{findings}</table>
<h2>Warnings</h2><ul>{warnings or '<li>none</li>'}</ul></body></html>"""
