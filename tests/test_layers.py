"""The layers of docs/architecture.md, checked on the source: kernel_tools never imports the
co-pilot or the server, the engine never imports tornado or the Jupyter server, and no module
imports itself back through others at import time."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("kernel_tools", "jupyter_dcpilot")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def top_level_imports(path: Path) -> set[str]:
    """Modules imported when ``path`` is imported: module level only (not inside functions, not
    under ``if TYPE_CHECKING``), relative imports resolved."""
    tree = ast.parse(path.read_text(), str(path))
    package = module_name(path) if path.name == "__init__.py" else module_name(path).rpartition(".")[0]
    found: set[str] = set()

    def visit(nodes: list[ast.stmt]) -> None:
        for node in nodes:
            if isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*anchor, *([base] if base else [])])
                found.add(base)
                found.update(f"{base}.{alias.name}" for alias in node.names)
            elif isinstance(node, ast.If) and "TYPE_CHECKING" not in ast.unparse(node.test):
                visit(node.body + node.orelse)
            elif isinstance(node, ast.Try):
                visit(node.body + [s for h in node.handlers for s in h.body] + node.orelse + node.finalbody)

    visit(tree.body)
    return found


def sources(package: str) -> list[Path]:
    return sorted((ROOT / package).rglob("*.py"))


@pytest.mark.parametrize(("package", "forbidden"), [
    ("kernel_tools", ("jupyter_dcpilot", "jupyter_server", "tornado")),
    ("jupyter_dcpilot/engine", ("tornado", "jupyter_server")),
])
def test_a_layer_imports_nothing_above_it(package, forbidden):
    wrong = {f"{p.relative_to(ROOT)}: {m}" for p in sources(package) for m in top_level_imports(p)
             if m.split(".")[0] in forbidden}
    # function-level imports count too: a lazy import is still a dependency
    for p in sources(package):
        for node in ast.walk(ast.parse(p.read_text())):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else [])
            wrong.update(f"{p.relative_to(ROOT)}: {n}" for n in names if n.split(".")[0] in forbidden)
    assert not wrong, sorted(wrong)


def census():
    """scripts/typing_census.py, which reads the import graph the way this test judges it."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("typing_census", ROOT / "scripts" / "typing_census.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_no_import_cycles():
    """No module imports itself back through others — at import time, and counting the imports
    inside functions too (a lazy import is still a dependency; only what a type checker reads or a
    script run runs is left out). The packages and the benchmarks alike."""
    assert census().import_cycles(everywhere=False) == []
    assert census().import_cycles(everywhere=True) == [], "an import cycle (see scripts/typing_census.py)"


def test_task_kinds_are_compared_as_vocabulary_members():
    """A task kind is named as its ``TaskKind`` member, never spelled as a string literal, in both
    packages (the census counts ``kind == "survival"`` and the like)."""
    module = census()
    assert module.literal_comparisons(module.sources(*module.PACKAGES))["task_kind"] == 0


def test_the_cycle_reader_sees_function_level_and_package_imports(tmp_path):
    tree = tmp_path / "pkg"
    tree.mkdir()
    (tree / "__init__.py").write_text("")
    (tree / "a.py").write_text("def f():\n    from pkg import b\n")
    (tree / "b.py").write_text("import typing\nif typing.TYPE_CHECKING:\n    import pkg.c\n"
                               "def g():\n    import pkg.a\n")
    (tree / "c.py").write_text("if __name__ == '__main__':\n    import pkg.a\n")
    module = census()
    module.ROOT = tmp_path
    module.PACKAGES = ("pkg",)
    assert module.import_cycles(everywhere=True, folders=("pkg",)) == [["pkg.a", "pkg.b"]]
    assert module.import_cycles(everywhere=False, folders=("pkg",)) == []
