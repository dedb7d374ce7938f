"""The engine's typed client for the kernel's probes (:mod:`kernel_tools.probes`).

Every silent call the engine makes into the user's kernel goes through one method here, named
for what it asks, with the probe's own parameters: a renamed or re-shaped probe is a failing
test (``tests/test_kernel_calls.py`` binds every method's call to the probe's signature), not a
``NameError`` inside someone's kernel. The calls are evaluated as user expressions
(:func:`jupyter_dcpilot.probe.probe_expression`): nothing is bound, printed or counted there.
"""

from __future__ import annotations

from typing import Any

from jupyter_dcpilot.probe import probe_expression

from .hosts import KernelProbe

Json = dict[str, Any]


class KernelCalls:
    """The probes of one kernel, one method each (see :mod:`kernel_tools.probes` for what each does)."""

    def __init__(self, kernel: KernelProbe) -> None:
        self.kernel = kernel

    async def _call(self, function: str, *args: Any, **kwargs: Any) -> Any:
        return await self.kernel.evaluate(probe_expression(function, *args, **kwargs))

    # -- frames and diagnosis -----------------------------------------------------------------
    async def frames(self) -> list[Json]:
        return await self._call("frames_json")

    async def frame_info(self, names: list[str]) -> Json:
        return await self._call("frame_info_json", names)

    async def fingerprint(self, names: list[str]) -> Json:
        return await self._call("fingerprint_json", names)

    async def profile(self, name: str) -> Json:
        return await self._call("profile_json", name)

    async def sample_rows(self, name: str, n: int) -> Any:
        return await self._call("sample_rows_json", name, n)

    async def diagnose(self, name: str, **hints: Any) -> Json:
        return await self._call("diagnose_json", name, **hints)

    async def diagnose_join(self, names: list[str], **hints: Any) -> Json:
        return await self._call("diagnose_join_json", names, **hints)

    # -- steps ----------------------------------------------------------------------------------
    async def report(self, name: str) -> Json:
        return await self._call("report_json", name)

    async def warm(self, functions: list[str]) -> Any:
        return await self._call("warm_json", functions)

    async def warm_up(self, task: str | None = None) -> Json:
        return await self._call("warm_up_json", task)

    async def parameters(self, function: str) -> Any:
        return await self._call("parameters_json", function)

    async def validate(self, checkpoint_id: str, before: str, after: str, *, target: str | None,
                       expect: dict[str, Any] | None, train_test: list[str] | None) -> Json:
        return await self._call("validate_json", checkpoint_id, before, after, target=target, expect=expect,
                                train_test=train_test)

    async def split_audit(self, train: str, test: str, *, groups: str | None, same_source: bool) -> Json:
        return await self._call("split_audit_json", train, test, groups=groups, same_source=same_source)

    # -- checkpoints ----------------------------------------------------------------------------
    async def checkpoint_save(self, names: list[str], label: str) -> Json:
        return await self._call("checkpoint_save_json", names, label)

    async def checkpoint_restore(self, checkpoint_id: str) -> Any:
        return await self._call("checkpoint_restore_json", checkpoint_id)

    async def checkpoint_problem(self, checkpoint_id: str) -> Json:
        return await self._call("checkpoint_problem_json", checkpoint_id)

    async def checkpoint_discard(self, checkpoint_id: str) -> Any:
        return await self._call("checkpoint_discard_json", checkpoint_id)

    # -- decision impact ------------------------------------------------------------------------
    async def impact_start(self, name: str, options: list[dict[str, Any]], *, job: str, **context: Any) -> Any:
        return await self._call("impact_start_json", name, options, job=job, **context)

    async def impact_poll(self, job_id: str) -> Json:
        return await self._call("impact_poll_json", job_id)

    async def impact_cancel(self, job_id: str) -> Any:
        return await self._call("impact_cancel_json", job_id)
