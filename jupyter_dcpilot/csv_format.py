"""How a CSV file is written: delimiter, decimal mark, thousands separator, encoding, and the
lines above its header.

``pd.read_csv(path)`` assumes commas, decimal points and UTF-8. Files exported by European
spreadsheets use semicolons and decimal commas ("72,5"), lab systems write tabs or pipes, and
older exports are Windows-1252; exports from lab systems and statistics packages put a title or
a date above the header: read with the defaults, such a file becomes one text column, numbers
become text, or the read fails. The co-pilot looks at the file's first lines once and writes what it found
into the load cell (``pd.read_csv(path, sep=";", decimal=",")``), so the notebook says how the
file was read and re-runs without the co-pilot.

Exports from R and lab systems carry more marks, read only where the sample is sure and each said
in a comment above the read (:meth:`CsvFormat.notes`): R's ``write.csv`` row numbers, a line of
units under the header, a missing code ("." "-" "missing") in a column of numbers, ids written with
leading zeros, a spreadsheet's empty trailing columns and lines. What it cannot be sure of (``-99``,
``<0.3``, ``13 g/dL``) is left as written for the diagnosis to raise.
"""

from __future__ import annotations

import codecs
import csv
import io
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SAMPLE_BYTES = 256 * 1024  # enough lines to judge, read in well under a millisecond
DELIMITERS = (",", ";", "\t", "|")
CONSISTENT = 0.9  # share of lines with the most common field count
MAX_PREAMBLE = 20  # lines of title and notes above a header
DOT_THOUSANDS = re.compile(r"^[-+]?\d{1,3}(\.\d{3})+(,\d+)?$")


@dataclass(frozen=True)
class CsvFormat:
    """What ``pandas.read_csv`` needs to read a file as it was written."""

    sep: str = ","
    decimal: str = "."
    thousands: str | None = None
    encoding: str = "utf-8"
    skiprows: int = 0  # lines above the header (a title, an export date)
    index_unnamed: bool = False  # the header is one name short: the rows' first field is the index
    units_row: tuple[tuple[str, str], ...] = ()  # (column, unit) of a line under the header, skipped
    row_names: bool = False  # R's write.csv: a first column named "" holding 1, 2, 3 ... (the index)
    na_values: tuple[tuple[str, tuple[str, ...]], ...] = ()  # a column of numbers and one missing code
    text_columns: tuple[str, ...] = ()  # numbers with leading zeros (ids, codes): kept as written
    usecols: int = 0  # read only the first columns: those after them have no name and no value
    empty_rows: bool = False  # lines of only delimiters at the end (a spreadsheet's used range): dropped

    def read_csv_args(self, lazy: bool = False) -> dict[str, Any]:
        """The keyword arguments of ``pandas.read_csv`` that differ from its defaults (``lazy``:
        those ``dask.dataframe.read_csv`` takes too: not the skipped units line nor the index)."""
        skip: int | list[int] = self.skiprows
        if self.units_row and not lazy:  # the header's line stays; the one under it goes
            skip = [*range(self.skiprows), self.skiprows + 1]
        args = {"sep": self.sep, "decimal": self.decimal, "thousands": self.thousands,
                "encoding": self.encoding, "skiprows": skip, "index_col": 0 if self.row_names and not lazy else None,
                "na_values": {c: list(t) for c, t in self.na_values} or None,
                "dtype": dict.fromkeys(self.text_columns, "str") or None,
                "usecols": range(self.usecols) if self.usecols else None}
        defaults = {"sep": ",", "decimal": ".", "thousands": None, "encoding": "utf-8", "skiprows": 0}
        return {k: v for k, v in args.items() if v != defaults.get(k)}

    def call_args(self, lazy: bool = False) -> str:
        """The same as source code: ``', sep=";", decimal=","'`` (empty for the defaults)."""
        return "".join(f", {k}={v!r}" for k, v in self.read_csv_args(lazy).items())

    def then(self) -> str:
        """What follows the read call in the load cell: dropping the rows a spreadsheet left empty."""
        return ".dropna(how='all')" if self.empty_rows else ""

    def notes(self) -> list[str]:
        """What the reading does beyond the defaults, in words, for comments above it: nothing is
        changed silently."""
        out = []
        if self.units_row:
            units = ", ".join(f"{c} {u}" for c, u in self.units_row[:6]) + (" ..." if len(self.units_row) > 6 else "")
            out.append(f"the line under the header holds units ({units}): skipped")
        if self.row_names:
            out.append("the first column, unnamed, holds R's row numbers 1, 2, 3 ...: read as the index")
        tokens: dict[tuple[str, ...], list[str]] = {}
        for column, codes in self.na_values:
            tokens.setdefault(codes, []).append(column)
        for codes, columns in tokens.items():
            out.append(f"read {' '.join(map(repr, codes))} as missing in {len(columns)} column"
                       f"{'s' if len(columns) > 1 else ''} of numbers ({', '.join(columns[:6])}"
                       f"{' ...' if len(columns) > 6 else ''})")
        if self.usecols:
            out.append(f"the columns after the first {self.usecols} have no name and no value: not read")
        if self.empty_rows:
            out.append("the file ends with lines of only delimiters (no values): dropped")
        if self.text_columns:
            out.append(f"kept as text, with their leading zeros: {', '.join(self.text_columns[:6])}")
        return out


# a field of the sample is never longer than the sample: the stdlib reader's default limit
# (128 KiB) made a 30,000-column header or a long quoted note a traceback
csv.field_size_limit(max(csv.field_size_limit(), 4 * SAMPLE_BYTES))
# byte-order marks, longest first (UTF-32's starts like UTF-16's)
_BOMS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"), (codecs.BOM_UTF8, "utf-8-sig"),
         (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))


def _decode(raw: bytes, name: str = "the file") -> tuple[str, str]:
    """(text, encoding): the encoding a byte-order mark names (UTF-8, -16, -32), UTF-16 without
    one when every other byte is NUL, else UTF-8, else Windows-1252, else Latin-1. ValueError
    for other NUL bytes: not a text file. A character cut at the sample's end is left out."""
    bom = next((enc for mark, enc in _BOMS if raw.startswith(mark)), None)
    guessed = bom is None and raw.count(b"\x00") * 3 > len(raw)
    if guessed:
        odd = raw[1::2].count(b"\x00") > raw[0::2].count(b"\x00")
        bom = "utf-16-le" if odd else "utf-16-be"
    if bom is not None:
        try:
            text = codecs.getincrementaldecoder(bom)().decode(raw, final=False)
            return text.removeprefix("\ufeff"), bom.replace("utf-8-sig", "utf-8")
        except UnicodeDecodeError as error:
            if not guessed:
                raise ValueError(f"{name} starts like {bom.upper()} text but is not: {error.reason}") from None
    if b"\x00" in raw:
        raise ValueError(f"{name} holds NUL bytes: it is not a text (CSV) file; is it a spreadsheet "
                         "or a compressed file?")
    for encoding in ("utf-8", "cp1252"):
        try:
            return codecs.getincrementaldecoder(encoding)().decode(raw, final=False).removeprefix("\ufeff"), encoding
        except UnicodeDecodeError:
            continue
    return raw.decode("latin-1"), "latin-1"


def _records(text: str, sep: str, limit: int = 200) -> list[tuple[list[str], int]]:
    """The first ``limit`` records of ``text`` with the number of lines read by the end of each
    (a quoted value may hold line breaks: a header cell "age\\n(years)" is one record)."""
    reader = csv.reader(io.StringIO(text), delimiter=sep)
    out = []
    try:
        for row in reader:
            out.append((row, reader.line_num))
            if len(out) >= limit:
                break
    except csv.Error:  # a quote left open at the sample's end: what was read is enough
        pass
    return out


def _rows(text: str, sep: str) -> list[list[str]]:
    return [row for row, _ in _records(text, sep) if row]


def _delimiter(text: str) -> str:
    """The delimiter that splits the lines into the same number of fields (more than one),
    the most fields on ties; a comma when none does."""
    best, best_key = ",", (0.0, 1)
    # R's write.table: spaces between quoted names and values (only a quoted header makes a space one)
    for sep in DELIMITERS + ((" ",) if text.lstrip().startswith('"') else ()):
        widths = [len(row) for row in _rows(text, sep)]
        if not widths:
            continue
        width, count = Counter(widths).most_common(1)[0]
        share = count / len(widths)
        if width > 1 and share >= CONSISTENT and (share, width) > best_key:
            best, best_key = sep, (share, width)
    return best


def _marks(rows: list[list[str]]) -> tuple[str, str | None]:
    """(decimal, thousands) from the values (the rules of :mod:`kernel_tools.number_text`): a
    decimal comma when some value can only be read with one ("72,5", "1.234,5") and none only
    with a point."""
    import pandas as pd  # only for files not separated by commas: the CLI's checks start fast

    from kernel_tools.number_text import number_format

    values = pd.Index([v.strip() for row in rows[1:] for v in row if v.strip()], dtype=object)
    if number_format(values).decimal == ".":
        return ".", None
    return ",", "." if any(DOT_THOUSANDS.match(v) for v in values) else None


def _preamble(text: str, sep: str) -> tuple[int, bool]:
    """(lines above the header, whether the header is one name short). Lines above: a title, a
    date, blank lines before the first record as wide as most of the file, when there are some
    and they are narrower. One name short: the header of a frame written with its index, whose
    index has no name; pandas reads that first field of each row as the index, and so do we."""
    records = _records(text, sep)
    widths = [len(row) for row, _ in records]
    common = Counter(w for w in widths if w).most_common(1)
    if not common or common[0][0] < 2:
        return 0, False
    width = common[0][0]
    first = next((i for i, w in enumerate(widths) if w == width), 0)
    short = first > 0 and widths[first - 1] == width - 1
    header, narrower = (first - 1, width - 1) if short else (first, width)
    if header == 0:
        return 0, short
    if header > MAX_PREAMBLE or not all(w < narrower for w in widths[:header]):
        return 0, False
    return records[header - 1][1], short


# what pandas reads as missing by itself, and the codes a column of numbers may hold for "missing"
PANDAS_NA = frozenset({"", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN",
                       "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null"})
MISSING_CODES = frozenset({".", "-", "--", "?", "*", "missing", "unknown", "not done", "nd", "n.d.", "n.a.",
                           "not available", "none", "na"})
NUMBER = re.compile(r"^[-+]?(\d{1,3}([.,]\d{3})+([.,]\d+)?|\d+([.,]\d*)?|[.,]\d+)([eE][-+]?\d+)?$")
COMMA_GROUPS = re.compile(r"^[-+]?\d{1,3}(,\d{3})+(\.\d+)?$")
POINT_NUMBER = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)$")
MIN_NUMBERS = 5  # a column is one of numbers when it has at least this many in the sample


def _is_number(value: str) -> bool:
    return bool(NUMBER.match(value))


def _columns(rows: list[list[str]], short: bool) -> dict[str, list[str]]:
    """Each header name's values in the sample (stripped), the rows' index field left out."""
    names, body = rows[0], rows[1:]
    offset = 1 if short else 0
    return {name: [row[i + offset].strip() for row in body if i + offset < len(row)]
            for i, name in enumerate(names) if name}


def _numbers_only(values: list[str]) -> bool:
    known = [v for v in values if v not in PANDAS_NA]
    return len(known) >= MIN_NUMBERS and all(_is_number(v) for v in known)


def _units_row(rows: list[list[str]], short: bool) -> tuple[tuple[str, str], ...]:
    """(column, unit) of a line under the header that holds words ("years", "mg/dL") above
    columns of numbers, at least two of them."""
    if len(rows) < MIN_NUMBERS + 2:
        return ()
    below = _columns([rows[0], *rows[2:]], short)
    first = _columns(rows[:2], short)
    numeric = [c for c, values in below.items() if _numbers_only(values)]
    units = [(c, first[c][0]) for c in numeric if first.get(c) and first[c][0] not in PANDAS_NA]
    if len(units) < 2 or any(_is_number(u) or u.lower() in MISSING_CODES for _, u in units):
        return ()
    return tuple(units)


def _missing_codes(columns: dict[str, list[str]]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Columns of numbers whose only other values are one or two missing codes ("." "-" "missing")."""
    out = []
    for name, values in columns.items():
        other = sorted({v for v in values if v not in PANDAS_NA and not _is_number(v)})
        if not other or len(other) > 2 or not all(v.lower() in MISSING_CODES for v in other):
            continue
        if sum(_is_number(v) for v in values) >= MIN_NUMBERS:
            out.append((name, tuple(other)))
    return tuple(out)


def _leading_zeros(columns: dict[str, list[str]]) -> tuple[str, ...]:
    """Columns of whole numbers some of which are written with leading zeros (ids, codes: 00012)."""
    return tuple(name for name, values in columns.items()
                 if values and all(v.isdigit() or v in PANDAS_NA for v in values)
                 and any(len(v) > 1 and v.startswith("0") for v in values))


def _comma_thousands(columns: dict[str, list[str]]) -> str | None:
    """"," when a column of a comma-separated file holds quoted numbers grouped by commas ("1,230")
    and nothing else: pandas then reads them as numbers (only quoted fields can hold a comma)."""
    for values in columns.values():
        known = [v for v in values if v not in PANDAS_NA]
        grouped = sum(bool(COMMA_GROUPS.match(v)) for v in known)
        if grouped >= 2 and all(COMMA_GROUPS.match(v) or POINT_NUMBER.match(v) for v in known):
            return ","
    return None


def _named_columns(rows: list[list[str]], short: bool) -> int:
    """The number of columns to read when the last ones have no name and no value in the sample
    (a spreadsheet's trailing empty columns, ``id,age,,``); 0: read them all."""
    names = rows[0]
    named = len(names)
    while named > 1 and names[named - 1].strip() == "":
        named -= 1
    offset = 1 if short else 0
    if named == len(names) or any(any(v.strip() for v in row[named + offset:]) for row in rows[1:]):
        return 0
    return named


def _empty_tail(path: Path | str, encoding: str, sep: str) -> bool:
    """Whether the file ends with lines of only delimiters (read from its last bytes)."""
    if encoding.startswith("utf-16") or encoding.startswith("utf-32"):  # a cut would split a character
        return False
    with open(path, "rb") as fh:
        fh.seek(0, 2)
        fh.seek(max(0, fh.tell() - 4096))
        tail = fh.read().decode(encoding, errors="replace")
    lines = [line.strip() for line in tail.splitlines() if line.strip()]
    return bool(lines) and all(c == sep for c in lines[-1])


def _row_numbers(rows: list[list[str]]) -> bool:
    """R's write.csv: the header's first name is empty and the rows' first fields are 1, 2, 3 ..."""
    body = rows[1:]
    return (len(rows[0]) > 1 and rows[0][0] == "" and len(body) > 1
            and all(row and row[0].strip() == str(i) for i, row in enumerate(body, 1)))


def sniff(path: Path | str) -> CsvFormat:
    """The format of a CSV file, from its first :data:`SAMPLE_BYTES` bytes (ValueError when it
    is not a text file)."""
    with open(path, "rb") as fh:
        raw = fh.read(SAMPLE_BYTES)
    text, encoding = _decode(raw, Path(path).name)
    sep = _delimiter(text)
    skiprows, short = _preamble(text, sep)
    body = "\n".join(text.splitlines()[skiprows:]) if skiprows else text
    rows = _rows(body, sep)
    units = _units_row(rows, short) if rows else ()
    if units:
        rows = [rows[0], *rows[2:]]
    columns = _columns(rows, short) if rows else {}
    decimal, thousands = _marks(rows) if sep != "," else (".", _comma_thousands(columns))
    return CsvFormat(sep=sep, decimal=decimal, thousands=thousands, encoding=encoding, skiprows=skiprows,
                     index_unnamed=short, units_row=units, row_names=bool(rows) and _row_numbers(rows),
                     na_values=_missing_codes(columns), text_columns=_leading_zeros(columns),
                     usecols=_named_columns(rows, short) if rows else 0, empty_rows=_empty_tail(path, encoding, sep))


__all__ = ["CsvFormat", "sniff"]
