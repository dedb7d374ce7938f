"""A study's codebook, read once into one typed :class:`Dictionary`, whatever it was written as.

What a column *is* — its label, the form and event it was collected on, its codes, units, valid
range, whether it identifies a person — is written down by the people who collected the data:

- a REDCap data dictionary (the CSV REDCap downloads, with its own header: "Variable / Field
  Name", "Form Name", "Field Type", "Field Label", "Choices, Calculations, OR Slider Labels",
  "Identifier?", "Text Validation Min/Max", ...; or the API's ``field_name``, ``form_name``, ...
  names), optionally with REDCap's instrument–event mapping CSV (``arm_num``,
  ``unique_event_name``, ``form``), which says which forms each event holds, in event order;
- a Frictionless Table Schema (``schema.json``) or Data Package (``datapackage.json``), read per
  the specification with the standard library: the ``frictionless`` package would bring some
  twenty dependencies (pydantic, petl, typer, requests, ...) into the user's kernel to read a
  list of fields;
- a plain codebook: a CSV or Markdown table with a name column and a description column, whose
  header names are matched loosely (variable / name / column / field, label / description / ...);
- the variable and value labels of a Stata, SPSS or SAS file (``.dta``, ``.sav``, ``.zsav``,
  ``.por``, ``.sas7bdat``, ``.xpt``), read without reading the data: Stata's with pandas (its
  reader is about ten times faster than pyreadstat's), the others with pyreadstat.

Reading only records what the codebook says; what it *means* for a diagnosis (timing, privacy,
ranges) is :mod:`kernel_tools.diagnosis.codebook`. A malformed codebook is one
:class:`DictionaryError` naming the file and what is wrong; a codebook that disagrees with a
table is a finding of the diagnosis, never an error here.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from dataclasses import field as dc_field
from pathlib import Path
from typing import Any

LABELLED = {".dta": "stata", ".sav": "spss", ".zsav": "spss", ".por": "spss", ".sas7bdat": "sas", ".xpt": "sas"}
MARKDOWN = (".md", ".markdown")

# REDCap's data dictionary header (as the CSV download writes it) and the API's names for it
REDCAP_COLUMNS = {
    "name": ("Variable / Field Name", "field_name"),
    "form": ("Form Name", "form_name"),
    "section": ("Section Header", "section_header"),
    "field_type": ("Field Type", "field_type"),
    "label": ("Field Label", "field_label"),
    "choices": ("Choices, Calculations, OR Slider Labels", "select_choices_or_calculations"),
    "note": ("Field Note", "field_note"),
    "validation": ("Text Validation Type OR Show Slider Number", "text_validation_type_or_show_slider_number"),
    "minimum": ("Text Validation Min", "text_validation_min"),
    "maximum": ("Text Validation Max", "text_validation_max"),
    "identifier": ("Identifier?", "identifier"),
    "branching": ("Branching Logic (Show field only if...)", "branching_logic"),
    "annotation": ("Field Annotation", "field_annotation"),
}
CHOICE_TYPES = ("radio", "dropdown", "checkbox")
FIXED_CHOICES = {"yesno": {"1": "Yes", "0": "No"}, "truefalse": {"1": "True", "0": "False"}}
NUMBER_VALIDATIONS = ("integer", "number", "number_1dp", "number_2dp", "number_3dp", "number_4dp",
                      "number_comma_decimal", "number_1dp_comma_decimal", "number_2dp_comma_decimal")
CHECKBOX = re.compile(r"^(?P<field>.+?)___(?P<code>[^_].*)$")

# a plain codebook's header, matched loosely (lower case, letters and digits only)
PLAIN_COLUMNS = {
    "name": ("variable", "variablename", "varname", "var", "name", "column", "columnname", "field",
             "fieldname", "item", "code"),
    "label": ("label", "variablelabel", "description", "desc", "meaning", "definition", "question",
              "text", "title", "details"),
    "field_type": ("type", "datatype", "fieldtype", "format", "kind"),
    "units": ("unit", "units"),
    "choices": ("values", "valuelabels", "codes", "categories", "levels", "choices", "coding", "allowedvalues"),
    "form": ("form", "section", "instrument", "group", "module", "visit", "event", "wave", "timepoint"),
    "minimum": ("min", "minimum", "lower", "low"),
    "maximum": ("max", "maximum", "upper", "high"),
    "identifier": ("identifier", "pii", "phi", "sensitive", "private"),
}
YES = {"y", "yes", "true", "1", "x"}
# units at the end of a label: "(days)", "[mg/dL]", ", in years", " in months"
UNITS_AT_END = re.compile(r"(?:\(([^()]{1,20})\)|\[([^\[\]]{1,20})\])\s*$|(?:,\s*|\s)in ([a-z%/]{1,12})\s*$", re.I)
PLAIN_CHOICE = re.compile(r"^\s*([^=:,]+?)\s*[=:,]\s*(.+?)\s*$")


class DictionaryError(ValueError):
    """A codebook that cannot be read; the message names the file and what is wrong with it."""


@dataclass(frozen=True)
class Field:
    """What the codebook says about one variable (one column, or several for a REDCap checkbox)."""

    name: str
    label: str = ""
    form: str | None = None  # REDCap form (instrument), or a plain codebook's section / visit
    section: str | None = None
    field_type: str | None = None  # REDCap field type, Table Schema type, Stata/SPSS/SAS format
    choices: dict[str, str] = dc_field(default_factory=dict)  # code (as text) -> label
    units: str | None = None
    identifier: bool = False  # flagged as identifying a person by the codebook itself
    minimum: str | None = None  # validation range, as written (numbers or dates)
    maximum: str | None = None
    validation: str | None = None  # REDCap's text validation (integer, number, date_ymd, email ...)
    note: str | None = None
    line: int | None = None  # where the codebook says it (line of a CSV or Markdown file)
    ordered: bool = False  # its choices are ordered (SPSS ordinal)
    branching: str | None = None  # REDCap's branching logic: shown (and filled) only if it holds

    @property
    def multi(self) -> bool:
        """A multi-select field: REDCap exports one 0/1 column per choice (``field___code``)."""
        return self.field_type == "checkbox"

    @property
    def columns(self) -> list[str]:
        """The columns an export holds for it."""
        if self.multi:
            return [f"{self.name}___{_checkbox_code(code)}" for code in self.choices]
        return [self.name]

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "label": self.label, "form": self.form, "section": self.section,
                "field_type": self.field_type, "choices": dict(self.choices), "units": self.units,
                "identifier": self.identifier, "minimum": self.minimum, "maximum": self.maximum,
                "validation": self.validation, "note": self.note, "line": self.line, "branching": self.branching}


@dataclass(frozen=True)
class Event:
    """A REDCap event (a visit of a longitudinal project): its unique name, arm, order and forms."""

    name: str
    order: int
    arm: str | None = None
    forms: tuple[str, ...] = ()
    offset_days: float | None = None


@dataclass
class Dictionary:
    """Every field of one codebook, in its order, and where it came from.

    ``dictionary.field(column)`` finds the field of a column of the data (a REDCap checkbox
    column ``comorb___2`` belongs to the field ``comorb``); ``dictionary.cite(column)`` is the
    sentence a finding quotes as its evidence.
    """

    fields: dict[str, Field]
    source: str
    format: str  # redcap, table_schema, codebook, stata, spss, sas
    events: list[Event] = dc_field(default_factory=list)
    primary_key: list[str] = dc_field(default_factory=list)
    missing_values: list[str] = dc_field(default_factory=list)
    file_label: str | None = None

    def __len__(self) -> int:
        return len(self.fields)

    def __iter__(self) -> Iterator[Field]:
        return iter(self.fields.values())

    def __contains__(self, column: object) -> bool:
        return isinstance(column, str) and self.field(column) is not None

    def field(self, column: str) -> Field | None:
        """The field a column of the data belongs to, or None."""
        found = self.fields.get(column)
        if found is not None:
            return found
        match = CHECKBOX.match(column)
        if match:
            parent = self.fields.get(match.group("field"))
            code = match.group("code")
            if parent is not None and parent.multi and any(_checkbox_code(k) == code for k in parent.choices):
                return parent
        return None

    @property
    def forms(self) -> list[str]:
        return list(dict.fromkeys(f.form for f in self if f.form))

    def event_order(self) -> list[str]:
        return [e.name for e in sorted(self.events, key=lambda e: e.order)]

    def cite(self, column: str) -> str:
        """``'hosp_days' — 'Length of hospital stay since enrolment (days)', form follow_up_visit
        (codebook.csv, line 14)``: what the codebook says of a column, and where."""
        f = self.field(column)
        if f is None:
            return f"'{column}' is not in {Path(self.source).name}"
        said = f"'{column}' — '{f.label}'" if f.label else f"'{column}'"
        if f.form:
            said += f", form {f.form}"
        where = Path(self.source).name + (f", line {f.line}" if f.line else "")
        return f"{said} ({where})"

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "format": self.format, "fields": [f.to_dict() for f in self],
                "events": [{"name": e.name, "order": e.order, "arm": e.arm, "forms": list(e.forms),
                            "offset_days": e.offset_days} for e in self.events],
                "primary_key": list(self.primary_key), "missing_values": list(self.missing_values)}

    def __repr__(self) -> str:
        events = f", {len(self.events)} events" if self.events else ""
        return f"Dictionary({self.format}, {len(self)} fields{events}, from {Path(self.source).name!r})"

    def _repr_html_(self) -> str:
        from html import escape

        rows = "".join(
            f"<tr><td>{escape(f.name)}</td><td>{escape(f.label)}</td><td>{escape(f.form or '')}</td>"
            f"<td>{escape(f.field_type or '')}</td><td>{escape(_choices_text(f.choices))}</td>"
            f"<td>{'yes' if f.identifier else ''}</td></tr>" for f in list(self)[:50])
        more = f"<p>… and {len(self) - 50} more fields</p>" if len(self) > 50 else ""
        return (f"<div><b>{escape(repr(self))}</b><table><tr><th>field</th><th>label</th><th>form</th>"
                f"<th>type</th><th>choices</th><th>identifier</th></tr>{rows}</table>{more}</div>")


def _choices_text(choices: dict[str, str], limit: int = 4) -> str:
    shown = ", ".join(f"{k}={v}" for k, v in list(choices.items())[:limit])
    return shown + (" …" if len(choices) > limit else "")


def _checkbox_code(code: str) -> str:
    """REDCap's column suffix for a checkbox code: lower case, a minus sign as an underscore."""
    return code.lower().replace("-", "_").replace(".", "_")


# -- reading ------------------------------------------------------------------------------------
def read_dictionary(path: str | Path, *, events: str | Path | None = None,
                    resource: str | None = None) -> Dictionary:
    """Read a codebook into a :class:`Dictionary` (see the module docstring for the formats).

    events : REDCap's instrument–event mapping CSV (``arm_num, unique_event_name, form``, as
        REDCap downloads it from "Designate instruments for my events"), or its events CSV
        (``event_name, arm_num, day_offset, unique_event_name``): the events, in order, with
        the forms each holds.
    resource : for a Data Package with several resources, the name of the one to read.

    Raises DictionaryError for a file that is not a codebook (no name column, no fields,
    repeated field names, unreadable JSON), FileNotFoundError for a missing file.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no codebook at {path}")
    suffix = path.suffix.lower()
    if suffix in LABELLED:
        found = read_labels(path)
    elif suffix == ".json":
        found = _table_schema(path, resource)
    else:
        text = _text(path)
        if suffix in MARKDOWN or (suffix not in (".csv", ".tsv") and text.lstrip().startswith("|")):
            found = _plain(path, _markdown_rows(path, text), "markdown table")
        else:
            rows = _csv_rows(path, text)
            found = _redcap(path, rows) if _is_redcap(rows[0]) else _plain(path, rows, "CSV")
    if events is not None:
        found.events = read_events(events)
    return found


def _text(path: Path) -> str:
    raw = path.read_bytes()
    for encoding in ("utf-8-sig", "cp1252"):  # REDCap writes UTF-8 with a BOM; Excel often cp1252
        try:
            return raw.decode(encoding)
        except UnicodeDecodeError:
            continue
    return raw.decode("latin-1")


def _csv_rows(path: Path, text: str) -> list[tuple[int, list[str]]]:
    """(line where the row starts, cells) of each row, header first; empty rows skipped."""
    if not text.strip():
        raise DictionaryError(f"{path.name} is empty: a codebook needs a header and one row per variable")
    try:
        dialect: Any = csv.Sniffer().sniff(text[:8192], delimiters=",;\t|")
    except csv.Error:
        dialect = csv.excel
    reader = csv.reader(io.StringIO(text), dialect)
    rows: list[tuple[int, list[str]]] = []
    start = 1
    try:
        for cells in reader:
            if any(c.strip() for c in cells):
                rows.append((start, [c.strip() for c in cells]))
            start = reader.line_num + 1
    except csv.Error as error:
        raise DictionaryError(f"{path.name} is not a readable CSV (line {reader.line_num}: {error})") from None
    return rows


def _markdown_rows(path: Path, text: str) -> list[tuple[int, list[str]]]:
    """The first pipe table of a Markdown file, as (line, cells) rows, header first."""
    rows: list[tuple[int, list[str]]] = []
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not stripped.startswith("|"):
            if rows:
                break  # the table ended
            continue
        cells = [c.strip().strip("`").strip() for c in stripped.strip("|").split("|")]
        if all(re.fullmatch(r":?-{2,}:?", c) for c in cells if c):
            continue  # the line under the header
        rows.append((number, cells))
    if not rows:
        raise DictionaryError(f"{path.name} holds no Markdown table (lines starting with '|')")
    return rows


def _picker(cells: list[str], where: dict[str, int]) -> Any:
    """``cell(key)``: the stripped text of a row's cell in the column ``where[key]`` ("" if none)."""
    def cell(key: str) -> str:
        at = where.get(key)
        return cells[at].strip() if at is not None and at < len(cells) else ""

    return cell


def _key(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def _is_redcap(header: tuple[int, list[str]]) -> bool:
    names = set(header[1])
    return any(REDCAP_COLUMNS["name"][i] in names and REDCAP_COLUMNS["field_type"][i] in names for i in (0, 1))


def _redcap(path: Path, rows: list[tuple[int, list[str]]]) -> Dictionary:
    header = rows[0][1]
    style = 0 if REDCAP_COLUMNS["name"][0] in header else 1
    where = {key: header.index(names[style]) for key, names in REDCAP_COLUMNS.items() if names[style] in header}
    fields: dict[str, Field] = {}
    for line, cells in rows[1:]:
        cell = _picker(cells, where)
        name = cell("name")
        if not name:
            raise DictionaryError(f"{path.name}, line {line}: a row without a variable name")
        field_type = cell("field_type").lower() or None
        if field_type == "descriptive":  # text shown on a form: no data column
            continue
        label = _strip_tags(cell("label"))
        choices = (FIXED_CHOICES.get(field_type or "") or
                   (_redcap_choices(cell("choices")) if field_type in CHOICE_TYPES else {}))
        note = cell("note") or None
        _add(path, fields, Field(
            name=name, label=label, form=cell("form") or None, section=_strip_tags(cell("section")) or None,
            field_type=field_type, choices=choices, units=_units(label, note),
            identifier=cell("identifier").lower() in YES, minimum=cell("minimum") or None,
            maximum=cell("maximum") or None, validation=cell("validation").lower() or None, note=note, line=line,
            branching=cell("branching") or None))
    return _finish(path, fields, "redcap")


def _strip_tags(text: str) -> str:
    """A label without the HTML REDCap allows in it (``<b>``, ``<span style=...>``)."""
    return re.sub(r"\s+", " ", re.sub(r"<[^>]*>", " ", text)).strip()


def _redcap_choices(text: str) -> dict[str, str]:
    """``"1, Male | 2, Female"`` -> {"1": "Male", "2": "Female"} (a code without a label keeps
    the code as its label)."""
    out: dict[str, str] = {}
    for part in text.split("|"):
        if not part.strip():
            continue
        code, _, label = part.partition(",")
        out[code.strip()] = _strip_tags(label) or code.strip()
    return out


def _units(label: str, note: str | None = None) -> str | None:
    """Units written at the end of a label ("(days)", "[mg/dL]", ", in years") or as a short
    field note ("kg")."""
    match = UNITS_AT_END.search(label or "")
    if match:
        unit = next(g for g in match.groups() if g)
        # a parenthesis that is a phrase, not a unit: "(yes or no)", "(see protocol section 4)"
        if len(unit.split()) <= 2 and not re.search(r"\b(or|and|see|if|e\.g|i\.e)\b", unit, re.I):
            return unit.strip()
    if note and len(note) <= 12 and len(note.split()) <= 2 and re.search(r"[a-zA-Z%]", note):
        return note.strip()
    return None


def _add(path: Path, fields: dict[str, Field], f: Field) -> None:
    if f.name in fields:
        first = fields[f.name].line
        raise DictionaryError(f"{path.name} names the variable {f.name!r} twice"
                              + (f" (lines {first} and {f.line})" if first and f.line else ""))
    fields[f.name] = f


def _finish(path: Path, fields: dict[str, Field], fmt: str) -> Dictionary:
    if not fields:
        raise DictionaryError(f"{path.name} has a header but no variables")
    return Dictionary(fields, str(path), fmt)


def _plain(path: Path, rows: list[tuple[int, list[str]]], what: str) -> Dictionary:
    """A codebook whose header names a variable column and (usually) a description column."""
    header = [_key(h) for h in rows[0][1]]
    where: dict[str, int] = {}
    for key, names in PLAIN_COLUMNS.items():
        for candidate in names:  # the first synonym present wins: "variable" before "name"
            if candidate in header and header.index(candidate) not in where.values():
                where[key] = header.index(candidate)
                break
    if "name" not in where:
        shown = ", ".join(repr(h) for h in rows[0][1][:8])
        raise DictionaryError(f"{path.name} is not a codebook: its {what} header ({shown}) has no column "
                              "naming the variables (variable, name, column, field)")
    if "label" not in where and len(header) >= 2:  # name + one other column: that one describes it
        rest = [i for i in range(len(header)) if i not in where.values()]
        if len(rest) == 1:
            where["label"] = rest[0]
    fields: dict[str, Field] = {}
    for line, cells in rows[1:]:
        cell = _picker(cells, where)
        name = cell("name")
        if not name:
            continue  # a blank or section row of a hand-written codebook
        label = cell("label")
        units = cell("units") or _units(label)
        _add(path, fields, Field(
            name=name, label=label, form=cell("form") or None, field_type=cell("field_type") or None,
            choices=_plain_choices(cell("choices")), units=units or None,
            identifier=cell("identifier").lower() in YES, minimum=cell("minimum") or None,
            maximum=cell("maximum") or None, line=line))
    return _finish(path, fields, "codebook")


def _plain_choices(text: str) -> dict[str, str]:
    """``"1=Male; 2=Female"``, ``"0: no | 1: yes"`` or REDCap's ``"1, Male | 2, Female"``."""
    if not text:
        return {}
    parts = [p for p in re.split(r"\s*[|;]\s*|\n", text) if p.strip()]
    out: dict[str, str] = {}
    for part in parts:
        match = PLAIN_CHOICE.match(part)
        if match is None:
            return {}  # a list of levels without codes, or prose: not a coding
        out[match.group(1).strip()] = match.group(2).strip()
    return out


# -- Frictionless Table Schema -------------------------------------------------------------------
def _table_schema(path: Path, resource: str | None) -> Dictionary:
    """A Table Schema (``fields``), or the schema of a Data Package's resource (``resources``)."""
    try:
        document = json.loads(_text(path))
    except json.JSONDecodeError as error:
        raise DictionaryError(f"{path.name} is not valid JSON (line {error.lineno}: {error.msg})") from None
    if not isinstance(document, dict):
        raise DictionaryError(f"{path.name} is not a Table Schema or Data Package (a JSON object)")
    schema = document
    if "resources" in document:
        schema = _resource_schema(path, document["resources"], resource)
    elif "schema" in document and isinstance(document["schema"], dict):  # a single resource
        schema = document["schema"]
    raw = schema.get("fields")
    if not isinstance(raw, list) or not all(isinstance(f, dict) and f.get("name") for f in raw):
        raise DictionaryError(f"{path.name} has no Table Schema 'fields' list (objects with a 'name')")
    fields: dict[str, Field] = {}
    for f in raw:
        constraints = f.get("constraints") or {}
        label = str(f.get("title") or f.get("description") or "")
        description = str(f.get("description") or "")
        if f.get("title") and description and description != label:
            label = f"{label}: {description}"
        _add(path, fields, Field(
            name=str(f["name"]), label=label, field_type=f.get("type"), choices=_schema_choices(f),
            units=f.get("unit") or f.get("units") or _units(label),
            minimum=_text_or_none(constraints.get("minimum")), maximum=_text_or_none(constraints.get("maximum")),
            identifier=bool(f.get("pii") or f.get("identifier") or f.get("sensitive")),
            ordered=bool(f.get("categoriesOrdered"))))
    found = _finish(path, fields, "table_schema")
    key = schema.get("primaryKey")
    found.primary_key = [key] if isinstance(key, str) else list(key or [])
    found.missing_values = [str(v) for v in schema.get("missingValues", [""])]
    return found


def _resource_schema(path: Path, resources: Any, name: str | None) -> dict:
    if not isinstance(resources, list) or not resources:
        raise DictionaryError(f"{path.name} has no resources")
    with_schema = [r for r in resources if isinstance(r, dict) and isinstance(r.get("schema"), dict)]
    if name is not None:
        picked = [r for r in with_schema if r.get("name") == name]
        if not picked:
            names = ", ".join(repr(r.get("name")) for r in with_schema)
            raise DictionaryError(f"{path.name} has no resource {name!r} with a schema (it has {names})")
        return picked[0]["schema"]
    if len(with_schema) != 1:
        names = ", ".join(repr(r.get("name")) for r in with_schema) or "none with an inline schema"
        raise DictionaryError(f"{path.name} has several resources ({names}): pass resource= to pick one")
    return with_schema[0]["schema"]


def _schema_choices(f: dict) -> dict[str, str]:
    """Table Schema v2 ``categories`` (values or {value, label}), else the ``enum`` constraint."""
    categories = f.get("categories")
    if isinstance(categories, list):
        out = {}
        for c in categories:
            if isinstance(c, dict) and "value" in c:
                out[str(c["value"])] = str(c.get("label", c["value"]))
            else:
                out[str(c)] = str(c)
        return out
    enum = (f.get("constraints") or {}).get("enum")
    return {str(v): str(v) for v in enum} if isinstance(enum, list) else {}


def _text_or_none(value: Any) -> str | None:
    return None if value is None else str(value)


# -- Stata, SPSS and SAS labels ------------------------------------------------------------------
def _pyreadstat() -> Any:
    try:
        import pyreadstat
    except ImportError as error:
        raise ImportError("reading Stata, SPSS and SAS files needs pyreadstat: "
                          "pip install 'dcpilot-kernel-tools[labelled]'") from error
    return pyreadstat


def labelled_reader(path: Path) -> Any:
    """pyreadstat's reader of a labelled file, by its suffix."""
    pyreadstat = _pyreadstat()
    readers = {".dta": pyreadstat.read_dta, ".sav": pyreadstat.read_sav, ".zsav": pyreadstat.read_sav,
               ".por": pyreadstat.read_por, ".sas7bdat": pyreadstat.read_sas7bdat, ".xpt": pyreadstat.read_xport}
    return readers[path.suffix.lower()]


def read_labels(path: str | Path) -> Dictionary:
    """The variable and value labels of a Stata / SPSS / SAS file, without reading its data."""
    path = Path(path)
    try:
        if path.suffix.lower() == ".dta":
            import pandas as pd

            with pd.read_stata(path, iterator=True) as reader:
                return stata_labels(reader, path)
        _, meta = labelled_reader(path)(str(path), metadataonly=True)
    except (DictionaryError, ImportError):
        raise
    except Exception as error:  # pyreadstat's ReadstatError, pandas' ValueError: one line, the file named
        raise DictionaryError(f"cannot read the labels of {path.name}: {error}") from None
    return labels_of(meta, path)


def stata_labels(reader: Any, path: Path) -> Dictionary:
    """A :class:`Dictionary` from pandas' ``StataReader`` of ``path`` (pandas reads Stata files
    about ten times faster than pyreadstat, labels included)."""
    labels = reader.variable_labels()  # column -> label, in the file's order
    sets = reader.value_labels()  # label set -> {code: label}
    names = list(labels)
    # which label set each column uses (pandas keeps it in a private list; a set named as its
    # column, as pandas itself writes them, is the fallback)
    used = list(getattr(reader, "_lbllist", None) or names)
    formats = list(getattr(reader, "_fmtlist", None) or [None] * len(names))
    fields = {}
    for name, label_set, fmt in zip(names, used, formats):
        label = labels.get(name) or ""
        choices = {_code_text(k): str(v) for k, v in (sets.get(label_set) or {}).items()}
        fields[name] = Field(name=name, label=label, field_type=fmt, choices=choices, units=_units(label))
    if not fields:
        raise DictionaryError(f"{path.name} has no variables")
    found = Dictionary(fields, str(path), "stata")
    found.file_label = getattr(reader, "data_label", None) or None
    return found


def labels_of(meta: Any, path: Path) -> Dictionary:
    """A :class:`Dictionary` from pyreadstat's metadata of ``path``."""
    labels = meta.column_names_to_labels or {}
    values = meta.variable_value_labels or {}
    measures = getattr(meta, "variable_measure", None) or {}
    formats = getattr(meta, "original_variable_types", None) or {}
    fields: dict[str, Field] = {}
    for name in meta.column_names:
        label = labels.get(name) or ""
        choices = {_code_text(k): str(v) for k, v in (values.get(name) or {}).items()}
        fields[name] = Field(name=name, label=label, field_type=formats.get(name), choices=choices,
                             units=_units(label), ordered=measures.get(name) == "ordinal")
    if not fields:
        raise DictionaryError(f"{path.name} has no variables")
    found = Dictionary(fields, str(path), LABELLED[path.suffix.lower()])
    found.file_label = getattr(meta, "file_label", None) or None
    return found


def _code_text(code: Any) -> str:
    """A value label's code as text: 1.0 -> "1" (Stata and SPSS store codes as doubles)."""
    if isinstance(code, float) and code.is_integer():
        return str(int(code))
    return str(code)


# -- REDCap events ------------------------------------------------------------------------------
def read_events(path: str | Path) -> list[Event]:
    """REDCap's instrument–event mapping CSV (or its events CSV) as events in order."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no event mapping at {path}")
    rows = _csv_rows(path, _text(path))
    header = [_key(h) for h in rows[0][1]]
    if "uniqueeventname" not in header:
        raise DictionaryError(f"{path.name} is not a REDCap event mapping: it has no 'unique_event_name' column")
    at: dict[str, int] = {k: header.index(k) for k in ("uniqueeventname", "armnum", "form", "dayoffset", "daysoffset")
          if k in header}
    offset = "dayoffset" if "dayoffset" in at else "daysoffset"
    events: dict[str, Event] = {}
    for _, cells in rows[1:]:
        cell = _picker(cells, at)
        name = cell("uniqueeventname")
        if not name:
            continue
        event = events.get(name) or Event(name, len(events), cell("armnum") or None,
                                          offset_days=_number(cell(offset)))
        form = cell("form")
        events[name] = replace(event, forms=(*event.forms, form)) if form else event
    if not events:
        raise DictionaryError(f"{path.name} lists no events")
    ordered = list(events.values())
    if all(e.offset_days is not None for e in ordered):  # the events CSV: by arm, then day offset
        ordered.sort(key=lambda e: (e.arm or "", e.offset_days or 0.0, e.order))
    return [replace(e, order=i) for i, e in enumerate(ordered)]


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


__all__ = ["Dictionary", "DictionaryError", "Event", "Field", "read_dictionary", "read_events", "read_labels"]
