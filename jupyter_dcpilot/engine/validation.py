"""JSON inputs checked against a JSON Schema, with the first problem said in one line.

fastjsonschema (already a dependency of nbformat) compiles a schema into a plain function:
importing it takes milliseconds, where ``jsonschema`` builds an RFC 3987 grammar on import
(several seconds on a busy machine), too slow for a command line that must answer a typo at
once. Messages name the field and the rule, never echo a (possibly huge) value.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from typing import Any

import fastjsonschema


def did_you_mean(name: str, choices: list[str] | tuple[str, ...]) -> str:
    """`` (did you mean 'x'?)`` for close names in ``choices`` (ignoring case), else ``""``."""
    by_lower: dict[str, str] = {}
    for choice in choices:
        by_lower.setdefault(str(choice).lower(), str(choice))
    close = [by_lower[c] for c in difflib.get_close_matches(str(name).lower(), list(by_lower), n=3, cutoff=0.6)]
    if not close:
        return ""
    return f" (did you mean {' or '.join(repr(c) for c in close)}?)"


def depth(value: Any, limit: int) -> int:
    """How deeply lists and objects nest in ``value``, counted up to ``limit + 1`` (iterative:
    a hostile document cannot exhaust the stack here)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, (dict, list)):
            deepest = max(deepest, level)
            if level > limit:
                return level
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, level + 1) for child in children)
    return deepest


_validators: dict[int, tuple[dict[str, Any], Callable[[Any], Any]]] = {}


def _validator(schema: dict[str, Any]) -> Callable[[Any], Any]:
    """The schema compiled once (the schemas are module constants)."""
    entry = _validators.get(id(schema))
    if entry is None or entry[0] is not schema:
        entry = _validators[id(schema)] = (schema, fastjsonschema.compile(schema))
    return entry[1]


def problem(instance: Any, schema: dict[str, Any], *, what: str = "the input") -> str | None:
    """None when ``instance`` satisfies ``schema`` (draft 7), else its first problem in words."""
    try:
        _validator(schema)(instance)
    except fastjsonschema.JsonSchemaValueException as error:
        return _describe(error, what)
    return None


def _where(path: list[Any], what: str) -> str:
    inner = [str(p) for p in path[1:]]  # path[0] is fastjsonschema's name for the root
    return what if not inner else f"{what}: {'.'.join(repr(p) for p in inner)}"


def _describe(error: fastjsonschema.JsonSchemaValueException, what: str) -> str:
    rule, definition, value = error.rule, error.rule_definition, error.value
    where = _where(list(error.path or []), what)
    if rule == "propertyNames" and isinstance(value, dict):
        allowed = list((definition or {}).get("enum") or [])
        limit = (definition or {}).get("maxLength")
        for key in value:
            if allowed and key not in allowed:
                return f"{where}: unknown key {key!r}{did_you_mean(key, allowed)}; expected one of {allowed}"
            if limit is not None and len(key) > limit:
                return f"{where}: a key is longer than {limit} characters"
    if rule == "type":
        kinds = definition if isinstance(definition, list) else [definition]
        return f"{where} must be {' or '.join(_KIND.get(k, str(k)) for k in kinds)}, not {_kind_of(value)}"
    if rule == "maxLength":
        return f"{where} is longer than {definition} characters"
    if rule == "minLength":
        return f"{where} must not be empty"
    if rule == "maxProperties":
        return f"{where} has more than {definition} entries"
    if rule == "maxItems":
        return f"{where} has more than {definition} items"
    if rule in ("enum", "const"):
        options = definition if rule == "enum" else [definition]
        return f"{where} must be one of {options}, not {_short(value)}"
    if rule == "required":
        return f"{where} is missing {definition}"
    if rule in ("anyOf", "oneOf"):  # the schema node says in words what it accepts
        accepted = (error.definition or {}).get("description")
        return f"{where} must be {accepted}" if accepted else f"{where} has none of the accepted forms"
    if rule == "pattern":
        return f"{where} is not of the expected form"
    return f"{where}: {_short(error.message)}"


_KIND = {"object": "an object", "array": "a list", "string": "a string", "integer": "an integer",
         "number": "a number", "boolean": "true or false", "null": "null"}


def _kind_of(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    for python, kind in ((dict, "an object"), (list, "a list"), (str, "a string"), ((int, float), "a number")):
        if isinstance(value, python):
            return kind
    return "null" if value is None else type(value).__name__


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


__all__ = ["depth", "did_you_mean", "problem"]
