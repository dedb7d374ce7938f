"""Rows that are not data: a header line repeated inside the table, and summary rows (totals).

Exports concatenated into one file repeat their header line; spreadsheets end a table with a
'Total' row. Read as data, a repeated header turns every numeric column into text, and a total
becomes an extreme value — in the target, a class or an outcome of its own. Both are told by
the data: a repeated header holds its columns' own names, a summary row holds the sum (or the
mean) of the rows above it, usually next to a word saying so.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from kernel_tools.diagnosis.columns import ColumnProfile, numeric_values
from kernel_tools.diagnosis.options import call, keep
from kernel_tools.diagnosis.registry import KindData, declare
from kernel_tools.findings import Finding, Option
from kernel_tools.plurals import counted
from kernel_tools.vocabulary import Basis, FindingKind

HEADER_SHARE = 0.5  # a row holding its column's name in at least this share of the columns
EDGE_ROWS = 5  # summary rows are looked for among the first and last rows
SPREAD_TOLERANCE = 1e-3  # of the column's standard deviation
LABEL_COUNT = 3  # a summary's label is rare in its column ('Average' as a quality grade is not)
SUMMARY_WORDS = re.compile(
    r"^\s*(grand\s+)?(total|totals|sum|subtotal|sub-total|overall|all|mean|average|avg|gesamt|"
    r"summe|totaal|totale|somme|suma)\s*:?\s*$",
    re.IGNORECASE,
)


def header_rows(df: pd.DataFrame, profiles: dict[str, ColumnProfile]) -> tuple[np.ndarray, list[str]]:
    """The mask of rows that repeat the header, and the columns holding their own name."""
    named = [c for c, p in profiles.items()
             if p.counts is not None and any(str(k).strip().lower() == str(c).strip().lower()
                                             for k in p.counts.index[:5000])]
    if len(named) < max(2, HEADER_SHARE * len(profiles)):
        return np.zeros(len(df), dtype=bool), []
    hits = np.zeros(len(df), dtype=int)
    for c in named:
        hits += (df[c].astype(str).str.strip().str.lower() == str(c).strip().lower()).to_numpy()
    return hits >= max(2, HEADER_SHARE * len(profiles)), named


def summary_rows(df: pd.DataFrame, profiles: dict[str, ColumnProfile]) -> list[dict]:
    """Rows among the first and last :data:`EDGE_ROWS` whose numbers add up the others: each
    with its label, the columns that are sums or means, and the word that names it (if any)."""
    n = len(df)
    if n < 3 * EDGE_ROWS:
        return []
    numbers = {c: numeric_values(df[c], p) for c, p in profiles.items() if p.holds_numbers}
    texts = [c for c, p in profiles.items() if p.kind == "categorical"]
    # one pass per column: the sum, count and spread; each edge row then takes itself out
    stats = {}
    for c, x in numbers.items():
        finite = np.isfinite(x)
        if finite.sum() > 2:
            stats[c] = (float(x[finite].sum()), int(finite.sum()), float(x[finite].std()))
    found = []
    for pos in sorted(set(range(EDGE_ROWS)) | set(range(n - EDGE_ROWS, n))):
        totals = []
        for c, (total, count, spread) in stats.items():
            v = float(numbers[c][pos])
            if not np.isfinite(v) or spread == 0:
                continue
            # as written: a total rounded to its own decimals ("27.3" for 27.3456) still adds up
            tolerance = max(SPREAD_TOLERANCE * spread, 0.5 * 10.0 ** -_decimals(v))
            rest = total - v
            for what, value in (("sum", rest), ("mean", rest / (count - 1))):
                # a total is no value of the column itself (a mean of counts may equal one by chance)
                if abs(v - value) <= tolerance + 1e-9 * abs(value) and int((numbers[c] == v).sum()) == 1:
                    totals.append({"column": c, "is": what})
                    break
        word = next((c for c in texts if _summary_label(df[c].iat[pos], profiles[c])), None)
        # unlabelled, only sums of two columns or more are evidence enough (a mean is not rare)
        if sum(t["is"] == "sum" for t in totals) >= 2 or (totals and word is not None):
            found.append({"position": pos, "label": df.index[pos], "totals": totals,
                          "word": None if word is None else {"column": word, "value": df[word].iat[pos]}})
    return found


def _summary_label(value: object, prof: ColumnProfile) -> bool:
    """A cell saying 'Total' (or 'Mean', 'Gesamt' ...) that is rare in its column."""
    counts = prof.counts
    return (isinstance(value, str) and bool(SUMMARY_WORDS.match(value)) and counts is not None
            and int(counts.get(value, 0)) <= LABEL_COUNT)


def _decimals(v: float) -> int:
    return next((k for k in range(7) if abs(v - round(v, k)) <= 1e-9 * max(1.0, abs(v))), 7)


# run by the runner before every other check (the others read the data without these rows)
declare(FindingKind.STRAY_ROWS, KindData(chart=None, basis=Basis.SAMPLE))


def find_stray_rows(df: pd.DataFrame, profiles: dict[str, ColumnProfile],
                    target: str | None) -> tuple[Finding, np.ndarray] | None:
    """The finding, and the mask of the rows that are data; None when every row is."""
    header_mask, named = header_rows(df, profiles)
    summaries = [s for s in summary_rows(df, profiles) if not header_mask[s["position"]]]
    if not header_mask.any() and not summaries:
        return None
    headers = df.index[header_mask]
    labels = [*headers.tolist(), *(s["label"] for s in summaries)]
    parts = []
    if len(headers):
        one = len(headers) == 1
        parts.append(f"{counted(len(headers), 'row')} {'repeats' if one else 'repeat'} the header: "
                     f"{'its' if one else 'their'} cells are the column names (a file made of several exports), and "
                     f"{'it makes' if one else 'they make'} every number of those columns text")
    for s in summaries:
        named_by = f" labelled '{s['word']['value']}'" if s["word"] else ""
        sums = ", ".join(f"'{t['column']}'" for t in s["totals"][:4])
        parts.append(f"row {s['label']!s}{named_by} holds the {s['totals'][0]['is']} of the other rows in "
                     f"{sums}: a summary, not a case")
    in_target = target is not None and (len(headers) > 0 and target in named or any(
        t["column"] == target for s in summaries for t in s["totals"]))
    them, they = ("it", "it gives") if len(labels) == 1 else ("them", "they give")
    summary = (("A row that is not data: " if len(labels) == 1 else "Rows that are not data: ") + "; ".join(parts)
               + f". The other checks read the data without {them}"
               + (f"; left in, {they} the target '{target}' a value of its own" if in_target else "") + ".")
    evidence = {"header_rows": [str(i) for i in headers[:20]], "columns_holding_their_name": named[:20],
                "summary_rows": [{**s, "label": str(s["label"])} for s in summaries], "rows": len(labels)}
    where = [{c: c for c in named}] if len(headers) else []
    where += [{s["word"]["column"]: s["word"]["value"]} for s in summaries if s["word"]]
    unlabelled = [s["label"] for s in summaries if not s["word"]]
    options = [
        Option("drop_rows", "Remove the row" if len(labels) == 1 else f"Remove the {len(labels)} rows",
               "Remove the rows that repeat the header or sum up the table, before any other step reads the "
               "columns.", "none: they describe no case", True,
               call("drop_rows", where=where, index=unlabelled or None, reason="not data (a header or a total)")),
        keep("Keep them as rows.", "numbers stay text, and the totals are modelled as cases"),
    ]
    finding = Finding("stray_rows", sorted({*named, *(t["column"] for s in summaries for t in s["totals"])}),
                      "critical" if in_target else "warning", summary, evidence, options, "row_removal")
    is_data = ~header_mask
    is_data[[s["position"] for s in summaries]] = False
    return finding, is_data
