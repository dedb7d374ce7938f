"""Silent probes: evaluate one kernel_tools call in a kernel and get JSON back.

A probe is sent as an ``execute_request`` with empty code, ``silent=True``,
``store_history=False`` and the call as a *user expression*. The kernel evaluates the
expression without binding any name, printing anything or bumping the execution count,
so the user's namespace and notebook stay exactly as they were. The call itself returns a
JSON string; the reply carries its ``repr`` under ``text/plain``.

Both hosts use this module: the server extension (async client on the server's kernel
manager) and the headless engine (blocking client on its own kernel).
"""

from __future__ import annotations

import ast
import json
from typing import Any

EXPRESSION_KEY = "dcpilot"


class ProbeError(RuntimeError):
    """The kernel could not evaluate a probe (kernel_tools missing, bad input, ...)."""

    def __init__(self, message: str, ename: str = "", evalue: str = "") -> None:
        super().__init__(message)
        self.ename = ename
        self.evalue = evalue


def probe_expression(function: str, *args: Any, **kwargs: Any) -> str:
    """Build the expression that calls ``kernel_tools.probes.<function>`` in the kernel.

    Arguments are passed as Python literals (``repr`` of JSON-like values), never as code,
    so a frame name or a path cannot inject anything into the expression.
    """
    values = list(args) + list(kwargs.values())
    for value in values:
        ast.literal_eval(repr(value))  # raises for anything that is not a plain literal
    parts = [repr(a) for a in args] + [f"{k}={v!r}" for k, v in kwargs.items() if k.isidentifier()]
    return f"__import__('kernel_tools.probes', fromlist=['_']).{function}({', '.join(parts)})"


def execute_request_content(expression: str) -> dict[str, Any]:
    """The content of a silent ``execute_request`` evaluating ``expression``."""
    return {
        "code": "",
        "silent": True,
        "store_history": False,
        "user_expressions": {EXPRESSION_KEY: expression},
        "allow_stdin": False,
        "stop_on_error": False,
    }


def _words(ename: str, evalue: str) -> str:
    """The kernel's error as the user reads it: its message, then its kind when that adds to it
    (an interrupt or an empty message says nothing without it)."""
    if ename == "KeyboardInterrupt":
        return "interrupted"
    evalue = " ".join(str(evalue or "").split())
    if not evalue:
        return f"{ename or 'an error'} without a message"
    return f"{ename}: {evalue}" if ename else evalue


def parse_reply(reply_content: dict[str, Any]) -> Any:
    """Decode the JSON value a probe returned, or raise :class:`ProbeError`."""
    if reply_content.get("status") != "ok":
        ename, evalue = reply_content.get("ename", ""), reply_content.get("evalue", "")
        raise ProbeError(f"the kernel could not run the co-pilot's request: {_words(ename, evalue)}",
                         ename, evalue)
    result = reply_content.get("user_expressions", {}).get(EXPRESSION_KEY)
    if result is None:
        raise ProbeError("the kernel answered the co-pilot's request without a value")
    if result.get("status") != "ok":
        ename, evalue = result.get("ename", ""), result.get("evalue", "")
        if ename in ("ModuleNotFoundError", "ImportError") and "kernel_tools" in evalue:
            raise ProbeError(
                "kernel_tools is not installed in this notebook's kernel environment; "
                "install jupyter-dcpilot there (pip install jupyter-dcpilot)",
                ename,
                evalue,
            )
        raise ProbeError(_words(ename, evalue), ename, evalue)
    text = result.get("data", {}).get("text/plain", "")
    # the kernel sends repr() of the JSON string the probe returned
    return json.loads(ast.literal_eval(text))
