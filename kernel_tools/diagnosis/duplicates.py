"""Repeated information: duplicate rows (exact and near) and redundant columns.

Rows are compared through one 64-bit hash per row built column by column from factorised
codes, so a million rows cost a few vectorised passes and no row-wise Python.
"""

from __future__ import annotations

import re
import time

import numpy as np
import pandas as pd

from kernel_tools.diagnosis.columns import ColumnProfile, Factorized, category_codes, numeric_values
from kernel_tools.diagnosis.options import call, drop, keep
from kernel_tools.diagnosis.registry import NO_CLOCK, Clock, Context, KindData, detector
from kernel_tools.findings import Finding, Option
from kernel_tools.plurals import counted
from kernel_tools.vocabulary import Basis, Chart, FindingKind

_MIX = np.uint64(0x9E3779B97F4A7C15)


def _column_hashes(s: pd.Series, normalise: bool = True,
                   factorized: Factorized | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(exact, normalised) 64-bit hashes of one column's values; text is normalised for case
    and spacing, numbers are taken as they are. ``factorized``: the text column's codes, when
    the diagnosis has them (:func:`~kernel_tools.diagnosis.columns.factorize_objects`)."""
    if s.dtype != object and not isinstance(s.dtype, pd.CategoricalDtype):
        try:
            h = pd.util.hash_pandas_object(s, index=False).to_numpy()
            return h, h
        except TypeError:
            pass
    codes, uniques = factorized if factorized is not None else pd.factorize(s.astype(object), use_na_sentinel=True)
    exact = pd.util.hash_array(codes.astype(np.int64))
    # identifiers are left out of the near hash: normalising 1M distinct strings costs more
    # than every other column together
    if not len(uniques) or not normalise:
        return exact, exact
    norm = pd.Index(pd.Index(uniques).map(str)).str.strip().str.lower().str.replace(r"\s+", " ", regex=True)
    remap = pd.factorize(norm)[0]
    normalised = np.where(codes >= 0, remap[np.clip(codes, 0, None)], -1)
    return exact, pd.util.hash_array(normalised.astype(np.int64))


def row_hashes(df: pd.DataFrame, columns: list, ignore: set | frozenset = frozenset(),
               factorized: dict | None = None):
    """Two 64-bit hashes per row: over all ``columns``, and over those not in ``ignore`` with
    text compared case- and space-insensitively (``factorized``: text columns' codes by name)."""
    exact = np.zeros(len(df), dtype=np.uint64)
    near = np.zeros(len(df), dtype=np.uint64)
    factorized = factorized or {}
    with np.errstate(over="ignore"):
        for c in columns:
            e, m = _column_hashes(df[c], normalise=c not in ignore, factorized=factorized.get(c))
            _mix_into(exact, e)
            if c not in ignore:
                _mix_into(near, m)
    return exact, near


def _mix_into(h: np.ndarray, column: np.ndarray) -> None:
    """``h = (h ^ column) * _MIX + 1`` in place (no temporary arrays of every row)."""
    np.bitwise_xor(h, column, out=h)
    np.multiply(h, _MIX, out=h)
    np.add(h, np.uint64(1), out=h)


CHANCE_FACTOR = 5.0  # observed identical pairs within this factor of chance: honest repeats


def chance_pairs(df: pd.DataFrame, columns: list) -> float:
    """Identical row pairs expected if the columns were independent: C(n,2) times the product
    over columns of the chance that two different rows share the column's value."""
    n = len(df)
    if n < 2:
        return 0.0
    collision = 1.0
    for c in columns:
        counts = df[c].value_counts(dropna=False).to_numpy().astype(float)
        collision *= float((counts * (counts - 1)).sum() / (n * (n - 1)))
        if collision < 1e-12:
            return 0.0
    return n * (n - 1) / 2 * collision


def copy_share(df: pd.DataFrame, columns: list, row_hash: np.ndarray) -> float:
    """Share of the repeated rows that carry a value found (almost) nowhere else in its column:
    a copy of one record. Rows that repeat only common values (no income, the same class, age
    group and sex) may be different cases that look alike."""
    sizes = pd.Series(row_hash).map(pd.Series(row_hash).value_counts()).to_numpy()
    repeated = sizes > 1
    if not repeated.any():
        return 0.0
    rare = np.zeros(int(repeated.sum()), dtype=bool)
    for c in columns:
        codes = pd.factorize(df[c], use_na_sentinel=False)[0]
        counts = np.bincount(codes)[codes]
        rare |= (counts <= sizes + 1)[repeated]
    return float(rare.mean())


COPIES_WORDS = re.compile(r"^\d+ rows? (?:is an exact copy of another|are exact copies of others|equals another|"
                          r"equal others)")


def copies_words(n: int, by_chance: bool = False) -> str:
    """"1 row is an exact copy of another", "3 rows are exact copies of others" ("equal others" when
    chance explains them); the lazy diagnosis says it again with the whole data's count."""
    if by_chance:
        return f"{counted(n, 'row')} {'equals another' if n == 1 else 'equal others'}"
    return f"{counted(n, 'row')} {'is an exact copy of another' if n == 1 else 'are exact copies of others'}"


def find_duplicate_rows(df: pd.DataFrame, id_columns: list[str], factorized: dict | None = None) -> Finding | None:
    cols = list(df.columns)
    rest = [c for c in cols if c not in set(id_columns)]
    exact_h, near_h = row_hashes(df, cols, set(id_columns), factorized)
    exact_mask = pd.Series(exact_h).duplicated().to_numpy()
    exact = int(exact_mask.sum())
    near_mask = pd.Series(near_h).duplicated().to_numpy() if rest else exact_mask
    near = int(near_mask.sum()) - exact
    if exact == 0 and near <= 0:
        return None
    n = len(df)
    # few columns with few values each: distinct cases often look identical (two passengers of
    # the same class, age group and sex); removing them would delete real rows
    group_sizes = pd.Series(exact_h).value_counts().to_numpy()
    observed = float((group_sizes * (group_sizes - 1) / 2).sum())
    expected = chance_pairs(df, cols)
    copies = copy_share(df, cols, exact_h) if exact else 0.0
    by_chance = exact > 0 and (observed <= CHANCE_FACTOR * expected or copies < 0.5)
    examples = df.index[exact_mask if exact else near_mask][:10].tolist()
    evidence = {"exact_duplicates": exact, "near_duplicates": max(near, 0), "rows": n,
                "duplicate_share": round((exact + max(near, 0)) / n, 5),
                "ignored_for_near": id_columns, "example_rows": examples,
                "near_means": "equal after ignoring identifier columns, case, spacing and rounding",
                "identical_pairs": int(observed), "pairs_expected_by_chance": round(expected, 1),
                "share_with_a_rare_value": round(copies, 4)}
    options = []
    if by_chance:
        options.append(keep("Keep every row: with so few distinct values per column, different "
                            "cases share the same values.",
                            "if some rows really are copies, they count twice", recommended=True))
        options.append(Option("deduplicate", "Remove exact duplicates",
                              f"Keep the first of each set of identical rows ({counted(exact, 'row')} removed).",
                              "deletes real cases that happen to share every value", False,
                              call("deduplicate", subset=None, keep="first")))
        why = (f"about as many as chance gives with these few distinct values ({int(observed)} "
               f"identical pairs, {expected:.0f} expected)" if observed <= CHANCE_FACTOR * expected
               else f"and {1 - copies:.0%} of them repeat only common values")
        return Finding("duplicate_rows", [], "info",
                       f"{copies_words(exact, by_chance=True)}, {why}: they are likely distinct cases that look "
                       "alike, not copies.",
                       evidence, options, None)
    if exact:
        options.append(Option("deduplicate", "Remove exact duplicates",
                              f"Keep the first of each set of identical rows ({counted(exact, 'row')} removed).",
                              "if repeated rows are real repeated events, their weight is lost", True,
                              call("deduplicate", subset=None, keep="first")))
    if near > 0 and id_columns:
        options.append(Option("deduplicate_ignoring_ids", "Remove rows equal except for identifiers",
                              f"Keep the first of rows that agree on every column except "
                              f"{', '.join(id_columns)}.",
                              "different entities that truly look alike are merged", not exact,
                              call("deduplicate", subset=rest, keep="first", near=True)))
    options.append(keep("Keep every row.", "duplicates leak between training and test splits and "
                        "over-weight some cases", recommended=not options))
    summary = copies_words(exact) if exact else ""
    if near > 0:
        summary += ("; " if summary else "") + (f"{near} more {'is a near copy' if near == 1 else 'are near copies'} "
                                                "(equal up to identifiers, case or spacing)")
    return Finding("duplicate_rows", [], "warning" if (exact + max(near, 0)) / n >= 0.01 else "info",
                   summary[0].upper() + summary[1:] + ": copies end up in both training and test data.",
                   evidence, options, "row_removal")


MIN_LAMBDA = 0.85  # Goodman-Kruskal lambda, both ways, for "nearly one to one"
MAX_CELLS = 250_000  # contingency tables larger than this are not built
MAX_LEVEL_SHARE = 0.5  # at most this many levels per present row for a mapping to mean anything


def mapping_agreement(ca: np.ndarray, cb: np.ndarray) -> tuple[float, float, np.ndarray] | None:
    """How far two coded columns determine each other: Goodman-Kruskal lambda a→b and b→a,
    and the mask of rows that break the majority mapping (both values present)."""
    both = (ca >= 0) & (cb >= 0)
    a, b = ca[both], cb[both]
    if a.size < 50:
        return None
    na, nb = int(a.max()) + 1, int(b.max()) + 1
    if na * nb > MAX_CELLS:
        return None
    table = np.bincount(a * nb + b, minlength=na * nb).reshape(na, nb)
    n = a.size

    def lam(t: np.ndarray) -> float:  # rows of t: the predictor's levels
        base = t.sum(axis=0).max()
        return (t.max(axis=1).sum() - base) / (n - base) if n > base else 0.0

    best_b, best_a = table.argmax(axis=1), table.argmax(axis=0)
    breaking = np.zeros(len(ca), dtype=bool)
    breaking[np.flatnonzero(both)] = (best_b[a] != b) | (best_a[b] != a)
    return lam(table), lam(table.T), breaking


BLOCK = 128  # columns correlated with the others at a time, the clock read between blocks
MIN_PERIODS = 20  # rows both columns hold, for a correlation to be computed (as DataFrame.corr)


def pairwise_correlation(X: np.ndarray, min_periods: int = MIN_PERIODS,
                         clock: Clock = NO_CLOCK) -> tuple[np.ndarray, int]:
    """(Pearson r of each pair of columns of ``X`` over the rows both hold, as
    ``DataFrame.corr(min_periods=...)`` gives it; the upper triangle only; the number of columns
    whose pairs with the later ones were computed before ``clock``'s deadline: the rest are NaN).

    Sums over the rows both columns hold are matrix products of the centred values and the
    presence mask, a block of columns at a time: pandas' pair-by-pair loop took 44 s on 1,000
    columns with missing values (5,000 rows), this takes a few."""
    present = np.isfinite(X)
    mask = present.astype(float)
    with np.errstate(all="ignore"):  # an all-missing column: its mean is NaN, it has no pairs
        centred = np.where(present, X - np.nanmean(np.where(present, X, np.nan), axis=0), 0.0)
    k = X.shape[1]
    r = np.full((k, k), np.nan)
    for start in range(0, k, BLOCK):
        if clock.over():
            return r, start
        rows, later = slice(start, min(start + BLOCK, k)), slice(start, k)
        xi, mi, xj, mj = centred[:, rows], mask[:, rows], centred[:, later], mask[:, later]
        n = mi.T @ mj  # rows both hold
        sx, sy = xi.T @ mj, mi.T @ xj  # each column's sum over the rows the other holds
        sxx, syy = (xi * xi).T @ mj, mi.T @ (xj * xj)
        with np.errstate(all="ignore"):
            vx, vy = sxx - sx * sx / n, syy - sy * sy / n
            block = (xi.T @ xj - sx * sy / n) / np.sqrt(vx * vy)
        # constant over the shared rows (up to rounding): no correlation, as pandas says
        block[(n < min_periods) | (vx <= 1e-12 * sxx) | (vy <= 1e-12 * syy)] = np.nan
        r[rows, later] = block
    return r, k


def find_redundant(frame: pd.DataFrame, profiles: dict[str, ColumnProfile], columns: list[str],
                   threshold: float = 0.98, deadline: float | None = None,
                   clock: Clock = NO_CLOCK) -> list[Finding]:
    """Pairs of near-identical columns: |Pearson r| >= threshold, or categories that map (nearly)
    one to one — the rows breaking a near mapping are likely entry errors in one of the two.
    The pairs grow with the square of the columns: past ``clock``'s deadline the numeric columns
    not reached are named as not checked; past ``deadline`` (a ``time.perf_counter()``) the
    category pairs left are not compared, and a finding says so."""
    numeric = [c for c in columns if profiles[c].nunique > 2 and profiles[c].holds_numbers]
    pairs: list[tuple[str, str, dict]] = []
    if len(numeric) >= 2:
        X = np.column_stack([numeric_values(frame[c], profiles[c]) for c in numeric])
        corr, reached = pairwise_correlation(X, clock=clock)
        clock.not_reached("redundant features", numeric[reached:])
        iu = np.argwhere(np.triu(np.abs(np.nan_to_num(corr)) >= threshold, k=1))
        for i, j in iu:
            pairs.append((numeric[i], numeric[j], {"pearson_r": round(float(corr[i, j]), 5)}))
    # a mapping says something only when levels repeat: two columns of (nearly) distinct values
    # (counts per district, ranks) map one to one whatever they hold
    cats = [c for c in columns if 3 <= profiles[c].nunique <= min(1000, MAX_LEVEL_SHARE * profiles[c].n_present)
            and (profiles[c].kind in ("categorical", "bool")
                 or (profiles[c].kind == "numeric" and profiles[c].is_integer))]
    codes = {c: category_codes(frame[c], max_levels=1000) for c in cats}
    seen = {(a, b) for a, b, _ in pairs}
    cut = None
    for i, a in enumerate(cats):
        if deadline is not None and time.perf_counter() > deadline:
            cut = i
            break
        for b in cats[i + 1:]:
            ua, ub = profiles[a].nunique, profiles[b].nunique
            if (a, b) in seen or min(ua, ub) < 0.8 * max(ua, ub):
                continue
            found = mapping_agreement(codes[a], codes[b])
            if found is None or min(found[0], found[1]) < MIN_LAMBDA:
                continue
            breaking = found[2]
            ev = {"levels": [int(ua), int(ub)], "lambda": [round(found[0], 4), round(found[1], 4)],
                  "rows_breaking_mapping": int(breaking.sum()),
                  "breaking_share": round(float(breaking.mean()), 5),
                  "example_rows": frame.index[breaking][:10].tolist()}
            pairs.append((a, b, ev))
    findings = [] if cut is None else [_pairs_not_compared(cats, cut)]
    for a, b, ev in pairs:
        broken = ev.get("rows_breaking_mapping", 0)
        if "pearson_r" in ev:
            how = f"correlation {ev['pearson_r']:.3f}"
        elif broken:
            how = (f"their values map one to one except in {ev['breaking_share']:.1%} of rows, "
                   "which are likely entry errors in one of the two")
        else:
            how = "their values map one to one"
        findings.append(Finding(
            "redundant_features", [a, b], "warning" if ev.get("breaking_share", 0) >= 0.005 else "info",
            f"'{a}' and '{b}' carry the same information ({how}): one of them is enough.",
            {**ev, "sample_size": len(frame)},
            [drop([b], f"redundant with {a}", "none if they are truly the same; small if nearly"),
             keep("Keep both.", "duplicated information splits importance and can destabilise "
                  "linear models")],
            None,
        ))
    return findings


def _pairs_not_compared(cats: list[str], cut: int) -> Finding:
    total = len(cats) * (len(cats) - 1) // 2
    done = total - (len(cats) - cut) * (len(cats) - cut - 1) // 2
    return Finding("diagnosis_incomplete", [], "critical",
                   f"The redundant features check compared {done:,} of {total:,} pairs of category columns "
                   "before the diagnosis's time budget ran out; the rest were not compared.",
                   {"detector": "redundant features", "pairs_compared": done, "pairs": total,
                    "not_compared_from": cats[cut]})


@detector("duplicate rows", order=70,
          finds={FindingKind.DUPLICATE_ROWS: KindData(chart=Chart.DUPLICATES, basis=Basis.WHOLE_DATA)})
def find_duplicate_rows_in(ctx: Context) -> list[Finding]:
    found = find_duplicate_rows(ctx.df, ctx.id_cols, ctx.memo.factorized_of(ctx.df) if ctx.memo else None)
    return [found] if found is not None else []


@detector("redundant features", order=80,
          finds={FindingKind.REDUNDANT_FEATURES: KindData(chart=None, basis=Basis.SAMPLE)})
def find_redundant_in(ctx: Context) -> list[Finding]:
    return find_redundant(ctx.frame, ctx.profiles, [c for c in ctx.features if c not in ctx.leak_cols],
                          deadline=ctx.deadline, clock=ctx.clock)
