"""Find every data-centric issue of the taxonomy, with evidence and recommended options; each
finding carries the chart its detector declared (the hosts draw it without loading the detectors)."""

import functools
from typing import Any

from kernel_tools.diagnosis import joins, runner
from kernel_tools.diagnosis.registry import with_charts
from kernel_tools.findings import Diagnosis
from kernel_tools.lazy.engine import is_lazy


@functools.wraps(runner.diagnose)
def diagnose(df: Any, *args: Any, **kwargs: Any) -> Diagnosis:
    # a Dask frame goes to the lazy diagnosis, which runs the same detectors on what it counts
    # (dispatched here, so the detectors' runner never imports the lazy diagnosis built on it)
    if is_lazy(df):
        if kwargs.pop("dictionary", None) is not None or len(args) > 8:
            raise NotImplementedError("a codebook is not read for lazy (Dask) frames yet: diagnose a pandas frame")
        from kernel_tools.lazy.diagnosis import diagnose_lazy

        # the lazy diagnosis reads a sample of fixed size: the pandas diagnosis's time budget and
        # wide-table column limit have nothing to bound there
        kwargs.pop("budget", None)
        kwargs.pop("max_columns", None)

        return with_charts(diagnose_lazy(df, *args, **kwargs))
    return with_charts(runner.diagnose(df, *args, **kwargs))


@functools.wraps(joins.diagnose_join)
def diagnose_join(frames: Any, *args: Any, **kwargs: Any) -> Diagnosis:
    return with_charts(joins.diagnose_join(frames, *args, **kwargs))


__all__ = ["diagnose", "diagnose_join"]
