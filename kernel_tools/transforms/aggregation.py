"""The fitted aggregation of an entity's records into one row: pandas, and per partition of a lazy frame."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ._base import FrameTransformer, check_choice, check_columns, is_numeric
from .entity_ids import MISSING_IDS, with_ids

# last/first: last/first non-missing value in time order (last observation carried forward);
# baseline/final: the earliest/latest record exactly as it is.
ROW_AGGS = ("last", "first", "baseline", "final")


NUMERIC_AGGS = ("mean", "median", "min", "max", "sum")


AGGS = ROW_AGGS + NUMERIC_AGGS + ("count", "any")


OUTCOME_AGGS = ("final", "last", "first", "baseline", "max", "min", "any", "sum")


# columns aggregated at once: each batch is copied in record order before grouping, so the
# transient memory is a batch, not the frame
_BATCH = 8


def _take(X: pd.DataFrame, cols: list[str], rows: np.ndarray) -> pd.DataFrame:
    """``X[cols]`` at the positions ``rows``, column by column: ``X.take`` or ``X[cols]`` would
    first consolidate or copy the whole frame."""
    # copy=False: the taken arrays are new already, and consolidating them would copy them again
    return pd.DataFrame({c: X[c].array.take(rows) for c in cols}, index=X.index.take(rows), copy=False)


def _aggregate_rows(X: pd.DataFrame, cols: list[str], rows: np.ndarray, codes: np.ndarray,
                    ids: pd.Index, agg: str) -> pd.DataFrame:
    """``agg`` of ``cols`` over the records at ``rows`` (positions), grouped by entity
    ``codes``; indexed by the entities (``ids``) that have records."""
    if agg in ("baseline", "final"):  # a whole record: pick its position, no grouping
        ends = codes if agg == "baseline" else codes[::-1]
        present, at = np.unique(ends, return_index=True)
        if agg == "final":
            at = len(codes) - 1 - at
        picked = _take(X, cols, rows[at])
        picked.index = ids.take(present)
        return picked
    parts = []
    for start in range(0, len(cols), _BATCH):
        grouped = _take(X, cols[start:start + _BATCH], rows).groupby(codes, sort=False)
        part = _aggregate(grouped, agg)
        part.index = ids.take(part.index.to_numpy())
        parts.append(part)
    return pd.concat(parts, axis=1)


def _aggregate(grouped: Any, agg: str) -> pd.DataFrame:
    if agg == "last":
        return grouped.last()
    if agg == "first":
        return grouped.first()
    if agg == "any":
        return grouped.max().astype(bool)
    return getattr(grouped, agg)()


class EntityAggregator(FrameTransformer):
    """Collapse repeated records to one row per entity with a fixed per-column rule.

    The resolved rule (which column is aggregated how, which are outcomes) is what is
    learned; replaying it on new data keeps the test split built exactly like the training
    split. Rows change, so inside a Pipeline it belongs before the split, not after it.
    """

    def __init__(
        self,
        id: str,
        time: str | None = None,
        how: str | Mapping[str, str] = "last",
        outcome: Sequence[str] | None = None,
        outcome_how: str = "final",
        landmark: Any = None,
        duration: str | None = None,
        missing_ids: str = "drop",
    ) -> None:
        self.id = id
        self.time = time
        self.how = how
        self.outcome = outcome
        self.outcome_how = outcome_how
        self.landmark = landmark
        self.duration = duration
        self.missing_ids = missing_ids

    def fit(self, X: pd.DataFrame, y: Any = None) -> EntityAggregator:
        X = self._remember_input(X)
        check_columns(X, [self.id], "id column")
        check_choice(self.missing_ids, "missing_ids", MISSING_IDS)
        if self.time is not None:
            check_columns(X, [self.time], "time column")
        if self.landmark is not None and self.time is None:
            raise ValueError("landmark needs time=: the column that orders the records")
        outcome = check_columns(X, self.outcome, "outcome column")
        if self.duration is not None:
            check_columns(X, [self.duration], "duration column")
            if self.landmark is None:
                raise ValueError("duration= is counted from the landmark: pass landmark= too")
            if not is_numeric(X[self.duration]):
                raise ValueError(f"duration column {self.duration!r} must be numeric; it is {X[self.duration].dtype}")
            outcome = outcome + [self.duration] if self.duration not in outcome else outcome
        # the time may be an outcome (person-period rows: the last period is the follow-up), but
        # not with a landmark, which counts the time of the features only
        if self.id in outcome or (self.time is not None and self.time in outcome and self.landmark is not None):
            raise ValueError("outcome columns must differ from the id column (and from the time column with a "
                             "landmark)")
        if self.outcome_how not in OUTCOME_AGGS:
            raise ValueError(f"outcome_how must be one of {OUTCOME_AGGS}; got {self.outcome_how!r}")
        features = [c for c in X.columns if c != self.id and c not in outcome]
        spec: dict[str, str] = {}
        fallback: list[str] = []
        if isinstance(self.how, Mapping):
            check_columns(X, list(self.how), "column in how=")
            for col in features:
                agg = self.how.get(col, "last")
                if agg not in AGGS:
                    raise ValueError(f"how[{col!r}] must be one of {AGGS}; got {agg!r}")
                if agg in NUMERIC_AGGS + ("any",) and not is_numeric(X[col]):
                    raise ValueError(f"how[{col!r}]={agg!r} needs a numeric column; {col!r} is {X[col].dtype}")
                spec[col] = agg
        else:
            if self.how not in AGGS:
                raise ValueError(f"how must be one of {AGGS} or a per-column mapping; got {self.how!r}")
            for col in features:
                agg = self.how
                if agg in NUMERIC_AGGS + ("any",) and not is_numeric(X[col]) and col != self.time:
                    agg = "last"
                    fallback.append(col)
                if col == self.time and agg not in ROW_AGGS:
                    agg = "last"
                spec[col] = agg
        for col in outcome:
            spec[col] = self.outcome_how
        self.spec_ = spec
        self.outcome_ = outcome
        self.non_numeric_fallback_ = fallback
        self.feature_names_out_ = [self.id] + [c for c in X.columns if c != self.id]
        return self

    def transform(self, X: pd.DataFrame) -> pd.DataFrame:
        X = self._check_transform_input(X, required=[self.id] + ([self.time] if self.time else []))
        X, _ = with_ids(X, self.id, self.missing_ids)
        rows, codes, ids = self._records(X)
        history_rows, history_codes = rows, codes
        if self.landmark is not None:
            seen = (X[self.time].take(rows) <= self.landmark).to_numpy()
            history_rows, history_codes = rows[seen], codes[seen]
        by_agg: dict[tuple[str, bool], list[str]] = {}
        for col, agg in self.spec_.items():
            if col in X.columns:
                by_agg.setdefault((agg, col in self.outcome_), []).append(col)
        parts = [_aggregate_rows(X, cols, *((rows, codes) if is_outcome else (history_rows, history_codes)), ids, agg)
                 for (agg, is_outcome), cols in by_agg.items()]
        if self.landmark is not None:
            ids = ids.take(np.unique(history_codes))
        out = pd.concat(parts, axis=1).reindex(ids) if parts else pd.DataFrame(index=ids)
        if self.duration is not None and self.duration in out.columns:
            # survival counted from the landmark: only entities still followed at it are at risk
            out = out[out[self.duration] > self.landmark]
            out[self.duration] = out[self.duration] - self.landmark
        order = [c for c in self.feature_names_out_ if c in out.columns]
        return out[order].reset_index()

    def _records(self, X: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, pd.Index]:
        """Positions of the records with an id, in (id, time) order; each one's entity as a
        code into the entities (in order of first appearance). Only the id and time columns
        are sorted: the frame itself is never copied whole (a 1M-row frame would need ~2
        copies at once), its columns are taken a few at a time by ``_aggregate_rows``."""
        keys = X[[self.id] + ([self.time] if self.time else [])].reset_index(drop=True)
        keys = keys[keys[self.id].notna()]
        if self.time is not None:
            keys = keys.sort_values([self.id, self.time], kind="stable", na_position="first")
        ids = pd.Index(keys[self.id].drop_duplicates(), name=self.id)
        return keys.index.to_numpy(), ids.get_indexer(keys[self.id]), ids
