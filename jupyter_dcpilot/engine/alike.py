"""Columns that need the same action are one step: "Drop 25 mostly-missing columns", not 25.

A wide table's diagnosis finds the same problem on many columns (each mostly missing, say), each a
finding with the same options, the same one recommended. One step and one question per column
made a plan of 25 identical questions. Findings of a gated episode that agree on the gate, the
options offered and the recommended one, and whose options each act on their own columns, are
asked once as a group when there are at least ``MIN_ALIKE`` of them; each option's call then acts
on every column of the group. Fewer stay one step each: two columns are read as easily apart.
"""

from __future__ import annotations

from typing import Any

from kernel_tools.findings import Finding

from .wire import DecisionOption

MIN_ALIKE = 3


def alike_key(finding: Finding) -> tuple[Any, ...] | None:
    """What findings must share to be asked as one; None for a finding that cannot be grouped
    (an option acting on other columns than its own, or none recommended)."""
    recommended = finding.recommended
    if recommended is None or not finding.columns:
        return None
    for option in finding.options:
        params = (option.action or {}).get("params") or {}
        if option.action and sorted(params.get("columns") or []) != sorted(finding.columns):
            return None
    actions = tuple((o.id, (o.action or {}).get("function")) for o in finding.options)
    return finding.gate, finding.kind, recommended.id, actions


def groups(findings: list[Finding]) -> list[list[Finding]]:
    """``findings`` in groups to ask as one (see the module docstring), in their order."""
    by_key: dict[Any, list[Finding]] = {}
    out: list[list[Finding]] = []
    for f in findings:
        key = alike_key(f)
        if key is None:
            out.append([f])
        elif key in by_key:
            by_key[key].append(f)
        else:
            by_key[key] = [f]
            out.append(by_key[key])
    return [part for group in out for part in ([group] if len(group) >= MIN_ALIKE else [[f] for f in group])]


def title(episode_name: str, found: list[Finding]) -> str:
    """"Drop 25 mostly-missing columns" for a group dropping columns for one reason, else the
    episode's name and how many columns."""
    action = (found[0].recommended.action if found[0].recommended else None) or {}
    reason = (action.get("params") or {}).get("reason")
    if action.get("function") == "drop_columns" and isinstance(reason, str) and reason:
        return f"Drop {columns_for(len(found), reason)}"
    return f"{episode_name}: {len(found)} columns alike"


def columns_for(n: int, reason: str | None) -> str:
    """"25 mostly-missing columns" for a short reason, "3 columns (may give the outcome away)" for a
    longer one (a hyphenated clause reads as noise)."""
    if not reason:
        return f"{n} columns"
    return f"{n} {reason.replace(' ', '-')} columns" if len(reason.split()) <= 2 else f"{n} columns ({reason})"


def question(found: list[Finding]) -> str:
    """The group's question: how many columns, and the first one's finding as its example."""
    columns = [c for f in found for c in f.columns]
    shown = ", ".join(columns[:6]) + (f" and {len(columns) - 6} more" if len(columns) > 6 else "")
    return f"{len(columns)} columns need the same decision ({shown}); for example, {found[0].summary}"


def merged_options(options: list[DecisionOption], found: list[Finding]) -> list[DecisionOption]:
    """The first finding's options acting on every column of the group; a drop's label keeps its
    reason ("Drop 25 mostly-missing columns"): the answer's label becomes the step's title."""
    columns = [c for f in found for c in f.columns]
    for option in options:
        params = (option.action or {}).get("params") or {}
        if option.action and "columns" in params:
            option.action = {**option.action, "params": {**params, "columns": columns}}
            reason = params.get("reason") if option.action.get("function") == "drop_columns" else None
            named = columns_for(len(columns), reason if isinstance(reason, str) else None)
            option.label = option.label.replace(", ".join(found[0].columns), named)
            option.description = option.description.replace(", ".join(found[0].columns), f"{len(columns)} columns")
    return options
