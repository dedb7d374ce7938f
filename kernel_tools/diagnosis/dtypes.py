"""Columns whose storage hides what they hold: numbers/booleans/dates as text, N/A tokens,
sentinel codes such as 999, constant columns, and free text."""

from __future__ import annotations

import numpy as np
import pandas as pd

from kernel_tools.diagnosis.columns import ColumnProfile, numeric_values, zero_padded
from kernel_tools.diagnosis.dates import DAY_ORIGINS, day_number_origin, today_days
from kernel_tools.diagnosis.options import call, drop, keep
from kernel_tools.diagnosis.registry import Context, KindData, detector
from kernel_tools.findings import Finding, Option
from kernel_tools.number_text import count_signs, number_format, to_numbers
from kernel_tools.plurals import counted
from kernel_tools.vocabulary import Basis, FindingKind

SENTINELS = (-99999, -9999, -999, -99, -9, -1, 99, 999, 9999, 99999, 999999)


def find_sentinels(v: np.ndarray) -> list[float]:
    """Round codes like 999 or -1 that sit far outside the other values and repeat."""
    if not v.size:
        return []
    with np.errstate(invalid="ignore"):  # all missing: NaN bounds, no code between them
        low, high = np.fmin.reduce(v), np.fmax.reduce(v)
    # only the codes between the column's bounds can be in it (one comparison pass for each)
    inside = [s for s in SENTINELS if low <= s <= high]
    if not inside or not np.isin(v, inside).any():  # the common case: a few vectorised passes and done
        return []
    finite = v[np.isfinite(v)]
    if finite.size < 50:
        return []
    found = []
    for s in SENTINELS:
        is_code = finite == s
        count = int(is_code.sum())
        if count < max(5, 0.002 * finite.size):
            continue
        rest = finite[~is_code]
        if np.unique(rest[:1000]).size < 5:
            continue
        lo, hi = np.percentile(rest, [1, 99])
        span = max(hi - lo, 1e-9)
        if s > 0 and s > rest.max() and s > hi + 3 * span and rest.max() < (s + hi) / 2:
            found.append(float(s))
        elif s < 0 and s < rest.min() and lo >= 0:
            found.append(float(s))
    return found


def find_dtype_issues(df: pd.DataFrame, profiles: dict[str, ColumnProfile], exclude: set[str],
                      private: frozenset[str] = frozenset()) -> list[Finding]:
    """``private``: columns that identify a person (a codebook says so): dropped as identifiers,
    never parsed."""
    findings = []
    for c, prof in profiles.items():
        if c in private:
            continue
        if prof.parsed_as is not None and prof.kind == "categorical" and not (
                prof.parsed_as == "numeric" and zero_padded(prof)):
            bad, written = [], ""
            if prof.counts is not None and prof.parsed_as == "numeric":
                keys = pd.Series(prof.counts.index[:2000].map(str))
                numeric = to_numbers(keys.astype(object))
                bad = [k for k in keys[numeric.isna()].tolist() if k not in prof.na_tokens][:5]
                written = _written_as(keys[numeric.notna()])
            what = {"numeric": "numbers", "bool": "true/false values", "datetime": "dates"}[prof.parsed_as]
            tokens = ", ".join(repr(t) for t in prof.na_tokens[:5])
            summary = (f"'{c}' stores {what} as text" + (f" ({written})" if written else "")
                       + (f", with missing values written as {tokens}" if prof.na_tokens else "") + ".")
            findings.append(Finding(
                "numeric_as_text", [c], "warning",
                summary,
                {"stored_as": str(df[c].dtype), "holds": prof.parsed_as,
                 "parsable_share": round(prof.parsed_share, 4), "na_tokens": prof.na_tokens[:20],
                 "unparsable_examples": bad, "distinct_values": prof.nunique},
                [Option("fix_dtypes", f"Convert to {what}",
                        f"Parse '{c}' as {what}" + (f" and read {tokens} as missing" if tokens else "") + ".",
                        "values that do not parse become missing", True,
                        call("fix_dtypes", columns=[c], na_tokens=prof.na_tokens, sentinels={})),
                 keep("Keep it as text (treated as categories).",
                      "order and magnitude are lost; every value becomes its own category")],
                None,
            ))
        elif prof.kind == "numeric" and c not in exclude and prof.nunique > 5:
            values = numeric_values(df[c], prof)
            origin = day_number_origin(c, values, today_days())
            if origin is not None:
                findings.append(_day_numbers(c, origin, values))
                continue
            sentinels = find_sentinels(values)
            if sentinels:
                findings.append(_sentinel_codes(c, values, sentinels))
        if c in exclude:
            continue
        if prof.nunique == 1:
            value = prof.counts.index[0] if prof.counts is not None and len(prof.counts) else (
                df[c].dropna().iloc[0] if prof.n_present else None)
            findings.append(Finding(
                "constant_column", [c], "info",
                f"'{c}' has a single value ({value!s})"
                + (f" apart from {prof.n_missing} missing" if prof.n_missing else "")
                + ": it cannot help a model.",
                {"value": str(value), "missing_count": prof.n_missing},
                [drop([c], "constant", "none for modelling" + (
                    "; the missing pattern itself is lost" if prof.n_missing else "")),
                 keep("Keep it.", "adds a useless column")],
                None,
            ))
        elif prof.kind == "text":
            findings.append(Finding(
                "free_text", [c], "info",
                f"'{c}' holds free text (about {prof.mean_words:.0f} words per value): a tabular model "
                "cannot use it as it is.",
                {"mean_length": round(prof.mean_length, 1), "mean_words": round(prof.mean_words, 1),
                 "distinct_values": prof.nunique},
                [drop([c], "free text", "loses what the text says; text features could be extracted "
                      "instead"),
                 keep("Keep it (as categories).", "almost every value is its own category")],
                None,
            ))
    return findings


def _sentinel_codes(c: str, v: np.ndarray, sentinels: list[float]) -> Finding:
    n_codes = int(np.isin(v, sentinels).sum())
    codes = ", ".join(f"{s:g}" for s in sentinels)
    return Finding(
        "numeric_as_text", [c], "warning",
        f"'{c}' uses the code{'s' if len(sentinels) > 1 else ''} {codes} ({counted(n_codes, 'row')}) far outside its "
        "other values: "
        "most likely 'missing' or 'not applicable', not a measurement.",
        {"sentinels": sentinels, "rows_with_code": n_codes,
         "range_without_codes": [float(np.nanmin(v[~np.isin(v, sentinels)])),
                                 float(np.nanmax(v[~np.isin(v, sentinels)]))]},
        [Option("fix_dtypes", "Read the codes as missing" if len(sentinels) > 1 else "Read the code as missing",
                f"Replace {codes} in '{c}' by missing values.",
                "if a code has a meaning (e.g. 'never'), that meaning is lost unless "
                "a missing indicator is kept", True,
                call("fix_dtypes", columns=[c], na_tokens=[], sentinels={c: sentinels})),
         keep("Keep the codes as numbers.", "the codes act as huge measurements and "
              "distort means, scaling and linear models")],
        None,
    )


def _day_numbers(c: str, origin: str, days: np.ndarray) -> Finding:
    present = days[np.isfinite(days)]
    first, last = (str(np.datetime64(origin, "D") + np.timedelta64(int(v), "D")) for v in (present.min(), present.max()))
    return Finding(
        "numeric_as_text", [c], "warning",
        f"'{c}' stores dates as day numbers ({DAY_ORIGINS[origin]}, counted from {origin}): read so, they "
        f"run from {first} to {last}. As numbers a model cannot tell the timing of the column.",
        {"stored_as": str(days.dtype), "holds": "datetime", "day_origin": origin, "first": first, "last": last},
        [Option("fix_dtypes", "Convert to dates", f"Read '{c}' as days since {origin}.",
                "if the numbers count from another day, every date is shifted", True,
                call("fix_dtypes", columns=[c], na_tokens=[], sentinels={}, day_numbers={c: origin})),
         keep("Keep the numbers.", "a date as a number: its meaning and its timing are lost")],
        None,
    )


def _written_as(keys: pd.Series) -> str:
    """How text numbers are written, in words ("a decimal comma, the unit 'kg'"), or ""."""
    fmt = number_format(keys.unique())
    signs = count_signs(keys)
    said = [w for w, yes in (("a decimal comma", fmt.decimal == ","),
                             (f"the unit {fmt.unit!r}", fmt.unit is not None),
                             ("percent signs", signs["percent_signs_stripped"] > 0),
                             ("currency signs", signs["currency_signs_stripped"] > 0)) if yes]
    return ", ".join(said)


@detector("dtypes", order=60, finds={
    FindingKind.NUMERIC_AS_TEXT: KindData(chart=None, basis=Basis.WHOLE_DATA),
    FindingKind.CONSTANT_COLUMN: KindData(chart=None, basis=Basis.WHOLE_DATA),
    FindingKind.FREE_TEXT: KindData(chart=None, basis=Basis.SAMPLE)})
def find_dtype_issues_in(ctx: Context) -> list[Finding]:
    private = frozenset(ctx.codebook.private) if ctx.codebook is not None else frozenset()
    return find_dtype_issues(ctx.df, ctx.profiles, ctx.structural | set(ctx.id_cols), private)
