"""What the co-pilot's REST API accepts: body size, JSON depth and every field's length.

A session's request becomes part of its sidecar, which is rewritten after every change: a
10 MB ``goal`` would be rewritten hundreds of times, and a 200 000-deep JSON array exhausted
the parser's stack (a 500). Every POST body is refused early instead: 413 above
:data:`MAX_BODY_BYTES`, 400 for a body that is not a JSON object, nests deeper than
:data:`MAX_DEPTH`, or breaks its endpoint's schema below (one line naming the field).
"""

from __future__ import annotations

import json
from typing import Any

import tornado.web

from kernel_tools.vocabulary import TASK_KINDS

from .engine import decisions_file
from .engine.plan_edits import OPS
from .engine.validation import depth, problem

MAX_BODY_BYTES = 64 * 1024  # the largest legitimate body, a decisions object, is a few kB
MAX_DEPTH = 6  # body -> approve -> gate -> column -> choice
MAX_PATH = 4096  # PATH_MAX
MAX_NAME = 1000  # a column name
MAX_TEXT = 4000  # free text: a goal, a rationale
MAX_ID = 200  # ids and short words: choice, checkpoint, model, frame
MAX_ENTRIES = 1000  # columns named in one request


def _text(limit: int, **more: Any) -> dict[str, Any]:
    return {"type": "string", "maxLength": limit, **more}


def _optional(schema: dict[str, Any]) -> dict[str, Any]:
    return {"anyOf": [{"type": "null"}, schema], "description": schema.get("description", "null or a value")}


SESSION_BODY: dict[str, Any] = {
    "type": "object",
    "required": ["path", "frame"],
    "properties": {
        "path": _text(MAX_PATH, minLength=1),
        "frame": _text(MAX_ID, minLength=1),
        "target": _optional(_text(MAX_NAME, description=f"a column name of at most {MAX_NAME} characters")),
        "time": _optional(_text(MAX_NAME, description=f"a column name of at most {MAX_NAME} characters")),
        "task": _optional({"enum": ["auto", *TASK_KINDS], "description": f"one of {['auto', *TASK_KINDS]}"}),
        "goal": _optional(_text(MAX_TEXT, description=f"a text of at most {MAX_TEXT} characters")),
        "approve": _optional({"anyOf": [{"enum": ["ask", "recommended", "none"]}, {"type": "object"}],
                              "description": "'ask', 'recommended', 'none' or an object of choices"}),
        "planner": _optional(_text(MAX_ID, description="'rules' or 'claude'")),
        "model": _optional(_text(MAX_ID, description=f"a model id of at most {MAX_ID} characters")),
        "share": _optional(_text(MAX_ID, description="'schema' or 'samples'")),
        "budget": _optional({"anyOf": [
            {"type": "number", "minimum": 1},
            {"type": "object", "maxProperties": 40, "propertyNames": {"maxLength": MAX_ID},
             "additionalProperties": {"type": "number", "minimum": 1}},
            {"type": "array", "maxItems": 40, "items": _text(MAX_ID)}],
            "description": "seconds for every step, or an object of step -> seconds"}),
        "replace": {"type": "boolean"},
        "join": _optional({"type": "array", "maxItems": 20, "uniqueItems": True, "items": _text(MAX_ID, minLength=1),
                           "description": "other DataFrames of the kernel to join with the frame"}),
        "dictionary": _optional(_text(MAX_PATH, minLength=1, description="the codebook's path, relative to the "
                                      "notebook's folder")),
        "events": _optional(_text(MAX_PATH, minLength=1, description="REDCap's instrument-event mapping, "
                                  "relative to the notebook's folder")),
    },
}

DECISION_BODY: dict[str, Any] = {
    "type": "object",
    "required": ["choice"],
    "properties": {"choice": _text(MAX_ID, minLength=1), "rationale": _text(MAX_TEXT)},
}

TIMELINE_BODY: dict[str, Any] = {
    "type": "object",
    "required": ["column", "group"],
    "properties": {"column": _text(MAX_NAME, minLength=1, description="a column on the timeline"),
                   "group": _text(MAX_ID, minLength=1, description="baseline, during_follow_up, "
                                  "at_or_after_outcome or unknown"),
                   "rationale": _text(MAX_TEXT)},
}

INFERENCE_BODY: dict[str, Any] = {
    "type": "object",
    "required": ["value"],
    "properties": {"value": {"type": ["string", "number", "boolean", "null"],
                             "description": "the inferred value (confirm it) or one of its alternatives"},
                   "rationale": _text(MAX_TEXT)},
}

UNDO_BODY: dict[str, Any] = {
    "type": "object",
    "required": ["checkpoint"],
    "properties": {"checkpoint": _text(MAX_ID, minLength=1)},
}

_NAMES = {"type": "array", "maxItems": MAX_ENTRIES, "items": _text(MAX_NAME, minLength=1),
          "description": f"a list of at most {MAX_ENTRIES} column names"}

PLAN_BODY: dict[str, Any] = {
    "type": "object",
    "required": ["op"],
    "additionalProperties": False,
    "properties": {
        "op": {"enum": list(OPS), "description": f"one of {list(OPS)}"},
        "step": _text(MAX_ID, minLength=1, description="a step id, e.g. 's4'"),
        "episode": _text(MAX_ID, minLength=1, description="an episode id of the library, e.g. 'outliers'"),
        "columns": _NAMES,
        "params": {"type": "object", "maxProperties": 20, "propertyNames": {"maxLength": MAX_ID},
                   "additionalProperties": {"anyOf": [{"type": ["number", "boolean", "null"]},
                                                      _text(MAX_NAME), _NAMES]},
                   "description": "parameter names and values (numbers, words or lists of names)"},
        "before": _text(MAX_ID, minLength=1, description="a step id"),
        "after": _text(MAX_ID, minLength=1, description="a step id"),
        "reason": _text(MAX_TEXT, description=f"a text of at most {MAX_TEXT} characters"),
    },
}

IMPACT_BODY: dict[str, Any] = {
    "type": "object",
    "required": ["action"],
    "additionalProperties": False,
    "properties": {"action": {"enum": ["start", "cancel"], "description": "'start' or 'cancel'"}},
}


def check_size(body: bytes) -> None:
    """413 for a body larger than :data:`MAX_BODY_BYTES`."""
    if len(body) > MAX_BODY_BYTES:
        raise tornado.web.HTTPError(413, f"the request body is {len(body):,} bytes; the co-pilot accepts "
                                         f"at most {MAX_BODY_BYTES // 1024} KiB")


def parse_body(body: bytes, schema: dict[str, Any]) -> dict[str, Any]:
    """The JSON object in ``body`` once it passes every limit (HTTPError 413/400 otherwise)."""
    check_size(body)
    try:
        data = json.loads(body or b"{}")
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise tornado.web.HTTPError(400, f"the request body is not JSON: {error}") from None
    except RecursionError:
        raise tornado.web.HTTPError(400, f"the request body nests deeper than {MAX_DEPTH} levels") from None
    if not isinstance(data, dict):
        raise tornado.web.HTTPError(400, "the request body must be a JSON object")
    if depth(data, MAX_DEPTH) > MAX_DEPTH:
        raise tornado.web.HTTPError(400, f"the request body nests deeper than {MAX_DEPTH} levels")
    found = problem(data, schema, what="the request body")
    if found is None and isinstance(data.get("approve"), dict):
        try:
            decisions_file.check(data["approve"], "the request body: 'approve'")
        except ValueError as error:
            found = str(error)
    if found is not None:
        raise tornado.web.HTTPError(400, found)
    return data


__all__ = ["DECISION_BODY", "IMPACT_BODY", "MAX_BODY_BYTES", "MAX_DEPTH", "PLAN_BODY", "SESSION_BODY", "UNDO_BODY",
           "check_size", "parse_body"]
