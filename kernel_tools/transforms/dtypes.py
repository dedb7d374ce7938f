"""Numbers, booleans and dates stored as text; N/A tokens and sentinel codes to missing."""

from __future__ import annotations

import re
import warnings as _warnings
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pandas as pd

from kernel_tools.lazy import lazy_aware
from kernel_tools.number_text import NumberFormat, count_signs, number_format, to_numbers

from ._base import FrameTransformer, check_columns, check_frame
from .report import StepReport

NA_TOKENS = ("", "?", "-", "--", ".", "n/a", "na", "nan", "null", "none", "nil", "#n/a", "missing")
TRUE_TOKENS = frozenset({"true", "yes", "y", "t"})
FALSE_TOKENS = frozenset({"false", "no", "n", "f"})
_LEADING_ZERO = re.compile(r"^[-+]?0\d")
_DATE_LIKE = re.compile(r"^\d{1,4}[-/.]\d{1,2}[-/.]\d{1,4}|^\d{1,2}\s+[A-Za-z]{3,}|^[A-Za-z]{3,}\s+\d{1,2}")


def _strings(series: pd.Series) -> pd.Series | None:
    """The string values with everything else missing (ready for ``.str``), or None if none."""
    if not (pd.api.types.is_object_dtype(series) or pd.api.types.is_string_dtype(series)):
        return None
    if pd.api.types.infer_dtype(series, skipna=True) != "string":
        series = series.where(series.map(type).eq(str))
        if series.isna().all():
            return None
    return series


def _text(series: pd.Series) -> pd.Series:
    """Strip surrounding spaces from the strings; other values stay as they are."""
    strings = _strings(series)
    if strings is None:
        return series
    stripped = strings.str.strip()
    return series.where(stripped.isna(), stripped)


def _na_mask(series: pd.Series, tokens: frozenset) -> pd.Series:
    strings = _strings(series)
    if strings is None:
        return series.isna()
    return series.isna() | strings.str.strip().str.casefold().isin(tokens)


def _to_datetime(series: pd.Series, fmt: str | None) -> pd.Series:
    with _warnings.catch_warnings():
        _warnings.simplefilter("ignore")
        parsed = pd.to_datetime(series, errors="coerce", format=fmt or "mixed")
        if not pd.api.types.is_datetime64_any_dtype(parsed):
            # different UTC offsets (a daylight-saving change): one column of UTC times
            parsed = pd.to_datetime(series, errors="coerce", format=fmt or "mixed", utc=True)
        return parsed


def _as_dtype_of(series: pd.Series, values: list[Any]) -> list[Any]:
    """Missing-value codes in the column's own type: dates given as text ('1900-01-01', as a
    JSON action carries them) become timestamps in the column's time zone; pandas no longer
    matches a datetime column against strings."""
    if not pd.api.types.is_datetime64_any_dtype(series):
        return values
    stamps = pd.to_datetime(pd.Series(values, dtype=object), errors="coerce").dropna()
    tz = getattr(series.dt, "tz", None)
    if tz is not None:
        stamps = stamps.dt.tz_localize(tz) if stamps.dt.tz is None else stamps.dt.tz_convert(tz)
    return list(stamps)


def _infer_kind(values: pd.Series, min_rate: float) -> tuple[str, str | None]:
    """Return (kind, date format) for the non-missing text values of one column."""
    if values.empty:
        return "text", None
    words = set(values.astype(str).str.strip().str.casefold().unique())
    if words <= TRUE_TOKENS | FALSE_TOKENS | {"1", "0", "1.0", "0.0"} and words & (TRUE_TOKENS | FALSE_TOKENS):
        return "boolean", None
    numbers = to_numbers(values.astype(object))
    if numbers.notna().mean() >= min_rate:
        # "00123" is a code (zip, identifier): as a number it would lose its leading zeros
        if values.astype(str).str.strip().str.match(_LEADING_ZERO).any():
            return "text", None
        return "numeric", None
    sample = values.astype(str).head(2000)
    if sample.str.match(_DATE_LIKE).mean() >= min_rate:
        fmt = pd.tseries.api.guess_datetime_format(sample.iloc[0])
        if fmt is not None and _to_datetime(sample, fmt).notna().mean() >= min_rate:
            return "datetime", fmt
        if _to_datetime(sample, None).notna().mean() >= min_rate:
            return "datetime", None
    return "text", None


class DtypeFixer(FrameTransformer):
    """Convert text columns to the type learned on the training frame; tokens to missing."""

    def __init__(
        self,
        columns: Sequence[str] | None = None,
        na_tokens: Iterable[str] = NA_TOKENS,
        sentinels: Sequence[Any] | Mapping[str, Sequence[Any]] | None = None,
        min_parse_rate: float = 0.95,
        day_numbers: Mapping[str, str] | None = None,
    ) -> None:
        self.columns = columns
        self.na_tokens = na_tokens
        self.sentinels = sentinels
        self.min_parse_rate = min_parse_rate
        self.day_numbers = day_numbers

    def fit(self, X: pd.DataFrame, y: Any = None) -> DtypeFixer:
        X = self._remember_input(X)
        if not 0 < self.min_parse_rate <= 1:
            raise ValueError(f"min_parse_rate must be in (0, 1]; got {self.min_parse_rate!r}")
        if isinstance(self.na_tokens, str):
            raise TypeError("na_tokens must be a list of strings, not one string")
        self.na_tokens_ = frozenset(str(t).strip().casefold() for t in self.na_tokens)
        if self.columns is None:
            columns = [c for c in X.columns if pd.api.types.is_object_dtype(X[c]) or pd.api.types.is_string_dtype(X[c])]
        else:
            columns = check_columns(X, self.columns)
        self.kinds_: dict[str, str] = {}
        self.date_formats_: dict[str, str | None] = {}
        self.number_formats_: dict[str, NumberFormat] = {}
        for col in columns:
            s = X[col]
            if pd.api.types.is_numeric_dtype(s) or pd.api.types.is_datetime64_any_dtype(s):
                self.kinds_[col] = "keep"
                continue
            values = _text(s[~_na_mask(s, self.na_tokens_)])
            kind, fmt = _infer_kind(values, self.min_parse_rate)
            self.kinds_[col] = kind
            if kind == "datetime":
                self.date_formats_[col] = fmt
            elif kind == "numeric":  # decimal mark and unit as the training rows write them
                self.number_formats_[col] = number_format(values.dropna().astype(str).unique())
        if isinstance(self.sentinels, Mapping):
            self.sentinels_ = {c: list(v) for c, v in self.sentinels.items()}
            check_columns(X, list(self.sentinels_), "column in sentinels")
        elif self.sentinels is not None:
            values = list(self.sentinels)
            targets = columns if self.columns is not None else list(X.columns)
            self.sentinels_ = {c: values for c in targets}
        else:
            self.sentinels_ = {}
        self.day_numbers_ = dict(self.day_numbers or {})
        check_columns(X, list(self.day_numbers_), "column in day_numbers")
        for col, origin in self.day_numbers_.items():
            try:
                pd.Timestamp(origin)
            except (TypeError, ValueError) as exc:
                raise ValueError(f"day_numbers[{col!r}] must be the date day 0 stands for; got {origin!r}") from exc
        self.feature_names_out_ = [str(c) for c in X.columns]
        return self

    def _convert(self, X: pd.DataFrame) -> tuple[pd.DataFrame, dict]:
        # a shallow copy: converted columns are replaced (never written into), the others stay
        # the input's arrays, so a wide frame with one text date is not copied whole (at 1M rows
        # × 50 that copy held ~450 MB next to the frame the checkpoint keeps for undo)
        out = X.copy(deep=False)
        stats: dict[str, dict] = {}
        for col, kind in self.kinds_.items():
            if col not in out.columns:
                continue
            s = out[col]
            col_stats: dict[str, Any] = {}
            if kind != "keep":
                na = _na_mask(s, self.na_tokens_)
                col_stats["na_tokens"] = int((na & s.notna()).sum())
                s = _text(s.mask(na))
            if kind == "numeric":
                converted = to_numbers(s.astype(object), self.number_formats_.get(col))
                col_stats.update({k: v for k, v in count_signs(s).items() if v})
            elif kind == "boolean":
                folded = s.astype(str).str.strip().str.casefold().where(s.notna())
                mapping = {**{t: True for t in TRUE_TOKENS | {"1", "1.0"}}, **{t: False for t in FALSE_TOKENS | {"0", "0.0"}}}
                converted = folded.map(mapping).astype("boolean")
            elif kind == "datetime":
                converted = _to_datetime(s, self.date_formats_[col])
            else:
                converted = s
            if kind in ("numeric", "boolean", "datetime"):
                failed = converted.isna() & s.notna()
                col_stats["unparsed"] = int(failed.sum())
                col_stats["unparsed_examples"] = [str(v) for v in s[failed].unique()[:5]]
            out[col] = converted
            stats[col] = col_stats
        for col, values in self.sentinels_.items():
            if col not in out.columns:
                continue
            hit = out[col].isin(_as_dtype_of(out[col], values))
            if hit.any():
                out[col] = out[col].mask(hit)
                stats.setdefault(col, {})["sentinels"] = int(hit.sum())
        for col, origin in self.day_numbers_.items():  # spreadsheet and SAS dates: days since an origin
            if col in out.columns:
                days = pd.to_numeric(out[col], errors="coerce")
                out[col] = pd.to_datetime(days, unit="D", origin=pd.Timestamp(origin), errors="coerce")
                stats.setdefault(col, {})["days_counted_from"] = str(origin)
        return out, stats

    def transform(self, X: pd.DataFrame) -> pd.DataFrame:
        X = self._check_transform_input(X)
        return self._convert(X)[0]


@lazy_aware(fitted=True)
def fix_dtypes(
    df: pd.DataFrame,
    columns: Sequence[str] | None = None,
    na_tokens: Iterable[str] = NA_TOKENS,
    sentinels: Sequence[Any] | Mapping[str, Sequence[Any]] | None = None,
    min_parse_rate: float = 0.95,
    day_numbers: Mapping[str, str] | None = None,
) -> tuple[pd.DataFrame, StepReport]:
    """Turn numbers, booleans and dates stored as text into real types.

    A text column becomes numeric/boolean/datetime when at least ``min_parse_rate`` of its
    non-missing values parse; the rest become missing and are counted (with examples).
    ``na_tokens`` (compared case-insensitively, e.g. "?", "n/a", "") become missing and the
    surrounding spaces of the remaining text are stripped. Codes with leading zeros ("02139")
    stay text.
    ``sentinels`` (e.g. [999, -1], or {"age": [999]}) become missing too; a plain list applies
    to ``columns`` (or every column when columns is None) — name columns to be safe.
    ``day_numbers`` (e.g. {"admit_date": "1899-12-30"}) turns numbers that count days from an
    origin into dates: Excel's serial dates count from 1899-12-30, SAS's and Stata's from 1960-01-01.
    """
    check_frame(df)
    fixer = DtypeFixer(columns=columns, na_tokens=na_tokens, sentinels=sentinels, min_parse_rate=min_parse_rate,
                       day_numbers=day_numbers)
    fixer.fit(df)
    out, stats = fixer._convert(df)
    changed = {c: f"{df[c].dtype} -> {out[c].dtype}" for c in df.columns if out[c].dtype != df[c].dtype}
    details = {"converted": changed, "kinds": fixer.kinds_, "per_column": stats}
    warnings = [
        f"{c!r}: {s['unparsed']} values did not parse as {fixer.kinds_[c]} and became missing (e.g. {s['unparsed_examples'][:3]})"
        for c, s in stats.items()
        if s.get("unparsed")
    ]
    return out, StepReport.between("fix_dtypes", df, out, details=details, warnings=warnings, transformer=fixer)
