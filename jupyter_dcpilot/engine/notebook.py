"""Markdown and code the co-pilot writes into notebooks (decision notes, load cell, report)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import kernel_tools
from jupyter_dcpilot.csv_format import sniff
from kernel_tools.dictionary import LABELLED
from kernel_tools.workbooks import EXCEL, R_FILES, choose_table, split_table

from .session import Decision, Session, Step

# The first cell the co-pilot writes says how to get what the notebook needs to re-run
# without the co-pilot: the kernel_tools distribution of the version that wrote it.
INSTALL_COMMENT = (f'# to re-run this notebook: pip install "dcpilot-kernel-tools=={kernel_tools.__version__}"'
                   " (add [hyperimpute] for its imputers)")
IMPORTS = [INSTALL_COMMENT, "import kernel_tools as kt", "import pandas as pd"]


def md_text(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def load_cell(paths: list[str], names: list[str], engine: str = "pandas", dictionary: str | None = None,
              events: str | None = None) -> str:
    """The first cell of a headless notebook: imports and the data, by absolute path.

    ``engine="dask"``: lazy Dask frames (a file, or a folder of Parquet / CSV files) on the
    kernel's ``distributed`` cluster, a new LocalCluster unless it has one. ``dictionary``: the
    study's codebook (``events``: REDCap's event mapping), read into ``<name>_codebook`` beside the
    data it describes (a Stata / SPSS / SAS file's labels are read with it anyway)."""
    if engine == "dask":
        return _dask_load_cell(paths, names)
    lines = ["# load the data (the co-pilot's starting point)", *IMPORTS, ""]
    for path, name in zip(paths, names):
        file, table = split_table(path)
        if file.suffix.lower() in R_FILES + EXCEL:
            lines += [f"# {file.name}: R's and Excel's files need the [files] extra "
                      "(pip install 'dcpilot-kernel-tools[files]')",
                      _workbook_line(file.resolve(), choose_table(file, table), name)]
            continue
        absolute = str(Path(path).resolve())
        if Path(absolute).suffix.lower() in LABELLED:  # Stata / SPSS / SAS: the file's own codebook too
            lines.append(f"{name}, {name}_codebook = kt.read_file({absolute!r})  # value labels as categories")
            continue
        parquet = absolute.endswith((".parquet", ".pq")) or Path(absolute).is_dir()  # a folder: of Parquet files
        form = None if parquet else sniff(absolute)
        how = "" if form is None else form.call_args()  # sep=";", decimal="," as written
        lines += [f"# {note}" for note in (form.notes() if form is not None else [])]  # nothing changed silently
        then = "" if form is None else form.then()  # .dropna(how='all') of a spreadsheet's empty lines
        lines.append(f"{name} = pd.{'read_parquet' if parquet else 'read_csv'}({absolute!r}{how}){then}")
    if dictionary is not None and Path(dictionary).resolve() not in {Path(p).resolve() for p in paths}:
        mapping = f", events={str(Path(events).resolve())!r}" if events else ""
        lines += ["# the study's codebook: the co-pilot's diagnosis weighed what it says of each column "
                  f"(kt.diagnose({names[0]}, dictionary={names[0]}_codebook))",
                  f"{names[0]}_codebook = kt.read_dictionary({str(Path(dictionary).resolve())!r}{mapping})"]
    lines.append(f"{names[0]}.shape")
    return "\n".join(lines)


def _workbook_line(file: Path, table: str, name: str) -> str:
    """The line that reads one table of an R file (its factors as categoricals) or a workbook's sheet."""
    if file.suffix.lower() in EXCEL:
        return f"{name} = pd.read_excel({str(file)!r}, sheet_name={table!r})"
    which = f", table={table!r}" if file.suffix.lower() != ".rds" else ""
    return f"{name}, _ = kt.read_file({str(file)!r}{which})  # R's factors as categories, ordered ones ordered"


def _dask_load_cell(paths: list[str], names: list[str]) -> str:
    lines = ["# the data as lazy Dask frames: partitions are read when a result needs them",
             f'# to re-run this notebook: pip install "dcpilot-kernel-tools[dask]=={kernel_tools.__version__}"',
             "import kernel_tools as kt",
             "import pandas as pd", "import dask.dataframe as dd", "",
             "client = kt.dask_client()  # the cluster this kernel uses, else a LocalCluster on this machine"]
    for path, name in zip(paths, names):
        source = Path(path).resolve()
        csv = source.suffix.lower() == ".csv" or (source.is_dir() and not any(source.glob("*.parquet"))
                                                 and any(source.glob("*.csv")))
        where = str(source / "*.csv") if csv and source.is_dir() else str(source)
        how = sniff(min(source.glob("*.csv")) if source.is_dir() else source).call_args(lazy=True) if csv else ""
        lines.append(f"{name} = dd.{'read_csv' if csv else 'read_parquet'}({where!r}{how})")
    lines.append(f"{names[0]}.npartitions, list({names[0]}.columns)[:8]")
    return "\n".join(lines)


def decision_markdown(decision: Decision, step: Step) -> str:
    """A decision as the notebook shows it: gate, evidence, options, choice, who decided."""
    lines = [f"### Decision ({decision.gate}) — {step.title}", "", md_text(decision.question), ""]
    if decision.evidence_lines:  # in words, as the card says it
        lines += ["*Evidence:*", *[f"- {md_text(line)}" for line in decision.evidence_lines], ""]
    lines += ["| option | what it does | risk |", "|---|---|---|"]
    for o in decision.options:  # named by its label (the choice's id after it): "Keep as is: Keep it" said it twice
        name = f"**{md_text(o.label or o.id)}** (`{o.id}`" + (", recommended)" if o.id == decision.recommended else ")")
        lines.append(f"| {name} | {md_text(o.description)} | {md_text(o.risk)} |")
    lines += ["", f"**Choice: `{decision.choice}`**, decided by {decision.decided_by} at {decision.at}"
              + (f" — {decision.rationale}" if decision.rationale else "")]
    return "\n".join(lines)


def backtrack_markdown(step: Step, reason: str) -> str:
    return (f"### Backtracked — {step.title}\n\nThe co-pilot restored the checkpoint taken before "
            f"this step and re-planned: {md_text(reason)}")


def report_markdown(session: Session, model: dict[str, Any] | None, checks: list[Any],
                    warnings: list[str]) -> str:
    """The closing summary cell: task, steps, model, and the verdict as its list of checks."""
    task = session.task
    index = task.index_label
    lines = ["## Summary", "",
             f"*Task:* {task.kind} — target `{task.target}`"
             + (f", duration `{task.time}`" if task.time else "")
             + (f", entity `{task.id}`" if task.id else "")
             + (f"; predictions at {md_text(index)}" if index else ""), ""]
    lines += ["| step | status | decision |", "|---|---|---|"]
    for s in session.plan:
        d = next((x for x in session.decisions if x.id == s.decision_id), None)
        choice = f"{d.choice} ({d.by})" if d is not None and d.decided else ""
        lines.append(f"| {md_text(s.title)} | {s.status} | {choice} |")
    lines += plan_edits_markdown(session)
    if model:
        lines += ["", f"*Model:* {model.get('model_name')} — {score_text(model)}"]
    lines += ["", validity_markdown(checks)]
    if warnings:
        lines += ["", "*Warnings:*", *[f"- {md_text(w)}" for w in warnings[:20]]]
    return "\n".join(lines)


def plan_edits_markdown(session: Session) -> list[str]:
    """The expert's edits of the plan, as lines of a Markdown list (none: no lines)."""
    if not session.plan_edits:
        return []
    return ["", "*Plan edits (by the user):*",
            *[f"- {md_text(e.text)} ({e.via}, {e.at})" + (f" — **no longer applies**: {md_text(e.lapsed)}"
                                                          if e.lapsed else "") for e in session.plan_edits]]


def validity_markdown(checks: list[Any]) -> str:
    """The verdict and its checks as a Markdown checklist (``Check`` objects or their dicts)."""
    rows = [c if isinstance(c, dict) else c.to_dict() for c in checks]
    valid = bool(rows) and all(r["passed"] for r in rows)
    lines = [f"*Valid model:* {'yes' if valid else 'no'}" + ("" if valid else
             f" — {sum(not r['passed'] for r in rows)} of {len(rows)} checks failed"), ""]
    lines += [f"- {'✅' if r['passed'] else '❌'} **{r['check']}**: {md_text(r['detail'])}" for r in rows]
    return "\n".join(lines)


def score_text(model: dict[str, Any]) -> str:
    """'c_index: cv 0.811 ± 0.030, holdout 0.755 [0.70–0.81]' — every score with its spread (the
    cross-validated one's interval when it has one: '[95% interval 0.75–0.87] over 5 × 5 folds')."""
    ci, sd, cv_ci = model.get("holdout_ci"), model.get("cv_sd"), model.get("cv_interval")
    repeats = model.get("cv_repeats") or 1
    if cv_ci and None not in cv_ci:
        spread = f" [95% interval {num_text(cv_ci[0])}–{num_text(cv_ci[1])}]" + (
            f" over {repeats} partitions" if repeats > 1 else "")
    else:
        spread = f" ± {num_text(sd)}" if isinstance(sd, (int, float)) else ""
    return (f"{model.get('metric')}: cv {num_text(model.get('cv_score'))}{spread}"
            + f", holdout {num_text(model.get('holdout_score'))}"
            + (f" [95% interval {num_text(ci[0])}–{num_text(ci[1])}]" if ci and None not in ci else ""))


def num_text(value: Any) -> str:
    return f"{value:.3f}" if isinstance(value, (int, float)) else "n/a"
