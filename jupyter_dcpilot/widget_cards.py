"""The decision cards the magics draw (ipywidgets: JupyterLab, Notebook 7, VS Code).

A card shows what the panel's card shows: the question, its evidence, an option button each
(the recommended one marked), a rationale box, and what each option does to the model (the
impact chart, drawn in HTML with the theme's CSS variables so light and dark themes both read).
A card whose question was answered — here, in the panel or anywhere — takes no second answer: its
buttons are disabled and it says who answered and when; one whose step no longer waits says so.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Any

from kernel_tools.vocabulary import EventType, metric_words

from .engine.session import Decision
from .engine.wire import DecisionOption, Impact

# what a session says that moves no column: the timeline card is not drawn again for these
QUIET_EVENTS = frozenset({EventType.PROGRESS, EventType.ACTIVITY, EventType.LLM_USAGE, EventType.IMPACT,
                          EventType.TRANSCRIPT, EventType.CELL})


def _esc(text: Any) -> str:
    return html.escape(str(text))


def _scored(option: DecisionOption) -> Impact | None:
    impact = option.impact
    mean = impact.get("mean") if impact else None
    return impact if isinstance(mean, (int, float)) else None


def _axis(values: list[Impact], metric: str) -> tuple[float, float]:
    """The bars' axis: it spans the estimates and their spread, as the panel's does."""
    lows = [float(i["mean"] or 0) - float(i.get("sd") or 0) for i in values]
    highs = [float(i["mean"] or 0) + float(i.get("sd") or 0) for i in values]
    pad = max(0.01, (max(highs) - min(lows)) * 0.1)
    lo, hi = min(lows) - pad, max(highs) + pad
    if metric != "r2":  # AUROC and the C-index live in [0, 1]
        lo, hi = max(0.0, lo), min(1.0, hi)
    return lo, hi


_CHIP = ("display:inline-block;padding:0 5px;margin-left:4px;border-radius:8px;font-size:0.85em;"
         "border:1px solid {color};color:{color}")


def _chip(text: str, color: str) -> str:
    return f'<span style="{_CHIP.format(color=color)}">{_esc(text)}</span>'


def impact_html(decision: Decision) -> str:
    """What each option does to the model, as HTML: one row per option (its label whole, wrapped),
    its score ± spread and a bar on a shared axis; the recommended option marked, "best valid
    score" only on the best option without a flag, flagged ones "not valid" with their flags; the
    metric in words. Empty before an estimate was made."""
    summary = decision.impact
    if not summary:
        return ""
    unchanged = any(o.id != "skip" and not o.action for o in decision.options)  # "skip" = "keep"
    options = [o for o in decision.options if o.id != "skip" or not unchanged]
    values = [i for i in (_scored(o) for o in options) if i is not None]
    metric = next((o.impact["metric"] for o in options if o.impact and o.impact.get("metric")), "")
    best = summary.get("best")
    chosen = decision.option(best) if best else None
    if chosen is not None and chosen.impact and chosen.impact.get("flags"):
        best = None  # an older estimate's "best" may be a flagged option: never coloured as best
    lo, hi = _axis(values, metric) if values else (0.0, 1.0)
    rows = [_impact_row(o, decision, best, lo, hi, summary.get("status") == "running") for o in options]
    title = "What each option does to the model" + (
        f" ({metric_words(metric)}, {summary.get('perturbations') or 5} perturbations)" if metric else "")
    state = {"running": " — estimating…", "cancelled": " — stopped", "failed": " — could not be estimated"}
    note = summary.get("note") or ""
    return ('<div class="dcpilot-impact" style="margin:6px 0;padding:4px 8px;max-width:42em;'
            'border:1px solid var(--jp-border-color2, #ccc);border-radius:2px">'
            f'<div style="font-weight:600;font-size:0.9em">{_esc(title)}{state.get(summary.get("status", ""), "")}</div>'
            + "".join(rows)
            + (f'<div style="display:flex;justify-content:space-between;font-size:0.85em;opacity:0.75">'
               f'<span>{lo:.3g}</span><span>{hi:.3g}</span></div>' if values else "")
            + (f'<div style="font-size:0.85em;opacity:0.8">'
               f'{"These options barely differ: " if summary.get("barely_differ") else ""}{_esc(note)}</div>'
               if note else "")
            + (f'<div style="color:var(--jp-error-color1, #d32f2f)">{_esc(summary["error"])}</div>'
               if summary.get("error") else "")
            + "</div>")


def _impact_row(option: DecisionOption, decision: Decision, best: str | None, lo: float, hi: float,
                running: bool) -> str:
    impact = _scored(option)
    flags = (option.impact.get("flags") if option.impact else None) or []
    chips = ((_chip("recommended", "var(--jp-brand-color1, #1976d2)") if option.id == decision.recommended else "")
             + (_chip("best valid score", "var(--jp-success-color1, #388e3c)") if option.id == best else "")
             + (_chip("⚠ not valid", "var(--jp-warn-color0, #e65100)") if flags else ""))
    if impact is None:
        error = option.impact.get("error") if option.impact else None
        score = "could not be estimated" if error else ("…" if running else "not estimated")
        bar = ""
    else:
        mean = float(impact["mean"] or 0)
        sd = impact.get("sd")
        score = f"{mean:.3f}" + (f" ± {sd:.3f}" if isinstance(sd, (int, float)) else "")
        width = max(0.5, 100 * (min(max(mean, lo), hi) - lo) / ((hi - lo) or 1))
        color = ("var(--jp-warn-color2, #ffb74d)" if flags else
                 "var(--jp-success-color1, #388e3c)" if option.id == best else "var(--jp-brand-color2, #64b5f6)")
        bar = (f'<div style="position:relative;height:9px;margin-top:1px;border-radius:2px;'
               f'background:var(--jp-layout-color2, #eee)"><div style="position:absolute;left:0;top:0;bottom:0;'
               f'width:{width:.1f}%;border-radius:2px;background:{color}"></div></div>')
    flagged = "".join(f'<div style="font-size:0.85em;color:var(--jp-warn-color0, #e65100)">⚠ {_esc(f)}</div>'
                      for f in flags)
    return (f'<div class="dcpilot-impact-row" data-option="{_esc(option.id)}" style="margin:4px 0">'
            f'<div style="display:flex;flex-wrap:wrap;align-items:baseline;gap:2px 4px;overflow-wrap:anywhere">'
            f'<span>{_esc(option.label or option.id)}</span>{chips}'
            f'<span style="margin-left:auto;font-size:0.9em;white-space:nowrap">{_esc(score)}</span></div>'
            f"{bar}{flagged}</div>")


def closed_text(decision: Decision, still_open: bool = False) -> str:
    """Why a card takes no answer, in words: who answered it and when; that its question waits its
    turn (another is asked first, in plan order); or that its step no longer waits (undone,
    skipped or replaced)."""
    if decision.decided:
        when = (decision.at or "").replace("T", " ")[:16]
        return (f"Answered: <b>{_esc(decision.chosen_label)}</b>, by {_esc(decision.decided_by)}"
                + (f" at {_esc(when)} UTC" if when else "") + ". This card takes no other answer.")
    if still_open:
        return ("Not asked now: another question comes first in the plan. "
                "The co-pilot's latest card (<code>%dcstatus</code>) asks this one when its turn comes.")
    return "No longer asked: its step is not waiting to run any more (undone, skipped or replaced)."


class DecisionCard:
    """One open decision as widgets: question, evidence, an option button each, a rationale box,
    the impact chart. Clicking an option calls ``on_choose(decision_id, option_id, rationale)``."""

    def __init__(self, decision: Decision, title: str, on_choose: Callable[[str, str, str], None]) -> None:
        import ipywidgets as w

        self.decision = decision
        self.on_choose = on_choose
        self.rationale = w.Text(placeholder="why (optional, goes into the decision log)",
                                layout=w.Layout(width="60%"))
        self.buttons: dict[str, Any] = {}
        for o in decision.options:
            recommended = o.id == decision.recommended
            label = o.label or o.id
            button = w.Button(description=f"★ {label} (recommended)" if recommended else label,
                              button_style="success" if recommended else "",
                              tooltip=f"{o.description} — risk: {o.risk}",
                              layout=w.Layout(width="auto", max_width="100%"))
            button.on_click(lambda _b, option=o.id: self.choose(option))
            self.buttons[o.id] = button
        evidence = "; ".join(decision.evidence_lines)
        self.header = w.HTML(
            f"<b>Decision ({_esc(decision.gate)}) — {_esc(title)}</b><br>{_esc(decision.question)}"
            + (f"<br><small>Evidence: {_esc(evidence)}</small>" if evidence else ""))
        self.impact = w.HTML(impact_html(decision))
        self.status = w.HTML()  # why it takes no answer, once closed
        self.widget = w.VBox([self.header, w.HBox(list(self.buttons.values()), layout=w.Layout(flex_flow="row wrap")),
                              self.impact, self.rationale, self.status])

    def choose(self, option_id: str) -> None:
        for button in self.buttons.values():
            button.disabled = True
        self.on_choose(self.decision.id, option_id, self.rationale.value)

    def show_impact(self) -> None:
        """Draw the impact chart again (an estimate arrived)."""
        self.impact.value = impact_html(self.decision)

    def close(self, still_open: bool = False) -> None:
        """No more answers from this card: its question was answered, asks nothing any more, or
        (``still_open``) is asked by a later card when its turn comes."""
        for button in self.buttons.values():
            button.disabled = True
        self.rationale.disabled = True
        self.status.value = f"<i>{closed_text(self.decision, still_open)}</i>"

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)



class TimelineCard:
    """The column timeline as widgets (``%dctimeline``): the groups with their evidence and
    proposals (:func:`.engine.timeline_text.timeline_html`), a column picker (the columns to
    confirm first), a group picker, "Move" and "Confirm all". ``on_move(columns, group)`` and
    ``on_confirm()`` record the person's word and return what to say; the card is drawn again.
    It follows the session as the panel does: a column moved anywhere else (another card,
    ``%dctimeline move``, a decisions file, Claude's proposals, an undo) is drawn where it is now,
    with who moved it. Where no frontend draws widgets (a terminal), the card is its text."""

    def __init__(self, session: Any, on_move: Callable[[list[str], str], str],
                 on_confirm: Callable[[], str]) -> None:
        import ipywidgets as w

        from kernel_tools.inferences import GROUPS

        from .engine.timeline_text import group_title

        self.session, self.on_move, self.on_confirm = session, on_move, on_confirm
        self.body = w.HTML()
        self.columns = w.SelectMultiple(description="columns", rows=5, layout=w.Layout(width="45%"))
        self.group = w.Dropdown(options=[(group_title(g), g) for g in GROUPS], description="move to",
                                layout=w.Layout(width="auto"))
        self.move = w.Button(description="Move", tooltip="Put the selected columns in this group (you confirm them)")
        self.confirm = w.Button(description="Confirm all", button_style="success",
                                tooltip="Confirm every column to confirm where it is now")
        self.status = w.HTML()
        self.order: list[str] = []  # the picker's columns, each at the index it first took (see redraw)
        self.move.on_click(lambda _b: self._move())
        self.confirm.on_click(lambda _b: self._act(self.on_confirm))
        controls = w.HBox([self.columns, w.VBox([self.group, w.HBox([self.move, self.confirm])])])
        self.widget = w.VBox([self.body, controls, self.status])
        self.redraw()
        self.unsubscribe = session.subscribe(self._on_event)

    def _on_event(self, event: dict[str, Any]) -> None:
        """Draw the card again after a change that can move a column (from the engine's thread:
        a widget's state goes out on iopub, safe from any thread); a step's progress cannot."""
        if event["type"] not in QUIET_EVENTS:
            self.redraw()

    def redraw(self) -> None:
        """The card as the session has it now (the session's structure: an undo may replace it);
        what the person selected stays selected while it is on the card."""
        from .engine.timeline_text import timeline_html, to_confirm

        structure = self.session.structure
        card = structure.card()
        unsure = to_confirm(structure)
        body = timeline_html(structure)
        if body != self.body.value:
            self.body.value = body
        on_card = card.columns if card is not None else {}
        # the frontend sends a pick as the index of what it shows: an index keeps naming the same
        # column (the columns to confirm first as first drawn, later ones after them; a column gone
        # stays, said so), or a pick sent while the card was drawn again would name another column
        self.order += [c for c in (*unsure, *on_card) if c not in self.order]
        options = tuple((c + (" · ⚠ to confirm" if c in unsure else "" if c in on_card else " · not on the timeline"), c)
                        for c in self.order)
        if options != tuple(self.columns.options):
            selected = tuple(self.columns.value)  # a new list of options unselects them all
            self.columns.options = options
            self.columns.value = selected
        self.confirm.disabled = not unsure

    def close(self) -> None:
        """Stop following the session and take the card's widgets down."""
        self.unsubscribe()
        self.widget.close()

    def _move(self) -> None:
        """Move the columns picked when Move was clicked: it may wait for a run on the kernel's main
        thread (:func:`.kernel_thread.on_kernel_thread`); a pick made meanwhile is the next Move's."""
        from .engine.timeline_text import group_title

        columns, group = list(self.columns.value), self.group.value
        if columns:  # said at once: the move may wait for a run to end
            self.status.value = (f"<i>Moving {_esc(', '.join(repr(c) for c in columns))} to "
                                 f"{_esc(group_title(group).lower())}…</i>")
        self._act(lambda: self.on_move(columns, group))

    def _act(self, action: Callable[[], str]) -> None:
        try:
            said = action()
        except (KeyError, ValueError) as error:  # a column or a place that is not one: nothing moved
            said = f"Not recorded: {error.args[0] if isinstance(error, KeyError) else error}"
        self.redraw()
        self.status.value = f"<i>{_esc(said)}</i>"

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        from .engine.timeline_text import timeline_markdown

        return {**self.widget._repr_mimebundle_(**kwargs), "text/plain": timeline_markdown(self.session.structure)}
