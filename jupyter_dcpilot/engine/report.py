"""report.json: what was done, decided and measured, and whether it is valid (report.html is
rendered from it by :mod:`.report_html`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kernel_tools.findings import Finding
from kernel_tools.vocabulary import StepStatus

from .codebook import codebook_citation, codebook_summary
from .episodes import Episode
from .report_html import render_html
from .session import Decision, Session, encode
from .validity import all_findings, audit, verdict


def model_validity(session: Session, model: dict[str, Any] | None,
                   episodes: dict[str, Episode] | None = None) -> tuple[bool, list[str]]:
    """The verdict and the details of the checks that failed (see :mod:`.validity`; ``episodes``:
    the library the steps come from, default the built-in one)."""
    checks = audit(session, model, episodes)
    return verdict(checks), [f"{c.check}: {c.detail}" for c in checks if not c.passed]


def model_card(session: Session, model: dict[str, Any]) -> dict[str, Any]:
    """The model card: the model's own part (metric with interval, calibration, features,
    intended use, limits) and the data and decisions that prepared it."""
    card = dict(model.get("model_card") or {})
    v = session.variables
    card["data"] = {"frame": session.frame, "rows_in": (v.get("initial_shape") or [None])[0],
                    "rows_modelled": model.get("n_train"), "task": session.task.kind,
                    "target": session.task.target, "prediction_time": session.task.index_label}
    card["decisions"] = [{"step": d.step_id, "gate": d.gate, "columns": d.columns, "choice": d.choice,
                          "by": d.by, "rationale": d.rationale} for d in session.decisions if d.decided]
    return card


def build_report(session: Session, model: dict[str, Any] | None,
                 episodes: dict[str, Episode] | None = None) -> dict[str, Any]:
    """The report.json content (key names are a public contract); ``episodes``: the library the
    steps come from (default: the built-in one)."""
    v = session.variables
    rows_in, cols_in = (v.get("initial_shape") or [None, None])[:2]
    rows_out, cols_out = (v.get("shape") or [None, None])[:2]
    dropped: list[str] = []
    for s in session.plan:
        if s.status == StepStatus.DONE:
            for c in (s.result.get("report") or {}).get("columns_removed", []) or []:
                if c not in dropped:
                    dropped.append(c)
    decisions = {d.id: d for d in session.decisions}
    steps = []
    for s in session.plan:
        d = decisions.get(s.decision_id) if s.decision_id else None
        steps.append({"id": s.id, "episode": s.episode, "status": s.status, "gate": s.gate,
                      "decision": {"choice": d.choice, "by": d.by} if d is not None else None,
                      "title": s.title, "note": s.note, "by_user": list(s.by_user),
                      "user_params": dict(s.user_params)})
    checks = audit(session, model, episodes)
    problems = [f"{c.check}: {c.detail}" for c in checks if not c.passed]
    task = session.task
    return {
        "dataset": {"rows_in": rows_in, "cols_in": cols_in, "rows_out": rows_out, "cols_out": cols_out},
        "task": {"kind": task.kind, "target": task.target, "time": task.time, "id": task.id,
                 "index": dict(task.index) or None},
        "findings": [{"kind": f.kind, "columns": list(f.columns), "severity": f.severity, "summary": f.summary}
                     for f in _unique(all_findings(session))],
        "steps": steps,
        "decisions": [decision_entry(d) for d in session.decisions],
        "codebook": codebook_summary(session),
        "plan_edits": encode(session.plan_edits),
        "dropped_columns": dropped,
        "model": None if not model else {
            "name": model.get("model_name"), "metric": model.get("metric"),
            "cv_score": model.get("cv_score"), "cv_sd": model.get("cv_sd"),
            "cv_interval": model.get("cv_interval"), "cv_repeats": model.get("cv_repeats"),
            "estimate": model.get("estimate"),
            "holdout_score": model.get("holdout_score"), "holdout_ci": model.get("holdout_ci"),
            "n_test": model.get("n_test"), **_holdout_counts(model),
            "features": model.get("features"), "candidates_tried": model.get("candidates_tried"),
            "sampled": model.get("sampled") or [], "degraded": model.get("degraded") or [], "card": model_card(session, model),
        },
        "valid": verdict(checks),
        "validity": [c.to_dict() for c in checks],
        # the column timeline card: the rules' evidence, a planner's proposals, the expert's moves
        "timeline": session.structure.card_dict(),
        "warnings": problems + list(session.warnings) + list((model or {}).get("warnings", [])),
        "llm_usage": {"calls": len(session.llm_usage),
                      "cost_usd": round(sum(u.get("cost_usd", 0) for u in session.llm_usage), 6)},
    }


def _holdout_counts(model: dict[str, Any]) -> dict[str, Any]:
    """The holdout's entities and events (what the verdict's power test counts), when known."""
    metrics = model.get("metrics") or {}
    return {k: metrics[k] for k in ("holdout_entities", "holdout_events") if k in metrics}


def decision_entry(d: Decision) -> dict[str, Any]:
    """One decision for report.json: the question, the answer and who gave it (``proposal``: an
    agent's answer, with its name; ``by`` "agent" when it decided), and each option
    with its estimated impact on the model (``impact``: metric, mean, sd, rows, columns,
    top_features, flags; None when it was not estimated)."""
    keys = ("metric", "mean", "sd", "rows", "columns", "top_features", "flags")
    return {"id": d.id, "step_id": d.step_id, "gate": d.gate, "question": d.question, "columns": list(d.columns),
            "recommended": d.recommended, "choice": d.choice, "by": d.by, "at": d.at, "rationale": d.rationale,
            "codebook": codebook_citation(d.evidence), "proposal": d.proposal,
            "options": [{"id": o.id, "label": o.label, "recommended": o.id == d.recommended,
                         "impact": {k: o.impact.get(k) for k in keys} if o.impact else None}
                        for o in d.options],
            "impact": {k: v for k, v in (d.impact or {}).items() if k != "options"} or None}


def _unique(findings: list[Finding]) -> list[Finding]:
    seen: set[str] = set()
    out = []
    for f in findings:
        if f.id not in seen:
            seen.add(f.id)
            out.append(f)
    return out


def write_reports(report: dict[str, Any], out_dir: str | Path,
                  details: dict[str, Any] | None = None) -> tuple[Path, Path]:
    """report.json and report.html (with ``details`` from :func:`report_html.report_details`:
    the decisions' evidence and rationale, and the charts)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    json_path, html_path = out / "report.json", out / "report.html"
    json_path.write_text(json.dumps(report, indent=2, default=str))
    html_path.write_text(render_html(report, details))
    return json_path, html_path
