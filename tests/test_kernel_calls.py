"""The engine's typed client for the kernel's probes (jupyter_dcpilot/engine/kernel_calls.py):
every method calls a probe that exists, with arguments its signature accepts, and a real
kernel answers them."""

from __future__ import annotations

import ast
import asyncio
import inspect

import pytest

from jupyter_dcpilot.engine.kernel_calls import KernelCalls
from kernel_tools import probes

# one plausible call per method: what the engine passes
CALLS = {
    "frames": (), "frame_info": (["df", "train"],), "fingerprint": (["df"],), "profile": ("df",), "sample_rows": ("df", 5),
    "diagnose": ("df",), "diagnose_join": (["a", "b"],), "report": ("report",),
    "warm": (["impute"],), "warm_up": ("survival",), "parameters": ("fit_evaluate",),
    "validate": ("c1", "df", "train"), "split_audit": ("train", "test"),
    "checkpoint_save": (["df"], "before s1"), "checkpoint_restore": ("c1",),
    "checkpoint_problem": ("c1",), "checkpoint_discard": ("c1",),
    "impact_start": ("df", [{"id": "drop"}]), "impact_poll": ("j1",), "impact_cancel": ("j1",),
}
KEYWORDS = {
    "diagnose": {"target": "y", "index": "first"}, "diagnose_join": {"target": "y"},
    "validate": {"target": "y", "expect": {"rows": "same"}, "train_test": ["train", "test"]},
    "split_audit": {"groups": "id", "same_source": True}, "impact_start": {"job": "j1", "target": "y"},
}


class Recorder:
    def __init__(self) -> None:
        self.expressions: list[str] = []

    async def evaluate(self, expression: str) -> dict:
        self.expressions.append(expression)
        return {}


def called(expression: str) -> tuple[str, list, dict]:
    call = ast.parse(expression, mode="eval").body
    assert isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
    return (call.func.attr, [ast.literal_eval(a) for a in call.args],
            {k.arg: ast.literal_eval(k.value) for k in call.keywords})


def test_every_method_is_tried_here():
    methods = {n for n, f in inspect.getmembers(KernelCalls, inspect.iscoroutinefunction) if not n.startswith("_")}
    assert methods == set(CALLS)


@pytest.mark.parametrize("method", sorted(CALLS))
def test_each_call_binds_to_the_probe_it_names(method):
    kernel = Recorder()
    asyncio.run(getattr(KernelCalls(kernel), method)(*CALLS[method], **KEYWORDS.get(method, {})))
    name, args, kwargs = called(kernel.expressions[0])
    probe = getattr(probes, name, None)
    assert probe is not None, f"kernel_tools.probes has no {name}"
    inspect.signature(probe).bind(*args, **kwargs)  # raises TypeError on a mismatch
    assert name == f"{method}_json"


def test_a_real_kernel_answers_through_the_client(tmp_path):
    from jupyter_dcpilot.engine.hosts import HeadlessHost

    async def ask() -> tuple[list, dict, dict, dict]:
        async with HeadlessHost(tmp_path / "nb.ipynb") as host:
            ran = await host.run_cell("import pandas as pd\ndf = pd.DataFrame({'a': [1, 2, 3]})", {})
            assert ran.error is None, ran.error
            calls = KernelCalls(host)
            frames = await calls.frames()
            info = await calls.frame_info(["df"])
            saved = await calls.checkpoint_save(["df"], "before a test")
            return frames, info, saved, await calls.checkpoint_problem(saved["id"])

    frames, info, saved, problem = asyncio.run(ask())
    assert [(f["name"], f["rows"]) for f in frames] == [("df", 3)]
    assert info["df"]["rows"] == 3 and saved["id"] and problem.get("problem") is None
