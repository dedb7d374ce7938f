"""Dose (or other event) rows of a long cohort, where the measured target is missing by design.

A pharmacokinetic table keeps a subject's doses and its measured concentrations as rows of one
long table (subject, time, dose, concentration): a dose row holds the dose and no concentration,
a measurement row the reverse. Rows with a missing target are left out of a model, so the doses
would go without a word, and with them what drives every later measurement. The data tell them
apart: a numeric column filled on (nearly) exactly the rows where the target is missing. The step
a pharmacometrician expects turns them into each measurement's dose history
(:func:`kernel_tools.transforms.doses.dose_history`), asked.
"""

from __future__ import annotations

import re

import numpy as np

from kernel_tools.diagnosis.options import call, keep
from kernel_tools.diagnosis.registry import Context, KindData, detector
from kernel_tools.findings import Finding, Option
from kernel_tools.plurals import counted
from kernel_tools.vocabulary import Basis, TaskKind

KIND = "dose_rows"
APART = 0.99  # share of the column's rows without the target, and of the target's rows without the column
MIN_ROWS = 10
DOSE_NAME = re.compile(r"dose|amt|amount|bolus|infus|admin|inject", re.IGNORECASE)


def dose_columns(ctx: Context) -> list[str]:
    """Numeric features filled on (nearly) only the rows whose target is missing, and missing on
    (nearly) every row that holds the target: the records of another kind of row."""
    y_missing = ctx.df[ctx.target].isna().to_numpy()
    out = []
    for c in ctx.features:
        p = ctx.profiles[c]
        if not p.holds_numbers or p.nunique < 2:
            continue
        filled = ctx.df[c].notna().to_numpy()
        if filled.sum() < MIN_ROWS or (~y_missing).sum() < MIN_ROWS:
            continue
        if np.mean(y_missing[filled]) >= APART and np.mean(~filled[~y_missing]) >= APART:
            out.append(c)
    return sorted(out, key=lambda c: DOSE_NAME.search(c) is None)  # one named as a dose first


@detector("dose rows", order=12, needs_target=True, finds={KIND: KindData(chart=None, basis=Basis.WHOLE_DATA)})
def find_dose_rows(ctx: Context) -> list[Finding]:
    """Rows of a long cohort that record a dose, not a measurement (see the module docstring)."""
    entity, time = ctx.entity.id, ctx.entity.visit
    if entity is None or time is None or ctx.outcome.kind == TaskKind.SURVIVAL or ctx.target is None:
        return []
    found = dose_columns(ctx)
    if not found:
        return []
    dose = found[0]
    rows = int(ctx.df[dose].notna().sum())
    what = "dose records" if DOSE_NAME.search(dose) else f"records of '{dose}'"
    summary = (f"{counted(rows, 'row')} {'is' if rows == 1 else 'are'} {what}, not measurements: the target "
               f"'{ctx.target}' is missing on all of them, and '{dose}' on every measurement row. Left as they are, "
               f"they are dropped with the missing target, and what was given before each measurement with them.")
    # the records' time, not a survival time ("time" is the task's follow-up on every card)
    evidence = {"dose": dose, "dose_rows": rows, "id": entity, "record_time": time, "others": found[1:],
                "measurement_rows": int(ctx.df[ctx.target].notna().sum())}
    options = [
        Option("dose_history", "Make them features of each measurement",
               f"Give each measurement row the {dose} so far of its '{entity}', the last {dose}, the time since it "
               f"and the number of doses, from the rows at or before its '{time}' only; then remove the {what}.",
               "none known: nothing after a measurement's own time reaches it", True,
               call("dose_history", id=entity, time=time, dose=dose)),
        keep(f"Leave them: they are dropped with the missing '{ctx.target}' before the model.",
             "the model never sees what was given before a measurement"),
    ]
    return [Finding(KIND, [dose, entity, time], "warning", summary, evidence, options, "row_removal")]
