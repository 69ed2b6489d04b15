"""A kernel client that looks again for a reply it may have missed.

A client waiting for a kernel's reply asks its ZMQ socket once, for the whole cell
timeout (``jupyter_client``'s ``get_msg(timeout)``). Executing the labs back to back,
a client sometimes waits out the full timeout while the kernel, idle, has already
replied (nbclient #312 and nbconvert #2029 report the same after widget cells). The
channel here asks in slices of ``SLICE_S`` seconds until the same deadline, so a missed
wake-up costs at most one slice; a reply that never comes still times out as before.
``GradingExecute`` and the tests that run notebooks use it through
``kernel_manager_class = PatientKernelManager``.
"""

from __future__ import annotations

from queue import Empty
from time import monotonic
from typing import Any

from jupyter_client.asynchronous import AsyncKernelClient
from jupyter_client.channels import AsyncZMQSocketChannel
from jupyter_client.manager import AsyncKernelManager
from traitlets import DottedObjectName, Type

#: Seconds one look at the socket lasts.
SLICE_S = 2.0


class PatientChannel(AsyncZMQSocketChannel):
    """``get_msg(timeout)`` polls in slices of ``SLICE_S`` until the timeout, instead of once."""

    async def get_msg(self, timeout: float | None = None) -> dict[str, Any]:  # type: ignore[override]
        deadline = None if timeout is None else monotonic() + timeout
        while True:
            left = SLICE_S if deadline is None else max(0.0, deadline - monotonic())
            try:
                return await super().get_msg(timeout=min(SLICE_S, left))
            except Empty:
                if deadline is not None and monotonic() >= deadline:
                    raise


class PatientKernelClient(AsyncKernelClient):
    """An asynchronous kernel client whose shell and IOPub channels are :class:`PatientChannel`."""

    shell_channel_class = Type(PatientChannel)  # type: ignore[arg-type]
    iopub_channel_class = Type(PatientChannel)  # type: ignore[arg-type]


class PatientKernelManager(AsyncKernelManager):
    """An asynchronous kernel manager whose clients are :class:`PatientKernelClient`."""

    client_class = DottedObjectName("specdec_lite.classroom.kernel.PatientKernelClient")
    client_factory = Type(PatientKernelClient)  # type: ignore[arg-type]
