"""The headless kernel starts ahead and warm (kernel_tools/warmup.py, HeadlessHost.launch): its
imports are made before the first cell, in the notebook's folder even when that folder is made
after the launch, with nothing bound in the user's namespace; a refused input stops it."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys

import pandas as pd
import psutil
import pytest

from jupyter_dcpilot.cli import run_job
from jupyter_dcpilot.engine.hosts import HeadlessHost
from jupyter_dcpilot.inputs import InputError
from jupyter_dcpilot.probe import probe_expression
from kernel_tools.warmup import FIRST_STEPS, START_UP_LINE

PROBE = """
import json as _json, os as _os, sys as _sys
print(_json.dumps({"modules": sorted(m for m in _sys.modules if m.startswith(("sklearn.", "kernel_tools.diagnosis."))),
                   "cwd": _os.getcwd(),
                   "names": sorted(n for n in globals() if not n.startswith("_"))}))
"""


def kernel_state(warm: bool, folder) -> dict:
    async def go():
        host = HeadlessHost(folder / "notebook.ipynb", cwd=folder, warm=warm)
        await host.launch()
        folder.mkdir()  # made after the launch, as the command line claims its output folder
        async with host:
            result = await host.run_cell(PROBE, {})
        assert result.error is None, result.error
        return json.loads(result.outputs[0]["text"])

    return asyncio.run(go())


def test_a_warm_kernel_has_the_first_steps_imports_before_its_first_cell(tmp_path):
    warm = kernel_state(True, tmp_path / "warm")
    cold = kernel_state(False, tmp_path / "cold")
    for state, folder in ((warm, tmp_path / "warm"), (cold, tmp_path / "cold")):
        assert state["cwd"] == str(folder)  # moved into the folder once it existed
        # nothing of the warm-up in the user's namespace: the same names as a cold kernel's
    assert warm["names"] == cold["names"]
    assert {"kernel_tools.diagnosis.labels", "kernel_tools.diagnosis.missing", "sklearn.ensemble"} <= set(warm["modules"])
    assert "kernel_tools.diagnosis.labels" not in cold["modules"]


def test_a_warm_survival_kernel_imports_the_model_step_behind_the_first_steps(tmp_path):
    async def go():
        host = HeadlessHost(tmp_path / "notebook.ipynb", cwd=tmp_path, warm=True, task="survival")
        async with host:
            first = await host.evaluate(probe_expression("warm_up_json", "survival"))
            state = first
            for _ in range(240):  # the model step's imports run on in the background
                if not state["running"]:
                    break
                await asyncio.sleep(0.5)
                state = await host.evaluate(probe_expression("warm_up_json", "survival"))
            result = await host.run_cell(PROBE, {})
        assert result.error is None, result.error
        return first, state, json.loads(result.outputs[0]["text"])

    first, state, kernel = asyncio.run(go())
    assert first["pending"] == [] and not state["running"]  # asked once, by the start-up line
    assert {"kernel_tools.models", "sksurv.linear_model", "xgboost"} <= set(state["warmed"])
    assert "sklearn.ensemble" in kernel["modules"] and "kernel_tools.diagnosis.labels" in kernel["modules"]
    assert not {"lifelines", "xgboost", "kt", "warmup"} & set(kernel["names"])  # nothing bound


def test_the_start_up_line_imports_and_prints_nothing():
    code = f"import sys; value = {START_UP_LINE}; print(value, all(m in sys.modules for m in {FIRST_STEPS!r}))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["None", "True"] and done.stderr == ""


PAUSED = """
import gc, importlib, sys
from kernel_tools import warmup
seen = []
real = importlib.import_module
importlib.import_module = lambda name: seen.append(gc.isenabled()) or real(name)
warmup.warm_up_at_start()
after = gc.isenabled()
gc.disable()
warmup.warm_up_at_start()
print(len(seen), any(seen), after, gc.isenabled())
"""


def test_the_start_up_line_pauses_the_collector_only_while_it_imports():
    done = subprocess.run([sys.executable, "-c", PAUSED], capture_output=True, text=True, check=True)
    calls, any_enabled, after, after_disabled = done.stdout.split()
    assert int(calls) >= 2 * len(FIRST_STEPS) and any_enabled == "False"  # paused during every import
    assert after == "True" and after_disabled == "False"  # as it was before: on, and off when it was off


def _kernels() -> set[int]:
    return {p.pid for p in psutil.Process().children(recursive=True)
            if any("ipykernel" in part for part in p.cmdline())}


def test_a_refused_input_stops_the_kernel_launched_beside_the_checks(tmp_path):
    data = tmp_path / "data.csv"
    pd.DataFrame({"x": range(20), "y": [1] * 20}).to_csv(data, index=False)
    before = _kernels()
    # a name is checked before the launch; a column's values while the kernel starts
    with pytest.raises(InputError, match="--target 'y' has the single value '1'"):
        asyncio.run(run_job([str(data)], target="y", out=str(tmp_path / "out"), interactive=False))
    assert not (tmp_path / "out").exists()  # nothing written
    assert not {pid for pid in _kernels() - before if psutil.pid_exists(pid)
                and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE}


def test_the_headless_notebook_comes_without_jsonschemas_iri_grammar_and_still_validates():
    code = """
import sys
from jupyter_dcpilot.engine.hosts import _new_notebook
notebook = _new_notebook("python3")
import nbformat
from nbformat.v4 import new_code_cell
notebook.cells.append(new_code_cell("1 + 1"))
nbformat.validate(notebook)
bad = _new_notebook("python3")
bad.cells.append({"cell_type": "code", "source": 1})
try:
    nbformat.validate(bad)
    refused = False
except nbformat.ValidationError:
    refused = True
import rfc3987_syntax  # importable again once nbformat is in
print(refused, "iri" in __import__("jsonschema").FormatChecker().checkers)
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "False"]  # a bad notebook still refused; no iri checker
    # a process that imported jsonschema first keeps its iri formats
    first = subprocess.run([sys.executable, "-c", "import jsonschema\n" + code], capture_output=True, text=True,
                           timeout=120)
    assert first.returncode == 0, first.stderr
    assert first.stdout.split() == ["True", "True"]
