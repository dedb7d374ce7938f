"""The kernel_tools package: every public name resolves to what it names."""

from __future__ import annotations

import importlib
import pkgutil
import subprocess
import sys
import types

import kernel_tools


def test_public_names_are_not_shadowed_by_submodules() -> None:
    # importing every submodule first is what a user's session eventually does
    for module in pkgutil.walk_packages(kernel_tools.__path__, "kernel_tools."):
        importlib.import_module(module.name)
    for name in kernel_tools.__all__:
        value = getattr(kernel_tools, name)
        assert not isinstance(value, types.ModuleType), f"kernel_tools.{name} is a module, not the public object"


def test_import_is_light() -> None:
    # the panel probes run `import kernel_tools` in the user's kernel after every cell
    code = "import sys, kernel_tools; print(sorted(m for m in ('torch', 'sklearn', 'cleanlab', 'lifelines', 'hyperimpute') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
