"""The survival setup: censoring, impossible durations and competing events.

A survival model needs a duration and an event indicator; the C-index, not accuracy, rates it.
Treating censored rows as 'no event' (plain classification) is the classic invalid shortcut.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from kernel_tools.diagnosis.event_codes import code_text
from kernel_tools.diagnosis.options import call, keep
from kernel_tools.diagnosis.registry import Context, KindData, detector
from kernel_tools.findings import Finding, Option
from kernel_tools.vocabulary import Basis, FindingKind, TaskKind

MAX_LEFT_OUT = 500  # rows with a follow-up time of 0 or less that the survival setup offers to leave out


def find_survival_setup(df: pd.DataFrame, outcome) -> Finding | None:
    if outcome.kind != TaskKind.SURVIVAL:
        return None
    dur = outcome.duration
    event = outcome.y[outcome.valid]
    d = dur[np.isfinite(dur)]
    n_neg, n_zero = int((d < 0).sum()), int((d == 0).sum())
    raw = df[outcome.target].dropna()
    codes = pd.unique(raw)
    numeric = pd.to_numeric(pd.Series(codes), errors="coerce")
    competing = len(codes) > 2 and numeric.notna().all()
    censoring = float(1 - event.mean()) if event.size else float("nan")
    evidence = {
        "duration": outcome.time, "event": outcome.target, "rows": int(len(df)),
        "events": int(event.sum()), "censored": int((event == 0).sum()),
        "censoring_share": round(censoring, 4),
        "negative_durations": n_neg, "zero_durations": n_zero,
        "missing_durations": int((~np.isfinite(dur)).sum()),
        "median_duration": float(np.median(d)) if d.size else None,
        "event_codes": sorted(map(str, codes))[:10],
        "competing_events": bool(competing),
    }
    problems = []
    # a negative time cannot be a follow-up, nor can a table whose times are all 0; a few zeros
    # next to positive times are an event or a censoring on the first day, as real cohorts have
    impossible = n_neg > 0 or (d.size > 0 and not (d > 0).any())
    if impossible:
        problems.append(f"{n_neg + n_zero} of {d.size} durations are not positive ({n_neg} negative, {n_zero} "
                        "zero): fix or remove those rows, a survival model on them is not valid")
    elif n_zero:
        problems.append(f"{n_zero} of {d.size} durations are 0 (an event or censoring at the start): kept")
    if competing:
        problems.append(f"the event column has {len(codes)} codes (competing events?)")
    if censoring >= 0.9:
        problems.append(f"{censoring:.0%} of rows are censored")
    summary = (f"Survival data: '{outcome.time}' is the follow-up time and '{outcome.target}' the event "
               f"({evidence['events']} events, {censoring:.0%} censored)"
               + ("; " + "; ".join(problems) if problems else "")
               + ": model time-to-event and rate it with the C-index, not accuracy.")
    coding = outcome.coding
    # rows named one by one in a readable cell: beyond a few hundred the time is another quantity
    options = _leave_out(df, outcome, n_neg + n_zero) if impossible and n_neg + n_zero <= MAX_LEFT_OUT else []
    if coding is not None:  # a status of several codes: recoded to the 0/1 event the models read
        censored = code_text(coding.censored)
        evidence["censored_code"] = censored
        events_ = ", ".join(code_text(c) for c in coding.events)
        options += [Option("recode", f"Survival model, '{outcome.target}' recoded to 0/1",
                          f"Recode '{outcome.target}': {censored} -> 0 (censored), {events_} -> 1 (any "
                          "event); then model time-to-event and rate it with the C-index.",
                          "wrong if another code means censored (the task card asks)", not options,
                          call("recode_status", column=outcome.target,
                               censored=censored if isinstance(coding.censored, str) else int(coding.censored)))]
    else:
        options += [keep(f"Model it as survival: time='{outcome.time}', event='{outcome.target}' "
                         "(censored rows are kept, not treated as 'no event')"
                         + (": the time is measured another way, the rows stay." if options else "."),
                         "a survival model on times that are not positive is not valid" if options
                         else "none: this is the valid framing", recommended=not options,
                         label="The time is measured another way: keep the rows" if options else "Survival model")]
    if competing:
        options.append(Option("censor_competing", "Treat other event codes as censored",
                              "Keep one event of interest; the other codes count as censoring.",
                              "biased if the competing event prevents the event of interest", False, None))
    options.append(Option("classification_at_horizon", "Classify at a fixed horizon",
                          "Predict 'event before time t' and drop rows censored before t.",
                          "throws away censored rows and depends on the chosen horizon", False, None))
    evidence["impossible_durations"] = bool(impossible)
    severity = "critical" if impossible else "warning" if problems else "info"
    return Finding("survival_setup", [outcome.time, outcome.target], severity, summary, evidence, options, None)


def _leave_out(df: pd.DataFrame, outcome, bad: int) -> list[Option]:
    """Rows whose follow-up time is not positive left out (recommended): a survival model cannot
    read them, and the rest stay valid; which rows go is said by their labels, as decided."""
    dur = np.asarray(outcome.duration, dtype=float)
    rows = df.index[np.isfinite(dur) & (dur <= 0)]
    which, has = ("the row", "has") if bad == 1 else (f"the {bad} rows", "have")
    return [Option("leave_out_durations", f"Leave out {which} whose '{outcome.time}' is 0 or less",
                   f"{bad} of {len(df)} rows {has} a follow-up time '{outcome.time}' of 0 or less (a data-entry "
                   "slip, or dates in the wrong order): leave them out, then model time-to-event on the rest.",
                   "biased if those rows differ from the others (check why their time is not positive)", True,
                   call("drop_rows", index=[r.item() if isinstance(r, np.generic) else r for r in rows],
                        reason=f"'{outcome.time}' is 0 or less: not a follow-up time"))]


@detector("survival setup", order=30, needs_target=True,
          finds={FindingKind.SURVIVAL_SETUP: KindData(chart=None, basis=Basis.SAMPLE)})
def find_survival_setup_in(ctx: Context) -> list[Finding]:
    found = find_survival_setup(ctx.df, ctx.outcome)
    return [found] if found is not None else []
