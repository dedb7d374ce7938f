"""report.html from its Jinja2 template: the validity checklist and a verdict that never
contradicts it, findings by severity, every decision with evidence and rationale, the charts as
inline SVG, light and dark, and nothing from the data rendered as markup."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest

from jupyter_dcpilot.engine.report_html import calibration_points, render_html, report_details
from jupyter_dcpilot.engine.session import Decision, Session, Step
from jupyter_dcpilot.engine.wire import DecisionOption
from kernel_tools.findings import Finding


def report(**changes):
    base = {
        "dataset": {"rows_in": 500, "cols_in": 8, "rows_out": 432, "cols_out": 6},
        "task": {"kind": "survival", "target": "arrest", "time": "week", "id": "subject"},
        "findings": [
            {"kind": "outliers", "columns": ["age"], "severity": "info", "summary": "a few extreme ages"},
            {"kind": "target_leakage", "columns": ["report_filed"], "severity": "critical", "summary": "leak"},
            {"kind": "missing_values", "columns": ["wexp"], "severity": "warning", "summary": "gaps"},
        ],
        "steps": [{"id": "s1", "episode": "remove_leakage", "status": "done", "gate": "leakage",
                   "decision": {"choice": "drop", "by": "user"}, "title": "Remove leakage", "note": ""}],
        "dropped_columns": ["report_filed"],
        "model": {"name": "cox", "metric": "c_index", "cv_score": 0.64, "holdout_score": 0.491,
                  "features": ["age", "prio"]},
        "valid": True,
        "warnings": [],
        "llm_usage": {"calls": 0, "cost_usd": 0.0},
    }
    base.update(changes)
    return base


class Text(HTMLParser):
    """The page's visible text and its elements' ids and classes (a well-formedness check too)."""

    def __init__(self) -> None:
        super().__init__()
        self.text: list[str] = []
        self.tags: list[tuple[str, dict]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        if data.strip():
            self.text.append(data.strip())


def parsed(page: str) -> Text:
    parser = Text()
    parser.feed(page)
    return parser


def verdict(page: str) -> tuple[str, str]:
    tag = next(a for t, a in parsed(page).tags if a.get("id") == "verdict")
    text = re.search(r'id="verdict">([^<]*)<', page).group(1)
    return tag["class"], text


CHECKS = [{"check": "no leaked column is a feature", "passed": True, "detail": "report_filed dropped"},
          {"check": "holdout score beats chance", "passed": False, "detail": "holdout C-index 0.491 <= 0.5"},
          {"check": "the metric fits the task", "passed": True, "detail": "c_index for survival"}]


def test_a_failed_check_is_never_shown_next_to_a_green_valid() -> None:
    page = render_html(report(valid=True, validity=CHECKS))
    assert verdict(page) == ("verdict invalid", "not valid")
    assert "1 of 3 validity checks failed" in page and "its checklist has failed checks" in page
    rows = re.findall(r"<tr><td>([^<]*)</td><td class=\"(passed|failed)\">", page)
    assert rows == [("no leaked column is a feature", "passed"), ("holdout score beats chance", "failed"),
                    ("the metric fits the task", "passed")]
    assert "holdout C-index 0.491 &lt;= 0.5" in page
    passing = [dict(c, passed=True) for c in CHECKS]
    assert verdict(render_html(report(valid=True, validity=passing))) == ("verdict valid", "valid")
    assert verdict(render_html(report(valid=False, validity=passing))) == ("verdict invalid", "not valid")


def test_without_a_checklist_the_verdict_is_report_json_s() -> None:
    assert verdict(render_html(report(valid=True))) == ("verdict valid", "valid")
    page = render_html(report(valid=False, warnings=["metric 'r2' does not fit a survival task"]))
    assert verdict(page) == ("verdict invalid", "not valid") and "no checklist" in page
    assert "metric &#39;r2&#39; does not fit a survival task" in page


def test_the_task_line_names_the_time_of_prediction_when_the_report_has_it() -> None:
    task = {"kind": "survival", "target": "arrest", "time": "week", "id": "subject",
            "index": {"kind": "first_record", "label": "each subject's first record"}}
    assert "predicted at each subject&#39;s first record" in render_html(report(task=task))
    assert "predicted at" not in render_html(report())


def test_findings_are_sorted_by_severity() -> None:
    text = " ".join(parsed(render_html(report())).text)
    assert text.index("leak") < text.index("gaps") < text.index("a few extreme ages")


def test_the_data_is_never_markup() -> None:
    evil = "<script>alert(1)</script>"
    page = render_html(report(dropped_columns=[evil], findings=[
        {"kind": "outliers", "columns": [evil], "severity": "info", "summary": evil}]))
    assert "<script>" not in page and "&lt;script&gt;" in page


def test_the_timeline_lists_the_placed_columns_with_evidence_and_claudes_proposals() -> None:
    def placed(group, source, reason, **numbers):
        return {"group": group, "source": source, "test": "t", "reason": reason, "strong": source != "names",
                "numbers": numbers}

    timeline = {"index": "each row's own time", "groups": {}, "moves": [], "columns": {
        "age": {"column": "age", "group": "baseline", "confidence": "high", "evidence": []},
        "los_days": {"column": "los_days", "group": "during_follow_up", "confidence": "low", "evidence": [
            placed("during_follow_up", "names", "named for a later time"),
            placed("at_or_after_outcome", "proposal", "proposed by Claude from the column's name and schema: "
                   "the stay ends at discharge", by="Claude")]},
        "report_filed": {"column": "report_filed", "group": "at_or_after_outcome", "confidence": "given",
                         "evidence": [placed("at_or_after_outcome", "values", "implies the event <b>")]}}}
    page = render_html(report(timeline=timeline))
    rows = re.findall(r'<tr data-column="([^"]+)"><td><code>[^<]*</code></td><td>([^<]*)</td>', page)
    assert rows == [("los_days", "during follow up"), ("report_filed", "at or after outcome")]  # not 'age'
    assert "Predictions are made at each row&#39;s own time" in page and "⚠ to confirm" in page
    assert ("<i class=\"proposal\">proposed by Claude from the column&#39;s name and schema: the stay ends at "
            "discharge — a proposal, nothing moved</i>") in page
    assert "implies the event &lt;b&gt; (values)" in page and "set by a person" in page
    assert 'id="timeline"' not in render_html(report())


def test_light_and_dark_come_from_the_system_theme() -> None:
    page = render_html(report())
    assert "@media (prefers-color-scheme: dark)" in page and 'name="color-scheme" content="light dark"' in page
    # the charts' colours are CSS variables the dark theme redefines, not fixed fills
    assert not re.search(r'<(rect|polyline|circle)[^>]*(fill|stroke)="#', page)


def session_with_decisions(tmp_path) -> Session:
    session = Session(notebook=str(tmp_path / "nb.ipynb"), path=str(tmp_path / ".nb.ipynb.dcpilot.json"))
    finding = Finding("target_leakage", ["report_filed"], "critical", "",
                      {"metric": "c_index", "score": 0.99, "next_best_score": 0.62})
    missing = Finding("missing_values", ["wexp", "age"], "warning", "",
                      {"columns": {"wexp": {"missing_rate": 0.3}, "age": {"missing_rate": 0.05}}})
    session.findings = [finding, missing]
    session.plan = [Step(id="s1", episode="remove_leakage", title="Remove leakage: report_filed",
                         status="done", gate="leakage", finding_ids=[finding.id], decision_id="d1")]
    session.decisions = [Decision(
        id="d1", step_id="s1", gate="leakage", question="Is report_filed known before the outcome?",
        evidence=finding.evidence, columns=["report_filed"], recommended="drop",
        options=[DecisionOption("drop", "Drop it", "remove the column", "none"),
                 DecisionOption("keep", "Keep it", "", "a leaked score")],
        choice="drop", by="user", at="2026-01-01T10:00:00+00:00",
        rationale="the report is filed after the arrest",
        history=[{"choice": "keep", "by": "user", "at": "2026-01-01T09:00:00+00:00", "undone": "undo to c1"}])]
    return session


def test_every_decision_with_its_evidence_chart_choice_and_rationale(tmp_path) -> None:
    session = session_with_decisions(tmp_path)
    page = render_html(report(), report_details(session, None))
    section = re.search(r'<section class="decision" id="decision-d1">(.*?)</section>', page, re.S).group(1)
    assert "Is report_filed known before the outcome?" in section
    assert '<ul class="evidence"><li>Score: C-index 0.99, the next best 0.62</li></ul>' in section  # as the card says it
    assert "the report is filed after the arrest" in section and "decided by the expert" in section
    assert "drop (recommended) ← chosen" in section and "undo to c1" in section
    assert section.count("<svg") == 1 and section.count('class="bar over"') == 1  # 0.99 is over the threshold
    # the missingness chart of the data, bars longest first
    assert re.search(r"Missing values per column.*?>wexp<.*?>age<", page, re.S)


def test_model_charts_importance_kaplan_meier_and_calibration(tmp_path) -> None:
    model = {"metric": "c_index", "time": "week",
             "importance": [{"feature": "prio", "importance": 0.05}, {"feature": "age", "importance": 0.02},
                            {"feature": "race", "importance": -0.04}],
             "risk_groups": {name: {"time": [0.0, 10.0, 20.0], "survival": [1.0, s, s / 2], "n": 40}
                             for name, s in (("low risk", 0.9), ("medium risk", 0.8), ("high risk", 0.6))},
             "calibration": {"bins": [{"predicted": 0.1, "observed": 0.15}, {"predicted": 0.5, "observed": 0.4},
                                      {"predicted": 0.9, "observed": 0.85}]}}
    page = render_html(report(), report_details(session_with_decisions(tmp_path), model))
    model_part = page[page.index("<h2>Model</h2>"):]
    assert "Permutation importance" in model_part and "Kaplan-Meier survival by predicted risk tertile" in model_part
    assert model_part.count('<polyline class="line s') == 3  # one step curve per risk group
    assert model_part.count('<circle class="dot') == 3 and '<polyline class="reference"' in model_part
    assert "low risk (n=40)" in model_part
    # an importance below zero is no bar (not a long one), its number still shown
    assert re.search(r'>race</text>\s*<rect class="bar" x="\d+" y="\d+"\s+width="1.0"', model_part)
    assert ">-0.04<" in model_part
    # a step curve holds its value until the next time: the first point repeats at the second's x
    km = re.search(r'<polyline class="line s0" points="([^"]+)"', model_part).group(1).split()
    assert km[1].split(",")[1] == km[0].split(",")[1] and km[1].split(",")[0] == km[2].split(",")[0]


@pytest.mark.parametrize("calibration,expected", [
    ({"predicted": [0.1, 0.9], "observed": [0.2, 0.8]}, ([0.1, 0.9], [0.2, 0.8])),
    ([{"mean_predicted": 0.3, "fraction_observed": 0.25}], ([0.3], [0.25])),
    ({"bins": {"predicted": [0.5], "observed": [float("nan")]}}, None),
    ("not a calibration", None),
    (None, None),
])
def test_calibration_shapes(calibration, expected) -> None:
    assert calibration_points(calibration) == expected
