"""The decisions file: expert answers given ahead of time (``--approve FILE``, the panel's
policy, ``%dcplan --approve FILE``), and the JSON Schema it must satisfy.

A decisions file maps gates (and optionally columns) to option ids::

    {"*": "recommended",
     "leakage": "drop",
     "outliers": {"age": "keep", "*": "clip"},
     "columns": {"bmi": "keep"}}

- ``"<gate>": "<option>"`` answers every decision of that gate; an object answers per column,
  with ``"*"`` for the columns it does not name.
- ``"columns": {"<column>": "<option>"}`` answers any gate on that column (it wins).
- A choice may also be ``"recommended"`` (the recommended option) or ``"ask"`` (a human).
- ``"*": "recommended"`` takes the recommended option for every gate the file does not name.
- LLM-written custom code is never approved by a file: it is always shown to a human.
- ``"timeline": {"<column>": "<place>"}`` places columns on the column timeline (``baseline``,
  ``follow_up``, ``outcome``, ``unknown`` ...): the expert's word on when each is known, which
  confirms its timing; a column placed after the prediction time is asked to be dropped.
- ``"plan": [...]`` edits the plan ahead of time (see :mod:`.plan_edits`), each edit matched
  by episode (and columns) whenever such a step is proposed::

      {"plan": [{"op": "skip", "episode": "outliers", "columns": ["age"]},
                {"op": "params", "episode": "outliers", "params": {"threshold": 3}},
                {"op": "add", "episode": "deduplicate"}]}

  No edit answers a gate: a step added with a gate still asks (or takes this file's answer).

The gates are those of :data:`kernel_tools.findings.GATES` plus ``task`` (confirming what is
predicted). An option id that a decision does not offer is an error when that decision comes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kernel_tools.findings import GATES

from .edit_checks import check_strings
from .episodes import EPISODES, library
from .plan_edits import check_standing
from .structure import GROUP_WORDS
from .validation import depth, problem

ANSWERABLE_GATES = ("task", *GATES)
MAX_CHOICE = 200  # option ids are short words (drop, keep, impute_median)
MAX_COLUMN = 1000  # a column name
MAX_ENTRIES = 1000  # columns named in one object
MAX_FILE_BYTES = 1 << 20

_CHOICE = {"type": "string", "minLength": 1, "maxLength": MAX_CHOICE,
           "description": "an option id of the decision (e.g. drop, keep, clip), 'recommended' or 'ask'"}
_COLUMNS = {"type": "array", "minItems": 1, "maxItems": MAX_ENTRIES, "items": {"type": "string", "maxLength": MAX_COLUMN},
            "description": "column names"}
_PLAN_EDIT = {
    "type": "object",
    "required": ["op", "episode"],
    "additionalProperties": False,
    "properties": {
        "op": {"enum": ["skip", "add", "params"], "description": "skip, add or params (moves and reopens "
                                                                 "need the steps, which a file cannot name)"},
        # the library's planned episodes (custom steps come from free-text instructions, not files)
        "episode": {"enum": sorted(e.id for e in EPISODES), "description": "an episode id"},
        "columns": _COLUMNS,
        "params": {"type": "object", "minProperties": 1,
                   "propertyNames": {"enum": sorted({k for e in library().values() for k in e.edit_params})},
                   "additionalProperties": {"anyOf": [{"type": ["number", "string", "null"]}, _COLUMNS]},
                   "description": "parameter -> value (see the parameters each episode takes)"},
        "reason": {"type": "string", "maxLength": 4000},
    },
}
_BY_COLUMN = {"type": "object", "maxProperties": MAX_ENTRIES, "propertyNames": {"maxLength": MAX_COLUMN},
              "additionalProperties": _CHOICE,
              "description": "column name -> choice; '*' for the columns not named"}

SCHEMA: dict[str, Any] = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "$id": "https://jupyter-dcpilot/decisions-file.schema.json",
    "title": "jupyter-dcpilot decisions file",
    "description": "Answers to the co-pilot's expert gates given ahead of time (see docs/demo.md).",
    "type": "object",
    "propertyNames": {"enum": ["*", "columns", "plan", "timeline", *ANSWERABLE_GATES]},
    "properties": {
        "*": {"enum": ["recommended", "ask"],
              "description": "what to do at a gate the file does not name"},
        "columns": _BY_COLUMN,
        "plan": {"type": "array", "maxItems": 100, "items": _PLAN_EDIT,
                 "description": "plan edits given ahead of time: skip, add or params by episode"},
        "timeline": {"type": "object", "maxProperties": MAX_ENTRIES, "propertyNames": {"maxLength": MAX_COLUMN},
                     "additionalProperties": {"enum": sorted(GROUP_WORDS)},
                     "description": "column -> its place on the column timeline (baseline, follow_up, "
                                    "outcome, unknown ...): the expert's word on when it is known"},
        **{gate: {"anyOf": [_CHOICE, _BY_COLUMN],
                  "description": "an option id, or an object mapping columns to option ids"}
           for gate in ANSWERABLE_GATES},
    },
}


def check(choices: Any, source: str = "the decisions") -> dict[str, Any]:
    """``choices`` when it satisfies :data:`SCHEMA`, else ValueError saying what is wrong in
    one line (``source`` names the file or field in the message)."""
    if isinstance(choices, dict) and "custom_code" in choices:
        raise ValueError(f"{source}: custom code is never approved by a decisions file; it is "
                         "always shown to you first (remove 'custom_code')")
    check_strings(choices, source)  # no control character anywhere (edit_checks.py)
    answers = {k: v for k, v in choices.items() if k != "plan"} if isinstance(choices, dict) else choices
    if depth(answers, 3) > 3:
        raise ValueError(f"{source} nests deeper than gate -> column -> choice")
    if isinstance(choices, dict) and depth(choices.get("plan"), 4) > 4:
        raise ValueError(f"{source}: 'plan' nests deeper than edit -> params -> columns")
    found = problem(choices, SCHEMA, what=source)
    if found is not None:
        raise ValueError(found)
    if isinstance(choices, dict) and "plan" in choices:
        check_standing(choices["plan"], library(), source)
    return choices


def read(path: str | Path) -> dict[str, Any]:
    """A decisions file, parsed and checked (ValueError in one line when it is not one)."""
    path = Path(path)
    if path.stat().st_size > MAX_FILE_BYTES:
        raise ValueError(f"decisions file {path} is larger than {MAX_FILE_BYTES >> 20} MiB")
    try:
        choices = json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"decisions file {path} is not valid JSON: {exc}") from None
    except RecursionError:
        raise ValueError(f"decisions file {path} nests too deeply") from None
    return check(choices, f"decisions file {path}")


__all__ = ["ANSWERABLE_GATES", "SCHEMA", "check", "read"]
