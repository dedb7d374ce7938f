"""How a CSV file is written: delimiter, decimal mark, thousands separator, encoding, and the
lines above its header.

``pd.read_csv(path)`` assumes commas, decimal points and UTF-8. Files exported by European
spreadsheets use semicolons and decimal commas ("72,5"), lab systems write tabs or pipes, and
older exports are Windows-1252; exports from lab systems and statistics packages put a title or
a date above the header: read with the defaults, such a file becomes one text column, numbers
become text, or the read fails. The co-pilot looks at the file's first lines once and writes what it found
into the load cell (``pd.read_csv(path, sep=";", decimal=",")``), so the notebook says how the
file was read and re-runs without the co-pilot.
"""

from __future__ import annotations

import codecs
import csv
import io
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

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

    def read_csv_args(self) -> dict[str, str | int | None]:
        """The keyword arguments of ``pandas.read_csv`` that differ from its defaults."""
        args = {"sep": self.sep, "decimal": self.decimal, "thousands": self.thousands,
                "encoding": self.encoding, "skiprows": self.skiprows}
        defaults = {"sep": ",", "decimal": ".", "thousands": None, "encoding": "utf-8", "skiprows": 0}
        return {k: v for k, v in args.items() if v != defaults[k]}

    def call_args(self) -> str:
        """The same as source code: ``', sep=";", decimal=","'`` (empty for the defaults)."""
        return "".join(f", {k}={v!r}" for k, v in self.read_csv_args().items())


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
    for sep in DELIMITERS:
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


def sniff(path: Path | str) -> CsvFormat:
    """The format of a CSV file, from its first :data:`SAMPLE_BYTES` bytes (ValueError when it
    is not a text file)."""
    with open(path, "rb") as fh:
        raw = fh.read(SAMPLE_BYTES)
    text, encoding = _decode(raw, Path(path).name)
    sep = _delimiter(text)
    skiprows, short = _preamble(text, sep)
    body = "\n".join(text.splitlines()[skiprows:]) if skiprows else text
    decimal, thousands = _marks(_rows(body, sep)) if sep != "," else (".", None)
    return CsvFormat(sep=sep, decimal=decimal, thousands=thousands, encoding=encoding, skiprows=skiprows,
                     index_unnamed=short)


__all__ = ["CsvFormat", "sniff"]
