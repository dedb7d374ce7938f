"""The co-pilot in Jupyter AI's chat: the ``DCPilot`` persona (jupyter-ai 3, ``jupyter_ai.personas``).

A chat message reaches the co-pilot session of a notebook — the notebook attached to the
message, else the only live session, else the persona asks which. It understands three things
and reads everything else as an instruction for the session:

- ``approve`` / ``approve <decision>`` / ``choose <option> [for <decision>]`` / ``reject``:
  answers a pending decision through :meth:`HostedSession.decide`, the same path (and the same
  gate checks) as the panel's decision endpoint;
- ``why did you drop `x`?``: answers from the decision log — who decided, on what evidence;
- ``status`` / ``plan``: the plan and the pending decisions (every reply ends with them).

Intents are recognised by rules, never by an LLM: an answer to a gate must mean exactly what
it says. The LLM (the engine's configuration, :mod:`jupyter_dcpilot.config`) acts on free-text
instructions through the session's Claude planner, which turns them into gated custom steps.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from jupyter_ai_persona_manager import BasePersona, PersonaDefaults
from jupyterlab_chat.models import Message

from .config import load_llm_config
from .engine.notebook import evidence_text, md_text
from .engine.session import Decision, Session
from .server_sessions import HostedSession, SessionRegistry

AVATAR = Path(__file__).with_name("jupyter_ai_persona.svg")
WHO = {"user": "the analyst", "policy": "the approval policy", None: "nobody yet"}

APPROVE = re.compile(r"^(?:approve|accept|go ahead|confirm)\b[\s,:]*(?P<rest>.*)$", re.I | re.S)
CHOOSE = re.compile(r"^(?:choose|pick|select|use)\s+(?:option\s+)?[`'\"]?(?P<option>[\w-]+)[`'\"]?"
                    r"(?:\s+(?:for|on|in)\s+(?P<rest>.*))?$", re.I | re.S)
REJECT = re.compile(r"^(?:reject|skip)\b[\s,:]*(?P<rest>.*)$", re.I | re.S)
WHY = re.compile(r"\bwhy\b", re.I)
STATUS = re.compile(r"^(?:status|plan|summary|help|what(?:'s| is) (?:the )?(?:plan|status))\W*$", re.I)
MENTION = re.compile(r"^\s*@\S+\s*")
QUOTED = re.compile(r"[`'\"]([^`'\"]+)[`'\"]")


class DCPilotPersona(BasePersona):
    """The co-pilot's chat persona; see the module docstring."""

    @property
    def defaults(self) -> PersonaDefaults:
        llm = load_llm_config()
        return PersonaDefaults(
            name="DCPilot",
            description="The data-centric co-pilot: answers its decisions, explains them, "
                        "takes instructions for the notebook's co-pilot session.",
            avatar_path=str(AVATAR),
            system_prompt="You relay a data scientist's chat messages to the data-centric co-pilot "
                          "session of their notebook.",
            slash_commands=set(),
            model_uid=f"anthropic:{llm.model}" if llm.available else None,
        )

    async def process_message(self, message: Message) -> None:
        self.send_message(await self.reply_to(message))

    async def reply_to(self, message: Message) -> str:
        """The reply to one chat message (acting on the session as it says)."""
        text = MENTION.sub("", message.body or "").strip()
        hosted, problem = self.session_for(message)
        if hosted is None:
            return problem or "No co-pilot session."
        return respond(hosted, text) + "\n\n" + summary_markdown(hosted.session)

    # -- which session --------------------------------------------------------------------
    def registry(self) -> SessionRegistry:
        """The server's co-pilot sessions, found through the persona manager's server app."""
        node: Any = self.parent
        while node is not None:
            app = getattr(node, "serverapp", None) or node
            settings = getattr(getattr(app, "web_app", None), "settings", None)
            if isinstance(settings, dict) and "dcpilot_sessions" in settings:
                return settings["dcpilot_sessions"]
            node = getattr(node, "parent", None)
        raise LookupError("the jupyter_dcpilot server extension is not loaded in this server")

    def attached_notebooks(self, message: Message) -> list[str]:
        """Paths of the notebooks attached to the message (server-root relative)."""
        if not message.attachments:
            return []
        attachments = self.chat.get_attachments()
        paths = []
        for attachment_id in message.attachments:
            value = getattr(attachments.get(attachment_id), "value", None)
            if isinstance(value, str) and value.endswith(".ipynb"):
                paths.append(value.lstrip("/"))
        return paths

    def session_for(self, message: Message) -> tuple[HostedSession | None, str | None]:
        """The message's notebook session, or why there is none (a question back to the user)."""
        registry = self.registry()
        attached = self.attached_notebooks(message)
        for path in attached:
            found = registry.sessions(path)
            if found:
                return found[0], None
        if attached:
            return None, (f"No co-pilot session runs on {', '.join(f'`{p}`' for p in attached)}: start "
                          "one from the notebook's Data co-pilot panel, then ask me again.")
        live = registry.sessions()
        if len(live) == 1:
            return live[0], None
        if not live:
            return None, ("No co-pilot session is running. Open a notebook, start the co-pilot from "
                          "its Data co-pilot panel, then ask me again.")
        names = ", ".join(f"`{h.path}`" for h in live)
        return None, f"Which notebook do you mean? Attach it to your message. Co-pilot sessions run on {names}."


# -- what a message asks --------------------------------------------------------------------
def respond(hosted: HostedSession, text: str) -> str:
    """Act on one message and say what was done (the summary is added by the caller)."""
    session = hosted.session
    if not text or STATUS.match(text):
        return (f"Co-pilot on **{session.frame}** in `{hosted.path}`. Ask me ``why did you drop `x`?``, "
                "say `approve`, `choose <option>` or `reject`, or write an instruction.")
    if WHY.search(text):
        return why_markdown(session, text)
    for pattern, kind in ((CHOOSE, "choose"), (REJECT, "reject"), (APPROVE, "approve")):
        match = pattern.match(text)
        if match:
            return answer(hosted, kind, match.groupdict(), text)
    session.instruct(text)
    if hosted.coordinator.planner.name == "claude":
        if session.state in ("finished", "idle", "failed"):
            hosted.resume()
        return "Noted as an instruction: the planner turns it into a step you approve before it runs."
    return ("Noted as an instruction in the session's log. This session plans with the rule planner, "
            "which does not act on free text; start the co-pilot with the Claude planner for custom steps.")


def answer(hosted: HostedSession, kind: str, parts: dict[str, Any], text: str) -> str:
    """Answer a pending decision the way the panel does (same checks, same resume)."""
    session = hosted.session
    rest = (parts.get("rest") or "").strip()
    option = parts.get("option")
    decision, problem = find_decision(session, rest, option)
    if decision is None:
        return problem or "There is no decision waiting for an answer."
    if kind == "approve":
        choice = decision.recommended
        if choice is None:
            return f"Decision `{decision.id}` has no recommended option; say `choose <option>`."
    elif kind == "reject":
        choice = "skip"
    else:
        choice = option_id(decision, option or "")
        if choice is None:
            ids = ", ".join(f"`{o['id']}`" for o in decision.options)
            return f"`{option}` is not an option of decision `{decision.id}`; its options are {ids}."
    try:
        hosted.decide(decision.id, choice, rationale=f"from the chat: {text}")
    except ValueError as error:
        return f"Could not record that: {error}."
    label = (decision.option(choice) or {}).get("label") or choice
    return f"Recorded **{md_text(label)}** (`{choice}`) for decision `{decision.id}` ({decision.gate}); the co-pilot carries on."


def option_id(decision: Decision, wanted: str) -> str | None:
    """The option id a word names (its id or its label, any case); "skip" always."""
    wanted = wanted.strip().lower()
    for o in decision.options:
        if wanted in (str(o.get("id", "")).lower(), str(o.get("label", "")).lower()):
            return o["id"]
    return "skip" if wanted in ("skip", "reject") else None


def names_of(decision: Decision) -> set[str]:
    """What a message may call a decision: its id, or the short ``d<n>`` before the suffix."""
    return {decision.id.lower(), decision.id.split("-")[0].lower()}


def find_decision(session: Session, rest: str, option: str | None = None) -> tuple[Decision | None, str | None]:
    """The open decision a message means: named by id, step, column or gate; else the one waiting."""
    words = {w.lower() for w in re.findall(r"[\w.-]+", rest)} | {q.lower() for q in QUOTED.findall(rest)}
    answered = [d for d in session.decisions if d.decided and names_of(d) & words]
    if answered:
        d = answered[0]
        return None, f"Decision `{d.id}` was already answered: `{d.choice}` by {WHO.get(d.by, d.by)}."
    open_ = session.open_decisions()
    if not open_:
        return None, "No decision is waiting for an answer."
    if words:
        named = [d for d in open_ if (names_of(d) | {d.step_id.lower(), d.gate.lower()}) & words
                 or {c.lower() for c in d.columns} & words]
        if len(named) == 1:
            return named[0], None
        if not named:
            return None, f"No open decision matches “{rest}”."
        open_ = named
    if option is not None:
        fitting = [d for d in open_ if option_id(d, option) is not None and option_id(d, option) != "skip"]
        open_ = fitting or open_
    waiting = {st.decision_id for st in session.plan if st.status == "awaiting_decision"}
    current = [d for d in open_ if d.id in waiting]
    if len(current) == 1 or len(open_) == 1:
        return (current or open_)[0], None
    ids = ", ".join(f"`{d.id}` ({d.gate}: {', '.join(d.columns)})" for d in open_)
    return None, f"Several decisions are open — which one? {ids}"


# -- the decision log ------------------------------------------------------------------------
def known_columns(session: Session) -> set[str]:
    columns = set(session.variables.get("columns") or [])
    for d in session.decisions:
        columns |= set(d.columns)
    for st in session.plan:
        columns |= set(st.columns)
    for f in session.findings:
        columns |= set(f.get("columns") or [])
    return columns


def why_markdown(session: Session, text: str) -> str:
    """Who decided what about the columns a "why …?" names, and on what evidence."""
    columns = known_columns(session)
    asked = [q for q in QUOTED.findall(text) if q in columns]
    asked += [w for w in re.findall(r"[\w.-]+", text) if w in columns and w not in asked]
    if not asked:
        return "Which column do you mean? Name it in backticks, e.g. why did you drop `age`?"
    lines = []
    for column in asked:
        found = [decision_line(session, d) for d in session.decisions if column in d.columns]
        found += [f"- **{md_text(st.title)}** ({st.status}) needed no decision (no gate): {md_text(st.reason)}"
                  for st in session.plan if column in st.columns and not st.decision_id
                  and st.status in ("done", "skipped", "failed")]
        lines += found or [f"- Nothing has been decided about `{column}` yet."]
    return "\n".join(lines)


def decision_line(session: Session, d: Decision) -> str:
    title = next((st.title for st in session.plan if st.id == d.step_id), d.step_id)
    evidence = evidence_text(d.evidence)
    basis = f" Evidence: {evidence}." if evidence else ""
    if d.decided:
        label = (d.option() or {}).get("label") or d.choice
        why = f" Rationale: {md_text(d.rationale)}." if d.rationale else ""
        line = (f"- `{d.id}` **{md_text(title)}** ({d.gate}): {md_text(d.question)} — "
                f"**{md_text(label)}** was chosen by {WHO.get(d.by, d.by)} at {d.at}"
                + (" (the recommended option)" if d.choice == d.recommended else "") + f".{why}{basis}")
    else:
        line = f"- `{d.id}` **{md_text(title)}** ({d.gate}): {md_text(d.question)} — still open.{basis}"
    for old in d.history:
        line += (f" Earlier answer `{old.get('choice')}` by {WHO.get(old.get('by'), old.get('by'))} "
                 f"was undone ({md_text(old.get('undone', ''))}).")
    return line


def summary_markdown(session: Session) -> str:
    """The plan with step statuses, then the decisions waiting for an answer."""
    counts: dict[str, int] = {}
    for st in session.plan:
        counts[st.status] = counts.get(st.status, 0) + 1
    lines = [f"**Plan** ({session.state}): " + (", ".join(f"{n} {k}" for k, n in counts.items()) or "not made yet")]
    upcoming = [st for st in session.plan if st.status in ("running", "awaiting_decision", "proposed")][:6]
    lines += [f"- {st.id} {md_text(st.title)} — {st.status}" for st in upcoming]
    open_ = session.open_decisions()
    if open_:
        lines += ["", "**Waiting for you:**"]
        for d in open_:
            options = ", ".join(f"`{o['id']}`" + (" (recommended)" if o["id"] == d.recommended else "")
                                for o in d.options)
            lines.append(f"- `{d.id}` ({d.gate}{': ' + ', '.join(d.columns) if d.columns else ''}): "
                         f"{md_text(d.question)} Options: {options}.")
        lines.append("Say `approve` (the recommended option), `choose <option>` or `reject`.")
    return "\n".join(lines)
