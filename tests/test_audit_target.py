"""The audit's ``target`` rule (issue 26) on the directories of real runs: a model that predicts
another column, reads another column as the survival time, or reads the documented event code as
censored fails it; the run that asked which code is the event, and recoded, passes it."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
from dev_tables import run_recommended
from test_two_code_status import cohort

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"


def _audit():
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    spec = importlib.util.spec_from_file_location("_bench_audit_target", BENCH / "audit.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def unasked(tmp_path_factory) -> Path:
    """A run on a cohort whose 'status' is 1 for the censored, lost as early as events happen:
    nothing tells the coding, so the model reads 1 as the event, as every reader does."""
    folder = tmp_path_factory.mktemp("unasked")
    df = cohort(end_of_study=False, censored_code=1)
    df["enrolled_for"] = (df["time"] + 30).round(1)  # the follow-up each could have had: not the time
    run_recommended(df, "status", folder)
    return folder / "out"


@pytest.mark.slow
def test_the_audit_fails_a_model_with_the_event_coding_inverted_time_or_target_other_than_documented(unasked):
    audit = _audit()
    documented = audit.Truth(task="survival", target="status", time="time", event=(0,))
    problems = audit.audit_run(unasked, documented).problems["target"]
    assert problems == ["'status' = 0 read as censored, but the documentation names 0 the event: events and "
                        "censored rows swapped"]
    # what the run read (1 the event, 'time' the duration, 'status' the target) passes
    assert audit.audit_run(unasked, audit.Truth(task="survival", target="status", time="time",
                                                event=(1,))).problems["target"] == []
    other_time = audit.audit_run(unasked, audit.Truth(task="survival", target="status", time="enrolled_for"))
    assert other_time.problems["target"] == ["the model reads 'time' as the survival time: the documented one is "
                                             "'enrolled_for'"]
    other_target = audit.audit_run(unasked, audit.Truth(task="survival", target="death", time="time"))
    assert other_target.problems["target"] == ["the model predicts 'status': the documented target is 'death'"]


@pytest.mark.slow
def test_a_run_that_asks_which_code_is_the_event_recodes_it_and_stays_not_valid_until_confirmed(tmp_path):
    report = run_recommended(cohort(), "status", tmp_path)
    checks = {c["check"]: c for c in report["validity"]}
    assert report["valid"] is False and not checks["structure_confirmed"]["passed"]
    assert "1 censored, 0 the event" in checks["structure_confirmed"]["detail"]
    audit = _audit()
    documented = audit.Truth(task="survival", target="status", time="time", event=(0,))
    assert audit.audit_run(tmp_path / "out", documented).problems["target"] == []
