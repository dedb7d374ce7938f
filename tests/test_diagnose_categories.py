"""Inconsistent categories at the size of an id column: the typo search and the grouping of
spellings give what their definitions say, whatever shortcut computes them (issue 31)."""

from __future__ import annotations

import difflib

import numpy as np
import pandas as pd

from kernel_tools.diagnosis.categories import _differs_in_numerals, find_inconsistent, typo_pairs
from kernel_tools.diagnosis.columns import profile_column


def _typos_by_definition(counts: pd.Series) -> dict[str, str]:
    """Each rare value's first frequent value (by count) at least 5x as common, within 2
    characters in length, similar by difflib's ratio and differing in more than numerals."""
    freq, top = counts.head(150), float(counts.iloc[0])
    rare = counts[counts <= max(2.0, 0.02 * top)].tail(150)
    out = {}
    for r, rc in rare.items():
        for f, fc in freq.items():
            if len(r) < 4 or f == r or fc < 5 * rc or abs(len(f) - len(r)) > 2:
                continue
            cutoff = 0.85 if min(len(r), len(f)) >= 6 else 0.75
            if difflib.SequenceMatcher(None, r, f).ratio() >= cutoff and not _differs_in_numerals(r, f):
                out[r] = f
                break
    return out


def test_typo_pairs_match_their_definition():
    rng = np.random.default_rng(3)
    words = ["london", "paris", "berlin", "madrid", "lisbon", "vienna", "prague", "warsaw"]
    values = []
    for w in words:  # frequent spellings, and rare misspellings of them (a letter changed or dropped)
        values += [w] * int(rng.integers(20, 60))
        for _ in range(3):
            i = int(rng.integers(0, len(w)))
            values.append(w[:i] + "xq"[int(rng.integers(0, 2))] + w[i + 1:])
            values.append(w[:i] + w[i + 1:])
    values += [f"P{i}" for i in rng.integers(0, 3000, 4000)]  # ids: differ only in digits
    counts = pd.Series(values).value_counts()
    found = typo_pairs(counts)
    assert found == _typos_by_definition(counts)
    assert len(found) >= 5 and all(f in words for f in found.values())


def test_spellings_grouped_among_thousands_of_singletons():
    ids = [f"P{i:04d}" for i in range(3000)] * 3
    df = pd.Series(ids + ["p0001", " P0002 ", "P0003"] * 2, name="patient")
    found = find_inconsistent({"patient": profile_column("patient", df)}, set())
    assert len(found) == 1
    evidence = found[0].evidence
    assert evidence["variants"] == {"P0001": ["p0001"], "P0002": [" P0002 "]}
    assert evidence["affected_rows"] == 4 and evidence["likely_typos"] == 0
