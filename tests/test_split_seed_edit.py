"""The split's seed is a parameter an expert (or a decisions file) may set: another seed holds
out other rows, which is how benchmarks/bench_split_seeds.py asks whether a verdict is luck."""

from __future__ import annotations

import json

import pytest

from jupyter_dcpilot.engine.edit_checks import check_params
from jupyter_dcpilot.engine.episodes import library
from jupyter_dcpilot.engine.gatekeeping import ApprovalPolicy


def test_the_split_seed_is_a_whole_number_an_edit_may_set(tmp_path):
    specs = library()["split"].edit_params
    check_params("split", {"random_state": 7, "test_size": 0.25}, specs)
    for bad, words in ((2.5, "must be a whole number"), (-1, "at least 0"), ("7", "must be a number")):
        with pytest.raises(ValueError, match=words):
            check_params("split", {"random_state": bad}, specs)
    path = tmp_path / "decisions.json"
    path.write_text(json.dumps({"*": "recommended", "plan": [
        {"op": "params", "episode": "split", "params": {"random_state": 3}}]}))
    policy = ApprovalPolicy.from_spec(str(path), files=True)
    assert policy.plan_edits == [{"op": "params", "episode": "split", "params": {"random_state": 3}}]
    path.write_text(json.dumps({"plan": [{"op": "params", "episode": "split", "params": {"random_state": 0.5}}]}))
    with pytest.raises(ValueError, match="random_state must be a whole number"):
        ApprovalPolicy.from_spec(str(path), files=True)
