"""The imports a kernel makes before the co-pilot's first steps, made ahead of them.

A fresh kernel pays ~1 s for pandas and kernel_tools, ~2 s for the detectors and ~1 s for the
scikit-learn models the first diagnosis fits (on a loaded 2-core machine: twice that). The
headless command line starts its kernel with :func:`warm_up` as a start-up line, so these
imports run while the command line is still checking the file and preparing its notebook,
instead of one after the other with them. Only a head start: nothing is bound in the user's
namespace, and a step that needs a module imports it as it always does.
"""

from __future__ import annotations

import importlib

# what loading a table and the first kt.diagnose import (the detectors register on import)
FIRST_STEPS = (
    "pandas",
    "kernel_tools.findings",
    "kernel_tools.transforms",
    "sklearn.ensemble",
    "sklearn.model_selection",
    "sklearn.metrics",
)


def warm_up() -> list[str]:
    """Import the modules the first steps need; returns those imported. One that cannot be
    imported is left to the step that needs it, whose cell then says why in the notebook."""
    warmed = []
    for name in FIRST_STEPS:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - a head start only: the step's own import reports it
            continue
        warmed.append(name)
    try:
        from kernel_tools.diagnosis.registry import load_detectors

        load_detectors()
    except Exception:  # noqa: BLE001 - as above
        return warmed
    return [*warmed, "kernel_tools.diagnosis"]


# the start-up line a kernel is given (IPython's exec_lines): binds no name, prints nothing
START_UP_LINE = "__import__('kernel_tools.warmup', fromlist=['_']).warm_up() and None"
