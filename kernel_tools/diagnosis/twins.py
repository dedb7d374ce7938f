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
SAMPLE_ROWS = 2_000  # an exact formula shows on any sample
SCREEN_ROWS = 64
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
                # screened on the first rows, confirmed on the sample: most pairs fail at once
                screen = form(y[:SCREEN_ROWS, None], others[:SCREEN_ROWS])  # type: ignore[operator]
                ok = np.isfinite(screen) & np.isfinite(x[:SCREEN_ROWS])[:, None]
                tried = ok.sum(axis=0)
                hits = ((np.abs(screen - x[:SCREEN_ROWS, None]) <= tol) & ok).sum(axis=0)
                candidates = np.flatnonzero((tried < MIN_ROWS) | (hits >= 0.8 * tried))
                if not candidates.size:
                    continue
                expected = form(y[:, None], others[:, candidates])  # type: ignore[operator]
                ok = np.isfinite(expected) & np.isfinite(x)[:, None]
                held = (np.abs(expected - x[:, None]) <= tol) & ok
                tried, hits = ok.sum(axis=0), held.sum(axis=0)
                for k in np.flatnonzero((tried >= MIN_ROWS) & (hits >= EXACT_SHARE * np.maximum(tried, 1))):
                    j = int(candidates[k])
                    b_name = names[j]
                    b = others[:, j]
                    if b_name == x_name or np.unique(b[ok[:, k]]).size < 2:
                        continue
                    pairs.append(
                        (x_name, b_name, words.format(t=f"'{target}'", b=f"'{b_name}'"), int(hits[k]), int(tried[k]))
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


PART_SPEARMAN = 0.8  # a part moves with its total
PART_BELOW = 0.99  # share of rows on which the part is at most the total
PART_SHARE = (0.1, 0.9)  # a part's typical share of its total: a smaller one is another scale, not a part
# a few whole numbers are an occasion's number, a grade or a code (the 1-7 index of a subject's
# measurements rises with a response that grows over them): a measured part takes many values
PART_MIN_WHOLE_LEVELS = 13
# a time, an age, a size or a count before the outcome is at most a later total by nature: not a part
NOT_A_PART = re.compile(
    r"time|date|day|week|month|year|age|dur|length|height|weight|size|girth|diam|width|circum|count|^n_|number|"
    r"base|pre|before|initial|entry|first|start|t0|_0$|0$|index|occasion|visit|seq|order|rank|step",
    re.IGNORECASE,
)


# a part's share of its total varies with the other parts (q90 - q10 at least this share of the median);
# a near-constant share is one measure under two conditions (city and highway mileage) or rescaled
PART_SPREAD = 0.2
# a column below the target only because its values are small beside the target's (years of schooling
# beside a prestige score): almost no value of it exceeds any row's target, and it spreads over a small
# fraction of the target's range
SCALE_CROSS = 0.01
SCALE_IQR = 0.2
CROSS_ROWS = 1_000


def _sibling(xs: np.ndarray, ys: np.ndarray) -> bool:
    """Whether ``xs`` is a near-constant share of ``ys``: a sibling measure, not a part."""
    pos = ys > 0
    if pos.sum() < MIN_ROWS:
        return False
    q10, q50, q90 = np.quantile(xs[pos] / ys[pos], [0.1, 0.5, 0.9])
    return bool(q50 > 0 and (q90 - q10) / q50 < PART_SPREAD)


def _below_by_scale(xs: np.ndarray, ys: np.ndarray) -> bool:
    """Whether ``xs`` is below ``ys`` only by its scale: its values almost never exceed another row's
    target (a part often does: one patient's analyte above another's total) and its spread is a small
    fraction of the target's."""
    a, b = xs[:CROSS_ROWS], ys[:CROSS_ROWS]
    cross = float(np.mean(a[:, None] > b[None, :]))
    iqr_x, iqr_y = (float(np.subtract(*np.quantile(v, [0.75, 0.25]))) for v in (xs, ys))
    return cross < SCALE_CROSS and iqr_y > 0 and iqr_x / iqr_y < SCALE_IQR


def _same_series(name: str, target: str) -> bool:
    """Whether two names are one measure at two times (``score_0``, ``score_12``): the timing's waves."""
    strip = re.compile(r"[_\W]*\d+[a-z]*$", re.IGNORECASE)
    return bool(strip.sub("", name)) and strip.sub("", name).lower() == strip.sub("", target).lower()


def target_parts(
    frame, profiles: dict[str, ColumnProfile], features: list[str], outcome, clock: Clock = NO_CLOCK
) -> dict[str, dict]:
    """Regression on a positive total: each feature that is at most the target on every row, below it
    on most, and rises with it (Spearman >= 0.8) — a part of the total measured with it (one analyte
    of a total level, one component of a score). Asked as a leak of the warning kind: a baseline of a
    growing measure is also below its later value, so names of times, ages, sizes and baselines, and
    the target's own series at another time, are left to the timing."""
    from scipy.stats import spearmanr

    if outcome.kind != TaskKind.REGRESSION or len(frame) < MIN_ROWS:
        return {}
    target = str(outcome.target)
    y = np.asarray(outcome.y, dtype=float)
    if np.nanmin(y) < 0:
        return {}
    found: dict[str, dict] = {}
    for c in features:
        if clock.over():
            break
        if not profiles[c].holds_numbers or NOT_A_PART.search(c) or _same_series(c, target):
            continue
        x = np.asarray(numeric_values(frame[c], profiles[c]), dtype=float)
        ok = np.isfinite(x) & np.isfinite(y)
        levels = np.unique(x[ok]).size
        if ok.sum() < MIN_ROWS or levels < 5 or levels < PART_MIN_WHOLE_LEVELS and np.all(x[ok] == np.round(x[ok])):
            continue
        xs, ys = x[ok], y[ok]
        if np.min(xs) < 0 or np.mean(xs <= ys + 1e-9 * np.abs(ys)) < PART_BELOW or np.mean(xs < ys) < 0.5:
            continue
        rho = float(spearmanr(xs, ys).statistic)
        if rho < PART_SPEARMAN:
            continue
        share = float(np.median(xs[ys > 0] / ys[ys > 0])) if np.any(ys > 0) else float("nan")
        if not PART_SHARE[0] <= share <= PART_SHARE[1]:
            continue  # another scale (a carat beside a price, a rate per million beside one per thousand)
        if _sibling(xs, ys) or _below_by_scale(xs, ys):
            continue
        found[c] = {
            "reason": f"'{c}' is at most '{target}' on {'every row' if np.all(xs <= ys) else 'almost every row'} "
            f"({int(ok.sum())} rows) and rises with it (Spearman {rho:.2f}; a median {share:.0%} of it): it may be "
            "a part of the target measured with it (one component of a total), known only with the outcome",
            "part_of_target": target,
            "spearman_with_target": round(rho, 4),
            "median_share_of_target": round(share, 4),
        }
    return found
