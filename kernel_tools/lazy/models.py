"""Fitting a model on a lazy (Dask) frame: on an in-memory sample of whole entities.

scikit-learn's estimators fit in memory; the sample (``rows`` training rows, a quarter of that
from the test frame, every row of each entity drawn) is taken in one pass, and the report says
so in its first warning and in ``metrics["fit_sample_rows"]`` / ``metrics["train_rows"]``.
"""

from __future__ import annotations

from typing import Any

from kernel_tools.lazy import engine

MODEL_ROWS = 200_000


def fit_evaluate_lazy(fit: Any, df: Any, target: str, task: str, *, test: Any = None,
                      groups: str | None = None, rows: int = MODEL_ROWS, random_state: int = 0,
                      **kwargs: Any) -> Any:
    """``fit(sample of df, target, task, test=sample of test, groups=groups, **kwargs)`` — ``fit``
    is the pandas :func:`kernel_tools.fit_evaluate` — with the samples stated in its report."""
    todo: dict[str, Any] = {"train_rows": df.shape[0]}
    parts = {"train": (df, rows)}
    if test is not None and engine.is_lazy(test):
        parts["test"] = (test, max(1, rows // 4))
        todo["test_rows"] = test.shape[0]
    for name, (frame, want) in parts.items():
        head = engine.first_partition(frame)
        guess = len(head) * engine.partitions(frame)
        todo[name] = engine.entity_sample(frame, want, guess, groups if groups in frame.columns else None,
                                          random_state)
    done = dict(zip(todo, engine.compute(*todo.values())))
    train = done["train"].reset_index(drop=True)
    sampled_test = done["test"].reset_index(drop=True) if "test" in done else test
    report = fit(train, target, task, test=sampled_test, groups=groups, random_state=random_state, **kwargs)
    whole = f" (whole '{groups}' entities)" if groups else ""
    note = (f"fitted on an in-memory sample of {len(train):,} of {int(done['train_rows']):,} training "
            f"rows{whole}")
    if "test" in done:
        note += f"; the holdout score is on {len(sampled_test):,} of {int(done['test_rows']):,} test rows"
    report.warnings.insert(0, note)
    report.metrics["fit_sample_rows"] = len(train)
    report.metrics["train_rows"] = int(done["train_rows"])
    if "test" in done:
        report.metrics["test_rows"] = int(done["test_rows"])
    return report
