"""The column whose groups every step keeps together: the split, the folds, and each step that
takes groups (label issues out of fold, the what-if estimate of its options).

It is the entity id while it is a column, else a column grouping subjects (a matched set, a
site) that the expert chose to group the split by. One place, so that no step keeps a group
together that another splits (a matched set's case in one fold and its controls in another
would let the label model learn the set).
"""

from __future__ import annotations

from kernel_tools.vocabulary import Gate

from .session import Session


def chosen_groups(session: Session, columns: list[str]) -> str | None:
    """A column grouping subjects that the expert chose to group the split and the folds by,
    while it is still one of ``columns`` (any, when ``columns`` is empty); None when none was."""
    chosen = [d.columns[0] for d in session.decisions
              if d.decided and d.gate == Gate.IDENTIFIERS and d.choice == "group" and d.columns]
    return next((c for c in reversed(chosen) if not columns or c in columns), None)


def step_groups(session: Session, columns: list[str]) -> str | None:
    """The entity id while it is one of ``columns``, else :func:`chosen_groups`."""
    entity = session.task.id
    if entity and (not columns or entity in columns):
        return entity
    return chosen_groups(session, columns)
