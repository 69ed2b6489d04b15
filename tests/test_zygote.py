"""The zygote that grading forks each submission's nbgrader from (``classroom.zygote``).

A child runs nbgrader as ``python -m nbgrader`` does (the same output and exit status), each
request gets a process of its own, Ctrl-C's ``stop_child`` ends a child, a zygote whose owner
is killed ends with what it was running, and a zygote that cannot import nbgrader says why.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from specdec_lite.classroom import nbgrader_env
from specdec_lite.classroom.zygote import Zygote, ZygoteEnded

pytestmark = pytest.mark.slow  # each test starts a child Python that imports nbgrader


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _slow_course(folder: Path, seconds: int) -> Path:
    """A course folder whose ``nbgrader_config.py`` sleeps: a child that reads it runs for ``seconds``."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "nbgrader_config.py").write_text(f"import time\ntime.sleep({seconds})\n")
    return folder


def test_a_child_runs_nbgrader_as_its_command_line_does(tmp_path: Path) -> None:
    env = nbgrader_env()
    zygote = Zygote(env)
    try:
        for args in (["--version"], ["autograde", "no_such_lab", "--student=jane"]):
            log = tmp_path / "child.log"
            code = zygote.run(args, tmp_path, env, log)
            cli = subprocess.run(
                [sys.executable, "-m", "nbgrader", *args], cwd=tmp_path, env=env, capture_output=True, text=True
            )
            assert code == cli.returncode, (args, log.read_text()[-2000:], cli.stderr[-2000:])
            said, expected = log.read_text(), cli.stdout + cli.stderr
            assert said.splitlines()[-1:] == expected.splitlines()[-1:], (said[-1000:], expected[-1000:])
        assert code != 0  # the second asked for a lab that does not exist
        pids = zygote.children
        assert len(set(pids)) == len(pids) == 2 and zygote.proc.pid not in pids
        assert not any(_alive(pid) for pid in pids)  # each child ended with its request
    finally:
        zygote.close()
    assert zygote.proc.returncode == 0


def test_stop_child_ends_the_submission_being_graded(tmp_path: Path) -> None:
    env = nbgrader_env()
    zygote = Zygote(env)
    try:
        course = _slow_course(tmp_path / "course", 120)
        start = time.monotonic()
        stopper = threading.Timer(1.0, zygote.stop_child)
        stopper.start()
        code = zygote.run(["autograde", "lab"], course, env, tmp_path / "log")
        assert code == -signal.SIGTERM and time.monotonic() - start < 30
        assert zygote.alive()  # the zygote itself goes on and serves the next request
        assert zygote.run(["--version"], tmp_path, env, tmp_path / "log2") == 0
    finally:
        zygote.close()


def test_a_zygote_whose_owner_is_killed_ends_with_its_child(tmp_path: Path) -> None:
    """SIGKILL to the owner (a Dask worker killed mid-class): the zygote and its running child end too."""
    course = _slow_course(tmp_path / "course", 300)
    said = tmp_path / "pids.json"
    owner = textwrap.dedent(f"""
        import json, threading, time
        from specdec_lite.classroom import nbgrader_env
        from specdec_lite.classroom.zygote import Zygote
        z = Zygote(nbgrader_env())
        def tell():
            while z.child is None:
                time.sleep(0.01)
            open({str(said)!r}, "w").write(json.dumps([z.proc.pid, z.child]))
        threading.Thread(target=tell, daemon=True).start()
        z.run(["autograde", "lab"], {str(course)!r}, nbgrader_env(), {str(tmp_path / "log")!r})
    """)
    proc = subprocess.Popen([sys.executable, "-c", owner], env=nbgrader_env())
    try:
        deadline = time.monotonic() + 120
        while not said.is_file() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert said.is_file(), "the owner never started its child"
        time.sleep(0.2)
        zygote, child = json.loads(said.read_text())
        assert _alive(zygote) and _alive(child)
        proc.kill()
        proc.wait()
        deadline = time.monotonic() + 20
        while (_alive(zygote) or _alive(child)) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(zygote) and not _alive(child)
    finally:
        if proc.poll() is None:
            proc.kill()


def test_a_zygote_that_cannot_import_nbgrader_says_why(tmp_path: Path) -> None:
    fake = tmp_path / "shadow" / "nbgrader"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError('this nbgrader is broken on purpose')\n")
    env = {**nbgrader_env(), "PYTHONPATH": os.pathsep.join([str(fake.parent), nbgrader_env()["PYTHONPATH"]])}
    with pytest.raises(ZygoteEnded, match="broken on purpose"):
        Zygote(env)
