"""A kernel client that looks again for a reply it may have missed.

A client waiting for a kernel's reply asks its ZMQ socket once, for the whole cell
timeout (``jupyter_client``'s ``get_msg(timeout)``). Executing the labs back to back,
a client sometimes waits out the full timeout while the kernel, idle, has already
replied (nbclient #312 and nbconvert #2029 report the same after widget cells). The
channel here asks in slices of ``SLICE_S`` seconds until the same deadline, so a missed
wake-up costs at most one slice; a reply that never comes still times out as before.
``GradingExecute`` and the tests that run notebooks use it through
``kernel_manager_class = PatientKernelManager``.

A kernel manager given ``max_message_bytes`` makes clients whose sockets refuse, unread, any
message larger than that (ZMQ's ``MAXMSGSIZE``: the grader never holds a 400 MiB print in
memory) and hold at most ``RCVHWM`` received messages: ZMQ drops the connection that sent it,
the channel connects again at once and counts the refusal (``refused``), which the grader
reports as output cut.

Once the kernel has answered its first request, the client drains what IOPub holds until it has
been silent ``DRAIN_S`` seconds (jupyter_client waits 0.2 s, for every kernel a notebook starts;
nbclient reads only the messages of the cell it runs).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from queue import Empty
from time import monotonic
from typing import Any

import zmq
import zmq.utils.monitor
from jupyter_client.asynchronous import AsyncKernelClient
from jupyter_client.channels import AsyncZMQSocketChannel
from jupyter_client.manager import AsyncKernelManager
from traitlets import DottedObjectName, Integer, Type

#: Seconds one look at the socket lasts.
SLICE_S = 2.0
#: Seconds one look lasts on a socket that refuses large messages (a dropped connection is made again this soon).
WATCH_S = 0.05
#: A disconnection that ZMQ has not retried after this many seconds was a refused message.
REFUSED_AFTER_S = 0.3
#: Received messages a size-limited socket holds before ZMQ stops reading (the kernel's side keeps the rest).
RCVHWM = 16
#: Seconds of silence that end the draining of IOPub once the kernel has answered (jupyter_client waits 0.2 s).
DRAIN_S = 0.01

#: Sockets being watched for a refused message, by id: (monitor, url, the monitor's owner), claimed by their channel.
_WATCHED: dict[int, tuple[zmq.Socket, str, zmq.Socket]] = {}
_MONITORS = itertools.count()


class PatientChannel(AsyncZMQSocketChannel):
    """``get_msg(timeout)`` polls in slices of ``SLICE_S`` until the timeout, instead of once.

    On a size-limited socket, a connection ZMQ dropped for a message over the limit is made again
    (within ``WATCH_S``) and counted in ``refused``."""

    def __init__(self, socket: Any, session: Any, loop: Any = None) -> None:
        super().__init__(socket, session, loop)
        self._watch = _WATCHED.pop(id(socket), None)
        self.refused = 0
        #: Called on each refused message.
        self.on_refused: Callable[[], None] | None = None
        self._dropped_at: float | None = None
        #: Set while the client drains what the kernel sent before its first reply (its status messages).
        self.draining = False

    def _reconnect_dropped(self) -> None:
        """Connect again after a refused message: a disconnection ZMQ does not retry by itself (a kernel that
        exits is retried within ``reconnect_ivl``, so a disconnection without a retry after ``REFUSED_AFTER_S``
        is a refusal)."""
        if self._watch is None or self.socket is None:
            return
        monitor, url, _ = self._watch
        while True:
            try:
                frames = monitor.recv_multipart(zmq.NOBLOCK)
            except zmq.Again:
                break
            event = zmq.utils.monitor.parse_monitor_message(frames)["event"]
            if event == zmq.EVENT_DISCONNECTED:
                self._dropped_at = monotonic()
            elif event == zmq.EVENT_CONNECT_RETRIED:
                self._dropped_at = None
        if self._dropped_at is not None and monotonic() - self._dropped_at > REFUSED_AFTER_S:
            self._dropped_at = None
            self.refused += 1
            if self.on_refused is not None:
                self.on_refused()
            try:
                self.socket.disconnect(url)
            except zmq.ZMQError:
                pass
            self.socket.connect(url)

    async def get_msg(self, timeout: float | None = None) -> dict[str, Any]:  # type: ignore[override]
        if self.draining:
            timeout = DRAIN_S if timeout is None else min(timeout, DRAIN_S)
        deadline = None if timeout is None else monotonic() + timeout
        step = SLICE_S if self._watch is None else WATCH_S
        while True:
            left = step if deadline is None else max(0.0, deadline - monotonic())
            try:
                return await super().get_msg(timeout=min(step, left))
            except Empty:
                self._reconnect_dropped()
                if deadline is not None and monotonic() >= deadline:
                    raise

    def close(self) -> None:
        super().close()
        if self._watch is not None:
            self._watch[2].close(linger=0)
            self._watch = None

    stop = close  # jupyter_client binds ``stop`` to its own ``close``


class PatientKernelClient(AsyncKernelClient):
    """An asynchronous kernel client whose shell and IOPub channels are :class:`PatientChannel`."""

    shell_channel_class = Type(PatientChannel)  # type: ignore[arg-type]
    iopub_channel_class = Type(PatientChannel)  # type: ignore[arg-type]
    control_channel_class = Type(PatientChannel)  # type: ignore[arg-type]

    max_message_bytes = Integer(0, help="Messages larger than this are refused unread (0: no limit).").tag(config=True)

    def _handle_kernel_info_reply(self, msg: dict[str, Any]) -> None:
        super()._handle_kernel_info_reply(msg)
        # jupyter_client's ``wait_for_ready`` now drains IOPub until it has been silent 0.2 s; nbclient reads only
        # the messages of the cell it runs, so the silence to wait for is DRAIN_S (a fifth of a second per kernel)
        self.iopub_channel.draining = True

    async def wait_for_ready(self, timeout: float | None = None) -> None:  # type: ignore[override]
        """jupyter_client's, its last step (draining IOPub) ended after ``DRAIN_S`` of silence."""
        try:
            await super()._async_wait_for_ready(timeout)
        finally:
            self.iopub_channel.draining = False

    def _create_connected_socket(self, channel: str, identity: bytes | None = None) -> zmq.Socket:
        sock = super()._create_connected_socket(channel, identity)
        if not self.max_message_bytes or channel not in ("shell", "iopub", "control"):
            return sock
        url = self._make_url(channel)
        sock.disconnect(url)  # connected again below, with the limits
        sock.setsockopt(zmq.MAXMSGSIZE, self.max_message_bytes)
        sock.setsockopt(zmq.RCVHWM, RCVHWM)
        address = f"inproc://specdec-monitor-{next(_MONITORS)}-{id(sock)}"
        sock.monitor(address, zmq.EVENT_DISCONNECTED | zmq.EVENT_CONNECT_RETRIED)
        owned = self.context.socket(zmq.PAIR)  # the client's context closes it with the others (``destroy``)
        owned.connect(address)
        monitor = zmq.Socket.shadow(owned.underlying)  # polled without an event loop
        sock.connect(url)
        _WATCHED[id(sock)] = (monitor, url, owned)
        return sock


class PatientKernelManager(AsyncKernelManager):
    """An asynchronous kernel manager whose clients are :class:`PatientKernelClient`."""

    client_class = DottedObjectName("specdec_lite.classroom.kernel.PatientKernelClient")
    client_factory = Type(PatientKernelClient)  # type: ignore[arg-type]

    #: Messages larger than this reach no client of this manager (0: no limit).
    max_message_bytes: int = 0

    def client(self, **kwargs: Any) -> Any:
        kwargs.setdefault("max_message_bytes", self.max_message_bytes)
        return super().client(**kwargs)
