"""The magics' decision cards (ipywidgets) and their impact chart, drawn in HTML."""

from __future__ import annotations

import re

from jupyter_dcpilot.engine.session import Decision
from jupyter_dcpilot.engine.wire import DecisionOption, Impact
from jupyter_dcpilot.widget_cards import DecisionCard, closed_text, impact_html

LONG = "One row per entity (first record), the later visits dropped before the split"


def _impact(mean: float, sd: float = 0.01, flags: list[str] | None = None) -> Impact:
    return Impact(metric="roc_auc", mean=mean, sd=sd, rows=100, columns=3, top_features=[], flags=flags or [])


def _decision() -> Decision:
    options = [
        DecisionOption(id="first", label=LONG, description="", risk="", action={"function": "first_record"},
                       impact=_impact(0.829)),
        DecisionOption(id="mean", label="Mean over records", description="", risk="",
                       action={"function": "mean_records"},
                       impact=_impact(0.911, flags=["every record is a training row"])),
        DecisionOption(id="keep", label="Keep as is", description="", risk="", impact=_impact(0.75)),
        DecisionOption(id="skip", label="Skip", description="", risk="", impact=_impact(0.75)),
    ]
    return Decision(id="d1", step_id="s1", gate="aggregation", question="Which record per entity?",
                    options=options, recommended="first",
                    impact={"status": "done", "best": "first", "perturbations": 5, "note": "on 100 rows"})


def _rows(page: str) -> dict[str, str]:
    parts = page.split('class="dcpilot-impact-row" ')[1:]
    return {re.match(r'data-option="([^"]+)"', p).group(1): p for p in parts}  # type: ignore[union-attr]


def test_the_chart_marks_the_recommended_option_and_the_best_only_among_valid_ones():
    page = impact_html(_decision())
    rows = _rows(page)
    assert set(rows) == {"first", "mean", "keep"}  # "skip" leaves the data as "keep" does: shown once
    assert "recommended" in rows["first"] and "best valid score" in rows["first"]
    assert "best valid score" not in rows["mean"] and "not valid" in rows["mean"]
    assert "every record is a training row" in rows["mean"] and "0.911 ± 0.010" in rows["mean"]
    assert LONG in rows["first"]  # the whole label, never cut
    assert "AUROC" in page and "roc_auc" not in page


def test_an_older_estimate_whose_best_is_flagged_colours_no_option_as_best():
    decision = _decision()
    decision.impact = {"status": "done", "best": "mean"}
    assert "best valid score" not in impact_html(decision)


def test_no_chart_before_an_estimate_and_a_running_one_says_so():
    decision = _decision()
    decision.impact = None
    assert impact_html(decision) == ""
    for o in decision.options:
        o.impact = None
    decision.impact = {"status": "running", "options": ["first", "mean", "keep"]}
    page = impact_html(decision)
    assert "estimating…" in page and "…</span>" in _rows(page)["first"]


def test_a_card_redraws_its_chart_and_once_closed_says_who_answered():
    decision = _decision()
    chosen: list[tuple[str, str, str]] = []
    card = DecisionCard(decision, "Aggregate", lambda *a: chosen.append(a))
    assert "best valid score" in card.impact.value and "★" in card.buttons["first"].description
    decision.options[0].impact = _impact(0.7)
    card.show_impact()
    assert "0.700" in card.impact.value
    card.rationale.value = "visits after the first are follow-up"
    card.buttons["first"].click()
    assert chosen == [("d1", "first", "visits after the first are follow-up")]
    decision.choice, decision.by, decision.at = "first", "user", "2026-11-27T21:30:00"
    card.close()
    assert all(b.disabled for b in card.buttons.values()) and card.rationale.disabled
    assert LONG in card.status.value and "21:30" in card.status.value


def test_a_closed_card_with_an_open_question_says_whether_it_waits_its_turn_or_asks_nothing():
    assert closed_text(_decision()).startswith("No longer asked")
    assert closed_text(_decision(), still_open=True).startswith("Not asked now: another question comes first")


def test_the_cards_evidence_is_words_not_key_value_pairs():
    decision = _decision()
    decision.question = "'leak' may give the outcome away: on its own it predicts the outcome almost perfectly (AUROC 0.998)."
    decision.evidence = {"metric": "roc_auc", "score": 0.99763, "rank": 1, "features_scored": 3, "sample_size": 200,
                         "next_best_score": 0.59941, "reason": "on its own it predicts the outcome almost perfectly "
                         "(AUROC 0.998)", "missing_share": 0.25, "rows": [1, 2]}
    card = DecisionCard(decision, "Remove leakage: leak", lambda *a: None)
    evidence = card.header.value.split("Evidence: ")[1]
    assert evidence.startswith("Score: AUROC 0.998, ranked 1 of 3 features scored, the next best 0.599; "
                               "On a sample of 200 rows; Missing share: 25%; Rows: 1, 2</small>")
    assert "=" not in evidence and "roc_auc" not in evidence and "on its own" not in evidence  # said once
