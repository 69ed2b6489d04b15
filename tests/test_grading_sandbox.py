"""The grading sandbox, tried by a hostile notebook graded by the real nbgrader in the real bubblewrap.

The class of ``tests/grading_class.py`` is graded once; its ``attacker`` tries each access
the sandbox denies, and both the kernel's own account (what it printed) and the host's
(files unchanged, nothing reached the listener, no process left) are checked.
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
import time

import pytest

from specdec_lite import classroom
from specdec_lite.classroom import sandbox
from specdec_lite.classroom.report import sandbox_note

from . import grading_class as gc
from .grading_class import LAB, NONCE, ROOT, autograded, graded_class, record, survivors, text_of

DENIED = [
    "read the master",
    "list the course",
    "write the gradebook",
    "rewrite a classmate",
    "open a socket",
    "reach the internet",
    "allocate 8 GiB",
]


@pytest.fixture(scope="module")
def graded():
    if sandbox.missing():
        pytest.fail(f"the sandbox cannot run on this machine: {sandbox.missing()}")
    return graded_class()


@pytest.mark.slow
def test_every_grading_command_ran(graded):
    for name, proc in graded["runs"].items():
        assert proc.returncode == 0, f"{name}:\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"


@pytest.mark.slow
@pytest.mark.parametrize("access", DENIED)
def test_the_kernel_is_denied(graded, access):
    text = text_of(autograded("attacker"))
    assert f"{access}: DENIED" in text, text[-3000:]
    assert f"{access}: ALLOWED" not in text


@pytest.mark.slow
def test_the_host_saw_nothing_of_the_attempts(graded):
    course = graded["course"]
    assert graded["received"] == [], "a connection from the sandbox reached the host's 127.0.0.1"
    assert (course / "submitted" / "honest" / LAB / f"{LAB}.ipynb").read_bytes() == graded["honest_submitted"]
    assert (course / "source" / LAB / f"{LAB}.ipynb").read_bytes() == graded["master_bytes"]
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        autos = [g.auto_score for s in ("attacker", "cheater") for g in gb.find_submission_notebook(LAB, LAB, s).grades]
    assert 99 not in autos and graded["scores"]["attacker"] == 0


@pytest.mark.slow
def test_no_process_outlives_its_notebook(graded):
    text = text_of(autograded("attacker"))
    assert "uid:" in text, "the attacker's cell stopped before starting its processes"
    assert graded["survivors"] == [], graded["survivors"]


@pytest.mark.slow
def test_the_report_names_the_attempts_for_review(graded):
    lines = "\n".join(gc.report_lines("attacker"))
    assert "subprocesses or process pools (cell 4)" in lines and "database or grader files (cell 4)" in lines


@pytest.mark.slow
def test_the_kernel_runs_unprivileged_within_its_limits(graded):
    text = text_of(autograded("attacker"))
    uid = int(text.split("uid: ")[1].split()[0])
    assert uid == (sandbox.NOBODY if os.geteuid() == 0 else os.getuid())
    limits = ast.literal_eval(text.split("limits: ")[1].splitlines()[0])
    want = sandbox.Limits(cpu_s=30 * classroom.cell_timeout(LAB))
    assert limits["CPU"] == want.cpu_s and limits["AS"] == want.memory_bytes
    assert limits["FSIZE"] == want.file_bytes and limits["NOFILE"] == want.open_files
    if os.geteuid() == 0:
        assert limits["NPROC"] == want.processes


@pytest.mark.slow
def test_the_run_says_what_is_isolated_and_records_it(graded):
    out = graded["runs"]["autograde"].stdout
    assert "sandboxed (bubblewrap)" in out and "not isolated:" in out and "it has no network" in out
    assert record("honest")["sandbox"] == "bwrap" and record("attacker")["statement"][0].startswith("sandboxed")


@pytest.mark.slow
def test_grading_refuses_without_bubblewrap(tmp_path):
    course = tmp_path / "course"
    (course / "source").mkdir(parents=True)
    shutil.copytree(ROOT / "notebooks" / "source" / LAB, course / "source" / LAB)  # a real lab: only bwrap is missing
    env = dict(classroom.nbgrader_env(), PATH=os.path.dirname(sys.executable))  # no /usr/bin: no bwrap, no prlimit
    proc = subprocess.run(
        [sys.executable, "-m", "specdec_lite.classroom", "--course", str(course), "autograde", LAB],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "refusing to grade" in proc.stderr and "bwrap" in proc.stderr and "--unsandboxed" in proc.stderr


def test_the_statement_of_an_unsandboxed_run_warns():
    (line,) = sandbox.statement(sandboxed=False)
    assert line.startswith("NOT SANDBOXED") and "gradebook" in line


def test_report_names_a_notebook_graded_without_the_sandbox(tmp_path):
    assert "no record" in sandbox_note(tmp_path)
    (tmp_path / ".grading.json").write_text(json.dumps({"sandbox": "off"}))
    assert "WITHOUT the sandbox" in sandbox_note(tmp_path)
    (tmp_path / ".grading.json").write_text(json.dumps({"sandbox": "bwrap"}))
    assert sandbox_note(tmp_path) is None


def test_the_detectors_see_what_they_look_for():
    """The listener records a connection, and ``survivors`` finds a process carrying the token."""
    import socket

    listener = gc._Listener()
    try:
        socket.create_connection(("127.0.0.1", listener.port), timeout=3).sendall(b"hello")
        time.sleep(1.0)
    finally:
        listener.close()
    assert listener.received == [b"hello"]
    proc = subprocess.Popen(["sleep", NONCE])
    try:
        # Until the child has exec'd, /proc shows the parent's command line (pytest): wait for the exec.
        deadline = time.monotonic() + 30
        while not any(str(proc.pid) in s for s in survivors()) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert any(str(proc.pid) in s for s in survivors())
    finally:
        proc.kill()
        proc.wait()


#: Run by a normal user's grader: the sandbox's own probe, then a sandboxed child that tries what it must not.
NORMAL_USER_PROBE = r'''
import json, os, subprocess, sys, tempfile
from pathlib import Path
from specdec_lite.classroom import sandbox
secret, port = Path(sys.argv[1]), int(sys.argv[2])
child = """
import json, os, socket, sys
out = {"uid": os.getuid()}
for name, act in [("read the course", lambda: open(sys.argv[1]).read()),
                  ("write beside it", lambda: open(sys.argv[1] + ".forged", "w").write("x")),
                  ("connect to the host", lambda: socket.create_connection(("127.0.0.1", int(sys.argv[2])), 3))]:
    try:
        act()
        out[name] = "ALLOWED"
    except Exception as e:
        out[name] = "DENIED " + type(e).__name__
print(json.dumps(out))
"""
with tempfile.TemporaryDirectory() as tmp:
    ipc = Path(tmp) / "ipc"
    ipc.mkdir()
    cmd = sandbox.wrap([sys.executable, "-c", child, str(secret), str(port)], files=[], ipc_dir=ipc, env={})
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
print(json.dumps({"euid": os.geteuid(), "missing": sandbox.missing(), "statement": sandbox.statement()[0],
                  "child": proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else proc.stderr[-500:]}))
'''


@pytest.mark.slow
def test_the_sandbox_denies_the_same_for_a_normal_user(tmp_path):
    """An instructor's own Linux account (not root): bwrap makes the user namespace itself. Run here as uid
    1000 in a user namespace (``unshare --user``), the sandboxed child still cannot read or write the course
    or reach the host's network."""
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        pytest.skip("needs root's unshare to play a normal user")
    secret = tmp_path / "course" / "gradebook.db"
    secret.parent.mkdir()
    secret.write_text("scores")
    listener = gc._Listener()
    try:
        proc = subprocess.run(
            [
                "unshare",
                "--user",
                "--map-user=1000",
                "--map-group=1000",
                sys.executable,
                "-c",
                NORMAL_USER_PROBE,
                str(secret),
                str(listener.port),
            ],
            capture_output=True,
            text=True,
            timeout=300,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        time.sleep(0.5)
    finally:
        listener.close()
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["euid"] == 1000 and result["missing"] is None
    assert "your own uid (1000), in a user namespace" in result["statement"]
    child = json.loads(result["child"])
    assert child["uid"] == 1000, child
    for what in ("read the course", "write beside it", "connect to the host"):
        assert child[what].startswith("DENIED"), (what, child)
    assert listener.received == [] and not (tmp_path / "course" / "gradebook.db.forged").exists()


#: Run by a virtual environment's Python: the sandbox's own probe, then a sandboxed child that imports the package
#: and tries to see the folders beside it (the clone's masters, a course directory).
WHEREVER_PROBE = r'''
import json, os, subprocess, sys, tempfile
from pathlib import Path
from specdec_lite.classroom import sandbox
masters, course = sys.argv[1], sys.argv[2]
child = """
import json, os, sys
import specdec_lite
out = {"executable": sys.executable, "package": specdec_lite.__file__}
for name, path in [("the masters", sys.argv[1]), ("the course", sys.argv[2])]:
    try:
        os.listdir(path)
        out[name] = "ALLOWED"
    except Exception as e:
        out[name] = "DENIED " + type(e).__name__
print(json.dumps(out))
"""
with tempfile.TemporaryDirectory() as tmp:
    ipc = Path(tmp) / "ipc"
    ipc.mkdir()
    cmd = sandbox.wrap([sys.executable, "-c", child, masters, course], files=[], ipc_dir=ipc, env={},
                       hidden=[Path(course)])
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
print(json.dumps({"missing": sandbox.missing(), "package": str(sandbox.package_dir()),
                  "child": proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else proc.stderr[-800:]}))
'''


def _venv_with_package(where, editable: bool):
    """A venv (``--system-site-packages``) at ``where/venv`` whose ``specdec_lite`` is a copy of this one: in a
    clone-like folder beside it, named by a ``.pth`` (as an editable install does), or inside its site-packages."""
    subprocess.run(
        [sys.executable, "-m", "venv", "--system-site-packages", str(where / "venv")], check=True, timeout=120
    )
    (site,) = (where / "venv" / "lib").glob("python*/site-packages")
    clone = where / "clone"
    (clone / "notebooks" / "source").mkdir(parents=True)
    (clone / "notebooks" / "source" / "master.ipynb").write_text("{}")
    ignore = shutil.ignore_patterns("__pycache__", "offline_pair")
    if editable:
        shutil.copytree(ROOT / "specdec_lite", clone / "specdec_lite", ignore=ignore)
        (site / "specdec_lite_clone.pth").write_text(f"{clone}\n")
        return where / "venv" / "bin" / "python", clone / "specdec_lite"
    shutil.copytree(ROOT / "specdec_lite", site / "specdec_lite", ignore=ignore)
    return where / "venv" / "bin" / "python", site / "specdec_lite"


@pytest.mark.slow
@pytest.mark.parametrize("folder, editable", [("venv-in-tmp", True), ("a folder with spaces", False)])
def test_the_sandbox_starts_wherever_python_and_the_package_live(tmp_path, folder, editable):
    """A venv and the package under /tmp (which the sandbox replaces by a private tmpfs) or under a path with
    spaces: the kernel still finds Python and specdec_lite, and still sees neither the masters beside the package
    nor the course directory."""
    where = tmp_path / folder
    python, pkg = _venv_with_package(where, editable)
    course = where / "course"
    (course / "submitted").mkdir(parents=True)
    proc = subprocess.run(
        [str(python), "-c", WHEREVER_PROBE, str(where / "clone" / "notebooks"), str(course)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["missing"] is None and result["package"] == str(pkg), result
    child = json.loads(result["child"])
    assert child["package"] == str(pkg / "__init__.py") and child["executable"] == str(python), child
    assert child["the masters"].startswith("DENIED") and child["the course"].startswith("DENIED"), child


def test_a_visible_folder_holding_the_course_is_refused(tmp_path):
    """Were Python or the package installed above the course directory, binding it would show the course:
    the sandbox refuses to start rather than do so."""
    ipc = tmp_path / "ipc"
    ipc.mkdir()
    with pytest.raises(sandbox.SandboxUnavailable, match="must not see"):
        sandbox.wrap(
            [sys.executable, "-c", "pass"], files=[], ipc_dir=ipc, env={}, hidden=[sandbox.package_dir() / "classroom"]
        )
