"""The transforms on a lazy (Dask) frame: the same calls, the same fitted transformers.

Nothing is computed here unless the step needs a number to decide (the rows of a sample to
fit on, the split's row counts); the returned frame is a new lazy frame whose graph extends
the input's, so the input stays valid (and a checkpoint of it costs nothing).

- drop, de-duplicate: relational, with narwhals (:mod:`.frames`);
- rules learned from data (dtypes, categories, units, imputation, outlier fences): the
  pandas transform is fitted on an in-memory sample of whole entities, and its fitted
  scikit-learn transformer is applied to every partition (:func:`.engine.apply_fitted`);
- aggregation per entity: the rows are shuffled so each entity's rows share a partition
  (Dask's group-by shuffle), then the fitted :class:`EntityAggregator` runs per partition; the
  result is persisted in the cluster (spilling to disk), so later steps do not shuffle again;
- split: by a hash of the entity id (whole entities on one side, the same side every run);
- label issues: the model and cleanlab's per-class thresholds learned on a sample of whole
  entities, every partition's rows judged by them (:mod:`.labels`).

Each report says it was built lazily (``details["lazy"]``) and on how many rows it was
fitted; row counts the step did not need are left unknown (``None``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pandas as pd

from kernel_tools.lazy import engine, frames
from kernel_tools.transforms.report import StepReport, json_safe

FIT_ROWS = 200_000  # rows of the in-memory sample a rule is learned on


def _columns(df: Any, columns: Any, what: str = "column") -> list:
    if columns is None:
        return []
    columns = [columns] if isinstance(columns, str) else list(columns)
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise KeyError(f"{what} not in the frame: {', '.join(map(repr, missing[:10]))} "
                       f"(it has {len(df.columns)} columns)")
    return columns


def fit_sample(df: Any, rows: int = FIT_ROWS, id: str | None = None, random_state: int = 0) -> pd.DataFrame:
    """About ``rows`` rows of ``df`` in memory, whole ``id`` entities kept together."""
    head = engine.first_partition(df)
    guess = len(head) * engine.partitions(df)
    if guess <= rows:
        return engine.to_memory(df).reset_index(drop=True)
    return engine.to_memory(engine.entity_sample(df, rows, guess, id, random_state)).reset_index(drop=True)


def lazy_report(operation: str, before: Any, after: Any, *, details: dict | None = None,
                warnings: list[str] | None = None, transformer: Any = None,
                rows: tuple[int | None, int | None] = (None, None)) -> StepReport:
    """A StepReport from the lazy frames' schemas (row counts only when the step knew them)."""
    added = [str(c) for c in after.columns if c not in set(before.columns)]
    removed = [str(c) for c in before.columns if c not in set(after.columns)]
    return StepReport(operation=operation, rows_in=rows[0], rows_out=rows[1],
                      columns_in=len(before.columns), columns_out=len(after.columns),
                      columns_added=added, columns_removed=removed,
                      details=json_safe({"lazy": True, "partitions": engine.partitions(after), **(details or {})}),
                      warnings=list(warnings or []), transformer=transformer)


def drop_columns(df: Any, columns: Sequence[str] | str, reason: str | None = None) -> tuple[Any, StepReport]:
    from kernel_tools.transforms.dropping import ColumnDropper

    columns = _columns(df, columns)
    if not columns:
        raise ValueError("columns is empty: name at least one column to drop")
    dropper = ColumnDropper(columns=columns, reason=reason).fit(df._meta)
    out = frames.drop(df, columns)
    return out, lazy_report("drop_columns", df, out, details={"dropped": columns, "reason": reason},
                            transformer=dropper)


def drop_rows(df: Any, where: Sequence[Mapping[str, Any]] = (), index: Sequence[Any] | None = None,
              reason: str | None = None) -> tuple[Any, StepReport]:
    from kernel_tools.transforms.dropping import rows_matching

    if index:
        raise NotImplementedError("a lazy frame's row labels are not unique across partitions: name the rows "
                                  "by their cells (where=[{column: value}]) instead of index=")
    where = list(where)
    if not where:
        raise ValueError("name the rows to drop: where=[{column: value}]")
    _columns(df, sorted({c for record in where for c in record}))
    out = df[~rows_matching(df, where)]
    return out, lazy_report("drop_rows", df, out, details={"where": where, "reason": reason})


def deduplicate(df: Any, subset: Sequence[str] | None = None, keep: str | bool = "first",
                near: bool = False, decimals: int = 6) -> tuple[Any, StepReport]:
    if near:
        raise NotImplementedError("near=True compares normalised text row by row; on a lazy frame only exact "
                                  "duplicates are removed (near=False)")
    if keep not in ("first", "last"):
        raise ValueError(f"keep must be 'first' or 'last' on a lazy frame; got {keep!r}")
    subset = _columns(df, subset) or list(df.columns)
    out = frames.unique(df, subset)
    details = {"subset": subset if len(subset) < len(df.columns) else "all columns", "keep": "any of the equal rows",
               "near": False}
    return out, lazy_report("deduplicate", df, out, details=details)


def fitted_step(function: Callable[..., tuple[pd.DataFrame, StepReport]], df: Any, *args: Any,
                id: str | None = None, fit_rows: int = FIT_ROWS, **kwargs: Any) -> tuple[Any, StepReport]:
    """Run the pandas transform ``function`` on a sample of ``df`` to fit its transformer, then
    apply that transformer to every partition. The report's details are the sample's."""
    sample = fit_sample(df, fit_rows, id)
    fitted, report = function(sample, *args, **kwargs)
    if report.transformer is None:
        raise ValueError(f"{report.operation} learned no transformer to apply to the partitions")
    out = engine.apply_fitted(report.transformer, df, sample)
    details = {**report.details, "fitted_on_rows": len(sample),
               "fitted_on": f"a sample of {len(sample):,} rows" + (f" (whole '{id}' entities)" if id else ""),
               "counts_above_are_of": "the sample"}
    return out, lazy_report(report.operation, df, out, details=details, warnings=report.warnings,
                            transformer=report.transformer)


def aggregate_per_entity(df: Any, id: str, time: str | None = None, how: Any = "last",
                         outcome: Sequence[str] | None = None, outcome_how: str = "final",
                         landmark: Any = None, duration: str | None = None,
                         missing_ids: str = "drop") -> tuple[Any, StepReport]:
    from kernel_tools.transforms.aggregation import EntityAggregator

    _own_ids_refused(missing_ids)  # rows without an id are dropped, as the aggregator does

    agg = EntityAggregator(id=id, time=time, how=how, outcome=outcome, outcome_how=outcome_how,
                           landmark=landmark, duration=duration).fit(df._meta)
    together = df.shuffle(on=id)  # every row of an entity in one partition
    out, persisted = engine.keep_in_cluster(engine.apply_fitted(agg, together, engine.first_partition(df)))
    details = {"how": agg.spec_, "outcome": agg.outcome_, "landmark": landmark,
               "grouped_by": f"'{id}' (rows shuffled so each entity is in one partition)",
               "persisted": persisted}
    return out, lazy_report("aggregate_per_entity", df, out, details=details, transformer=agg)


def split(df: Any, target: str, groups: str | None = None, time: str | None = None,
          test_size: float = 0.2, stratify: bool = True, random_state: int = 0,
          missing_ids: str | None = None) -> tuple[Any, Any, StepReport]:
    """Train/test by a hash: of the entity id (``groups``: every entity on one side), else of
    each row's values (equal rows on one side). Reproducible across runs and machines;
    class shares are kept in expectation rather than exactly (no stratification).
    ``missing_ids="drop"``: rows without a ``groups`` id are left out (they hash to no entity)."""
    _columns(df, [target], "target column")
    if groups is not None:
        _columns(df, [groups], "groups column")
        if missing_ids is not None:
            _own_ids_refused(missing_ids)
            df = df.dropna(subset=[groups])
    if time is not None:
        raise NotImplementedError("a time split of a lazy frame is not available yet: split by entity "
                                  "(groups=) or compute a sample first")
    if not isinstance(test_size, float) or not 0 < test_size < 1:
        raise ValueError(f"test_size must be a fraction between 0 and 1; got {test_size!r}")
    # each partition sorts its own rows: a mask built from a projection of the frame (its id
    # column) can be partitioned differently from the frame itself (the Parquet reader fuses
    # partitions by the columns read), and then cannot be aligned with it
    share = engine.bucket_share(test_size)
    train = df.map_partitions(_side, groups, random_state + 1, share, False, meta=df._meta)
    test = df.map_partitions(_side, groups, random_state + 1, share, True, meta=df._meta)
    n_train, n_test = (int(v) for v in engine.compute(train.shape[0], test.shape[0]))
    if not n_train or not n_test:
        raise ValueError(f"the split left an empty {'train' if not n_train else 'test'} set; check test_size and the data")
    details = {"kind": f"grouped, by a hash of '{groups}'" if groups else "by a hash of each row's values",
               "train_rows": n_train, "test_rows": n_test, "test_share": n_test / (n_train + n_test),
               "random_state": random_state}
    warnings = [] if not stratify else ["a lazy split keeps the class shares in expectation, not exactly"]
    report = lazy_report("split", df, train, details=details, warnings=warnings,
                         rows=(n_train + n_test, n_train + n_test))
    return train, test, report


def _own_ids_refused(missing_ids: str) -> None:
    """Ids of their own for rows without one are made per partition and could repeat across
    partitions: refused in words on a lazy frame."""
    if missing_ids != "drop":
        raise NotImplementedError("rows without an entity id as entities of their own are not available for a "
                                  "lazy frame yet: drop them (missing_ids='drop') or compute a sample first")


def _side(part: pd.DataFrame, groups: str | None, seed: int, share: int, test: bool) -> pd.DataFrame:
    """The rows of one partition on the test (or train) side of a hash split: by the bucket of
    the entity id, else of the row's values (``engine.row_hashes`` hashes them alike)."""
    values = part[groups] if groups else pd.Series(pd.util.hash_pandas_object(part, index=False).to_numpy())
    in_test = engine.buckets(values, seed) < share
    return part[in_test == test]


def unsupported(name: str, why: str) -> Callable[..., Any]:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"{name} on a lazy frame: {why}")

    return refuse



join_frames = unsupported("join_frames", "join the files with dask.dataframe.merge before the co-pilot starts")
join_files = unsupported("join_files", "join the files with dask.dataframe.merge before the co-pilot starts")
