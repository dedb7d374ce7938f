"""Plan edits and decisions files, checked up front by one validator (engine/edit_checks.py) on
every host: numbers finite and in range, words from their lists, no control characters; the
documented decisions-file edits run through the command line; an approved step that fails stops
the run, and no verdict is valid while it has not run."""

from __future__ import annotations

import asyncio
import json
import math

import pytest
from engine_fakes import churn_diagnosis, finding, option
from test_cli import rossi_csv
from test_magics import magics, run, shell  # noqa: F401 (the shell fixture)
from test_magics_plan import refused
from test_persona import chat, say  # noqa: F401 (the chat fixture)
from test_plan_edits import answer_all, make, step
from test_server_sessions import Frontend, get_session, post, wait_for
from test_server_sessions_api import API, notebook_with_frame
from tornado.httpclient import HTTPClientError

from jupyter_dcpilot.cli import main
from jupyter_dcpilot.engine import decisions_file, edit_checks, plan_edits
from jupyter_dcpilot.engine.episodes import library
from jupyter_dcpilot.engine.validity import audit

NAN, INF = math.nan, math.inf
BAD_EDITS = [
    ({"op": "add", "episode": "outliers", "params": {"threshold": NAN}}, "threshold must be a finite number, not nan"),
    ({"op": "add", "episode": "outliers", "params": {"threshold": INF}}, "threshold must be a finite number, not inf"),
    ({"op": "add", "episode": "outliers", "params": {"method": "zscore"}}, "method must be one of"),
    ({"op": "add", "episode": "deduplicate", "reason": "two exports\x00merged"}, "'reason' holds the control character '\\x00'"),
    ({"op": "add", "episode": "outliers", "columns": ["age\x1b[2J"]}, "'columns' holds the control character '\\x1b'"),
    ({"op": "add", "episode": "dedupe"}, "unknown episode 'dedupe' (did you mean 'deduplicate'?)"),
]


@pytest.mark.parametrize("edit,message", BAD_EDITS)
def test_the_validator_refuses_what_no_step_can_run(edit, message):
    with pytest.raises(ValueError) as refused:
        edit_checks.check_edit(edit, library())
    assert message in str(refused.value)
    spec = {"plan": [{**edit, "op": "add"}], "*": "recommended"}
    with pytest.raises(ValueError) as refused:
        decisions_file.check(spec, "decisions file x.json")
    said = str(refused.value)  # the file's JSON Schema may name the problem first, in its words
    assert said.startswith("decisions file x.json: ") and "\n" not in said
    assert message in said or "must be one of" in said


def test_a_reason_may_hold_line_breaks_but_a_name_may_not():
    edit_checks.check_edit({"op": "add", "episode": "deduplicate", "reason": "two exports\nmerged"}, library())
    with pytest.raises(ValueError, match="'step' holds the control character"):
        edit_checks.check_edit({"op": "skip", "step": "s1\n"}, library())
    with pytest.raises(ValueError, match="decisions file x: 'leakage' holds the control character"):
        decisions_file.check({"leakage": "drop\x00"}, "decisions file x")


async def test_params_edits_on_a_live_session_refuse_nan_and_change_nothing(tmp_path):
    coord, kernel, notebook, session = make(tmp_path, policy="ask")
    await coord.run_until_blocked()
    split = step(session, "split")
    before = session.to_dict()
    for params, said in (({"test_size": NAN}, "test_size must be a finite number, not nan"),
                         ({"test_size": 0.9}, "test_size must be at most 0.5")):
        with pytest.raises(ValueError, match=said):
            await coord.edit_plan({"op": "params", "step": split.id, "params": params}, via="panel")
    assert session.to_dict()["plan"] == before["plan"] and session.plan_edits == []
    with pytest.raises(ValueError, match="must be a number, not 'nan'"):
        plan_edits.parse_pairs("outliers", ["threshold=nan"])  # the chat's and the magics' words
    with pytest.raises(ValueError, match="finite"):
        plan_edits.check(session, {"op": "params", "step": split.id,
                                   "params": plan_edits.parse_pairs("split", ["test_size=1e999"])}, coord.episodes)


async def test_an_approved_step_that_fails_stops_the_run_and_the_verdict_says_so(tmp_path):
    coord, kernel, notebook, session = make(tmp_path, policy="recommended")
    notebook.fail_on = ("kt.handle_outliers",)
    assert await coord.run_until_blocked() == "failed"
    outliers = step(session, "outliers")
    assert outliers.status == "failed" and session.decision(outliers.decision_id).by == "policy"
    assert any("approved by the approval policy); the run stops here" in w for w in session.warnings)
    assert not any(s.episode == "train_evaluate" and s.status == "done" for s in session.plan)
    checks = {c.check: c for c in audit(session, {"features": ["age"], "metric": "roc_auc"})}
    assert checks["approved_steps_ran"].passed is False and outliers.id in checks["approved_steps_ran"].detail


async def test_a_step_the_planner_chose_may_still_be_left_out(tmp_path):
    diagnosis = churn_diagnosis()
    fix = option("fix", recommended=True, function="fix_dtypes")
    diagnosis["findings"].append(finding("numeric_as_text", ["age"], None, [fix]))
    coord, kernel, notebook, session = make(tmp_path, policy="recommended", diagnosis=diagnosis)
    notebook.fail_on = ("kt.fix_dtypes",)  # no gate, nobody approved it
    assert await answer_all(coord, session) == "finished"
    assert step(session, "fix_dtypes").status == "failed"
    assert next(c for c in session.validity if c["check"] == "approved_steps_ran")["passed"] is True


DOCUMENTED = {"*": "recommended", "plan": [{"op": "skip", "episode": "outliers", "columns": ["age"]},
                                           {"op": "params", "episode": "outliers", "params": {"threshold": 3}},
                                           {"op": "add", "episode": "deduplicate"}]}


def test_the_documented_decisions_file_edits_run_through_the_command_line(tmp_path, capsys):
    data = rossi_csv(tmp_path)
    spec = tmp_path / "decisions.json"
    spec.write_text(json.dumps(DOCUMENTED))
    code = main(["run", str(data), "--target", "arrest", "--time", "week", "--approve", str(spec),
                 "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code in (0, 2) and "Traceback" not in err and "string indices" not in err, err  # before: died here
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    edits = {(e["op"], e["episode"]) for e in report["plan_edits"]}
    assert ("add", "deduplicate") in edits and all(e["via"] == "decisions file" for e in report["plan_edits"])
    assert any(s["episode"] == "deduplicate" and "added" in s["by_user"] for s in report["steps"])
    assert "edit: the user in the decisions file added" in err and "(Deduplicate" in err


@pytest.mark.parametrize("plan,said", [
    ([{"op": "params", "episode": "outliers", "params": {"threshold": NAN}}], "threshold must be a finite number, not nan"),
    ([{"op": "params", "episode": "split", "params": {"test_size": NAN}}], "test_size must be a finite number, not nan"),
    ([{"op": "add", "episode": "deduplicate", "reason": "a\x00b"}], "'reason' holds the control character '\\x00'"),
])
def test_a_bad_decisions_file_is_refused_in_one_line_before_any_kernel(tmp_path, capsys, plan, said):
    data = rossi_csv(tmp_path)
    spec = tmp_path / "decisions.json"
    spec.write_text(json.dumps({"*": "recommended", "plan": plan}))  # json writes NaN as Python reads it
    code = main(["run", str(data), "--target", "arrest", "--approve", str(spec), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 1 and said in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "out").exists()  # its time: benchmarks/bench_trust.py --only files


async def test_rest_and_chat_refuse_the_same_bad_edits_with_one_line(chat, jp_fetch, jp_ws_fetch, jp_serverapp,  # noqa: F811
                                                                     registry) -> None:
    client = await notebook_with_frame(jp_fetch, jp_serverapp, "e.ipynb")
    created = await post(jp_fetch, *API, body={"path": "e.ipynb", "frame": "df", "target": "churned"})
    ws = await jp_ws_fetch(*API, created["id"], "events")
    serving = asyncio.create_task(Frontend(ws, client).serve())
    try:
        async def blocked():
            state = await get_session(jp_fetch, created["id"])
            return state if state["state"] == "blocked" else None

        state = await wait_for(blocked, "the task question")
        split = next(s for s in state["plan"] if s["episode"] == "split")
        answers = {}
        for name, edit in (("nan", {"op": "params", "step": split["id"], "params": {"test_size": NAN}}),
                           ("nul", {"op": "add", "episode": "deduplicate", "reason": "two\x00exports"}),
                           ("inf", {"op": "add", "episode": "outliers", "params": {"threshold": INF}})):
            with pytest.raises(HTTPClientError) as refused:
                await jp_fetch(*API, created["id"], "plan", method="POST", body=json.dumps(edit))
            answers[name] = (refused.value.code, json.loads(refused.value.response.body)["message"])
        said = {"nan": await say(chat, f"set test_size=1e999 for {split['id']}"),
                "words": await say(chat, f"set test_size=nan for {split['id']}")}
        after = await get_session(jp_fetch, created["id"])
    finally:
        serving.cancel()
        ws.close()
        await registry.close()
        client.stop_channels()
    assert answers["nan"] == (400, "test_size must be a finite number, not nan")
    assert answers["nul"][0] == 400 and "'reason' holds the control character '\\x00'" in answers["nul"][1]
    assert answers["inf"][0] == 400 and "threshold must be a finite number, not inf" in answers["inf"][1]
    assert "Could not edit the plan: test_size must be a finite number, not inf" in said["nan"]
    assert "Could not read that: test_size must be a number, not 'nan'" in said["words"]
    assert after["plan_edits"] == [] and next(s for s in after["plan"] if s["id"] == split["id"])["user_params"] == {}


def test_the_magics_refuse_the_same_bad_edits(shell):  # noqa: F811
    run(shell, "dcplan", "df --target y")
    pilot = magics(shell).pilot
    split = next(s for s in pilot.session.plan if s.episode == "split")
    refused(shell, "dcparams", f"{split.id} test_size=1e999", "%dcparams: test_size must be a finite number, not inf")
    refused(shell, "dcparams", f"{split.id} test_size=nan", "test_size must be a number, not 'nan'")
    refused(shell, "dcadd", "outliers --columns x1 threshold=1e999", "%dcadd: .*threshold must be a finite number")
    assert pilot.session.plan_edits == []
