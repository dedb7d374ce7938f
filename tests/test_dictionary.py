"""Reading a codebook: REDCap data dictionaries and event mappings, Table Schemas, plain codebooks
(CSV, Markdown), and the labels of Stata, SPSS and SAS files; ``read_file`` of labelled files."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from codebook_data import labelled_stata, write_dictionary, write_mapping

import kernel_tools as kt
from kernel_tools.dictionary import DictionaryError, read_events
from kernel_tools.privacy import forget_private, private_columns

pyreadstat = pytest.importorskip("pyreadstat")


@pytest.fixture(autouse=True)
def _no_marks():
    forget_private()
    yield
    forget_private()


def test_a_redcap_dictionary_is_read_with_its_own_header(tmp_path: Path) -> None:
    d = kt.read_dictionary(write_dictionary(tmp_path / "dd.csv"))
    assert d.format == "redcap" and len(d) == 18
    sex, sbp, ref, comorb = d.field("sex"), d.field("sbp"), d.field("hosp_ref"), d.field("comorb")
    assert sex.choices == {"1": "Male", "2": "Female"} and sex.form == "enrolment"
    assert d.field("smoker").choices == {"1": "Yes", "0": "No"}  # yesno: REDCap's fixed coding
    assert (sbp.minimum, sbp.maximum, sbp.units, sbp.validation) == ("60", "260", "mmHg", "number")
    assert ref.identifier and not sex.identifier
    # a checkbox is one multi-select field, exported as one 0/1 column per choice
    assert comorb.multi and comorb.columns == ["comorb___1", "comorb___2", "comorb___3"]
    assert d.field("comorb___2") is comorb and "comorb___2" in d and "comorb___9" not in d
    assert d.field("death_cause").branching == "[death] = '1'"
    # a finding cites the line the codebook says it on
    assert d.cite("hosp_days") == ("'hosp_days' — 'Length of hospital stay since enrolment (days)', form "
                                   "follow_up_visit (dd.csv, line 14)")
    assert d.field("hosp_days").units == "days"


def test_the_api_names_of_a_redcap_dictionary_and_html_in_labels(tmp_path: Path) -> None:
    path = tmp_path / "metadata.csv"
    path.write_text("field_name,form_name,section_header,field_type,field_label,select_choices_or_calculations,"
                    "field_note,text_validation_type_or_show_slider_number,text_validation_min,text_validation_max,"
                    "identifier\n"
                    "record_id,intake,,text,Record ID,,,,,,\n"
                    "note1,intake,,descriptive,<b>Read this</b>,,,,,,\n"
                    'grade,intake,,dropdown,"<span style=""color:red"">Tumour</span> grade","1, I | 2, II | 3, III",'
                    ",,,,\n"
                    "pname,intake,,text,Patient name,,,,,,y\n")
    d = kt.read_dictionary(path)
    assert list(d.fields) == ["record_id", "grade", "pname"]  # a descriptive field holds no data
    assert d.field("grade").label == "Tumour grade" and d.field("grade").choices["3"] == "III"
    assert d.field("pname").identifier


def test_the_event_mapping_orders_the_events_and_lists_their_forms(tmp_path: Path) -> None:
    d = kt.read_dictionary(write_dictionary(tmp_path / "dd.csv"), events=write_mapping(tmp_path / "map.csv"))
    assert d.event_order() == ["baseline_arm_1", "month_6_arm_1", "month_12_arm_1"]
    assert d.events[1].forms == ("labs", "follow_up_visit", "adverse_events")
    # REDCap's events CSV: ordered by arm and day offset, whatever the rows' order
    events = tmp_path / "events.csv"
    events.write_text("event_name,arm_num,day_offset,offset_min,offset_max,unique_event_name\n"
                      "Month 12,1,365,0,0,month_12_arm_1\nBaseline,1,0,0,0,baseline_arm_1\n"
                      "Month 6,1,182,0,0,month_6_arm_1\n")
    assert [e.name for e in read_events(events)] == ["baseline_arm_1", "month_6_arm_1", "month_12_arm_1"]
    bad = tmp_path / "bad.csv"
    bad.write_text("event,form\nbaseline,demo\n")
    with pytest.raises(DictionaryError, match="unique_event_name"):
        read_events(bad)


def test_a_table_schema_and_a_data_package(tmp_path: Path) -> None:
    schema = {"fields": [
        {"name": "id", "type": "integer", "title": "Participant"},
        {"name": "sex", "type": "string", "title": "Sex", "constraints": {"enum": ["F", "M"]}},
        {"name": "grade", "type": "integer", "description": "Tumour grade at diagnosis",
         "categories": [{"value": 1, "label": "low"}, {"value": 2, "label": "high"}]},
        {"name": "sbp", "type": "number", "title": "Systolic BP", "description": "at the 6-month visit (mmHg)",
         "constraints": {"minimum": 60, "maximum": 260}},
    ], "primaryKey": "id", "missingValues": ["", "NA"]}
    (tmp_path / "schema.json").write_text(json.dumps(schema))
    d = kt.read_dictionary(tmp_path / "schema.json")
    assert d.format == "table_schema" and d.primary_key == ["id"] and d.missing_values == ["", "NA"]
    assert d.field("sex").choices == {"F": "F", "M": "M"} and d.field("grade").choices == {"1": "low", "2": "high"}
    assert d.field("sbp").label == "Systolic BP: at the 6-month visit (mmHg)"
    assert (d.field("sbp").minimum, d.field("sbp").maximum, d.field("sbp").units) == ("60", "260", "mmHg")
    package = {"name": "study", "resources": [{"name": "visits", "path": "v.csv", "schema": schema},
                                              {"name": "labs", "path": "l.csv", "schema": {"fields": [{"name": "x"}]}}]}
    (tmp_path / "datapackage.json").write_text(json.dumps(package))
    with pytest.raises(DictionaryError, match="several resources.*resource="):
        kt.read_dictionary(tmp_path / "datapackage.json")
    assert list(kt.read_dictionary(tmp_path / "datapackage.json", resource="labs").fields) == ["x"]


def test_a_plain_codebook_is_matched_loosely(tmp_path: Path) -> None:
    csv = tmp_path / "codebook.csv"
    csv.write_text("Variable Name;Description;Units;Values\n"
                   "age;Age at enrolment;years;\n"
                   'sex;Sex;;"1=Male; 2=Female"\n'
                   ";;;\n"
                   "creat;Creatinine at baseline;µmol/L;\n"
                   "los;Length of stay since admission;days;\n", encoding="cp1252")
    d = kt.read_dictionary(csv)  # Excel's encoding and delimiter; a blank row skipped
    assert d.format == "codebook" and list(d.fields) == ["age", "sex", "creat", "los"]
    assert d.field("sex").choices == {"1": "Male", "2": "Female"} and d.field("creat").units == "µmol/L"
    assert d.field("age").units == "years" and d.field("los").label == "Length of stay since admission"
    md = tmp_path / "codebook.md"
    md.write_text("# Codebook\n\nSome prose.\n\n| Column | Meaning | Coding |\n|---|:---|---|\n"
                  "| `sex` | Sex of the patient | 1=Male; 2=Female |\n| bp6 | Systolic BP at 6 months (mmHg) | |\n\n"
                  "| other | table |\n|---|---|\n| x | y |\n")
    d = kt.read_dictionary(md)
    assert list(d.fields) == ["sex", "bp6"] and d.field("sex").choices == {"1": "Male", "2": "Female"}
    assert d.field("bp6").units == "mmHg" and d.field("bp6").line == 8


@pytest.mark.parametrize("content, message", [
    ("", "is empty"),
    ("colour,shade\nred,dark\n", "no column naming the variables"),
    ("name,label\nage,Age\nage,Age again\n", "names the variable 'age' twice .lines 2 and 3."),
    ("name,label\n", "has a header but no variables"),
])
def test_a_malformed_codebook_is_one_clear_error(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "bad.csv"
    path.write_text(content)
    with pytest.raises(DictionaryError, match=message):
        kt.read_dictionary(path)


def test_malformed_json_and_missing_files(tmp_path: Path) -> None:
    (tmp_path / "schema.json").write_text('{"fields": [')
    with pytest.raises(DictionaryError, match="not valid JSON"):
        kt.read_dictionary(tmp_path / "schema.json")
    (tmp_path / "other.json").write_text('{"title": "no fields"}')
    with pytest.raises(DictionaryError, match="no Table Schema 'fields'"):
        kt.read_dictionary(tmp_path / "other.json")
    with pytest.raises(FileNotFoundError):
        kt.read_dictionary(tmp_path / "nowhere.csv")
    (tmp_path / "broken.dta").write_bytes(b"not a stata file at all")
    with pytest.raises(DictionaryError, match="cannot read the labels of broken.dta"):
        kt.read_dictionary(tmp_path / "broken.dta")


def test_a_labelled_stata_file_reads_with_its_labels(tmp_path: Path) -> None:
    path = labelled_stata(tmp_path / "cohort.dta", n=80)
    d = kt.read_dictionary(path)  # labels only
    assert d.format == "stata" and d.field("v5").label == "Systolic BP at the 6-month visit (mmHg)"
    assert d.field("v2").choices == {"1": "Male", "2": "Female"} and d.field("v5").units == "mmHg"
    df, d2 = kt.read_file(path)
    assert list(df["v2"].cat.categories) == ["Male", "Female"]  # the notebook shows "Male", not 1
    raw = pd.read_stata(path, convert_categoricals=False)
    assert (df["v2"].cat.codes.to_numpy() == raw["v2"].to_numpy() - 1).all()
    assert pd.api.types.is_datetime64_any_dtype(df["v9"]) and pd.api.types.is_numeric_dtype(df["v5"])
    assert d2.cite("v6") == "'v6' — 'Length of stay since enrolment (days)' (cohort.dta)"
    # labels that say a column identifies a person mark it private in the kernel
    assert set(private_columns()) == {"v8", "v9"}
    codes, _ = kt.read_file(path, labels=False)
    assert pd.api.types.is_numeric_dtype(codes["v2"])


def test_a_column_with_unlabelled_values_keeps_its_numbers(tmp_path: Path) -> None:
    frame = pd.DataFrame({"score": [1.0, 2.0, 7.0, np.nan, 99.0], "smoke": [0, 1, 1, 0, 1]})
    path = tmp_path / "survey.sav"
    pyreadstat.write_sav(frame, str(path), column_labels=["Pain score", "Smoker"],
                         variable_value_labels={"score": {99: "Refused"}, "smoke": {0: "No", 1: "Yes"}},
                         variable_measure={"score": "scale", "smoke": "nominal"})
    df, d = kt.read_file(path)
    assert d.format == "spss" and d.field("score").choices == {"99": "Refused"}
    assert pd.api.types.is_numeric_dtype(df["score"]) and df["score"].iloc[2] == 7
    assert list(df["smoke"].astype(str)) == ["No", "Yes", "Yes", "No", "Yes"]


def test_spss_ordinal_and_sas_transport_files(tmp_path: Path) -> None:
    frame = pd.DataFrame({"stage": [1, 2, 3, 2], "age": [50, 61, 72, 48]})
    sav = tmp_path / "stages.zsav"
    pyreadstat.write_sav(frame, str(sav), compress=True, variable_value_labels={"stage": {1: "I", 2: "II", 3: "III"}},
                         variable_measure={"stage": "ordinal", "age": "scale"})
    df, _ = kt.read_file(sav)
    assert df["stage"].cat.ordered and df["stage"].max() == "III"
    xpt = tmp_path / "trial.xpt"
    pyreadstat.write_xport(frame, str(xpt), column_labels=["Stage at diagnosis", "Age at entry (years)"])
    df, d = kt.read_file(xpt)
    assert d.format == "sas" and d.field("age").label == "Age at entry (years)" and d.field("age").units == "years"
    assert kt.read_file(_csv(tmp_path))[1] is None


def _csv(tmp_path: Path) -> Path:
    path = tmp_path / "plain.csv"
    pd.DataFrame({"a": [1, 2]}).to_csv(path, index=False)
    return path


def test_the_load_cell_reads_a_labelled_file_with_its_codebook(tmp_path: Path) -> None:
    from jupyter_dcpilot.engine.notebook import load_cell

    path = labelled_stata(tmp_path / "cohort.dta", n=40)
    cell = load_cell([str(path)], ["df"])
    assert f"df, df_codebook = kt.read_file({str(path)!r})" in cell
    namespace: dict = {}
    exec(cell, namespace)  # the cell as the notebook runs it
    assert list(namespace["df"]["v2"].cat.categories) == ["Male", "Female"]
    assert namespace["df_codebook"].field("v7").label == "Quality of life score at 12 months"


def test_a_blank_string_of_a_stata_file_is_a_missing_value(tmp_path: Path) -> None:
    """Stata's only missing string is the empty one: as a CSV's blank field, it is missing (a
    subtype recorded only for those who progressed is blank for everyone else)."""
    path = tmp_path / "blank.dta"
    pd.DataFrame({"pcdx": ["MM", "", "AM", ""], "age": [60, 70, 80, 90]}).to_stata(path, write_index=False, version=118)
    df, _ = kt.read_file(path)
    assert df["pcdx"].isna().tolist() == [False, True, False, True] and df["age"].tolist() == [60, 70, 80, 90]
