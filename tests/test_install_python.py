"""scripts/install_python.py (what `make install` runs) and the lock it installs from."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest
import tomllib

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("install_python", ROOT / "scripts" / "install_python.py")
install = importlib.util.module_from_spec(spec)
spec.loader.exec_module(install)


def pins(path: Path) -> dict[str, str]:
    found = {}
    for line in path.read_text().splitlines():
        if m := re.match(r"^([A-Za-z0-9._-]+)==(\S+)", line):
            found[re.sub(r"[-_.]+", "-", m[1]).lower()] = m[2]
    return found


def test_pips_local_paths_are_handed_to_uv_only_where_they_exist(tmp_path, monkeypatch):
    wheels, simple, cert = tmp_path / "wheels", tmp_path / "simple", tmp_path / "ca.pem"
    wheels.mkdir(), simple.mkdir(), cert.write_text("x")
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    options, env = install.uv_options({
        "find-links": [str(wheels), str(tmp_path / "gone")],
        "extra-index-url": [f"file://{simple}", f"file://{tmp_path}/absent/simple", "https://mirror.example/simple"],
        "constraint": [str(tmp_path / "no-constraints.txt")],
        "cert": [str(cert)]})
    pairs = list(zip(options[::2], options[1::2]))
    assert ("--find-links", str(wheels)) in pairs and ("--extra-index-url", f"file://{simple}") in pairs
    assert ("--extra-index-url", "https://mirror.example/simple") in pairs
    assert not any("gone" in v or "absent" in v or "no-constraints" in v for _, v in pairs)
    # pip takes the best version across indexes; uv, by default, only the first index's
    assert ("--index-strategy", "unsafe-best-match") in pairs
    assert env["SSL_CERT_FILE"] == str(cert) and env["SKIP_JUPYTER_BUILDER"] == "1"
    # nothing configured: uv's defaults, no index strategy to change
    assert install.uv_options({})[0] == []


def test_pips_own_configuration_is_read_its_variables_first(tmp_path, monkeypatch):
    config = tmp_path / "pip.conf"
    config.write_text("[global]\nfind-links = /from/the/file\nextra-index-url = file:///a file:///b\n")
    monkeypatch.setenv("PIP_CONFIG_FILE", str(config))
    monkeypatch.setenv("PIP_FIND_LINKS", "/from/the/variable")
    settings = install.pip_settings(sys.executable)
    assert settings["find-links"] == ["/from/the/variable"]
    assert settings["extra-index-url"] == ["file:///a", "file:///b"]


def test_the_lock_pins_the_install_except_torch_and_this_tree(monkeypatch):
    version = ".".join(map(str, sys.version_info[:2]))
    monkeypatch.setattr(install, "python_version", lambda python: version)
    command = install.install_command("uv", "py", ["--find-links", "/w"], [])
    locked = version == install.LOCK_PYTHON  # the lock is for the Python of the project's machines
    assert ("-c" in command) is locked and (not locked or command[command.index("-c") + 1] == "requirements/dev.lock")
    assert command[:3] == ["uv", "pip", "install"] and command[-2:] == ["--find-links", "/w"]
    assert "--compile-bytecode" in command  # uv writes none unless told (pip does by default)
    # without uv, pip does it and reads its own configuration
    assert install.install_command(None, "py", ["--find-links", "/w"], [])[:4] == ["py", "-m", "pip", "install"]
    locked_pins = pins(install.LOCK)
    assert "torch" not in locked_pins and "jupyter-dcpilot" not in locked_pins
    assert "dcpilot-kernel-tools" not in locked_pins
    assert "torch==2.13.0" in install.REQUIREMENTS.read_text()


def requirement_names(specs: list[str]) -> set[str]:
    return {re.sub(r"[-_.]+", "-", re.match(r"[A-Za-z0-9._-]+", s)[0]).lower() for s in specs}


@pytest.mark.parametrize("pyproject", ["pyproject.toml", "kernel_tools/pyproject.toml"])
def test_every_dependency_make_installs_is_in_the_lock(pyproject):
    """A dependency added to a pyproject.toml without `make lock` would be resolved afresh on
    every install: the lock must name it."""
    project = tomllib.loads((ROOT / pyproject).read_text())["project"]
    extras = project.get("optional-dependencies", {})
    wanted = requirement_names(project["dependencies"] + [s for name, specs in extras.items() if name != "bench"
                                                          for s in specs])
    missing = wanted - set(pins(install.LOCK)) - {"jupyter-dcpilot", "dcpilot-kernel-tools", "torch"}
    assert not missing, f"not in requirements/dev.lock (run `make lock`): {sorted(missing)}"


def test_a_wheel_is_built_by_the_venvs_uv_with_pips_constraints_and_by_pip_without_uv(tmp_path, monkeypatch):
    python = tmp_path / "bin" / "python"
    python.parent.mkdir()
    monkeypatch.setattr(install, "pip_settings", lambda python: {"constraint": [__file__]})
    command, env = install.wheel_command(str(python), ROOT, tmp_path / "out")
    assert command[1:4] == ["-m", "pip", "wheel"] and command[-1] == str(ROOT) and env == {}
    (python.parent / "uv").write_text("")
    command, env = install.wheel_command(str(python), ROOT, tmp_path / "out")
    assert command[:3] == [str(python.parent / "uv"), "build", "--wheel"] and command[-1] == str(ROOT)
    assert ("--build-constraints", __file__) in zip(command, command[1:]) and "--constraint" not in command
    assert env["SKIP_JUPYTER_BUILDER"] == "1" and "UV_LINK_MODE" not in env
