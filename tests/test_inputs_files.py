"""The command line's input checks (jupyter_dcpilot/inputs.py, before any kernel) on files that
broke them: lines beyond the csv module's 128 KiB field limit, a header cell with a line break,
a header one name short (the unnamed index pandas writes), UTF-16, NUL bytes, a repeated column
name. Each is read as pandas reads it, or refused in one line, in well under two seconds."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from jupyter_dcpilot.cli import main
from jupyter_dcpilot.inputs import InputError, check_run_inputs, frame_names, header, read_columns

RNG = np.random.default_rng(0)


def frame(n: int = 60) -> pd.DataFrame:
    return pd.DataFrame({"x": RNG.normal(size=n).round(3), "y": RNG.integers(0, 2, n)})


def as_pandas_reads(path: Path, **kwargs) -> list[str]:
    return [str(c) for c in pd.read_csv(path, **kwargs).columns]


def test_a_header_of_30000_names_and_a_200_kb_field_are_read(tmp_path):
    wide = tmp_path / "wide.csv"
    pd.DataFrame(RNG.integers(0, 9, (5, 30_000)), columns=[f"column_{i}" for i in range(30_000)]).assign(
        y=[0, 1, 0, 1, 1]).to_csv(wide, index=False)  # a 400 KB header line
    note = tmp_path / "note.csv"
    frame().assign(note=["short"] * 59 + ["z" * 200_000]).to_csv(note, index=False)
    assert len(header(wide)) == 30_001 and header(note) == ["x", "y", "note"]
    assert check_run_inputs([wide], target="y") == [] and check_run_inputs([note], target="y") == []


def test_a_data_line_larger_than_pyarrows_block_is_read(tmp_path):
    path = tmp_path / "long.csv"
    path.write_text("a,note,y\n1," + "q" * 3_000_000 + ",1\n2,b,0\n3,c,1\n")
    assert read_columns(path, ["y"]).column("y").to_pylist() == ["1", "0", "1"]


def test_a_header_cell_with_a_line_break_is_one_name(tmp_path):
    path = tmp_path / "newline.csv"
    frame().rename(columns={"x": "age\n(years)"}).to_csv(path, index=False)
    assert header(path) == as_pandas_reads(path) == ["age\n(years)", "y"]
    check_run_inputs([path], target="y")
    assert read_columns(path, ["y"]).num_rows == 60


@pytest.mark.parametrize("written", ["one name short", "an empty first name"])
def test_the_index_pandas_writes_is_read_as_pandas_reads_it(tmp_path, written):
    path = tmp_path / "indexed.csv"
    data = frame().set_axis(range(100, 160))
    if written == "an empty first name":
        data.to_csv(path)  # ",x,y" — pandas calls it "Unnamed: 0"
    else:
        path.write_text("x,y\n" + "".join(f"{i},{x},{y}\n" for i, x, y in data.itertuples()))
    assert header(path) == as_pandas_reads(path)
    check_run_inputs([path], target="y")
    assert read_columns(path, ["y"]).column("y").to_pylist() == [str(v) for v in data["y"]]


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le"])
def test_utf16_is_read(tmp_path, encoding):
    path = tmp_path / "wide_chars.csv"
    frame().rename(columns={"x": "größe"}).to_csv(path, index=False, encoding=encoding)
    assert header(path) == ["größe", "y"]
    check_run_inputs([path], target="y")


def test_a_binary_file_and_a_repeated_name_are_refused_by_name(tmp_path):
    packed = tmp_path / "data.csv"
    packed.write_bytes(gzip.compress(frame().to_csv(index=False).encode()) + b"\x00" * 64)
    with pytest.raises(InputError, match="cannot read data.csv as CSV: data.csv holds NUL bytes: it is not a text"):
        check_run_inputs([packed], target="y")
    twice = tmp_path / "twice.csv"
    twice.write_text("x,y,z,y\n" + "".join(f"{i},{i % 2},{i},{1 - i % 2}\n" for i in range(40)))
    with pytest.raises(InputError, match=r"twice.csv repeats column names: 'y' \(columns 2, 4\)"):
        check_run_inputs([twice], target="x")


@pytest.mark.parametrize("make,said", [
    (lambda p: p.write_text("x,y,y\n1,0,1\n2,1,0\n"), "repeats column names: 'y' (columns 2, 3)"),
    (lambda p: p.write_bytes(b"PK\x03\x04\x00\x00" * 50), "holds NUL bytes"),
    (lambda p: p.write_text(",".join(f"c{i}" for i in range(30_000)) + "\n" + ",".join("1" * 30_000) + "\n"),
     "--target 'y' is not a column"),
])
def test_every_bad_file_is_one_line_and_writes_nothing(tmp_path, capsys, make, said):
    path = tmp_path / "bad.csv"
    make(path)
    code = main(["run", str(path), "--target", "y", "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 1 and said in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert not (tmp_path / "out").exists()  # its time: benchmarks/bench_trust.py --only files


def test_extra_files_are_loaded_under_their_own_names_when_those_are_free_python_names():
    """The questions and the notebook said 'df_3' of a lab file; they say 'labevents' now. A name
    that would shadow Python's own, a library, another file's or the data frame falls back."""
    paths = [Path(p) for p in ("/d/admissions.csv", "/d/labevents.csv.gz", "/e/Chart-Events 2021.csv",
                               "/d/list.csv", "/d/pd.parquet", "/f/labevents.csv", "/d/2019.csv",
                               "/d/df_old.csv", "/d/cohort.RData:visits", "/d/class.csv")]
    assert frame_names(paths) == ["df", "labevents", "chart_events_2021", "df_4", "df_5", "df_6", "df_7",
                                  "df_8", "cohort", "df_10"]
    assert frame_names(paths[:1]) == ["df"]
