"""The co-pilot's own settings: which LLM (if any) it may use.

One configuration for every part (engine planner, server status, chat persona): read from
``~/.jupyter/dcpilot.json`` (or the file named by ``DCPILOT_CONFIG``), falling back to the
``ANTHROPIC_API_KEY`` / ``ANTHROPIC_BASE_URL`` / ``DCPILOT_MODEL`` environment variables.
See :class:`jupyter_dcpilot.engine.llm.LLMConfig` for the fields.
"""

from __future__ import annotations

from .engine.llm import DEFAULT_MODEL, LLMConfig


def load_llm_config() -> LLMConfig:
    """Our config file first, then the environment; ``api_key`` None means the rule planner only."""
    return LLMConfig.load()


__all__ = ["DEFAULT_MODEL", "LLMConfig", "load_llm_config"]
