"""A status of several codes recoded to the 0/1 event every survival model reads.

Registries code a status as 'alive / died of the disease / died of other causes' in any order
(1/2/3 with 2 alive). Survival readers (lifelines, scikit-survival) take 0 as censored and any
other value as the event, so a censoring code that is not 0 would be read as an event. The
recode says which code is censored; every other code is the event ("any event": follow-up
ends at the first event, whichever it is). A status stored as text (R's factors: 'alive'/'dead',
'censored'/'death'/'ltx') is recoded the same way, its censored label named. The column is
replaced in place: it is the target, never a feature, and the original codes are the
checkpoint's (an undo restores them).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ._base import FrameTransformer, check_columns, check_frame
from .report import StepReport

Code = float | str  # a numeric code, or a label of a status stored as text


class StatusRecoder(FrameTransformer):
    """``column``: ``censored`` -> 0, ``events`` (every other code when None) -> 1, missing kept;
    fitted so a test file's status is recoded the same way. A text ``censored`` reads the column's
    values as labels."""

    def __init__(self, column: str = "", censored: Code = 0, events: list[Code] | None = None) -> None:
        self.column = column
        self.censored = censored
        self.events = events

    def fit(self, X: pd.DataFrame, y: Any = None) -> StatusRecoder:
        X = self._remember_input(X)
        check_columns(X, [self.column])
        codes = _codes(X[self.column], self.censored)
        if _as_code(self.censored) not in codes:
            raise ValueError(f"{self.column!r} has no rows coded {_text(self.censored)} (its codes are "
                             f"{', '.join(_text(c) for c in sorted(codes))}): say which code is censored")
        self.events_ = (sorted(c for c in codes if c != _as_code(self.censored)) if self.events is None
                        else sorted(_as_code(e, self.censored) for e in self.events))
        self.feature_names_out_ = list(X.columns)
        return self

    def transform(self, X: pd.DataFrame) -> pd.DataFrame:
        X = self._check_transform_input(X, [self.column])
        values = _values(X[self.column], self.censored)
        unread = sorted(set(_codes(X[self.column], self.censored)) - {_as_code(self.censored), *self.events_})
        if unread:
            raise ValueError(f"{self.column!r} has codes that are neither censored ({_text(self.censored)}) nor an "
                             f"event ({', '.join(_text(c) for c in self.events_)}): {unread[:5]}")
        event = np.where(values.isna(), np.nan, (values != _as_code(self.censored)).astype(float))
        recoded = pd.Series(event, index=X.index, name=self.column)
        if not recoded.isna().any():
            recoded = recoded.astype(np.int64)
        return X.assign(**{self.column: recoded})


def _as_code(value: Code, like: Code = 0) -> Code:
    """``value`` as the column's codes are compared: a label when the censored code is one."""
    return str(value) if isinstance(like, str) or isinstance(value, str) else float(value)


def _text(value: Code) -> str:
    return value if isinstance(value, str) else f"{value:g}"


def _values(s: pd.Series, censored: Code) -> pd.Series:
    """The column's codes: its labels as text when the censored code is a label, else numbers."""
    return s.astype(str).where(s.notna()) if isinstance(censored, str) else pd.to_numeric(s, errors="coerce")


def _codes(s: pd.Series, censored: Code = 0) -> set[Code]:
    if isinstance(censored, str):
        return {str(v) for v in s.dropna().unique()}
    values = pd.to_numeric(s, errors="coerce")
    if (values.isna() & s.notna()).any():
        raise ValueError(f"{s.name!r} holds values that are not numeric codes: {list(s[values.isna() & s.notna()][:3])}")
    return {float(v) for v in values.dropna().unique()}


def recode_status(df: pd.DataFrame, column: str, censored: Code = 0,
                  events: list[Code] | None = None) -> tuple[pd.DataFrame, StepReport]:
    """Recode the status ``column`` to 0 = censored (the code ``censored``: a number, or a label of
    a status stored as text), 1 = an event (the codes ``events``; every other code when None), for
    a survival model."""
    check_frame(df)
    recoder = StatusRecoder(column=column, censored=censored, events=events).fit(df)
    out = recoder.transform(df)
    before = _values(df[column], censored).value_counts().sort_index()
    events_ = ", ".join(_text(c) for c in recoder.events_)
    said = f"'{column}' recoded: {_text(censored)} -> 0 (censored), {events_} -> 1 (any event)"
    report = StepReport.between("recode_status", df, out, transformer=recoder, details={
        "column": column, "censored": _as_code(censored), "events": recoder.events_, "said": said,
        "rows_per_code": {_text(c): int(n) for c, n in before.items()},
        "events_after": int((out[column] == 1).sum()), "censored_after": int((out[column] == 0).sum())})
    return out, report


__all__ = ["StatusRecoder", "recode_status"]
