"""Install the Python side of a development tree into a venv with uv, pinned by the lock.

    python scripts/install_python.py VENV_PYTHON            # what `make install` / `make demo` run
    python scripts/install_python.py VENV_PYTHON --lock     # re-pin requirements/dev.lock (`make lock`)
    python scripts/install_python.py VENV_PYTHON --lock --upgrade   # every pin at its newest
    python scripts/install_python.py VENV_PYTHON --also ".[bench]"   # more, within the lock's pins

What is installed is ``requirements/dev.in`` (both distributions of this tree, editable, with
every extra, CPU torch and the JupyterLab build tools); every version is pinned by
``requirements/dev.lock``, which ``--lock`` writes from the same index settings, so two fresh
installs resolve the same. uv resolves and downloads in parallel (a cold install takes about a
minute where pip took over five), but it does not read pip's configuration: the find-links,
index URLs, constraints and certificate pip uses on this machine (``pip config list``, which
includes the ``PIP_*`` variables) are handed to it, each local path only where it exists, so a
machine without them still works. uv is installed into the venv by pip when absent; where it
cannot be, pip does the install (it reads its own configuration).

uv is told to compile bytecode (pip does by default, uv not): where Python writes none
(``PYTHONDONTWRITEBYTECODE``, as on the project's machines) a venv without it has every process
compile every module it imports, every run. Measured in scratch venvs (issue 31, load 4-8):
the install 111 s wall without, 101 s with (its CPU 30 -> 68 s, compiled in parallel); then
``jupyter dcpilot demo`` 44-47 s wall and 12-13 CPU s without, 7-8 s and 5.3-5.6 CPU s with.

The frontend is not built here: the Makefile builds it once, for the targets that need it
(``SKIP_JUPYTER_BUILDER`` keeps the editable build from running ``jlpm build`` a second time).
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote, urlparse

ROOT = Path(__file__).resolve().parent.parent
REQUIREMENTS = ROOT / "requirements" / "dev.in"
LOCK = ROOT / "requirements" / "dev.lock"
# the CPU torch wheel is a local build (2.13.0+cpu) where the machine has one and a plain
# PyPI release elsewhere: the lock leaves it out and dev.in names its version
# (and this tree's own two distributions, installed from their folders)
UNPINNED = ["torch", "jupyter-dcpilot", "dcpilot-kernel-tools"]
# the lock is resolved for the Python of the project's machines; another Python resolves dev.in
# afresh (the same constraints, its own versions)
LOCK_PYTHON = "3.11"
# pip merges its settings by precedence: environment variables, then the install command's
# section, then [global]
SECTIONS = (":env:", "install", "global")


def pip_settings(python: str) -> dict[str, list[str]]:
    """pip's find-links, index URLs, constraints and certificate, as ``pip config list`` gives
    them (config files and ``PIP_*`` variables), the highest-precedence section for each key."""
    try:
        out = subprocess.run([python, "-m", "pip", "config", "list"], capture_output=True, text=True,
                             check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return {}
    found: dict[str, dict[str, str]] = {}
    for line in out.splitlines():
        m = re.match(r"^(?P<section>[^.]*)\.(?P<key>[\w-]+)='(?P<value>.*)'$", line.strip())
        if m:
            found.setdefault(m["key"], {})[m["section"]] = m["value"]
    settings = {}
    for key, by_section in found.items():
        section = next((s for s in SECTIONS if s in by_section), None)
        if section is not None:
            settings[key] = by_section[section].split()
    return settings


def available(location: str) -> bool:
    """A local path or file:// URL only where it exists; a remote URL is left to the installer."""
    parsed = urlparse(location)
    if parsed.scheme in ("http", "https"):
        return True
    path = unquote(parsed.path) if parsed.scheme == "file" else location
    return Path(path).exists()


def uv_options(settings: dict[str, list[str]]) -> tuple[list[str], dict[str, str]]:
    """uv's command-line options and environment for pip's settings."""
    options: list[str] = []
    for key, flag in (("index-url", "--index-url"), ("extra-index-url", "--extra-index-url"),
                      ("find-links", "--find-links"), ("constraint", "--constraint")):
        for value in settings.get(key, []):
            if available(value):
                options += [flag, value]
    if options:
        # pip picks the best version across every index; uv by default takes the first index
        # that lists a package, which fails where a local mirror holds only some releases
        options += ["--index-strategy", "unsafe-best-match"]
    env = {"SKIP_JUPYTER_BUILDER": "1", "UV_LINK_MODE": os.environ.get("UV_LINK_MODE", "copy")}
    cert = settings.get("cert", [])
    if cert and available(cert[0]) and "SSL_CERT_FILE" not in os.environ:
        env["SSL_CERT_FILE"] = cert[0]
    return options, env


def find_uv(python: str) -> str | None:
    """The venv's uv, installed by pip (with pip's configuration) when absent."""
    uv = Path(python).parent / "uv"
    if not uv.exists():
        print("installing uv into the venv with pip", flush=True)
        if subprocess.call([python, "-m", "pip", "install", "--quiet", "uv"]) != 0:
            return None
    return str(uv) if uv.exists() else None


def python_version(python: str) -> str:
    return subprocess.run([python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                          capture_output=True, text=True).stdout.strip()


def run(cmd: list[str], env: dict[str, str]) -> int:
    print("$ " + " ".join(shlex.quote(c) for c in cmd), flush=True)
    return subprocess.call(cmd, cwd=ROOT, env={**os.environ, **env})


def lock_command(uv: str, python: str, options: list[str], upgrade: bool = False) -> list[str]:
    """uv's compile of dev.in into dev.lock; the pins already there are kept where they still
    fit (``upgrade``: every package at its newest)."""
    return [uv, "pip", "compile", str(REQUIREMENTS.relative_to(ROOT)), "-o", str(LOCK.relative_to(ROOT)),
            "--python", python, "--python-version", LOCK_PYTHON, "--custom-compile-command", "make lock",
            *(["--upgrade"] if upgrade else []), *(f"--no-emit-package={name}" for name in UNPINNED), *options]


def install_command(uv: str | None, python: str, options: list[str], also: list[str]) -> list[str]:
    requirements = ["-r", str(REQUIREMENTS.relative_to(ROOT)), *also]
    lock = ["-c", str(LOCK.relative_to(ROOT))] if LOCK.exists() and python_version(python) == LOCK_PYTHON else []
    if not lock:
        print(f"not pinned by {LOCK.name} (written for Python {LOCK_PYTHON}): resolving afresh", flush=True)
    if uv is None:  # pip reads its own configuration
        return [python, "-m", "pip", "install", "--quiet", *requirements, *lock]
    return [uv, "pip", "install", "--python", python, "--compile-bytecode", *requirements, *lock, *options]


def wheel_command(python: str, source: Path, out: Path) -> tuple[list[str], dict[str, str]]:
    """A wheel of ``source`` into ``out``, built in an isolated environment: by the venv's uv
    (its cache makes the build environment in seconds; pip downloads JupyterLab into a fresh one,
    35-100 s), with pip's settings; by ``pip wheel`` where the venv has no uv."""
    uv = Path(python).parent / "uv"
    if not uv.exists():
        return [python, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(out), str(source)], {}
    options, env = uv_options(pip_settings(python))
    # pip's constraints bound what a build installs too; uv's build takes them as build constraints
    options = ["--build-constraints" if o == "--constraint" else o for o in options]
    # uv's own link mode (hard links from its cache): copying JupyterLab into the build
    # environment takes a minute (a UV_LINK_MODE the user set still reaches uv from the environment)
    env.pop("UV_LINK_MODE", None)
    return [str(uv), "build", "--wheel", "--quiet", "--python", python, "-o", str(out), *options, str(source)], env


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("python", help="the venv's python")
    ap.add_argument("--lock", action="store_true", help="re-pin requirements/dev.lock instead of installing")
    ap.add_argument("--upgrade", action="store_true", help="with --lock: every package at its newest version")
    ap.add_argument("--also", action="append", default=[], help="more requirements, kept within the lock")
    args = ap.parse_args(argv)
    options, env = uv_options(pip_settings(args.python))
    uv = find_uv(args.python)
    if args.lock:
        if uv is None:
            print("the lock is written by uv, which could not be installed", file=sys.stderr)
            return 1
        return run(lock_command(uv, args.python, options, args.upgrade), env)
    if uv is None:
        print("uv could not be installed: installing with pip (slower)", flush=True)
    return run(install_command(uv, args.python, options, args.also), env)


if __name__ == "__main__":
    sys.exit(main())
