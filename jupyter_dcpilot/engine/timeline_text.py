"""The column timeline card in words: what ``%dctimeline`` shows (Markdown in a kernel without
widgets, HTML in its widget card), the same groups, evidence and proposals the panel's card shows.

Each group in time order — baseline, during follow-up, at or after the outcome, unknown — with its
columns; a column with evidence lists it (what agrees with its place first, then what speaks
against it), a planner's proposal marked as that planner's (Claude's: it moves nothing), and the
columns to confirm marked. Baseline columns nothing speaks about are one line.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field

from kernel_tools.inferences import GROUPS, Placement, TimelineColumn
from kernel_tools.plurals import counted
from kernel_tools.vocabulary import Confidence, EvidenceSource, TimelineGroup

from .hosts import agent_name, by_the_user, by_whom
from .notebook import md_text
from .structure import Structure, TimelineMove

TITLES = {TimelineGroup.BASELINE: ("Baseline", "known when a prediction is made"),
          TimelineGroup.DURING_FOLLOW_UP: ("During follow-up", "recorded after the prediction time"),
          TimelineGroup.AT_OR_AFTER_OUTCOME: ("At or after the outcome", "recorded with or because of it"),
          TimelineGroup.UNKNOWN: ("Unknown", "the evidence disagrees or is too weak to place it")}
SOURCE_WORDS = {EvidenceSource.VALUES: "the data", EvidenceSource.STRUCTURE: "the table's structure",
                EvidenceSource.NAMES: "its name", EvidenceSource.DICTIONARY: "the codebook",
                EvidenceSource.PROPOSAL: "a proposal"}
USAGE = ("Move columns: `%dctimeline move COL [COL ...] to baseline|follow-up|outcome|unknown [--why \"...\"]`; "
         "confirm where they are: `%dctimeline confirm [COL ...]`.")
# how a proposal is taken, in the words of the host that shows it (a group as a person says it)
SAID: dict[str, str] = {TimelineGroup.DURING_FOLLOW_UP: "follow-up", TimelineGroup.AT_OR_AFTER_OUTCOME: "outcome"}
MAGIC_TAKE = "'%dctimeline move {column} to {group}'"
CHAT_TAKE = "``put `{column}` in {group}``"
CHAT_USAGE = ("Place a column, or confirm it where it is: ``put `x` in follow-up`` (or baseline, outcome, "
              "unknown), a reason after a colon (``put `x` in baseline: drawn at admission``). "
              "`timeline` shows this card again.")


def group_title(group: str) -> str:
    return TITLES[TimelineGroup(group)][0]


def to_confirm(structure: Structure) -> list[str]:
    """The columns of the card whose place a person has not given and no rule is sure of."""
    card = structure.card()
    return [] if card is None else [c.column for c in card.unsettled()]


@dataclass
class ColumnView:
    column: str
    mark: str  # "⚠ to confirm", "moved by you", "confirmed by agent X", or ""
    evidence: list[str] = field(default_factory=list)  # in words, what agrees first
    proposal: str | None = None  # a planner's proposal, in words


@dataclass
class GroupView:
    group: str
    columns: list[ColumnView]
    quiet: list[str]  # baseline columns nothing speaks about


def _source(p: Placement) -> str:
    return SOURCE_WORDS.get(EvidenceSource(p.source), p.source)


def proposal_words(entry: TimelineColumn, take: str = MAGIC_TAKE) -> str | None:
    """A planner's proposal for the column, in words, with how to take it (``take``: the host's
    words, formatted with the column and the group); None: there is none."""
    proposed = [p for p in entry.evidence if p.source == EvidenceSource.PROPOSAL]
    if not proposed:
        return None
    p = proposed[-1]
    reason = p.reason.split(": ", 1)[-1]
    return (f"{p.numbers.get('by') or 'the planner'} proposes {group_title(p.group).lower()}: {reason} "
            f"(a proposal, nothing moved: {take.format(column=entry.column, group=SAID.get(p.group, p.group))} takes it)")


def by_you(move: TimelineMove) -> str:
    """Who placed a column, said to the person: "by you in the panel", "by agent X"."""
    return by_whom(move.via) if agent_name(move.via) is not None else by_the_user(move.via, "you")


def moved_words(move: TimelineMove) -> tuple[str, str]:
    """A person's move as the card shows it: the mark ("moved by you", "confirmed by you") and
    the evidence line that says from where, through which host, and why."""
    verb = "confirmed" if move.before == move.group else "moved"
    mark = f"{verb} {by_whom(move.via) if agent_name(move.via) is not None else 'by you'}"
    line = (f"confirmed here {by_you(move)}" if verb == "confirmed" else
            f"moved here from {group_title(move.before).lower()} {by_you(move)}" if move.before else
            f"moved here {by_you(move)}")
    return mark, line + (f": {move.rationale}" if move.rationale else "")


def column_view(entry: TimelineColumn, moves: dict[str, TimelineMove], take: str = MAGIC_TAKE) -> ColumnView:
    """One column as the card shows it; ``moves``: each column's last move by a person."""
    move = moves.get(entry.column) if entry.confidence == Confidence.GIVEN else None
    said = moved_words(move) if move is not None else None
    mark = said[0] if said else "⚠ to confirm" if entry.confidence == Confidence.LOW else ""
    ruled = [p for p in entry.evidence if p.source != EvidenceSource.PROPOSAL]
    words = [said[1]] if said else []
    words += [f"{p.reason} ({_source(p)})" for p in ruled if p.group == entry.group]
    words += [f"but {group_title(p.group).lower()}: {p.reason} ({_source(p)})" for p in ruled if p.group != entry.group]
    proposal = proposal_words(entry, take) if entry.confidence != Confidence.GIVEN else None  # a person said since
    return ColumnView(entry.column, mark, words, proposal)


def card_view(structure: Structure, take: str = MAGIC_TAKE) -> tuple[str, list[GroupView]] | None:
    """The card's head line and its groups in time order (None before a diagnosis with a target)."""
    card = structure.card()
    if card is None:
        return None
    unsure = to_confirm(structure)
    moves = {m.column: m for m in structure.moves}  # the last one counts
    head = (f"Column timeline — {counted(len(card.columns), 'column')}"
            + (f", predictions at {card.index}" if card.index else "")
            + (f" · {len(unsure)} to confirm" if unsure else " · nothing to confirm"))
    groups = []
    for group in GROUPS:
        members = [e for e in card.columns.values() if e.group == group]
        quiet = [e.column for e in members if group == TimelineGroup.BASELINE and not e.evidence
                 and e.confidence == Confidence.HIGH]
        groups.append(GroupView(group, [column_view(e, moves, take) for e in members if e.column not in quiet], quiet))
    return head, groups


def proposals_markdown(structure: Structure, columns: list[str], take: str = CHAT_TAKE) -> str:
    """A planner's proposals for ``columns`` as a list: where each column is now and what is
    proposed, as proposals (nothing moved); "" when none of them has one (still open)."""
    card = structure.card()
    lines = []
    for column in columns:
        entry = card.columns.get(column) if card is not None else None
        words = proposal_words(entry, take) if entry is not None and entry.confidence != Confidence.GIVEN else None
        if entry is not None and words:
            now = group_title(entry.group).lower() + (", to confirm" if entry.confidence == Confidence.LOW else "")
            lines.append(f"- `{md_text(column)}` (now {now}): {md_text(words)}")
    return "\n".join(lines)


NONE_YET = "No column timeline yet: the data was not diagnosed with a target (`%dcplan df --target y`)."


def _quiet(names: list[str]) -> str:
    return f"nothing places {'it' if len(names) == 1 else 'them'} after the prediction time"


def timeline_markdown(structure: Structure, usage: str = USAGE, take: str = MAGIC_TAKE) -> str:
    """The card as Markdown (``usage`` and ``take``: how the host's user moves a column and takes
    a proposal: the magics' words by default, the chat's :data:`CHAT_USAGE` and :data:`CHAT_TAKE`)."""
    view = card_view(structure, take)
    if view is None:
        return NONE_YET
    head, groups = view
    lines = [f"**{md_text(head)}**"]
    for g in groups:
        title, meaning = TITLES[TimelineGroup(g.group)]
        lines += ["", f"**{title}** ({len(g.columns) + len(g.quiet)}) — {meaning}"]
        for c in g.columns:
            lines.append(f"- `{md_text(c.column)}`" + (f" · {c.mark}" if c.mark else ""))
            lines += [f"  - {md_text(e)}" for e in c.evidence]
            if c.proposal:
                lines.append(f"  - *{md_text(c.proposal)}*")
        if g.quiet:
            lines.append(f"- {', '.join(f'`{md_text(c)}`' for c in g.quiet)}: {_quiet(g.quiet)}")
    return "\n".join([*lines, "", usage])


def timeline_html(structure: Structure) -> str:
    """The card as HTML (the widget card's body)."""
    esc = html.escape
    view = card_view(structure)
    if view is None:
        return f"<i>{esc(NONE_YET)}</i>"
    head, groups = view
    parts = [f'<div class="dcpilot-timeline"><b>{esc(head)}</b>']
    for g in groups:
        title, meaning = TITLES[TimelineGroup(g.group)]
        parts.append(f'<div data-group="{esc(g.group)}" style="margin-top:6px"><b>{esc(title)}</b> '
                     f"({len(g.columns) + len(g.quiet)}) <small>{esc(meaning)}</small><ul style=\"margin:2px 0\">")
        for c in g.columns:
            items = "".join(f"<li>{esc(e)}</li>" for e in c.evidence)
            if c.proposal:
                items += f'<li class="dcpilot-proposal"><i>{esc(c.proposal)}</i></li>'
            parts.append(f'<li data-column="{esc(c.column)}"><code>{esc(c.column)}</code>'
                         + (f" · {esc(c.mark)}" if c.mark else "") + (f"<ul>{items}</ul>" if items else "") + "</li>")
        if g.quiet:
            parts.append(f"<li>{', '.join(f'<code>{esc(c)}</code>' for c in g.quiet)}: {esc(_quiet(g.quiet))}</li>")
        parts.append("</ul></div>")
    return "".join(parts) + "</div>"


__all__ = ["CHAT_TAKE", "CHAT_USAGE", "MAGIC_TAKE", "TITLES", "USAGE", "card_view", "proposals_markdown", "group_title", "timeline_html", "timeline_markdown", "to_confirm"]
