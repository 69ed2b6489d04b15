"""The Dask scheduler a class is graded on: plain TCP only on this machine, mutual TLS anywhere else.

A Dask scheduler runs whatever its connected clients send, on its workers, as the workers'
user and outside the sandbox (the sandbox holds the students' kernels, not the tasks). So
``check_address`` refuses, before any connection, a ``tcp://`` scheduler that is not on
loopback (``127.0.0.0/8``, ``::1``, ``localhost``: no name is looked up). ``tls://``
uses Dask's own TLS configuration (``distributed.comm.tls.*`` in a Dask config file or the
``DASK_DISTRIBUTED__COMM__TLS__...`` environment variables): the course's CA, a client
certificate and key, encryption required; Dask then refuses any peer without a certificate
of that CA, both ways. The book's *For instructors* appendix shows how to make them.
"""

from __future__ import annotations

import ipaddress
from typing import Any
from urllib.parse import urlsplit

from .._i18n import _


class SchedulerRefused(ValueError):
    """A scheduler address that grading will not connect to; the message says why and what to do."""


def _loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _tls_help() -> str:
    return _(
        "grade over mutual TLS instead: --scheduler tls://HOST:PORT, with the course's CA and a client certificate "
        "in Dask's configuration (DASK_DISTRIBUTED__COMM__TLS__CA_FILE, DASK_DISTRIBUTED__COMM__TLS__CLIENT__CERT, "
        "DASK_DISTRIBUTED__COMM__TLS__CLIENT__KEY; see the instructors page)"
    )


def check_address(address: str) -> tuple[str, str]:
    """``(scheme, host)`` of a scheduler address grading may use, else ``SchedulerRefused`` (nothing is contacted)."""
    parts = urlsplit(address)
    scheme, host = parts.scheme.lower(), parts.hostname or ""
    try:
        port = parts.port
    except ValueError:
        port = None
    if scheme not in ("tcp", "tls") or not host or port is None:
        raise SchedulerRefused(
            _(
                "--scheduler: {address} is not a Dask scheduler address (tls://HOST:PORT, or tcp://127.0.0.1:PORT)"
            ).format(address=address)
        )
    if scheme == "tcp" and not _loopback(host):
        raise SchedulerRefused(
            _(
                "--scheduler: refusing {address}: plain tcp:// is unauthenticated and unencrypted, and a Dask "
                "scheduler runs whatever any connected client sends, on the workers, outside the sandbox; tcp:// is "
                "allowed on this machine only (127.0.0.1, ::1, localhost), and only where no one else logs in: every "
                "user of a machine can reach its loopback. "
            ).format(address=address)
            + _tls_help()
        )
    return scheme, host


def security() -> Any:
    """Dask's ``Security`` from its configuration, encryption required; ``SchedulerRefused`` when it lacks a part."""
    from distributed.security import Security

    sec = Security(require_encryption=True)
    missing = [
        name
        for name, value in (
            ("distributed.comm.tls.ca-file", sec.tls_ca_file),
            ("distributed.comm.tls.client.cert", sec.tls_client_cert),
        )
        if not value
    ]
    if missing:
        raise SchedulerRefused(
            _("--scheduler: tls:// needs Dask's TLS configuration: {missing} not set. ").format(
                missing=", ".join(missing)
            )
            + _tls_help()
        )
    return sec


def connect(address: str, timeout: float = 30) -> Any:
    """A Dask ``Client`` of the scheduler at ``address``, after ``check_address`` (and TLS's ``security``)."""
    from distributed import Client

    scheme, _host = check_address(address)
    sec = security() if scheme == "tls" else None
    return Client(address, security=sec, timeout=timeout, set_as_default=False)
