"""A process that imports nbgrader once and forks a fresh child for each submission it grades.

``python -m nbgrader autograde`` spends most of a second importing nbgrader, SQLAlchemy and
nbconvert before it reads a notebook, and a third of a second tearing Python down after it.
A zygote pays the imports once (``PRELOAD``) and waits. For each submission it forks a
child that holds nothing but those imports; the child runs ``nbgrader autograde <lab>
--student <id>`` as the command line does, in the submission's scratch course, with its
environment, its output written to the submission's log file, and exits with nbgrader's exit
status (Python's teardown skipped: everything it wrote is closed). The zygote grades nothing
and reads no submission, so no two submissions share a process, and each child starts its
own kernel in the sandbox. It is multiprocessing's fork server, written out here because a
Dask worker runs in a daemonic process, which may not start one.

The zygote talks over its standard input and output, one JSON object a line::

    → {"args": [...], "cwd": ..., "env": {...}, "log": ..., "core": 0 | null}
    ← {"pid": 1234}
    ← {"returncode": 0}

``returncode`` is as ``subprocess`` gives it (``-15``: ended by SIGTERM). When the zygote's
standard input closes (its owner ended, even by SIGKILL), a child still running is ended
and the zygote exits.
"""

from __future__ import annotations

import ctypes
import importlib
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

#: What every grading child needs, imported once by the zygote.
PRELOAD = (
    "nbgrader.apps.nbgraderapp",
    "nbgrader.apps.autogradeapp",
    "nbgrader.converters.autograde",
    "nbgrader.preprocessors",
    "nbgrader.api",
    "nbclient",
    "jupyter_client.manager",
    "jupyter_client.kernelspec",
    "IPython",  # jupyter_client's kernel spec search imports it (a third of a second)
    "ipykernel.kernelspec",
    "specdec_lite.classroom.execute",
    "specdec_lite.classroom.sandbox",
)

#: PR_SET_PDEATHSIG for a grading child: it gets SIGTERM when its zygote ends (the zygote has one thread).
_PR_SET_PDEATHSIG = 1


class ZygoteEnded(RuntimeError):
    """The zygote ended before it answered (killed, or its imports failed: the message holds its output)."""


# --- in the zygote -------------------------------------------------------------------------------------------


def _send(message: dict[str, Any]) -> None:
    os.write(1, (json.dumps(message) + "\n").encode())


def _lines(fd: int) -> Any:
    """The lines read from ``fd``, one at a time; ``None`` at its end."""
    buffer = b""
    while True:
        while b"\n" not in buffer:
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                yield None
                return
            buffer += chunk
        line, buffer = buffer.split(b"\n", 1)
        yield line


def _child(request: dict[str, Any], zygote: int) -> None:
    """In the forked child: ``nbgrader <args>`` as the command line runs it; never returns."""
    code = 1
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
        if os.getppid() != zygote:  # the zygote ended between the fork and the line above
            os._exit(1)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        out = os.open(request["log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
        os.dup2(out, 1)
        os.dup2(out, 2)
        os.close(out)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        if request.get("core") is not None:
            try:  # one core for the submission (its kernels inherit it)
                os.sched_setaffinity(0, {int(request["core"])})
            except OSError:
                pass
        sys.argv = ["nbgrader", *request["args"]]
        from nbgrader.apps.nbgraderapp import main

        try:
            main()
            code = 0
        except SystemExit as end:  # what ``python -m nbgrader`` exits with
            if end.code is None or isinstance(end.code, int):
                code = end.code or 0
            else:
                print(end.code, file=sys.stderr)
                code = 1
    except BaseException:  # noqa: BLE001 - as Python prints an uncaught error and exits with 1
        import traceback

        traceback.print_exc()
        code = 1
    finally:
        import logging

        logging.shutdown()
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:  # noqa: BLE001, S110 - nothing more can be said where the output cannot be written
                pass
        os._exit(code)


def _wait(pid: int) -> dict[str, Any]:
    """Wait for the child ``pid``; if the zygote's input ends meanwhile, end the child and exit."""
    pidfd = os.pidfd_open(pid)
    try:
        while True:
            ready, _, _ = select.select([pidfd, 0], [], [])
            if pidfd in ready:
                _, status = os.waitpid(pid, 0)
                return {"returncode": os.waitstatus_to_exitcode(status)}
            if os.read(0, 1 << 16) == b"":  # the owner ended: so does its grading
                os.kill(pid, signal.SIGTERM)
                os.waitpid(pid, 0)
                os._exit(0)
    finally:
        os.close(pidfd)


def serve() -> None:
    """The zygote's loop: import ``PRELOAD``, then one child per request (``python -m ...zygote``)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the owner's to handle; it ends children itself
    for name in PRELOAD:
        importlib.import_module(name)
    from sqlalchemy.orm import configure_mappers

    configure_mappers()  # the gradebook's classes, set up once rather than on each child's first query
    me = os.getpid()
    _send({"ready": me})
    for line in _lines(0):
        if line is None:
            return
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:
            _child(request, me)
        _send({"pid": pid})
        _send(_wait(pid))


# --- in the owner -------------------------------------------------------------------------------------------


class Zygote:
    """A running zygote (started at once, from ``env``); ``run`` grades through it, one submission at a time."""

    def __init__(self, env: dict[str, str]) -> None:
        self._errors = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "specdec_lite.classroom.zygote"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._errors,
            env=env,
            close_fds=True,
        )
        self.child: int | None = None  #: the child grading now
        self.children: list[int] = []  #: every child it forked for this owner, in order
        self._read()  # {"ready": pid}

    def _read(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            self.proc.wait()
            self._errors.seek(0)
            said = self._errors.read()[-4000:].decode(errors="replace")
            raise ZygoteEnded(f"the grading zygote ended (exit status {self.proc.returncode}): {said}")
        return json.loads(line)

    def alive(self) -> bool:
        """Whether it still runs."""
        return self.proc.poll() is None

    def run(self, args: list[str], cwd: Path, env: dict[str, str], log: Path, core: int | None = None) -> int:
        """``nbgrader <args>`` in a fresh child, in ``cwd``, its output in ``log``; its exit status."""
        assert self.proc.stdin is not None
        request = {"args": args, "cwd": str(cwd), "env": env, "log": str(log), "core": core}
        try:
            self.proc.stdin.write((json.dumps(request) + "\n").encode())
            self.proc.stdin.flush()
        except BrokenPipeError:
            self._read()  # raises ZygoteEnded with what it said
        self.child = self._read()["pid"]
        self.children.append(self.child)
        try:
            done = self._read()
        finally:
            self.child = None
        return int(done["returncode"])

    def stop_child(self) -> None:
        """End the submission being graded (its kernels end with it: ``--die-with-parent``)."""
        pid = self.child
        if pid is not None:
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass

    def close(self) -> None:
        """End the zygote (a child still running ends with it)."""
        if self.proc.stdin is not None and not self.proc.stdin.closed:
            try:
                self.proc.stdin.close()
            except BrokenPipeError:
                pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        self._errors.close()


class Zygotes:
    """Idle zygotes to lend, started as needed: one per submission graded at the same time."""

    def __init__(self, env: Callable[[], dict[str, str]]) -> None:
        self._env = env
        self._idle: list[Zygote] = []
        self._busy: set[Zygote] = set()
        self._lock = threading.Lock()

    def borrow(self) -> Zygote:
        """An idle zygote that still runs, or a new one."""
        with self._lock:
            while self._idle:
                zygote = self._idle.pop()
                if zygote.alive():
                    self._busy.add(zygote)
                    return zygote
                zygote.close()
        zygote = Zygote(self._env())
        with self._lock:
            self._busy.add(zygote)
        return zygote

    def give_back(self, zygote: Zygote) -> None:
        with self._lock:
            self._busy.discard(zygote)
            if zygote.alive():
                self._idle.append(zygote)
            else:
                zygote.close()

    def stop_children(self) -> None:
        """End every submission being graded through a zygote of this pool."""
        with self._lock:
            busy = list(self._busy)
        for zygote in busy:
            zygote.stop_child()

    def close(self) -> None:
        """End the idle zygotes."""
        with self._lock:
            idle, self._idle = self._idle, []
        for zygote in idle:
            zygote.close()


if __name__ == "__main__":
    serve()
