"""The headless host's own wait for a started kernel (``hosts.kernel_ready``): it returns once the
kernel answers and its iopub reaches the client, so the first cell's outputs are all read, and it
fails at once on a kernel that is gone. Real kernels (jupyter_client)."""

from __future__ import annotations

import asyncio
import signal

import pytest
from jupyter_client.manager import AsyncKernelManager

from jupyter_dcpilot.engine.hosts import KernelDiedError, Waiting, collect_outputs, kernel_ready

pytestmark = pytest.mark.timeout(120)


async def _started() -> tuple[AsyncKernelManager, object]:
    km = AsyncKernelManager(kernel_name="python3")
    await km.start_kernel()
    client = km.client()
    client.start_channels()
    return km, client


async def test_a_ready_kernels_first_outputs_all_arrive():
    km, client = await _started()
    try:
        await kernel_ready(client, Waiting(60, km.is_alive, "a first request"))
        msg_id = client.execute("print('first'); 6 * 7")
        outputs = await asyncio.wait_for(collect_outputs(client, msg_id, Waiting(30, km.is_alive, "a cell")), 30)
        assert [o.get("text") for o in outputs if o["output_type"] == "stream"] == ["first\n"]
        assert [o["data"]["text/plain"] for o in outputs if o["output_type"] == "execute_result"] == ["42"]
    finally:
        client.stop_channels()
        await km.shutdown_kernel(now=True)


async def test_a_kernel_gone_before_it_answers_fails_the_wait_at_once():
    km, client = await _started()
    try:
        await km.signal_kernel(signal.SIGKILL)
        while await km.is_alive():  # reaped: the manager sees it gone
            await asyncio.sleep(0.05)
        with pytest.raises(KernelDiedError, match="a first request"):
            await asyncio.wait_for(kernel_ready(client, Waiting(60, km.is_alive, "a first request")), 20)
    finally:
        client.stop_channels()
        await km.shutdown_kernel(now=True)
