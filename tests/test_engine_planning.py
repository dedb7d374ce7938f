"""The episode library (data, not code) and the deterministic rule planner."""

from __future__ import annotations

import asyncio

import kernel_tools
from jupyter_dcpilot.engine.episodes import EPISODES, STAGES, Episode, episode_for, library, step_title
from jupyter_dcpilot.engine.planners import RulePlanner
from jupyter_dcpilot.engine.session import Session, Step
from jupyter_dcpilot.engine.task import Task
from kernel_tools.findings import Finding
from kernel_tools.vocabulary import Gate, StepGate

GATES = {None, *Gate, *StepGate}  # an episode's gate is a finding's or one no finding raises
REQUIRED = {"confirm_task", "join_files", "aggregate", "remove_leakage", "drop_identifiers",
            "fix_dtypes", "normalize_categories", "convert_units", "deduplicate", "impute",
            "outliers", "label_issues", "split", "train_evaluate", "explain", "report"}


def option(id, recommended=False, function=None, **params):
    return {"id": id, "label": id, "description": id, "risk": "", "recommended": recommended,
            "action": {"function": function, "params": params} if function else None}


def finding(kind, columns, gate, options, severity="warning"):
    """A finding as a kernel sends it (its kind may be one a detector there declared), decoded."""
    return Finding.from_dict({"kind": kind, "columns": columns, "severity": severity, "summary": f"{kind} in {columns}",
                              "evidence": {"score": 0.9}, "options": options, "gate": gate})


def churn_findings():
    return [
        finding("missing_values", ["age", "income"], "imputation",
                [option("impute_auto", True, "impute", method="auto", indicators=True, target="y"),
                 option("impute_median", False, "impute", method="median"), option("keep")]),
        finding("id_column", ["customer_id"], None,
                [option("drop", True, "drop_columns", columns=["customer_id"], reason="identifier"),
                 option("keep")]),
        finding("target_leakage", ["complained"], "leakage",
                [option("drop", True, "drop_columns", columns=["complained"], reason="leak"),
                 option("keep")], severity="critical"),
        finding("numeric_as_text", ["income"], None,
                [option("fix", True, "fix_dtypes", columns=["income"], na_tokens=["n/a"], sentinels={})]),
        finding("numeric_as_text", ["age"], None,
                [option("fix", True, "fix_dtypes", columns=["age"], na_tokens=["?"], sentinels={"age": [-1]})]),
        finding("class_imbalance", ["y"], None, [option("keep", True)], severity="info"),
    ]


def test_library_entries_are_complete_and_consistent():
    ids = [e.id for e in EPISODES]
    assert REQUIRED <= set(ids) and len(ids) == len(set(ids))
    public = set(kernel_tools.__all__)
    for ep in EPISODES:
        assert ep.stage in STAGES, ep.id
        assert ep.gate in GATES, ep.id
        assert ep.function is None or ep.function in public, (ep.id, ep.function)
        assert ep.coordinator and ep.worker, ep.id
        assert set(ep.changes) <= {"df", "train", "test", "model"}, ep.id
    orders = [e.order for e in EPISODES]
    assert orders == sorted(orders)


def test_findings_map_to_episodes_by_kind_then_by_recommended_call():
    eps = library()
    assert episode_for(finding("target_leakage", ["x"], "leakage", []), eps).id == "remove_leakage"
    assert episode_for(finding("repeated_measurements", ["pid"], "aggregation", []), eps).id == "aggregate"
    unknown_leak = finding("brand_new_kind", ["x"], "leakage", [option("drop", True, "drop_columns", columns=["x"])])
    assert episode_for(unknown_leak, eps).id == "remove_leakage"
    unknown_fill = finding("brand_new_kind", ["x"], None, [option("fill", True, "impute", method="median")])
    assert episode_for(unknown_fill, eps).id == "impute"
    assert episode_for(finding("class_imbalance", ["y"], None, [option("keep", True)]), eps) is None


def test_adding_an_episode_is_adding_one_entry():
    extra = Episode(id="winsorize_money", name="Winsorise money", stage="post_split", order=14,
                    when={"finding_kinds": ("heavy_tail",)}, gate="outliers",
                    function="handle_outliers", params={"action": "clip"},
                    changes=("train", "test"), coordinator="c", worker="w")
    eps = library((extra,))
    session = Session(task=Task(kind="regression", target="y"))
    session.findings = [finding("heavy_tail", ["price"], None, [option("clip", True, "handle_outliers")])]
    steps = RulePlanner(eps).propose(session)
    step = next(s for s in steps if s.episode == "winsorize_money")
    assert step.gate == "outliers" and step.columns == ["price"]


def test_rule_planner_orders_work_and_gates_per_finding():
    session = Session(task=Task(kind="classification", target="y"))
    session.findings = churn_findings()
    steps = RulePlanner().propose(session)
    assert [s.episode for s in steps] == [
        "confirm_task", "fix_dtypes", "remove_leakage", "drop_identifiers", "split", "impute",
        "train_evaluate", "explain", "report"]
    by_ep = {s.episode: s for s in steps}
    assert by_ep["remove_leakage"].gate == "leakage"
    assert by_ep["remove_leakage"].finding_ids == ["target_leakage:complained"]
    assert by_ep["impute"].gate == "imputation" and by_ep["confirm_task"].gate == "task"
    assert by_ep["drop_identifiers"].gate == "identifiers"  # never silently a feature, nor silently dropped
    # the two dtype findings become one call with their parameters merged
    fix = by_ep["fix_dtypes"]
    assert fix.params["columns"] == ["income", "age"]
    assert fix.params["na_tokens"] == ["n/a", "?"] and fix.params["sentinels"] == {"age": [-1]}
    assert len(fix.finding_ids) == 2


def test_rule_planner_skips_handled_findings_excluded_options_and_done_episodes():
    session = Session(task=Task(kind="classification", target="y"))
    session.findings = churn_findings()
    session.plan = [Step(id="s1", episode="confirm_task", title="t", status="done"),
                    Step(id="s2", episode="split", title="split", status="done")]
    session.handled = ["target_leakage:complained"]
    session.exclusions = {"missing_values:age,income": ["impute_auto", "impute_median", "keep"]}
    steps = RulePlanner().propose(session)
    episodes = [s.episode for s in steps]
    # after the split, pre-split fixes are no longer proposed; every imputation option was excluded
    assert episodes == ["train_evaluate", "explain", "report"]


def test_rule_planner_marks_free_text_instructions_as_needing_the_llm():
    session = Session(task=Task(kind="classification", target="y"))
    session.instruct("log-transform income")
    update = asyncio.run(RulePlanner().revise(session))
    assert session.instructions[0]["status"] == "needs_llm"
    assert all(s.episode != "custom" for s in update.steps)
    assert "need the Claude planner" in session.transcript[-1]["text"]


def test_ungated_findings_run_their_recommended_call_or_nothing():
    session = Session(task=Task(kind="regression", target="y"))
    session.findings = [
        finding("mixed_units", ["weight"], None,
                [option("review", True), option("convert", False, "convert_units", column="weight")]),
        finding("mixed_units", ["height"], None,
                [option("convert", True, "convert_units", column="height", target_unit="cm")]),
        finding("free_text", ["notes"], None,
                [option("drop", True, "drop_columns", columns=["notes"], reason="free text")]),
    ]
    steps = {s.title: s for s in RulePlanner().propose(session)}
    assert not any("weight" in t for t in steps)  # recommended: review with the data owner
    height = steps["Normalise units: height"]
    assert (height.function, height.params) == ("convert_units", {"column": "height", "target_unit": "cm"})
    notes = next(s for s in steps.values() if s.episode == "drop_uninformative")
    assert notes.function == "drop_columns" and notes.params["columns"] == ["notes"]


def test_each_kind_of_drop_has_its_own_title():
    """A redundant copy (a joined long table's ``x_last`` next to ``x``) is not an identifier: its
    step says what it drops and what it keeps; identifiers keep theirs; together, both names."""
    rowid = finding("id_column", ["rowid"], "identifiers",
                    [option("drop", True, "drop_columns", columns=["rowid"], reason="identifier"), option("keep")])
    copy = finding("redundant_features", ["albumin", "albumin_last"], None,
                   [option("drop", True, "drop_columns", columns=["albumin_last"], reason="redundant with albumin"),
                    option("keep")], severity="info")
    session = Session(task=Task(kind="classification", target="y"))
    session.findings = [rowid, copy]
    titles = sorted(s.title for s in RulePlanner().propose(session) if s.episode == "drop_identifiers")
    assert titles == ["Drop identifiers: rowid", "Drop redundant copies: albumin_last (kept: albumin)"]
    session.findings = [copy]
    titles = [s.title for s in RulePlanner().propose(session) if s.episode == "drop_identifiers"]
    assert titles == ["Drop redundant copies: albumin_last (kept: albumin)"]
    ep = library()["drop_identifiers"]
    assert step_title(ep, [rowid, copy]) == "Drop identifiers and redundant copies: albumin_last, rowid (kept: albumin)"


def test_a_constant_column_is_dropped_as_constant_not_as_free_text():
    constant = finding("constant_column", ["site"], None,
                       [option("drop", True, "drop_columns", columns=["site"], reason="constant"), option("keep")])
    text = finding("free_text", ["notes"], None,
                   [option("drop", True, "drop_columns", columns=["notes"], reason="free text"), option("keep")])
    ep = library()["drop_uninformative"]
    assert step_title(ep, [constant]) == "Drop constant columns: site"
    assert step_title(ep, [text]) == "Drop free-text columns: notes"
    assert step_title(ep, [constant, text]) == "Drop constant columns and free-text columns: notes, site"
