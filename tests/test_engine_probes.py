"""The engine's silent probes in kernel_tools.probes: JSON out, nothing bound in the namespace."""

from __future__ import annotations

import json
import types

import IPython
import numpy as np
import pandas as pd
import pytest

from jupyter_dcpilot.probe import probe_expression


@pytest.fixture
def user_ns(monkeypatch):
    namespace: dict = {}
    shell = types.SimpleNamespace(user_ns=namespace)
    monkeypatch.setattr(IPython, "get_ipython", lambda: shell)
    return namespace


def frame(n=120, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    return pd.DataFrame({"x": rng.normal(size=n), "leak": y, "y": y})


def evaluate(expression: str):
    """What the kernel does with a probe's user expression."""
    return json.loads(eval(expression))


def test_checkpoint_round_trip_restores_values_and_removes_created_names(user_ns):
    df = frame()
    user_ns["df"] = df
    saved = evaluate(probe_expression("checkpoint_save_json", ["df", "train"], "before split"))
    assert saved["saved"] == ["df"]
    user_ns["df"] = df.iloc[:10]
    user_ns["train"] = df.iloc[:5]
    evaluate(probe_expression("checkpoint_restore_json", saved["id"]))
    assert user_ns["df"].equals(df) and "train" not in user_ns
    created_only = evaluate(probe_expression("checkpoint_save_json", ["model"], "before model"))
    user_ns["model"] = object()
    evaluate(probe_expression("checkpoint_restore_json", created_only["id"]))
    assert "model" not in user_ns
    listed = evaluate(probe_expression("checkpoint_list_json"))
    assert saved["id"] in [c.get("id") for c in listed]


def test_validate_compares_the_checkpointed_frame_with_the_current_one(user_ns):
    user_ns["df"] = frame()
    cid = evaluate(probe_expression("checkpoint_save_json", ["df"], "x"))["id"]
    user_ns["df"] = user_ns["df"].iloc[:30]
    result = evaluate(probe_expression("validate_json", cid, "df", "df", target="y",
                                       expect={"rows": "same"}))
    assert (result["rows_before"], result["rows_after"]) == (120, 30)
    assert any(f["severity"] == "error" for f in result["failures"])


def test_frame_info_report_and_diagnose(user_ns):
    import kernel_tools as kt

    user_ns["df"] = frame()
    user_ns["df"], user_ns["dropped"] = kt.drop_columns(user_ns["df"], ["leak"], reason="test")
    names = set(user_ns)
    info = evaluate(probe_expression("frame_info_json", ["df", "absent"]))
    assert info["df"]["rows"] == 120 and info["df"]["columns"] == ["x", "y"] and info["absent"] is None
    report = evaluate(probe_expression("report_json", "dropped"))
    assert report["columns_removed"] == ["leak"] and report["transformer"]
    diagnosis = evaluate(probe_expression("diagnose_json", "df", target="y", not_a_hint=1))
    assert diagnosis["task"]["target"] == "y" and diagnosis["shape"] == [120, 2]
    assert set(user_ns) == names  # probes bind nothing
    with pytest.raises(KeyError, match="no variable named 'nope'"):
        evaluate(probe_expression("report_json", "nope"))


def test_warm_imports_what_the_next_step_calls_and_binds_nothing(user_ns):
    import sys

    user_ns["df"] = frame()
    names = set(user_ns)
    warmed = evaluate(probe_expression("warm_json", ["drop_columns", "not_a_function"]))
    assert warmed == {"warmed": ["drop_columns"]}
    assert "kernel_tools.transforms" in sys.modules and set(user_ns) == names


def test_parameters_names_what_the_kernels_function_takes(user_ns):
    assert {"df", "target", "task", "test"} <= set(evaluate(probe_expression("parameters_json", "fit_evaluate")))
    with pytest.raises(KeyError, match="'exec' is not a kernel_tools function"):
        evaluate(probe_expression("parameters_json", "exec"))
