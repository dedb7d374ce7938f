"""Run every suite — pytest, the frontend lint (prettier, eslint), ruff, mypy, jest, browser
tests — and print one summary line.

CI reads the last line, ``N passed, N failed``, which sums all the suites (the lint counts as
one test). The exit status is non-zero if any suite failed or could not run.

Order: the parallel pytest part, and beside it (at a lower CPU priority) the checks that start
no kernel or server: lint, ruff, mypy, jest; then the tests marked ``serial`` alone; then the
browser tests alone, whose timeouts a loaded machine would turn into flakes.

The summary gives each suite's wall seconds and the CPU seconds of its processes (the suite's
own and every descendant it waited for: pytest's workers, kernels and servers, the browser and
the test server), and the CPU of the whole run: the floor under its wall on this machine's cores.
"""

from __future__ import annotations

import json
import os
import resource
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# each suite's wall seconds, printed in the summary (the ones beside pytest: until each ended)
SECONDS: dict[str, float] = {}
# each suite's CPU seconds (user + system of its process and the descendants it waited for)
CPU: dict[str, float] = {}
# when each check run beside pytest ended (time.monotonic()): its CPU is not pytest's
ENDED: dict[str, float] = {}


def children_cpu() -> float:
    """CPU seconds of every child this process has waited for, their waited-for descendants included."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(cmd: list[str], cwd: Path = ROOT, env: dict[str, str] | None = None) -> int:
    print(f"\n$ {' '.join(cmd)}  (in {cwd.relative_to(ROOT) if cwd != ROOT else '.'})", flush=True)
    return subprocess.call(cmd, cwd=cwd, env=env)


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


def start(name: str, cmd: list[str], log: Path) -> tuple[subprocess.Popen, threading.Thread]:
    """A check started in the background at a lower CPU priority (pytest's kernels and servers
    keep theirs, so their timeouts see no more load than before), its output kept in ``log``.
    The returned thread reaps it (``os.wait4``: its CPU with its exit status) and sets its
    ``returncode``; join the thread, do not ``wait()`` on the job."""
    began = time.monotonic()
    with log.open("w") as out:
        job = subprocess.Popen(cmd, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, preexec_fn=lambda: os.nice(10))

    def timed() -> None:
        _, status, usage = os.wait4(job.pid, 0)
        job.returncode = os.waitstatus_to_exitcode(status)
        ENDED[name] = time.monotonic()
        SECONDS[name] = ENDED[name] - began
        CPU[name] = usage.ru_utime + usage.ru_stime

    reaper = threading.Thread(target=timed, daemon=True)
    reaper.start()
    return job, reaper


def timed_run(name: str, cmd: list[str], cwd: Path = ROOT, env: dict[str, str] | None = None) -> int:
    """``run``, its wall and CPU seconds kept under ``name`` (less the checks that ended meanwhile)."""
    began, cpu = time.monotonic(), children_cpu()
    code = run(cmd, cwd, env)
    ended = time.monotonic()
    beside = sum(CPU[check] for check, at in list(ENDED.items()) if began <= at <= ended)
    SECONDS[name], CPU[name] = ended - began, children_cpu() - cpu - beside
    return code


Jobs = dict[str, tuple[list[str], subprocess.Popen, threading.Thread]]


def start_checks(tmp: Path, python: str, bin_dir: Path) -> Jobs:
    """The checks that need no kernel, server or port, started at once beside pytest: they use
    the CPU a test leaves idle while it waits on a kernel. The frontend was built before this
    script (``make test``), so nothing here writes what pytest reads."""
    jlpm = str(bin_dir / "jlpm")
    commands = {
        # prettier and eslint on labextension/src: one check, failed when either reports anything
        "lint": lint_command(jlpm),
        # ruff on every Python file ([tool.ruff] in pyproject.toml)
        "ruff": [python, "-m", "ruff", "check", "."],
        # mypy on kernel_tools and the engine ([tool.mypy] in pyproject.toml says which files)
        "mypy": [python, "-m", "mypy"],
        "jest": [jlpm, "test", "--json", f"--outputFile={tmp / 'jest.json'}"],
    }
    return {name: (cmd, *start(name, cmd, tmp / f"{name}.log")) for name, cmd in commands.items()}


def lint_command(jlpm: str) -> list[str]:
    """``jlpm lint:check`` with both tools' caches, keyed by the files' contents (a fresh clone's
    time stamps are all new), where ``LINT_CACHE_DIR`` says (.ci/run: beside mypy's, outside the
    clone), else in node_modules/.cache. A file unchanged since the last run is not read again:
    prettier 3.9 -> 0.9 s, eslint 8.0 -> 2.1 s of CPU on labextension/src warm (load 6); a changed
    file, option or tool version is checked afresh (each tool keys its cache by them too)."""
    cache = Path(os.environ.get("LINT_CACHE_DIR") or ROOT / "node_modules" / ".cache" / "jupyter-dcpilot-lint")
    prettier = [jlpm, "prettier:check", "--cache", "--cache-strategy", "content",
                "--cache-location", str(cache / "prettier")]
    eslint = [jlpm, "eslint:check", "--cache", "--cache-strategy", "content",
              "--cache-location", f"{cache / 'eslint'}{os.sep}"]
    return ["sh", "-c", f"{shlex.join(prettier)} && {shlex.join(eslint)}"]


def collect_checks(tmp: Path, jobs: Jobs, results: dict[str, tuple[int, int, int]], broken: list[str]) -> None:
    """Wait for the checks run beside pytest, print each one's output, and count it."""
    codes = {}
    for name, (cmd, job, reaper) in jobs.items():
        reaper.join()
        codes[name] = job.returncode
        print(f"\n$ {' '.join(cmd)}  ({name}, run beside pytest)", flush=True)
        sys.stdout.write((tmp / f"{name}.log").read_text(errors="replace"))
        sys.stdout.flush()
    for name in ("lint", "ruff", "mypy"):
        results[name] = (1, 0, 0) if codes[name] == 0 else (0, 1, 0)
    if (tmp / "jest.json").exists():
        results["jest"] = jest_counts(tmp / "jest.json")
    if "jest" not in results or (codes["jest"] != 0 and results["jest"][1] == 0):
        broken.append(f"jest exited {codes['jest']} without reporting a failed test")


def run_pytest(tmp: Path, python: str, options: list[str], name: str,
               results: dict[str, tuple[int, int, int]], broken: list[str]) -> None:
    report = tmp / f"{name.split()[-1].strip('()')}.xml"
    code = timed_run(name, [python, "-m", "pytest", *options, f"--junitxml={report}", *sys.argv[1:]])
    if report.exists():
        results[name] = pytest_counts(report)
    # "no test collected" (exit 5) is fine for either part
    if code not in (0, 1, 5) or name not in results:
        broken.append(f"{name} exited {code}")


def run_browser(tmp: Path, bin_dir: Path, results: dict[str, tuple[int, int, int]], broken: list[str]) -> None:
    env = dict(os.environ, PLAYWRIGHT_JSON_OUTPUT_NAME=str(tmp / "playwright.json"))
    code = timed_run("browser", [str(bin_dir / "jlpm"), "playwright", "test", "--reporter=list,json"], ROOT / "ui-tests",
                     env)
    if (tmp / "playwright.json").exists():
        results["browser"] = playwright_counts(tmp / "playwright.json")
    # a run that could not start (e.g. port 8888 taken) exits non-zero with zero tests counted
    if "browser" not in results or (code != 0 and results["browser"][1] == 0):
        broken.append(f"playwright exited {code} without reporting a failed test")
    elif sum(results["browser"]) == 0:
        broken.append("playwright ran no browser test")


def main() -> int:
    tmp = Path(tempfile.mkdtemp(prefix="dcpilot-tests-"))
    try:
        share_bytecode(tmp)
        return run_suites(tmp)
    finally:
        shutil.rmtree(tmp / "pycache", ignore_errors=True)


def share_bytecode(tmp: Path) -> None:
    """Where Python writes no bytecode (PYTHONDONTWRITEBYTECODE) every kernel, server and test
    process would compile its imports from source (~3 s of a kernel's start): every suite of the
    run shares one cache, kept in the venv between runs where it can be written (as
    tests/conftest.py keeps it for a pytest run of its own), else in ``tmp``, removed at the end."""
    if os.environ.get("PYTHONDONTWRITEBYTECODE") and not os.environ.get("PYTHONPYCACHEPREFIX"):
        os.environ.pop("PYTHONDONTWRITEBYTECODE")
        os.environ["PYTHONPYCACHEPREFIX"] = kept_bytecode_cache() or str(tmp / "pycache")


def kept_bytecode_cache() -> str | None:
    """tests/conftest.py's cache in the venv running this script, if it is a venv that can be written."""
    if sys.prefix == sys.base_prefix:
        return None
    cache = Path(sys.prefix) / "dcpilot-test-pycache"
    try:
        cache.mkdir(exist_ok=True)
    except OSError:
        return None
    return str(cache) if os.access(cache, os.W_OK) else None


def run_suites(tmp: Path) -> int:
    python = sys.executable
    bin_dir = Path(python).parent
    results: dict[str, tuple[int, int, int]] = {}
    broken: list[str] = []
    began, cpu = time.monotonic(), children_cpu()

    jobs = start_checks(tmp, python, bin_dir)
    try:
        run_pytest(tmp, python, ["-n", os.environ.get("TEST_WORKERS", "2"), "-m", "not serial"], "pytest",
                   results, broken)
    except BaseException:  # interrupted: no check outlives this script
        for _, job, _ in jobs.values():
            job.terminate()
        raise
    collect_checks(tmp, jobs, results, broken)
    # the tests that load the whole machine (20 kernels) run alone, after every check ended
    run_pytest(tmp, python, ["-m", "serial"], "pytest (serial)", results, broken)
    run_browser(tmp, bin_dir, results, broken)

    print("\nSuites:")
    for name, (passed, failed, skipped) in results.items():
        took = f"  ({SECONDS[name]:.0f} s, CPU {CPU[name]:.0f} s)" if name in SECONDS and name in CPU else ""
        print(f"  {name:15s} {passed} passed, {failed} failed, {skipped} skipped{took}")
    print(f"  all suites: {time.monotonic() - began:.0f} s of wall, CPU {children_cpu() - cpu:.0f} s")
    for problem in broken:
        print(f"  BROKEN: {problem}")
    passed = sum(r[0] for r in results.values())
    failed = sum(r[1] for r in results.values()) + len(broken)
    skipped = sum(r[2] for r in results.values())
    print(f"{passed} passed, {failed} failed, {skipped} skipped")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
