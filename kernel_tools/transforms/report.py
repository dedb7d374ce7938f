"""StepReport: what one transform did, in numbers a reviewer (or the co-pilot) can check."""

from __future__ import annotations

import datetime as _dt
import html
import json
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from kernel_tools.lazy.engine import is_lazy


def json_safe(value: Any) -> Any:
    """Convert numpy / pandas scalars and containers to plain JSON types (NaN -> None)."""
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [json_safe(v) for v in value]
    if isinstance(value, np.ndarray):
        return [json_safe(v) for v in value.tolist()]
    if isinstance(value, pd.Series):
        return [json_safe(v) for v in value.tolist()]
    if isinstance(value, (np.bool_, bool)):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, (np.floating, float)):
        value = float(value)
        return None if math.isnan(value) or math.isinf(value) else value
    if isinstance(value, (pd.Timestamp, _dt.datetime, _dt.date)):
        return value.isoformat()
    if isinstance(value, (pd.Timedelta, _dt.timedelta, np.timedelta64)):
        return str(value)
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, (str, int)):
        return value
    return str(value)


@dataclass
class StepReport:
    """The outcome of one transform: shape before/after, what changed, and the fitted step.

    ``transformer`` is the fitted scikit-learn transformer (or None when the step learned
    nothing that should be replayed); ``apply(new_df)`` runs it unchanged, e.g. on the test
    split, so no statistic of new data leaks into what was learned.
    """

    operation: str
    rows_in: int | None  # None: a lazy frame's rows, not counted by the step
    rows_out: int | None
    columns_in: int
    columns_out: int
    columns_added: list[str] = field(default_factory=list)
    columns_removed: list[str] = field(default_factory=list)
    details: dict = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    transformer: Any = None

    @classmethod
    def between(
        cls,
        operation: str,
        before: pd.DataFrame,
        after: pd.DataFrame,
        *,
        details: dict | None = None,
        warnings: list[str] | None = None,
        transformer: Any = None,
    ) -> StepReport:
        """Build a report by comparing the frame before and after the step."""
        added = [str(c) for c in after.columns if c not in set(before.columns)]
        removed = [str(c) for c in before.columns if c not in set(after.columns)]
        return cls(
            operation=operation,
            rows_in=int(before.shape[0]),
            rows_out=int(after.shape[0]),
            columns_in=int(before.shape[1]),
            columns_out=int(after.shape[1]),
            columns_added=added,
            columns_removed=removed,
            details=json_safe(details or {}),
            warnings=list(warnings or []),
            transformer=transformer,
        )

    def apply(self, df: pd.DataFrame) -> pd.DataFrame:
        """Run the fitted step unchanged on new data (e.g. the test split)."""
        if self.transformer is None:
            raise ValueError(
                f"step {self.operation!r} learned nothing to replay on new data "
                "(its report has no transformer)"
            )
        if is_lazy(df):  # the same fitted transformer, partition by partition
            from kernel_tools.lazy.engine import apply_fitted, first_partition

            return apply_fitted(self.transformer, df, first_partition(df))
        return self.transformer.transform(df)

    def to_dict(self) -> dict:
        """JSON-safe summary (the transformer itself is left out)."""
        return json_safe(
            {
                "operation": self.operation,
                "rows_in": self.rows_in,
                "rows_out": self.rows_out,
                "columns_in": self.columns_in,
                "columns_out": self.columns_out,
                "columns_added": self.columns_added,
                "columns_removed": self.columns_removed,
                "details": self.details,
                "warnings": self.warnings,
                "transformer": None if self.transformer is None else type(self.transformer).__name__,
            }
        )

    def _repr_html_(self) -> str:
        esc = html.escape
        def count(n: int | None) -> str:
            return "lazy" if n is None else f"{n:,}"

        rows = [
            ("rows", f"{count(self.rows_in)} → {count(self.rows_out)}"),
            ("columns", f"{self.columns_in} → {self.columns_out}"),
        ]
        if self.columns_added:
            rows.append(("added", ", ".join(self.columns_added[:20])))
        if self.columns_removed:
            rows.append(("removed", ", ".join(self.columns_removed[:20])))
        for key, value in list(self.details.items())[:8]:
            text = json.dumps(value, default=str)
            rows.append((key, text if len(text) <= 200 else text[:197] + "..."))
        body = "".join(f"<tr><th style='text-align:left'>{esc(k)}</th><td>{esc(v)}</td></tr>" for k, v in rows)
        warn = "".join(f"<li>{esc(w)}</li>" for w in self.warnings)
        warn_html = f"<ul style='color:#a15c00'>{warn}</ul>" if warn else ""
        return f"<div><b>{esc(self.operation)}</b><table>{body}</table>{warn_html}</div>"
