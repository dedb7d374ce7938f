"""No function in kernel_tools or jupyter_dcpilot is longer than 80 lines: a longer one holds several concepts, each
of which deserves a name (and a docstring saying why) of its own."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAX_LINES = 80  # from the ``def`` line to the last line of the body, decorators excluded


def long_functions(package: Path, max_lines: int = MAX_LINES) -> list[str]:
    """``path:line name (N lines)`` of every function or method in ``package`` over ``max_lines``."""
    found = []
    for path in sorted(package.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = node.end_lineno - node.lineno + 1
                if lines > max_lines:
                    found.append(f"{path.relative_to(package.parent)}:{node.lineno} {node.name} ({lines} lines)")
    return found


def test_no_function_is_over_80_lines() -> None:
    assert long_functions(ROOT / "kernel_tools") + long_functions(ROOT / "jupyter_dcpilot") == []


def test_the_count_sees_a_long_function(tmp_path: Path) -> None:
    # a method counts, from its def line to its last line; decorators do not
    package = tmp_path / "pkg"
    package.mkdir()
    body = "\n".join(f"        x{i} = {i}" for i in range(79))
    (package / "mod.py").write_text(
        "class C:\n"
        "    @staticmethod\n    @staticmethod\n    def short():\n        pass\n\n"
        f"    def long(self):\n{body}\n        return 1\n"
    )
    assert long_functions(package, max_lines=81) == []
    assert long_functions(package, max_lines=80) == ["pkg/mod.py:7 long (81 lines)"]
    assert long_functions(package, max_lines=3) == ["pkg/mod.py:7 long (81 lines)"]
