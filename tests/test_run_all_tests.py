"""make test's runner (scripts/run_all_tests.py) reports each suite's CPU beside its wall: the
floor under CI's wall on two cores. Real processes that burn known CPU, one a grandchild."""

from __future__ import annotations

import importlib.util
import sys
import time
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "run_all_tests.py"


@pytest.fixture
def runner():
    spec = importlib.util.spec_from_file_location("_run_all_tests", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def burn(seconds: float) -> str:
    """Python that keeps one core busy for ``seconds`` of its own CPU."""
    return f"import time\nend = time.process_time() + {seconds}\nwhile time.process_time() < end: pass"


def test_a_suites_cpu_counts_its_descendants_and_not_the_checks_beside_it(runner, tmp_path):
    # a check beside the suite: 0.6 s of CPU, then it leaves a mark and ends
    done = tmp_path / "beside-done"
    check = f"{burn(0.6)}\nopen({str(done)!r}, 'w').close()"
    job, reaper = runner.start("beside", [sys.executable, "-c", check], tmp_path / "beside.log")
    # the suite: 0.4 s in a grandchild (as pytest's kernels are), then it waits for the check to end
    grandchild = f"import subprocess, sys; subprocess.run([sys.executable, '-c', {burn(0.4)!r}])"
    wait = f"{grandchild}\nimport os, time\nwhile not os.path.exists({str(done)!r}): time.sleep(0.05)\ntime.sleep(1.0)"
    began = time.monotonic()
    code = runner.timed_run("suite", [sys.executable, "-c", wait])
    reaper.join()

    assert code == 0 and job.returncode == 0
    assert began < runner.ENDED["beside"] < time.monotonic()  # reaped while the suite ran
    assert 0.55 <= runner.CPU["beside"] < 1.5, runner.CPU
    # the grandchild's CPU is the suite's; the check's, reaped meanwhile, is not
    assert 0.38 <= runner.CPU["suite"] < 0.95, runner.CPU
    assert runner.SECONDS["suite"] >= 1.5


def test_a_checks_exit_status_is_kept_when_its_reaper_collects_it(runner, tmp_path):
    job, reaper = runner.start("failing", [sys.executable, "-c", "raise SystemExit(3)"], tmp_path / "failing.log")
    reaper.join()
    assert job.returncode == 3 and job.wait() == 3
