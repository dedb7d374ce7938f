"""The co-pilot in Jupyter AI's chat: the ``DCPilot`` persona (jupyter-ai 3, ``jupyter_ai.personas``).

A chat message can start the co-pilot: ``check `visits` for `death` with time `futime```
(add ``using `codebook.csv``` for the study's codebook, a file next to the notebook, and ``events
`mapping.csv``` for a REDCap project's instrument–event mapping; ``start``, ``analyse``,
``diagnose``, ``prepare`` and ``clean`` work too; ``start over`` replaces a live session; on a
notebook not attached to the message, a start that would end a session asks for a ``yes`` first,
naming it) starts a session on that DataFrame in the notebook's kernel, through the same
gates as the panel's start. The notebook is the one attached to the message, the one named
(``in `study.ipynb```), else the only notebook with a running kernel; the DataFrame is the one
named, else the only one in that kernel; when either is ambiguous the persona asks. Every
question of a session started here is posted to the chat, and can be answered here or in the
notebook's panel alike.

Any other message reaches the co-pilot session of a notebook — the notebook attached to the
message, else the only live session, else the persona asks which. It understands four things
and reads everything else as an instruction for the session:

- ``approve`` / ``approve <decision>`` / ``choose <option> [for <decision>]`` / ``reject``:
  answers a pending decision through :meth:`HostedSession.decide`, the same path (and the same
  gate checks) as the panel's decision endpoint;
- ``why did you drop `x`?``: answers from the decision log — who decided, on what evidence;
- ``timeline``: the column timeline card — each column's group and evidence, a planner's
  proposals shown as proposals (Claude's, from the schema: they move nothing), and
  ``put `x` in follow-up`` to place a column (the panel's path);
- ``status`` / ``plan``: the plan and the pending decisions (every reply ends with them).

Intents are recognised by rules, never by an LLM: an answer to a gate must mean exactly what
it says. The LLM acts on free-text instructions through the session's Claude planner, which
turns them into gated custom steps. Its model is jupyter-ai's when the user configured a Claude
model there (the model picked for this persona in the chat, else jupyter-ai's chat model),
else the co-pilot's own configuration (:mod:`jupyter_dcpilot.config`).
"""

from __future__ import annotations

import asyncio
import difflib
import logging
import re
import time
from pathlib import Path
from typing import Any

from jupyter_ai_persona_manager import BasePersona, ModelConfiguration, ModelOption, PersonaDefaults
from jupyterlab_chat.models import Message

from kernel_tools.plurals import counted
from kernel_tools.vocabulary import PENDING, SessionState, StepGate, StepStatus

from .config import DEFAULT_MODEL, load_llm_config
from .engine.hosts import Via
from .engine.notebook import md_text, validity_markdown
from .engine.planners.timings import BY as TIMING_PROPOSER
from .engine.session import Decision, Session, sidecar_path
from .engine.timeline_text import CHAT_TAKE, CHAT_USAGE, proposals_markdown, timeline_markdown
from .kernel_bridge import KernelBusyError, KernelDiedError, NoKernelError, ProbeError
from .server_sessions import HostedSession, SessionExists, SessionRegistry, pick_frame

log = logging.getLogger(__name__)
AVATAR = Path(__file__).with_name("jupyter_ai_persona.svg")
WHO = {"user": "the analyst", "policy": "the approval policy", None: "nobody yet"}


def who(d: Decision) -> str:
    """Who answered a decision, in the chat's words (an agent by its name)."""
    return d.decided_by if d.by == "agent" else WHO.get(d.by, str(d.by))
LOOKUP_TIMEOUT = 30.0  # seconds to list a kernel's DataFrames before saying it is busy

APPROVE = re.compile(r"^(?:approve|accept|go ahead|confirm)\b[\s,:]*(?P<rest>.*)$", re.I | re.S)
CHOOSE = re.compile(r"^(?:choose|pick|select|use)\s+(?:option\s+)?[`'\"]?(?P<option>[\w-]+)[`'\"]?"
                    r"(?:\s+(?:for|on|in)\s+(?P<rest>.*))?$", re.I | re.S)
REJECT = re.compile(r"^(?:reject|skip)\b[\s,:]*(?P<rest>.*)$", re.I | re.S)
WHY = re.compile(r"\bwhy\b", re.I)
STATUS = re.compile(r"^(?:status|plan|summary|help|what(?:'s| is) (?:the )?(?:plan|status))\W*$", re.I)
MENTION = re.compile(r"^\s*@\S+\s*")
QUOTED = re.compile(r"[`'\"]([^`'\"]+)[`'\"]")
# starting a session: a verb first, then what to start on (see parse_start)
START = re.compile(r"^(?P<verb>start\s+over|restart|check|start|analy[sz]e|diagnose|prepare|clean)\b"
                   r"(?:\s+(?:on|the|frame|dataframe|data)\b)*\s*(?P<rest>.*)$", re.I | re.S)
TOKEN = r"(?:`(?P<a>[^`]+)`|'(?P<b>[^']+)'|\"(?P<c>[^\"]+)\"|(?P<d>[\w./-]+))"
FRAME = re.compile(r"^" + TOKEN)
TARGET = re.compile(r"\b(?:for|predict(?:ing)?|target)\s+(?:the\s+)?(?:column\s+)?" + TOKEN, re.I)
TIME = re.compile(r"\b(?:time|duration)\s+(?:column\s+)?" + TOKEN, re.I)
NOTEBOOK = re.compile(r"\b(?:in|of)\s+(?:the\s+)?(?:notebook\s+)?" + TOKEN, re.I)
# the study's codebook: "using `codebook.csv`", "with the data dictionary `dd.csv` and events `map.csv`"
DICTIONARY = re.compile(r"\b(?:using|with)\s+(?:the\s+)?(?:codebook\s+|(?:data\s+)?dictionary\s+)?" + TOKEN, re.I)
EVENTS = re.compile(r"\b(?:events?|event\s+mapping|mapping)\s+" + TOKEN, re.I)
CODEBOOK_SUFFIXES = (".csv", ".tsv", ".txt", ".json", ".md", ".markdown", ".dta", ".sav", ".zsav", ".por", ".sas7bdat",
                     ".xpt")
KEYWORDS = {"for", "with", "in", "of", "time", "duration", "predict", "predicting", "target", "using"}
# plan edits: a step id (s4) or an episode id names what is edited
STEP_ID = r"(?:step\s+)?[`'\"]?(?P<step>s\d+)[`'\"]?"
SKIP_STEP = re.compile(r"^(?:skip|drop)\s+" + STEP_ID + r"\W*$", re.I)
REOPEN = re.compile(r"^(?:reopen|redo|undo)\s+" + STEP_ID + r"\W*$", re.I)
MOVE = re.compile(r"^move\s+" + STEP_ID + r"\s+(?P<where>before|after)\s+(?:step\s+)?[`'\"]?(?P<anchor>s\d+)[`'\"]?\W*$", re.I)
ADD = re.compile(r"^add\s+(?:a\s+|an\s+|the\s+)?(?:step\s+)?[`'\"]?(?P<episode>[a-z_]+)[`'\"]?(?:\s+(?:step\s+)?(?:on|for|of)\s+(?P<rest>.+))?$", re.I | re.S)
PARAMS_SET = re.compile(r"^(?:set|params?)\s+(?:(?:for|on|of)\s+)?" + STEP_ID + r"[:,]?\s+(?P<pairs>.+)$|"
                        r"^(?:set|params?)\s+(?P<pairs2>.+?)\s+(?:for|on|of)\s+" + STEP_ID.replace("step>", "step2>") + r"\W*$",
                        re.I | re.S)
PAIR = re.compile(r"(?P<key>[a-z_]+)\s*(?:=|\bto\b)\s*(?P<value>`[^`]*`|[^\s,]+(?:\s*,\s*[^\s,=]+)*)", re.I)
# a start that would end a session waits for this, from the same sender, within CONFIRM_S
# a column's place on the column timeline: "put `bili_day7` in follow-up", "place `age` at baseline"
PLACE = re.compile(r"^(?:place|put|move)\s+(?:column\s+)?[`'\"](?P<column>[^`'\"]+)[`'\"]\s+(?:to|at|in|into|on)\s+"
                   r"(?:the\s+)?(?P<group>[a-z][\w\s-]*?)(?:\s+group)?(?:[:,;]\s*(?P<why>.*))?\W*$", re.I | re.S)
# the column timeline card: "timeline", "show the timeline", "what is on the column timeline?"
TIMELINE = re.compile(r"^(?:(?:show|see)\s+(?:me\s+)?)?(?:the\s+)?(?:column\s+)?timeline\W*$|"
                      r"^what(?:'s|\s+is)\s+(?:on\s+)?the\s+(?:column\s+)?timeline\W*$|"
                      r"^when\s+is\s+each\s+column\s+known\W*$", re.I)
CONFIRM = re.compile(r"^(?:yes|y|confirm|yes,?\s+(?:replace|start over|end it)(?:\s+it)?)\W*$", re.I)
CONFIRM_S = 300.0
RULES = re.compile(r"\b(?:with(?:out)?\s+(?:the\s+)?(?:rules?|rule\s+planner|llm|claude|ai))\b", re.I)


class ChatLink:
    """What one chat follows, kept across its persona instances: a page reload stops a chat's
    personas ("Chat ... stopped. Shutting down persona manager") and the next load starts new
    ones. The sessions the chat started keep posting to whichever persona serves the chat now;
    what they said while none did is posted when one comes."""

    def __init__(self) -> None:
        self.persona: DCPilotPersona | None = None
        self.sessions: list[str] = []  # the hosted sessions this chat follows, oldest first
        self.waiting: list[str] = []

    def attach(self, persona: DCPilotPersona) -> None:
        self.persona = persona
        waiting, self.waiting = self.waiting, []
        for text in waiting:
            persona.send_message(text)

    def detach(self, persona: DCPilotPersona) -> None:
        if self.persona is persona:
            self.persona = None

    def say(self, text: str) -> None:
        if self.persona is None:
            self.waiting.append(text)
        else:
            self.persona.send_message(text)

    def follow(self, hosted: HostedSession) -> None:
        """Post the session's questions (and where it stops) to the chat as they come, once."""
        if hosted.id in self.sessions:
            return
        self.sessions.append(hosted.id)
        asked: set[str] = set()

        def on_event(event: dict[str, Any]) -> None:
            try:
                posted = chat_update(hosted, event, asked)
                if posted:
                    self.say(posted)
            except Exception:  # a chat that cannot be written must never stop the co-pilot
                log.exception("dcpilot: could not follow session %s in the chat", hosted.id)

        hosted.session.subscribe(on_event)


class DCPilotPersona(BasePersona):
    """The co-pilot's chat persona; see the module docstring."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        link = self.chat_link()
        if link is not None:  # a new instance for a chat (e.g. after a page reload) takes over
            link.attach(self)

    async def shutdown(self) -> None:
        link = self.chat_link()
        if link is not None:
            link.detach(self)
        await super().shutdown()

    def chat_link(self) -> ChatLink | None:
        """This chat's :class:`ChatLink` (None without the co-pilot's server extension)."""
        try:
            chats = self.server_settings().setdefault("dcpilot_chats", {})
        except LookupError:
            return None
        try:
            key = self.get_chat_path(relative=True)
        except Exception:  # a chat not resolved to a file yet: known by its document
            key = f"chat:{id(self.chat)}"
        link: ChatLink = chats.setdefault(key, ChatLink())
        return link

    @property
    def defaults(self) -> PersonaDefaults:
        llm = load_llm_config()
        model = self.claude_model()[0] or (llm.model if llm.available else None)
        return PersonaDefaults(
            name="DCPilot",
            description="The data-centric co-pilot: starts on a DataFrame of your notebook, asks you "
                        "its questions, explains its decisions, takes instructions.",
            avatar_path=str(AVATAR),
            system_prompt="You relay a data scientist's chat messages to the data-centric co-pilot "
                          "session of their notebook.",
            slash_commands=set(),
            model_uid=f"anthropic:{model}" if model else None,
        )

    async def prepare(self) -> None:
        """Offer the Claude models the co-pilot can plan with in jupyter-ai's model picker."""
        options = [m for m in (self.claude_model()[0], load_llm_config().model, DEFAULT_MODEL) if m]
        self.report_model_configuration(ModelConfiguration(
            current=self.get_model(),
            options=[ModelOption(id=f"anthropic/{m}", name=m) for m in dict.fromkeys(options)]))

    async def update_model(self, model_id: str) -> None:
        """A model picked for this persona in the chat: a Claude model, or it is refused."""
        if claude_id(model_id) is None:
            raise ValueError(f"DCPilot plans with Claude (the anthropic API); {model_id!r} is not a Claude model")

    async def process_message(self, message: Message) -> None:
        self.send_message(await self.reply_to(message))

    async def reply_to(self, message: Message) -> str:
        """The reply to one chat message (acting on the session as it says)."""
        text = MENTION.sub("", message.body or "").strip()
        pending = self._confirmations().pop(message.sender, None)  # asked once: any other answer drops it
        if pending is not None and CONFIRM.match(text) and time.monotonic() - pending[1] < CONFIRM_S:
            text = pending[0]
            return await self.start(message, START.match(text), confirmed=True) or "Nothing to start."
        start = START.match(text)
        if start:
            reply = await self.start(message, start)
            if reply is not None:
                return reply
        hosted, problem = self.session_for(message)
        if hosted is None:
            return problem or "No co-pilot session."
        text = without_notebook(text).strip()  # the notebook named says which session, nothing more
        if place := PLACE.match(text):
            return place_reply(hosted, place) + "\n\n" + summary_markdown(hosted.session)
        if TIMELINE.match(text):
            return timeline_markdown(hosted.session.structure, CHAT_USAGE, CHAT_TAKE) + "\n\n" + summary_markdown(
                hosted.session)
        edit = parse_edit(hosted.session, text)
        if edit is not None:
            return await edit_reply(hosted, edit) + "\n\n" + summary_markdown(hosted.session)
        return respond(hosted, text) + "\n\n" + summary_markdown(hosted.session)

    # -- the server and jupyter-ai's configuration --------------------------------------------
    def server_settings(self) -> dict[str, Any]:
        """The Jupyter server's settings, found through the persona manager's server app."""
        node: Any = self.parent
        while node is not None:
            app = getattr(node, "serverapp", None) or node
            settings = getattr(getattr(app, "web_app", None), "settings", None)
            if isinstance(settings, dict) and "dcpilot_sessions" in settings:
                return settings
            node = getattr(node, "parent", None)
        raise LookupError("the jupyter_dcpilot server extension is not loaded in this server")

    def registry(self) -> SessionRegistry:
        """The server's co-pilot sessions."""
        return self.server_settings()["dcpilot_sessions"]

    def claude_model(self) -> tuple[str | None, str | None]:
        """The Claude model jupyter-ai is configured with: the one picked for this persona in
        the chat, else jupyter-ai's chat model (``jupyternaut.config_manager``). None when the
        user configured none there (the co-pilot's own configuration applies), with why a
        configured model was passed over."""
        try:
            manager = self.server_settings().get("jupyternaut.config_manager")
        except LookupError:
            manager = None
        passed_over = None
        picked = self.get_model() if getattr(self, "state", None) is not None else None  # set up yet?
        for configured in (picked, getattr(manager, "chat_model", None)):
            if not configured:
                continue
            model = claude_id(configured)
            if model is not None:
                return model, None
            passed_over = passed_over or (f"jupyter-ai's model `{configured}` is not a Claude model, "
                                          "so the co-pilot uses its own configuration")
        return None, passed_over

    # -- starting a session ---------------------------------------------------------------------
    def _confirmations(self) -> dict[str, tuple[str, float]]:
        """Starts waiting for the sender's "yes": sender -> (the start message, when asked)."""
        if not hasattr(self, "_pending_starts"):
            self._pending_starts: dict[str, tuple[str, float]] = {}
        return self._pending_starts

    async def start(self, message: Message, match: re.Match[str] | None, confirmed: bool = False) -> str | None:
        """Start the co-pilot as the message asks; its reply, or None when the words are an
        instruction for the notebook's live session after all (they name no DataFrame). On a
        notebook not attached to the message, a start that would end a session (live, or saved
        for another DataFrame) asks first, naming it (unless ``confirmed``)."""
        if match is None:
            return None
        wanted = parse_start(match)
        instruction = not wanted["replace"] and match.group("rest").strip()
        if instruction and wanted["frame"] is None and self.session_for(message)[0] is not None:
            return None  # e.g. "check for outliers in age": an instruction for the live session
        registry = self.registry()
        path, problem = await self.notebook_for(message, wanted["notebook"])
        if path is None:
            return problem
        try:
            frames = await asyncio.wait_for(registry.frames(path), LOOKUP_TIMEOUT)
        except (asyncio.TimeoutError, KernelBusyError):
            return f"The kernel of `{path}` is busy (a cell is still running): ask me again once it is done."
        except (NoKernelError, KernelDiedError, ProbeError) as error:
            return f"Could not look into the kernel of `{path}`: {error}."
        names = [str(f["name"]) for f in frames]
        live = registry.sessions(path)
        if live and not wanted["replace"]:
            if instruction and wanted["frame"] not in names:
                return None  # e.g. "check whether age has outliers": words, not a DataFrame
            return (f"A co-pilot session already runs on `{path}` (on **{live[0].session.frame}**): answer "
                    f"its questions here or in the panel, or say `` start over on `{wanted['frame']}` … `` to "
                    "replace it.\n\n" + summary_markdown(live[0].session))
        frame = pick_frame(frames, wanted["frame"])
        if frame is None:
            return which_frame(path, frames, wanted["frame"])
        # off the event loop: it may read a saved session file
        ending = None if confirmed or path in self.attached_notebooks(message) else await asyncio.to_thread(
            would_end, registry, path, frame, live[0] if live else None)
        if ending is not None:
            self._confirmations()[message.sender] = (match.string, time.monotonic())
            return (f"`{path}` is not attached to your message, and starting there would end {ending}. "
                    f"Say `yes` to end it and start afresh on **{frame}**; anything else keeps it.")
        columns = await registry.columns(path, frame)
        for role in ("target", "time"):
            name = wanted[role]
            if name and name not in columns:
                close = difflib.get_close_matches(name, columns, n=3)
                hint = f" Did you mean {', '.join(f'`{c}`' for c in close)}?" if close else ""
                return f"**{frame}** has no column `{name}` (the {role} you named).{hint}"
        model, passed_over = self.claude_model()
        claude = load_llm_config().available and not wanted["rules"]
        try:
            hosted = await registry.open(path, frame=frame, target=wanted["target"], time=wanted["time"],
                                         approve="ask", planner="claude" if claude else "rules",
                                         model=model if claude else None, replace=wanted["replace"],
                                         dictionary=wanted["dictionary"], events=wanted["events"])
        except SessionExists as error:  # started elsewhere meanwhile
            return f"{error}."
        except (ValueError, NoKernelError) as error:
            return f"Could not start the co-pilot: {error}."
        self.follow(hosted)
        planner = (f"Claude (`{hosted.session.settings['model']}`)" if claude
                   else "the rule planner (no Claude API key is configured)" if not wanted["rules"]
                   else "the rule planner")
        lines = [f"Started the co-pilot on **{frame}** in `{path}`"
                 + (f", predicting `{wanted['target']}`" if wanted["target"] else "")
                 + (f" with time `{wanted['time']}`" if wanted["time"] else "")
                 + (f", reading the codebook `{wanted['dictionary']}`" if wanted["dictionary"] else "")
                 + f", planning with {planner}.",
                 "Its questions come here and to the notebook's Data co-pilot panel: answer either. "
                 "Keep the panel open on the notebook: it writes and runs the co-pilot's cells."]
        if passed_over:
            lines.append(passed_over + ".")
        return " ".join(lines)

    async def notebook_for(self, message: Message, named: str | None) -> tuple[str | None, str | None]:
        """The notebook a start means: attached, named, else the only one with a kernel."""
        running = await self.registry().notebooks()
        wanted = self.attached_notebooks(message) or ([named.lstrip("/")] if named else [])
        if wanted:
            if wanted[0] in running:
                return wanted[0], None
            return None, f"`{wanted[0]}` has no running kernel: open it, run the cell that loads your data, then ask me again."
        if len(running) == 1:
            return running[0], None
        if not running:
            return None, "No notebook has a running kernel: open one, load your data, then ask me again."
        names = ", ".join(f"`{p}`" for p in running)
        return None, f"Which notebook? Attach it to your message, or say `` in `name.ipynb` ``. Notebooks with a kernel: {names}."

    def follow(self, hosted: HostedSession) -> None:
        """Post the session's questions (and where it stops) to this chat as they come, whichever
        instance of the persona serves the chat then."""
        link = self.chat_link()
        if link is None:
            raise LookupError("the jupyter_dcpilot server extension is not loaded in this server")
        link.attach(self)
        link.follow(hosted)

    # -- which session --------------------------------------------------------------------
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
        """The message's notebook session, or why there is none (a question back to the user): the
        notebook attached, else the one named (``in `study.ipynb```), else the session this chat
        started that waits for an answer (or its only one), else the only live session."""
        registry = self.registry()
        named = _token(NOTEBOOK, MENTION.sub("", message.body or ""))
        wanted = self.attached_notebooks(message) or ([named.lstrip("/")] if named and named.endswith(".ipynb") else [])
        for path in wanted:
            found = registry.sessions(path)
            if found:
                return found[0], None
        if wanted:
            return None, (f"No co-pilot session runs on {', '.join(f'`{p}`' for p in wanted)}: say "
                          "`` check `<frame>` for `<target>` `` to start one, then ask me again.")
        live = registry.sessions()
        link = self.chat_link()
        ours = [h for h in live if link is not None and h.id in link.sessions]
        asking = [h for h in ours if h.session.open_decisions()]
        for choice in (asking, ours, live):
            if len(choice) == 1:
                return choice[0], None
        if not live:
            return None, ("No co-pilot session is running. Say `` check `<frame>` for `<target>` `` to start "
                          "one on a DataFrame of your notebook (or start it from the notebook's Data "
                          "co-pilot panel).")
        names = ", ".join(f"`{h.path}`" for h in live)
        return None, f"Which notebook do you mean? Attach it to your message. Co-pilot sessions run on {names}."


def claude_id(model: str) -> str | None:
    """The Anthropic model id in a jupyter-ai model id (``anthropic/claude-…``, ``anthropic:claude-…``
    or a bare ``claude-…``); None for another provider's model."""
    match = re.fullmatch(r"(?:anthropic(?:-chat)?[:/])?(claude[\w.:@-]*)", model.strip())
    return match.group(1) if match else None


def _token(pattern: re.Pattern[str], text: str) -> str | None:
    match = pattern.search(text)
    return next((g for g in match.group("a", "b", "c", "d") if g), None) if match else None


def _file(pattern: re.Pattern[str], text: str) -> str | None:
    """A file name the pattern finds (a codebook's suffix), else None ("with time `t`" names none)."""
    found = _token(pattern, text)
    return found if found and found.lower().endswith(CODEBOOK_SUFFIXES) else None


def would_end(registry: SessionRegistry, path: str, frame: str, live: HostedSession | None) -> str | None:
    """The session a start on ``path`` would end, in words: the live one (replaced), or one saved
    beside the notebook for another DataFrame (started afresh over it); None when none would."""
    if live is not None:
        return f"its live co-pilot session `{live.id[:8]}` ({session_words(live.session)})"
    try:
        saved = Session.load(sidecar_path(registry.os_path(path)))
    except (OSError, ValueError):
        return None
    if saved.frame == frame:
        return None  # it resumes
    return f"the session saved beside it ({session_words(saved)})"


def session_words(session: Session) -> str:
    """``on visits, predicting death: blocked, 2 decisions answered, 3 steps done``."""
    target = session.task.target or session.task.given.target
    answered = sum(1 for d in session.decisions if d.decided)
    done = sum(1 for st in session.plan if st.status == StepStatus.DONE)
    return (f"on {session.frame}" + (f", predicting {target}" if target else "")
            + f": {session.state}, {counted(answered, 'decision')} answered, {counted(done, 'step')} done")


def parse_start(match: re.Match[str]) -> dict[str, Any]:
    """What a start message asks for: frame, target, time, notebook, codebook (dictionary, events),
    replace, rules."""
    rest = match.group("rest")
    frame = _token(FRAME, rest)
    if frame is not None and (frame.lower() in KEYWORDS or not frame.isidentifier()):
        frame = None
    notebook = _token(NOTEBOOK, rest)
    dictionary, events = _file(DICTIONARY, rest), _file(EVENTS, rest)
    return {"frame": frame, "target": _token(TARGET, rest), "time": _token(TIME, rest),
            "notebook": notebook if notebook and notebook.endswith(".ipynb") else None,
            "dictionary": dictionary, "events": events if dictionary else None,
            "replace": match.group("verb").lower().replace(" ", "") in ("startover", "restart"),
            "rules": bool(RULES.search(rest))}


def which_frame(path: str, frames: list[dict[str, Any]], named: str | None) -> str:
    """The question back when a start names no DataFrame of the kernel, or several could do."""
    listed = ", ".join(f"`{f['name']}` ({f['rows']} rows × {f['columns']} columns)" for f in frames)
    if not frames:
        return f"The kernel of `{path}` holds no DataFrame yet: run the cell that loads your data, then ask me again."
    if named is not None:
        return f"The kernel of `{path}` has no DataFrame `{named}`. Its DataFrames: {listed}."
    return f"Which DataFrame of `{path}`? Say e.g. `` check `{frames[0]['name']}` for `<target>` ``. Its DataFrames: {listed}."


def chat_update(hosted: HostedSession, event: dict[str, Any], asked: set[str]) -> str | None:
    """What the chat hears of one session event: a new question (once), a planner's timing
    proposals (once, as proposals), or where the run stopped."""
    session, kind = hosted.session, event.get("type")
    if kind == "awaiting_decision":
        decision = session.decision(event["decision"]["id"])
        if decision.id in asked or decision.decided:
            return None
        asked.add(decision.id)
        return card_markdown(hosted, decision)
    if kind == "decision" and event["decision"].get("choice") is None:
        proposal = event["decision"].get("proposal")
        if proposal:  # an agent answered: the person accepts it (or not) here or in the panel
            key = f"{event['decision']['id']}@{proposal['at']}"
            if key not in asked:
                asked.add(key)
                return f"`{hosted.path}`, decision `{event['decision']['id']}`:" + proposal_text(
                    session.decision(event["decision"]["id"]))
            return None
        asked.discard(event["decision"]["id"])  # reopened (undone): asked again when it comes up
    if kind == "timeline" and event.get("proposed"):  # a planner's proposals: posted once, as proposals
        key = "proposed:" + ",".join(event["proposed"])
        listed = proposals_markdown(session.structure, event["proposed"])
        if key in asked or not listed:
            return None
        asked.add(key)
        return (f"`{hosted.path}`: {TIMING_PROPOSER} proposes where {counted(len(event['proposed']), 'column')} of the "
                "timeline belong, from their names and the schema only. These are proposals: nothing is moved "
                f"or confirmed until you say.\n{listed}\n\nSay `timeline` for the whole card.")
    if kind == "state" and event.get("state") in (SessionState.FINISHED, SessionState.FAILED):
        return f"The co-pilot on **{session.frame}** in `{hosted.path}` has {event['state']}.\n\n" + summary_markdown(session)
    if kind == "closed":
        return f"The co-pilot session on `{hosted.path}` closed: {event.get('reason')}."
    return None


def proposal_text(d: Decision) -> str:
    """An agent's proposal for an open decision, and how to accept it ("" when there is none)."""
    p = d.proposal
    if not p or d.decided:
        return ""
    why = f" ({md_text(p['rationale'])})" if p.get("rationale") else ""
    return (f" Agent {md_text(p['agent'])} proposes `{p['choice']}`{why}: say `choose {p['choice']} for {d.id}` "
            "to accept it.")


def card_markdown(hosted: HostedSession, decision: Decision) -> str:
    """A decision card for the chat: the question, its evidence, the options."""
    session = hosted.session
    title = next((st.title for st in session.plan if st.id == decision.step_id), decision.step_id)
    evidence = md_text("; ".join(decision.evidence_lines))
    lines = [f"**{md_text(title)}** — `{hosted.path}` asks (`{decision.id}`, {decision.gate}"
             + (f": {', '.join(decision.columns)}" if decision.columns else "") + f"): {md_text(decision.question)}"]
    if evidence:
        lines.append(f"Evidence: {evidence}.")
    for o in decision.options:
        mark = " (recommended)" if o.id == decision.recommended else ""
        about = f": {md_text(o.description)}" if o.description else ""
        lines.append(f"- `{o.id}` **{md_text(o.label or o.id)}**{mark}{about}")
    lines.append("Say `approve` (the recommended option), `choose <option>` or `reject` here, or answer "
                 "in the notebook's Data co-pilot panel.")
    return "\n".join(lines)


# -- what a message asks --------------------------------------------------------------------
def respond(hosted: HostedSession, text: str) -> str:
    """Act on one message and say what was done (the summary is added by the caller)."""
    session = hosted.session
    if not text or STATUS.match(text):
        return (f"Co-pilot on **{session.frame}** in `{hosted.path}`. Ask me ``why did you drop `x`?``, "
                "say `approve`, `choose <option>` or `reject`, see the column `timeline` and place a column "
                "on it (``put `x` in follow-up``), edit the plan (`skip s5`, `move s7 before s6`, "
                "``add outliers on `age` ``, `set threshold=3 for s7`, `reopen s4`), or write an instruction.")
    if WHY.search(text):
        return why_markdown(session, text)
    for pattern, kind in ((CHOOSE, "choose"), (REJECT, "reject"), (APPROVE, "approve")):
        match = pattern.match(text)
        if match:
            return answer(hosted, kind, match.groupdict(), text)
    session.instruct(text)
    if hosted.coordinator.planner.name == "claude":
        if session.state in (SessionState.FINISHED, SessionState.IDLE, SessionState.FAILED):
            hosted.resume()
        return "Noted as an instruction: the planner turns it into a step you approve before it runs."
    return ("Noted as an instruction in the session's log. This session plans with the rule planner, "
            "which does not act on free text; start the co-pilot with the Claude planner for custom steps.")


def parse_edit(session: Session, text: str) -> dict[str, Any] | None:
    """The plan edit a message asks for (``skip s5``, ``move s7 before s6``, ``add outliers on
    `age```, ``set threshold=3 for s7``, ``reopen s4``), else None: words about a decision
    (``skip`` alone rejects the open one) go to :func:`respond`."""
    from .engine.plan_edits import parse_pairs

    if match := SKIP_STEP.match(text):
        return {"op": "skip", "step": match.group("step").lower()}
    if match := REOPEN.match(text):
        return {"op": "reopen", "step": match.group("step").lower()}
    if match := MOVE.match(text):
        return {"op": "move", "step": match.group("step").lower(), match.group("where").lower(): match.group("anchor").lower()}
    if match := ADD.match(text):
        episode = match.group("episode").lower()
        rest = match.group("rest") or ""
        columns = known_columns(session)
        named = [q for q in QUOTED.findall(rest) if q in columns]
        named += [w for w in re.findall(r"[\w.-]+", rest) if w in columns and w not in named]
        return {"op": "add", "episode": episode, **({"columns": named} if named else {})}
    if match := PARAMS_SET.match(text):
        step = (match.group("step") or match.group("step2")).lower()
        pairs = [f"{m.group('key')}={m.group('value').strip('`').replace(' ', '')}"
                 for m in PAIR.finditer(match.group("pairs") or match.group("pairs2") or "")]
        if not pairs:
            return None
        try:
            episode = session.step(step).episode
        except KeyError:
            episode = ""
        try:
            return {"op": "params", "step": step, "params": parse_pairs(episode, pairs)}
        except ValueError as error:  # a value the words do not make a number of: said back
            return {"op": "params", "step": step, "error": str(error)}
    return None


def place_reply(hosted: HostedSession, place: re.Match[str]) -> str:
    """Move a column on the column timeline as the panel does, and say where it is now."""
    column, group = place.group("column"), place.group("group").strip()
    try:
        hosted.move_column(column, group, (place.group("why") or "").strip(), via=Via.CHAT)
    except KeyError as error:
        return f"Could not place it: {md_text(str(error.args[0]))}."
    except ValueError as error:
        return f"Could not place it: {md_text(str(error))}."
    card = hosted.session.structure.card()
    where = card.columns[column].group.replace("_", " ") if card is not None else group
    late = "" if where == "baseline" else " A step that drops it is planned and asked, as for any late column."
    return f"Done: `{md_text(column)}` is now {where} on the column timeline (confirmed by you).{late}"


async def edit_reply(hosted: HostedSession, edit: dict[str, Any]) -> str:
    """Apply a plan edit from the chat through the same path as the panel's, and say what happened."""
    from .engine.plan_edits import EditRefused

    if edit.get("error"):
        return f"Could not read that: {edit['error']}."
    try:
        record = await hosted.edit(edit, via=Via.CHAT)
    except KeyError as error:
        return f"Could not edit the plan: {error.args[0]}."
    except (ValueError, EditRefused) as error:
        return f"Could not edit the plan: {error}."
    return f"Done: {md_text(record.text)}. The co-pilot carries on."


def answer(hosted: HostedSession, kind: str, parts: dict[str, Any], text: str) -> str:
    """Answer a pending decision the way the panel does (same checks, same resume)."""
    session = hosted.session
    rest = without_notebook(parts.get("rest") or "").strip()
    option = parts.get("option")
    decision, problem = find_decision(session, rest, option)
    if decision is None:
        return problem or "There is no decision waiting for an answer."
    if kind == "approve":
        choice = decision.recommended
        if choice is None:
            return f"Decision `{decision.id}` has no recommended option; say `choose <option>`."
    elif kind == "reject":
        if decision.gate == StepGate.TASK:
            return (f"The task card (`{decision.id}`) is not rejected: say `approve` to confirm it, or "
                    "`choose <option>` for another task kind or moment of prediction.")
        choice = decision.rejects or "skip"
    else:
        choice = option_id(decision, option or "")
        if choice is None:
            ids = ", ".join(f"`{o.id}`" for o in decision.options)
            return f"`{option}` is not an option of decision `{decision.id}`; its options are {ids}."
    try:
        hosted.decide(decision.id, choice, rationale=f"from the chat: {text}", via=Via.CHAT)
    except ValueError as error:
        return f"Could not record that: {error}."
    chosen = decision.option(choice)
    label = (chosen.label if chosen is not None else None) or choice
    return f"Recorded **{md_text(label)}** (`{choice}`) for decision `{decision.id}` ({decision.gate}); the co-pilot carries on."


def without_notebook(text: str) -> str:
    """``text`` less the notebook it names (``in `study.ipynb```): that says which session, not
    which of its decisions."""
    return NOTEBOOK.sub(lambda m: "" if (_token(NOTEBOOK, m.group(0)) or "").endswith(".ipynb") else m.group(0), text)


def option_id(decision: Decision, wanted: str) -> str | None:
    """The option id a word names (its id or its label, any case); "skip" always."""
    wanted = wanted.strip().lower()
    for o in decision.options:
        if wanted in (o.id.lower(), o.label.lower()):
            return o.id
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
        return None, f"Decision `{d.id}` was already answered: `{d.choice}` by {who(d)}."
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
    waiting = {st.decision_id for st in session.plan if st.status == StepStatus.AWAITING_DECISION}
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
        columns |= set(f.columns)
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
                  and st.status in (StepStatus.DONE, StepStatus.SKIPPED, StepStatus.FAILED)]
        lines += found or [f"- Nothing has been decided about `{column}` yet."]
    return "\n".join(lines)


def decision_line(session: Session, d: Decision) -> str:
    title = next((st.title for st in session.plan if st.id == d.step_id), d.step_id)
    evidence = md_text("; ".join(d.evidence_lines))
    basis = f" Evidence: {evidence}." if evidence else ""
    if d.decided:
        label = d.chosen_label
        why = f" Rationale: {md_text(d.rationale)}." if d.rationale else ""
        line = (f"- `{d.id}` **{md_text(title)}** ({d.gate}): {md_text(d.question)} — "
                f"**{md_text(label)}** was chosen by {who(d)} at {d.at}"
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
    upcoming = [st for st in session.plan if st.status in (StepStatus.RUNNING, *PENDING)][:6]
    lines += [f"- {st.id} {md_text(st.title)} — {st.status}" for st in upcoming]
    open_ = session.open_decisions()
    if open_:
        lines += ["", "**Waiting for you:**"]
        for d in open_:
            options = ", ".join(f"`{o.id}`" + (" (recommended)" if o.id == d.recommended else "")
                                for o in d.options)
            lines.append(f"- `{d.id}` ({d.gate}{': ' + ', '.join(d.columns) if d.columns else ''}): "
                         f"{md_text(d.question)} Options: {options}." + proposal_text(d))
        lines.append("Say `approve` (the recommended option), `choose <option>` or `reject`.")
    if session.validity:  # a model was trained: the verdict, check by check
        lines += ["", validity_markdown(session.validity)]
    return "\n".join(lines)
