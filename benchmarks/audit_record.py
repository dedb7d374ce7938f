"""Quietly invalid runs, before → after: the records that docs/benchmarks.md shows.

A record holds, for one commit's co-pilot, every run of the quality suite (``quality.py``) and
of the full sweep (``sweep.py --mode full``, 124 data sets), each with its report's verdict
and the external audit (``audit.py``) against the documented truth. Both are measured with
this harness, its cases, catalogue and audit; an older co-pilot runs from its own checkout::

    git worktree add /tmp/before e2ae906 --detach
    python benchmarks/quality.py --copilot-src /tmp/before --workdir /tmp/q-before --json /tmp/q-before.json
    python benchmarks/sweep.py --mode full --copilot-src /tmp/before --workdir /tmp/s-before --json /tmp/s-before.json
    python benchmarks/audit_record.py --label before --copilot-src /tmp/before \\
        --quality /tmp/q-before.json --sweep /tmp/s-before.json

(``after``: the same without ``--copilot-src``.) A sweep whose runs were kept can be audited
again with a changed catalogue without running the co-pilot: ``sweep.py --reaudit JSON
--workdir DIR --json NEW``. The record goes to ``benchmarks/results/audit-<label>.json``;
``make bench`` (``run_all.py``) renders every record there (``report.audit_record_section``);
``--docs docs/benchmarks.md`` writes just that section into the generated report.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
LABELS = ("before", "after")


def _problems(audit: dict[str, Any] | None) -> str:
    if not audit:
        return ""
    return "; ".join(p for rule in audit["problems"].values() for p in rule)


def quality_rows(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One compact row per quality case: the report's verdict and the audit."""
    rows = []
    for r in results:
        if "error" in r:
            rows.append({"name": r["case"], "state": "error", "said_valid": None, "audit_passed": False,
                         "quietly_invalid": False, "problems": r["error"][:300]})
            continue
        c = r["copilot"]
        audit = c.get("audit")
        rows.append({"name": r["case"], "state": c.get("state"), "said_valid": c.get("said_valid"),
                     "audit_passed": bool(audit and audit["passed"]), "quietly_invalid": bool(c.get("quietly_invalid")),
                     "problems": _problems(audit) or ("; ".join(c.get("problems", []))[:300] if not audit else ""),
                     "metric": c.get("metric"), "cv": c.get("self"), "holdout": c.get("holdout")})
    return rows


def sweep_rows(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One compact row per sweep data set (rows of ``sweep.py --mode full --json``)."""
    rows = []
    for r in results:
        audit = r.get("audit")
        if "error" in r or audit is None:
            rows.append({"name": r["name"], "state": "error", "said_valid": None, "audit_passed": False,
                         "quietly_invalid": False, "problems": str(r.get("error", "not audited"))[:300]})
            continue
        rows.append({"name": r["name"], "state": r.get("state"), "said_valid": r.get("valid"),
                     "audit_passed": audit["passed"], "quietly_invalid": audit["quietly_invalid"],
                     "problems": _problems(audit), "metric": r.get("metric"), "cv": r.get("cv_score")})
    return rows


def commit_of(tree: Path) -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=tree, capture_output=True, text=True,
                             timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=tree,
                               capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return f"{out}{' + uncommitted changes' if dirty else ''}" if out else "unknown"


def record(label: str, quality: list[dict[str, Any]], sweep: list[dict[str, Any]], copilot_src: Path) -> dict[str, Any]:
    return {"label": label, "commit": commit_of(copilot_src),
            "recorded": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "quality": quality_rows(quality), "sweep": sweep_rows(sweep)}


def counts(rows: list[dict[str, Any]]) -> dict[str, int]:
    return {"runs": len(rows), "said_valid": sum(bool(r["said_valid"]) for r in rows),
            "audit_passed": sum(r["audit_passed"] for r in rows),
            "quietly_invalid": sum(r["quietly_invalid"] for r in rows)}


def load_records(folder: Path = RESULTS) -> dict[str, dict[str, Any]]:
    """The records in ``folder`` by label (before, after)."""
    out = {}
    for label in LABELS:
        path = folder / f"audit-{label}.json"
        if path.is_file():
            out[label] = json.loads(path.read_text())
    return out


def _verdict(row: dict[str, Any] | None) -> str:
    if row is None:
        return "—"
    if row.get("state") == "error":
        return "error"
    return "valid" if row.get("said_valid") else "not valid"


def _audit_cell(row: dict[str, Any] | None) -> str:
    if row is None:
        return "—"
    if row["audit_passed"]:
        return "passed"
    return ("**QUIETLY INVALID**: " if row["quietly_invalid"] else "failed: ") + str(row.get("problems", ""))[:200]


def section(records: dict[str, dict[str, Any]]) -> list[str]:
    """Quietly invalid runs before → after, from the records of ``audit_record.py``."""
    head = ["## Quietly invalid runs: before → after (`benchmarks/audit_record.py`)", ""]
    if not records:
        return head + ["no records in benchmarks/results/ (see `benchmarks/audit_record.py`)."]
    labels = [label for label in LABELS if label in records]
    lines = head + [
        "Written from the records in `benchmarks/results/` (not this run): every run of the quality suite and "
        "of the full sweep (`sweep.py --mode full`: the co-pilot on every data set scikit-learn, lifelines, "
        "statsmodels, scikit-survival and pydataset ship), by the co-pilot of the commit named, each audited by "
        "`benchmarks/audit.py` against the documented truth (same cases, catalogue and audit for both). "
        "*Quietly invalid*: the run's report says valid, the audit does not. A run whose report says "
        "not valid is not quiet, whatever the audit says.", "",
        "| runs | co-pilot at | recorded | runs | report says valid | audit passed | quietly invalid |",
        "|---|---|---|---|---|---|---|"]
    for part, title in (("quality", "quality suite"), ("sweep", "sweep")):
        for label in labels:
            rec = records[label]
            c = counts(rec[part])
            lines.append(f"| {title}, {label} | {rec['commit']} | {rec['recorded']} | {c['runs']} | "
                         f"{c['said_valid']} | {c['audit_passed']} | **{c['quietly_invalid']}** |")
    arrows = []
    for part, title in (("quality", "quality suite"), ("sweep", "sweep")):
        arrows.append(f"{title} " + " → ".join(str(counts(records[label][part])["quietly_invalid"])
                                                for label in labels))
    lines += ["", f"Quietly invalid runs ({' → '.join(labels)}): " + "; ".join(arrows) + ".", ""]
    for part, title, every in (("quality", "Quality suite, per case", True),
                               ("sweep", "Sweep: the data sets whose audit failed before or after", False)):
        by_label = {label: {r["name"]: r for r in records[label][part]} for label in labels}
        names = list(dict.fromkeys(n for label in labels for n in by_label[label]))
        if not every:
            names = [n for n in names if any(not by_label[label].get(n, {"audit_passed": True})["audit_passed"]
                                             for label in labels)]
        cols = " | ".join(f"{label}: report | {label}: audit" for label in labels)
        lines += [f"### {title}", "", f"| {'case' if every else 'data set'} | {cols} |",
                  "|---|" + "---|---|" * len(labels)]
        for name in names:
            cells = " | ".join(f"{_verdict(by_label[label].get(name))} | {_audit_cell(by_label[label].get(name))}"
                               for label in labels)
            lines.append(f"| {name} | {cells} |")
        lines.append("")
    return lines


def splice(text: str, section: list[str], before: str = "## Diagnosis precision") -> str:
    """``text`` with the section whose heading is ``section[0]`` replaced by ``section`` (up to
    the next ``## `` heading), or inserted before the heading that starts with ``before``."""
    lines = text.splitlines()
    heading = section[0].split(" (")[0]
    start = next((i for i, line in enumerate(lines) if line.startswith(heading)), None)
    if start is None:
        start = end = next((i for i, line in enumerate(lines) if line.startswith(before)), len(lines))
    else:
        end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    body = section + ([""] if section[-1] != "" else [])
    return "\n".join(lines[:start] + body + lines[end:]) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--label", choices=LABELS, help="record a run under this label")
    ap.add_argument("--quality", help="quality.py --json output (or run_all.py --json)")
    ap.add_argument("--sweep", help="sweep.py --mode full --json output (or a --reaudit of it)")
    ap.add_argument("--copilot-src", default=str(HERE.parent), help="the source tree whose co-pilot ran")
    ap.add_argument("--out", default=None, help="default: benchmarks/results/audit-<label>.json")
    ap.add_argument("--docs", help="write the before → after section into this generated report (e.g. "
                    "docs/benchmarks.md) in place, without rerunning the rest of make bench")
    args = ap.parse_args(argv)
    if args.label:
        if not (args.quality and args.sweep):
            ap.error("--label needs --quality and --sweep")
        quality = json.loads(Path(args.quality).read_text())
        if isinstance(quality, dict):  # run_all.py --json: the suite is one part of it
            quality = quality["quality"]
        rec = record(args.label, quality, json.loads(Path(args.sweep).read_text()), Path(args.copilot_src))
        out = Path(args.out or RESULTS / f"audit-{args.label}.json")
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(rec, indent=1, default=str) + "\n")
        print(f"{args.label} ({rec['commit']}): quality {counts(rec['quality'])}; sweep {counts(rec['sweep'])}")
    if args.docs:
        docs = Path(args.docs)
        docs.write_text(splice(docs.read_text(), section(load_records())))
        print(f"wrote the before → after section into {docs}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
