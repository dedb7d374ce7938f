"""Stacked endpoints: the records of an entity that are its endpoints, not its visits.

R's survival tables often hold one record per subject and endpoint ('etype: 1=recurrence,
2=death'; a stratum for each endpoint): the subject's attributes repeat, and each record has its
own event and time, all counted from the same start. Pooled, they are read as repeated records
and one model mixes the endpoints, the endpoint's code a feature. Which endpoint is the outcome
only a person can say, so the structure is asked.
"""

from __future__ import annotations

import pandas as pd

MAX_ENDPOINTS = 10  # levels of the column naming the endpoint
DISTINCT_SHARE = 0.99  # entities whose records each have another level of it
SEVERAL_SHARE = 0.5  # entities with several records
CONSTANT_SHARE = 0.95  # entities whose other columns are the same on every record


def endpoint_column(df: pd.DataFrame, entity_id: str, outcome_columns: set[str]) -> str | None:
    """The column naming each record's endpoint, or None: a few codes, a different one on each
    record of an entity, while every other column (but the outcome's and row labels) repeats
    within the entity. Visits differ in what they measure; endpoints only in their outcome."""
    groups = df.groupby(entity_id, sort=False)
    sizes = groups.size()
    if (sizes > 1).mean() < SEVERAL_SHARE:
        return None
    n = len(df)
    others = [c for c in df.columns if c != entity_id and c not in outcome_columns and df[c].nunique() < n]
    varying = {c: float((groups[c].nunique(dropna=False) > 1)[sizes > 1].mean()) for c in others}
    moving = [c for c, share in varying.items() if share > 1 - CONSTANT_SHARE]
    if len(moving) != 1:
        return None
    code = moving[0]
    if not 2 <= df[code].nunique() <= MAX_ENDPOINTS or df[code].isna().any():
        return None
    distinct = (groups[code].nunique() == sizes)[sizes > 1].mean()
    return code if distinct >= DISTINCT_SHARE else None
