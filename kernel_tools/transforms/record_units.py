"""One measured item recorded in several units (a temperature in °F and °C, a weight in lb and kg,
a glucose in mg/dL and mmol/L): its values are put in one unit before they are summarised, or kept
apart as ``item [unit]`` when no factor is known.

Factors are physical (temperature, mass, length, a mass or a molar concentration scaled); a mass
concentration and a molar one convert only for a substance whose molar mass is known and whose
name the item carries (a lab code such as ``50912`` names none: its units stay apart).
"""

from __future__ import annotations

import re

import pandas as pd

# unit as written (lower case, spaces out, µ as u) -> (dimension, size in the dimension's base, offset)
UNIT_SCALES: dict[str, tuple[str, float, float]] = {
    "°c": ("temperature", 1.0, 0.0), "degc": ("temperature", 1.0, 0.0), "c": ("temperature", 1.0, 0.0),
    "celsius": ("temperature", 1.0, 0.0), "°f": ("temperature", 5 / 9, -32 * 5 / 9),
    "degf": ("temperature", 5 / 9, -32 * 5 / 9), "f": ("temperature", 5 / 9, -32 * 5 / 9),
    "fahrenheit": ("temperature", 5 / 9, -32 * 5 / 9), "k": ("temperature", 1.0, -273.15),
    "kg": ("mass", 1.0, 0.0), "g": ("mass", 1e-3, 0.0), "lb": ("mass", 0.45359237, 0.0),
    "lbs": ("mass", 0.45359237, 0.0), "oz": ("mass", 0.028349523, 0.0),
    "m": ("length", 1.0, 0.0), "cm": ("length", 0.01, 0.0), "mm": ("length", 1e-3, 0.0),
    "in": ("length", 0.0254, 0.0), "inch": ("length", 0.0254, 0.0), "ft": ("length", 0.3048, 0.0),
    "g/l": ("mass/volume", 1.0, 0.0), "g/dl": ("mass/volume", 10.0, 0.0), "mg/dl": ("mass/volume", 0.01, 0.0),
    "mg/l": ("mass/volume", 1e-3, 0.0), "ug/ml": ("mass/volume", 1e-3, 0.0), "ug/dl": ("mass/volume", 1e-5, 0.0),
    "mol/l": ("amount/volume", 1.0, 0.0), "mmol/l": ("amount/volume", 1e-3, 0.0),
    "umol/l": ("amount/volume", 1e-6, 0.0), "nmol/l": ("amount/volume", 1e-9, 0.0),
}
# g/mol of substances a lab item's name may carry (mg/dL <-> mmol/L needs it)
MOLAR_MASS = {"glucose": 180.16, "creatinine": 113.12, "urea": 60.06, "bun": 28.02, "cholesterol": 386.65,
              "triglyceride": 885.7, "bilirubin": 584.66, "calcium": 40.08, "uric": 168.11}


def _unit_key(unit: object) -> str:
    return re.sub(r"\s+", "", str(unit).lower()).replace("µ", "u").replace("μ", "u")


def _substance(item: object) -> float | None:
    name = str(item).lower()
    return next((mass for word, mass in MOLAR_MASS.items() if re.search(rf"(^|[^a-z]){word}", name)), None)


def conversion(item: object, source: object, target: object) -> tuple[float, float] | None:
    """``(a, b)`` such that a value in ``source`` is ``a * value + b`` in ``target``; None when unknown."""
    s, t = UNIT_SCALES.get(_unit_key(source)), UNIT_SCALES.get(_unit_key(target))
    if s is None or t is None:
        return None
    scale = 1.0
    if s[0] != t[0]:  # a mass and a molar concentration meet through the substance's molar mass
        molar = _substance(item)
        if molar is None or {s[0], t[0]} != {"mass/volume", "amount/volume"}:
            return None
        scale = molar if s[0] == "amount/volume" else 1 / molar
    return s[1] * scale / t[1], (s[2] - t[2]) / t[1]


def plan_units(records: pd.DataFrame, key: str, units: str) -> tuple[dict, list[str]]:
    """Per item recorded in several units: the conversion of each unit to the item's most recorded
    one (``{(item, unit): (a, b)}``), or the label ``item [unit]`` when none is known; and what was
    decided, in words."""
    plan: dict[tuple, tuple[float, float] | str] = {}
    said = []
    counts = records.groupby([key, units], sort=True).size()
    for item, per_unit in counts.groupby(level=0, sort=True):
        per_unit = per_unit.droplevel(0).sort_values(ascending=False, kind="stable")
        if len(per_unit) < 2:
            continue
        main = per_unit.index[0]
        factors = {u: conversion(item, u, main) for u in per_unit.index[1:]}
        if all(f is not None for f in factors.values()):
            plan.update({(item, u): f for u, f in factors.items()})
            said.append(f"'{item}' in {', '.join(map(str, factors))} converted to {main} "
                        f"({int(per_unit.iloc[1:].sum())} of {int(per_unit.sum())} records)")
        else:  # one unknown pair: every unit its own column, none averaged with another
            plan.update({(item, u): f"{item} [{u}]" for u in per_unit.index})
            said.append(f"'{item}' kept apart by unit ({', '.join(map(str, per_unit.index))}): no known factor "
                        "between them")
    return plan, said


def apply_units(records: pd.DataFrame, key: str, value: str, units: str, plan: dict) -> pd.DataFrame:
    """The records with each planned item's values converted, or its key relabelled by unit."""
    if not plan:
        return records
    pairs = list(zip(records[key], records[units], strict=True))
    a = pd.Series([p[0] if isinstance(p := plan.get(k), tuple) else 1.0 for k in pairs], index=records.index)
    b = pd.Series([p[1] if isinstance(p := plan.get(k), tuple) else 0.0 for k in pairs], index=records.index)
    labels = pd.Series([p if isinstance(p := plan.get(k), str) else k[0] for k in pairs], index=records.index)
    out = records.assign(**{value: pd.to_numeric(records[value], errors="coerce") * a + b})
    if any(isinstance(p, str) for p in plan.values()):
        out[key] = labels.astype(str)  # one kind of label: codes and 'code [unit]' sort together
    return out
