"""One validator for what the expert sends to steer a run: plan edits (the panel, the REST API,
the magics, the chat) and decisions files (``--approve FILE``, the start request's ``approve``,
``%dcplan --approve``), applied before anything acts on them.

Checked here, with no session or kernel needed, so a decisions file is refused before any
kernel starts: every string free of control characters (a NUL in a reason made the step's cell
a SyntaxError, and the step vanished), every number finite and in its range (``threshold: NaN``
reached the cell as ``threshold=nan``; ``test_size: NaN`` was quietly replaced), every choice one
of its words, every list of names a list of names. What needs the session (does the step exist,
is the column in the frame, may it be skipped now) stays in :mod:`.plan_edits`.
"""

from __future__ import annotations

import math
import re
from typing import Any

from .validation import did_you_mean

# C0 and C1 controls and DEL; free text (a reason, a rationale) may hold tabs and line breaks
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_CONTROL_IN_TEXT = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
FREE_TEXT = ("reason", "rationale", "goal", "text")


def check_strings(value: Any, where: str, key: str = "") -> None:
    """ValueError naming the first string under ``value`` (keys included) that holds a control
    character; ``where`` says what is checked (``"the plan edit"``, ``"decisions file x.json"``)."""
    if isinstance(value, str):
        pattern = _CONTROL_IN_TEXT if key in FREE_TEXT else _CONTROL
        found = pattern.search(value)
        if found is not None:
            field = f"'{key}'" if key else "a value"
            raise ValueError(f"{where}: {field} holds the control character {found.group()!r} at "
                             f"position {found.start()}: remove it")
    elif isinstance(value, dict):
        for k, v in value.items():
            check_strings(k, where)
            check_strings(v, where, str(k))
    elif isinstance(value, (list, tuple)):
        for v in value:
            check_strings(v, where, key)


def check_value(key: str, spec: dict[str, Any], value: Any) -> None:
    """One parameter's value against its spec (an episode's ``edit_params`` entry), without the
    session: a ``columns`` value is only checked to be a list of names here (the frame says
    whether they exist)."""
    kind = spec["kind"]
    if kind == "choice":
        if value not in spec["choices"]:
            raise ValueError(f"{key} must be one of {spec['choices']}, not {value!r}"
                             f"{did_you_mean(str(value), spec['choices'])}")
    elif kind == "number":
        if value is None and spec.get("optional"):
            return
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"{key} must be a number, not {value!r}")
        if not math.isfinite(value):
            raise ValueError(f"{key} must be a finite number, not {value}")
        if spec.get("integer") and not isinstance(value, int):
            raise ValueError(f"{key} must be a whole number, not {value}")
        low, high = spec.get("min"), spec.get("max")
        if low is not None and (value < low or (spec.get("exclusive_min") and value == low)):
            raise ValueError(f"{key} must be {'above' if spec.get('exclusive_min') else 'at least'} {low}, not {value}")
        if high is not None and value > high:
            raise ValueError(f"{key} must be at most {high}, not {value}")
    elif kind == "names":
        if (not isinstance(value, list) or not value or len(value) > spec.get("max_items", 10)
                or not all(isinstance(v, str) and 0 < len(v) <= 100 for v in value)):
            raise ValueError(f"{key} must be a list of 1 to {spec.get('max_items', 10)} names")
    elif kind == "columns":
        if not isinstance(value, list) or not value or not all(isinstance(c, str) and c for c in value):
            raise ValueError(f"{key} must be a list of column names")


def check_params(episode: str, params: Any, specs: dict[str, dict[str, Any]]) -> None:
    """The ``params`` of an edit of a step of ``episode`` (whose ``edit_params`` are ``specs``):
    known names, each value by its spec, and the rules between them."""
    if not isinstance(params, dict) or not params:
        raise ValueError("a params edit needs 'params': an object of parameter names and values")
    if not specs:
        raise ValueError(f"{episode} steps have no parameters to edit")
    for key, value in params.items():
        spec = specs.get(key)
        if spec is None:
            raise ValueError(f"{episode} steps take no parameter {key!r}{did_you_mean(key, list(specs))}; "
                             f"they take {sorted(specs)}")
        check_value(key, spec, value)
    threshold = params.get("threshold")
    if params.get("method") == "isolation_forest" and isinstance(threshold, (int, float)) and threshold >= 0.5:
        raise ValueError("with isolation_forest the threshold is the share of unusual rows: below 0.5")


def check_edit(edit: Any, episodes: dict[str, Any], where: str = "the plan edit") -> None:
    """What can be said of one plan edit without the session: an object, no control character,
    a known episode for an ``add``, its parameters by their specs (ValueError in one line)."""
    if not isinstance(edit, dict):
        raise ValueError(f"{where} must be an object, not {type(edit).__name__}")
    check_strings(edit, where)
    if edit.get("op") == "add" or "episode" in edit:
        name = edit.get("episode")
        if name not in episodes:
            raise ValueError(f"{where}: unknown episode {name!r}{did_you_mean(str(name), list(episodes))}")
        try:
            if edit.get("params") is not None and edit.get("op") in ("add", "params"):
                check_params(str(name), edit["params"], episodes[name].edit_params)
            if edit.get("columns") is not None:
                check_value("columns", {"kind": "columns"}, edit["columns"])
        except ValueError as error:
            raise ValueError(f"{where}: {error}") from None


__all__ = ["FREE_TEXT", "check_edit", "check_params", "check_strings", "check_value"]
