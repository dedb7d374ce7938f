"""How typed the session's state is, counted on the source (issue 29's "Measure").

Run before and after a refactor and compare (``--json`` for a machine-readable record)::

    python scripts/typing_census.py [--json]

What it counts, in ``jupyter_dcpilot`` and ``kernel_tools`` (tests and benchmarks excepted,
unless said):

- literal comparisons: ``==``, ``!=``, ``in``, ``not in`` with a string literal (or a tuple,
  list or set of them) that is a task kind, a step status or a finding kind, where the
  vocabulary's member should be named instead (one count per literal compared);
- step statuses set as literals: ``x.status = "done"`` (and ``status=`` keywords);
- task and hints reads: ``.task["k"]`` / ``.task.get("k")`` / ``.hints[...]``: the task kept as
  a dict;
- finding keys read from dicts (``f["summary"]``, ``o.get("risk")``) in ``jupyter_dcpilot``;
- option dicts: dict literals with the keys of an ``Option`` (``id``, ``label``, ``risk``);
- dict-typed fields of the session's state (``Session``, ``Step``, ``Decision``, ``Checkpoint``,
  ``Episode``): a field whose type holds ``dict[str, Any]`` or ``Any``;
- places that assemble a session: functions that construct a ``Coordinator`` (with its session,
  policy and planner), and the functions that parse an ``approve`` setting;
- import cycles among the packages' and the benchmarks' modules, with imports inside functions
  counted too (a lazy import is still a dependency);
- mypy coverage: the lines of the files pyproject's ``[tool.mypy] files`` names, against all of
  ``jupyter_dcpilot`` and ``kernel_tools``.
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from pathlib import Path
from typing import Any

import tomllib

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kernel_tools.vocabulary import FindingKind, Gate, StepStatus, TaskKind, values  # noqa: E402

PACKAGES = ("jupyter_dcpilot", "kernel_tools")
TASK_KINDS = set(values(TaskKind))
STATUSES = set(values(StepStatus))
# a finding kind that is also a gate ("outliers", "label_issues") or a plain word is counted only
# where the other side of the comparison reads a kind
FINDING_KINDS = set(values(FindingKind))
AMBIGUOUS = set(values(Gate)) | {"outliers", "label_issues"}


def sources(*folders: str) -> list[Path]:
    return sorted(p for folder in folders for p in (ROOT / folder).rglob("*.py"))


def _literals(node: ast.expr) -> list[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return []


def literal_comparisons(paths: list[Path]) -> dict[str, int]:
    """Literal strings of the vocabularies compared with something, by vocabulary."""
    counts = {"task_kind": 0, "step_status": 0, "finding_kind": 0}
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Compare):
                continue
            sides = [node.left, *node.comparators]
            for side in sides:
                others = " ".join(ast.unparse(s) for s in sides if s is not side).lower()
                for value in _literals(side):
                    if value in TASK_KINDS:
                        counts["task_kind"] += 1
                    elif value in STATUSES and "kind" not in others:
                        counts["step_status"] += 1
                    elif value in FINDING_KINDS and (value not in AMBIGUOUS or "kind" in others):
                        counts["finding_kind"] += 1
    return counts


def status_assignments(paths: list[Path]) -> int:
    """``x.status = "done"`` and ``status="done"`` with a literal step status."""
    n = 0
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Assign):
                targets = [t for target in node.targets
                           for t in (target.elts if isinstance(target, ast.Tuple) else [target])]
                values_ = node.value.elts if isinstance(node.value, ast.Tuple) else [node.value]
                for target, value in zip(targets, values_):
                    if (isinstance(target, ast.Attribute) and target.attr == "status"
                            and isinstance(value, ast.Constant) and value.value in STATUSES):
                        n += 1
            elif isinstance(node, ast.keyword) and node.arg == "status":
                if isinstance(node.value, ast.Constant) and node.value.value in STATUSES:
                    n += 1
    return n


def dict_reads(paths: list[Path], attrs: tuple[str, ...]) -> int:
    """``<x>.attr["key"]`` and ``<x>.attr.get("key")`` for attr in ``attrs``."""
    n = 0
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) \
                    and node.value.attr in attrs and isinstance(node.slice, ast.Constant):
                n += 1
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr == "get" and isinstance(node.func.value, ast.Attribute) \
                    and node.func.value.attr in attrs:
                n += 1
    return n


FINDING_KEYS = ("kind", "severity", "summary", "evidence", "options", "risk", "action", "recommended")


def finding_key_reads(paths: list[Path]) -> int:
    """``x["summary"]`` / ``x.get("summary")`` with a key of a Finding or an Option (rough: any
    dict read with one of those keys, a task's "kind" too)."""
    n = 0
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
                n += node.slice.value in FINDING_KEYS
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get" \
                    and node.args and isinstance(node.args[0], ast.Constant):
                n += node.args[0].value in FINDING_KEYS
    return n


def option_dict_literals(paths: list[Path]) -> int:
    """Dict literals spelled like an Option (``id``, ``label`` and ``risk`` keys)."""
    n = 0
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Dict):
                keys = {k.value for k in node.keys if isinstance(k, ast.Constant)}
                n += {"id", "label", "risk"} <= keys
    return n


def dict_typed_fields() -> dict[str, list[str]]:
    """The fields of the session's state types whose type holds an untyped dict (or Any)."""
    import dataclasses

    from jupyter_dcpilot.engine import episodes, session

    out: dict[str, list[str]] = {}
    types_ = [session.Session, session.Step, session.Decision, session.Checkpoint, episodes.Episode]
    task = getattr(session, "Task", None)
    if task is not None:
        types_.append(task)
    for cls in types_:
        loose = [f.name for f in dataclasses.fields(cls) if f.compare
                 and ("dict[str, Any]" in str(f.type) or "Any" == str(f.type).strip()
                      or "dict[str, typing.Any]" in str(f.type))]
        out[cls.__name__] = loose
    return out


def assemblies(paths: list[Path]) -> dict[str, list[str]]:
    """Functions that construct a Coordinator (with its session, policy and planner), and
    functions that parse an approve setting (they compare it with "ask", "recommended", "none")."""
    coordinators: list[str] = []
    approve_parsers: set[str] = set()
    for path in paths:
        rel = str(path.relative_to(ROOT))
        tree = ast.parse(path.read_text())
        for fn in ast.walk(tree):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(fn):
                if not isinstance(node, ast.Call):
                    continue
                name = ast.unparse(node.func)
                if name.endswith("Coordinator") and not rel.endswith("engine/coordinator.py"):
                    coordinators.append(f"{rel}:{fn.name}")
            for node in ast.walk(fn):  # a parser checks the words "ask", "recommended", "none"
                if isinstance(node, ast.Compare) and any(
                        {"ask", "recommended", "none"} <= set(_literals(side))
                        or ast.unparse(side).endswith("APPROVE_MODES") for side in node.comparators):
                    approve_parsers.add(f"{rel}:{fn.name}")
    return {"coordinator_built_in": sorted(set(coordinators)), "approve_parsers": sorted(approve_parsers)}


def _module(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    if rel.parts[0] == "benchmarks":  # run as scripts: they import each other by file name
        return rel.name
    parts = list(rel.parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path, everywhere: bool, known: set[str] | frozenset[str] = frozenset()) -> set[str]:
    """Modules ``path`` imports (relative imports resolved); ``everywhere``: inside functions too.
    Never what only a type checker reads (``if TYPE_CHECKING``) or only a script run runs (``if
    __name__ == "__main__"``); ``from package import module`` is an import of that module (of
    ``known`` ones), not of the package's own names."""
    tree = ast.parse(path.read_text())
    name = _module(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in _statements(tree.body, everywhere):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            submodules = {f"{base}.{a.name}" for a in node.names} & set(known)
            found.update(submodules)
            if len(submodules) < len(node.names):
                found.add(base)
                found.update(f"{base}.{a.name}" for a in node.names)
    return found


def _skipped(node: ast.stmt) -> bool:
    test = ast.unparse(node.test) if isinstance(node, ast.If) else ""
    return "TYPE_CHECKING" in test or "__main__" in test


def _statements(body: list[ast.stmt], everywhere: bool) -> list[ast.stmt]:
    """The import statements of ``body`` that run when the module is imported (``everywhere``: or
    when its functions run)."""
    out: list[ast.stmt] = []
    for node in body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            out.append(node)
        elif isinstance(node, ast.If) and _skipped(node):
            continue
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if everywhere or isinstance(node, ast.ClassDef):
                out += _statements(node.body, everywhere)
        else:
            for field in ("body", "orelse", "finalbody"):
                out += _statements(getattr(node, field, []) or [], everywhere)
            for handler in getattr(node, "handlers", []) or []:
                out += _statements(handler.body, everywhere)
    return out


def import_cycles(everywhere: bool, folders: tuple[str, ...] = (*PACKAGES, "benchmarks")) -> list[list[str]]:
    """Strongly connected groups of two or more modules (Tarjan), imports inside functions
    counted when ``everywhere``."""
    modules = {_module(p): p for p in sources(*folders)}
    # an import of one's own package (or a parent) is no edge: its __init__ ran before the module
    graph = {name: sorted({m for m in imports_of(path, everywhere, set(modules)) if m in modules and m != name
                           and not (modules[m].name == "__init__.py" and name.startswith(m + "."))})
             for name, path in modules.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    groups: list[list[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            connect(v)
    return sorted(groups)


def mypy_coverage() -> dict[str, Any]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]
    checked: set[Path] = set()
    for entry in config.get("files", []):
        path = ROOT / entry
        checked |= set(path.rglob("*.py")) if path.is_dir() else {path}
    every = set(sources(*PACKAGES))
    lines = {p: len(p.read_text().splitlines()) for p in every}
    host = [p for p in every if p.parent == ROOT / "jupyter_dcpilot"]
    return {"files_checked": len(checked & every), "files": len(every),
            "lines_checked": sum(lines[p] for p in checked & every), "lines": sum(lines.values()),
            "host_lines_unchecked": sum(lines[p] for p in host if p not in checked),
            "host_files_unchecked": sorted(str(p.relative_to(ROOT)) for p in host if p not in checked)}


def census() -> dict[str, Any]:
    paths = sources(*PACKAGES)
    cycles_top = import_cycles(everywhere=False)
    cycles_all = import_cycles(everywhere=True)
    return {
        "literal_comparisons": literal_comparisons(paths),
        "status_literal_assignments": status_assignments(paths),
        "task_and_hints_dict_reads": dict_reads(paths, ("task", "hints")),
        "option_dict_literals": option_dict_literals(paths),
        "finding_key_reads_in_host_and_engine": finding_key_reads(sources("jupyter_dcpilot")),
        "dict_typed_session_fields": dict_typed_fields(),
        "assemblies": assemblies(paths),
        "import_cycles_at_import_time": cycles_top,
        "import_cycles_with_function_imports": cycles_all,
        "mypy": mypy_coverage(),
    }


def text(result: dict[str, Any]) -> str:
    lit = result["literal_comparisons"]
    fields = result["dict_typed_session_fields"]
    asm = result["assemblies"]
    my = result["mypy"]
    lines = [
        f"literal comparisons: task kinds {lit['task_kind']}, step statuses {lit['step_status']}, "
        f"finding kinds {lit['finding_kind']}",
        f"step statuses set as literals: {result['status_literal_assignments']}",
        f"task / hints read as dicts: {result['task_and_hints_dict_reads']}",
        f"options spelled as dict literals: {result['option_dict_literals']}",
        f"finding / option keys read from dicts in jupyter_dcpilot: {result['finding_key_reads_in_host_and_engine']}",
        f"dict-typed state fields: {sum(map(len, fields.values()))} ("
        + "; ".join(f"{k}: {', '.join(v)}" for k, v in fields.items() if v) + ")",
        f"Coordinator built in {len(asm['coordinator_built_in'])} host functions: "
        + ", ".join(asm["coordinator_built_in"]),
        f"approve parsers: {len(asm['approve_parsers'])}: " + ", ".join(asm["approve_parsers"]),
        f"import cycles at import time: {len(result['import_cycles_at_import_time'])}; with imports inside "
        f"functions: {len(result['import_cycles_with_function_imports'])}",
        *[f"  {' ↔ '.join(c)}" for c in result["import_cycles_with_function_imports"]],
        f"mypy: {my['files_checked']} of {my['files']} files, {my['lines_checked']:,} of {my['lines']:,} lines; "
        f"host code unchecked: {my['host_lines_unchecked']:,} lines in {len(my['host_files_unchecked'])} files",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the counts as JSON")
    result = census()
    args = parser.parse_args()
    print(json.dumps(result, indent=2) if args.json else text(result))


if __name__ == "__main__":
    main()
