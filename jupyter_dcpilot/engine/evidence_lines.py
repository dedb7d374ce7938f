"""A decision's evidence as a person reads it: one short line per item, in words.

The evidence dict stays the machine form (the sidecar, report.json, the agents' view); this is
the one rendering every host shows a person — the panel's card (``Decision.evidence_lines`` on
the wire), report.html, the notebook's decision record, ``%dcstatus``, the chat, the terminal's
prompt. Never ``key = value``: a label in words and the value ("Censoring share: 30%"), a score
named by its metric, an item the question already says left out, a nested table left to the chart,
and no bracket inside another (a clause in brackets within brackets is hard to read aloud).
"""

from __future__ import annotations

from enum import Enum
from typing import Any

from kernel_tools.vocabulary import METRIC_WORDS, metric_words

# the task card's items, as the task says them (its question says most of them: those are left out)
LABELS = {"kind": "The task", "target": "The target", "time": "The survival time", "event": "The event",
          "id": "The entity", "visit": "The visit", "entity_id": "The entity", "visit_column": "The visit",
          "duration": "The survival time", "prediction_time": "Predictions are made at",
          "prediction_time_reason": "Why then", "rows_without_id": "Rows without an id",
          "alike_columns": "Columns asked together", "added_by": "Added by"}
QUOTED = {"target", "time", "event", "id", "visit", "entity_id", "visit_column", "duration"}  # column names, quoted as the questions quote them
# values that are a vocabulary's word ("outcome_derived"), said with spaces; any other value may be
# a column's name and is said as it is
WORDED = {"kind", "timing", "timing_tests", "looks_like", "holds", "stored_as", "source", "unit", "added_by"}
SAID_TOGETHER = {"reason", "score", "metric", "rank", "features_scored", "next_best_score", "sample_size"}
ACRONYMS = {"auc": "AUC", "auroc": "AUROC", "iqr": "IQR", "cv": "CV", "p": "p"}
MAX_LIST = 6  # values of a list shown before "and N more"
OPENING, CLOSING = "([{", ")]}"
LONG = 100  # a sentence longer than this is said in its clauses, a line each
ASIDE = 40  # a bracketed aside longer than this (a clause, not a count) is a line of its own


def evidence_lines(evidence: dict[str, Any], question: str = "", limit: int = 12) -> list[str]:
    """The evidence in lines of words (at most ``limit``); what ``question`` already says is not
    said again: a text item it holds, a task card item whose value it names."""
    lines = _said_together(evidence, question)
    for key, value in evidence.items():
        if key in SAID_TOGETHER or value is None or value == "" or isinstance(value, dict):  # "Rationale:" says nothing
            continue
        if isinstance(value, list):
            if any(isinstance(v, (dict, list)) for v in value):
                continue  # a table (a join's key candidates): its rows are the options', never a repr
            if value and all(isinstance(v, str) and " " in v for v in value):  # sentences: short lines
                lines += sentence_lines([v for v in value if v not in question])
            elif value:
                lines.append(f"{_label(key)}: {_listed(key, value)}")
            continue
        text = _value(key, value)
        if key in LABELS and (f"'{value}'" if key in QUOTED else str(value)) in question:
            continue  # the question says it
        if isinstance(value, str) and len(value) > 20 and value in question:
            continue
        lines.append(unnested(f"{_label(key)}: {text}"))
    return lines[:limit]


def _said_together(evidence: dict[str, Any], question: str) -> list[str]:
    """The reason, and a score with its metric, rank and sample in one line."""
    ev = evidence
    lines = [unnested(_sentence(str(ev["reason"])))] if ev.get("reason") and str(ev["reason"]) not in question else []
    if ev.get("score") is not None:
        said = [(f"{metric_words(ev['metric'])} " if ev.get("metric") else "") + _number(ev["score"])]
        if ev.get("rank") is not None:
            said.append(f"ranked {ev['rank']}" + (f" of {ev['features_scored']} features scored"
                                                  if ev.get("features_scored") is not None else ""))
        if ev.get("next_best_score") is not None:
            said.append(f"the next best {_number(ev['next_best_score'])}")
        lines.append("Score: " + ", ".join(said))
    elif ev.get("metric"):
        lines.append(f"Metric: {metric_words(ev['metric'])}")
    if isinstance(ev.get("sample_size"), int):
        lines.append(f"On a sample of {ev['sample_size']:,} rows")
    return lines


def sentence_lines(sentences: list[str]) -> list[str]:
    """Sentences as short lines (an inference's evidence, a detector's reasons): a long one is cut
    at its clauses (``; `` and ``: `` outside brackets), a long aside in brackets follows its clause
    as a line of its own; each line starts with a capital, ends without a full stop and nests no
    bracket."""
    lines = []
    for sentence in sentences:
        clauses = [sentence.strip()] if len(sentence) <= LONG else _clauses(sentence)
        for clause in clauses:
            said, asides = _asides(clause)
            lines += [_sentence(unnested(c).strip().removesuffix(".")) for c in (said, *asides) if c.strip()]
    return lines


def _clauses(text: str) -> list[str]:
    """``text`` cut at ``; `` and ``: `` outside brackets."""
    out, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += (ch in OPENING) - (ch in CLOSING and depth > 0)
        if not depth and ch in ";:" and text[i + 1:i + 2] == " ":
            out.append(text[start:i])
            start = i + 2
    return [*out, text[start:]]


def _asides(clause: str) -> tuple[str, list[str]]:
    """The clause without its long bracketed asides (a clause of their own), and those asides."""
    kept: list[str] = []
    asides, depth, mark = [], 0, 0
    for ch in clause:
        if ch in OPENING:
            depth += 1
            mark = len(kept) if depth == 1 else mark
        elif ch in CLOSING and depth:
            depth -= 1
            inner = "".join(kept[mark + 1:])
            if not depth and len(inner) > ASIDE and ", " in inner:
                asides.append(inner)
                del kept[mark:]  # the bracket and what it holds
                continue
        kept.append(ch)
    return " ".join("".join(kept).split()), asides


def _label(key: str) -> str:
    if key in LABELS or key in METRIC_WORDS:
        return LABELS.get(key) or metric_words(key)
    words = " ".join(ACRONYMS.get(w, w) for w in key.split("_"))
    return words[:1].upper() + words[1:]


def _value(key: str, value: Any) -> str:
    if isinstance(value, Enum):
        value = value.value
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float) and ("share" in key or "rate" in key) and 0 <= value <= 1:
        return f"{value:.0%}" if value >= 0.01 or value == 0 else "below 1%"
    if isinstance(value, float) and "p_value" in key and value < 1e-4:
        return "below 0.0001"
    if key in QUOTED:
        return f"'{value}'"
    if isinstance(value, (int, float)):
        return _number(value)
    return str(value).replace("_", " ") if key in WORDED else str(value)


def _listed(key: str, values: list[Any]) -> str:
    shown = ", ".join(_number(v) if isinstance(v, (int, float)) else _value(key, v) for v in values[:MAX_LIST])
    return shown + (f" and {len(values) - MAX_LIST} more" if len(values) > MAX_LIST else "")


def _number(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, int) or float(value).is_integer():
        return f"{int(value):,}"
    return f"{value:.3g}" if abs(value) < 1000 else f"{value:,.0f}"


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:]


def unnested(text: str) -> str:
    """``text`` with each bracket inside another bracket dropped, its words kept ("a (b (c) d)"
    reads "a (b c d)"); an interval's mismatched pair ("(0, 1]") counts as one bracket."""
    out, depth = [], 0
    for ch in text:
        if ch in OPENING:
            depth += 1
            if depth > 1:
                continue
        elif ch in CLOSING and depth:
            depth -= 1
            if depth:
                continue
        out.append(ch)
    return "".join(out)


def nested(text: str) -> bool:
    """Whether a bracket opens inside another in ``text`` (what :func:`unnested` leaves none of)."""
    depth = 0
    for ch in text:
        if ch in OPENING:
            if depth:
                return True
            depth += 1
        elif ch in CLOSING and depth:
            depth -= 1
    return False


__all__ = ["evidence_lines", "nested", "sentence_lines", "unnested"]
