"""The grader's kernel client: replies arrive, and a timeout still times out."""

from __future__ import annotations

import asyncio
from queue import Empty
from time import monotonic

import pytest

from specdec_lite.classroom import kernel


def test_a_real_kernel_answers_through_the_patient_channels():
    async def run() -> tuple[dict, float]:
        km = kernel.PatientKernelManager(kernel_name="python3")
        await km.start_kernel()
        kc = km.client()
        assert isinstance(kc, kernel.PatientKernelClient)
        assert isinstance(kc.shell_channel, kernel.PatientChannel)
        assert isinstance(kc.iopub_channel, kernel.PatientChannel)
        kc.start_channels()
        try:
            await kc.wait_for_ready(timeout=60)
            msg_id = kc.execute(f"import time; time.sleep(3 * {kernel.SLICE_S}); 6 * 7")  # longer than a slice
            while True:  # wait_for_ready may leave its kernel_info replies on the shell channel
                reply = await kc.shell_channel.get_msg(timeout=120)
                if reply["parent_header"]["msg_id"] == msg_id:
                    break
            assert reply["content"]["status"] == "ok"
            while True:  # the result is on IOPub
                msg = await kc.iopub_channel.get_msg(timeout=30)
                if msg["parent_header"].get("msg_id") == msg_id and msg["msg_type"] == "execute_result":
                    break
            start = monotonic()
            with pytest.raises(Empty):  # nothing more will come on the shell channel
                await kc.shell_channel.get_msg(timeout=2.5 * kernel.SLICE_S)
            return msg, monotonic() - start
        finally:
            kc.stop_channels()
            await km.shutdown_kernel(now=True)

    msg, waited = asyncio.run(run())
    assert msg["content"]["data"]["text/plain"] == "42"
    assert 2.5 * kernel.SLICE_S <= waited < 2.5 * kernel.SLICE_S + 5, waited


def test_the_grader_uses_the_patient_kernel_manager():
    from specdec_lite.classroom.execute import GradingExecute
    from specdec_lite.classroom.sandbox import SandboxedKernelManager

    assert GradingExecute(sandbox="off").kernel_manager_class is kernel.PatientKernelManager
    assert GradingExecute().kernel_manager_class is SandboxedKernelManager  # in the sandbox, by default
    assert issubclass(SandboxedKernelManager, kernel.PatientKernelManager)
