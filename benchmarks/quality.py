"""Quality suite: the co-pilot vs a naive pipeline vs an oracle on the same honest holdout.

For each case of ``cases.py``:

1. co-pilot: ``jupyter dcpilot run TRAIN [AUX...] --test HOLDOUT --approve recommended
   --planner rules`` in a real kernel (a child process); its holdout score is what its fitted
   pipeline (pre-split steps replayed on the holdout) scores there;
2. naive (``naive.py``): fitted on the same TRAIN, scored on the same HOLDOUT;
3. oracle: ``kernel_tools.fit_evaluate`` on the ground truth (clean values, true labels, no
   leaked or identifier columns, one row per entity) of the same training rows / entities,
   scored on the ground truth of the same holdout rows / entities.

The holdout carries true labels and leaked columns permuted across its rows (see cases.py), so
a model that leans on a leaked column scores what it would score at prediction time. With
repeated rows the naive model's row predictions are averaged per entity, so every pipeline is
rated per held-out entity. Every co-pilot run is also audited from its report and notebook
against the case's truth (``audit.py``, independent of the co-pilot's own verdict); a run
whose report says valid while the audit fails is *quietly invalid*. ``run_case`` returns one
JSON-safe dict per case.

    python benchmarks/quality.py --cases rossi-checkins,bank-churn
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from audit import Truth, audit_run  # noqa: E402
from cases import Case, available_cases, permute_columns  # noqa: E402
from naive import RIGHT_METRIC, fit_naive, predict_scores, score_holdout  # noqa: E402

IMBALANCED = 0.2  # minority share below which accuracy is the wrong metric


def issue_scores(findings: list[dict[str, Any]], truth: set) -> dict[str, Any]:
    """Precision/recall of (kind, column) findings against the truth, over the kinds the truth
    covers (other findings may be right but cannot be judged). A truth item with column None
    counts the kind once; repeated_measurements is matched on its entity (first) column."""
    kinds = {k for k, _ in truth}
    kind_only = {k for k, c in truth if c is None}
    found: set = set()
    for f in findings:
        kind, columns = f.get("kind"), list(f.get("columns") or [])
        if kind not in kinds:
            continue
        if kind in kind_only:
            found.add((kind, None))
        elif kind == "repeated_measurements":
            found.add((kind, columns[0] if columns else None))
        else:
            found |= {(kind, c) for c in columns}
    hit = found & truth
    return {
        "precision": len(hit) / len(found) if found else None,
        "recall": len(hit) / len(truth) if truth else None,
        "missed": sorted(f"{k}:{c or '*'}" for k, c in truth - found),
        "false": sorted(f"{k}:{c or '*'}" for k, c in found - truth),
    }


def truth_of(case: Case) -> Truth:
    """What the audit holds the co-pilot's run of ``case`` to."""
    return Truth(task=case.task, target=case.target, time=case.time, entity=case.entity, index=case.index,
                 leaked=tuple(case.leaked), follow_up=tuple(case.follow_up), identifiers=tuple(case.identifiers))


def copilot_env(copilot_src: str | Path | None) -> dict[str, str] | None:
    """The environment that runs the co-pilot from another source tree (e.g. an older commit's
    checkout, to measure before and after with the same cases and audit); None: this one."""
    if copilot_src is None:
        return None
    import os

    return {**os.environ, "PYTHONPATH": str(Path(copilot_src).resolve())}


def run_copilot(case: Case, workdir: Path, timeout: float, copilot_src: str | Path | None = None) -> dict[str, Any]:
    """The headless co-pilot on the case's files; its report plus wall time (``copilot_src``:
    run the co-pilot of that source tree instead of this one)."""
    workdir.mkdir(parents=True, exist_ok=True)
    train_path, holdout_path = workdir / "train.csv", workdir / "holdout.csv"
    case.train.to_csv(train_path, index=False)
    case.holdout.to_csv(holdout_path, index=False)
    data = [str(train_path)]
    for i, aux in enumerate(case.extra, start=2):
        path = workdir / f"aux_{i}.csv"
        aux.to_csv(path, index=False)
        data.append(str(path))
    out = workdir / "copilot"
    cmd = [sys.executable, "-m", "jupyter_dcpilot.cli", "run", *data, "--target", case.target,
           "--test", str(holdout_path), "--approve", "recommended", "--planner", "rules", "--out", str(out), "--force"]
    if case.task == "survival":
        cmd += ["--task", "survival", "--time", case.time]
    return run_cli(cmd, out, workdir, timeout, env=copilot_env(copilot_src))


def run_cli(cmd: list[str], out: Path, workdir: Path, timeout: float,
            env: dict[str, str] | None = None) -> dict[str, Any]:
    """Run ``jupyter dcpilot run`` (``cmd``) and read its report.json from ``out``, with the
    wall time (``seconds``), exit code and ``out``; ``{"error": ...}`` when it timed out or
    wrote none."""
    # an earlier run's outputs would be read back as this run's (the CLI refuses to overwrite them)
    shutil.rmtree(out, ignore_errors=True)
    started = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=workdir,
                              stdin=subprocess.DEVNULL, env=env)
    except subprocess.TimeoutExpired:
        return {"error": f"timeout after {timeout:.0f} s", "seconds": timeout}
    seconds = time.perf_counter() - started
    report_path = out / "report.json"
    if not report_path.is_file():
        tail = (proc.stderr.strip().splitlines() or ["?"])[-1][:300]
        return {"error": f"exit {proc.returncode}: {tail}", "seconds": seconds}
    report = json.loads(report_path.read_text())
    report["seconds"] = seconds
    report["exit"] = proc.returncode
    report["out"] = str(out)
    return report


def judge_copilot(case: Case, report: dict[str, Any]) -> dict[str, Any]:
    """Valid = the run's own report says valid AND the external audit (``audit.py``) passes;
    ``audit`` holds the audit, ``quietly_invalid`` whether the report said valid and it failed."""
    if "error" in report:
        return {"valid": False, "problems": [report["error"]], "metric": None, "holdout": None,
                "self": None, "seconds": report["seconds"], "issues": issue_scores([], case.truth),
                "state": "error", "audit": None, "quietly_invalid": False}
    model = report.get("model") or {}
    audit = audit_run(report["out"], truth_of(case))
    checks = report.get("validity")  # the named checks of the verdict (older reports: warnings only)
    if isinstance(checks, list):
        said = [f"{c.get('check')}: {c.get('detail')}" for c in checks if not c.get("passed")]
    else:
        said = [str(w) for w in report.get("warnings", [])] if not report.get("valid") else []
    problems = said + [p for rule in audit.problems.values() for p in rule]
    return {
        "valid": bool(report.get("valid")) and audit.passed, "problems": problems, "report_problems": said,
        "metric": model.get("metric"),
        "holdout": model.get("holdout_score"), "self": model.get("cv_score"),
        "seconds": report["seconds"], "issues": issue_scores(report.get("findings", []), case.truth),
        "state": report.get("state"), "dropped": report.get("dropped_columns", []),
        "said_valid": report.get("valid"), "audit": audit.to_dict(), "quietly_invalid": audit.quietly_invalid,
    }


def run_naive(case: Case, random_state: int = 0) -> dict[str, Any]:
    started = time.perf_counter()
    train = case.train
    if case.extra:  # general co-pilots join every file they are given on the shared key
        train = _join_all(train, case.extra)
    result = fit_naive(train, case.target, case.task, random_state)
    holdout = _join_all(case.holdout, case.extra) if case.extra else case.holdout
    # the follow-up time is part of the outcome: unknown when predicting, so it is permuted too
    features = permute_columns(holdout, [case.time], 1) if case.time else holdout
    scores = predict_scores(result, features)
    if case.task == "survival" and np.ndim(scores) == 2:  # several event codes: risk = P(not censored)
        scores = 1 - scores[:, [str(c) for c in result.pipeline.classes_].index("0")]
    y, t = holdout[case.target], holdout[case.time] if case.time else None
    if case.entity:  # rate per entity, like the others: mean of the entity's row predictions
        frame = pd.DataFrame({"e": holdout[case.entity].to_numpy(), "y": y.to_numpy(),
                              "t": t.to_numpy() if t is not None else 0})
        frame = pd.concat([frame, pd.DataFrame(np.asarray(scores).reshape(len(frame), -1))], axis=1)
        per = frame.groupby("e", sort=False).agg("mean" if case.task == "regression" else "first")
        score_cols = [c for c in frame.columns if c not in ("e", "y", "t")]
        per[score_cols] = frame.groupby("e", sort=False)[score_cols].mean()
        y, t = per["y"], per["t"]
        scores = per[score_cols].to_numpy()
        scores = scores[:, 0] if scores.shape[1] == 1 else scores
    classes = None if result.task == "regression" else list(result.pipeline.classes_)
    holdout_score = score_holdout(case.task, y, scores, classes=classes, time=t)
    problems = []
    leaked = [c for c in case.unknown_at_prediction if c in result.features]
    if leaked:
        problems.append(f"leaked or follow-up columns are features: {leaked}")
    if case.entity:
        problems.append("rows of one entity on both sides of a random row split")
    if case.task == "survival":
        problems.append("survival treated as classification of the event; accuracy, follow-up time as a feature")
    elif case.task == "classification":
        share = case.train[case.target].astype(str).value_counts(normalize=True).min()
        if share < IMBALANCED:
            problems.append(f"accuracy on imbalanced classes (minority {share:.0%})")
    return {"valid": not problems, "problems": problems, "metric": RIGHT_METRIC[case.task],
            "holdout": holdout_score, "self": result.self_score, "self_metric": result.self_metric,
            "seconds": time.perf_counter() - started}


def _join_all(frame: pd.DataFrame, extra: list[pd.DataFrame]) -> pd.DataFrame:
    out = frame
    for aux in extra:
        if set(aux.columns) <= set(out.columns):
            continue  # already joined
        key = next(c for c in aux.columns if c in out.columns)
        out = out.merge(aux, on=key, how="left", suffixes=("", "_aux"))
    return out


def run_oracle(case: Case, random_state: int = 0) -> dict[str, Any] | None:
    if not case.has_oracle:
        return None
    import kernel_tools as kt

    started = time.perf_counter()
    report = kt.fit_evaluate(case.oracle_train, target=case.target, task=case.task, time=case.time,
                             test=case.oracle_holdout, random_state=random_state)
    return {"valid": True, "metric": report.metric, "holdout": report.holdout_score,
            "self": report.cv_score, "seconds": time.perf_counter() - started}


def label_rows(case: Case) -> dict[str, Any] | None:
    """Row-level precision/recall of kernel_tools.diagnose's label issues on the flipped rows."""
    if not case.flipped:
        return None
    import kernel_tools as kt

    started = time.perf_counter()
    d = kt.diagnose(case.train, target=case.target, task=case.task, sample=None)
    issues = d.by_kind("label_issues")
    found = set(issues[0].evidence.get("rows", [])) if issues else set()
    truth = set(case.flipped)
    hit = len(found & truth)
    return {"flagged": len(found), "flipped": len(truth),
            "precision": hit / len(found) if found else None, "recall": hit / len(truth),
            "seconds": time.perf_counter() - started}


def gap_recovered(copilot: float | None, naive: float | None, oracle: float | None) -> float | None:
    """(co-pilot - naive) / (oracle - naive); None when a score is missing or the gap < 0.01."""
    if any(v is None or (isinstance(v, float) and math.isnan(v)) for v in (copilot, naive, oracle)):
        return None
    if abs(oracle - naive) < 0.01:
        return None
    return (copilot - naive) / (oracle - naive)


def run_reference(case: Case, workdir: Path, seconds: float) -> dict[str, Any]:
    """The co-pilot's model vs an external reference on its prepared data (``reference.py``)."""
    import reference

    notebook = workdir / case.name / "copilot" / "notebook.ipynb"
    if not notebook.is_file():
        return {"error": "the co-pilot wrote no notebook"}
    try:
        return reference.compare(notebook, seconds)
    except Exception as exc:  # reported in the table: one broken comparison must not hide the others
        return {"error": f"{type(exc).__name__}: {exc}"[:300]}


def run_case(case: Case, workdir: Path, timeout: float = 900, random_state: int = 0,
             reference_seconds: float | None = None, copilot_src: str | Path | None = None) -> dict[str, Any]:
    """Run the three pipelines on one case (and, with ``reference_seconds``, the external
    reference on the co-pilot's prepared data); a JSON-safe dict for the report.
    ``copilot_src``: the co-pilot of another source tree (see ``copilot_env``)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        copilot = judge_copilot(case, run_copilot(case, workdir / case.name, timeout, copilot_src))
        naive = run_naive(case, random_state)
        oracle = run_oracle(case, random_state)
        labels = label_rows(case)
        models = run_reference(case, workdir, reference_seconds) if reference_seconds else None
    return {
        "case": case.name, "source": case.source, "description": case.description,
        "task": case.task, "rows": len(case.train), "cols": case.train.shape[1], "holdout_rows": len(case.holdout),
        "holdout_entities": int(case.holdout[case.entity].nunique()) if case.entity else None,
        "copilot": copilot, "naive": naive, "oracle": oracle, "label_rows": labels, "models": models,
        "gap_recovered": gap_recovered(copilot["holdout"], naive["holdout"], (oracle or {}).get("holdout")),
    }


def run_suite(names: list[str] | None = None, *, n: int | None = None, workdir: Path | None = None,
              timeout: float = 900, log=None, reference_seconds: float | None = None,
              copilot_src: str | Path | None = None) -> list[dict[str, Any]]:
    """Every available case (or ``names``); ``n`` shrinks each case for a smoke run;
    ``reference_seconds``: also compare the co-pilot's model with the external reference;
    ``copilot_src``: the co-pilot of another source tree (see ``copilot_env``)."""
    builders = available_cases()
    names = [c for c in (names or builders) if c in builders]
    results = []
    with tempfile.TemporaryDirectory(prefix="dcpilot-bench-") as tmp:
        root = Path(workdir or tmp)
        for name in names:
            started = time.perf_counter()
            try:
                case = builders[name](seed=0, n=n)
                results.append(run_case(case, root, timeout, reference_seconds=reference_seconds,
                                        copilot_src=copilot_src))
            except Exception as exc:  # one broken case must not hide the others
                results.append({"case": name, "error": f"{type(exc).__name__}: {exc}"})
            if log:
                log(f"quality {name}: {time.perf_counter() - started:.1f} s")
    return results


def run_scaling(sizes: list[int], *, timeout: float = 900, log=None) -> list[dict[str, Any]]:
    """End-to-end co-pilot wall time on synthetic mixed-type frames (40 columns, ``_frames.py``)
    of growing size: 80% of the rows to train, 20% as the test file."""
    from _frames import mixed_frame

    out = []
    with tempfile.TemporaryDirectory(prefix="dcpilot-scaling-") as tmp:
        for n in sizes:
            df = mixed_frame(int(n * 1.25), 40, seed=0)
            case = Case(name=f"mixed-{n}", source="synthetic", description="", task="classification",
                        target="y", train=df.iloc[:n].reset_index(drop=True),
                        holdout=df.iloc[n:].reset_index(drop=True))
            report = run_copilot(case, Path(tmp) / case.name, timeout)
            out.append({"rows": n, "seconds": report["seconds"], "state": report.get("state", "error"),
                        "error": report.get("error"),
                        "holdout": (report.get("model") or {}).get("holdout_score")})
            if log:
                log(f"scaling {n}: {report['seconds']:.1f} s")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", default="", help="comma-separated case names (default: all available)")
    ap.add_argument("--n", type=int, default=None, help="shrink each case to about n rows/entities")
    ap.add_argument("--timeout", type=float, default=900)
    ap.add_argument("--json", help="write the results to this file")
    ap.add_argument("--reference-seconds", type=float, default=None,
                    help="also run the external reference model with this time budget (reference.py)")
    ap.add_argument("--workdir", help="keep each case's files and the co-pilot's notebook/report here")
    ap.add_argument("--copilot-src", help="run the co-pilot of this source tree (e.g. an older commit's "
                    "checkout) with this harness, its cases and its audit")
    args = ap.parse_args()
    results = run_suite([c for c in args.cases.split(",") if c] or None, n=args.n, timeout=args.timeout,
                        workdir=Path(args.workdir) if args.workdir else None, copilot_src=args.copilot_src,
                        log=lambda s: print(s, file=sys.stderr, flush=True),
                        reference_seconds=args.reference_seconds)
    text = json.dumps(results, indent=2, default=str)
    if args.json:
        Path(args.json).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
