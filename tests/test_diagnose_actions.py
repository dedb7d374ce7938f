"""Every option's action is a call kernel_tools can run as it is (the engine relies on it)."""

import pandas as pd
import pytest
from _injected import kitchen_sink, repeated

import kernel_tools as kt
from kernel_tools.diagnosis import diagnose, diagnose_join

pytest.importorskip("kernel_tools.transforms")
SLOW = {"missforest", "hyperimpute"}


def run_actions(df, diagnosis):
    ran = []
    for f in diagnosis.findings:
        for o in f.options:
            if o.action is None or o.action["params"].get("method") in SLOW:
                continue
            out, report = getattr(kt, o.action["function"])(df, **o.action["params"])
            assert isinstance(out, pd.DataFrame), (f.id, o.id)
            ran.append((f.kind, o.id))
    return ran


@pytest.mark.slow
def test_kitchen_sink_actions_run():
    df, _ = kitchen_sink(800, seed=0)
    ran = run_actions(df, diagnose(df, target="y"))
    kinds = {k for k, _ in ran}
    assert kinds >= {"target_leakage", "id_column", "duplicate_rows", "missing_values", "numeric_as_text",
                     "mixed_units", "inconsistent_categories", "outliers", "redundant_features",
                     "constant_column", "free_text"}


def test_aggregation_action_gives_one_row_per_entity():
    df = repeated(60, seed=1)
    (f,) = diagnose(df, target="outcome").by_kind("repeated_measurements")
    out, _ = getattr(kt, f.recommended.action["function"])(df, **f.recommended.action["params"])
    assert len(out) == df["patient"].nunique()


def test_join_action_runs():
    left = pd.DataFrame({"key": ["a", "b", "c", "d"], "y": [0, 1, 0, 1]})
    right = pd.DataFrame({"key": ["a", "b", "c", "d"], "z": [1.0, 2.0, 3.0, 4.0]})
    (f,) = diagnose_join({"left": left, "right": right}).by_kind("join_keys")
    params = dict(f.recommended.action["params"])
    frames = {"left": left, "right": right}
    params["right"] = frames[params["right"]]  # the engine passes the variable it names
    out, _ = getattr(kt, f.recommended.action["function"])(left, **params)
    assert list(out["z"]) == [1.0, 2.0, 3.0, 4.0]
