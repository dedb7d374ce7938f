"""A cluster's code found from the data, whatever its name.

A group's code hides under names no vocabulary holds (``lea``, ``comm``, ``class``, ``k``,
``grp7``), so the data must say it. Two signs, either enough, on a column of whole numbers or
short digit codes with many levels (at least :data:`MIN_LEVELS`, fewer than half the rows):

- **its levels determine other columns**: another column is constant within (nearly) every one of
  its levels that holds several rows, far beyond what that column's own spread makes likely by
  chance — a school's size, an area's type, the covariates of the unit the rows belong to. A
  column that is only a function of the code's *value* (an age's age group, a score's pass mark,
  an occupation code's major group) is no such evidence: its per-level values follow the order of
  the levels (few runs, or a smooth curve);
- **rows sharing a level are alike**: the target (its ranks) has an intraclass
  correlation well above 0 over the levels, *and* the level means do not follow the order of the
  levels (the von Neumann ratio of the means in the levels' order is near 1, as for labels in no
  order). A measurement with repeated values (an age, a dose, a score) is alike within its levels
  too, but its means move smoothly with its value; and a category of a few levels (a sex, an arm,
  an occupation's 12 codes) is a category (fewer than :data:`ICC_LEVELS` levels or a typical level
  holding a large share of the rows).

Each check is one groupby on at most :data:`SAMPLE_ROWS` rows.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy.stats import f as f_dist

from kernel_tools.diagnosis.columns import ColumnProfile, numeric_values

MIN_LEVELS = 8  # fewer levels are a category (a sex, an arm, a grade)
SAMPLE_ROWS = 20_000  # rows a check reads at most (sampled at random, so groups stay groups)
CONSTANT_SHARE = 0.95  # share of several-row levels within which a column is constant: determined by them
CHANCE = 1e-6  # chance of that constancy from the column's own spread at most
SCREEN_LEVELS = 64  # several-row levels a column is screened on before all are read
SCREEN_ROWS = 8  # rows of each of them
MAX_DETERMINED = 40  # columns tried as determined by the levels
SMOOTH = 0.5  # von Neumann ratio below which per-level values follow the levels' order (a function of the value)
ICC_LEVELS = 20  # levels at least for the likeness sign (fewer are a category that may predict)
ICC_TYPICAL_SHARE = 0.05  # a typical level holding this share of the rows: a category
ICC_MIN = 0.05  # intraclass correlation (adjusted for chance) at least
ICC_P = 1e-6  # the F test's p-value at most (many columns of many tables are tried)
ICC_ROWS = 3.0  # rows per level on average at least
UNORDERED = 0.75  # von Neumann ratio of the level means at least: their order says nothing


def von_neumann(values: np.ndarray) -> float:
    """Mean square of successive differences over twice the variance: about 1 for values in no
    order, near 0 for values that follow their order (a smooth function of it)."""
    values = values[np.isfinite(values)]
    if values.size < 4 or float(np.var(values)) == 0.0:
        return 1.0
    return float(np.mean(np.diff(values) ** 2) / (2 * np.var(values)))


def candidate(prof: ColumnProfile, values: pd.Series | None = None) -> bool:
    """Whole numbers or short text, with many levels: the shape of a cluster's code (counted in
    ``values`` when given, else in the profile)."""
    if values is None:
        present, levels = prof.n_present, prof.nunique
    else:
        present, levels = int(values.notna().sum()), int(values.nunique())
    if levels < MIN_LEVELS or levels >= present / 2 or present < 2 * MIN_LEVELS:
        return False
    if prof.kind == "numeric":
        return prof.is_integer
    return prof.kind == "categorical" and prof.parsed_as in (None, "numeric") and prof.mean_length < 40


def _level_order(levels: pd.Index) -> np.ndarray:
    """The levels' order: by value for numbers (numbers written as text too), else by label."""
    numbers = pd.to_numeric(pd.Series(levels, dtype=object), errors="coerce")
    if numbers.notna().all():
        return np.argsort(numbers.to_numpy(dtype=float), kind="stable")
    return np.argsort(np.asarray([str(v) for v in levels]), kind="stable")


def _follows_order(values: pd.Series) -> bool:
    """Whether per-level values (in the levels' order) are a function of the level's value: a
    smooth curve for numbers, contiguous runs (each value on one stretch of levels) otherwise."""
    numbers = pd.to_numeric(values, errors="coerce")
    if numbers.notna().mean() >= 0.95 and numbers.nunique() > 2:
        return von_neumann(numbers.to_numpy(dtype=float)) < SMOOTH
    codes = values.astype(str).to_numpy()
    runs = 1 + int((codes[1:] != codes[:-1]).sum())
    return runs <= pd.Series(codes).nunique()


def _equal_successive(values: np.ndarray) -> np.ndarray:
    """Whether each row holds what the row before it holds (two missing values alike)."""
    missing = pd.isna(values)
    return (values[1:] == values[:-1]) | (missing[1:] & missing[:-1])


def determined_columns(df: pd.DataFrame, profiles: dict[str, ColumnProfile], name: str, others: list[str]) -> list[str]:
    """The columns constant within the levels of ``name`` (see the module docstring), best first."""
    others = [c for c in others if profiles[c].nunique >= 2 and profiles[c].missing_rate <= 0.5][:MAX_DETERMINED]
    if not others:
        return []
    sizes = df[name].value_counts(dropna=True, sort=False)
    multi = sizes[sizes > 1]
    if len(multi) < MIN_LEVELS // 2:
        return []
    # screened on a few rows of a few levels first: most columns vary within the first of them
    screened = df[name].isin(multi.index[:SCREEN_LEVELS]).to_numpy()
    few = df.loc[screened, [name, *others]].groupby(name, sort=False).head(SCREEN_ROWS).sort_values(name, kind="stable")
    keys = few[name].to_numpy()
    same = keys[1:] == keys[:-1]  # pairs of successive rows in one level
    others = [c for c in others if _equal_successive(few[c].to_numpy())[same].mean() >= CONSTANT_SHARE - 0.05]
    if not others:
        return []
    frame = df[[name, *others]].dropna(subset=[name])
    grouped = frame.groupby(name, sort=False)
    nun = grouped[others].nunique(dropna=True).loc[multi.index]
    firsts = grouped[others].first().loc[multi.index]
    order = _level_order(multi.index)
    found: list[tuple[float, str]] = []
    for c in others:
        constant = (nun[c] <= 1).to_numpy()
        if constant.mean() < CONSTANT_SHARE:
            continue
        share = frame[c].value_counts(normalize=True, dropna=True).to_numpy()
        collide = float((share**2).sum())  # two rows sharing a value by chance
        if collide >= 1.0:
            continue
        log_chance = float(((multi.to_numpy()[constant] - 1) * math.log(max(collide, 1e-300))).sum())
        if log_chance > math.log(CHANCE) or _follows_order(firsts[c].iloc[order].reset_index(drop=True)):
            continue
        found.append((log_chance, c))
    return [c for _, c in sorted(found)]


def likeness(df: pd.DataFrame, profiles: dict[str, ColumnProfile], name: str, target: str | None) -> dict | None:
    """The intraclass correlation of the target's ranks (of its commonest class, for classes) over
    the levels of ``name`` when it is clear and the level means follow no order of the levels, or
    None (see the module docstring). Ranks, so that one outlying row makes no level stand out."""
    levels = int(df[name].nunique())
    if target not in profiles or levels < ICC_LEVELS or df[name].notna().sum() / levels < ICC_ROWS:
        return None
    assert target is not None
    frame = df[[name, target]].dropna()
    if profiles[target].holds_numbers:
        y = pd.Series(numeric_values(frame[target], profiles[target]), index=frame.index).rank()
    else:
        y = (frame[target] == frame[target].mode().iloc[0]).astype(float)
    ok = y.notna().to_numpy()
    y, keys = y[ok], frame[name].to_numpy()[ok]
    grouped = y.groupby(keys, sort=False)
    sizes, means = grouped.size(), grouped.mean()
    n, k = len(y), len(sizes)
    if k < ICC_LEVELS or n <= k + 1 or float(sizes.median()) / n >= ICC_TYPICAL_SHARE:
        return None
    total = float(((y - y.mean()) ** 2).sum())
    if total == 0.0:
        return None
    between = float((sizes * (means - y.mean()) ** 2).sum())
    f = (between / (k - 1)) / max((total - between) / (n - k), 1e-12)
    p = float(f_dist.sf(f, k - 1, n - k))
    icc = (f - 1) / (f - 1 + n / k)  # the one-way intraclass correlation, rows per level averaged
    ratio = von_neumann(means.to_numpy(dtype=float)[_level_order(means.index)])
    if icc < ICC_MIN or p > ICC_P or ratio < UNORDERED:
        return None
    return {"column": target, "icc": round(icc, 3), "p_value": float(f"{p:.2g}"), "order_ratio": round(ratio, 2)}


def cluster_evidence(
    df: pd.DataFrame, profiles: dict[str, ColumnProfile], name: str, target: str | None, others: list[str]
) -> dict | None:
    """The data's evidence that ``name`` is a cluster's code (``determines``: the columns its
    levels fix; ``alike``: the intraclass correlation), or None. ``others``: the columns that may
    be a unit's covariates or features (not ids, not the target). ``df``: the rows :func:`units`
    keeps (one per entity: a subject's attribute repeated on its records is constant within the
    subject, not within a group of subjects)."""
    if not candidate(profiles[name], df[name]):
        return None
    found = determined_columns(df, profiles, name, others)
    if found:
        return {"determines": found[:5]}
    alike = likeness(df, profiles, name, target)
    return {"alike": alike} if alike is not None else None


def units(df: pd.DataFrame, entity: str | None) -> pd.DataFrame:
    """The rows the checks read: one per entity (its first) when there is one, at most
    :data:`SAMPLE_ROWS` of them (at random, so that groups stay groups)."""
    if entity is not None and entity in df.columns:
        df = df.drop_duplicates(entity)
    return df.sample(SAMPLE_ROWS, random_state=0) if len(df) > SAMPLE_ROWS else df
