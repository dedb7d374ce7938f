"""``%dctimeline`` (issue 26, item 5): the column timeline in a kernel, grouped with its evidence,
and the expert's moves and confirmations recorded as the panel's and the chat's are (via
"magic"), read by the verdict's known_at_index and structure_confirmed; a column or a place that
is not one is one line and nothing moved. On a real in-process shell, and in a real ipykernel."""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd
import pytest
from IPython.core.error import UsageError
from test_magics import magics, run, shell  # noqa: F401 (the shell fixture)

from jupyter_dcpilot.widget_cards import TimelineCard

FRAME = (
    "import numpy as np, pandas as pd\n"
    "rng = np.random.default_rng(0); n = 200\n"
    "x1, x2 = rng.normal(size=n), rng.normal(size=n)\n"
    "y = (x1 + rng.normal(size=n) > 0).astype(int)\n"
    # named as taken at discharge, and as the turnaround of the sample behind a result: the names
    # alone place them later, with low confidence (to confirm)
    "df = pd.DataFrame({'x1': x1, 'x2': x2, 'albumin_at_discharge': rng.normal(size=n),\n"
    "                   'sample_received_min': rng.gamma(2, size=n), 'y': y})\n"
)


def frame() -> pd.DataFrame:
    space: dict = {"np": np, "pd": pd}
    exec(FRAME, space)
    return space["df"]


def checks(session) -> dict[str, tuple[bool, str]]:
    return {c["check"]: (c["passed"], c["detail"]) for c in session.validity}


def text_of(captured) -> str:
    return "\n".join(o.data.get("text/markdown") or o.data.get("text/plain", "") for o in captured.outputs)


@pytest.fixture()
def finished(shell):  # noqa: F811
    shell.user_ns["df"] = frame()
    run(shell, "dcplan", "df --target y --approve recommended")
    pilot = magics(shell).pilot
    assert pilot.session.state == "finished"
    return shell, pilot


def test_the_timeline_is_grouped_with_its_evidence_and_the_columns_to_confirm(finished):
    sh, pilot = finished
    captured = run(sh, "dctimeline")
    (shown,) = captured.outputs
    assert "application/vnd.jupyter.widget-view+json" in shown.data  # a widget card where widgets draw
    text = shown.data["text/plain"]  # and its text where they do not (a terminal)
    assert "2 to confirm" in text and "predictions at each row's own time" in text
    groups = text.split("**During follow-up**")[1]
    assert "`albumin_at_discharge` · ⚠ to confirm" in groups.split("**At or after the outcome**")[0]
    assert "`sample_received_min` · ⚠ to confirm" in groups.split("**At or after the outcome**")[1]
    assert "named as taken after the index or at the outcome" in text and "(its name)" in text
    assert "`x1`, `x2`: nothing places them after the prediction time" in text
    assert not checks(pilot.session)["structure_confirmed"][0]
    status = run(sh, "dcstatus").outputs[0].data["text/markdown"]
    assert ("**Column timeline:** 2 columns to confirm (`albumin_at_discharge`, `sample_received_min`): "
            "`%dctimeline`") in status


def test_moves_and_confirmations_are_the_experts_word_for_the_verdict(finished):
    sh, pilot = finished
    said = text_of(run(sh, "dctimeline", 'move albumin_at_discharge to baseline --why "drawn at admission"'))
    assert "'albumin_at_discharge' is now baseline (set by you)" in said
    (move,) = pilot.session.structure.moves
    assert (move.column, move.group, move.via, move.rationale, move.before) == (
        "albumin_at_discharge", "baseline", "magic", "drawn at admission", "during_follow_up")
    baseline = said.split("**Baseline**")[1].split("**During follow-up**")[0]
    assert "`albumin_at_discharge` · moved by you" in baseline
    assert "moved here from during follow-up by you with a magic: drawn at admission" in baseline
    assert not checks(pilot.session)["structure_confirmed"][0]  # one still to confirm
    status = run(sh, "dcstatus").outputs[0].data["text/markdown"]
    assert "**Column timeline:** 1 column to confirm (`sample_received_min`): `%dctimeline`" in status

    said = text_of(run(sh, "dctimeline", "confirm"))
    assert "Confirmed 'sample_received_min' where it is" in said and "nothing to confirm" in said
    assert "`sample_received_min` · confirmed by you\n  - confirmed here by you with a magic" in said
    verdict = checks(pilot.session)
    assert verdict["structure_confirmed"][0]
    # the recommended answers followed the co-pilot's guesses and dropped both columns: the
    # model holds neither, the confirmation settles the question its guess asked
    assert verdict["known_at_index"][0] and verdict["model_trained"][1].endswith("on 2 features")
    assert "kept out of the features: 'sample_received_min'" in verdict["no_follow_up"][1]
    assert pilot.session.variables["columns"] == ["x1", "x2", "y"]
    assert any("moved to at or after outcome by the user with a magic" in e["text"]
               for e in pilot.session.transcript)


def test_a_column_or_a_place_that_is_not_one_moves_nothing(finished):
    sh, pilot = finished
    before = pilot.session.to_json()
    for line, words in [("move albumin_at_discharge nosuch to follow-up", "'nosuch' is not on the column timeline"),
                        ("move x1 to later", "'later' is not a place on the timeline: say one of"),
                        ("move x1", "say where"), ("move to baseline", "name the columns"),
                        ("shift x1 to baseline", "say 'move' or 'confirm', not 'shift'"),
                        ("confirm nosuch", "'nosuch' is not on the column timeline")]:
        with pytest.raises(UsageError, match=words):
            sh.run_line_magic("dctimeline", line)
    assert pilot.session.to_json() == before and pilot.session.structure.moves == []


def test_an_unknown_column_needs_a_place_not_a_confirmation(finished):
    sh, pilot = finished
    run(sh, "dctimeline", "move x2 to unknown")
    with pytest.raises(UsageError, match="'x2' is unknown on the timeline: say where"):
        sh.run_line_magic("dctimeline", "confirm x2")
    run(sh, "dctimeline", "move x2 to follow-up")
    assert pilot.session.structure.card().columns["x2"].group == "during_follow_up"


def test_the_widget_card_moves_and_confirms_through_the_same_path(finished):
    sh, pilot = finished
    card = TimelineCard(pilot.session, pilot.move_columns, pilot.confirm_columns)
    assert card.columns.options[:2] == (("albumin_at_discharge · ⚠ to confirm", "albumin_at_discharge"),
                                        ("sample_received_min · ⚠ to confirm", "sample_received_min"))  # first
    card.columns.value = ("albumin_at_discharge",)
    card.group.value = "baseline"
    card.move.click()
    assert "now baseline" in card.status.value and 'data-column="albumin_at_discharge"' in card.body.value
    assert card.columns.options[0] == ("albumin_at_discharge", "albumin_at_discharge")  # confirmed, in its place
    card.confirm.click()
    assert [m.via for m in pilot.session.structure.moves] == ["magic", "magic"]
    assert card.confirm.disabled and checks(pilot.session)["structure_confirmed"][0]
    card.columns.value = ()
    card.move.click()
    assert "Not recorded: name the columns to move" in card.status.value


def in_group(card: TimelineCard, group: str) -> str:
    """The HTML of one group of the widget card."""
    return card.body.value.split(f'data-group="{group}"')[1].split("data-group=")[0]


def test_the_widget_card_follows_moves_made_elsewhere(finished):
    from jupyter_dcpilot.engine.hosts import Via
    from jupyter_dcpilot.engine.structure import apply_file_timeline, moved

    sh, pilot = finished
    s = pilot.session
    card = TimelineCard(s, pilot.move_columns, pilot.confirm_columns)
    assert 'data-column="albumin_at_discharge"' in in_group(card, "during_follow_up")
    card.columns.value = ("x1",)
    run(sh, "dctimeline", "move albumin_at_discharge to baseline")  # a later cell, not this card
    assert 'data-column="albumin_at_discharge"' in in_group(card, "baseline")
    assert 'data-column="albumin_at_discharge"' not in in_group(card, "during_follow_up")
    assert "moved by you" in in_group(card, "baseline")
    assert "moved here from during follow-up by you with a magic" in in_group(card, "baseline")
    # each column keeps its index (a pick the frontend sends names what it showed), said anew
    assert card.columns.options[:2] == (("albumin_at_discharge", "albumin_at_discharge"),
                                        ("sample_received_min · ⚠ to confirm", "sample_received_min"))
    assert card.columns.value == ("x1",)  # still chosen
    # the panel's (and the chat's) path: HostedSession.move_column records and announces the move so
    moved(s, s.structure.move("sample_received_min", "baseline", Via.PANEL, "now", "measured at admission"))
    assert "moved here from at or after the outcome by you in the panel: measured at admission" in in_group(
        card, "baseline")
    assert card.confirm.disabled and "nothing to confirm" in card.body.value
    apply_file_timeline(s, {"x2": "follow-up"})  # a decisions file
    assert "moved here from baseline by you in the decisions file" in in_group(card, "during_follow_up")
    card.close()  # a card taken down follows nothing
    run(sh, "dctimeline", "move x2 to baseline")
    assert 'data-column="x2"' in in_group(card, "during_follow_up")


def test_a_claude_proposal_is_shown_as_claudes_and_moves_nothing(finished):
    sh, pilot = finished
    s = pilot.session.structure
    assert s.propose("albumin_at_discharge", "baseline", "albumin is drawn at admission", "Claude")
    text = run(sh, "dctimeline").outputs[0].data["text/plain"]
    assert ("Claude proposes baseline: albumin is drawn at admission (a proposal, nothing moved: "
            "'%dctimeline move albumin_at_discharge to baseline' takes it)") in text
    assert s.card().columns["albumin_at_discharge"].group == "during_follow_up" and s.moves == []
    assert not checks(pilot.session)["structure_confirmed"][0]


def test_without_ipywidgets_the_card_is_markdown(finished, monkeypatch):
    sh, _ = finished
    monkeypatch.setitem(sys.modules, "ipywidgets", None)  # import ipywidgets raises ImportError
    (shown,) = run(sh, "dctimeline").outputs
    assert "application/vnd.jupyter.widget-view+json" not in shown.data
    assert "**Column timeline" in shown.data["text/markdown"]


@pytest.mark.slow
def test_in_a_real_kernel_the_timeline_magic_records_the_experts_word(tmp_path):
    import os
    from pathlib import Path

    from jupyter_client.manager import start_new_kernel

    import jupyter_dcpilot

    root = str(Path(jupyter_dcpilot.__file__).resolve().parent.parent)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])}
    km, kc = start_new_kernel(kernel_name="python3", cwd=str(tmp_path), env=env)
    try:
        def execute(code):
            shown: list[str] = []

            def hook(m):
                content = m["content"]
                if m["msg_type"] == "stream":
                    shown.append(content.get("text", ""))
                elif m["msg_type"] in ("display_data", "execute_result"):
                    data = content["data"]
                    shown.append(data.get("text/markdown") or data.get("text/plain", ""))
                    shown.append("[widget]" if "application/vnd.jupyter.widget-view+json" in data else "")
                elif m["msg_type"] == "error":
                    shown.append(f"{content['ename']}: {content['evalue']}")
            kc.execute_interactive(code, timeout=120, output_hook=hook)
            return "\n".join(shown)

        execute(FRAME + "%load_ext jupyter_dcpilot\n%dcplan df --target y --approve recommended")
        out = execute("%dctimeline")
        assert "[widget]" in out and "2 to confirm" in out
        out = execute("%dctimeline move albumin_at_discharge sample_received_min to baseline --why 'at admission'")
        assert "are now baseline (set by you)" in out and "nothing to confirm" in out
        assert "UsageError: %dctimeline: 'nope' is not on the column timeline" in execute("%dctimeline move nope to outcome")
        out = execute("p = get_ipython().magics_manager.registry['DCPilotMagics'].pilot\n"
                      "print([(m.column, str(m.via)) for m in p.session.structure.moves])\n"
                      "print({c['check']: c['passed'] for c in p.session.validity}['structure_confirmed'])")
        assert "[('albumin_at_discharge', 'magic'), ('sample_received_min', 'magic')]" in out and "True" in out
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
