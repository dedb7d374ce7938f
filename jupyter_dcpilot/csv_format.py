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

import csv
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

    def read_csv_args(self) -> dict[str, str | int | None]:
        """The keyword arguments of ``pandas.read_csv`` that differ from its defaults."""
        args = {"sep": self.sep, "decimal": self.decimal, "thousands": self.thousands,
                "encoding": self.encoding, "skiprows": self.skiprows}
        defaults = {"sep": ",", "decimal": ".", "thousands": None, "encoding": "utf-8", "skiprows": 0}
        return {k: v for k, v in args.items() if v != defaults[k]}

    def call_args(self) -> str:
        """The same as source code: ``', sep=";", decimal=","'`` (empty for the defaults)."""
        return "".join(f", {k}={v!r}" for k, v in self.read_csv_args().items())


def _decode(raw: bytes) -> tuple[str, str]:
    """(text, encoding): UTF-8 (a byte-order mark is skipped), else Windows-1252, else Latin-1."""
    cut = raw.rfind(b"\n")  # a multi-byte character may straddle the end of the sample
    raw = raw[: cut + 1] if 0 < cut < len(raw) - 1 else raw
    for encoding in ("utf-8", "cp1252"):
        try:
            return raw.decode(encoding).removeprefix("\ufeff"), encoding
        except UnicodeDecodeError:
            continue
    return raw.decode("latin-1"), "latin-1"


def _rows(text: str, sep: str) -> list[list[str]]:
    lines = text.splitlines()[:200]
    return [row for row in csv.reader(lines, delimiter=sep) if row]


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


def _preamble(text: str, sep: str) -> int:
    """The number of lines above the header: lines (a title, a date, blank lines) before the
    first line as wide as most of the file, when there are some and they are narrower."""
    lines = text.splitlines()[:200]
    widths = [len(next(csv.reader([line], delimiter=sep), [])) for line in lines]
    common = Counter(w for w in widths if w).most_common(1)
    if not common or common[0][0] < 2:
        return 0
    width = common[0][0]
    first = next((i for i, w in enumerate(widths) if w == width), 0)
    return first if 0 < first <= MAX_PREAMBLE and all(w < width for w in widths[:first]) else 0


def sniff(path: Path | str) -> CsvFormat:
    """The format of a CSV file, from its first :data:`SAMPLE_BYTES` bytes."""
    with open(path, "rb") as fh:
        raw = fh.read(SAMPLE_BYTES)
    text, encoding = _decode(raw)
    sep = _delimiter(text)
    skiprows = _preamble(text, sep)
    body = "\n".join(text.splitlines()[skiprows:]) if skiprows else text
    decimal, thousands = _marks(_rows(body, sep)) if sep != "," else (".", None)
    return CsvFormat(sep=sep, decimal=decimal, thousands=thousands, encoding=encoding, skiprows=skiprows)


__all__ = ["CsvFormat", "sniff"]
