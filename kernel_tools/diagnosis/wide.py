"""Wide tables within the diagnosis's time budget: a sample of the columns, a deadline, and a
finding that says what was not checked.

A table of 20,000 columns kept the diagnosis running for minutes past its two-minute budget
(per-column profiles and entity statistics grow with the columns, pairwise checks with their
square). Above :data:`MAX_COLUMNS` the detectors see the columns the task names and a random
sample of the others; once the deadline passes, the detectors not yet run are skipped (see
:class:`~kernel_tools.diagnosis.registry.Detectors`). Either way the diagnosis ends with a
``diagnosis_incomplete`` finding naming what was not checked: a model on columns nobody looked
at cannot be called valid.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from kernel_tools.findings import Finding

MAX_COLUMNS = 2000  # diagnosed in well under the default 2-minute budget on a 2-core machine
BUDGET_SHARE = 0.8  # of the budget given to the detectors; the rest assembles the result


def sample_columns(df: pd.DataFrame, max_columns: int | None, named: tuple[str | None, ...],
                   random_state: int = 0) -> tuple[pd.DataFrame, list[str]]:
    """(``df`` with at most ``max_columns`` columns: those ``named`` and a random sample of the
    rest, in their order; the columns left out)."""
    if max_columns is None or df.shape[1] <= max_columns:
        return df, []
    names = [str(c) for c in df.columns]
    kept = {n for n in named if n in names}
    others = [i for i, n in enumerate(names) if n not in kept]
    rng = np.random.default_rng(random_state)
    chosen = set(rng.choice(others, size=max(max_columns - len(kept), 0), replace=False).tolist())
    mask = [n in kept or i in chosen for i, n in enumerate(names)]
    return df.loc[:, mask], [n for n, m in zip(names, mask) if not m]


def _few(names: list[str], n: int = 5) -> str:
    return ", ".join(repr(c) for c in names[:n]) + (f" and {len(names) - n:,} more" if len(names) > n else "")


def incomplete(columns: int, unchecked: list[str], skipped: list[str], budget: float | None,
               unreached: dict[str, list[str]] | None = None) -> Finding | None:
    """The finding that says what this diagnosis did not check (None when it checked everything):
    columns left out of a wide table, checks not started, and per check the columns it had not
    reached when the time budget ran out (``unreached``)."""
    unreached = {name: cols for name, cols in (unreached or {}).items() if cols}
    if not unchecked and not skipped and not unreached:
        return None
    parts = []
    if unchecked:
        parts.append(f"the table has {columns:,} columns and only {columns - len(unchecked):,} were checked (those "
                     f"the task names and a random sample): {len(unchecked):,} were not ({_few(unchecked)})")
    if skipped:
        parts.append(f"its time budget of {budget:g} s ran out before {len(skipped):,} checks ran ({_few(skipped)})")
    if unreached:
        parts.append(f"{'then' if skipped else f'its time budget of {budget:g} s ran out'} while "
                     + "; ".join(f"the {name} check had not reached {len(cols):,} columns ({_few(cols, 3)})"
                                 for name, cols in unreached.items()))
    summary = ("The diagnosis is incomplete: " + "; ".join(parts) + ". No model on these columns can be called "
               "valid until they are checked: select the columns that matter (df[[...]]) or give the diagnosis "
               "more time (--budget diagnose=SECONDS).")
    evidence = {"detector": "wide table", "columns": columns, "not_checked_columns": unchecked[:50],
                "not_checked_count": len(unchecked), "checks_not_run": skipped[:50],
                "checks_not_run_count": len(skipped), "budget_s": budget,
                "columns_not_reached": {name: cols[:50] for name, cols in unreached.items()},
                "columns_not_reached_count": {name: len(cols) for name, cols in unreached.items()}}
    return Finding("diagnosis_incomplete", [], "critical", summary, evidence)


__all__ = ["BUDGET_SHARE", "MAX_COLUMNS", "incomplete", "sample_columns"]
