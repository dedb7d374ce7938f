"""Inconsistent categories: one value written several ways (case, spacing, typos).

Works on distinct values only. A typo is a rare value very similar to a much more frequent
one; values that differ only in digits or roman numerals ("Stage II" vs "Stage III") are
different categories, not typos.
"""

from __future__ import annotations

import difflib
import re

import pandas as pd

from kernel_tools.diagnosis.columns import ColumnProfile
from kernel_tools.diagnosis.options import call, keep
from kernel_tools.diagnosis.registry import Context, KindData, detector
from kernel_tools.findings import Finding, Option
from kernel_tools.plurals import counted
from kernel_tools.vocabulary import Basis, FindingKind

MAX_FREQUENT = 150
MAX_RARE = 150
_ONLY_NUMERALS = re.compile(r"^[\divxIVX\s.,-]*$")


def _normalise(values: pd.Index) -> pd.Index:
    return values.str.strip().str.lower().str.replace(r"[\s_\-]+", " ", regex=True)


def _differs_in_numerals(a: str, b: str) -> bool:
    sm = difflib.SequenceMatcher(None, a, b)
    diff = "".join(a[i1:i2] + b[j1:j2] for tag, i1, i2, j1, j2 in sm.get_opcodes() if tag != "equal")
    return bool(_ONLY_NUMERALS.match(diff))


def typo_pairs(counts: pd.Series) -> dict[str, str]:
    """Rare value -> the frequent value it is probably a misspelling of."""
    freq = counts.head(MAX_FREQUENT)
    top = float(counts.iloc[0])
    rare = counts[counts <= max(2.0, 0.02 * top)].tail(MAX_RARE)
    out = {}
    # one matcher per frequent value: it indexes its second sequence once (the costly part)
    matchers = {f: difflib.SequenceMatcher(None, "", f) for f in freq.index}
    for r, rc in rare.items():
        if len(r) < 4:
            continue
        for f, fc in freq.items():
            if f == r or fc < 5 * rc or abs(len(f) - len(r)) > 2:
                continue
            sm = matchers[f]
            sm.set_seq1(r)
            cutoff = 0.85 if min(len(r), len(f)) >= 6 else 0.75
            if sm.real_quick_ratio() < cutoff or sm.quick_ratio() < cutoff or sm.ratio() < cutoff:
                continue
            if _differs_in_numerals(r, f):
                continue
            out[r] = f
            break
    return out


def find_inconsistent(profiles: dict[str, ColumnProfile], exclude: set[str]) -> list[Finding]:
    findings = []
    for c, prof in profiles.items():
        if (c in exclude or prof.kind != "categorical" or prof.parsed_as is not None
                or prof.counts is None or not 2 <= prof.nunique <= 20_000):
            continue
        raw = prof.counts.copy()
        raw.index = pd.Index(raw.index.map(str))
        raw = raw.drop(labels=[t for t in prof.na_tokens if t in raw.index])
        if len(raw) < 2:
            continue
        norm = _normalise(raw.index)
        grouped = raw.groupby(norm).sum().sort_values(ascending=False)
        variants: dict[str, list[str]] = {}
        by_norm = pd.Series(raw.index, index=norm)
        # only spellings that share a normal form: an id column has thousands of groups of one
        for _, members in by_norm[norm.duplicated(keep=False)].groupby(level=0):
            main = raw[members.tolist()].idxmax()
            variants[main] = [m for m in members if m != main]
        rows = sum(int(raw[v].sum()) for vs in variants.values() for v in vs)
        typos = typo_pairs(grouped) if len(grouped) >= 2 else {}
        for r, f in typos.items():
            main = raw[by_norm[[f]].tolist()].idxmax()
            rare_raw = by_norm[[r]].tolist()
            variants.setdefault(main, []).extend(rare_raw)
            rows += int(raw[rare_raw].sum())
        if not variants:
            continue
        examples = dict(list(variants.items())[:10])
        n_var = sum(len(v) for v in variants.values())
        findings.append(Finding(
            "inconsistent_categories", [c], "warning" if rows / max(prof.n_present, 1) >= 0.01 else "info",
            f"'{c}' writes the same value in several ways ({counted(n_var, 'variant')}, {counted(rows, 'row')}), e.g. "
            + "; ".join(f"{k!r} vs {', '.join(map(repr, v[:2]))}" for k, v in list(variants.items())[:2]) + ".",
            {"variants": examples, "variant_count": n_var, "affected_rows": rows,
             "case_or_spacing": n_var - sum(len(by_norm[[r]]) for r in typos),
             "likely_typos": len(typos)},
            [Option("normalize", "Merge the variants",
                    f"Map every variant of '{c}' to its most frequent spelling.",
                    "two values that only look alike would be merged", True,
                    call("normalize_categories", columns=[c])),
             keep("Keep the spellings as they are.", "one category is split into several, "
                  "weakening what the model learns about it")],
            None,
        ))
    return findings


@detector("categories", order=90,
          finds={FindingKind.INCONSISTENT_CATEGORIES: KindData(chart=None, basis=Basis.WHOLE_DATA)})
def find_inconsistent_in(ctx: Context) -> list[Finding]:
    return find_inconsistent(ctx.profiles, set(ctx.id_cols) | ({ctx.duration} if ctx.duration is not None else set()))
