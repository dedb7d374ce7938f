"""``jupyter dcpilot run DATA/ --engine dask``: a folder of Parquet files, a real kernel, a
LocalCluster in it, and the whole loop to a valid model on lazy frames."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import numpy as np
import pytest

from jupyter_dcpilot.cli import main
from jupyter_dcpilot.engine.demo import demo_frame

pytest.importorskip("dask.dataframe")
pytest.importorskip("distributed")


def parquet_folder(folder: Path) -> Path:
    data = folder / "visits"
    data.mkdir()
    for i, part in enumerate(np.array_split(demo_frame(), 3)):
        part.to_parquet(data / f"part-{i}.parquet", index=False)
    return data


@pytest.mark.slow
def test_run_with_the_dask_engine_on_a_parquet_folder(tmp_path, capsys):
    data = parquet_folder(tmp_path)
    out = tmp_path / "out"
    code = main(["run", str(data), "--target", "arrest", "--time", "week", "--engine", "dask",
                 "--approve", "recommended", "--out", str(out)])
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert code == 0 and summary["state"] == "finished"
    report = json.loads((out / "report.json").read_text())
    failed = [c for c in report["validity"] if not c["passed"]]
    assert report["valid"] is True, failed
    cells = [c.source for c in nbformat.read(out / "notebook.ipynb", 4).cells if c.cell_type == "code"]
    assert "kt.dask_client()" in cells[0] and f"dd.read_parquet({str(data)!r})" in cells[0]
    steps = "\n".join(cells)
    for call in ("kt.drop_columns(df", "kt.split(df", "imputation.apply(test)", "kt.fit_evaluate(train"):
        assert call in steps, call
    # stated in the report: the model saw an in-memory sample of whole entities
    assert any(str(w).startswith("fitted on an in-memory sample") for w in report["warnings"])
    # every finding of the last diagnosis says whether it counted every row or the sample
    session = json.loads((out / ".notebook.ipynb.dcpilot.json").read_text())
    bases = [f["evidence"].get("basis") for f in session["findings"] if f["kind"] != "suspected_leakage"]
    assert bases and set(bases) <= {"whole data", "sample"}


@pytest.mark.slow
def test_a_dask_run_flags_noisy_labels(tmp_path, capsys):
    from test_lazy_labels import visits

    data = tmp_path / "visits"
    data.mkdir()
    for i, part in enumerate(np.array_split(visits(entities=700, flip=0.06)[0], 3)):
        part.to_parquet(data / f"part-{i}.parquet", index=False)
    out = tmp_path / "out"
    code = main(["run", str(data), "--target", "label", "--id", "pid", "--engine", "dask",
                 "--approve", "recommended", "--out", str(out)])
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert code == 0 and summary["state"] == "finished" and summary["valid"] is True
    report = json.loads((out / "report.json").read_text())
    step = next(s for s in report["steps"] if s["episode"] == "label_issues")
    assert step["status"] == "done" and step["decision"]["choice"] == "flag"
    cells = "\n".join(c.source for c in nbformat.read(out / "notebook.ipynb", 4).cells if c.cell_type == "code")
    # an entity's rows judged together: folds and the sample by patient
    assert "kt.handle_label_issues(train, target='label', action='flag', groups='pid')" in cells
    session = json.loads((out / ".notebook.ipynb.dcpilot.json").read_text())
    done = next(s["result"]["report"] for s in session["plan"] if s["episode"] == "label_issues")
    details = done["details"]
    assert details["fitted_on_entities"] and 0 < details["issues"] <= details["whole_data"]["issues"]
    assert details["summary"].startswith(f"{details['whole_data']['issues']:,} of all {done['rows_in']:,} rows")


def test_a_folder_is_checked_before_any_kernel_starts(tmp_path, capsys):
    data = parquet_folder(tmp_path)
    code = main(["run", str(data), "--target", "arest", "--engine", "dask"])
    assert code == 1 and "did you mean 'arrest'" in capsys.readouterr().err
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["run", str(empty), "--target", "arrest", "--engine", "dask"]) == 1
    assert "holds no Parquet or CSV files" in capsys.readouterr().err
