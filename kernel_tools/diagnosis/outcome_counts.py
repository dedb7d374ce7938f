"""A column that counts an entity's outcomes over all its records (``recur``: the number of
recurrences, beside (start, stop] rows whose status says which interval ended in one).

The same on every record of the entity, it looks like a baseline attribute; but it is the target
summed over the whole follow-up, known only once the last record is. The data shows it: on
nearly every entity the column equals the number of its records with one value of the target.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from kernel_tools.diagnosis.columns import ColumnProfile, numeric_values

COUNTED = 0.95  # equal to the entity's count of one target value on this share of entities
MIN_ENTITIES = 20
MIN_COUNTS = 3  # distinct counts: a count of events, not a flag that may match by chance
MAX_CODES = 10  # target values tried: codes of an outcome, not a measurement


def counts_of_the_outcome(df: pd.DataFrame, profiles: dict[str, ColumnProfile], entity_id: str | None,
                          target: str | None, columns: list[str]) -> dict[str, dict]:
    """For each of ``columns`` (constant within the entity) that counts the entity's records with
    one target value: that value and the share of entities where it does."""
    if entity_id is None or target is None or entity_id not in df or target not in df:
        return {}
    y = df[target]
    codes = pd.unique(y.dropna())
    if not 2 <= len(codes) <= MAX_CODES:
        return {}
    ids = df[entity_id].to_numpy()
    counts = pd.DataFrame({str(v): (y == v).to_numpy() for v in codes}).groupby(ids, sort=False).sum()
    if len(counts) < MIN_ENTITIES:
        return {}
    out: dict[str, dict] = {}
    for c in columns:
        prof = profiles.get(c)
        if prof is None or not prof.holds_numbers:
            continue
        x = pd.Series(numeric_values(df[c], prof)).groupby(ids, sort=False).first().reindex(counts.index)
        ok = x.notna().to_numpy()
        if ok.sum() < MIN_ENTITIES or x[ok].nunique() < MIN_COUNTS:
            continue
        for value in counts.columns:
            share = float(np.mean(x[ok].to_numpy() == counts[value].to_numpy()[ok]))
            if share >= COUNTED:
                out[c] = {"target_value": value, "share_of_entities": round(share, 4)}
                break
    return out
