"""The two distributions: kernel_tools' public names, what each declares, the versions, and
the server without jupyter-ai."""

from __future__ import annotations

import ast
import functools
import importlib
import importlib.metadata
import json
import os
import pkgutil
import re
import runpy
import subprocess
import sys
import types
from pathlib import Path

import pytest
import tomllib

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


def test_the_command_lines_engine_imports_no_models() -> None:
    # the command line's own process runs the engine, not the models: the model audit's fold
    # checks and holdout odds are read from light modules, so it does not import scikit-learn,
    # scipy.stats or pandas beside its kernel (~4 s of CPU when nothing is compiled yet, issue 31)
    code = ("import sys, jupyter_dcpilot.cli\n"
            "from jupyter_dcpilot.engine import factory, notebook\n"
            "print(sorted(m for m in ('sklearn', 'scipy.stats', 'pandas', 'lifelines') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


# -- the two distributions: what they declare ----------------------------------------------

ROOT = Path(__file__).resolve().parent.parent


def project(path: Path) -> dict:
    return tomllib.loads(path.read_text())["project"]


def names(requirements: list[str]) -> set[str]:
    return {re.split(r"[\s\[<>=!~;]", r, maxsplit=1)[0].lower().replace("_", "-") for r in requirements}


def imported(package: Path) -> set[str]:
    """Top-level names of the modules a package imports (absolute imports only)."""
    found = set()
    for path in package.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                found |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module.split(".")[0])
    return found - set(sys.stdlib_module_names) - {"__future__", "kernel_tools", "jupyter_dcpilot"}


@functools.cache
def distributions() -> dict[str, list[str]]:
    """Which distribution provides each top-level module (one scan of the environment: a few s)."""
    return importlib.metadata.packages_distributions()


def distribution_of(module: str) -> str:
    return distributions()[module][0].lower().replace("_", "-")


def test_versions_agree() -> None:
    version = json.loads((ROOT / "package.json").read_text())["version"]
    pin = next(r for r in project(ROOT / "pyproject.toml")["dependencies"] if r.startswith("dcpilot-kernel-tools"))
    assert kernel_tools.__version__ == version == importlib.metadata.version("dcpilot-kernel-tools")
    assert pin == f"dcpilot-kernel-tools[arrow]=={version}"  # the engine's probes need the same kernel side


@pytest.mark.parametrize("package,pyproject", [("kernel_tools", "kernel_tools/pyproject.toml"),
                                               ("jupyter_dcpilot", "pyproject.toml")])
def test_every_import_is_declared(package: str, pyproject: str) -> None:
    meta = project(ROOT / pyproject)
    declared = names(meta["dependencies"])
    for extra in meta.get("optional-dependencies", {}).values():
        declared |= names(extra)
    if package == "jupyter_dcpilot":  # it also gets what its kernel side declares
        declared |= names(project(ROOT / "kernel_tools/pyproject.toml")["dependencies"])
        declared |= names(["jupyter-ai-persona-manager", "jupyterlab-chat"])  # both come with jupyter-ai
        declared |= names(["fastmcp-slim", "pydantic"])  # the MCP tools' types: with jupyter-server-mcp
    # ipykernel: only inside a kernel, where it always is (the import is guarded)
    optional = {"ipykernel"} if package == "kernel_tools" else set()
    missing = {m: distribution_of(m) for m in imported(ROOT / package) - optional
               if distribution_of(m) not in declared}
    assert not missing, f"{package} imports undeclared packages: {missing}"


def test_the_core_install_has_no_torch_tensorflow_nor_a_scikit_learn_cap() -> None:
    main, tools = project(ROOT / "pyproject.toml"), project(ROOT / "kernel_tools/pyproject.toml")
    core = main["dependencies"] + tools["dependencies"]
    assert not names(core) & {"torch", "tensorflow", "hyperimpute", "jupyter-ai", "nbclient", "catboost"}
    sklearn = next(r for r in tools["dependencies"] if r.startswith("scikit-learn"))
    assert "<" not in sklearn
    extra = tools["optional-dependencies"]["hyperimpute"]
    assert {"hyperimpute", "torch"} <= names(extra) and "scikit-learn>=1.6,<1.8" in extra
    assert "jsonschema" in names(main["dependencies"])
    assert "nbclient" in names(main["optional-dependencies"]["test"])
    assert "jupyter-ai" in names(main["optional-dependencies"]["jupyter-ai"])


def test_the_server_works_without_jupyter_ai() -> None:
    """jupyter-ai is an extra: everything but the persona adapter imports without it."""
    code = (
        "import sys\n"
        "for m in ('jupyter_ai', 'jupyter_ai_persona_manager', 'jupyterlab_chat'): sys.modules[m] = None\n"
        "import jupyter_dcpilot.app, jupyter_dcpilot.handlers, jupyter_dcpilot.cli, jupyter_dcpilot.magics\n"
        "from jupyter_dcpilot import _jupyter_server_extension_points\n"
        "assert _jupyter_server_extension_points()[0]['app'].__name__ == 'DCPilotApp'\n"
        "try:\n"
        "    import jupyter_dcpilot.jupyter_ai_persona\n"
        "except ImportError:\n"
        "    print('persona skipped')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "persona skipped"


@pytest.mark.slow
def test_the_wheels_hold_what_each_distribution_ships(tmp_path) -> None:
    """Wheels of both distributions from this tree, each built in an isolated environment as
    ``pip wheel`` builds it (the frontend built already)."""
    install = runpy.run_path(str(ROOT / "scripts" / "install_python.py"))
    for source in (ROOT / "kernel_tools", ROOT):
        command, env = install["wheel_command"](sys.executable, source, tmp_path)
        subprocess.run(command, check=True, timeout=600, env={**os.environ, **env})
    import zipfile

    tools = zipfile.ZipFile(next(tmp_path.glob("dcpilot_kernel_tools-*.whl"))).namelist()
    main = zipfile.ZipFile(next(tmp_path.glob("jupyter_dcpilot-*.whl"))).namelist()
    assert "kernel_tools/diagnosis/runner.py" in tools
    assert all(n.startswith(("kernel_tools/", "dcpilot_kernel_tools-")) for n in tools)
    assert not any(n.startswith("kernel_tools/") for n in main)  # one owner per file
    assert "jupyter_dcpilot/engine/templates/report.html.j2" in main
    assert any(n.endswith("dist-info/licenses/LICENSE") for n in main)
    assert any(n.endswith("labextensions/jupyter-dcpilot/static/style.js") for n in main)
    metadata = next(n for n in main if n.endswith("dist-info/METADATA"))
    requires = [line for line in zipfile.ZipFile(next(tmp_path.glob("jupyter_dcpilot-*.whl"))).read(metadata)
                .decode().splitlines() if line.startswith("Requires-Dist:")]
    assert f"Requires-Dist: dcpilot-kernel-tools[arrow]=={kernel_tools.__version__}" in requires
    assert not any("torch" in r or "tensorflow" in r for r in requires if "extra ==" not in r)
