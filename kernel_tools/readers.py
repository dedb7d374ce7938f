"""``read_file``: a data file into a pandas frame, with the codebook it carries.

Stata, SPSS and SAS files carry their own codebook: a label for each variable ("Systolic BP at
the 6-month visit") and labels for coded values (1 = "Male"). pandas reads both from a Stata file,
pyreadstat from SPSS and SAS files (``pip install 'dcpilot-kernel-tools[labelled]'``); the coded
columns become pandas categoricals of their labels, so the notebook shows "Male", not 1 (the
codes stay in the returned :class:`~kernel_tools.dictionary.Dictionary`). A column with values
that have no label (a scale with labels only for "Refused" = 99) keeps its numbers.

R's ``.rds`` / ``.RData`` files and Excel workbooks hold tables and no codebook (``None``); a
file with several tables needs the one to read named (``table=``, or ``"cohort.RData:d"``, see
:mod:`kernel_tools.workbooks`). CSV and Parquet are read with pandas and carry no codebook either;
pass one to :func:`kernel_tools.read_dictionary`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from kernel_tools.dictionary import LABELLED, Dictionary, labelled_reader, labels_of, stata_labels
from kernel_tools.privacy import mark_private, private_fields
from kernel_tools.workbooks import EXCEL, R_FILES, read_excel, read_r, split_table


def read_file(path: str | Path, table: str | None = None, **kwargs: Any) -> tuple[pd.DataFrame, Dictionary | None]:
    """Read ``path`` into ``(frame, dictionary)``.

    ``.dta``, ``.sav``/``.zsav``/``.por``, ``.sas7bdat``/``.xpt``: pyreadstat, value labels as
    categories, dates as datetimes, and the file's labels as the dictionary (its columns marked
    private when the labels say they identify a person, see :mod:`kernel_tools.privacy`).
    ``.parquet``/``.pq``: ``pandas.read_parquet``; anything else: ``pandas.read_csv``; both with
    ``kwargs`` and no dictionary. ``.rds``/``.RData``/``.rda``: pyreadr (factors as categoricals);
    ``.xlsx``/``.xls``: ``pandas.read_excel``; ``table``: the object or sheet when the file holds
    several (also written ``"file.RData:name"``).
    """
    path, named = split_table(path)
    table = table if table is not None else named
    suffix = path.suffix.lower()
    if suffix in R_FILES:
        return read_r(path, table), None
    if suffix in EXCEL:
        return read_excel(path, table, **kwargs), None
    if suffix in LABELLED:
        return read_labelled(path, **kwargs)
    if suffix in (".parquet", ".pq"):
        return pd.read_parquet(path, **kwargs), None
    return pd.read_csv(path, **kwargs), None


def read_labelled(path: str | Path, *, labels: bool = True, **kwargs: Any) -> tuple[pd.DataFrame, Dictionary]:
    """A Stata / SPSS / SAS file and its labels. ``labels=False`` keeps the codes as numbers;
    ``kwargs`` go to the reader: ``pandas.read_stata`` for ``.dta`` (``columns``,
    ``convert_dates`` ...), pyreadstat's for the others (``usecols``, ``row_limit``, ``encoding`` ...)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no data file at {path}")
    if path.suffix.lower() == ".dta":  # pandas: ~10x faster than pyreadstat on Stata files
        with pd.read_stata(path, iterator=True, convert_categoricals=False, **kwargs) as reader:
            df = _blank_strings_missing(reader.read())
            dictionary = stata_labels(reader, path)
    else:
        kwargs.setdefault("dates_as_pandas_datetime", True)
        df, meta = labelled_reader(path)(str(path), **kwargs)
        dictionary = labels_of(meta, path)
    if labels:
        df = apply_value_labels(df, dictionary)
    mark_private(private_fields(dictionary, list(map(str, df.columns))))
    return df, dictionary


def _blank_strings_missing(df: pd.DataFrame) -> pd.DataFrame:
    """Stata has no missing string but the empty one (``missing(s)`` is true for ""): a blank
    in a string column is a missing value, as pandas reads a blank CSV field."""
    for position in range(df.shape[1]):
        values = df.iloc[:, position]
        if values.dtype == object:
            blank = values.to_numpy() == ""
            if blank.any():
                df.isetitem(position, values.mask(blank))
    return df


def apply_value_labels(df: pd.DataFrame, dictionary: Dictionary) -> pd.DataFrame:
    """``df`` with each column whose values all have labels in ``dictionary`` as a categorical of
    those labels (in code order; ordered when the codebook says so). ``df`` is not modified."""
    out = df.copy(deep=False)
    for position, column in enumerate(df.columns):
        f = dictionary.field(str(column))
        if f is None or not f.choices or f.multi:
            continue
        labelled = _labelled(df.iloc[:, position], f.choices, f.ordered)
        if labelled is not None:
            out.isetitem(position, labelled)
    return out


def _labelled(values: pd.Series, choices: dict[str, str], ordered: bool) -> pd.Series | None:
    """``values`` as a categorical of their labels, or None when some value has no label."""
    names = list(dict.fromkeys(choices.values()))  # two codes with one label share a category
    if pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values):
        codes = _category_codes(values.to_numpy(), choices, names)
    else:
        text = values.astype("string")
        at = pd.Index(list(choices)).get_indexer(text.fillna("\x00"))
        position = np.array([names.index(choices[k]) for k in choices])
        present = text.notna().to_numpy()
        codes = None if np.any(at[present] < 0) else np.where(present, position[at], -1)
    if codes is None:
        return None
    return pd.Series(pd.Categorical.from_codes(codes, names, ordered=ordered), index=values.index, name=values.name)


def _category_codes(x: np.ndarray, choices: dict[str, str], names: list[str]) -> np.ndarray | None:
    """Category codes of numbers ``x`` (-1 where missing), or None when a value has no label."""
    try:
        labelled = {float(code): names.index(label) for code, label in choices.items()}
    except ValueError:  # a non-numeric code next to numbers
        return None
    keys = np.array(sorted(labelled))
    position = np.array([labelled[k] for k in keys])
    whole = keys.size and np.all(keys == np.round(keys)) and keys.min() >= 0 and keys.max() < 1 << 16
    if np.issubdtype(x.dtype, np.integer) and whole:  # Stata's byte/int codes: one table look-up
        if x.size and (x.min() < 0 or x.max() > keys.max()):
            return None
        table = np.full(int(keys.max()) + 1, -1)
        table[keys.astype(int)] = position
        codes = table[x]
        return None if np.any(codes < 0) else codes
    x = x.astype(float, copy=False)
    at = np.clip(np.searchsorted(keys, x), 0, len(keys) - 1)
    present = ~np.isnan(x)
    if not np.all(keys[at[present]] == x[present]):
        return None  # a value without a label: keep the numbers
    return np.where(present, position[at], -1)


__all__ = ["apply_value_labels", "read_file", "read_labelled"]
