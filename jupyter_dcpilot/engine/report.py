"""report.json and report.html: what was done, decided and measured, and whether it is valid."""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

from .notebook import score_text
from .session import Session
from .validity import all_findings, audit, verdict



def model_validity(session: Session, model: dict[str, Any] | None) -> tuple[bool, list[str]]:
    """The verdict and the details of the checks that failed (see :mod:`.validity`)."""
    checks = audit(session, model)
    return verdict(checks), [f"{c.check}: {c.detail}" for c in checks if not c.passed]


def model_card(session: Session, model: dict[str, Any]) -> dict[str, Any]:
    """The model card: the model's own part (metric with interval, calibration, features,
    intended use, limits) and the data and decisions that prepared it."""
    card = dict(model.get("model_card") or {})
    v = session.variables
    card["data"] = {"frame": session.frame, "rows_in": (v.get("initial_shape") or [None])[0],
                    "rows_modelled": model.get("n_train"), "task": session.task.get("kind"),
                    "target": session.task.get("target"),
                    "prediction_time": (session.task.get("index") or {}).get("label")}
    card["decisions"] = [{"step": d.step_id, "gate": d.gate, "columns": d.columns, "choice": d.choice,
                          "by": d.by, "rationale": d.rationale} for d in session.decisions if d.decided]
    return card


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
    checks = audit(session, model)
    problems = [f"{c.check}: {c.detail}" for c in checks if not c.passed]
    task = session.task
    return {
        "dataset": {"rows_in": rows_in, "cols_in": cols_in, "rows_out": rows_out, "cols_out": cols_out},
        "task": {"kind": task.get("kind"), "target": task.get("target"), "time": task.get("time"),
                 "id": task.get("id"), "index": task.get("index")},
        "findings": [{"kind": f.get("kind"), "columns": f.get("columns", []),
                      "severity": f.get("severity"), "summary": f.get("summary")}
                     for f in _unique(all_findings(session))],
        "steps": steps,
        "dropped_columns": dropped,
        "model": None if not model else {
            "name": model.get("model_name"), "metric": model.get("metric"),
            "cv_score": model.get("cv_score"), "cv_sd": model.get("cv_sd"),
            "holdout_score": model.get("holdout_score"), "holdout_ci": model.get("holdout_ci"),
            "features": model.get("features"), "candidates_tried": model.get("candidates_tried"),
            "degraded": model.get("degraded") or [], "card": model_card(session, model),
        },
        "valid": verdict(checks),
        "validity": [c.to_dict() for c in checks],
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
    checks = "".join(
        f"<tr><td>{'passed' if c['passed'] else '<b>failed</b>'}</td><td>{e(c['check'])}</td><td>{e(c['detail'])}</td></tr>"
        for c in report.get("validity", []))

    return f"""<!doctype html><html><head><meta charset="utf-8"><title>dcpilot report</title>
<style>body{{font-family:system-ui,sans-serif;margin:2em;max-width:1100px}}table{{border-collapse:collapse;margin:1em 0}}
td,th{{border:1px solid #ccc;padding:4px 8px;text-align:left;vertical-align:top}}th{{background:#f4f4f4}}</style>
</head><body><h1>Data-centric co-pilot report</h1>
<p><b>Task:</b> {e(task['kind'])} — target <code>{e(task['target'])}</code>
{'— duration <code>' + e(task['time']) + '</code>' if task.get('time') else ''}
{'— entity <code>' + e(task['id']) + '</code>' if task.get('id') else ''}</p>
<p><b>Data:</b> {e(ds['rows_in'])} × {e(ds['cols_in'])} in → {e(ds['rows_out'])} × {e(ds['cols_out'])} out;
dropped: {e(', '.join(report['dropped_columns']) or 'none')}</p>
<p><b>Model:</b> {e(model.get('name'))} — {e(score_text(model)) if model else 'none'} — {verdict}</p>
<h2>Validity</h2><table><tr><th>result</th><th>check</th><th>detail</th></tr>{checks}</table>
<h2>Steps</h2><table><tr><th>id</th><th>step</th><th>status</th><th>gate</th><th>decision</th></tr>{rows}</table>
<h2>Findings</h2><table><tr><th>kind</th><th>columns</th><th>severity</th><th>summary</th></tr>{findings}</table>
<h2>Warnings</h2><ul>{warnings or '<li>none</li>'}</ul></body></html>"""
