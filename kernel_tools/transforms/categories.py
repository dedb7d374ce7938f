"""Merge spelling variants of one category (case, spaces, punctuation, close typos)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import pandas as pd

from kernel_tools.lazy import lazy_aware

from ._base import FrameTransformer, check_columns, check_frame
from .report import StepReport

_NOT_WORD = re.compile(r"[\W_]+")
_DIGITS = re.compile(r"\d+")


def spelling_key(value: str) -> str:
    """What stays when case, whitespace and punctuation are ignored."""
    return _NOT_WORD.sub("", value.casefold())


def _learn_column(counts: pd.Series, threshold: float, min_length: int, min_ratio: float) -> tuple[dict, dict]:
    """Return ({variant: canonical}, {key: canonical}) for one column's value counts."""
    from rapidfuzz import process
    from rapidfuzz.distance import DamerauLevenshtein

    groups: dict[str, dict[str, int]] = {}
    for value, n in counts.items():
        key = spelling_key(value)
        groups.setdefault(key or value, {})[value] = int(n)
    # canonical spelling of a group: its most frequent variant (ties: the tidiest, then sorted)
    canon = {
        key: sorted(members, key=lambda v: (-members[v], v != v.strip() or "  " in v, v))[0]
        for key, members in groups.items()
    }
    size = {key: sum(members.values()) for key, members in groups.items()}
    order = sorted(groups, key=lambda k: (-size[k], k))
    target: dict[str, str] = {}
    kept: list[str] = []
    for key in order:
        match = None
        if len(key) >= min_length and kept:
            candidates = [
                k for k in kept
                if len(k) >= min_length and size[k] >= min_ratio * size[key] and _DIGITS.findall(k) == _DIGITS.findall(key)
            ]
            # edits allowed: (100 - threshold)% of the length, at least one (typo, transposition)
            max_edits = max(1, int(len(key) * (100 - threshold) / 100))
            found = (
                process.extractOne(key, candidates, scorer=DamerauLevenshtein.distance, score_cutoff=max_edits)
                if candidates else None
            )
            match = found[0] if found else None
        target[key] = target[match] if match is not None else key
        if match is None:
            kept.append(key)
    key_to_canonical = {key: canon[target[key]] for key in groups}
    mapping = {
        value: key_to_canonical[key]
        for key, members in groups.items()
        for value in members
        if value != key_to_canonical[key]
    }
    return mapping, key_to_canonical


class CategoryNormalizer(FrameTransformer):
    """Replace spelling variants by the canonical spelling learned on the training frame.

    New values at transform time are matched to a learned canonical value only by their
    spelling key (case/space/punctuation); typos are matched only if seen during fit.
    """

    def __init__(
        self,
        columns: Sequence[str] | None = None,
        threshold: float = 90.0,
        min_length: int = 5,
        min_ratio: float = 2.0,
        max_levels: int = 200,
    ) -> None:
        self.columns = columns
        self.threshold = threshold
        self.min_length = min_length
        self.min_ratio = min_ratio
        self.max_levels = max_levels

    def fit(self, X: pd.DataFrame, y: Any = None) -> CategoryNormalizer:
        X = self._remember_input(X)
        if not 0 < self.threshold <= 100:
            raise ValueError(f"threshold is a similarity in (0, 100]; got {self.threshold!r}")
        if self.columns is None:
            columns = [
                c for c in X.columns
                if (pd.api.types.is_object_dtype(X[c]) or pd.api.types.is_string_dtype(X[c])
                    or isinstance(X[c].dtype, pd.CategoricalDtype))
                and X[c].nunique() <= self.max_levels
            ]
        else:
            columns = check_columns(X, self.columns)
        self.mapping_: dict[str, dict[str, str]] = {}
        self.key_to_canonical_: dict[str, dict[str, str]] = {}
        for col in columns:
            values = X[col].dropna()
            values = values[values.map(lambda v: isinstance(v, str))]
            mapping, keys = _learn_column(values.value_counts(), self.threshold, self.min_length, self.min_ratio)
            self.mapping_[col] = mapping
            self.key_to_canonical_[col] = keys
        self.feature_names_out_ = [str(c) for c in X.columns]
        return self

    def transform(self, X: pd.DataFrame) -> pd.DataFrame:
        X = self._check_transform_input(X)
        out = X.copy()
        for col, mapping in self.mapping_.items():
            if col not in out.columns:
                continue
            keys = self.key_to_canonical_[col]

            def canonical(v: Any, mapping: dict = mapping, keys: dict = keys) -> Any:
                if not isinstance(v, str):
                    return v
                if v in mapping:
                    return mapping[v]
                return keys.get(spelling_key(v), v)

            dtype = out[col].dtype
            mapped = out[col].astype(object).map(canonical)
            out[col] = mapped.astype("category" if isinstance(dtype, pd.CategoricalDtype) else dtype)
        return out


@lazy_aware(fitted=True)
def normalize_categories(
    df: pd.DataFrame,
    columns: Sequence[str] | None = None,
    threshold: float = 90.0,
    min_length: int = 5,
    min_ratio: float = 2.0,
    max_levels: int = 200,
) -> tuple[pd.DataFrame, StepReport]:
    """Merge variants of one category value; the mapping is in ``report.details["mapping"]``.

    Values equal up to case, whitespace and punctuation are always merged. A rarer value is
    also merged into a value at least ``min_ratio`` times as frequent when they differ by few
    edits (Damerau-Levenshtein, rapidfuzz: at most (100 - ``threshold``)% of the length, at
    least one), both are >= ``min_length`` characters and they contain the same numbers ("Type 1" never merges with "Type 2").
    With ``columns=None``: text/category columns with at most ``max_levels`` distinct values.
    """
    check_frame(df)
    norm = CategoryNormalizer(columns, threshold, min_length, min_ratio, max_levels).fit(df)
    out = norm.transform(df)
    changed = {
        col: int((df[col].astype(object) != out[col].astype(object))[df[col].notna()].sum())
        for col in norm.mapping_
    }
    levels = {col: [int(df[col].nunique()), int(out[col].nunique())] for col in norm.mapping_}
    details = {"mapping": norm.mapping_, "values_changed": changed, "levels_before_after": levels}
    return out, StepReport.between("normalize_categories", df, out, details=details, transformer=norm)
