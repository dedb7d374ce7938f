"""Rows without an entity id: dropped, or each its own entity.

Rows that share an id are one subject's records and are kept together (grouped splits and
folds) or merged (one row per entity). A row without an id belongs to no known subject, and
what it is can only be said by whoever knows the data: a record whose subject was not written
down (drop it: it cannot be kept with its subject's other records), or a subject outside any
group (a control outside the matched sets: its own entity). ``missing_ids`` says which.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ._base import check_choice

MISSING_IDS = ("drop", "own")


def own_ids(ids: pd.Series) -> pd.Series:
    """``ids`` with each missing id replaced by one no other row has: below the smallest id
    for numbers, ``"no id: row <label>"`` for text (said in the data, so a reader sees it)."""
    missing = ids.isna()
    if not missing.any():
        return ids
    if pd.api.types.is_numeric_dtype(ids):
        present = ids[~missing].astype(float)
        start = float(np.floor(present.min())) - 1 if len(present) else -1.0
        fill = pd.Series(start - np.arange(int(missing.sum())), index=ids.index[missing])
        return ids.astype(float).where(~missing, fill)
    fill = pd.Series([f"no id: row {label}" for label in ids.index[missing]], index=ids.index[missing])
    return ids.astype(object).where(~missing, fill)


def with_ids(df: pd.DataFrame, id: str, missing_ids: str) -> tuple[pd.DataFrame, int]:
    """(``df`` with no row lacking an ``id``, how many lacked one): those rows dropped
    (``"drop"``) or each given an id of its own (``"own"``); ``df`` itself when none lacks one."""
    check_choice(missing_ids, "missing_ids", MISSING_IDS)
    missing = df[id].isna()
    n = int(missing.sum())
    if not n:
        return df, 0
    if missing_ids == "drop":
        return df.loc[~missing.to_numpy()], n
    return df.assign(**{id: own_ids(df[id])}), n


def said(id: str, missing_ids: str, n: int) -> str:
    """What was done with the ``n`` rows without an ``id``, in words."""
    rows = f"{n} row{'s' if n != 1 else ''} without an id in '{id}'"
    return f"{rows} dropped" if missing_ids == "drop" else f"{rows} each taken as an entity of its own"
