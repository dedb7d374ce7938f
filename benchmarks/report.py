"""docs/benchmarks.md from the measurements: machine, versions, quality, speed, growth.

``machine_info()`` and ``versions()`` are read at the start of a run; ``render(results)`` turns
the dict that ``run_all.py`` collects into Markdown. Nothing here measures anything.
"""

from __future__ import annotations

import datetime as dt
import math
import os
import platform
import subprocess
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]


def machine_info() -> dict[str, Any]:
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    ram_gib = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                ram_gib = int(line.split()[1]) / 2**20
    except OSError:
        pass
    return {"cpus": os.cpu_count(), "cpu_model": model or platform.processor(), "ram_gib": ram_gib,
            "load_avg": list(os.getloadavg()), "platform": platform.platform(),
            "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")}


def versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for dist in ("jupyter-dcpilot", "pandas", "numpy", "scikit-learn", "cleanlab", "lifelines",
                 "scikit-survival", "xgboost", "flaml", "lightgbm", "optuna", "hyperimpute", "ydata-profiling"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = "not installed"
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True,
                                text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO,
                               capture_output=True, text=True, timeout=10).stdout.strip()
        out["git commit"] = f"{commit}{' + uncommitted changes' if dirty else ''}" if commit else "unknown"
    except (OSError, subprocess.SubprocessError):
        out["git commit"] = "unknown"
    return out


def growth_exponent(rows: list[int], seconds: list[float]) -> float | None:
    """Slope of log(time) against log(rows) by least squares: 1 = linear, 2 = quadratic."""
    pairs = [(r, s) for r, s in zip(rows, seconds) if r and s and s > 0]
    if len(pairs) < 2:
        return None
    x, y = np.log([p[0] for p in pairs]), np.log([p[1] for p in pairs])
    return float(np.polyfit(x, y, 1)[0])


def _num(x: Any, digits: int = 3) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "—"
    return f"{x:.{digits}f}" if isinstance(x, float) else str(x)


def _pct(x: Any) -> str:
    return "—" if x is None else f"{100 * x:.0f}%"


def _valid(p: dict | None) -> str:
    if not p:
        return "—"
    if p.get("valid"):
        return "yes"
    return "**no**: " + "; ".join(str(x) for x in p.get("problems", []))[:220]


def _said_valid(c: dict[str, Any]) -> str:
    """The co-pilot's own verdict (its report.json), with the checks that failed."""
    if c.get("state") == "error":
        return "**no**: " + "; ".join(c.get("problems", []))[:220]
    if c.get("said_valid"):
        return "yes"
    return "**no**: " + "; ".join(str(x) for x in c.get("report_problems", []))[:220]


def _audit(c: dict[str, Any]) -> str:
    """The external audit of the run (benchmarks/audit.py); QUIETLY INVALID when the report said valid."""
    audit = c.get("audit")
    if not audit:
        return "—"
    if audit.get("passed"):
        return "passed"
    problems = "; ".join(p for rule in audit["problems"].values() for p in rule)[:220]
    return ("**QUIETLY INVALID**: " if audit.get("quietly_invalid") else "failed: ") + problems


def quietly_invalid_line(quality: list[dict[str, Any]]) -> str:
    done = [r["copilot"] for r in quality if "error" not in r]
    audited = [c for c in done if c.get("audit")]
    quiet = [r["case"] for r in quality if "error" not in r and r["copilot"].get("quietly_invalid")]
    return (f"Audit: {sum(c['audit']['passed'] for c in audited)} of {len(done)} co-pilot runs pass the external "
            f"audit; {sum(bool(c.get('said_valid')) for c in done)} say valid; quietly invalid (the report says "
            f"valid, the audit does not): **{len(quiet)}**" + (f" ({', '.join(quiet)})" if quiet else "") + ".")


def quality_section(quality: list[dict[str, Any]]) -> list[str]:
    lines = ["## Quality: co-pilot vs naive pipeline vs oracle", "",
             "Same training rows and the same honest holdout for all three pipelines (see *Method*). "
             "Holdout metric: the task's right metric (AUROC, macro one-vs-rest for several classes; R²; "
             "Harrell's C for survival), per held-out entity when rows repeat. "
             "Gap recovered = (co-pilot − naive) / (oracle − naive); — when there is no oracle or the gap is "
             "below 0.01. Issues: precision / recall of the co-pilot's findings against the injected or "
             "documented problems (over the kinds the ground truth covers). Valid? is the run's own verdict "
             "(co-pilot: its report.json; naive: the checks of *Method*); audit is the external check of every "
             "co-pilot run (`benchmarks/audit.py`, see *Method*).", "",
             "| case | task | train rows | pipeline | valid? | audit | issues P / R | holdout metric | self-reported | "
             "run time s |", "|---|---|---|---|---|---|---|---|---|---|"]
    summary = ["", "| case | co-pilot valid (report and audit) | naive valid | co-pilot | naive | oracle | "
               "gap recovered |", "|---|---|---|---|---|---|---|"]
    for r in quality:
        if "error" in r:
            lines.append(f"| {r['case']} | — | — | — | error: {r['error'][:200]} | | | | | |")
            continue
        c, n, o = r["copilot"], r["naive"], r["oracle"]
        issues = c.get("issues") or {}
        pr = f"{_num(issues.get('precision'), 2)} / {_num(issues.get('recall'), 2)}"
        missed = issues.get("missed") or []
        if missed:
            pr += f" (missed: {', '.join(missed)[:120]})"
        head = f"| {r['case']} | {r['task']} | {r['rows']} |"
        lines.append(f"{head} co-pilot | {_said_valid(c)} | {_audit(c)} | {pr} | {c.get('metric') or '—'} "
                     f"{_num(c.get('holdout'))} | "
                     f"{_num(c.get('metric'))} cv {_num(c.get('self'))} | {_num(c.get('seconds'), 1)} |")
        lines.append(f"| | | | naive | {_valid(n)} | — | — (no diagnosis) | {n['metric']} "
                     f"{_num(n.get('holdout'))} | "
                     f"{n.get('self_metric')} {_num(n.get('self'))} | {_num(n.get('seconds'), 1)} |")
        if o:
            lines.append(f"| | | | oracle | yes | — | — | {o['metric']} {_num(o.get('holdout'))} | "
                         f"{o['metric']} cv {_num(o.get('self'))} | {_num(o.get('seconds'), 1)} |")
        else:
            lines.append("| | | | oracle | — | — | — | no ground truth | — | — |")
        summary.append(f"| {r['case']} | {'yes' if c.get('valid') else 'no'} | {'yes' if n.get('valid') else 'no'} | "
                       f"{_num(c.get('holdout'))} | {_num(n.get('holdout'))} | {_num((o or {}).get('holdout'))} | "
                       f"{_num(r.get('gap_recovered'), 2)} |")
    done = [r for r in quality if "error" not in r]
    gaps = [r["gap_recovered"] for r in done if r.get("gap_recovered") is not None]
    totals = (f"Co-pilot valid in {sum(bool(r['copilot'].get('valid')) for r in done)} of {len(done)} cases, "
              f"naive in {sum(bool(r['naive'].get('valid')) for r in done)} of {len(done)}; "
              f"median gap recovered {_num(float(np.median(gaps)) if gaps else None, 2)} over {len(gaps)} "
              "cases with an oracle and a gap of at least 0.01.")
    lines += ["", f"### Summary ({len(done)} cases)", "", totals, "", quietly_invalid_line(quality)] + summary
    labels = [r for r in quality if r.get("label_rows")]
    if labels:
        lines += ["", "### Flipped labels found (row level, `kernel_tools.diagnose` on the training rows)", "",
                  "Flagged = the rows a label-issue finding lists (at most 2,000, most confident first).", "",
                  "| case | flipped | flagged | precision | recall | s |", "|---|---|---|---|---|---|"]
        for r in labels:
            lr = r["label_rows"]
            lines.append(f"| {r['case']} | {lr['flipped']} | {lr['flagged']} | {_num(lr['precision'], 2)} | "
                         f"{_num(lr['recall'], 2)} | {_num(lr['seconds'], 1)} |")
    lines += ["", "### Cases", "", "| case | source | problems | holdout |", "|---|---|---|---|"]
    for r in quality:
        if "error" not in r:
            held = f"{r['holdout_rows']} rows"
            if r.get("holdout_entities"):
                held += f", {r['holdout_entities']} entities"
            lines.append(f"| {r['case']} | {r['source']} | {r['description']} | {held} |")
    return lines


def audit_record_section(records: dict[str, dict[str, Any]]) -> list[str]:
    """Quietly invalid runs before → after (:func:`audit_record.section`)."""
    import audit_record

    return audit_record.section(records)


def diagnose_quality_section(rows: list[dict[str, Any]]) -> list[str]:
    if not rows:
        return ["## Diagnosis precision / recall on shared data", "",
                "not run (a --quick run, or no shared data folder)."]
    lines = ["## Diagnosis precision / recall on shared data (`benchmarks/diagnose_quality.py`)", "",
             "| case | what | precision | recall | found | truth |", "|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['case']} | {r['what']} | {_num(r['precision'], 2)} | {_num(r['recall'], 2)} | "
                     f"{', '.join(map(str, r['found']))[:100]} | {', '.join(map(str, r['truth']))[:100]} |")
    return lines


def _tool_cell(r: dict | None, budget: str) -> str:
    if r is None:
        return budget
    if "timeout" in r:
        return f"> {r['timeout']:.0f} (stopped)"
    if "error" in r:
        return f"error: {r['error'][:80]}"
    return f"{r['seconds']:.2f} (cpu {r['cpu_s']:.1f}; +{r['peak_added_mb']:.0f} MB)"


def speed_section(speed: dict[str, Any]) -> list[str]:
    lines = ["## Speed: `diagnose` vs cleanlab Datalab vs ydata-profiling (minimal)", ""]
    if speed.get("error"):
        return lines + [f"not run: {speed['error']}"]
    lines += [f"Synthetic mixed-type frames ({speed['cols']} columns: numbers, counts, categories, booleans, "
              "dates, an id, missing values, outliers, a binary target; `benchmarks/_frames.py`), each tool in "
              "its own child process on the same parquet file. Wall seconds (CPU seconds; peak memory added). "
              f"Peers run up to {speed['peer_max_rows']:,} rows with a {speed['peer_timeout']:.0f} s budget; "
              f"ydata-profiling: {speed['ydata']}.", "",
              "| rows | frame MB | diagnose | Datalab | ydata minimal | speed-up vs Datalab | vs ydata |",
              "|---|---|---|---|---|---|---|"]
    for r in speed["rows"]:
        d = r["diagnose"]
        budget = "not run (budget)"
        dl = _tool_cell(r.get("datalab"), budget)
        yd = _tool_cell(r.get("ydata"), budget if speed["ydata"] == "available" else "not available")
        lines.append(f"| {r['rows']:,} | {r['frame_mb']:.0f} | {_tool_cell(d, '—')} | {dl} | {yd} | "
                     f"{_speedup(r.get('datalab'), d)} | {_speedup(r.get('ydata'), d)} |")
    lines += ["", "Growth exponent (slope of log time vs log rows, least squares; 1 = linear): " + ", ".join(
        f"{tool} {_num(e, 2)}" + (f" (over {pts} sizes)" if pts else "")
        for tool, (e, pts) in speed["growth"].items())]
    return lines


def _speedup(peer: dict | None, ours: dict) -> str:
    if not peer or "seconds" not in ours or "error" in peer:
        return "—"
    t = peer.get("seconds", peer.get("timeout"))
    return (">" if "timeout" in peer else "") + f"{t / ours['seconds']:.1f}x"


def scale_section(scale: dict[str, Any] | None) -> list[str]:
    import bench_scale

    if not scale or "error" in scale:
        why = (scale or {}).get("error", "not requested (a --quick run)")
        return ["## End to end at scale (`benchmarks/bench_scale.py`)", "", f"Not run: {why}."]
    return bench_scale.markdown(scale).rstrip("\n").split("\n")


def impact_section(impact: dict[str, Any] | None) -> list[str]:
    import bench_impact

    return bench_impact.markdown(impact or {"error": "not requested"}).rstrip("\n").split("\n")


def detectors_section(detectors: dict[str, Any] | None) -> list[str]:
    import bench_detectors

    title = "## Diagnosis, detector by detector (`benchmarks/bench_detectors.py`)"
    if not detectors or "error" in detectors:
        return [title, "", f"Not run: {(detectors or {}).get('error', 'not requested')}."]
    return bench_detectors.markdown(detectors).rstrip("\n").split("\n")


def background_section(background: dict[str, Any] | None) -> list[str]:
    import bench_background

    title = "## A cell beside an impact estimate (`benchmarks/bench_background.py`)"
    if not background or "error" in background:
        return [title, "", f"Not run: {(background or {}).get('error', 'not requested (a --quick run)')}."]
    return bench_background.markdown(background).rstrip("\n").split("\n")
def mcp_section(mcp: dict[str, Any] | None) -> list[str]:
    import bench_mcp

    return bench_mcp.markdown(mcp or {"error": "not requested"}).rstrip("\n").split("\n")


def checkpoint_section(cp: dict[str, Any]) -> list[str]:
    lines = ["## Checkpoints: save / restore vs a deep copy (`benchmarks/bench_checkpoints.py`)", ""]
    if cp.get("error"):
        return lines + [f"not run: {cp['error']}"]
    lines += [f"Frame {cp['rows']:,} rows × {cp['cols']} numeric columns, {cp['frame_mib']:,.0f} MiB.", "",
              "| scenario | snapshot | save ms | save MiB | restore ms | restore MiB | restored correctly |",
              "|---|---|---|---|---|---|---|"]
    for r in cp["results"]:
        lines.append(f"| {r['scenario']} | {r['snapshot']} | {_num(r['save_ms'], 1)} | {_num(r['save_mib'], 1)} | "
                     f"{_num(r['restore_ms'], 1)} | {_num(r['restore_mib'], 1)} | {r['restored']} |")
    return lines


def e2e_section(quality: list[dict[str, Any]], scaling: list[dict[str, Any]],
                growth: tuple[float | None, int]) -> list[str]:
    lines = ["## End-to-end co-pilot run time per case", "",
             "`jupyter dcpilot run` wall time: kernel start, data load, diagnosis, every step, model fit, "
             "report.", "", "| case | train rows | columns in | seconds | state |", "|---|---|---|---|---|"]
    for r in quality:
        if "error" in r:
            continue
        c = r["copilot"]
        lines.append(f"| {r['case']} | {r['rows']} | {r.get('cols', '—')} | {_num(c.get('seconds'), 1)} | "
                     f"{c.get('state')} |")
    lines += ["", "Synthetic mixed-type frames (40 columns, `benchmarks/_frames.py`), 80% train / 20% test file:",
              "", "| train rows | seconds | state | holdout AUROC |", "|---|---|---|---|"]
    for r in scaling:
        state = r["state"] if not r.get("error") else f"error: {r['error'][:100]}"
        lines.append(f"| {r['rows']:,} | {_num(r['seconds'], 1)} | {state} | {_num(r.get('holdout'))} |")
    if not scaling:
        lines.append("| not run (a --quick run) | | | |")
    e, pts = growth
    lines += ["", f"Growth exponent of end-to-end time vs rows (log-log least squares over {pts} sizes): "
              f"{_num(e, 2)}. A fixed cost (kernel start, imports: roughly 10-15 s) flattens it at small sizes."]
    return lines


def _ci(result: dict[str, Any]) -> str:
    ci = result.get("holdout_ci")
    return f"{_num(result.get('holdout'))} [{_num(ci[0])}, {_num(ci[1])}]" if ci else _num(result.get("holdout"))


# the issue's goal: within this much of the reference, at most a fifth of its time
REFERENCE_TOLERANCE = {"roc_auc": 0.01, "c_index": 0.01, "r2": 0.02}


def models_section(quality: list[dict[str, Any]]) -> list[str]:
    """The co-pilot's model vs the external reference on the co-pilot's prepared data."""
    lines = ["## Models: the co-pilot's model vs an external reference (`benchmarks/reference.py`)", ""]
    rows = [r for r in quality if r.get("models")]
    if not rows:
        return lines + ["Not run (`--reference-seconds 0`)."]
    budget = next((r["models"]["reference"]["budget"] for r in rows if "reference" in r["models"]), None)
    lines += [
        "The co-pilot's notebook is re-run up to its model cell, so both models get exactly its prepared "
        "training rows, features and holdout. Co-pilot: its `kt.fit_evaluate(...)` call (the candidates "
        "compared by grouped CV, the explainable one kept when within one standard error). Reference: "
        f"FLAML AutoML (LightGBM, XGBoost, forests, linear; grouped folds when the co-pilot grouped), for "
        f"survival a random survival forest tuned by Optuna, each with a fixed budget of {_num(budget, 0)} s. "
        "Holdout metric with a bootstrap 95% interval (entities resampled when the holdout has them); "
        "seconds are wall time on the shared machine (CPU seconds in brackets). Goal: within 0.01 "
        "(AUROC, C-index) or 0.02 (R²) of the reference at ≤ 1/5 of its time.", "",
        "| case | metric | co-pilot model (settings tried) | co-pilot holdout [95% CI] | s | reference | "
        "reference holdout [95% CI] | s | gap | time ratio | oracle |",
        "|---|---|---|---|---|---|---|---|---|---|---|"]
    met = ratios = 0
    done = []
    for r in rows:
        m = r["models"]
        if "error" in m:
            lines.append(f"| {r['case']} | — | error: {m['error'][:150]} | | | | | | | | |")
            continue
        c, ref = m["copilot"], m["reference"]
        done.append(m)
        ok = m["gap"] >= -REFERENCE_TOLERANCE[m["metric"]]
        fast = m["time_ratio"] is not None and m["time_ratio"] <= 0.2
        met += ok
        ratios += fast
        lines.append(
            f"| {r['case']} | {m['metric']} | {c['name']} ({c['candidates_tried']}) | {_ci(c)} | "
            f"{_num(c['seconds'], 1)} ({_num(c['cpu_s'], 1)}) | {ref['name']} | {_ci(ref)} | "
            f"{_num(ref['seconds'], 0)} ({_num(ref['cpu_s'], 0)}) | {m['gap']:+.3f}{'' if ok else ' ✗'} | "
            f"{_num(m['time_ratio'], 2)}{'' if fast else ' ✗'} | {_num((r.get('oracle') or {}).get('holdout'))} |")
    if done:
        gaps = [m["gap"] for m in done]
        lines += ["", f"Within the tolerance of the reference in {met} of {len(done)} cases, at ≤ 1/5 of its "
                  f"time in {ratios} of {len(done)}; median gap {np.median(gaps):+.3f} (co-pilot − reference; "
                  "a gap inside both intervals is not evidence of a difference)."]
    return lines


def model_fitting_section(rows: list[dict[str, Any]]) -> list[str]:
    lines = ["## Model fitting on a wide table (`benchmarks/bench_models.py`)", ""]
    if not rows:
        return lines + ["Not run."]
    first = next((r for r in rows if "error" not in r), None)
    if first:
        lines += [f"`kt.fit_evaluate` on a generated table shaped like an ICU cohort: {first['rows']} training rows "
                  f"× {first['cols']} columns (6 categorical, 32 partly missing in panels of 4, 1-3 stays per "
                  "patient: grouped 5-fold CV), a 20% holdout of patients. Wall seconds per phase; "
                  "the budget column is `fit_evaluate(..., budget=)`.", ""]
    lines += ["| task | budget s | wall s (CPU s) | model | candidates | holdout [95% CI] | cross-validation | "
              "refit | interval | importance | calibration | cut to fit the budget |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['task']} | {_num(r.get('budget'), 0)} | error: {r['error'][:150]} |" + " |" * 9)
            continue
        t = r["timings"]
        ci = r.get("holdout_ci")
        score = f"{_num(r['holdout'])} [{_num(ci[0])}, {_num(ci[1])}]" if ci else _num(r["holdout"])
        cut = "; ".join(r["degraded"]) or "—"
        lines.append(
            f"| {r['task']} | {_num(r['budget'], 0) if r['budget'] else 'none'} | {_num(r['wall_s'], 1)} "
            f"({_num(r['cpu_s'], 1)}) | {r['model']} | {r['candidates']} | {score} | "
            f"{_num(t.get('cross-validation'), 1)} | {_num(t.get('refit'), 1)} | {_num(t.get('uncertainty'), 1)} | "
            f"{_num(t.get('importance'), 1)} | {_num(t.get('calibration'), 1)} | {cut} |")
    return lines


def render(results: dict[str, Any]) -> str:
    m, v = results["machine"], results["versions"]
    load = ", ".join(f"{x:.2f}" for x in m["load_avg"])
    out = ["<!-- generated by `make bench` (benchmarks/run_all.py), do not edit -->",
           "# Benchmarks", "",
           "_Generated by `make bench`, do not edit: rerun it to refresh._", "",
           f"- Date: {m['date']}; total run time {results.get('elapsed_s', 0) / 60:.1f} min",
           f"- Machine: {m['cpus']} CPUs ({m['cpu_model']}), {_num(m['ram_gib'], 1)} GiB RAM, {m['platform']}",
           f"- Load average at start (1, 5, 15 min): {load}; at the end: "
           f"{', '.join(f'{x:.2f}' for x in results.get('load_end', [])) or '—'}. The cores are shared with "
           "other work (other developers' test suites), so wall times are noisy; CPU seconds are given "
           "where measured.",
           "- Versions: " + ", ".join(f"{k} {val}" for k, val in v.items()), "",
           "## Method", "",
           "- **Co-pilot**: `jupyter dcpilot run TRAIN --test HOLDOUT --approve recommended --planner rules` "
           "(a real kernel; every gate answered with its recommended option); survival cases also get "
           "`--task survival --time T`. Its pre-split steps are replayed on the holdout and its fitted "
           "pipeline scored there.",
           "- **Naive** (`benchmarks/naive.py`): what general co-pilots write: mean / most-frequent imputation, "
           "one-hot, every column as a feature, a random 80/20 row split, a default random forest, accuracy "
           "(survival treated as classifying the event). Its self-reported score is on its own random split.",
           "- **Oracle**: `kernel_tools.fit_evaluate` on the ground truth of the same training rows / entities "
           "(clean values, true labels, no leaked or identifier columns, one row per entity), scored on the "
           "ground truth of the same holdout.",
           "- **Honest holdout** (chosen for a fair comparison): held out before anything runs, whole entities "
           "when rows repeat, TRUE labels, and every leaked or follow-up column (and, for the naive model, "
           "the survival time) permuted across holdout rows, i.e. as unknown as at prediction time (pbcseq-visits: "
           "each held-out patient's first visit only, since at enrolment the later visits do not exist yet). "
           "So a leaky model scores "
           "what it would score in use, not what its leaky split claims. Its features arrive in the same "
           "(dirty) form as the training data; the oracle gets their ground truth. Naive row predictions "
           "are averaged per entity (the co-pilot's own holdout score is per entity when it aggregated, per "
           "row when it grouped). Where the data has its own labelled test file (cirrhosis), that is "
           "the holdout.",
           "- **Valid** (naive) = no leaked or follow-up column among the features, entities kept together "
           "when rows repeat, the task's right metric. **Co-pilot** valid = its own report says valid and "
           "the external audit passes.",
           "- **Audit** (`benchmarks/audit.py`, independent of the co-pilot's verdict): from each run's "
           "report.json and notebook, against the case's documented truth: no leaked, follow-up / "
           "outcome-derived or identifier column (nor the entity id, target or survival time) among the model's "
           "features, also through derived names (`x_missing`, `x_last`); when rows repeat, each entity on one "
           "side of the split and of every fold (aggregated, or split and cross-validated by a grouping that "
           "never separates it) and, when the outcome counts from the first record, the first / baseline "
           "record, a landmark or intervals fitted as intervals; the task's metric; a holdout that confirms "
           "the cross-validation (AUROC / C-index ≤ 0.55 next to cv ≥ 0.60 fails; R² ≤ 0 next to ≥ 0.2). "
           "*Quietly invalid* = the report says valid and the audit does not.",
           ""]
    out += quality_section(results.get("quality", [])) + [""]
    out += models_section(results.get("quality", [])) + [""]
    out += audit_record_section(results.get("audit_records", {})) + [""]
    out += diagnose_quality_section(results.get("diagnose_quality", [])) + [""]
    out += speed_section(results.get("speed", {"error": "not requested"})) + [""]
    out += detectors_section(results.get("detectors")) + [""]
    out += scale_section(results.get("scale")) + [""]
    out += checkpoint_section(results.get("checkpoints", {"error": "not requested"})) + [""]
    out += impact_section(results.get("impact")) + [""]
    out += background_section(results.get("background")) + [""]
    out += mcp_section(results.get("mcp")) + [""]
    out += model_fitting_section(results.get("model_fitting", [])) + [""]
    out += e2e_section(results.get("quality", []), results.get("scaling", []),
                       results.get("e2e_growth", (None, 0))) + [""]
    return "\n".join(out)
