"""Data-centric tools that run inside the user's kernel, where the data is.

Everything here is plain pandas / scikit-learn / cleanlab / hyperimpute / lifelines code with
no Jupyter server imports, so a notebook written by the co-pilot re-runs with only this
package installed.

Public names are imported lazily: the kernel pays for torch, cleanlab or lifelines only when
a function that needs them is first used, which keeps the panel's silent probes cheap.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

# public name -> submodule that defines it (one concept, one module)
_EXPORTS: dict[str, str] = {
    # frames.py — what the panel's probe calls
    "list_frames": "frames",
    "profile": "frames",
    "to_pandas": "frames",
    # dictionary.py / readers.py — a study's codebook, and files that carry one (Stata, SPSS, SAS)
    "read_dictionary": "dictionary",
    "Dictionary": "dictionary",
    "read_file": "readers",
    # findings.py — the typed results of diagnose
    "Finding": "findings",
    "Option": "findings",
    "Diagnosis": "findings",
    # inferences.py — structural choices with their confidence; the column timeline
    "Inference": "inferences",
    "ColumnTimeline": "inferences",
    # diagnosis/ — the issue taxonomy (the package is not named "diagnose": a submodule of
    # that name would shadow the function of the same name on this package)
    "diagnose": "diagnosis",
    "diagnose_join": "diagnosis",
    # transforms/ — pure functions and their scikit-learn transformers
    "aggregate_per_entity": "transforms",
    "to_intervals": "transforms",
    "drop_empty_intervals": "transforms",
    "join_files": "transforms",
    "join_frames": "transforms",
    "summarize_records": "transforms",
    "dose_history": "transforms",
    "drop_columns": "transforms",
    "deduplicate": "transforms",
    "drop_rows": "transforms",
    "fix_dtypes": "transforms",
    "normalize_categories": "transforms",
    "convert_units": "transforms",
    "impute": "transforms",
    "handle_outliers": "transforms",
    "handle_label_issues": "transforms",
    "split": "transforms",
    "redcap_baseline": "transforms",
    "recode_status": "transforms",
    "rank_levels": "transforms",
    "first_transition": "transforms",
    "number_blocks": "transforms",
    "StepReport": "transforms",
    # models.py — valid models
    "fit_evaluate": "models",
    "fit_evaluate_intervals": "models",
    "ModelReport": "models",
    # checks.py — post-step validation
    "validate_step": "checks",
    # checkpoints.py — snapshots of kernel variables
    "CheckpointStore": "checkpoints",
    # lazy/ — Dask frames: the cluster a notebook's lazy frames run on
    "dask_client": "lazy.engine",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'kernel_tools' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"kernel_tools.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
