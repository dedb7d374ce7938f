"""The command line's process skips the interpreter's last walk over every module's objects
(issue 31: 0.4-0.9 s after the run's last line); a caller of ``main(argv)`` in its own process
(the tests, a script) keeps its collector as it was."""

from __future__ import annotations

import gc
import subprocess
import sys

from jupyter_dcpilot.cli import main

PROGRAM = """
import gc, sys
from jupyter_dcpilot import cli
sys.argv = ["jupyter-dcpilot", "run", sys.argv[1], "--target", "y", "--out", sys.argv[2]]
before = gc.get_freeze_count()
code = cli.main()
print(code, before, gc.get_freeze_count())
"""


def test_its_own_command_line_freezes_the_collector_before_the_process_ends(tmp_path):
    result = subprocess.run([sys.executable, "-c", PROGRAM, str(tmp_path / "nope.csv"), str(tmp_path / "out")],
                            capture_output=True, text=True, timeout=120)
    code, before, after = map(int, result.stdout.split())
    assert code == 1 and "data file not found" in result.stderr  # a refused input ends the process too
    assert before == 0 and after > 10_000, result.stdout


def test_a_caller_in_its_own_process_keeps_its_collector(tmp_path, capsys):
    before = gc.get_freeze_count()
    assert main(["run", str(tmp_path / "nope.csv"), "--target", "y", "--out", str(tmp_path / "out")]) == 1
    assert gc.get_freeze_count() == before
