"""The co-pilot's settings: traitlets on ``DCPilot``, read from Jupyter's config files.

Set them where Jupyter's other settings live, e.g. ``~/.jupyter/jupyter_server_config.py``
(``jupyter --paths`` lists the folders; ``JUPYTER_CONFIG_DIR`` moves the first one)::

    c.DCPilot.model = "claude-sonnet-4-5"
    c.DCPilot.default_approve = "recommended"
    c.DCPilot.budget = 120.0
    c.DCPilot.spill_dir = "/scratch/dcpilot-checkpoints"
    c.DCPilot.agent_may_decide = ["outliers"]  # agents' answers decide there; elsewhere they propose

or on the command line (``jupyter lab --DCPilot.model=...``). The server extension reads them
with the server's own configuration; the command line, the magics and the chat persona read
the same files with :func:`load_settings`.

The Anthropic API key is never a setting (a config file is plain text): it comes from the
``ANTHROPIC_API_KEY`` environment variable, else from the system keyring (service
``jupyter-dcpilot``, user ``anthropic``; ``keyring set jupyter-dcpilot anthropic``) when the
``keyring`` package is installed. The JSON file older versions read (``dcpilot.json`` in the
Jupyter config folder) is no longer read: ``jupyter dcpilot migrate-config`` moves it.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

from jupyter_core.application import JupyterApp
from traitlets import Dict, Enum, Float, Integer, List, Unicode, Union, default, validate
from traitlets.config import Config, Configurable

from kernel_tools.vocabulary import Gate, StepGate

from .engine.llm import DEFAULT_MODEL, LLMConfig

# the gates an agent may be allowed to decide: all but custom code, which is LLM-written and
# read by the person before it runs (no approval policy runs it either)
AGENT_GATES = [g.value for g in (*Gate, StepGate.TASK)]

KEYRING_SERVICE = "jupyter-dcpilot"
KEYRING_USER = "anthropic"
LEGACY_FILE = "dcpilot.json"
LEGACY_SETTINGS = ("model", "base_url", "timeout", "max_retries", "corrections")

log = logging.getLogger(__name__)
_warned: set[Path] = set()  # old files already named in the log (once per process)


class DCPilot(Configurable):
    """The co-pilot's settings (``c.DCPilot.<name>`` in ``jupyter_server_config.py``)."""

    model = Unicode(help="The Claude model the LLM planner uses when a session does not choose one "
                         "(default: $DCPILOT_MODEL, else " + DEFAULT_MODEL + ").").tag(config=True)
    base_url = Unicode(None, allow_none=True,
                       help="The Anthropic API's base URL (a proxy or gateway); None: the SDK's "
                            "default, or $ANTHROPIC_BASE_URL.").tag(config=True)
    timeout = Float(60.0, help="Seconds one LLM request may take.").tag(config=True)
    max_retries = Integer(3, min=0, help="The SDK's retries of one LLM request (rate limits, "
                                         "overload, timeouts).").tag(config=True)
    corrections = Integer(2, min=0, help="Answers with malformed tool calls sent back to the model "
                                         "for another try.").tag(config=True)
    default_approve = Enum(["ask", "recommended", "none"], default_value="ask",
                           help="Who decides at an expert gate when a session does not say: 'ask' "
                                "(the panel or chat asks you), 'recommended' (the recommended option "
                                "is taken and logged), 'none' (expert steps are skipped).").tag(config=True)
    budget = Union([Float(min=1.0), Dict(value_trait=Float(min=1.0))], default_value=None, allow_none=True,
                   help="Seconds per kind of co-pilot step over the built-in defaults: one number for "
                        "every step, or e.g. {'train_evaluate': 900, '*': 120} (see "
                        "jupyter_dcpilot.engine.budgets). A step that would run past its budget cuts "
                        "its work and says what it left out; at 4x it is stopped and rolled back. A "
                        "session's start request may override it.").tag(config=True)
    agent_may_decide = List(Enum(AGENT_GATES), default_value=[],
                            help="The gates at which an agent's answer (an MCP client, a Jupyter AI agent "
                                 "using the co-pilot's tools) decides, e.g. ['outliers', 'imputation']. At "
                                 "every other gate an agent's answer is a proposal the panel and the chat "
                                 "show you to accept. Custom code is never decided by an agent.").tag(config=True)
    agent_share = Enum(["schema", "samples"], default_value="schema",
                       help="What the co-pilot's MCP tools show an agent of the data: 'schema' (column "
                            "names, findings, aggregate statistics; never a cell value) or 'samples' "
                            "(also the values quoted in findings, decisions and the log).").tag(config=True)
    spill_dir = Unicode(None, allow_none=True,
                        help="Where kernels started by this server write checkpoints to disk (so "
                             "undo survives a kernel restart); 'off' keeps them in memory only. "
                             "None: a private per-kernel folder in your cache directory.").tag(config=True)

    @default("model")
    def _default_model(self) -> str:
        return os.environ.get("DCPILOT_MODEL") or DEFAULT_MODEL

    @validate("model")
    def _check_model(self, proposal: dict[str, Any]) -> str:
        model = str(proposal["value"]).strip()
        if not model:
            raise ValueError("DCPilot.model must be a Claude model id, not an empty string")
        return model

    def api_key(self) -> str | None:
        """``ANTHROPIC_API_KEY``, else the system keyring's entry; None when neither has one."""
        return os.environ.get("ANTHROPIC_API_KEY") or keyring_api_key()

    def llm_config(self, model: str | None = None) -> LLMConfig:
        """The LLM client's configuration (``model`` overrides the default one)."""
        return LLMConfig(model=model or self.model, api_key=self.api_key(),
                         base_url=self.base_url or os.environ.get("ANTHROPIC_BASE_URL") or None,
                         timeout=self.timeout, max_retries=self.max_retries, corrections=self.corrections)


def keyring_api_key() -> str | None:
    """The API key in the system keyring, if the keyring package is installed and has one."""
    try:
        import keyring
        from keyring.errors import KeyringError
    except ImportError:
        return None
    try:
        return keyring.get_password(KEYRING_SERVICE, KEYRING_USER) or None
    except (KeyringError, RuntimeError) as error:  # no usable backend (a headless machine)
        log.debug("jupyter-dcpilot: the keyring could not be read: %s", error)
        return None


def load_settings(config_dir: str | os.PathLike[str] | None = None) -> DCPilot:
    """The settings as a Jupyter server would read them: ``jupyter_config`` and
    ``jupyter_server_config`` (.py and .json) from every Jupyter config path, the user's
    folder (or ``config_dir``) winning. For the command line, the magics and the persona."""
    files = ServerConfigFiles(config_dir=str(config_dir)) if config_dir else ServerConfigFiles()
    files.load_config_file(suppress_errors=False)
    warn_legacy_file()
    return DCPilot(config=files.config)


class ServerConfigFiles(JupyterApp):
    """Reads the files a Jupyter server reads (jupyter_config, jupyter_server_config); never started."""

    name = "jupyter-server"

    def _config_file_name_default(self) -> str:
        return "jupyter_server_config"


def load_llm_config(model: str | None = None) -> LLMConfig:
    """:meth:`DCPilot.llm_config` of :func:`load_settings`; ``api_key`` None means rules only."""
    return load_settings().llm_config(model)


# -- the JSON file of older versions ---------------------------------------------------------

def legacy_file() -> Path | None:
    """The old ``dcpilot.json`` if one exists ($DCPILOT_CONFIG, the Jupyter config folder or
    ~/.jupyter)."""
    from jupyter_core.paths import jupyter_config_dir

    candidates = [os.environ.get("DCPILOT_CONFIG"), Path(jupyter_config_dir()) / LEGACY_FILE,
                  Path("~/.jupyter").expanduser() / LEGACY_FILE]
    return next((Path(c) for c in candidates if c and Path(c).is_file()), None)


def warn_legacy_file() -> None:
    path = legacy_file()
    if path is not None and path not in _warned:
        _warned.add(path)
        log.warning("jupyter-dcpilot no longer reads %s (an API key does not belong in a plain "
                    "config file): run `jupyter dcpilot migrate-config` to move it", path)


def migrate_legacy_file(path: str | os.PathLike[str], config_dir: str | os.PathLike[str]) -> list[str]:
    """Move the settings of an old ``dcpilot.json`` into ``jupyter_server_config.json`` of
    ``config_dir`` (``DCPilot`` section) and its API key into the system keyring; the file is
    deleted once nothing is left in it. Returns what was done, one line each.

    The key stays in the file (and the file stays) when no keyring can hold it: put it in
    ``ANTHROPIC_API_KEY`` yourself, then delete the file."""
    path = Path(path)
    try:
        data = json.loads(path.read_text() or "{}")
    except json.JSONDecodeError as error:
        raise ValueError(f"{path} is not valid JSON: {error}") from error
    if not isinstance(data, dict):
        raise ValueError(f"{path} must hold a JSON object")
    done: list[str] = []
    moved = {k: v for k, v in data.items() if k in LEGACY_SETTINGS and v is not None}
    if moved:
        DCPilot(config=Config({"DCPilot": moved}))  # invalid values fail here, before anything is written
        target = Path(config_dir) / "jupyter_server_config.json"
        config = json.loads(target.read_text() or "{}") if target.is_file() else {}
        config.setdefault("DCPilot", {}).update(moved)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(config, indent=2) + "\n")
        done.append(f"moved {', '.join(sorted(moved))} to {target} (section DCPilot)")
    left = {k: v for k, v in data.items() if k not in LEGACY_SETTINGS}
    key = left.pop("api_key", None)
    if key:
        if _store_in_keyring(key):
            done.append(f"moved the API key to the system keyring ({KEYRING_SERVICE} / {KEYRING_USER})")
        else:
            left["api_key"] = key
            done.append("the API key was NOT moved (no usable keyring: install `keyring`, or set "
                        f"ANTHROPIC_API_KEY yourself and delete {path})")
    for name in sorted(set(left) - {"api_key"}):
        done.append(f"ignored {name!r}: not a setting")
        del left[name]
    if left:
        path.write_text(json.dumps(left, indent=2) + "\n")
    else:
        path.unlink()
        done.append(f"deleted {path}")
    return done


def _store_in_keyring(key: str) -> bool:
    try:
        import keyring
        from keyring.errors import KeyringError
    except ImportError:
        return False
    try:
        keyring.set_password(KEYRING_SERVICE, KEYRING_USER, key)
        return keyring.get_password(KEYRING_SERVICE, KEYRING_USER) == key
    except (KeyringError, RuntimeError) as error:
        log.debug("jupyter-dcpilot: the keyring could not store the key: %s", error)
        return False
