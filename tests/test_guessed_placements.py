"""A column the co-pilot itself placed after the prediction time, with low confidence (asked),
is kept out of the features under the recommended answers: its drop is a leakage question whose
recommended answer follows the guess, the timing stays unconfirmed (``structure_confirmed``) until
a person answers, and a column a person placed at baseline stays a feature. Generated data: a
stay's length beside an end-of-stay outcome, and a numbered later wave of a yes/no survey."""

from __future__ import annotations

import asyncio
import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_probe15_structure import _admissions, _spells  # noqa: E402
from test_structure_gates import check, session, structure  # noqa: E402

from jupyter_dcpilot.engine import gatekeeping  # noqa: E402
from jupyter_dcpilot.engine.episodes import library  # noqa: E402
from jupyter_dcpilot.engine.session import Step  # noqa: E402
from jupyter_dcpilot.engine.structure import confirmations, moved, placed_late  # noqa: E402


def test_the_copilots_unsure_late_placement_is_a_leak_question_recommending_the_drop():
    s = session(structure(), features=("age", "bili"))
    (finding,) = placed_late(s, [])
    assert finding.columns == ["bili_day7"] and finding.evidence["source"] == "placement"
    assert finding.evidence["timing"] == "follow_up"
    assert "best guess, unconfirmed" in finding.summary and "its name says days" in finding.summary
    assert next(o.id for o in finding.options if o.recommended) == "drop"


def test_a_person_placing_the_column_at_baseline_keeps_it_without_a_question():
    s = session(structure(), features=("age", "bili", "bili_day7"))
    s.findings = placed_late(s, [])
    moved(s, s.structure.move("bili_day7", "baseline", "panel", "now"))
    assert placed_late(s, []) == [] and s.findings == []  # the guess's question goes with it
    # and a confident placement at baseline is never asked
    s2 = session(structure())
    s2.structure.timeline.columns["bili_day7"] = s2.structure.timeline.columns["age"]
    assert placed_late(s2, []) == []


def _asked(by: str, choice: str = "drop", features=("age", "bili")):
    """The session with the guess's leakage question answered ``choice`` ``by`` the policy or a user."""
    s = session(structure(), features=features)
    s.findings = placed_late(s, [])
    step = Step(id="s4", episode="remove_leakage", title="drop", gate="leakage", columns=["bili_day7"],
                finding_ids=[s.findings[0].id], status="awaiting_decision")
    s.plan.append(step)
    decision = gatekeeping.new_decision(s, step, library()[step.episode])
    assert [i["id"] for i in decision.inferences] == ["timing:bili_day7"]
    s.decide(decision.id, choice, "", by=by, via="policy" if by == "policy" else "panel")
    return s


def test_the_dropped_guess_stays_unconfirmed_until_a_person_answers_its_question():
    s = _asked("policy")
    # the feature list no longer holds the column, but the verdict still names its timing
    assert not check(s).passed and "the timing of 'bili_day7'" in check(s).detail
    assert check(s, "no_follow_up").passed and "'bili_day7'" in check(s, "no_follow_up").detail
    assert "timing:bili_day7" not in confirmations(s)
    s = _asked("user")
    assert "timing:bili_day7" in confirmations(s) and check(s).passed


def test_a_person_who_keeps_a_guessed_late_column_says_it_is_known_at_prediction_time():
    # before: the kept column failed no_follow_up as a kept leak would, though a person had said it
    # is known then (as moving it to baseline says)
    kept = _asked("user", "keep", features=("age", "bili", "bili_day7"))
    assert check(kept, "no_follow_up").passed and check(kept, "no_leakage").passed
    assert check(kept).passed  # the answer confirmed its timing
    # the policy's keep (never recommended) confirms nothing: the column stays a follow-up feature
    by_policy = _asked("policy", "keep", features=("age", "bili", "bili_day7"))
    assert not check(by_policy, "no_follow_up").passed and "'bili_day7'" in check(by_policy, "no_follow_up").detail


def _run(df, target: str, folder: Path, decisions: dict[str, Any] | None = None) -> dict[str, Any]:
    """A headless run on a real kernel: the recommended answers, or a decisions file's."""
    from jupyter_dcpilot.cli import run_job

    df.to_csv(folder / "data.csv", index=False)
    approve = "recommended"
    if decisions is not None:
        (folder / "decisions.json").write_text(json.dumps(decisions))
        approve = str(folder / "decisions.json")
    state, report = asyncio.run(run_job([str(folder / "data.csv")], target=target, approve=approve,
                                        planner="rules", out=str(folder / "out"), stream=io.StringIO()))
    assert state == "finished", report.get("warnings")
    return report


def _check(report: dict[str, Any], name: str) -> dict[str, Any]:
    return next(c for c in report["validity"] if c["check"] == name)


@pytest.mark.slow
def test_a_stay_beside_an_end_of_stay_outcome_is_dropped_under_the_recommended_answers(tmp_path):
    report = _run(_admissions("los"), "died", tmp_path)
    assert "los" not in report["model"]["features"] and "los" in report["dropped_columns"]
    assert not report["valid"]
    assert "the timing of 'los': at or after outcome" in _check(report, "structure_confirmed")["detail"]
    assert _check(report, "no_follow_up")["passed"]


@pytest.mark.slow
def test_a_stay_a_person_placed_at_baseline_stays_a_feature(tmp_path):
    report = _run(_admissions("los"), "died", tmp_path, {"*": "recommended", "timeline": {"los": "baseline"}})
    assert "los" in report["model"]["features"]
    assert "'los'" not in _check(report, "structure_confirmed")["detail"]


@pytest.mark.slow
def test_numbered_later_waves_are_dropped_and_the_first_kept(tmp_path):
    report = _run(_spells(), "complete", tmp_path)
    features = report["model"]["features"]
    assert "seeking1" in features and not {"seeking2", "seeking3", "seeking4"} & set(features)
    assert "the timing of 'seeking2': during follow up" in _check(report, "structure_confirmed")["detail"]
