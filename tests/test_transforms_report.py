import json

import numpy as np
import pandas as pd
import pytest

import kernel_tools as kt
from kernel_tools.transforms.report import StepReport, json_safe


def test_json_safe_converts_numpy_pandas_and_nan():
    value = {
        1: np.int64(3),
        "f": np.float32(1.5),
        "nan": float("nan"),
        "arr": np.array([1, 2]),
        "ts": pd.Timestamp("2020-01-02"),
        "b": np.bool_(True),
        "t": (1, None),
    }
    out = json_safe(value)
    assert out == {"1": 3, "f": 1.5, "nan": None, "arr": [1, 2], "ts": "2020-01-02T00:00:00", "b": True, "t": [1, None]}
    json.dumps(out)


def test_between_counts_rows_and_columns():
    before = pd.DataFrame({"a": [1, 2, 3], "b": [1, 2, 3]})
    after = pd.DataFrame({"a": [1, 2], "c": [0, 0]})
    report = StepReport.between("x", before, after, details={"n": np.int64(2)}, warnings=["w"])
    assert (report.rows_in, report.rows_out, report.columns_in, report.columns_out) == (3, 2, 2, 2)
    assert report.columns_added == ["c"] and report.columns_removed == ["b"]
    d = report.to_dict()
    assert d["details"] == {"n": 2} and d["transformer"] is None and d["warnings"] == ["w"]
    json.dumps(d)
    html = report._repr_html_()
    assert "3 → 2" in html and "w" in html


def test_apply_without_transformer_raises_naming_the_step():
    report = StepReport("deduplicate", 1, 1, 1, 1)
    with pytest.raises(ValueError, match="deduplicate"):
        report.apply(pd.DataFrame({"a": [1]}))


def test_public_names_are_exported_lazily():
    for name in ["aggregate_per_entity", "join_frames", "drop_columns", "deduplicate", "fix_dtypes",
                 "normalize_categories", "convert_units", "impute", "handle_outliers",
                 "handle_label_issues", "split", "StepReport"]:
        assert callable(getattr(kt, name))
    from kernel_tools.transforms import (
        CategoryNormalizer,
        ColumnDropper,
        DtypeFixer,
        EntityAggregator,
        Imputer,
        OutlierHandler,
        UnitConverter,
    )

    assert all(hasattr(c, "fit") and hasattr(c, "transform") for c in
               [CategoryNormalizer, ColumnDropper, DtypeFixer, EntityAggregator, Imputer, OutlierHandler, UnitConverter])


@pytest.mark.slow
def test_importing_transforms_does_not_load_heavy_libraries():
    import subprocess
    import sys

    code = (
        "import sys, kernel_tools.transforms;"
        "print(sorted(m for m in ('torch', 'hyperimpute', 'cleanlab', 'pint', 'lifelines') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout.strip() == "[]"
