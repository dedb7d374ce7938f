"""The co-pilot's own settings: which LLM (if any) it may use.

Read from ``~/.jupyter/dcpilot.json`` (or the file named by ``DCPILOT_CONFIG``), falling back
to the ``ANTHROPIC_API_KEY`` / ``ANTHROPIC_BASE_URL`` / ``DCPILOT_MODEL`` environment variables.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

DEFAULT_MODEL = "claude-sonnet-4-5"


@dataclass(frozen=True)
class LLMConfig:
    """How to reach Claude. ``api_key`` None means no LLM: the rule planner only."""

    api_key: str | None
    model: str = DEFAULT_MODEL
    base_url: str | None = None

    @property
    def configured(self) -> bool:
        return bool(self.api_key)


def config_path() -> Path:
    return Path(os.environ.get("DCPILOT_CONFIG", Path.home() / ".jupyter" / "dcpilot.json"))


def load_llm_config() -> LLMConfig:
    """Our config file first, then the environment."""
    data: dict = {}
    path = config_path()
    if path.is_file():
        try:
            data = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError) as error:
            raise ValueError(f"cannot read the co-pilot config {path}: {error}") from error
    return LLMConfig(
        api_key=data.get("api_key") or os.environ.get("ANTHROPIC_API_KEY") or None,
        model=data.get("model") or os.environ.get("DCPILOT_MODEL") or DEFAULT_MODEL,
        base_url=data.get("base_url") or os.environ.get("ANTHROPIC_BASE_URL") or None,
    )
