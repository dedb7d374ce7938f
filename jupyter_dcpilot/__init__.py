"""jupyter-dcpilot: a data-centric co-pilot for JupyterLab.

This package holds the co-pilot engine (``jupyter_dcpilot.engine``, no Jupyter server in it)
and the thin Jupyter server extension that hosts it. The code that runs where the data is
lives in the separate ``kernel_tools`` package.
"""

from __future__ import annotations

from typing import Any

try:
    from ._version import __version__
except ImportError:  # running from a source tree that was never built
    __version__ = "0.0.0"


def _jupyter_labextension_paths() -> list[dict[str, str]]:
    return [{"src": "labextension", "dest": "jupyter-dcpilot"}]


def _jupyter_server_extension_points() -> list[dict[str, Any]]:
    from .app import DCPilotApp  # imports jupyter_server: only when a server asks

    return [{"module": "jupyter_dcpilot", "app": DCPilotApp}]


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext jupyter_dcpilot``: register the inline co-pilot magics (%dccheck, %dcplan, ...)."""
    from .magics import load_ipython_extension as load

    load(ipython)
