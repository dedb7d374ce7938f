"""The codebook on every host, and what the engine makes of it: the CLI's --dictionary (checked
before any kernel starts), labelled Stata/SPSS files as inputs, %dcplan/%dccheck --dictionary,
the server's start request (a path next to the notebook, never outside the server root), the
chat's "using `codebook.csv`", the REDCap episode, the verdict's `documented` check, and the
decisions report.json/html say rested on the codebook."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from codebook_data import labelled_frame, labelled_stata, redcap_project
from IPython.core.error import UsageError

from jupyter_dcpilot.cli import main
from jupyter_dcpilot.engine.codebook import codebook_citation
from jupyter_dcpilot.engine.episodes import episode_for, library
from jupyter_dcpilot.engine.notebook import load_cell
from jupyter_dcpilot.engine.report import build_report
from jupyter_dcpilot.engine.report_html import render_html, report_details
from jupyter_dcpilot.engine.session import Decision, Session, Step
from jupyter_dcpilot.engine.task import Inputs, Task
from jupyter_dcpilot.engine.validation import problem
from jupyter_dcpilot.engine.validity import audit
from jupyter_dcpilot.engine.wire import DecisionOption
from jupyter_dcpilot.inputs import InputError, check_dictionary, check_run_inputs, header, read_columns
from jupyter_dcpilot.jupyter_ai_persona import START, parse_start
from jupyter_dcpilot.magics import read_codebook
from jupyter_dcpilot.request_limits import SESSION_BODY
from jupyter_dcpilot.server_sessions import SessionRegistry
from kernel_tools.findings import Finding
from kernel_tools.privacy import forget_private

pytest.importorskip("pyreadstat")


@pytest.fixture(autouse=True)
def _no_marks():
    forget_private()
    yield
    forget_private()


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> dict[str, Path]:
    return redcap_project(tmp_path_factory.mktemp("redcap"), n=120)


# -- inputs: labelled files and the codebook, checked before any kernel starts ----------------------
def test_labelled_files_are_inputs_read_by_their_header(tmp_path) -> None:
    import pyreadstat

    dta = labelled_stata(tmp_path / "cohort.dta", n=80)
    sav = tmp_path / "cohort.sav"
    pyreadstat.write_sav(labelled_frame(80), str(sav), column_labels={"v5": "Systolic BP at 6 months"})
    for path in (dta, sav):
        assert header(path) == ["pid", *[f"v{i}" for i in range(1, 10)], "died"]
        assert check_run_inputs([path], target="died", entity="pid") == []
    with pytest.raises(InputError, match=r"--target 'dead' is not a column of cohort.dta \(did you mean 'died'\?\)"):
        check_run_inputs([dta], target="dead")
    (tmp_path / "broken.dta").write_bytes(b"not stata")
    with pytest.raises(InputError, match="cannot read broken.dta"):
        header(tmp_path / "broken.dta")


def test_the_target_of_a_labelled_file_is_checked_on_its_codes(tmp_path) -> None:
    frame = labelled_frame(60).assign(died=1)
    import pyreadstat

    path = tmp_path / "one.dta"
    pyreadstat.write_dta(frame, str(path), variable_value_labels={"died": {0: "Alive", 1: "Died"}})
    with pytest.raises(InputError, match="--target 'died' has the single value 1"):
        check_run_inputs([path], target="died")


def test_a_codebook_is_checked_in_one_line(project, tmp_path) -> None:
    export, dictionary, mapping = project["export"], project["dictionary"], project["mapping"]
    assert check_dictionary(dictionary, [export], mapping) == []
    cases = [
        (tmp_path / "absent.csv", [export], None, "--dictionary file not found"),
        (dictionary, [export], tmp_path / "nomap.csv", "--events file not found"),
        (export, [export], None, "--dictionary export.csv cannot be read as a codebook: export.csv is not a "
                                 "codebook"),
        (dictionary, [labelled_stata(tmp_path / "other.dta", n=40)], None,
         "--dictionary dictionary.csv describes none of the 11 columns of other.dta (its fields: 'record_id'"),
    ]
    for path, data, events, message in cases:
        with pytest.raises(InputError) as refused:
            check_dictionary(path, data, events)
        assert str(refused.value).startswith(message) and "\n" not in str(refused.value)
    partial = tmp_path / "partial.md"
    partial.write_text("| variable | description |\n|---|---|\n| age | Age (years) |\n")
    assert check_dictionary(partial, [export]) == ["--dictionary partial.md describes only 1 of the 29 columns"]


@pytest.mark.parametrize("options,message", [
    (["--events", "{mapping}"], "error: --events (REDCap's instrument-event mapping) needs --dictionary"),
    (["--dictionary", "{export}"], "error: --dictionary export.csv cannot be read as a codebook"),
    (["--dictionary", "{dictionary}", "--engine", "dask"], "error: a codebook (--dictionary, or a Stata/SPSS/SAS "
                                                            "file's labels) is not read for Dask frames yet"),
])
def test_the_cli_refuses_a_codebook_it_cannot_use_before_any_kernel_starts(project, tmp_path, capsys, options,
                                                                         message) -> None:
    names = {k: str(v) for k, v in project.items()}
    out = tmp_path / "out"
    code = main(["run", names["export"], "--target", "death", *[o.format(**names) for o in options],
                 "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 1 and message in err and len([line for line in err.splitlines() if "error:" in line]) == 1
    assert not out.exists()


def test_the_load_cell_reads_the_codebook_beside_the_data(project, tmp_path) -> None:
    cell = load_cell([str(project["export"])], ["df"], dictionary=str(project["dictionary"]),
                     events=str(project["mapping"]))
    assert (f"df_codebook = kt.read_dictionary({str(project['dictionary'])!r}, events={str(project['mapping'])!r})"
            in cell)
    # a labelled file is its own codebook: read with the data, not twice
    dta = labelled_stata(tmp_path / "cohort.dta", n=40)
    cell = load_cell([str(dta)], ["df"], dictionary=str(dta))
    assert "df, df_codebook = kt.read_file(" in cell and "read_dictionary" not in cell
    namespace: dict = {}
    exec(cell, namespace)  # the notebook's first cell runs with only kernel_tools
    assert namespace["df_codebook"].field("v5").label == "Systolic BP at the 6-month visit (mmHg)"


# -- the magics, the server's request, the chat ---------------------------------------------------
def test_the_magics_read_the_codebook_once_and_refuse_a_wrong_one(project, tmp_path) -> None:
    found = read_codebook("%dcplan", str(project["dictionary"]), str(project["mapping"]))
    assert found == {"dictionary": str(project["dictionary"]), "events": str(project["mapping"])}
    assert read_codebook("%dcplan", None, None) == {}
    with pytest.raises(UsageError, match="%dcplan: --events .* needs --dictionary"):
        read_codebook("%dcplan", None, str(project["mapping"]))
    with pytest.raises(UsageError, match=r"%dccheck: --dictionary .*export.csv: export.csv is not a codebook"):
        read_codebook("%dccheck", str(project["export"]), None)


def test_the_server_resolves_the_codebook_next_to_the_notebook_and_never_outside_its_root(project, tmp_path) -> None:
    root = tmp_path / "root"
    (root / "study").mkdir(parents=True)
    for key in ("dictionary", "mapping"):
        (root / "study" / project[key].name).write_bytes(project[key].read_bytes())
    (tmp_path / "secret.csv").write_bytes(project["dictionary"].read_bytes())
    registry = SessionRegistry(bridge=None, root_dir=str(root))  # type: ignore[arg-type]
    notebook = registry.os_path("study/nb.ipynb")
    found = registry.codebook(notebook, "dictionary.csv", "mapping.csv")
    assert found == {"dictionary": str(root / "study" / "dictionary.csv"), "events": str(root / "study" / "mapping.csv")}
    assert registry.codebook(notebook, "/study/dictionary.csv")["dictionary"] == found["dictionary"]
    assert registry.codebook(notebook, None) == {}
    for given, message in (("../../secret.csv", "is not a file under the server root"),
                           ("/../secret.csv", "is not a file under the server root"),
                           ("absent.csv", "no such file next to nb.ipynb"),
                           ("mapping.csv", "cannot be read as a codebook")):
        with pytest.raises(ValueError, match=message):
            registry.codebook(notebook, given)
    assert problem({"path": "nb.ipynb", "frame": "df", "dictionary": "dictionary.csv", "events": None},
                   SESSION_BODY, what="the request body") is None
    assert "dictionary" in (problem({"path": "nb.ipynb", "frame": "df", "dictionary": 5}, SESSION_BODY,
                                    what="the request body") or "")


@pytest.mark.parametrize("message,dictionary,events", [
    ("check `df` for `death` using `codebook.csv`", "codebook.csv", None),
    ("check `visits` for `death` with the data dictionary `dd.csv` and events `map.csv`", "dd.csv", "map.csv"),
    ("analyse df for y with the codebook labels.dta", "labels.dta", None),
    ("check df for death with time futime", None, None),
    ("check df for y events map.csv", None, None),  # events alone mean nothing
])
def test_the_chat_names_a_codebook(message, dictionary, events) -> None:
    wanted = parse_start(START.match(message))
    assert (wanted["dictionary"], wanted["events"]) == (dictionary, events)


# -- the engine: the REDCap episode, the verdict, what rested on the codebook ------------------------
def redcap_finding(dictionary: str | None = "dictionary.csv") -> dict:
    return {"id": "redcap_events:record_id", "kind": "redcap_events", "columns": ["record_id", "redcap_event_name"],
            "severity": "critical", "gate": "aggregation", "summary": "A REDCap export",
            "evidence": {"events": ["baseline_arm_1", "month_6_arm_1"], "order_from": "the event mapping",
                         "forms_from": "the event mapping", "outcome_event": "month_6_arm_1",
                         "dictionary": dictionary},
            "options": [{"id": "baseline", "label": "Baseline", "description": "", "risk": "", "recommended": True,
                         "action": {"function": "redcap_baseline", "params": {"outcome": ["death"]}}},
                        {"id": "keep", "label": "Keep", "description": "", "risk": "", "recommended": False,
                         "action": None}]}


def run_session(findings: list[dict], plan: list[Step], codebook: bool = True, features=("age", "sbp")) -> Session:
    s = Session(task=Task(kind="classification", target="death", id="record_id", index={"kind": "entity_start", "label": "each entity's first record"}),
                findings=[Finding.from_dict(f) for f in findings], diagnosis={"shape": [400, 12]})  # as the kernel sends them
    if codebook:
        s.diagnosis["codebook"] = {"source": "/data/dictionary.csv", "format": "redcap"}
    model = {"model_name": "LR", "metric": "roc_auc", "cv_score": 0.7, "holdout_score": 0.7,
             "cv_scores": [0.68, 0.7, 0.72], "features": list(features), "grouped": True, "warnings": [], "importance": []}
    s.plan = [*plan, Step(id="s9", episode="split", title="split", status="done",
                          result={"function": "split", "report": {"details": {"kind": "grouped", "test_rows": 80}}}),
              Step(id="s10", episode="train_evaluate", title="model", status="done",
                   result={"function": "fit_evaluate", "report": model,
                           "split_audit": {"train_rows": 320, "test_rows": 80, "shared_rows": 0,
                                           "shared_entities": 0, "groups": "record_id"}})]
    return s


def baseline_step() -> Step:
    return Step(id="s4", episode="redcap_baseline", title="baseline", status="done",
                result={"function": "redcap_baseline", "params": {"events": ["baseline_arm_1", "month_6_arm_1"],
                                                                   "outcome_event": "month_6_arm_1"}})


def checks(s: Session) -> dict[str, tuple[bool, str]]:
    return {c.check: (c.passed, c.detail) for c in audit(s)}


def test_a_redcap_export_is_one_step_of_its_own_episode() -> None:
    episode = episode_for(Finding.from_dict(redcap_finding()), library())
    assert episode is not None and episode.id == "redcap_baseline" and episode.gate == "aggregation"
    assert episode.stage == "pre_split" and episode.expect["rows"] == "one_per_entity"


def test_the_verdict_on_a_redcap_export() -> None:
    done = checks(run_session([redcap_finding()], [baseline_step()]))
    assert done["entities_together"] == (True, "one row per 'record_id' (its baseline event)")
    assert done["known_at_index"][0] and "'baseline_arm_1' holds; the outcome is taken from 'month_6_arm_1'" in \
        done["known_at_index"][1]
    assert done["documented"][0] and "dictionary.csv (redcap) was read" in done["documented"][1]
    kept = checks(run_session([redcap_finding()], []))  # every event a training row
    assert not kept["known_at_index"][0] and "every event of a record is a training row" in kept["known_at_index"][1]
    mean = Step(id="s4", episode="aggregate", title="aggregate", status="done",
                result={"function": "aggregate_per_entity", "params": {"how": "mean"}})
    assert not checks(run_session([redcap_finding()], [mean]))["known_at_index"][0]


def test_without_its_codebook_a_redcap_export_or_coded_names_are_not_valid() -> None:
    bare = checks(run_session([redcap_finding(None)], [baseline_step()], codebook=False))
    assert bare["documented"][0] is False and "without its data dictionary" in bare["documented"][1]
    coded = checks(run_session([], [], codebook=False, features=("v1", "v2", "v3", "v4", "age")))
    assert coded["documented"][0] is False and "4 of 5 features have names that say nothing" in coded["documented"][1]
    named = checks(run_session([], [], codebook=False, features=("age", "sbp", "x1", "x2")))
    assert "documented" not in named  # words, not codes: nothing to say


def test_report_json_and_html_list_the_decisions_that_rested_on_the_codebook() -> None:
    cited = "'hosp_days' — 'Length of hospital stay since enrolment (days)', form follow_up_visit (dictionary.csv, line 14)"
    leak = {"id": "target_leakage:hosp_days", "kind": "target_leakage", "columns": ["hosp_days"], "severity": "critical",
            "gate": "leakage", "summary": "later", "options": [],
            "evidence": {"timing": "follow_up", "source": "codebook", "citation": cited, "confidence": 0.9}}
    data_only = {"id": "outliers:sbp", "kind": "outliers", "columns": ["sbp"], "severity": "warning",
                 "gate": "outliers", "summary": "extreme", "options": [], "evidence": {"method": "iqr"}}
    s = run_session([redcap_finding(), leak, data_only], [baseline_step()])
    for i, f in enumerate((leak, redcap_finding(), data_only)):
        step = Step(id=f"g{i}", episode="x", title=f"step {i}", status="done", decision_id=f"d{i}",
                    finding_ids=[f["id"]])
        s.plan.insert(0, step)
        s.decisions.append(Decision(id=f"d{i}", step_id=step.id, gate=f["gate"], question="?", columns=f["columns"],
                                    evidence=f["evidence"], options=[DecisionOption("drop", "Drop", "", "")],
                                    recommended="drop",
                                    choice="drop", by="policy"))
    report = build_report(s, None)
    rested = report["codebook"]["decisions"]
    assert [r["decision"] for r in rested] == ["d0", "d1"] and rested[0]["citation"] == cited
    assert "in the order of the event mapping" in rested[1]["citation"]
    assert [d["codebook"] for d in report["decisions"]][2] is None
    page = render_html(report, report_details(s, None))
    assert "What the codebook decided" in page and "line 14" in page and page.count("The codebook:</b>") == 2
    assert codebook_citation({"columns": {"sbp": {"citation": "'sbp' (dictionary.csv, line 11)"}},
                              "dictionary": "dictionary.csv"}) == "'sbp' (dictionary.csv, line 11)"
    assert codebook_citation({"columns": {"sbp": {"count": 3}}}) is None


def test_read_columns_of_a_labelled_file_are_its_codes(tmp_path) -> None:
    dta = labelled_stata(tmp_path / "cohort.dta", n=50)
    table = read_columns(dta, ["v2", "died"])
    expected = pd.read_stata(dta, convert_categoricals=False)
    assert table.column("v2").to_pylist() == expected["v2"].tolist()


# -- a real server: the start request's codebook reaches the kernel's diagnosis ---------------------
@pytest.mark.slow
@pytest.mark.timeout(240)
async def test_the_panel_starts_a_session_with_the_codebook_next_to_the_notebook(
        jp_fetch, jp_serverapp, jp_root_dir, registry, tmp_path) -> None:
    import json

    from test_server_sessions import get_session, kernel_client, post, start_notebook_kernel, wait_for
    from tornado.httpclient import HTTPClientError

    files = redcap_project(jp_root_dir / "study", n=120)
    (tmp_path / "secret.csv").write_bytes(files["dictionary"].read_bytes())
    kernel_id = await start_notebook_kernel(jp_fetch, "study/nb.ipynb")
    client = kernel_client(jp_serverapp, kernel_id, "panel")
    try:
        await client.wait_for_ready(timeout=60)
        await client.execute_interactive(f"import pandas as pd\ndf = pd.read_csv({str(files['export'])!r})",
                                         timeout=60)
        body = {"path": "study/nb.ipynb", "frame": "df", "target": "death"}
        for given, message in (({"dictionary": f"../../{tmp_path.name}/secret.csv"}, "not a file under the server root"),
                               ({"dictionary": "export.csv"}, "cannot be read as a codebook"),
                               ({"events": "mapping.csv"}, "needs a dictionary")):
            with pytest.raises(HTTPClientError) as refused:
                await post(jp_fetch, "dcpilot", "api", "sessions", body={**body, **given})
            assert refused.value.code == 400 and message in json.loads(refused.value.response.body)["message"]
        created = await post(jp_fetch, "dcpilot", "api", "sessions",
                             body={**body, "dictionary": "dictionary.csv", "events": "mapping.csv"})

        async def asks():
            state = await get_session(jp_fetch, created["id"])
            return state if state["state"] == "blocked" else None

        state = await wait_for(asks, "the task question")
        found = {f["columns"][0]: f for f in state["findings"] if f["kind"] == "id_column"}
        # only the dictionary says 'hosp_ref' identifies a person
        assert found["hosp_ref"]["evidence"]["citation"].endswith("(dictionary.csv, line 8)")
        assert any(f["kind"] == "redcap_events" and f["evidence"]["order_from"] == "the event mapping"
                   for f in state["findings"])
    finally:
        await registry.close()
        client.stop_channels()


def test_a_labelled_test_file_is_read_with_its_labels_like_the_data(tmp_path) -> None:
    from jupyter_dcpilot.engine.worker import Worker

    s = Session(task=Task(kind="classification", target="died"), frame="df",
                inputs=Inputs(test_path=str(tmp_path / "test.dta")))
    worker = Worker(s, None, None, library())  # type: ignore[arg-type]
    assert f"test, _ = kt.read_file({str(tmp_path / 'test.dta')!r})" in worker._split_code("split_report", {})
    s.inputs.test_path = str(tmp_path / "test.csv")
    assert f"test = pd.read_csv({str(tmp_path / 'test.csv')!r})" in worker._split_code("split_report", {})
