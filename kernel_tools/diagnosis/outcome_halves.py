"""The other half of the target's count: aggregated (binomial) rows record how many succeeded and
how many failed — above/below a threshold, passed/failed, cases/controls, wins/losses — and the
target is one of the two counts. The other is known only once the outcome is (their sum is the
number of trials), yet it is only moderately correlated with the target when the totals vary, and
without a total column no linear formula gives the target away (:mod:`.leakage`).

Found from the names (the target's name with a word swapped for its opposite) on two whole-number
counts, and from the data when a column holds the target's share of their sum. Name evidence
alone is a suspicion (a question at the leakage gate, recommended drop); a column that holds the
share makes it a fact (recorded with the outcome).
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from kernel_tools.diagnosis.columns import ColumnProfile, numeric_values
from kernel_tools.vocabulary import TaskKind

# outcomes in two parts; not ranges (high/low, upper/lower: a day's prices, an interval's bounds)
OPPOSITES = (("above", "below"), ("pass", "fail"), ("passed", "failed"), ("success", "failure"),
             ("successes", "failures"), ("wins", "losses"), ("won", "lost"), ("alive", "dead"),
             ("survived", "died"), ("survivors", "deaths"), ("positive", "negative"), ("cases", "controls"),
             ("admitted", "rejected"), ("accepted", "rejected"), ("correct", "incorrect"), ("right", "wrong"),
             ("hits", "misses"), ("present", "absent"), ("responders", "nonresponders"), ("yes", "no"),
             ("pos", "neg"), ("win", "loss"))
SHORT = 4  # opposites shorter than this must be a whole word of the name ('no' in 'nox' is not 'no')
AGREE = 0.99  # share of rows on which a column equals the target's share of the two counts
MIN_ROWS = 10


def name_words(name: str) -> list[str]:
    """A column name's words, lower case, camelCase split (numbers are words of their own)."""
    return re.findall(r"[a-z]+|\d+", re.sub(r"([a-z])([A-Z])", r"\1 \2", name).lower())


def _swapped(target: str, column: str) -> tuple[str, str] | None:
    """The (target's word, column's word) when ``column`` is ``target`` with one word for its
    opposite, else None."""
    t, c = target.lower(), column.lower()
    for a, b in OPPOSITES:
        for x, y in ((a, b), (b, a)):
            if len(x) >= SHORT and len(y) >= SHORT:
                if x in t and t.replace(x, y, 1) == c:
                    return x, y
            elif x in name_words(target) and [y if w == x else w for w in name_words(target)] == name_words(column):
                return x, y
    return None


def _counts(v: np.ndarray) -> bool:
    ok = v[np.isfinite(v)]
    return len(ok) >= MIN_ROWS and bool((ok >= 0).all()) and bool((ok == np.round(ok)).all())


def other_halves(frame: pd.DataFrame, profiles: dict[str, ColumnProfile], features: list[str],
                 outcome) -> dict[str, dict]:
    """``{column: evidence}`` for the features that are the other half of the target's count.

    ``outcome`` is the diagnosis's target (``outcome.y`` its values on ``frame``'s rows); only a
    regression on a whole-number count of at least three values is read this way."""
    target = outcome.target
    if outcome.kind != TaskKind.REGRESSION or target is None or outcome.y is None:
        return {}
    y = np.asarray(outcome.y, dtype=float)
    if not _counts(y) or len(np.unique(y[np.isfinite(y)])) < 3:
        return {}
    numeric = {c: numeric_values(frame[c], profiles[c]) for c in features
               if profiles[c].kind == "numeric" or profiles[c].parsed_as == "numeric"}
    found: dict[str, dict] = {}
    for c, x in numeric.items():
        words = _swapped(target, c)
        if not _counts(x):
            continue
        fact = _share(y, x, {o: v for o, v in numeric.items() if o != c})
        if words is None and fact is None:
            continue
        said = (f"'{c}' and the target '{target}' look like the two halves of one count"
                + (f" ({words[1]}/{words[0]})" if words else ""))
        if fact is None:
            found[c] = {"reason": f"{said}: '{c}' would be known only once the outcome is",
                        "opposite_words": list(words or ())}
        else:
            found[c] = {"reason": f"{said}, and {fact['said']}: '{c}' is known only once the outcome is",
                        "timing": "outcome_derived", "opposite_words": list(words or ()),
                        **{k: v for k, v in fact.items() if k != "said"}}
    return found


def _share(y: np.ndarray, x: np.ndarray, others: dict[str, np.ndarray]) -> dict | None:
    """A column that holds ``y / (y + x)`` (as a share or a percent) on nearly every row: the two
    counts are the parts of one outcome. (A column holding their sum makes the target a linear
    formula, which :mod:`.leakage` finds on its own.)"""
    total = y + x
    for o, v in others.items():
        has = np.isfinite(v) & np.isfinite(total) & (total > 0)
        if has.sum() < MIN_ROWS:
            continue
        share = y[has] / total[has]
        for scale in (1.0, 100.0):
            close = float(np.mean(np.abs(v[has] - scale * share) <= 0.005 * scale))
            if close >= AGREE:
                return {"said": f"'{o}' is the target's share of their sum on {close:.0%} of rows",
                        "share_column": o}
    return None


MIN_PER_LEVEL = 3
MAX_LEVELS = 10


def binned_from(frame: pd.DataFrame, profiles: dict[str, ColumnProfile], features: list[str],
                outcome) -> dict[str, dict]:
    """``{column: evidence}`` for the numeric features the target is a cut of: a target of up to 10
    levels, 3 of them with 3 rows or more, whose rows, sorted by the column, fall into one run per level (a rating 1-5 banded from
    a 0-100 score, a grade from a mark) on 99% of rows or more. The target is then the column in
    another coding, known exactly when the column is. (Two levels are a threshold, which the
    single-feature score finds as a near-perfect predictor.)"""
    if outcome.target is None or outcome.y is None or outcome.kind not in (TaskKind.REGRESSION,
                                                                         TaskKind.CLASSIFICATION):
        return {}
    y = np.asarray(outcome.y, dtype=float)
    levels, counts = np.unique(y[np.isfinite(y)], return_counts=True)
    if len(levels) > MAX_LEVELS or (counts >= MIN_PER_LEVEL).sum() < 3:  # a sparse extreme level may join
        return {}
    found: dict[str, dict] = {}
    for c in features:
        prof = profiles[c]
        if not (prof.kind == "numeric" or prof.parsed_as == "numeric") or prof.nunique < 2 * len(levels):
            continue
        x = numeric_values(frame[c], prof)
        ok = np.isfinite(x) & np.isfinite(y)
        if ok.sum() < MIN_PER_LEVEL * len(levels):
            continue
        agreement, cuts = _runs(x[ok], y[ok])
        if agreement >= AGREE:
            shown = ", ".join(f"{v:g}" for v in cuts[:6])
            found[c] = {"reason": f"the target's {len(levels)} levels are ranges of '{c}' (cut near {shown}; "
                                  f"{agreement:.0%} of rows fall in their level's range): it is '{c}' banded, "
                                  "the outcome in another coding", "timing": "outcome_derived",
                        "binned_agreement": round(agreement, 4), "cut_points": [round(v, 4) for v in cuts]}
    return found


def _runs(x: np.ndarray, y: np.ndarray) -> tuple[float, list[float]]:
    """The share of rows that a cut of ``x`` into one range per level of ``y`` (levels ordered by
    their median ``x``) puts in their own level, and the cut points."""
    levels = np.unique(y)
    order = levels[np.argsort([np.median(x[y == v]) for v in levels], kind="stable")]
    rank = {v: i for i, v in enumerate(order)}
    sorted_rows = np.argsort(x, kind="stable")
    sizes = np.array([(y == v).sum() for v in order])
    expected = np.repeat(np.arange(len(order)), sizes)  # the i-th smallest x belongs to this level
    actual = np.array([rank[v] for v in y[sorted_rows]])
    ends = np.cumsum(sizes)[:-1]
    xs = x[sorted_rows]
    cuts = [float((xs[e - 1] + xs[e]) / 2) for e in ends]
    return float(np.mean(expected == actual)), cuts


__all__ = ["OPPOSITES", "binned_from", "other_halves"]


MIN_MINORITY = 0.05  # a coarsening's rarer values hold at least this share of rows (not a constant)


def coarsened_from(frame: pd.DataFrame, profiles: dict[str, ColumnProfile], features: list[str],
                   outcome) -> dict[str, dict]:
    """``{column: evidence}`` for the features that are the target coarsened: a target of 3 to 10
    levels (an ordered score, a grade, a ranked answer) and a column with fewer values that is one
    value per level of the target on 99% of rows or more ("=1 if very happy" beside the happiness
    scale, a pass/fail beside a grade). The column is the outcome recorded again in fewer words:
    known only once the outcome is. (The reverse, the target a cut of a numeric column, is
    :func:`binned_from`.)"""
    if outcome.target is None or outcome.y is None or outcome.kind not in (TaskKind.REGRESSION,
                                                                         TaskKind.CLASSIFICATION):
        return {}
    y = np.asarray(outcome.y, dtype=float)
    valid = np.isfinite(y) & (y >= 0 if outcome.kind == TaskKind.CLASSIFICATION else True)
    levels = np.unique(y[valid])
    if not 3 <= len(levels) <= MAX_LEVELS:
        return {}
    found: dict[str, dict] = {}
    for c in features:
        prof = profiles[c]
        if not 2 <= prof.nunique < len(levels):
            continue
        codes = pd.factorize(frame[c].astype("string"))[0]
        ok = valid & (codes >= 0)
        if ok.sum() < MIN_PER_LEVEL * len(levels):
            continue
        x, t = codes[ok], y[ok]
        shares = np.bincount(x) / x.size
        if np.sort(shares)[-2] < MIN_MINORITY:
            continue
        # the rows whose column value is its level's most common one
        agree = sum(np.bincount(x[t == v]).max() for v in levels if (t == v).any()) / x.size
        if agree >= AGREE:
            found[c] = {"reason": f"it takes one value per level of '{outcome.target}' on {agree:.0%} of rows "
                                  f"({prof.nunique} values for the target's {len(levels)} levels): it is the "
                                  "outcome coarsened, recorded with it", "timing": "outcome_derived",
                        "coarsened_agreement": round(float(agree), 4)}
    return found
