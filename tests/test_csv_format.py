"""CSV files written as spreadsheets and lab systems write them: the format is found, the load
cell says it, and the frame read is the one that was written."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from lifelines.datasets import load_kidney_transplant, load_regression_dataset

from jupyter_dcpilot.csv_format import CsvFormat, sniff
from jupyter_dcpilot.engine.notebook import load_cell
from jupyter_dcpilot.inputs import InputError, check_run_inputs, header

SHARED = Path("/work/shared/data")
REAL = [SHARED / "dseval-bank-churn" / "Customer-Churn-Records.csv",
        SHARED / "uci-obesity" / "ObesityDataSet_raw_and_data_sinthetic.csv",
        SHARED / "spaceship-titanic" / "train.csv"]

# how the same table is written elsewhere: (to_csv arguments, the format expected back)
DIALECTS = [
    ({"sep": ";", "decimal": ",", "encoding": "cp1252"}, CsvFormat(";", ",", None, "cp1252")),
    ({"sep": "\t"}, CsvFormat("\t")),
    ({"sep": "|"}, CsvFormat("|")),
    ({"encoding": "utf-8-sig"}, CsvFormat()),
    ({}, CsvFormat()),
]


def _tables() -> list[tuple[str, pd.DataFrame]]:
    tables = [("lifelines regression", load_regression_dataset()),
              ("lifelines kidney", load_kidney_transplant())]
    tables += [(p.name, pd.read_csv(p)) for p in REAL if p.exists()]
    return tables


@pytest.mark.parametrize("name,table", _tables(), ids=lambda v: v if isinstance(v, str) else "")
def test_real_tables_written_in_other_dialects_read_back_the_same(tmp_path, name, table):
    if any(table[c].astype(str).str.contains(r"[^\x00-\xff]").any() for c in table.select_dtypes("object")):
        pytest.skip("text outside Windows-1252")
    table = table.assign(site=["Zürich", "Genève", "Basel"] * (len(table) // 3) + ["Genève"] * (len(table) % 3))
    for args, expected in DIALECTS:
        path = tmp_path / "t.csv"
        table.to_csv(path, index=False, **args)
        found = sniff(path)
        if expected.decimal == "," and not len(table.select_dtypes("float").columns):
            expected = CsvFormat(expected.sep, ".", None, expected.encoding)  # nothing shows the mark
        assert found == expected, (name, args)
        assert header(path) == [str(c) for c in table.columns]
        pd.testing.assert_frame_equal(pd.read_csv(path, **found.read_csv_args()), table, check_dtype=False)


def test_hand_written_files(tmp_path):
    eu = tmp_path / "eu.csv"
    eu.write_text("id;weight_kg;city;outcome;days\n1;72,5;Zürich;0;10,5\n2;1.234,5;Genève;1;3\n"
                  "3;80;Basel;0;7\n", encoding="cp1252")
    assert sniff(eu) == CsvFormat(";", ",", ".", "cp1252")
    frame = pd.read_csv(eu, **sniff(eu).read_csv_args())
    assert frame["weight_kg"].tolist() == [72.5, 1234.5, 80.0] and frame["city"][1] == "Genève"
    quoted = tmp_path / "quoted.csv"  # semicolons inside quoted text do not make it a ;-file
    quoted.write_text('id,name,y\n1,"Smith; John",0\n2,"Doe; Jane",1\n3,"Roe, R",0\n')
    assert sniff(quoted) == CsvFormat()
    single = tmp_path / "single.csv"  # one column: nothing to split
    single.write_text("y\n1\n0\n1\n")
    assert sniff(single) == CsvFormat()
    dates = tmp_path / "dates.csv"  # dates with dots and no decimal comma: a point stays the mark
    dates.write_text("id;visit;sbp\n1;01.02.2020;120.5\n2;03.04.2021;130\n")
    assert sniff(dates) == CsvFormat(";")


def test_the_load_cell_reads_as_written_and_the_checks_see_the_columns(tmp_path):
    eu = tmp_path / "eu.csv"
    eu.write_text("id;weight_kg;outcome;days;site\n"
                  + "".join(f"{i};{60 + i},5;{i % 2};{i},25;Zürich\n" for i in range(30)), encoding="cp1252")
    cell = load_cell([str(eu)], ["df"])
    assert f"pd.read_csv({str(eu.resolve())!r}, sep=';', decimal=',', encoding='cp1252')" in cell
    namespace: dict = {}
    exec(cell, namespace)
    assert namespace["df"]["weight_kg"].dtype == float and namespace["df"]["days"].iloc[3] == 3.25
    # the run's checks before a kernel starts read the same columns; a decimal comma is a number
    assert check_run_inputs([eu], target="outcome", time="days") == []
    with pytest.raises(InputError, match="did you mean 'outcome'"):
        check_run_inputs([eu], target="outcomes")
    dask_cell = load_cell([str(eu)], ["df"], engine="dask")
    assert "dd.read_csv(" in dask_cell and "sep=';', decimal=','" in dask_cell


@pytest.mark.parametrize("name,table", _tables()[:2], ids=lambda v: v if isinstance(v, str) else "")
def test_lines_above_the_header_are_skipped_in_the_load_cell_and_the_checks(tmp_path, name, table):
    path = tmp_path / "export.csv"
    for args, preamble in [({}, "Kidney study export\nGenerated 2024-01-01 by LabSys\n\n"),
                           ({"sep": ";", "decimal": ","}, "Title;\n")]:
        with open(path, "w") as fh:
            fh.write(preamble)
            table.to_csv(fh, index=False, **args)
        found = sniff(path)
        assert found.skiprows == preamble.count("\n"), name
        pd.testing.assert_frame_equal(pd.read_csv(path, **found.read_csv_args()), table, check_dtype=False)
        assert header(path) == [str(c) for c in table.columns]
        assert check_run_inputs([path], target=str(table.columns[-1])) == []
        assert f"skiprows={found.skiprows}" in load_cell([str(path)], ["df"])
        assert f"skiprows={found.skiprows}" in load_cell([str(path)], ["df"], engine="dask")


def test_a_file_that_starts_with_its_header_skips_nothing(tmp_path):
    ragged = tmp_path / "ragged.csv"  # a short first data line is not a preamble: it is below the header
    ragged.write_text("a,b,c\n1,2\n" + "".join(f"{i},{i},{i}\n" for i in range(20)))
    assert sniff(ragged).skiprows == 0
