"""Finding / Option / Diagnosis: validation and the JSON round trip."""

import json

import numpy as np
import pytest

from kernel_tools.findings import Diagnosis, Finding, Option, to_json_safe


def _options():
    return [
        Option("drop", "Drop x", "Remove x.", "loses x", True,
               {"function": "drop_columns", "params": {"columns": ["x"], "reason": "leak"}}),
        Option("keep", "Keep", "Keep x.", "leak stays", False, None),
    ]


def test_finding_id_and_recommended():
    f = Finding("target_leakage", ["x"], "critical", "x leaks.", {"score": 0.99}, _options(), "leakage")
    assert f.id == "target_leakage:x"
    assert f.recommended.id == "drop"


@pytest.mark.parametrize("kwargs, message", [
    ({"kind": "nonsense"}, "unknown finding kind"),
    ({"severity": "high"}, "severity"),
    ({"gate": "whatever"}, "gate"),
])
def test_finding_rejects_bad_values(kwargs, message):
    base = dict(kind="outliers", columns=["x"], severity="info", summary="s", evidence={},
                options=_options(), gate=None)
    base.update(kwargs)
    with pytest.raises(ValueError, match=message):
        Finding(**base)


def test_exactly_one_recommended_option():
    opts = _options()
    opts[1].recommended = True
    with pytest.raises(ValueError, match="exactly one recommended"):
        Finding("outliers", ["x"], "info", "s", {}, opts)


def test_json_safe_converts_numpy_and_nan():
    out = to_json_safe({"a": np.int64(3), "b": np.float32(0.5), "c": float("nan"), "d": np.array([1, 2]),
                        "e": np.bool_(True)})
    assert out == {"a": 3, "b": 0.5, "c": None, "d": [1, 2], "e": True}
    json.dumps(out)


def test_diagnosis_round_trip():
    f = Finding("target_leakage", ["x"], "critical", "x leaks.", {"score": np.float64(0.99)}, _options(),
                "leakage")
    d = Diagnosis([f], {"kind": "classification", "target": "y", "reason": "r"}, [10, 3], 0.1, 10,
                  {"missing_rate": {"x": 0.1}})
    text = json.dumps(d.to_dict())
    back = Diagnosis.from_dict(json.loads(text))
    assert back.to_dict() == d.to_dict()
    assert back.by_kind("target_leakage")[0].options[0].action["function"] == "drop_columns"
    assert back.by_kind("outliers") == []
