"""Run every suite — pytest, the frontend lint (prettier, eslint), jest, browser tests — and
print one summary line.

CI reads the last line, ``N passed, N failed``, which sums all the suites (the lint counts as
one test). The exit status is non-zero if any suite failed or could not run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run(cmd: list[str], cwd: Path = ROOT) -> int:
    print(f"\n$ {' '.join(cmd)}  (in {cwd.relative_to(ROOT) if cwd != ROOT else '.'})", flush=True)
    return subprocess.call(cmd, cwd=cwd)


def pytest_counts(report: Path) -> tuple[int, int, int]:
    suite = ET.parse(report).getroot()
    suites = [suite] if suite.tag == "testsuite" else list(suite)
    total = sum(int(s.get("tests", 0)) for s in suites)
    failed = sum(int(s.get("failures", 0)) + int(s.get("errors", 0)) for s in suites)
    skipped = sum(int(s.get("skipped", 0)) for s in suites)
    return total - failed - skipped, failed, skipped


def jest_counts(report: Path) -> tuple[int, int, int]:
    data = json.loads(report.read_text())
    failed = data["numFailedTests"] + data.get("numRuntimeErrorTestSuites", 0)
    return data["numPassedTests"], failed, data["numPendingTests"]


def playwright_counts(report: Path) -> tuple[int, int, int]:
    stats = json.loads(report.read_text())["stats"]
    return stats["expected"] + stats.get("flaky", 0), stats["unexpected"], stats["skipped"]


def main() -> int:
    tmp = Path(tempfile.mkdtemp(prefix="dcpilot-tests-"))
    python = sys.executable
    bin_dir = Path(python).parent
    results: dict[str, tuple[int, int, int]] = {}
    broken: list[str] = []

    # the tests that load the whole machine (20 kernels) run alone, after the others ran on
    # TEST_WORKERS processes (pytest-xdist); "no test collected" (exit 5) is fine for either part
    workers = os.environ.get("TEST_WORKERS", "2")
    parts = [("pytest", ["-n", workers, "-m", "not serial"]), ("pytest (serial)", ["-m", "serial"])]
    for name, options in parts:
        report = tmp / f"{name.split()[-1].strip('()')}.xml"
        code = run([python, "-m", "pytest", *options, f"--junitxml={report}", *sys.argv[1:]])
        if report.exists():
            results[name] = pytest_counts(report)
        if code not in (0, 1, 5) or name not in results:
            broken.append(f"{name} exited {code}")

    # prettier and eslint on labextension/src: one check, failed when either reports anything
    code = run([str(bin_dir / "jlpm"), "lint:check"])
    results["lint"] = (1, 0, 0) if code == 0 else (0, 1, 0)
    # ruff on every Python file ([tool.ruff] in pyproject.toml)
    code = run([python, "-m", "ruff", "check", "."])
    results["ruff"] = (1, 0, 0) if code == 0 else (0, 1, 0)
    # mypy on kernel_tools and the engine ([tool.mypy] in pyproject.toml says which files)
    code = run([python, "-m", "mypy"])
    results["mypy"] = (1, 0, 0) if code == 0 else (0, 1, 0)

    code = run([str(bin_dir / "jlpm"), "test", "--json", f"--outputFile={tmp / 'jest.json'}"])
    if (tmp / "jest.json").exists():
        results["jest"] = jest_counts(tmp / "jest.json")
    if "jest" not in results or (code != 0 and results["jest"][1] == 0):
        broken.append(f"jest exited {code} without reporting a failed test")

    env = dict(os.environ, PLAYWRIGHT_JSON_OUTPUT_NAME=str(tmp / "playwright.json"))
    print("\n$ jlpm playwright test  (in ui-tests)", flush=True)
    code = subprocess.call(
        [str(bin_dir / "jlpm"), "playwright", "test", "--reporter=list,json"], cwd=ROOT / "ui-tests", env=env
    )
    if (tmp / "playwright.json").exists():
        results["browser"] = playwright_counts(tmp / "playwright.json")
    # a run that could not start (e.g. port 8888 taken) exits non-zero with zero tests counted
    if "browser" not in results or (code != 0 and results["browser"][1] == 0):
        broken.append(f"playwright exited {code} without reporting a failed test")
    elif sum(results["browser"]) == 0:
        broken.append("playwright ran no browser test")

    print("\nSuites:")
    for name, (passed, failed, skipped) in results.items():
        print(f"  {name:15s} {passed} passed, {failed} failed, {skipped} skipped")
    for problem in broken:
        print(f"  BROKEN: {problem}")
    passed = sum(r[0] for r in results.values())
    failed = sum(r[1] for r in results.values()) + len(broken)
    skipped = sum(r[2] for r in results.values())
    print(f"{passed} passed, {failed} failed, {skipped} skipped")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
