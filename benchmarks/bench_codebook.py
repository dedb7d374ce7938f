"""Codebooks, measured: reading a large data dictionary, and loading a labelled Stata file.

1. ``kt.read_dictionary`` of a 2,000-field REDCap data dictionary (REDCap's header, choices,
   validation ranges, branching logic), of the same fields as a Table Schema and as a plain CSV
   codebook: median of ``--repeat`` runs each. Goal: < 1 s.
2. A ``.dta`` of ``--rows`` rows × 50 columns (30 doubles, 10 ints, 10 columns with value labels),
   with a variable label on every column: ``kt.read_file`` (frame with labelled categories and
   its Dictionary) against ``pandas.read_stata`` (categoricals too), run alternately in one
   process, median of ``--repeat``. Goal: within 1.2x. ``--pyreadstat`` also times
   ``pyreadstat.read_dta`` once, for reference.

Writes its section of docs/benchmarks.md (between the codebook markers; ``make bench`` keeps it).

    python benchmarks/bench_codebook.py [--rows 1000000] [--repeat 3] [--pyreadstat]
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import kernel_tools as kt  # noqa: E402
from kernel_tools.privacy import forget_private  # noqa: E402

START, END = "<!-- codebook:start -->", "<!-- codebook:end -->"
REAL_START, REAL_END = "<!-- codebook-real:start -->", "<!-- codebook-real:end -->"  # codebook_real.py
HEADER = ["Variable / Field Name", "Form Name", "Section Header", "Field Type", "Field Label",
          "Choices, Calculations, OR Slider Labels", "Field Note", "Text Validation Type OR Show Slider Number",
          "Text Validation Min", "Text Validation Max", "Identifier?", "Branching Logic (Show field only if...)",
          "Required Field?", "Custom Alignment", "Question Number (surveys only)", "Matrix Group Name",
          "Matrix Ranking?", "Field Annotation"]


def dictionaries(folder: Path, fields: int) -> dict[str, Path]:
    """The same ``fields`` fields as a REDCap dictionary, a Table Schema and a plain codebook."""
    rng = np.random.default_rng(0)
    rows = []
    for i in range(fields):
        kind = ("text", "radio", "dropdown", "checkbox", "yesno", "notes")[i % 6]
        choices = " | ".join(f"{k}, Choice {k} of field {i}" for k in range(1, 6)) if kind in (
            "radio", "dropdown", "checkbox") else ""
        validation, low, high = ("number", "0", str(int(rng.integers(50, 500)))) if kind == "text" else ("", "", "")
        when = ("at baseline", "at the 6-month visit", "since enrolment", "prior to admission")[i % 4]
        rows.append([f"field_{i:04d}", f"form_{i // 40:02d}", "", kind, f"Measurement {i} {when} (mg/dL)", choices,
                     "", validation, low, high, "y" if i % 97 == 0 else "", f"[field_{max(i - 1, 0):04d}] = '1'"]
                    + [""] * 6)
    redcap = folder / "redcap_dictionary.csv"
    with open(redcap, "w", newline="", encoding="utf-8-sig") as handle:
        writer = csv.writer(handle)
        writer.writerow(HEADER)
        writer.writerows(rows)
    schema = folder / "schema.json"
    schema.write_text(json.dumps({"fields": [
        {"name": r[0], "type": "number" if r[3] == "text" else "string", "title": r[4],
         **({"constraints": {"minimum": float(r[8]), "maximum": float(r[9])}} if r[8] else {}),
         **({"categories": [{"value": k, "label": f"Choice {k}"} for k in range(1, 6)]} if r[5] else {})}
        for r in rows]}))
    plain = folder / "codebook.csv"
    pd.DataFrame({"variable": [r[0] for r in rows], "description": [r[4] for r in rows],
                  "values": ["; ".join(f"{k}={k}" for k in range(1, 6)) if r[5] else "" for r in rows]}).to_csv(
        plain, index=False)
    return {"REDCap data dictionary": redcap, "Table Schema (JSON)": schema, "plain codebook (CSV)": plain}


def timed(function, repeat: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def stata_file(path: Path, rows: int) -> Path:
    rng = np.random.default_rng(1)
    cols: dict[str, object] = {f"x{i}": rng.normal(size=rows) for i in range(30)}
    cols.update({f"k{i}": rng.integers(0, 500, rows).astype("int32") for i in range(10)})
    levels = ["none", "mild", "moderate", "severe"]
    cols.update({f"c{i}": pd.Categorical.from_codes(rng.integers(0, 4, rows), levels) for i in range(10)})
    frame = pd.DataFrame(cols)
    frame.to_stata(path, write_index=False, variable_labels={c: f"{c} measured at baseline" for c in frame.columns})
    return path


def stata_timings(path: Path, repeat: int, with_pyreadstat: bool) -> dict[str, object]:
    warm = stata_file(path.with_name("warm.dta"), 100)  # imports paid before the clock starts
    pd.read_stata(warm), kt.read_file(warm)
    pandas_s, ours_s = [], []
    for _ in range(repeat):  # alternately, so both see the same load on a shared machine
        start = time.perf_counter()
        theirs = pd.read_stata(path)
        pandas_s.append(time.perf_counter() - start)
        del theirs
        start = time.perf_counter()
        ours, dictionary = kt.read_file(path)
        ours_s.append(time.perf_counter() - start)
    out: dict[str, object] = {
        "pandas_s": statistics.median(pandas_s), "read_file_s": statistics.median(ours_s),
        "pandas_all": pandas_s, "read_file_all": ours_s,
        "categoricals": int(sum(isinstance(t, pd.CategoricalDtype) for t in ours.dtypes)),
        "labelled_fields": sum(1 for f in dictionary if f.label)}
    if with_pyreadstat:
        import pyreadstat

        start = time.perf_counter()
        pyreadstat.read_dta(str(path))
        out["pyreadstat_s"] = time.perf_counter() - start
    return out


def section(reads: dict[str, float], fields: int, stata: dict, rows: int, size_mb: float) -> str:
    load = os.getloadavg()
    lines = [START, "## Codebooks: reading a data dictionary and a labelled Stata file (`benchmarks/bench_codebook.py`)", "",
             f"_Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on {os.cpu_count()} shared cores "
             f"(load average {load[0]:.2f}, {load[1]:.2f}, {load[2]:.2f}), pandas {pd.__version__}, "
             f"{platform.python_implementation()} {platform.python_version()}._", "",
             f"Reading a {fields:,}-field codebook with `kt.read_dictionary` (median of the runs; goal < 1 s):", "",
             "| codebook | seconds |", "|---|---|"]
    lines += [f"| {name} | {seconds:.3f} |" for name, seconds in reads.items()]
    ratio = stata["read_file_s"] / stata["pandas_s"]
    lines += ["", f"Loading a `.dta` of {rows:,} rows × 50 columns ({size_mb:.0f} MB; 10 columns with value labels, "
              "a variable label on every column), side by side in one process, median of "
              f"{len(stata['pandas_all'])} alternating runs (goal: within 1.2× of pandas):", "",
              "| reader | seconds | what it returns |", "|---|---|---|",
              f"| `pandas.read_stata` | {stata['pandas_s']:.2f} | the frame, labelled columns as categoricals |",
              f"| `kt.read_file` | {stata['read_file_s']:.2f} | the frame ({stata['categoricals']} labelled categoricals) "
              f"and its Dictionary ({stata['labelled_fields']} labelled fields) |"]
    if "pyreadstat_s" in stata:
        lines.append(f"| `pyreadstat.read_dta` (reference, one run) | {stata['pyreadstat_s']:.2f} | the frame, codes "
                     "as numbers, and its metadata |")
    lines += ["", f"`kt.read_file` / `pandas.read_stata` = {ratio:.2f} (every run: pandas "
              + ", ".join(f"{t:.2f}" for t in stata["pandas_all"]) + " s; read_file "
              + ", ".join(f"{t:.2f}" for t in stata["read_file_all"]) + " s). Stata files are read by pandas' "
              "own reader with the value labels applied by one table look-up per column; pyreadstat, about ten times "
              "slower on Stata files, reads SPSS and SAS files.", END]
    return "\n".join(lines)


def write_section(out: Path, text: str, start: str = START, end: str = END) -> None:
    """Put ``text`` (a section from ``start`` to ``end``) in ``out``, in place of the last one."""
    old = out.read_text() if out.is_file() else ""
    if start in old and end in old:
        new = old[: old.index(start)] + text + old[old.index(end) + len(end):]
    else:
        new = old.rstrip("\n") + ("\n\n" if old else "") + text + "\n"
    out.write_text(new)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fields", type=int, default=2000)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--pyreadstat", action="store_true", help="also time pyreadstat.read_dta once")
    ap.add_argument("--out", type=Path, default=HERE.parent / "docs" / "benchmarks.md")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        reads = {}
        for name, path in dictionaries(folder, args.fields).items():
            seconds, found = timed(lambda p=path: kt.read_dictionary(p), max(args.repeat, 5))
            assert len(found) == args.fields, (name, len(found))  # type: ignore[arg-type]
            reads[name] = seconds
            print(f"{name}: {seconds:.3f} s")
        path = stata_file(folder / "big.dta", args.rows)
        stata = stata_timings(path, args.repeat, args.pyreadstat)
        forget_private()
        print(json.dumps({k: v for k, v in stata.items()}, default=str))
        text = section(reads, args.fields, stata, args.rows, path.stat().st_size / 1e6)
    print(text)
    if not args.no_write:
        write_section(args.out, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
