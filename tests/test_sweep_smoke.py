"""Smoke test of benchmarks/sweep.py (diagnose mode) on data scikit-learn and lifelines ship:
the harness runs, judges, and the task of each data set is the documented one."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
NAMES = "iris,diabetes,linnerud,ll_lung,ll_recur,ll_canadian_senators"


def _sweep():
    spec = importlib.util.spec_from_file_location("_bench_sweep", BENCH / "sweep.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_sweep_diagnose_mode_on_shipped_data(tmp_path, capsys):
    out = tmp_path / "rows.json"
    assert _sweep().main(["--mode", "diagnose", "--only", NAMES, "--json", str(out)]) == 0
    rows = {r["name"]: r for r in json.loads(out.read_text())}
    assert set(rows) == set(NAMES.split(","))
    assert {n: r["task"] for n, r in rows.items()} == {n: r["expected"] for n, r in rows.items()}
    assert rows["ll_recur"]["task_time"] == "TIME1" and rows["ll_recur"]["task_id"] == "ID"
    assert all(not r["judged"]["crash"] and not r["judged"]["false_leaks"] for r in rows.values())
    printed = capsys.readouterr().out
    assert "counts:" in printed and '"wrong_tasks": 0' in printed


def test_catalog_judges_a_wrong_task_and_a_false_leak():
    sweep = _sweep()
    ds = next(d for d in sweep.catalog() if d.name == "r_birthwt")
    row = {"task": "regression", "findings": [{"kind": "target_leakage", "columns": ["bwt"]},
                                              {"kind": "target_leakage", "columns": ["age"]}]}
    judged = sweep.judge(ds, row)
    assert judged["wrong_task"] and judged["false_leaks"] == ["age"] and judged["missed_leaks"] == []


def test_judge_counts_a_join_on_another_key_an_invented_entity_and_joined_copies():
    sweep = _sweep()
    ds = next(d for d in sweep.catalog() if d.name == "survival/pbcseq")
    assert ds.join == "id" and [stem for stem, _ in ds.extra] == ["pbcseq"]
    row = {"task": "survival", "task_id": "bili",
           "findings": [{"kind": "join_keys", "columns": ["rownames"]},
                        {"kind": "target_leakage", "columns": ["status_right"]},
                        {"kind": "id_column", "columns": ["rownames_right"]}]}
    judged = sweep.judge(ds, row)
    assert judged["wrong_join"] and judged["false_entity"]
    # the joined file's copy of the target and of its row names are no false flags
    assert judged["false_leaks"] == [] and judged["false_ids"] == []
    assert not sweep.judge(ds, {**row, "task_id": None,
                                "findings": [{"kind": "join_keys", "columns": ["id"]}]})["wrong_join"]
    # a summary of the joined file's records (kt.summarize_records): 'futime_last' is its documented leak
    summary = sweep.judge(ds, {**row, "findings": [{"kind": "target_leakage", "columns": ["futime_last"]},
                                                   {"kind": "target_leakage", "columns": ["status_last"]}]})
    assert summary["false_leaks"] == [] and summary["missed_leaks"] == []


def test_judge_wants_a_hidden_panels_blocks_numbered_by_the_run():
    sweep = _sweep()
    ds = next(d for d in sweep.catalog() if d.name == "r_Wages")
    assert ds.blocks == 7 and ds.id is None
    row = {"task": "regression", "findings": []}
    # the rows left independent: the panel's people are missed; a column of the data taken as the entity: invented
    assert sweep.judge(ds, {**row, "task_id": None})["missed_entity"]
    taken = sweep.judge(ds, {**row, "task_id": "ed", "entity_added": False})
    assert taken["missed_entity"] and taken["false_entity"]
    numbered = sweep.judge(ds, {**row, "task_id": "block", "entity_added": True})
    assert not numbered["missed_entity"] and not numbered["false_entity"]
