"""Values written with units ("12 oz", "355 ml", "5 ft 10 in") to one number in one unit."""

from __future__ import annotations

import functools
import re
from collections import Counter
from typing import Any, overload

import numpy as np
import pandas as pd

from kernel_tools.lazy import lazy_aware

from ._base import FrameTransformer, check_columns, check_frame
from .dtypes import NA_TOKENS
from .report import StepReport

_PART = re.compile(r"(\d+(?:\.\d+)?|\.\d+)\s*([^\d\s][^\d]*?)?\s*(?=\d|\.\d|$)")
_SPAN = 1.5  # a bare number fits a unit when within [min / 1.5, max * 1.5] of its written values
_OUNCE = "ounce?"
MAX_TRAILING_WORDS = 3  # mass or fluid ounce: decided by the column's other units
_ALIASES = {
    "'": "foot", "′": "foot", '"': "inch", "″": "inch", "''": "inch", "in": "inch",
    "lbs": "pound", "fl oz": "fluid_ounce", "fl.oz": "fluid_ounce", "fl. oz": "fluid_ounce",
    "floz": "fluid_ounce", "oz": _OUNCE, "ounce": _OUNCE, "ounces": _OUNCE,
    "°c": "degree_Celsius", "c": "degree_Celsius", "degc": "degree_Celsius", "celsius": "degree_Celsius",
    "°f": "degree_Fahrenheit", "f": "degree_Fahrenheit", "degf": "degree_Fahrenheit",
    "fahrenheit": "degree_Fahrenheit", "cc": "cubic_centimeter", "kgs": "kilogram", "mcg": "microgram",
    "pct": "percent", "%": "percent", "secs": "second", "mins": "minute", "hrs": "hour", "wk": "week",
    "wks": "week", "y": "year", "yr": "year", "yrs": "year",
}


@functools.lru_cache(maxsize=1)
def _registry() -> Any:
    import pint

    return pint.UnitRegistry()


@functools.lru_cache(maxsize=4096)
def unit_name(text: str) -> str | None:
    """Canonical pint unit name for a written unit, _OUNCE when ambiguous, None if unknown."""
    raw = text.strip().rstrip(".").strip()
    folded = raw.casefold()
    if folded in _ALIASES:
        return _ALIASES[folded]
    for candidate in (folded, raw):
        try:
            return str(_registry().Unit(candidate))
        except Exception:  # pint raises several error types for unknown text
            continue
    return None


def _dimension(unit: str) -> str:
    return str(_registry().Unit(unit).dimensionality)


def parse_quantity(value: Any) -> list[tuple[float, str | None]] | None:
    """[(number, unit or None), ...] for "5 ft 10 in"; None when the text is not a quantity."""
    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool):
        return None if pd.isna(value) else [(float(value), None)]
    if not isinstance(value, str):
        return None
    text = value.strip().replace(",", "")
    parts = _PART.findall(text)
    if not parts or _PART.sub("", text).strip():
        return None
    out = []
    for number, unit in parts:
        name = unit_name(unit) if unit else None
        if unit and name is None:
            return None
        out.append((float(number), name))
    if len(out) > 1 and any(u is None for _, u in out):
        return None
    return out


def parse_leading_quantity(value: Any) -> tuple[list[tuple[float, str | None]] | None, bool]:
    """Like parse_quantity, but "12 oz. Alumi-Tek" -> 12 oz: up to a few trailing words are
    dropped when what precedes them ends in a unit. Returns (parts, whether words were dropped)."""
    parts = parse_quantity(value)
    if parts is not None or not isinstance(value, str):
        return parts, False
    words = value.split()
    for cut in range(len(words) - 1, max(0, len(words) - MAX_TRAILING_WORDS - 1), -1):
        parts = parse_quantity(" ".join(words[:cut]))
        if parts is not None and parts[-1][1] is not None:
            return parts, True
    return None, False


class UnitConverter(FrameTransformer):
    """Convert one column to ``target_unit`` with rules learned on the training frame.

    Learned: the ounce reading (mass or fluid, from the column's other units), the target
    unit, and for bare numbers the unit whose training range alone contains them.
    """

    def __init__(self, column: str, target_unit: str | None = None, assume_unit: str | None = None) -> None:
        self.column = column
        self.target_unit = target_unit
        self.assume_unit = assume_unit

    @overload
    def _resolve(self, unit: str) -> str: ...
    @overload
    def _resolve(self, unit: None) -> None: ...
    @overload
    def _resolve(self, unit: str | None) -> str | None: ...

    def _resolve(self, unit: str | None) -> str | None:
        """The unit with an ounce read as the kind (mass or volume) fit found."""
        return self.ounce_ if unit == _OUNCE else unit

    def fit(self, X: pd.DataFrame, y: Any = None) -> UnitConverter:
        X = self._remember_input(X)
        check_columns(X, [self.column])
        # each distinct spelling is parsed once and weighted by how often it occurs
        counts = X[self.column].value_counts()
        parsed = [(parse_leading_quantity(v)[0], int(n)) for v, n in counts.items()]
        units: Counter = Counter()
        first: Counter = Counter()
        for p, n in parsed:
            if p:
                for _, u in p:
                    if u is not None:
                        units[u] += n
        dims: Counter = Counter()
        for unit, n in units.items():
            if unit != _OUNCE:
                dims[_dimension(unit)] += n
        volume = str(_registry().Unit("liter").dimensionality)
        self.ounce_ = "fluid_ounce" if dims and dims.most_common(1)[0][0] == volume else "ounce"
        for p, n in parsed:
            if p and p[0][1] is not None:
                first[self._resolve(p[0][1])] += n
        if self.target_unit is not None:
            target = unit_name(self.target_unit)
            if target is None:
                raise ValueError(f"target_unit {self.target_unit!r} is not a unit pint knows")
            self.target_unit_ = self._resolve(target)
        elif first:
            self.target_unit_ = first.most_common(1)[0][0]
        else:
            raise ValueError(
                f"column {self.column!r} has no values with a unit; pass target_unit= and assume_unit= "
                "to convert plain numbers"
            )
        self.assume_unit_ = None
        if self.assume_unit is not None:
            self.assume_unit_ = self._resolve(unit_name(self.assume_unit))
            if self.assume_unit_ is None:
                raise ValueError(f"assume_unit {self.assume_unit!r} is not a unit pint knows")
        # ranges of values written with one simple unit, to place bare numbers by magnitude
        ranges: dict[str, list[float]] = {}
        for p, _ in parsed:
            if p and len(p) == 1 and p[0][1] is not None:
                ranges.setdefault(self._resolve(p[0][1]), []).append(p[0][0])
        self.unit_ranges_ = {u: [float(np.min(v)), float(np.max(v))] for u, v in ranges.items()}
        seen: Counter = Counter()
        for unit, n in units.items():
            seen[self._resolve(unit)] += n
        self.units_seen_ = dict(seen)
        self.feature_names_out_ = [str(c) for c in X.columns]
        return self

    def _bare_unit(self, number: float) -> str | None:
        if self.assume_unit_ is not None:
            return self.assume_unit_
        fits = [u for u, (lo, hi) in self.unit_ranges_.items() if lo / _SPAN <= number <= hi * _SPAN]
        return fits[0] if len(fits) == 1 else None

    def _convert_one(self, value: Any) -> tuple[float, str]:
        parts, trailing = parse_leading_quantity(value)
        status = "trailing_text_ignored" if trailing else "converted"
        if parts is None:
            missing = value is None or (
                value.strip().casefold() in NA_TOKENS if isinstance(value, str) else pd.isna(value)
            )
            return np.nan, "missing" if missing else "unparsed"
        reg = _registry()
        if len(parts) == 1 and parts[0][1] is None:
            unit = self._bare_unit(parts[0][0])
            if unit is None:
                return np.nan, "ambiguous"
            parts, status = [(parts[0][0], unit)], "assumed"
        try:
            total = sum(reg.Quantity(n, self._resolve(u)).to(self.target_unit_).magnitude for n, u in parts)
        except Exception:  # incompatible dimensions (e.g. mg/dL vs mmol/L)
            return np.nan, "incompatible"
        return float(total), status

    def _convert(self, X: pd.DataFrame) -> tuple[pd.DataFrame, dict]:
        # columns repeat a few spellings many times: convert each distinct value once
        cache: dict[Any, tuple[float, str]] = {}
        results = []
        for v in X[self.column]:
            key = (type(v), v) if isinstance(v, str) or not pd.isna(v) else ("missing",)
            if key not in cache:
                cache[key] = self._convert_one(v)
            results.append(cache[key])
        out = X.copy()
        out[self.column] = pd.Series([r[0] for r in results], index=X.index, dtype=float)
        status = Counter(r[1] for r in results)
        bad = {s: [str(v) for v, r in zip(X[self.column], results) if r[1] == s][:5] for s in ("unparsed", "ambiguous", "incompatible")}
        return out, {"status_counts": dict(status), "examples": {k: v for k, v in bad.items() if v}}

    def transform(self, X: pd.DataFrame) -> pd.DataFrame:
        X = self._check_transform_input(X, required=[self.column])
        return self._convert(X)[0]


@lazy_aware(fitted=True)
def convert_units(
    df: pd.DataFrame, column: str, target_unit: str | None = None, assume_unit: str | None = None
) -> tuple[pd.DataFrame, StepReport]:
    """Parse "value unit" text in ``column`` (units via pint) into floats in one unit.

    ``target_unit`` defaults to the most common unit written in the column. A number written
    without unit takes ``assume_unit`` if given, else the one unit whose written values span
    its magnitude (within 1.5x of their range); when zero or several units fit it becomes missing and is reported as
    ambiguous. Up to three words after a quantity are ignored and counted
    ("trailing_text_ignored"). "oz" means fluid ounces when the column's other units are volumes.
    """
    check_frame(df)
    conv = UnitConverter(column=column, target_unit=target_unit, assume_unit=assume_unit).fit(df)
    out, stats = conv._convert(df)
    details = {
        "column": column,
        "target_unit": conv.target_unit_,
        "units_seen": conv.units_seen_,
        "bare_number_ranges": conv.unit_ranges_,
        **stats,
    }
    warnings = [
        f"{n} values of {column!r} became missing ({status})"
        for status, n in stats["status_counts"].items()
        if status in ("unparsed", "ambiguous", "incompatible")
    ]
    return out, StepReport.between("convert_units", df, out, details=details, warnings=warnings, transformer=conv)
