"""Which decisions rested on the study's codebook, and the line each cites.

The kernel's diagnosis (``kernel_tools.diagnosis.codebook``) puts what the codebook said in a
finding's evidence: ``source`` ("codebook", "data and codebook") with its ``citation`` (a column
timed or flagged as an identifier), per-column citations (``columns`` / ``outside_choices``:
values outside a valid range or the listed choices), or the ``dictionary`` a REDCap export's
events were read with. A decision copies its finding's evidence, so the report can say, per
decision, what the codebook contributed.
"""

from __future__ import annotations

from typing import Any

from .session import Session

SOURCES = ("codebook", "data and codebook")


def codebook_citation(evidence: dict[str, Any] | None) -> str | None:
    """The codebook line(s) a finding's evidence rests on, or None when it rests on the data alone."""
    evidence = evidence or {}
    if evidence.get("source") in SOURCES and evidence.get("citation"):
        return str(evidence["citation"])
    per_column = evidence.get("outside_choices") or evidence.get("columns")
    if evidence.get("dictionary") and isinstance(per_column, dict):
        cited = [str(v["citation"]) for v in per_column.values() if isinstance(v, dict) and v.get("citation")]
        if cited:
            return "; ".join(cited[:3]) + (f" and {len(cited) - 3} more" if len(cited) > 3 else "")
    if evidence.get("dictionary") and evidence.get("events"):  # a REDCap export read with its codebook
        return (f"the events {' → '.join(map(str, evidence['events'][:4]))} in the order of "
                f"{evidence.get('order_from') or 'the export'}, the forms each holds per "
                f"{evidence.get('forms_from') or 'the data'} ({evidence['dictionary']})")
    return None


def codebook_summary(session: Session) -> dict[str, Any] | None:
    """report.json's ``codebook``: the codebook the diagnosis read and the decisions that rested
    on it (None when no codebook was read)."""
    book = session.diagnosis.get("codebook") or {}
    given = session.inputs.dictionary
    if not book and not given:
        return None
    rested = []
    for d in session.decisions:
        citation = codebook_citation(d.evidence)
        if citation is not None and d.decided:
            rested.append({"decision": d.id, "step_id": d.step_id, "gate": d.gate, "columns": list(d.columns),
                           "choice": d.choice, "by": d.by, "citation": citation})
    return {"source": book.get("source") or given, "format": book.get("format"),
            "events": session.inputs.events, "decisions": rested}


__all__ = ["codebook_citation", "codebook_summary"]
