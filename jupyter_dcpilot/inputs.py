"""What ``jupyter dcpilot run`` checks about its inputs before any step runs (while its kernel starts).

A wrong column name or an unusable target used to surface after the kernel started, the data
loaded and a split was retried (~25 s later, as a KeyError). These checks read only the files'
headers and the few columns named on the command line, with pyarrow (fast to import, columnar,
multi-threaded), and answer in one line with the close names, in well under two seconds.
"""

from __future__ import annotations

import builtins
import csv
import keyword
import re
from pathlib import Path
from typing import Any

from kernel_tools.dictionary import LABELLED
from kernel_tools.time_names import all_events_status
from kernel_tools.workbooks import EXCEL, is_workbook, split_table

from .csv_format import CsvFormat, sniff
from .engine.validation import did_you_mean

PARQUET = (".parquet", ".pq")


class InputError(ValueError):
    """An input the co-pilot cannot work with; the message says which and why, in one line."""


def _is_parquet(path: Path) -> bool:
    return path.suffix.lower() in PARQUET


def _folder_files(path: Path) -> list[Path]:
    """The Parquet files of a folder (else its CSV files), in name order."""
    files = sorted(p for p in path.iterdir() if p.is_file() and _is_parquet(p))
    return files or sorted(p for p in path.iterdir() if p.is_file() and p.suffix.lower() == ".csv")


def _is_labelled(path: Path) -> bool:
    return path.suffix.lower() in LABELLED


def _labels(path: Path) -> Any:
    """The variable labels of a Stata / SPSS / SAS file (its header only), as a Dictionary."""
    from kernel_tools.dictionary import DictionaryError, read_labels

    try:
        return read_labels(path)
    except (DictionaryError, ImportError) as exc:  # ImportError: pyreadstat ([labelled] extra) missing
        raise InputError(f"cannot read {path.name}: {_first_line(exc)}") from None


def header(path: Path) -> list[str]:
    """The column names of a CSV, Parquet, Stata, SPSS or SAS file (or of a folder's first file)
    as pandas reads them (an empty CSV name is ``Unnamed: <position>``), read without loading the data."""
    if path.is_dir():
        files = _folder_files(path)
        if not files:
            raise InputError(f"{path.name}/ holds no Parquet or CSV files")
        path = files[0]
    if _is_labelled(path):
        return [f.name for f in _labels(path)]
    if is_workbook(path):
        return _workbook_header(path)
    try:
        if _is_parquet(path):
            import pyarrow.parquet as pq

            return [str(n) for n in pq.read_schema(path).names]
        return _csv_header(path, sniff(path))
    except (OSError, ValueError, UnicodeDecodeError, csv.Error) as exc:  # pyarrow's errors derive from the first two
        kind = "Parquet" if _is_parquet(path) else "CSV"
        raise InputError(f"cannot read {path.name} as {kind}: {_first_line(exc)}") from None


def _workbook_header(path: Path) -> list[str]:
    """The column names of the table an R file or a workbook holds (``file:table`` names one of
    several): pyreadr's listing of an R file's objects, the first row of a sheet."""
    from kernel_tools.workbooks import TableChoiceError, _pyreadr, choose_table

    file, table = split_table(path)
    if not file.is_file():
        raise InputError(f"data file not found: {file}")
    try:
        name = choose_table(file, table)
        if file.suffix.lower() in EXCEL:
            import pandas as pd

            return [str(c) for c in pd.read_excel(file, sheet_name=name, nrows=0).columns]
        objects = _pyreadr().list_objects(str(file))
        return next(list(o["columns"]) for o in objects if o["object_name"] in (name, None) or len(objects) == 1)
    except (TableChoiceError, ImportError) as exc:
        raise InputError(str(exc)) from None
    except Exception as exc:  # noqa: BLE001 - pyreadr, openpyxl and xlrd each raise their own kinds
        raise InputError(f"cannot read {file.name}: {_first_line(exc)}") from None


def _csv_header(path: Path, form: CsvFormat) -> list[str]:
    """The header record of a CSV file (quoted line breaks and all: ``"age\\n(years)"`` is one
    name), read with the stdlib reader from the file itself: no block or field size a header
    of 30,000 names, or a first data line of 200 MB, could exceed."""
    return _header_record(path, form)[0]


def _header_record(path: Path, form: CsvFormat) -> tuple[list[str], int]:
    """(names as pandas reads them, the lines the header takes)."""
    encoding = "utf-8-sig" if form.encoding == "utf-8" else form.encoding
    with open(path, encoding=encoding, newline="") as fh:
        for _ in range(form.skiprows):
            fh.readline()
        reader = csv.reader(fh, delimiter=form.sep)
        names = next(reader, [])
        lines = reader.line_num
    return [name if name != "" else f"Unnamed: {i}" for i, name in enumerate(names)], lines


def repeated_names(path: Path, names: list[str]) -> None:
    """InputError naming the column names a header repeats (pandas would rename the second 'y'
    to 'y.1' and a run would quietly use one of them)."""
    seen: dict[str, list[int]] = {}
    for i, name in enumerate(names, 1):
        seen.setdefault(name, []).append(i)
    twice = {name: at for name, at in seen.items() if len(at) > 1}
    if twice:
        listed = "; ".join(f"{name!r} (columns {', '.join(map(str, at))})" for name, at in list(twice.items())[:5])
        raise InputError(f"{path.name} repeats column names: {listed}. Give each column its own name")


def parquet_rows(paths: list[Path]) -> int | None:
    """Rows of Parquet files and folders, from their footers (no data read); None when any
    input is not Parquet."""
    import pyarrow.parquet as pq

    files = [f for p in paths for f in (_folder_files(p) if p.is_dir() else [p])]
    if not files or not all(_is_parquet(f) for f in files):
        return None
    return sum(pq.ParquetFile(f).metadata.num_rows for f in files)


def read_columns(path: Path, names: list[str]) -> Any:
    """Only the named columns of a file, as a pyarrow Table. CSV columns are read as text:
    pandas (which loads the data in the kernel) never fails on a value that does not fit the
    type the first rows suggest, so these checks must not either."""
    import pyarrow as pa

    if path.is_dir():  # a folder of files: the named columns of every file (columns only: cheap)
        import pyarrow.dataset as ds

        files = _folder_files(path)
        if _is_parquet(files[0]):
            return ds.dataset([str(f) for f in files], format="parquet").to_table(columns=names)
        import pyarrow.csv as pcsv

        form = sniff(files[0])
        fmt = ds.CsvFileFormat(parse_options=pcsv.ParseOptions(delimiter=form.sep),
                               read_options=pcsv.ReadOptions(encoding=form.encoding, skip_rows=form.skiprows))
        return ds.dataset([str(f) for f in files], format=fmt).to_table(columns=names)
    if _is_parquet(path):
        import pyarrow.parquet as pq

        # the file's own reader: read_table goes through pyarrow.dataset, which imports pandas
        # (~0.5-1 s of CPU in the command line while its kernel starts, issue 31)
        return pq.ParquetFile(path).read(columns=names)
    if is_workbook(path):  # R's and Excel's files are read whole (what pyreadr and pandas can do)
        from kernel_tools.readers import read_file

        frame, _ = read_file(path)
        # an R factor's values as text: the checks look at the values, not at their levels
        return pa.table({n: pa.array(frame[n].astype(object) if frame[n].dtype == "category" else frame[n],
                                     from_pandas=True) for n in names})
    if _is_labelled(path):  # the codes, as numbers: what the checks test does not depend on the labels
        from kernel_tools.readers import read_labelled

        which = {"columns": names} if path.suffix.lower() == ".dta" else {"usecols": names}
        frame, _ = read_labelled(path, labels=False, **which)
        return pa.Table.from_pandas(frame[names], preserve_index=False)
    import pyarrow.csv as pcsv

    text = {name: pa.string() for name in names}
    marks = sniff(path)
    codes = [code for column, found in marks.na_values if column in names for code in found]  # as the load cell
    options = pcsv.ConvertOptions(include_columns=names, column_types=text, strings_can_be_null=True,
                                  null_values=[*pcsv.ConvertOptions().null_values, *codes])
    table = _csv(path, lambda parse, read: pcsv.read_csv(path, parse_options=parse, read_options=read,
                                                         convert_options=options), marks)
    if marks.decimal == "." and not marks.thousands:
        return table
    import pyarrow.compute as pc

    # as pandas reads them: "1.234,5" and "1,234.5" are 1234.5 (the checks test numbers written with a point)
    def pointed(column: Any) -> Any:
        if marks.thousands:
            column = pc.replace_substring(column, marks.thousands, "")
        return pc.replace_substring(column, ",", ".") if marks.decimal == "," else column

    return pa.table({n: pointed(table.column(n)) for n in table.column_names})


def _csv(path: Path, read: Any, form: CsvFormat | None = None) -> Any:
    """``read(parse_options, read_options)`` with pyarrow's fast parser, in the file's delimiter
    and encoding (``form``, else :func:`sniff`'s), with the header's names as pandas reads them
    (a header one name short: the first field is the unnamed index). Tried again allowing line
    breaks inside quoted values (pandas accepts them; pyarrow only when told, at some speed), and
    in blocks as large as the file when a line outgrows pyarrow's 1 MiB block."""
    import pyarrow as pa
    import pyarrow.csv as pcsv

    form = form or sniff(path)
    names, lines = _header_record(path, form)
    if form.index_unnamed:
        names = ["\x00index", *names]
    # pyarrow skips lines, not quoted records: the header's own lines are counted here
    options = {"encoding": form.encoding, "skip_rows": form.skiprows + lines + bool(form.units_row),
               "column_names": names}
    size = max(path.stat().st_size + 1, 1 << 20)
    tries = ((False, 1 << 20), (True, 1 << 20), (True, size))
    for i, (newlines, block) in enumerate(tries):
        try:
            return read(pcsv.ParseOptions(delimiter=form.sep, newlines_in_values=newlines),
                        pcsv.ReadOptions(block_size=block, **options))
        except pa.ArrowInvalid:
            if i == len(tries) - 1:
                raise
    raise AssertionError("unreachable")


def _first_line(error: BaseException) -> str:
    return (str(error).strip().splitlines() or [type(error).__name__])[0]


def _examples(column: Any, limit: int = 3) -> str:
    import pyarrow.compute as pc

    values = pc.unique(column).slice(0, limit).to_pylist()
    return ", ".join(repr(str(v))[:40] for v in values)


def check_column(path: Path, option: str, name: str, column: Any, time: str | None = None,
                 others: tuple[str, ...] = ()) -> None:
    """The content checks of one named column (``option`` is ``--target`` or ``--time``); ``time``
    and the file's ``others`` columns tell a status with every row the event (survival over a time
    beside it, which the diagnosis reads) from a target with nothing to predict."""
    import pyarrow.compute as pc

    rows, missing = len(column), column.null_count
    if rows == 0:
        raise InputError(f"{path.name} has no rows")
    if missing == rows:
        raise InputError(f"{option} {name!r} is missing in all {rows} rows of {path.name}")
    if option == "--target":
        distinct = pc.count_distinct(column).as_py()
        value = column.drop_null()[0].as_py() if distinct < 2 else None
        if distinct < 2 and not all_events_status(value, time, [c for c in others if c != name]):
            raise InputError(f"{option} {name!r} has the single value {value!r} in all {rows - missing} "
                             f"rows where it is known ({path.name}): there is nothing to predict")
    if option == "--time":
        durations = _durations(path, option, name, column)
        # the largest, not any(x > 0): pyarrow turns the Python 0 into an array through
        # pandas, which the command line then imports before it starts the kernel (~1 s)
        longest = pc.max(durations).as_py()
        if longest is None or not longest > 0:
            raise InputError(f"{option} {name!r} has no positive value in {path.name} (all {len(durations)} known "
                             "durations are 0 or negative): a survival time counts from the start and must be "
                             "positive")


def _durations(path: Path, option: str, name: str, column: Any) -> Any:
    """A ``--time`` column's known values as numbers (numbers written as text, as pandas reads
    them); InputError when it holds text or dates."""
    import pyarrow as pa
    import pyarrow.compute as pc

    kind = column.type
    if pa.types.is_integer(kind) or pa.types.is_floating(kind) or pa.types.is_decimal(kind):
        return column.drop_null().cast(pa.float64())
    text = column.drop_null().cast(pa.string())
    odd = text.filter(pc.invert(pc.match_substring_regex(text, NUMBER, ignore_case=True)))
    if len(odd) == 0:  # numbers written as text: pandas reads them as numbers
        return pc.cast(pc.utf8_trim_whitespace(text), pa.float64())
    what = "dates" if pa.types.is_temporal(kind) or _parses(odd, pa.timestamp("s")) else "text"
    raise InputError(f"{option} {name!r} holds {what} ({_examples(odd)}), not numbers: give the "
                     "duration until the event or censoring (e.g. days from the start)")


# what pandas reads as a number (and "inf" / "nan", which it reads as floats)
NUMBER = r"^\s*[-+]?((\d+\.?\d*|\.\d+)(e[-+]?\d+)?|inf|infinity|nan)\s*$"


def _parses(column: Any, kind: Any) -> bool:
    import pyarrow as pa

    try:
        column.cast(kind)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return False
    return True


INDEX_WORDS = ("first", "row")  # --index values that name no column


def target_first(paths: list[Path], target: str | None) -> list[Path]:
    """The files in the order a run loads them: the first one that holds ``target`` first (the
    table the others join to: the diagnosis reads the target from ``df``), the rest as given.
    Before, a target in a later file (a stays file passed before the admissions that record the
    outcome) failed the diagnosis and left the join without a key."""
    if target is None or len(paths) < 2 or any(p.is_dir() for p in paths) or target in header(paths[0]):
        return paths
    holder = next((p for p in paths[1:] if target in header(p)), None)
    return paths if holder is None else [holder, *(p for p in paths if p != holder)]


# names a loaded file may not take: Python's own, the notebook's libraries and the cells' usual results
TAKEN_NAMES = frozenset(dir(builtins)) | {"pd", "np", "kt", "dd", "plt", "os", "sys", "json", "train", "test",
                                          "joined", "records", "report", "model", "client", "data"}


def frame_names(paths: list[Path]) -> list[str]:
    """The kernel variables the files are loaded into: ``df`` for the first (the one holding the
    target), each other by its file's name when that is a free Python name (``icustays.csv`` ->
    ``icustays``: the questions and the notebook then say which file), else ``df_<k>``."""
    names = ["df"]
    for k, path in enumerate(paths[1:], start=2):
        stem = split_table(path)[0].name.split(".")[0].lower()
        stem = re.sub(r"\W+", "_", stem).strip("_")
        free = (stem.isidentifier() and not keyword.iskeyword(stem) and stem not in TAKEN_NAMES
                and not stem.startswith("df") and stem not in names)
        names.append(stem if free else f"df_{k}")
    return names


def check_run_inputs(data: list[Path], *, target: str | None, time: str | None = None,
                     entity: str | None = None, index: str | None = None,
                     test: Path | None = None, folders: bool = False, values: bool = True) -> list[str]:
    """Check ``jupyter dcpilot run``'s files and column options; returns warnings.
    ``values=False``: the files and the column names only, no column read (what the command
    line checks before it starts its kernel; the values are checked while the kernel starts).

    InputError (one line, close names suggested) for: a missing or unreadable file, a
    ``--target`` / ``--time`` / ``--id`` / ``--index`` column that no data file has, a target
    that is also the time or id, a target missing in every row or with a single value, a
    ``--time`` that is not numbers. With several files (a join), a column may be in any of them.
    ``folders``: a folder of Parquet or CSV files is one input too (``--engine dask``).
    """
    for path in [*data, *([test] if test is not None else [])]:
        if folders and path.is_dir():  # --engine dask reads a folder of files
            continue
        if not split_table(path)[0].is_file():  # "cohort.RData:d": a table of a file
            which = "test file" if path == test else "data file"
            raise InputError(f"{which} not found: {path}")
    for option, other in (("--time", time), ("--id", entity)):
        if target is not None and other == target:
            raise InputError(f"--target {target!r} cannot also be the {option} column")
    headers = {path: header(path) for path in data}
    for path, names in headers.items():
        repeated_names(path, names)
    known = [c for names in headers.values() for c in names]
    index_column = None if index in INDEX_WORDS else index
    for option, name in (("--target", target), ("--time", time), ("--id", entity), ("--index", index_column)):
        if name is None or name in known:
            continue
        files = ", ".join(p.name for p in data)
        words = list(INDEX_WORDS) if option == "--index" else []
        also = " nor 'first' or 'row'" if words else ""
        raise InputError(f"{option} {name!r} is not a column of {files}{also}{did_you_mean(name, known + words)}")
    if not values:
        return []
    for path, names in headers.items():
        wanted = [(o, n) for o, n in (("--target", target), ("--time", time))
                  if n is not None and names.count(n) == 1]
        if not wanted:
            continue
        try:
            table = read_columns(path, [n for _, n in wanted])
        except (OSError, ValueError) as exc:
            raise InputError(f"cannot read {path.name}: {_first_line(exc)}") from None
        for option, name in wanted:
            check_column(path, option, name, table.column(name), time, tuple(names))
    warnings = []
    if test is not None and target is not None and target not in header(test):
        warnings.append(f"the test file {test.name} has no {target!r} column; it cannot be scored")
    return warnings


def check_dictionary(path: Path, data: list[Path], events: Path | None = None) -> list[str]:
    """Check ``--dictionary`` (and REDCap's ``--events`` mapping) before any step runs; returns
    warnings. InputError (one line) for a missing file, a file that is not a codebook, or a
    codebook that describes none of the data's columns (another study's, most likely): a codebook
    that disagrees with the data in part is a finding of the diagnosis, not an error."""
    from kernel_tools.dictionary import DictionaryError, read_dictionary

    for option, file in (("--dictionary", path), ("--events", events)):
        if file is not None and not file.is_file():
            raise InputError(f"{option} file not found: {file}")
    try:
        book = read_dictionary(path, events=events)
    except (DictionaryError, ImportError, ValueError, OSError) as exc:
        raise InputError(f"--dictionary {path.name} cannot be read as a codebook: {_first_line(exc)}") from None
    columns = [c for p in data for c in header(p)]
    described = [c for c in columns if book.field(c) is not None]
    if not described:
        fields = ", ".join(repr(f.name) for f in list(book)[:4])
        raise InputError(f"--dictionary {path.name} describes none of the {len(columns)} columns of "
                         f"{', '.join(p.name for p in data)} (its fields: {fields}{' ...' if len(book) > 4 else ''})")
    warnings = []
    if len(described) * 2 < len(columns):
        warnings.append(f"--dictionary {path.name} describes only {len(described)} of the {len(columns)} columns")
    if events is not None and book.format != "redcap":
        warnings.append(f"--events {events.name} is REDCap's event mapping, but {path.name} is a {book.format} "
                        "codebook: the events are read anyway")
    return warnings


__all__ = ["INDEX_WORDS", "InputError", "check_column", "check_dictionary", "check_run_inputs", "frame_names",
           "header", "read_columns"]
