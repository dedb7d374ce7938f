"""'Group the split by it' groups every step that takes groups: a column grouping subjects (a
matched set) that the expert chose to group the split by also keeps its groups together in the
label-issues step's folds (and out of its features), with rows outside every group each a group
of their own. A real kernel runs the whole loop from a decisions file."""

from __future__ import annotations

import json

import nbformat
import numpy as np
import pandas as pd
import pytest
from dev_tables import quiet_diagnose

import kernel_tools as kt
from jupyter_dcpilot.cli import main
from kernel_tools.transforms.label_model import fold_groups


def matched(n_sets: int = 150, seed: int = 0) -> pd.DataFrame:
    """Sets of four subjects, 8% of them outside any set (no set id), 6% of the labels flipped."""
    rng = np.random.default_rng(seed)
    n = 4 * n_sets
    set_id = np.repeat(np.arange(1000, 1000 + n_sets), 4).astype(float)
    set_id[rng.random(n) < 0.08] = np.nan
    x1, x2 = rng.normal(size=n), rng.normal(size=n)
    y = (1.5 * x1 - x2 + rng.logistic(size=n) * 0.5 > 0).astype(int)
    flip = rng.random(n) < 0.06
    y[flip] = 1 - y[flip]
    return pd.DataFrame({"id": rng.permutation(np.arange(1, n + 1)), "age": rng.integers(30, 80, n), "x1": x1,
                         "x2": x2, "set_id": set_id, "case": y})


def test_rows_without_a_group_are_each_a_group_of_their_own_in_the_label_folds():
    """Every row of class 1 lacks a set id: as one group (NaN) the class would sit in a single
    group and could not be cross-validated; each its own group, it spans many."""
    df = matched()
    df.loc[df["case"] == 1, "set_id"] = np.nan
    groups = fold_groups(df, pd.Series(True, index=df.index), "set_id")
    missing = int(df["set_id"].isna().sum())
    assert groups is not None and groups.notna().all() and groups.nunique() == df["set_id"].nunique() + missing
    out, report = kt.handle_label_issues(df, "case", groups="set_id")
    assert report.details["folds"] == 5 and "label_issue" in out.columns
    assert int(out["set_id"].isna().sum()) == missing  # the data keep their missing ids


@pytest.mark.slow
def test_a_chosen_grouping_groups_the_split_the_label_step_and_the_model(tmp_path, capsys):
    data = tmp_path / "matched.csv"
    matched().to_csv(data, index=False)
    decisions = tmp_path / "decisions.json"
    decisions.write_text(json.dumps({"*": "recommended", "identifiers": {"set_id": "group", "*": "recommended"},
                                     "label_issues": "flag"}))
    out = tmp_path / "out"
    code = main(["run", str(data), "--target", "case", "--approve", str(decisions), "--out", str(out)])
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert code == 0 and summary["state"] == "finished"
    cells = "\n".join(c.source for c in nbformat.read(out / "notebook.ipynb", 4).cells if c.cell_type == "code")
    assert "kt.split(df, target='case', groups='set_id', missing_ids='own')" in cells
    assert "kt.handle_label_issues(train, target='case', action='flag', groups='set_id')" in cells
    assert "task='classification', groups='set_id'" in cells
    session = json.loads((out / ".notebook.ipynb.dcpilot.json").read_text())
    label = next(s for s in session["plan"] if s["episode"] == "label_issues")
    assert label["status"] == "done" and label["result"]["report"]["details"]["issues"] > 0
    # once chosen, the grouping column is not a feature of any later question or step
    later = [d for d in session["decisions"] if "set_id" in d["columns"] and d["gate"] != "identifiers"]
    assert later == [], [(d["gate"], d.get("question")) for d in later]
    steps = [s["title"] for s in session["plan"] if "set_id" in s.get("columns", [])]
    assert steps == ["Group the split by it: set_id"], steps  # what the answer did


def test_a_chosen_grouping_column_is_no_feature_entity_or_question_of_the_diagnosis():
    """Told the grouping column the expert chose, the diagnosis neither asks about it again nor
    takes it as the entity nor flags its missing values; not told, it asks."""
    asked = quiet_diagnose(matched(), target="case")
    assert [f.columns for f in asked.by_kind("grouping_column")] == [["set_id"]]
    # the subjects' own id dropped as recommended: not told, the sets look like the entity
    df = matched().drop(columns="id")
    assert quiet_diagnose(df, target="case").task["id"] == "set_id"
    told = quiet_diagnose(df, target="case", groups="set_id")
    assert told.by_kind("grouping_column") == []
    assert told.task["id"] != "set_id"
    assert not [f.kind for f in told.findings if "set_id" in f.columns]
    with pytest.raises(KeyError, match="groups column 'site'"):
        kt.diagnose(df, target="case", groups="site")


def test_a_lazy_frame_is_told_the_chosen_grouping_column_too():
    """A Dask frame's diagnosis reads the same grouping: its entity search no longer takes the sets."""
    dd = pytest.importorskip("dask.dataframe")
    df = matched().drop(columns="id")
    assert quiet_diagnose(dd.from_pandas(df, npartitions=3), target="case").task["id"] == "set_id"
    told = quiet_diagnose(dd.from_pandas(df, npartitions=3), target="case", groups="set_id")
    assert told.task["id"] != "set_id" and not [f.kind for f in told.findings if "set_id" in f.columns]

