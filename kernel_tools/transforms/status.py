"""A status of several codes recoded to the 0/1 event every survival model reads.

Registries code a status as 'alive / died of the disease / died of other causes' in any order
(1/2/3 with 2 alive). Survival readers (lifelines, scikit-survival) take 0 as censored and any
other value as the event, so a censoring code that is not 0 would be read as an event. The
recode says which code is censored; every other code is the event ("any event": follow-up
ends at the first event, whichever it is). The column is replaced in place: it is the target,
never a feature, and the original codes are the checkpoint's (an undo restores them).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ._base import FrameTransformer, check_columns, check_frame
from .report import StepReport


class StatusRecoder(FrameTransformer):
    """``column``: ``censored`` -> 0, ``events`` (every other code when None) -> 1, missing kept;
    fitted so a test file's status is recoded the same way."""

    def __init__(self, column: str = "", censored: float = 0, events: list[float] | None = None) -> None:
        self.column = column
        self.censored = censored
        self.events = events

    def fit(self, X: pd.DataFrame, y: Any = None) -> StatusRecoder:
        X = self._remember_input(X)
        check_columns(X, [self.column])
        codes = _codes(X[self.column])
        if float(self.censored) not in codes:
            raise ValueError(f"{self.column!r} has no rows coded {self.censored:g} (its codes are "
                             f"{', '.join(f'{c:g}' for c in sorted(codes))}): say which code is censored")
        self.events_ = (sorted(c for c in codes if c != float(self.censored)) if self.events is None
                        else sorted(float(e) for e in self.events))
        self.feature_names_out_ = list(X.columns)
        return self

    def transform(self, X: pd.DataFrame) -> pd.DataFrame:
        X = self._check_transform_input(X, [self.column])
        values = pd.to_numeric(X[self.column], errors="coerce")
        unread = sorted(set(_codes(X[self.column])) - {float(self.censored), *self.events_})
        if unread:
            raise ValueError(f"{self.column!r} has codes that are neither censored ({self.censored:g}) nor an "
                             f"event ({', '.join(f'{c:g}' for c in self.events_)}): {unread[:5]}")
        event = np.where(values.isna(), np.nan, (values != float(self.censored)).astype(float))
        recoded = pd.Series(event, index=X.index, name=self.column)
        if not recoded.isna().any():
            recoded = recoded.astype(np.int64)
        return X.assign(**{self.column: recoded})


def _codes(s: pd.Series) -> set[float]:
    values = pd.to_numeric(s, errors="coerce")
    if (values.isna() & s.notna()).any():
        raise ValueError(f"{s.name!r} holds values that are not numeric codes: {list(s[values.isna() & s.notna()][:3])}")
    return {float(v) for v in values.dropna().unique()}


def recode_status(df: pd.DataFrame, column: str, censored: float = 0,
                  events: list[float] | None = None) -> tuple[pd.DataFrame, StepReport]:
    """Recode the status ``column`` to 0 = censored (the code ``censored``), 1 = an event (the
    codes ``events``; every other code when None), for a survival model."""
    check_frame(df)
    recoder = StatusRecoder(column=column, censored=censored, events=events).fit(df)
    out = recoder.transform(df)
    before = pd.to_numeric(df[column], errors="coerce").value_counts().sort_index()
    events_ = ", ".join(f"{c:g}" for c in recoder.events_)
    said = f"'{column}' recoded: {censored:g} -> 0 (censored), {events_} -> 1 (any event)"
    report = StepReport.between("recode_status", df, out, transformer=recoder, details={
        "column": column, "censored": float(censored), "events": recoder.events_, "said": said,
        "rows_per_code": {f"{c:g}": int(n) for c, n in before.items()},
        "events_after": int((out[column] == 1).sum()), "censored_after": int((out[column] == 0).sum())})
    return out, report


__all__ = ["StatusRecoder", "recode_status"]
