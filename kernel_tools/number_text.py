"""Numbers written as text, as spreadsheets and forms write them.

``"$52,341"``, ``"45.3%"``, ``"72,5"`` (a decimal comma), ``"1.234,5"``, ``"75.3 kg"``: one set of
rules, so what the diagnosis calls "numbers stored as text" is exactly what ``fix_dtypes``
turns into numbers — a finding the fix cannot act on would be a broken promise.

A column's format is read from its values once (:func:`number_format`): the decimal mark
(a comma when some value can only be read so — ``"72,5"``, ``"1234,5"``, ``"1.234,5"`` — and
none only with a point), and the unit when one unit follows the numbers. Values are then read
with it (:func:`to_numbers`): currency signs and a trailing percent sign are dropped (a percent
stays a percent: ``"45%"`` is 45), thousands separators removed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

UNIT_SHARE = 0.95  # a unit is the column's when it follows this share of its values
_CURRENCY = r"[$€£¥]"
# digits in groups of three (1,234,567 / 1.234.567 / 1 234 / 1'234) or not, then decimals
_NUMBER = r"[-+]?(?:\d{1,3}(?:[,.' ]\d{3})+|\d+)?(?:[.,]\d+)?(?:[eE][-+]?\d+)?"
_PARTS = re.compile(
    rf"^\s*(?P<sign>-)?\s*(?:{_CURRENCY}\s*)?(?P<num>{_NUMBER})\s*(?:{_CURRENCY})?\s*"
    r"(?P<unit>%|[A-Za-zµ°][A-Za-z0-9µ°/²³.]*)?\s*$")
_COMMA_ONLY = re.compile(r"^[-+]?(\d+,\d{1,2}|\d+,\d{4,}|\d{4,},\d+|\d{1,3}(\.\d{3})+,\d+)$")
_POINT_ONLY = re.compile(r"^[-+]?(\d+\.\d{1,2}|\d+\.\d{4,}|\d{4,}\.\d+|\d{1,3}(,\d{3})+\.\d+)$")
_PLAIN = re.compile(r"^[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?$")


@dataclass(frozen=True)
class NumberFormat:
    """How one column writes its numbers: its decimal mark and the unit after them (if one)."""

    decimal: str = "."
    unit: str | None = None


def _parts(values: pd.Index) -> pd.DataFrame:
    """The number and the word after it of each text value (missing where it has another shape)."""
    return pd.Series(values, dtype=object).astype(str).str.extract(_PARTS)


def number_format(values: pd.Series | pd.Index, weights: np.ndarray | None = None) -> NumberFormat:
    """The format of a column's text numbers, from its values (distinct ones, with ``weights``
    — their counts — when given)."""
    values = pd.Index(values)
    w = pd.Series(np.ones(len(values)) if weights is None else np.asarray(weights, dtype=float))
    parts = _parts(values)
    nums = parts["num"].fillna("")
    comma = nums.str.match(_COMMA_ONLY).any()
    point = nums.str.match(_POINT_ONLY).any()
    decimal = "," if comma and not point else "."
    has_number = nums.str.contains(r"\d").to_numpy()
    units = parts["unit"].where(has_number & (parts["unit"] != "%").to_numpy())
    unit = None
    if units.notna().any():
        by_unit = w.groupby(units.to_numpy()).sum()
        top = by_unit.idxmax()
        if by_unit[top] >= UNIT_SHARE * w[has_number].sum():
            unit = str(top)
    return NumberFormat(decimal, unit)


def read_values(values: pd.Index, fmt: NumberFormat) -> np.ndarray:
    """Distinct text values as floats in format ``fmt`` (NaN where one is not a number)."""
    values = pd.Index(values, dtype=object).astype(str)
    out = np.full(len(values), np.nan)
    plain = values.str.strip().str.match(_PLAIN) if fmt.decimal == "." else np.zeros(len(values), bool)
    plain = np.asarray(plain, dtype=bool)
    if plain.any():  # most text numbers are plain: no pattern to take apart
        out[plain] = pd.to_numeric(pd.Series(values[plain]).str.strip(), errors="coerce").to_numpy(dtype=float)
    if (~plain).any():
        out[~plain] = _read(values[~plain], fmt)
    return out


def _read(values: pd.Index, fmt: NumberFormat) -> np.ndarray:
    parts = _parts(values)
    unit = parts["unit"]
    ok = parts["num"].notna() & parts["num"].str.contains(r"\d") & (
        unit.isna() | (unit == "%") | (unit == fmt.unit))
    num = (parts["sign"].fillna("") + parts["num"].fillna("")).where(ok, "").str.replace(r"[' ]", "", regex=True)
    if fmt.decimal == ",":
        num = num.str.replace(".", "", regex=False).str.replace(",", ".", regex=False)
    else:
        num = num.str.replace(",", "", regex=False)
    num = num.where(num.str.match(_PLAIN))
    return pd.to_numeric(num, errors="coerce").to_numpy(dtype=float)


def to_numbers(values: pd.Series, fmt: NumberFormat | None = None) -> pd.Series:
    """``values`` as floats (NaN where a value is not a number in ``fmt``, learned from the values
    themselves when not given). Numbers already stored as numbers stay as they are."""
    if pd.api.types.is_numeric_dtype(values.dtype) and not pd.api.types.is_bool_dtype(values.dtype):
        return values.astype(float)
    plain = pd.to_numeric(values, errors="coerce")  # the fast path: plain numbers
    todo = plain.isna() & values.notna()
    if not todo.any():
        return plain.astype(float)
    fmt = fmt or number_format(values[values.notna()].astype(str).unique())
    out = plain.astype(float)
    if fmt.decimal == ",":  # "1.234" in a decimal-comma column is 1234, not what the fast path read
        todo = values.notna() & (todo | values.astype(str).str.contains(".", regex=False))
    distinct = pd.Index(values[todo].astype(str).unique())
    read = pd.Series(read_values(distinct, fmt), index=distinct)
    out[todo] = values[todo].astype(str).map(read).to_numpy(dtype=float)
    return out


def count_signs(values: pd.Series) -> dict[str, int]:
    """How many values carried a percent sign, a currency sign or a unit (for the step's report)."""
    text = values.dropna().astype(str).str.strip()
    return {"percent_signs_stripped": int(text.str.endswith("%").sum()),
            "currency_signs_stripped": int(text.str.contains(_CURRENCY).sum()),
            "units_stripped": int(text.str.contains(r"\d\s*[A-Za-zµ°][A-Za-z0-9µ°/²³.]*$").sum())}


__all__ = ["NumberFormat", "number_format", "read_values", "to_numbers", "count_signs"]
