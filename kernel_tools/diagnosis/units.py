"""Mixed units: one text column holding numbers in several units ("12 oz", "355 ml"), or some
values with a unit and others bare ("0.05" next to "0.05%").

Only known unit words count, so text such as "3 bedrooms" or "12 Main St" is left alone.
Numeric columns are checked for two separate clusters whose typical values differ by a known
conversion factor (cm vs inches, kg vs lb, g vs kg...), e.g. heights recorded partly in inches.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from kernel_tools.diagnosis.columns import ColumnProfile
from kernel_tools.diagnosis.options import call, keep
from kernel_tools.diagnosis.registry import Context, KindData, detector
from kernel_tools.findings import Finding, Option
from kernel_tools.vocabulary import Basis, FindingKind

UNITS = {
    "oz": "oz", "ounce": "oz", "ounces": "oz", "floz": "oz", "fl": "oz",
    "ml": "ml", "milliliter": "ml", "millilitre": "ml", "cl": "cl", "l": "l", "liter": "l", "litre": "l",
    "in": "in", "inch": "in", "inches": "in", '"': "in", "cm": "cm", "mm": "mm", "m": "m",
    "ft": "ft", "feet": "ft", "foot": "ft", "'": "ft", "km": "km", "mi": "mi", "miles": "mi",
    "kg": "kg", "kgs": "kg", "kilogram": "kg", "kilograms": "kg", "g": "g", "gram": "g", "grams": "g",
    "lb": "lb", "lbs": "lb", "pound": "lb", "pounds": "lb", "mg": "mg", "µg": "µg", "mcg": "µg",
    "%": "%", "percent": "%", "pct": "%", "°c": "°C", "c": "°C", "°f": "°F", "f": "°F",
    "mg/dl": "mg/dL", "mmol/l": "mmol/L", "g/dl": "g/dL", "g/l": "g/L",
    "s": "s", "sec": "s", "secs": "s", "min": "min", "mins": "min", "h": "h", "hr": "h", "hrs": "h",
    "hours": "h", "d": "d", "days": "d", "wk": "wk", "weeks": "wk", "yr": "y", "yrs": "y", "years": "y",
    "usd": "USD", "$": "USD", "eur": "EUR", "€": "EUR",
}
CURRENCIES = {"USD", "EUR"}
FACTORS = {2.54: ("in", "cm"), 2.2046: ("kg", "lb"), 1000.0: ("kg", "g"), 100.0: ("m", "cm"),
           12.0: ("ft", "in"), 3.2808: ("m", "ft"), 28.35: ("oz", "g"), 29.57: ("fl oz", "ml"),
           1.6093: ("mi", "km"), 18.0: ("mmol/L", "mg/dL"), 60.0: ("h", "min")}
_VALUE = re.compile(r"^\s*([$€]?)\s*([-+]?\d+(?:[.,]\d+)?)\s*([^\d\s][^\s\d]*)?(.*)$")


def _unit_of(text: str) -> tuple[bool, str | None]:
    """(is a number with a known or no unit, canonical unit or None for a bare number)."""
    m = _VALUE.match(text)
    if not m:
        return False, None
    prefix, _, unit, rest = m.groups()
    if prefix:  # "$25000", not "$25000 or more" nor "$8000 to 9999" (a bracket of a range)
        return not (unit or rest.strip()), UNITS[prefix]
    if unit is None:
        return (not rest.strip()), None
    key = unit.lower().rstrip(".")
    if key in UNITS:
        return True, UNITS[key]
    return False, None


def find_mixed_units(profiles: dict[str, ColumnProfile], exclude: set[str]) -> list[Finding]:
    findings = []
    for c, prof in profiles.items():
        if c in exclude or prof.kind != "categorical" or prof.counts is None or prof.nunique < 2:
            continue
        counts = prof.counts.head(5000)
        keys = [str(k) for k in counts.index]
        weights = counts.to_numpy(dtype=float)
        real = np.array([k.strip().lower() not in {t.lower() for t in prof.na_tokens} for k in keys])
        parsed = [_unit_of(k) for k in keys]
        ok = np.array([p[0] for p in parsed]) & real
        total = weights[real].sum()
        if total == 0 or weights[ok].sum() / total < 0.9:
            continue
        units = pd.Series([p[1] or "" for p in parsed])[ok]
        per_unit = pd.Series(weights[ok], index=units.to_numpy()).groupby(level=0).sum() / total
        spelled: dict[str, set[str]] = {}
        for k, (is_num, u) in zip(keys, parsed):
            if is_num and u:
                m = _VALUE.match(k)
                assert m is not None  # _unit_of matched it
                spelled.setdefault(u, set()).add((m.group(3) or m.group(1)).lower())
        with_unit = per_unit.drop(labels=[""], errors="ignore")
        if with_unit.sum() < 0.02 or CURRENCIES & set(with_unit.index):
            # money is read as numbers written as text (numeric_as_text); no unit converts one
            # currency into another, and a "conversion" to dollars would fail as a step
            continue
        several = (with_unit >= 0.01).sum() >= 2
        bare_mix = per_unit.get("", 0.0) >= 0.02
        spellings = max((len(v) for v in spelled.values()), default=0) > 1
        if not (several or bare_mix or spellings):
            continue
        dominant = per_unit.idxmax()
        target_unit = dominant or None
        share = {(u or "no unit"): round(float(s), 4) for u, s in per_unit.sort_values(ascending=False).items()}
        examples = {u or "no unit": next(k for k, p in zip(keys, parsed) if p[0] and (p[1] or "") == u)
                    for u in per_unit.index}
        if several:
            what = f"mixes units ({', '.join(u for u in share if u != 'no unit')})"
        elif bare_mix:
            what = f"has some values with a unit ('{with_unit.idxmax()}') and some without"
        else:
            what = "stores numbers with a unit written in several ways"
        findings.append(Finding(
            "mixed_units", [c], "warning" if several or bare_mix else "info",
            f"'{c}' {what}: the numbers are not comparable until they are converted to one unit.",
            {"unit_shares": share, "examples": examples,
             "spellings": {u: sorted(v)[:8] for u, v in spelled.items()}, "target_unit": target_unit},
            [Option("convert", f"Convert to {target_unit or 'plain numbers'}",
                    f"Parse the numbers of '{c}' and convert every value to "
                    + (f"'{target_unit}'." if target_unit else "plain numbers in the dominant convention."),
                    "values whose unit cannot be read become missing", True,
                    call("convert_units", column=c, target_unit=target_unit)),
             keep("Keep the column as text.", "a model sees each spelling as its own category")],
            None,
        ))
    return findings


def unit_clusters(v: np.ndarray) -> dict | None:
    """Two well-separated clusters of positive values whose medians differ by a known factor."""
    x = v[np.isfinite(v) & (v > 0)]
    if x.size < 100 or x.size < 0.9 * np.isfinite(v).sum():
        return None
    if x.size > 20_000:
        x = np.random.default_rng(0).choice(x, 20_000, replace=False)
    lx = np.log(x)
    hist, edges = np.histogram(lx, bins=60)
    smooth = np.convolve(hist, np.ones(3) / 3, mode="same")
    centres = (edges[:-1] + edges[1:]) / 2
    # Otsu's threshold: the split that maximises the between-cluster variance
    w = np.cumsum(hist) / hist.sum()
    mu = np.cumsum(hist * centres) / hist.sum()
    between = (mu[-1] * w - mu) ** 2 / np.clip(w * (1 - w), 1e-12, None)
    k = int(np.argmax(between[:-1]))
    low, high = lx[lx <= edges[k + 1]], lx[lx > edges[k + 1]]
    # a unit slip touches a minority of rows; two equal groups are more likely two populations
    if not 0.03 <= min(low.size, high.size) / lx.size <= 0.4:
        return None
    valley = smooth[max(k - 1, 0): k + 2].min()
    peaks = min(smooth[: k + 1].max(), smooth[k + 1:].max())
    if valley > 0.15 * peaks:
        return None
    ratio = float(np.exp(np.median(high) - np.median(low)))
    for factor, (small_unit, big_unit) in FACTORS.items():
        if abs(np.log(ratio / factor)) < 0.08:
            spread = max(np.subtract(*np.percentile(low, [75, 25])), np.subtract(*np.percentile(high, [75, 25])))
            if spread < 0.35 * np.log(factor):
                return {"ratio": round(ratio, 3), "factor": factor, "units": [small_unit, big_unit],
                        "share_small_values": round(low.size / lx.size, 4),
                        "threshold": float(np.exp(edges[k + 1]))}
    return None


def find_numeric_units(df: pd.DataFrame, profiles: dict[str, ColumnProfile], exclude: set[str]) -> list[Finding]:
    from kernel_tools.diagnosis.columns import numeric_values

    findings = []
    for c, prof in profiles.items():
        if c in exclude or prof.kind != "numeric" or prof.nunique < 20:
            continue
        res = unit_clusters(numeric_values(df[c], prof))
        if res is None:
            continue
        small_unit, big_unit = res["units"]
        findings.append(Finding(
            "mixed_units", [c], "warning",
            f"'{c}' has two separate groups of values {res['ratio']:.2f}× apart — the factor between "
            f"{small_unit} and {big_unit}: part of the column was probably recorded in another unit.",
            res,
            [keep("Ask the data owner which unit each record used before changing anything.",
                  "until then the same quantity has two scales and models mix them up",
                  recommended=True, label="Review with the data owner"),
             Option("convert", "Convert the smaller-unit group (custom code)",
                    f"Treat values below {res['threshold']:.3g} as '{small_unit}' and multiply them by "
                    f"{res['factor']:g} to get '{big_unit}'.",
                    "wrong for real values that happen to fall in the other group", False, None)],
            None,
        ))
    return findings


# both unit checks find mixed units, from a column's text or from its numbers' groups
MIXED_UNITS: dict[str, KindData] = {FindingKind.MIXED_UNITS: KindData(chart=None, basis=Basis.SAMPLE)}


@detector("mixed units", order=100, finds=MIXED_UNITS)
def find_mixed_units_in(ctx: Context) -> list[Finding]:
    return find_mixed_units(ctx.profiles, ctx.structural - {ctx.target})


@detector("numeric units", order=110, finds=MIXED_UNITS)
def find_numeric_units_in(ctx: Context) -> list[Finding]:
    return find_numeric_units(ctx.df, ctx.profiles, ctx.structural | set(ctx.id_cols) | ctx.entity_cols)
