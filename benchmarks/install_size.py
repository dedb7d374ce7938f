"""Install weight: time, package count and size of a fresh-venv ``pip install`` of the wheels.

Builds the two wheels of a source tree (``dcpilot-kernel-tools`` from ``kernel_tools/`` and
``jupyter-dcpilot``; a tree from before the split has one), then installs into a new venv:

- ``kernel-tools``: the kernel side alone (what a notebook needs to re-run),
- ``core``: ``pip install jupyter-dcpilot`` (with its kernel side),
- ``all``: ``jupyter-dcpilot[all]`` after ``pip install torch==2.13.0`` (CPU build first, as the
  README says), only with ``--all``.

Prints one line per install: seconds, packages in the venv (``pip list``), and its size on disk.
pip uses its cache as configured (say which with ``--no-cache``), so run it twice and take the
second for a warm-cache figure. Usage::

    python benchmarks/install_size.py [--tree PATH] [--all] [--no-cache] [--only core]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def build_wheels(tree: Path, out: Path) -> list[Path]:
    """Wheels of the tree's distributions (the frontend must be built already: ``jlpm build``)."""
    sources = [tree / "kernel_tools"] if (tree / "kernel_tools" / "pyproject.toml").is_file() else []
    sources.append(tree)
    for source in sources:
        subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(out), str(source)],
                       check=True)
    return sorted(out.glob("*.whl"))


def venv_size(path: Path) -> int:
    return sum(f.lstat().st_size for f in path.rglob("*") if f.is_file() or f.is_symlink())


def measure(label: str, requirements: list[str], wheels: Path, pre: list[str], no_cache: bool) -> dict:
    """A fresh venv, ``pip install`` of ``requirements`` (local wheels first), timed."""
    root = Path(tempfile.mkdtemp(prefix=f"dcpilot-install-{label}-"))
    try:
        subprocess.run([sys.executable, "-m", "venv", str(root)], check=True)
        pip = [str(root / "bin" / "python"), "-m", "pip", "install", "--quiet", "--find-links", str(wheels)]
        if no_cache:
            pip.append("--no-cache-dir")
        started = time.perf_counter()
        if pre:
            subprocess.run(pip + pre, check=True)
        subprocess.run(pip + requirements, check=True)
        seconds = time.perf_counter() - started
        listed = subprocess.run([str(root / "bin" / "python"), "-m", "pip", "list", "--format=freeze"],
                                check=True, capture_output=True, text=True).stdout.split()
        names = {line.split("==")[0].lower() for line in listed}
        return {"label": label, "seconds": seconds, "packages": len(listed), "bytes": venv_size(root),
                "torch": "torch" in names, "tensorflow": "tensorflow" in names}
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tree", default=str(REPO), help="the source tree to build (default: this one)")
    parser.add_argument("--all", action="store_true", help="also measure jupyter-dcpilot[all]")
    parser.add_argument("--no-cache", action="store_true", help="pip --no-cache-dir (a cold download)")
    parser.add_argument("--only", choices=["kernel-tools", "core", "all"], help="measure one install")
    args = parser.parse_args()
    wheels = Path(tempfile.mkdtemp(prefix="dcpilot-wheels-"))
    built = build_wheels(Path(args.tree).resolve(), wheels)
    print(f"wheels: {', '.join(f'{w.name} ({w.stat().st_size / 1e3:.0f} kB)' for w in built)}", flush=True)
    main_wheel = next(w for w in built if w.name.startswith("jupyter_dcpilot"))
    plans = {"core": ([str(main_wheel)], [])}
    tools = [w for w in built if w.name.startswith("dcpilot_kernel_tools")]
    if tools:
        plans["kernel-tools"] = ([str(tools[0])], [])
    if args.all:
        plans["all"] = ([f"{main_wheel}[all]"], ["torch==2.13.0"])
    for label, (requirements, pre) in plans.items():
        if args.only and label != args.only:
            continue
        r = measure(label, requirements, wheels, pre, args.no_cache)
        print(f"{label:13s} {r['seconds']:7.1f} s  {r['packages']:4d} packages  {r['bytes'] / 2**30:6.2f} GiB"
              f"  torch={'yes' if r['torch'] else 'no'}  tensorflow={'yes' if r['tensorflow'] else 'no'}",
              flush=True)
    shutil.rmtree(wheels, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
