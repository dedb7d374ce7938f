"""Messages say counts in words that agree ("1 interval", "2 intervals") and values as people
write them (no ``np.int64(3)``): the messages built on small generated inputs, the count 1 and
more, checked for a plural after 1 and for numpy reprs."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from jupyter_dcpilot.engine import fingerprint, reask, structure_cards
from jupyter_dcpilot.engine.structure import Structure
from jupyter_dcpilot.engine.task import Task
from kernel_tools.models.evaluate import flags_left_out
from kernel_tools.models.time_varying import fit_evaluate_intervals
from kernel_tools.plurals import counted

NOUNS = "rows|columns|intervals|events|entities|steps|findings|features|values|choices|records"
BAD_PLURAL = re.compile(rf"(?<![\d.,]){re.escape('1')} (?:\w+ )?(?:{NOUNS})\b")
NUMPY_REPR = re.compile(r"\bnp\.\w+\(|\bnp\.(True|False)_")


def well_said(message: str) -> str:
    assert not BAD_PLURAL.search(message), message
    assert not NUMPY_REPR.search(message), message
    return message


@pytest.mark.parametrize(("n", "noun", "said"), [
    (1, "row", "1 row"), (2, "row", "2 rows"), (0, "row", "0 rows"), (1, "entity", "1 entity"),
    (3, "entity", "3 entities"), (2, "day", "2 days"), (np.int64(1), "interval", "1 interval"),
    (np.int64(4), "interval", "4 intervals"), ("?", "row", "? rows"), (1, "class", "1 class"),
])
def test_a_count_agrees_with_its_noun(n, noun, said):
    assert counted(n, noun, "classes" if noun == "class" else None) == said


def intervals(empty: int) -> pd.DataFrame:
    """Chained (start, stop] intervals of 30 entities, ``empty`` of them spanning no time."""
    rng = np.random.default_rng(0)
    rows = [{"id": i, "start": k * 10, "stop": k * 10 + 10, "x": rng.normal(), "event": int(k == 2 and i % 2)}
            for i in range(30) for k in range(3)]
    frame = pd.DataFrame(rows)
    frame.loc[: empty - 1, "stop"] = frame.loc[: empty - 1, "start"]
    return frame


@pytest.mark.parametrize("empty", [1, 2])
def test_intervals_that_span_no_time_are_counted_in_agreement_and_still_read_by_the_reask(empty):
    with pytest.raises(ValueError) as raised:
        fit_evaluate_intervals(intervals(empty), id="id", start="start", stop="stop", event="event")
    message = well_said(str(raised.value))
    assert message.startswith(f"{empty} interval{'s' if empty > 1 else ''} of df ha{'ve' if empty > 1 else 's'} ")
    assert reask.EMPTY_INTERVALS.search(message)  # the failure still sends the run back to its question


@pytest.mark.parametrize("missing", [1, 3])
def test_rows_without_an_id_are_counted_in_agreement_on_the_task_card(missing):
    task = Task(kind="classification", target="y", id="pid", id_missing=missing)
    question = structure_cards.task_card(task, Structure())
    for text in [question.question, *(f"{o.label} {o.description} {o.risk}" for o in question.options)]:
        well_said(text)
    assert f"the {missing} row{'s' if missing > 1 else ''} without an id" in question.options[0].risk


def test_a_frame_of_one_row_is_said_as_one_row():
    stored = {"name": "df", "rows": 5, "columns": ["a"], "dtypes": {"a": "int64"}}
    assert well_said(fingerprint.difference(stored, {**stored, "rows": np.int64(1)}) or "") == (
        "'df' has 1 row, the session's had 5")


def test_flag_columns_left_out_of_the_model_are_named_not_listed_as_python():
    one, two = flags_left_out(["prio_outlier"]), flags_left_out(["a_outlier", "b_missing"])
    assert one.startswith("the flag column 'prio_outlier' a cleaning step added is not a feature: it describes")
    assert two.startswith("the flag columns 'a_outlier', 'b_missing' cleaning steps added are not features: they")
    assert "[" not in one + two  # was "flag columns ['prio_outlier'] added by cleaning steps are not features"


def test_the_notebooks_decision_record_says_evidence_in_words_and_each_option_once():
    from jupyter_dcpilot.engine.notebook import decision_markdown
    from jupyter_dcpilot.engine.session import Decision, Step
    from jupyter_dcpilot.engine.wire import DecisionOption

    question = "'leak' may give the outcome away: on its own it predicts the outcome (C-index 0.908)."
    decision = Decision(id="d2-abc", step_id="s2", gate="leakage", question=question, columns=["leak"],
                        evidence={"metric": "c_index", "score": 0.9077, "rank": 1, "features_scored": 9,
                                  "sample_size": 1087, "next_best_score": 0.6321,
                                  "reason": "on its own it predicts the outcome (C-index 0.908)"},
                        options=[DecisionOption("drop", "Drop leak", "Remove leak before modelling.", "loses it"),
                                 DecisionOption("keep", "Keep as is", "Keep it: it is known before the outcome.",
                                                "an inflated score")], recommended="drop")
    text = decision_markdown(decision, Step(id="s2", episode="remove_leakage", title="Drop leak"))
    well_said(text)
    assert ("*Evidence:*\n- Score: C-index 0.908, ranked 1 of 9 features scored, the next best 0.632\n"
            "- On a sample of 1,087 rows\n") in text
    assert "features_scored =" not in text and "metric = c_index" not in text
    assert "| **Drop leak** (`drop`, recommended) | Remove leak before modelling. | loses it |" in text
    assert "| **Keep as is** (`keep`) | Keep it: it is known before the outcome. |" in text
    assert "Keep as is: Keep it" not in text
