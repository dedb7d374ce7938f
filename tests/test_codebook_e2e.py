"""The issue's measure, end to end: ``jupyter dcpilot run ... --approve recommended`` on the
REDCap-shaped project and the labelled Stata file of ``codebook_data``, with and without the
codebook. With it: no follow-up or identifier column is a feature, the model is trained on one
row per record at baseline with the outcome from its event, the run is valid, report.json names
what rested on the codebook, and the notebook re-runs with only kernel_tools. Without it: the
run is never quietly valid (what happens is asserted)."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest
from codebook_data import (
    FOLLOW_UP,
    IDENTIFIERS,
    STATA_FOLLOW_UP,
    STATA_IDENTIFIERS,
    labelled_frame,
    labelled_stata,
    redcap_project,
)

from jupyter_dcpilot.cli import main

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]
pytest.importorskip("pyreadstat")


def run(data: Path, target: str, out: Path, *options: str) -> dict:
    assert main(["run", str(data), "--target", target, "--approve", "recommended", "--out", str(out), *options]) == 0
    return json.loads((out / "report.json").read_text())


def failed(report: dict) -> dict[str, str]:
    return {c["check"]: c["detail"] for c in report["validity"] if not c["passed"]}


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> dict[str, Path]:
    return redcap_project(tmp_path_factory.mktemp("redcap"))


def test_a_redcap_project_with_its_dictionary_is_modelled_at_baseline_and_valid(project, tmp_path) -> None:
    out = tmp_path / "with"
    report = run(project["export"], "death", out, "--dictionary", str(project["dictionary"]),
                 "--events", str(project["mapping"]))
    features = set(report["model"]["features"])
    assert not features & {*FOLLOW_UP, *IDENTIFIERS, "death_cause", "ae_term", "ae_grade"}
    assert features >= {"age", "sex", "bmi", "smoker", "sbp", "creat"}
    assert not {c for c in features if c.startswith("redcap_")}  # the export's own columns are structure
    assert report["dataset"]["rows_in"] == 1405 and report["model"]["card"]["data"]["rows_modelled"] == 320
    assert report["valid"] is True, failed(report)
    checks = {c["check"]: c["detail"] for c in report["validity"]}
    assert "'month_12_arm_1'" in checks["known_at_index"] and "(its baseline event)" in checks["entities_together"]
    steps = {s["episode"] for s in report["steps"] if s["status"] == "done"}
    assert "redcap_baseline" in steps and "aggregate" not in steps
    rested = {tuple(r["columns"]): r["citation"] for r in report["codebook"]["decisions"]}
    # the follow-up columns are dropped as one step when alike: that decision cites the codebook
    (later,) = [cols for cols in rested if "hosp_days" in cols]
    assert "(dictionary.csv, line" in rested[later] and "form" in rested[later]
    assert rested[("hosp_ref",)] == "'hosp_ref' — 'Hospital reference', form enrolment (dictionary.csv, line 8)"
    assert "in the order of the event mapping" in rested[("record_id", "redcap_event_name")]
    assert "What the codebook decided" in (out / "report.html").read_text()

    # the notebook reads the codebook in its load cell and re-runs with only kernel_tools
    from nbclient import NotebookClient

    nb = nbformat.read(out / "notebook.ipynb", as_version=4)
    assert "df_codebook = kt.read_dictionary(" in nb.cells[0].source
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(out)}}).execute()
    model = next(c for c in nb.cells if c.cell_type == "code" and "kt.fit_evaluate(" in c.source)
    assert f"{report['model']['holdout_score']:.3f}" in model.outputs[-1]["data"]["text/plain"]


def test_a_redcap_project_without_its_dictionary_is_not_valid(project, tmp_path) -> None:
    report = run(project["export"], "death", tmp_path / "without")
    features = set(report["model"]["features"])
    # the export's layout still shows the events and the forms held only later ...
    assert not features & set(FOLLOW_UP) and "redcap_baseline" in {s["episode"] for s in report["steps"]}
    # ... but the identifier flagged only in the dictionary is a feature, and the verdict says why it cannot pass
    assert "hosp_ref" in features
    # (without the codebook's order of events, the moment of prediction may be asked as well)
    assert report["valid"] is False and {"documented"} <= set(failed(report)) <= {"documented", "structure_confirmed"}
    assert "without its data dictionary" in failed(report)["documented"] and report["codebook"] is None


def test_a_labelled_stata_file_is_read_with_its_labels_and_valid(tmp_path) -> None:
    dta = labelled_stata(tmp_path / "cohort.dta")
    report = run(dta, "died", tmp_path / "dta")
    features = set(report["model"]["features"])
    assert not features & {*STATA_FOLLOW_UP, *STATA_IDENTIFIERS, "pid"} and features == {"v1", "v2", "v3", "v4"}
    assert report["valid"] is True, failed(report)
    assert report["task"]["index"]["kind"] == "row"  # not the date of birth
    # the follow-up columns' drop rests on the codebook (asked as one step when they are alike)
    assert {c for r in report["codebook"]["decisions"] for c in r["columns"]} >= set(STATA_FOLLOW_UP)

    # the same data without its labels (a CSV export): value tests see nothing, and the verdict says so
    csv = tmp_path / "cohort.csv"
    labelled_frame().to_csv(csv, index=False)
    bare = run(csv, "died", tmp_path / "csv")
    assert set(STATA_FOLLOW_UP) <= set(bare["model"]["features"])
    assert bare["valid"] is False and set(failed(bare)) == {"documented"}
    assert "names that say nothing" in failed(bare)["documented"]
