"""Dose rows of a long cohort turned into features of each measurement row.

A pharmacokinetic cohort (subject, time, dose, concentration) keeps two kinds of row: a dose given
and a concentration measured. On the dose rows the measured target is missing, so a model that
drops rows with a missing target drops the doses with them, and with them what drives the
concentration. The step a pharmacometrician expects: each measurement row gets the entity's dose
history up to its own time (the total given so far, the last dose, the time since it, how many),
computed only from dose rows at or before that time, and the dose rows then go. A rule, replayed
unchanged on new rows: a row holding a dose is a dose record.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ._base import FrameTransformer, check_columns, check_frame
from .report import StepReport


class DoseHistory(FrameTransformer):
    """Each row's dose history from the rows of its entity that hold a dose (at or before its time);
    the dose rows removed."""

    def __init__(self, id: str = "id", time: str = "time", dose: str = "dose") -> None:
        self.id = id
        self.time = time
        self.dose = dose

    def fit(self, X: pd.DataFrame, y: object = None) -> DoseHistory:
        self._remember_input(X)
        return self

    def transform(self, X: pd.DataFrame) -> pd.DataFrame:
        X = self._check_transform_input(X, [self.id, self.time, self.dose])
        return dose_features(X, self.id, self.time, self.dose)


def dose_features(df: pd.DataFrame, id: str, time: str, dose: str) -> pd.DataFrame:
    """The rows without a dose, each with its entity's ``{dose}_so_far``, ``{dose}_last``,
    ``time_since_last_{dose}`` (in ``time``'s unit) and ``{dose}_count`` over the dose rows at or
    before its time; the dose column goes with the dose rows (it is empty on the others)."""
    given = pd.to_numeric(df[dose], errors="coerce")
    is_dose = given.notna().to_numpy()
    t = pd.to_numeric(df[time], errors="coerce")
    # at one time the dose comes first: a sample drawn at the dose's time is taken after it is given
    order = pd.DataFrame({"id": df[id].to_numpy(), "t": t.to_numpy(), "measured": ~is_dose,
                          "pos": np.arange(len(df))}).sort_values(["id", "t", "measured", "pos"], kind="stable")
    amount = given.to_numpy()[order["pos"]]
    groups = order["id"].to_numpy()
    frame = pd.DataFrame({"g": groups, "amount": np.where(np.isnan(amount), 0.0, amount),
                          "count": (~np.isnan(amount)).astype(int),
                          "last": amount, "at": np.where(np.isnan(amount), np.nan, order["t"].to_numpy())})
    by = frame.groupby("g", sort=False)
    history = pd.DataFrame({
        f"{dose}_so_far": by["amount"].cumsum().to_numpy(),
        f"{dose}_last": by["last"].ffill().to_numpy(),
        f"time_since_last_{dose}": order["t"].to_numpy() - by["at"].ffill().to_numpy(),
        f"{dose}_count": by["count"].cumsum().to_numpy(),
    }, index=df.index[order["pos"].to_numpy()])
    out = df.drop(columns=[dose]).join(history.reindex(df.index))
    return out.loc[~is_dose]


def dose_history(df: pd.DataFrame, id: str, time: str, dose: str) -> tuple[pd.DataFrame, StepReport]:
    """Turn the dose rows of a long cohort into features of each measurement row (see the module
    docstring): ``id`` the entity, ``time`` each row's time, ``dose`` the column holding a dose on
    the dose rows only. Nothing after a row's own time reaches it."""
    check_frame(df)
    check_columns(df, [id, time, dose])
    history = DoseHistory(id, time, dose).fit(df)
    out = history.transform(df)
    doses = int(len(df) - len(out))
    details = {"id": id, "time": time, "dose": dose, "dose_rows": doses, "rows_kept": int(len(out)),
               "added": [c for c in out.columns if c not in df.columns]}
    return out, StepReport.between("dose_history", df, out, details=details, transformer=history)
