"""A column that is the target computed again: a change score beside the final score (the final
minus the baseline), a ratio or a percent change of the two, a total of the target and another part.

Such a column is not a predictor: with the other column of its formula it gives the target back on
every row. A model fitted with it scores near perfectly, and a search over single features or a
linear formula misses it when the table is small (a trial of seventeen patients) or the formula is
not linear (a ratio, a percent change). So the test is exact arithmetic, not a fit: ``X`` equals
``f(T, B)`` on (almost) every row, up to the rounding ``X`` is written with — which no ordinary
measurement does by chance on more than a handful of rows.

``X = T − B`` also means ``B = T − X``: the formula alone cannot tell the derived column from the
baseline. The one whose name says it is derived (a change, a difference, a ratio, the target's own
name with ``d``/``delta`` before it) is the twin; when the names do not tell, both are named, as a
linear formula names all its parts.
"""

from __future__ import annotations

import re

import numpy as np

from kernel_tools.diagnosis.columns import ColumnProfile, numeric_values
from kernel_tools.diagnosis.registry import NO_CLOCK, Clock
from kernel_tools.vocabulary import TaskKind

MIN_ROWS = 8  # rows with all three present: fewer is too little to call a formula exact
EXACT_SHARE = 0.95  # share of those rows on which the formula holds (a few typing slips allowed)
MAX_COLUMNS = 60  # numeric columns tried on each side (the rest named only by the linear formula)
SAMPLE_ROWS = 5_000
# a name that says the column is derived from two measures (a change, a difference, a ratio), in
# several languages
CHANGE_NAME = re.compile(
    r"change|chg|diff|delta|gain|loss|increase|decrease|reduction|improv|pct|percent|ratio|relative|fold|"
    r"cambio|diferencia|variation|evol|differenz|veraender|aenderung|verschil",
    re.IGNORECASE,
)
# X as a function of the target T and another column B, with the words that say it
FORMS: dict[str, tuple[str, object]] = {
    "difference": ("{t} − {b}", lambda t, b: t - b),
    "reverse difference": ("{b} − {t}", lambda t, b: b - t),
    "sum": ("{t} + {b}", lambda t, b: t + b),
    "ratio": ("{t} / {b}", lambda t, b: t / b),
    "inverse ratio": ("{b} / {t}", lambda t, b: b / t),
    "relative change": ("({t} − {b}) / {b}", lambda t, b: (t - b) / b),
    "percent change": ("100 × ({t} − {b}) / {b}", lambda t, b: 100 * (t - b) / b),
}


def _step(x: np.ndarray) -> float:
    """The rounding a column is written with (1 for whole numbers, 0.1 for one decimal ...)."""
    for d in range(0, 9):
        scaled = x * 10.0**d
        if float(np.mean(np.abs(scaled - np.round(scaled)) < 1e-6 * np.maximum(1, np.abs(scaled)))) >= 0.99:
            return 10.0**-d
    return 1e-9


def derived_name(name: str, target: str) -> bool:
    """Whether a name says the column is derived: a change or ratio word, or the target's own name
    with a ``d``/``delta`` before it (``du2`` beside ``u2``)."""
    low, t = name.lower(), target.lower()
    if CHANGE_NAME.search(name):
        return True
    return len(t) >= 1 and low != t and re.fullmatch(rf"(d|delta|diff|chg)[_\W]?{re.escape(t)}", low) is not None


def target_twins(
    frame, profiles: dict[str, ColumnProfile], features: list[str], outcome, clock: Clock = NO_CLOCK
) -> dict[str, dict]:
    """Regression: each feature that equals an arithmetic function of the target and one other
    feature on (almost) every row, with the formula in words (see the module docstring)."""
    if outcome.kind != TaskKind.REGRESSION or len(frame) < MIN_ROWS:
        return {}
    target = str(outcome.target)
    numeric = [c for c in features if profiles[c].holds_numbers][:MAX_COLUMNS]
    rows = slice(None) if len(frame) <= SAMPLE_ROWS else slice(0, SAMPLE_ROWS)
    y = np.asarray(outcome.y, dtype=float)[rows]
    values = {c: np.asarray(numeric_values(frame[c], profiles[c]), dtype=float)[rows] for c in numeric}
    values = {c: v for c, v in values.items() if np.isfinite(v).sum() >= MIN_ROWS and np.nanstd(v) > 0}
    names = list(values)
    if len(names) < 2:
        return {}
    others = np.column_stack([values[c] for c in names])  # rows × columns
    pairs: list[tuple[str, str, str, int, int]] = []  # (X, B, formula words, rows held, rows tried)
    for x_name in names:
        if clock.over():
            break
        x = values[x_name]
        if np.unique(x[np.isfinite(x)]).size < 3:
            continue
        present = np.isfinite(x) & np.isfinite(y)
        if float(np.mean(np.isclose(x[present], y[present]))) >= 0.5:
            continue  # the target copied: another test's
        tol = 0.51 * _step(x[np.isfinite(x)]) + 1e-9 * np.nanmax(np.abs(x))
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            for words, form in FORMS.values():
                expected = form(y[:, None], others)  # type: ignore[operator]
                ok = np.isfinite(expected) & np.isfinite(x)[:, None]
                held = (np.abs(expected - x[:, None]) <= tol) & ok
                tried, hits = ok.sum(axis=0), held.sum(axis=0)
                for j in np.flatnonzero((tried >= MIN_ROWS) & (hits >= EXACT_SHARE * np.maximum(tried, 1))):
                    b_name = names[j]
                    b = others[:, j]
                    if b_name == x_name or np.unique(b[ok[:, j]]).size < 2:
                        continue
                    pairs.append(
                        (x_name, b_name, words.format(t=f"'{target}'", b=f"'{b_name}'"), int(hits[j]), int(tried[j]))
                    )
    found: dict[str, dict] = {}
    for x_name, b_name, words, hits, tried in pairs:
        mirrored = any(p[0] == b_name and p[1] == x_name for p in pairs)
        if mirrored and derived_name(b_name, target) and not derived_name(x_name, target):
            continue  # the partner is the derived one; this is the baseline it was computed from
        if x_name in found:
            continue
        every = "every row" if hits == tried else f"{hits} of {tried} rows"
        found[x_name] = {
            "reason": f"'{x_name}' equals {words} on {every}: it is the target computed again from "
            f"'{b_name}', not a predictor",
            "twin_formula": words,
            "twin_partner": b_name,
            "twin_rows": tried,
        }
    return found
