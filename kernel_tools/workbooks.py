"""Files that hold several tables: R's ``.RData`` (its saved objects), ``.rds`` (one), and Excel
workbooks (their sheets).

A collaborator's ``save(d, pilot, file = "cohort.RData")`` or a workbook with a "readme" sheet
before the data holds more than one table; the one to work on is named after the file, as
``cohort.RData:d`` or ``cohort.xlsx:data`` (:func:`split_table`). A file with one table needs no
name. R's files are read with pyreadr (``pip install 'dcpilot-kernel-tools[files]'``): factors
become categoricals with their levels (ordered factors ordered, which pyreadr does not keep by
itself, see :func:`_ordered_factors`), dates as datetimes; labelled (haven) columns come as their
codes, without their labels (pyreadr does not read them); Excel with pandas (openpyxl for ``.xlsx``, xlrd for ``.xls``).

Nothing here imports pandas at import time: the command line checks a file's tables before its
kernel starts.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

R_FILES = (".rds", ".rdata", ".rda")
EXCEL = (".xlsx", ".xlsm", ".xls")
EXTRA = "pip install 'dcpilot-kernel-tools[files]' (or 'jupyter_dcpilot[files]')"


class TableChoiceError(ValueError):
    """A file holds several tables and none was named, or the named one is not there."""


def is_workbook(path: str | Path) -> bool:
    """Whether ``path`` (possibly ``file:table``) is an R or Excel file."""
    return split_table(path)[0].suffix.lower() in R_FILES + EXCEL


def split_table(path: str | Path) -> tuple[Path, str | None]:
    """``("cohort.RData", "d")`` for ``"cohort.RData:d"``; ``(path, None)`` for a file that
    exists as named or is no R or Excel file (a colon may be part of a name)."""
    path = Path(path)
    if path.exists() or ":" not in path.name:
        return path, None
    name, table = path.name.rsplit(":", 1)
    if Path(name).suffix.lower() not in R_FILES + EXCEL:
        return path, None
    return path.with_name(name), table


def _pyreadr() -> Any:
    try:
        import pyreadr
    except ImportError:
        raise ImportError(f"reading R's .rds / .RData files needs pyreadr: {EXTRA}") from None
    return pyreadr


def tables(path: str | Path) -> list[str]:
    """The names of the tables ``path`` holds: an .RData's data frames, a workbook's sheets
    (an .rds holds one, named ``""``)."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".rds":
        return [""]
    if suffix in R_FILES:
        return [o["object_name"] for o in _pyreadr().list_objects(str(path)) if o.get("columns")]
    if suffix == ".xls":
        import pandas as pd

        with pd.ExcelFile(path) as book:
            return [str(s) for s in book.sheet_names]
    from openpyxl import load_workbook

    book = load_workbook(path, read_only=True)
    try:
        return list(book.sheetnames)
    finally:
        book.close()


def choose_table(path: str | Path, table: str | None) -> str:
    """The table to read: ``table`` when the file holds it, the only one when there is one;
    TableChoiceError naming them otherwise."""
    path = Path(path)
    names = tables(path)
    if table is None and len(names) == 1:
        return names[0]
    if table is not None and (table in names or path.suffix.lower() == ".rds"):
        return table
    listed = ", ".join(repr(n) for n in names[:12]) + (" ..." if len(names) > 12 else "")
    kind = "sheets" if path.suffix.lower() in EXCEL else "tables"
    if table is None:
        raise TableChoiceError(f"{path.name} holds {len(names)} {kind} ({listed}): name one, as "
                               f"{path.name}:{_largest(path, names)}")
    raise TableChoiceError(f"{path.name} has no {kind[:-1]} {table!r}; it holds {listed}")


def _largest(path: Path, names: list[str]) -> str:
    """The table with the most cells (an .RData's: the most columns), the example a refusal gives:
    a "readme" sheet before the data is not the one meant."""
    if path.suffix.lower() in R_FILES:
        width = {o["object_name"]: len(o.get("columns") or []) for o in _pyreadr().list_objects(str(path))}
        return max(names, key=lambda n: width.get(n, 0))
    if path.suffix.lower() != ".xls":
        from openpyxl import load_workbook

        book = load_workbook(path, read_only=True)
        try:
            return max(names, key=lambda n: (book[n].max_row or 0) * (book[n].max_column or 0))
        finally:
            book.close()
    return names[0]


def read_r(path: str | Path, table: str | None = None) -> Any:
    """One data frame of an R file (``table``: the object's name, needed when an .RData holds
    several), factors as categoricals with their levels, ordered factors ordered."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no R file at {path}")
    name = choose_table(path, table)
    pyreadr = _pyreadr()
    found = pyreadr.read_r(str(path), use_objects=None if path.suffix.lower() == ".rds" else [name])
    df = next(iter(found.values()))
    factors = [c for c in df.columns if df[c].dtype == "category"]
    for column in _ordered_factors(path, name) if factors else []:
        if column in factors:
            df[column] = df[column].cat.as_ordered()
    return _dates(df)


def _dates(df: Any) -> Any:
    """R's Date columns (pyreadr gives ``datetime.date`` objects) as datetimes, like every other reader's."""
    import datetime

    import pandas as pd

    for column in df.columns:
        values = df[column]
        if values.dtype == object:
            known = values.dropna()
            if len(known) and all(isinstance(v, datetime.date) for v in known.iloc[:100]):
                df[column] = pd.to_datetime(values)
    return df


def _ordered_factors(path: Path, name: str) -> list[str]:
    """The columns R stored as ordered factors (pyreadr reads every factor unordered): read with
    the pure-Python rdata parser when it is installed, else none, said in a warning (the levels are
    kept either way, but their order is what an ordinal score's encoding needs)."""
    try:
        import rdata
    except ImportError:
        warnings.warn(f"{path.name}: R's ordered factors are read unordered (their levels kept): "
                      "install rdata to keep their order (pip install 'jupyter-dcpilot[files]')", stacklevel=3)
        return []
    parsed = rdata.parser.parse_file(path)
    obj = parsed.object
    if path.suffix.lower() != ".rds":  # an .RData: a pairlist of (name, object)
        while obj is not None and getattr(obj, "tag", None) is not None:
            if _symbol(obj.tag) == name:
                obj = obj.value[0]
                break
            obj = obj.value[1]
    return _ordered_columns(obj)


def _symbol(tag: Any) -> str:
    """The text of an R symbol or string element (a reference to an earlier symbol followed)."""
    tag = getattr(tag, "referenced_object", None) or tag
    value = getattr(tag, "value", None)
    value = getattr(value, "value", value)
    return value.decode() if isinstance(value, bytes) else str(value)


def _ordered_columns(obj: Any) -> list[str]:
    names = _attribute(obj, "names")
    if names is None or not isinstance(getattr(obj, "value", None), list):
        return []
    out = []
    for column, values in zip(names, obj.value):
        classes = _attribute(values, "class") or []
        if "ordered" in classes:
            out.append(column)
    return out


def _attribute(obj: Any, name: str) -> list[str] | None:
    """An R attribute's character values (``names``, ``class``), None when absent."""
    attributes = getattr(obj, "attributes", None)
    while attributes is not None and getattr(attributes, "tag", None) is not None:
        if _symbol(attributes.tag) == name:
            return [_symbol(v) for v in attributes.value[0].value]
        attributes = attributes.value[1]
    return None


def read_excel(path: str | Path, sheet: str | None = None, **kwargs: Any) -> Any:
    """One sheet of a workbook (``sheet``: needed when it holds several); ``kwargs`` go to
    ``pandas.read_excel``."""
    import pandas as pd

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no Excel file at {path}")
    return pd.read_excel(path, sheet_name=choose_table(path, sheet), **kwargs)


__all__ = ["EXCEL", "R_FILES", "TableChoiceError", "choose_table", "is_workbook", "read_excel", "read_r",
           "split_table", "tables"]
