"""``--out`` cannot cost the user a file (jupyter_dcpilot/outputs.py): a new or empty folder,
or one the co-pilot wrote before (its marker file); never an input, never a file it did not
write; ``--force`` replaces only its own earlier outputs. Every refusal is one line, before any
kernel starts, and every file the user had is byte for byte the same afterwards."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from test_cli import rossi_csv

from jupyter_dcpilot import outputs
from jupyter_dcpilot.cli import main
from jupyter_dcpilot.inputs import InputError


def hashes(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def refused(capsys, argv: list[str], said: str) -> None:
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 1 and said in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err


def test_a_folder_of_the_users_an_input_inside_out_and_a_file_as_out_are_refused(tmp_path, capsys):
    work = tmp_path / "work"
    work.mkdir()
    data = rossi_csv(work)
    (work / "notebook.ipynb").write_text('{"the user": "own notebook"}')
    before = hashes(tmp_path)
    run = ["run", str(data), "--target", "arrest", "--approve", "recommended"]
    refused(capsys, [*run, "--out", str(work)], "is not empty and the co-pilot did not write it")
    refused(capsys, [*run, "--out", str(work), "--force"], "is not empty and the co-pilot did not write it")
    refused(capsys, [*run, "--out", str(data)], f"--out {data} is a file, not a folder")
    assert hashes(tmp_path) == before  # the user's notebook and data untouched, nothing added
    report = tmp_path / "mine" / "report.json"
    report.parent.mkdir()
    report.write_text("x,y\n1,0\n2,1\n3,0\n")  # the user's data, under the report's name
    outputs.record(report.parent, [])  # even in a folder the co-pilot wrote before
    before = hashes(tmp_path)
    refused(capsys, ["run", str(report), "--target", "y", "--out", str(report.parent)],
            "would write report.json over your input")
    assert hashes(tmp_path) == before


def test_its_own_outputs_are_replaced_only_with_force_and_never_a_file_it_did_not_write(tmp_path):
    out = tmp_path / "out"
    assert outputs.claim(out) == out.resolve() and (out / outputs.MARKER).is_file()
    for name in outputs.OUTPUTS:
        (out / name).write_text(f"{name} of the first run")
    outputs.record(out, outputs.OUTPUTS)
    (out / "notes.txt").write_text("the user's notes")  # a file of the user's beside them: fine
    with pytest.raises(InputError, match="holds the outputs of an earlier run .*--force replaces them"):
        outputs.claim(out)
    outputs.claim(out, force=True)
    outputs.record(out, outputs.OUTPUTS)  # as the run does once it wrote them
    (out / "report.json").write_text("the user's edit of the report")
    with pytest.raises(InputError, match="report.json was not written by the co-pilot \\(or was changed since\\)"):
        outputs.claim(out, force=True)
    assert (out / "report.json").read_text() == "the user's edit of the report"
    assert (out / "notes.txt").read_text() == "the user's notes"


def test_a_second_demo_needs_force(tmp_path, capsys):
    out = tmp_path / "demo"
    out.mkdir()
    outputs.record(out, ["rossi_checkins.csv"])
    (out / "rossi_checkins.csv").write_text("x\n1\n")
    outputs.record(out, ["rossi_checkins.csv"])
    refused(capsys, ["demo", "--out", str(out)], "holds the outputs of an earlier run (rossi_checkins.csv)")
