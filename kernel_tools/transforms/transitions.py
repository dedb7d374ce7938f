"""Multi-state rows (one per possible transition of each subject: mstate's long layout) turned
into one row per subject for a survival model of the time spent in the starting state.

In the long layout a subject in a state has a row for every state it could move to, all with the
same (start, stop], the status 1 on the one it moved to. A survival model cannot take those rows
as they are (each would count from 0, a subject would count once per possible transition). Two
readings are one row per subject, from the rows that leave the starting state: the **first
transition**, whichever it is (``into=None``: the event is any transition, the time the time in
the starting state), or **one transition** (``into=<state>``: the event is moving into that
state; moving into another one censors the subject then). Columns that describe the transitions
(``from``, ``to``, the transition number, the start, durations computed from them) are left out;
every other column is taken from the subject's first row (its values at the start).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ._base import FrameTransformer, check_columns, check_frame
from .report import StepReport


class FirstTransition(FrameTransformer):
    """One row per ``id`` from its rows leaving ``initial`` (see the module)."""

    def __init__(
        self,
        id: str = "",
        start: str = "",
        stop: str = "",
        state_from: str = "",
        state_to: str = "",
        event: str = "",
        initial: Any = 1,
        into: Any = None,
        drop: list | None = None,
    ) -> None:
        self.id = id
        self.start = start
        self.stop = stop
        self.state_from = state_from
        self.state_to = state_to
        self.event = event
        self.initial = initial
        self.into = into
        self.drop = drop

    def _needed(self) -> list[str]:
        return [self.id, self.start, self.stop, self.state_from, self.state_to, self.event]

    def fit(self, X: pd.DataFrame, y: Any = None) -> FirstTransition:
        X = self._remember_input(X)
        check_columns(X, self._needed())
        leaving = X[self.state_from].astype(str) == str(self.initial)
        if not leaving.any():
            raise ValueError(
                f"no row of {self.state_from!r} is the starting state {self.initial!r}: "
                f"its states are {sorted(X[self.state_from].astype(str).unique())[:10]}"
            )
        gone = {self.start, self.state_from, self.state_to, *(self.drop or [])}
        self.feature_names_out_ = [c for c in X.columns if c not in gone]
        return self

    def transform(self, X: pd.DataFrame) -> pd.DataFrame:
        X = self._check_transform_input(X, self._needed())
        rows = X[X[self.state_from].astype(str) == str(self.initial)]
        status = pd.to_numeric(rows[self.event], errors="coerce").fillna(0) > 0
        if self.into is not None:
            status &= rows[self.state_to].astype(str) == str(self.into)
        time = pd.to_numeric(rows[self.stop], errors="coerce") - pd.to_numeric(rows[self.start], errors="coerce")
        keys = rows[self.id]
        out = rows.groupby(keys, sort=False).head(1).set_index(self.id, drop=False)
        out[self.stop] = time.groupby(keys.to_numpy(), sort=False).max().reindex(out.index).to_numpy()
        out[self.event] = (
            status.groupby(keys.to_numpy(), sort=False).any().reindex(out.index).astype(np.int64).to_numpy()
        )
        return out[[c for c in self.feature_names_out_ if c in out.columns]].reset_index(drop=True)


def first_transition(
    df: pd.DataFrame,
    id: str,
    start: str,
    stop: str,
    state_from: str,
    state_to: str,
    event: str,
    initial: Any = 1,
    into: Any = None,
    drop: list | None = None,
) -> tuple[pd.DataFrame, StepReport]:
    """One row per ``id`` from multi-state rows: the time in the starting state ``initial`` (in
    ``stop``) and whether it ended by a transition (``event``: any, or into the state ``into``)."""
    check_frame(df)
    step = FirstTransition(
        id=id,
        start=start,
        stop=stop,
        state_from=state_from,
        state_to=state_to,
        event=event,
        initial=initial,
        into=into,
        drop=list(drop or []),
    ).fit(df)
    out = step.transform(df)
    what = "any transition" if into is None else f"the transition into {into!r}"
    said = (
        f"one row per '{id}' ({len(out)} of {len(df)} rows): the time in state {initial!r} until {what} "
        f"('{stop}', counted from '{start}') and '{event}' = 1 when it happened; "
        f"{', '.join(repr(c) for c in df.columns if c not in step.feature_names_out_)} left out"
    )
    report = StepReport.between(
        "first_transition",
        df,
        out,
        transformer=step,
        details={
            "id": id,
            "initial": initial,
            "into": into,
            "said": said,
            "subjects": int(len(out)),
            "events": int(out[event].sum()),
            "left_out": [c for c in df.columns if c not in step.feature_names_out_],
        },
    )
    return out, report


__all__ = ["FirstTransition", "first_transition"]
