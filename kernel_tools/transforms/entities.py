"""One row per entity (patient, customer) from repeated records (visits, transactions)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from kernel_tools.lazy import lazy_aware

from ._base import check_frame
from .aggregation import EntityAggregator
from .entity_ids import said
from .report import StepReport


@lazy_aware()
def aggregate_per_entity(
    df: pd.DataFrame,
    id: str,
    time: str | None = None,
    how: str | Mapping[str, str] = "last",
    outcome: Sequence[str] | None = None,
    outcome_how: str = "final",
    landmark: Any = None,
    duration: str | None = None,
    missing_ids: str = "drop",
) -> tuple[pd.DataFrame, StepReport]:
    """One row per ``id``, records ordered by ``time``.

    how: "last"/"first" (last/first non-missing value of each column, i.e. carried forward),
    "baseline"/"final" (the earliest/latest record as is), "mean"/"median"/"min"/"max"/"sum"
    (numeric columns; text columns then take "last"), "count", "any", or a mapping
    column -> one of those (unlisted columns take "last").
    outcome: columns taken from the whole history with ``outcome_how`` (default "final": the
    latest record), never restricted by ``landmark`` (only records with time <= landmark feed
    the features, as at a prediction time point).
    duration: with ``landmark``, the survival time column, counted from the landmark afterwards
    (its value minus ``landmark``, in the same units as ``time``); entities whose follow-up
    ended by the landmark are left out, since they are no longer at risk there.
    missing_ids: rows without an ``id`` are dropped (``"drop"``) or each taken as an entity of
    its own (``"own"``), here and on new data.
    """
    check_frame(df)
    agg = EntityAggregator(id=id, time=time, how=how, outcome=outcome, outcome_how=outcome_how,
                           landmark=landmark, duration=duration, missing_ids=missing_ids)
    agg.fit(df)
    out = agg.transform(df)
    n_missing_id = int(df[id].isna().sum())
    counts = df[id].value_counts()
    if counts.empty:
        raise ValueError(f"id column {id!r} has no values: nothing to aggregate")
    warnings = []
    if n_missing_id:
        warnings.append(said(id, missing_ids, n_missing_id))
    if agg.non_numeric_fallback_:
        warnings.append(f"non-numeric columns took 'last' instead of {how!r}: {agg.non_numeric_fallback_[:10]}")
    if time is None and counts.max() > 1:
        warnings.append("no time column: records are taken in frame order")
    details = {
        "entities": int(out.shape[0]),
        "records_per_entity": {
            "min": int(counts.min()),
            "median": float(counts.median()),
            "max": int(counts.max()),
        },
        "how": agg.spec_,
        "outcome": agg.outcome_,
        "landmark": landmark,
        "rows_without_id": n_missing_id,
        "missing_ids": missing_ids,
    }
    if landmark is not None:
        details["entities_left_out_at_landmark"] = int(counts.shape[0] - out.shape[0])
    if duration is not None:
        details["duration_counted_from_landmark"] = duration
    return out, StepReport.between("aggregate_per_entity", df, out, details=details, warnings=warnings, transformer=agg)
