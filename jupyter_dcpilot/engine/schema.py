"""The JSON Schema of findings, options and decisions, exported from their Python types, and the
panel's TypeScript types generated from it.

The Python types are the one declaration: ``Finding`` and ``Option`` (``kernel_tools/findings.py``),
``Decision`` (``session.py``) and the parts of a decision (``wire.py``). Their fields become the
schema's properties, in order; every field is required, since ``to_dict`` / ``asdict`` always
write it (a dataclass field with ``metadata={"may_be_absent": True}`` and a ``TypedDict``'s
optional keys are the exceptions). ``Annotated[str, Gate]`` refers to a vocabulary of
``kernel_tools/vocabulary.py``; a ``TypedDict`` gives a dict its shape, and
``Annotated[dict, Wire(Decision)]`` a JSON value built to one of these types.

Regenerate both files after changing one of those types (``tests/test_schema.py`` fails until then)::

    python -m jupyter_dcpilot.engine.schema --json > jupyter_dcpilot/engine/findings.schema.json
    python -m jupyter_dcpilot.engine.schema --typescript > labextension/src/findingTypes.ts
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import sys
import textwrap
import types
from enum import Enum
from typing import Annotated, Any, Literal, Union, get_args, get_origin, get_type_hints, is_typeddict

from kernel_tools.findings import Finding, Option
from kernel_tools.vocabulary import VOCABULARIES, vocabulary_values

from .session import Decision
from .wire import Wire

ROOTS: tuple[type, ...] = (Finding, Option, Decision)
DRAFT = "https://json-schema.org/draft/2020-12/schema"

Schema = dict[str, Any]


def json_schema() -> Schema:
    """The schema: one ``$defs`` entry per type (and per vocabulary) the roots refer to; validate
    one object with ``{"$ref": "#/$defs/Finding", "$defs": ...}``."""
    defs: dict[str, Schema] = {}
    for root in ROOTS:
        _schema_of(root, defs)
    return {
        "$schema": DRAFT,
        "title": "jupyter-dcpilot findings and decisions",
        "description": "Generated from the Python types by `python -m jupyter_dcpilot.engine.schema --json`: "
        "do not edit.",
        "$defs": dict(sorted(defs.items())),
    }


def schema_of(tp: Any) -> Schema:
    """The JSON Schema of another type built from these (a TypedDict of findings and decisions,
    such as the MCP tools' answers in ``jupyter_dcpilot/agent_view.py``), with its ``$defs``."""
    defs: dict[str, Schema] = {}
    root = _schema_of(tp, defs)
    return {**root, "$defs": dict(sorted(defs.items()))}


def json_text() -> str:
    """The schema as the committed file holds it (``findings.schema.json``)."""
    return json.dumps(json_schema(), indent=2) + "\n"


def _schema_of(tp: Any, defs: dict[str, Schema]) -> Schema:
    """The JSON Schema of one Python type; named types are added to ``defs`` and referred to."""
    origin = get_origin(tp)
    if origin is Annotated:
        base, *marks = get_args(tp)
        wires = [m for m in marks if isinstance(m, Wire)]
        if wires:
            return _schema_of(wires[0].shape, defs)
        vocabularies = [m for m in marks if isinstance(m, type) and issubclass(m, Enum)]
        refs = [_vocabulary(v, defs) for v in vocabularies]
        return _replace_strings(_schema_of(base, defs), refs[0] if len(refs) == 1 else {"anyOf": refs})
    if origin in (Union, types.UnionType):
        return {"anyOf": [_schema_of(arg, defs) for arg in get_args(tp)]}
    if origin is Literal:
        return {"enum": list(get_args(tp))}
    if origin is list or tp is list:
        args = get_args(tp)
        return {"type": "array", **({"items": _schema_of(args[0], defs)} if args else {})}
    if origin is dict or tp is dict:
        args = get_args(tp)
        values = _schema_of(args[1], defs) if args else {}
        return {"type": "object", **({"additionalProperties": values} if values else {})}
    if isinstance(tp, type) and (dataclasses.is_dataclass(tp) or is_typeddict(tp)):
        return _define(tp, defs)
    simple = {str: "string", bool: "boolean", int: "integer", float: "number", type(None): "null"}
    if tp is Any:
        return {}
    if tp in simple:
        return {"type": simple[tp]}
    raise TypeError(f"no JSON Schema for {tp!r}: add it to jupyter_dcpilot/engine/schema.py")


def _define(cls: type, defs: dict[str, Schema]) -> Schema:
    """Add a dataclass or TypedDict to ``defs`` (once) and return a reference to it."""
    ref = {"$ref": f"#/$defs/{cls.__name__}"}
    if cls.__name__ in defs:
        return ref
    defs[cls.__name__] = {}  # a placeholder, so a type that refers to itself ends here
    hints = get_type_hints(cls, include_extras=True)
    if is_typeddict(cls):
        required = [k for k in hints if k in cls.__required_keys__]  # type: ignore[attr-defined]
        names = required + [k for k in hints if k not in cls.__required_keys__]  # type: ignore[attr-defined]
    else:
        fields = dataclasses.fields(cls)
        computed = list(getattr(cls, "wire_properties", ()))
        for name in computed:  # properties to_dict writes, typed by their getter
            hints[name] = get_type_hints(getattr(cls, name).fget)["return"]
        names = computed + [f.name for f in fields]
        required = computed + [f.name for f in fields if not f.metadata.get("may_be_absent")]
    schema: Schema = {"type": "object"}
    doc = cls.__dict__.get("__doc__")
    if doc and not doc.startswith(f"{cls.__name__}("):  # not the signature dataclass writes
        schema["description"] = " ".join(inspect.cleandoc(doc).split())
    schema["properties"] = {name: _schema_of(hints[name], defs) for name in names}
    schema["required"] = required
    schema["additionalProperties"] = False
    defs[cls.__name__] = schema
    return ref


def _vocabulary(vocabulary: type[Enum], defs: dict[str, Schema]) -> Schema:
    name = next((k for k, v in VOCABULARIES.items() if v is vocabulary), None)  # its name in the panel
    if name is None:
        raise TypeError(f"{vocabulary.__name__} is not one of kernel_tools.vocabulary.VOCABULARIES")
    defs[name] = {
        "type": "string",
        "enum": list(vocabulary_values(name, _every_finding_kind() if name == "FindingKind" else None)),
        "description": " ".join(inspect.cleandoc(vocabulary.__doc__ or name).split()),
    }
    return {"$ref": f"#/$defs/{name}"}


def _every_finding_kind() -> tuple[str, ...]:
    # the detectors' own kinds too: imported only here (pandas and the detectors), for the schema
    from kernel_tools.diagnosis.registry import every_finding_kind

    return every_finding_kind()


def _replace_strings(schema: Schema, by: Schema) -> Schema:
    """``schema`` with each plain ``{"type": "string"}`` in it replaced by ``by``."""
    if schema == {"type": "string"}:
        return by
    if "anyOf" in schema:
        return {**schema, "anyOf": [_replace_strings(s, by) for s in schema["anyOf"]]}
    if "items" in schema:
        return {**schema, "items": _replace_strings(schema["items"], by)}
    if json.dumps(schema).find('"string"') >= 0:
        raise TypeError(f"a vocabulary can annotate a string, a list or union of them, not {schema}")
    return schema


# -- TypeScript -----------------------------------------------------------------------------------


def typescript(schema: Schema | None = None) -> str:
    """The schema's object types as TypeScript interfaces (``labextension/src/findingTypes.ts``):
    ``IFinding``, ``IOption``, ``IDecision`` ...; the vocabularies are imported from the panel's
    ``vocabulary.ts`` (generated from the same module)."""
    defs = (schema or json_schema())["$defs"]
    used = sorted(name for name in defs if name in VOCABULARIES)
    lines = [
        "// Generated by `python -m jupyter_dcpilot.engine.schema --typescript > labextension/src/findingTypes.ts`",
        "// from the Python types of findings and decisions (see jupyter_dcpilot/engine/schema.py): do not edit.",
        "",
    ]
    if used:
        lines += [f"import {{ {', '.join(used)} }} from './vocabulary';", ""]
    for name, definition in defs.items():
        if name in VOCABULARIES:
            continue
        if "description" in definition:
            lines += _doc(definition["description"])
        lines.append(f"export interface I{name} {{")
        required = set(definition["required"])
        for prop, prop_schema in definition["properties"].items():
            lines.append(f"  {prop}{'' if prop in required else '?'}: {_ts(prop_schema)};")
        lines += ["}", ""]
    return "\n".join(lines)


def _doc(text: str, width: int = 100) -> list[str]:
    """A JSDoc comment, on one line when it fits in ``width``."""
    text = text.replace("``", "`")
    if len(text) + 7 <= width:
        return [f"/** {text} */"]
    return ["/**", *(f" * {line}" for line in textwrap.wrap(text, width - 3)), " */"]


def _ts(schema: Schema) -> str:
    """The TypeScript type of a (sub)schema of :func:`json_schema`."""
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[1]
        return name if name in VOCABULARIES else f"I{name}"
    if "anyOf" in schema:
        return " | ".join(_ts(s) for s in schema["anyOf"])
    if "enum" in schema:
        return " | ".join(json.dumps(v).replace('"', "'") for v in schema["enum"])
    kind = schema.get("type")
    if kind == "array":
        item = _ts(schema.get("items", {}))
        return f"({item})[]" if " | " in item else f"{item}[]"
    if kind == "object":
        return f"{{ [key: string]: {_ts(schema.get('additionalProperties', {}))} }}"
    return {
        "string": "string",
        "boolean": "boolean",
        "integer": "number",
        "number": "number",
        "null": "null",
        None: "unknown",
    }[kind]


def main(argv: list[str]) -> int:
    if argv == ["--json"]:
        sys.stdout.write(json_text())
    elif argv == ["--typescript"]:
        sys.stdout.write(typescript())
    else:
        sys.stderr.write("usage: python -m jupyter_dcpilot.engine.schema --json | --typescript\n")
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
