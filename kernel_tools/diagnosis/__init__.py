"""Find every data-centric issue of the taxonomy, with evidence and recommended options."""

import functools
from typing import Any

from kernel_tools.diagnosis import runner
from kernel_tools.diagnosis.joins import diagnose_join
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

        return diagnose_lazy(df, *args, **kwargs)
    return runner.diagnose(df, *args, **kwargs)


__all__ = ["diagnose", "diagnose_join"]
