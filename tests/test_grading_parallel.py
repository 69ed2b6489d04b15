"""Grading a class many submissions at a time: local jobs and a real Dask cluster over mutual TLS.

The reference is ``grading_class``'s class, graded one submission at a time by the real
nbgrader (shared with the other grading tests). Here the same submissions are graded again,
in a fresh copy of the course: ``autograde --jobs 2`` (every student), and through a real
``dask scheduler`` and two ``dask worker`` processes on 127.0.0.1 over ``tls://`` with
certificates made here by ``openssl`` (three students, one worker killed in the middle).
Every cell's score and comment, every autograded notebook (its execution times aside) and
every feedback page must equal the reference's. Also: Ctrl-C (a real SIGINT) keeps what was
graded and the next run grades the rest; ``tcp://`` to another machine is refused before
any connection; a client without the course's certificate is refused by the scheduler.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import signal
import socket
import sqlite3
import ssl
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat
import pytest

from specdec_lite import classroom

from .grading_class import LAB, ROOT, graded_class

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="grading needs bubblewrap")
COURSE_ID = "specdec-theory"


def fresh_copy(tmp: Path, students: list[str]) -> Path:
    """The reference course before grading: its config, master, roster and these students' submissions."""
    ref = graded_class()["course"]
    course = tmp / "course"
    (course / "submitted").mkdir(parents=True)
    shutil.copy2(ref / "nbgrader_config.py", course)
    shutil.copytree(ref / "source", course / "source")
    for s in students:
        shutil.copytree(ref / "submitted" / s, course / "submitted" / s)
    shutil.copy2(ref / "gradebook.db", course / "gradebook.db")
    db = sqlite3.connect(course / "gradebook.db")
    for table in ("comment", "grade", "submitted_notebook", "submitted_assignment"):
        db.execute(f"DELETE FROM {table}")  # noqa: S608
    db.commit()
    db.close()
    return course


def gradebook_rows(course: Path, students: list[str]) -> dict:
    """Every value a grader writes, per submission: timestamp, late penalties, each grade and comment."""
    from nbgrader.api import Gradebook, MissingEntry

    rows = {}
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", COURSE_ID) as gb:
        for s in students:
            try:
                sub = gb.find_submission(LAB, s)
            except MissingEntry:
                rows[s] = None
                continue
            rows[s] = {
                "timestamp": str(sub.timestamp),
                "notebooks": {
                    nb.name: {
                        "penalty": nb.late_submission_penalty,
                        "grades": {
                            g.name: (g.auto_score, g.manual_score, g.needs_manual_grade, g.extra_credit)
                            for g in nb.grades
                        },
                        "comments": {c.name: (c.auto_comment, c.manual_comment) for c in nb.comments},
                    }
                    for nb in sub.notebooks
                },
            }
    return rows


#: What differs between two gradings of the same notebook, whichever way: widget ids, the instances a check draws
#: while it runs (its message and what an answer logs on them), the execution times and counts.
_WIDGET_ID = re.compile(r"[0-9a-f]{32}")
_DRAWN = "drawn-instance message"


def comparable(nb: nbformat.NotebookNode) -> dict:
    """An autograded notebook without what changes from one grading to the next (``_WIDGET_ID``, ``_DRAWN``);
    a cell's streams joined per stream (how a kernel's prints are split into outputs depends on timing)."""
    nb.metadata.pop("widgets", None)
    cells = []
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
        cell.pop("id", None)  # a graded cell put back from the master gets a new id each time
        cell.pop("execution_count", None)  # after a dead kernel, how many cells a fresh one replays varies
        outs, streams = [], {}
        for out in cell.get("outputs", []):
            out = json.loads(_WIDGET_ID.sub("ID", json.dumps(out)))
            if out.get("output_type") == "stream":
                kept = "".join(ln for ln in out["text"].splitlines(True) if "tv called with" not in ln)
                streams[out["name"]] = streams.get(out["name"], "") + kept
                continue
            out.pop("execution_count", None)
            if out.get("ename") == "NotYet":
                out["evalue"], out["traceback"] = _DRAWN, []
            outs.append(out)
        cells.append({**cell, "outputs": outs, "streams": streams} if cell.cell_type == "code" else dict(cell))
    return {"metadata": dict(nb.metadata), "cells": cells}


def autograded_files(course: Path, students: list[str]) -> dict:
    """Each autograded file, comparable: a notebook by ``comparable``, a record without the grader's peak memory."""
    found = {}
    for s in students:
        folder = course / "autograded" / s / LAB
        for path in sorted(folder.rglob("*")) if folder.is_dir() else []:
            key = f"{s}/{path.relative_to(folder)}"
            if path.suffix == ".ipynb":
                found[key] = comparable(nbformat.read(path, as_version=4))
            elif path.name == ".grading.json":
                rec = json.loads(path.read_text())
                rec.pop("grader_peak_rss_bytes", None)
                found[key] = rec
            else:
                found[key] = path.read_bytes()
            found[key + " mode"] = path.stat().st_mode & 0o777
    return found


_SCORE = re.compile(r"Score: [0-9.]+ / [0-9.]+")


def feedback(course: Path, tmp: Path, students: list[str]) -> dict:
    """Which feedback pages ``nbgrader generate_feedback`` makes, with every score they show (the total and each
    graded cell's), made in a copy: the reference course stays as it is."""
    copy = tmp / f"feedback-{course.parent.name}-{course.name}"
    shutil.copytree(course, copy)
    nbg = [sys.executable, "-m", "nbgrader", "generate_feedback", LAB]
    subprocess.run(nbg, cwd=copy, env=classroom.nbgrader_env(), capture_output=True, check=True, timeout=600)
    pages = {s: copy / "feedback" / s / LAB / f"{LAB}.html" for s in students}
    return {s: _SCORE.findall(p.read_text()) if p.is_file() else None for s, p in pages.items()}


@functools.cache
def reference_feedback() -> dict:
    """``feedback`` of the whole reference class, made once."""
    ref = graded_class()["course"]
    students = sorted(p.name for p in (ref / "submitted").iterdir() if p.is_dir())
    return feedback(ref, Path(tempfile.mkdtemp(prefix="specdec-parallel-feedback-")), students)


def same_as_reference(course: Path, tmp: Path, students: list[str]) -> None:
    ref = graded_class()["course"]
    assert gradebook_rows(course, students) == gradebook_rows(ref, students)
    mine, theirs = autograded_files(course, students), autograded_files(ref, students)
    assert sorted(mine) == sorted(theirs)
    for key in theirs:
        if isinstance(theirs[key], dict) and "cells" in theirs[key]:
            pairs = zip(mine[key]["cells"], theirs[key]["cells"], strict=True)
            diff = [(i, k) for i, (a, b) in enumerate(pairs) for k in set(a) | set(b) if a.get(k) != b.get(k)]
            assert not diff, (key, diff, [(mine[key]["cells"][i][k], theirs[key]["cells"][i][k]) for i, k in diff][:2])
        assert mine[key] == theirs[key], key
    assert feedback(course, tmp, students) == {s: reference_feedback()[s] for s in students}


def autograde(course: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "specdec_lite.classroom", "autograde", LAB, *args]
    return subprocess.run(
        cmd, cwd=course, env=env or classroom.nbgrader_env(), capture_output=True, text=True, timeout=1200
    )


def test_jobs_grade_the_class_as_one_at_a_time(tmp_path: Path) -> None:
    """``--jobs 2``: the mixed class's gradebook, autograded notebooks and feedback equal the one-at-a-time run's."""
    students = sorted(p.name for p in (graded_class()["course"] / "submitted").iterdir())
    assert {"attacker", "broken", "cheater", "crasher", "honest", "printer"} <= set(students)
    course = fresh_copy(tmp_path, students)
    run = autograde(course, "--jobs", "2")
    assert run.returncode == 0, run.stderr[-3000:]
    assert f"autograde {LAB}: nbgrader exited with an error for broken" in run.stdout
    assert graded_class()["survivors"] == []
    same_as_reference(course, tmp_path, students)
    log = (course / "autograded" / f".autograde_{LAB}.log").read_text()
    assert [ln.split()[1] for ln in log.splitlines() if ln.startswith("=== ")] == [f"{s}/{LAB}" for s in students]
    again = autograde(course, "--jobs", "2")  # graded before: skipped, nothing changes
    assert again.returncode == 0 and gradebook_rows(course, students) == gradebook_rows(
        graded_class()["course"], students
    )


def test_ctrl_c_keeps_what_was_graded_and_the_next_run_grades_the_rest(tmp_path: Path) -> None:
    """A real SIGINT while ``--jobs 2`` grades three students; the next ``autograde`` grades the rest, once."""
    students = ["cheater", "honest", "printer"]
    course = fresh_copy(tmp_path, students)
    cmd = [sys.executable, "-m", "specdec_lite.classroom", "autograde", LAB, "--jobs", "2"]
    proc = subprocess.Popen(
        cmd, cwd=course, env=classroom.nbgrader_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    done = lambda: [s for s in students if (course / "autograded" / s / LAB / f"{LAB}.ipynb").is_file()]  # noqa: E731
    deadline = time.monotonic() + 600
    while not done() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    first = done()
    assert first and proc.returncode in (0, 130), err[-3000:]
    if proc.returncode == 130:  # stopped before the end (the usual case): said so, and the rest left for later
        assert "run autograde again" in err and len(first) < len(students)
    rows = gradebook_rows(course, students)
    assert all(rows[s] is not None for s in first)
    assert all(rows[s] is None for s in students if s not in first)  # nothing half-written
    stamps = {s: (course / "autograded" / s / LAB / f"{LAB}.ipynb").stat().st_mtime_ns for s in first}
    rest = autograde(course, "--jobs", "2")
    assert rest.returncode == 0, rest.stderr[-3000:]
    assert stamps == {s: (course / "autograded" / s / LAB / f"{LAB}.ipynb").stat().st_mtime_ns for s in first}
    same_as_reference(course, tmp_path, students)


def _own_address() -> str | None:
    """A non-loopback address of this machine (the default route's), or None."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("192.0.2.1", 9))  # a UDP "connect" sends nothing
            return s.getsockname()[0]
        except OSError:
            return None


def test_plain_tcp_to_another_machine_is_refused_before_connecting(tmp_path: Path) -> None:
    """``--scheduler tcp://<this machine's own network address>``: refused; the listener there sees nothing."""
    host = _own_address()
    if host is None or host.startswith("127."):
        pytest.skip("no network address besides loopback")
    sock = socket.socket()
    sock.bind(("0.0.0.0", 0))
    sock.listen(1)
    sock.settimeout(3)
    port = sock.getsockname()[1]
    try:
        course = tmp_path / "course"  # a course with a lab: the refusal comes before any grading
        shutil.copytree(ROOT / "notebooks" / "source" / LAB, course / "source" / LAB)
        shutil.copy2(ROOT / "notebooks" / "nbgrader_config.py", course)
        run = autograde(course, "--scheduler", f"tcp://{host}:{port}")
        assert run.returncode == 2
        assert "refusing" in run.stderr and "tls://" in run.stderr, run.stderr
        with pytest.raises(TimeoutError):
            sock.accept()
    finally:
        sock.close()
    from specdec_lite.classroom.cluster import SchedulerRefused, check_address

    for ok in (
        "tcp://127.0.0.1:8786",
        "tcp://127.3.4.5:1",
        "tcp://[::1]:8786",
        "tcp://localhost:8786",
        "tls://grader.example.org:8786",
    ):
        check_address(ok)
    for bad in (
        "tcp://grader.example.org:8786",
        "tcp://10.0.0.2:8786",
        "tcp://0.0.0.0:8786",
        "ws://127.0.0.1:1",
        "127.0.0.1:8786",
    ):
        with pytest.raises(SchedulerRefused):
            check_address(bad)


# --- a real Dask cluster over mutual TLS --------------------------------------------------------------------------


def _certificates(folder: Path) -> dict[str, Path]:
    """One CA for the course and one certificate signed by it (the scheduler's, the workers' and the client's)."""
    ca_key, ca, key, csr, cert = (folder / n for n in ("ca.key", "ca.pem", "node.key", "node.csr", "node.pem"))
    ssl = ["openssl"]
    subprocess.run(
        [
            *ssl,
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=course CA",
            "-keyout",
            ca_key,
            "-out",
            ca,
        ],
        check=True,
        capture_output=True,
    )
    subprocess.run(
        [*ssl, "req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=grading", "-keyout", key, "-out", csr],
        check=True,
        capture_output=True,
    )
    subprocess.run(
        [*ssl, "x509", "-req", "-in", csr, "-CA", ca, "-CAkey", ca_key, "-CAcreateserial", "-days", "1", "-out", cert],
        check=True,
        capture_output=True,
    )
    return {"ca": ca, "cert": cert, "key": key}


@pytest.fixture(scope="module")
def tls_cluster(tmp_path_factory):
    """A ``dask scheduler`` and two ``dask worker`` processes (no nanny) on 127.0.0.1, over ``tls://``."""
    tmp = tmp_path_factory.mktemp("tls-cluster")
    certs = _certificates(tmp)
    tls = ["--tls-ca-file", str(certs["ca"]), "--tls-cert", str(certs["cert"]), "--tls-key", str(certs["key"])]
    env = classroom.nbgrader_env()
    dask = [str(Path(sys.executable).parent / "dask")]
    info = tmp / "scheduler.json"
    procs = [
        subprocess.Popen(
            [
                *dask,
                "scheduler",
                "--protocol",
                "tls",
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--no-dashboard",
                "--scheduler-file",
                str(info),
                *tls,
            ],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    ]
    try:
        deadline = time.monotonic() + 120
        while not info.is_file() and time.monotonic() < deadline:
            time.sleep(0.2)
        address = json.loads(info.read_text())["address"]
        for _ in range(2):
            procs.append(
                subprocess.Popen(
                    [*dask, "worker", address, "--nthreads", "1", "--no-nanny", *tls],
                    env=env,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
            )
        yield {"address": address, "certs": certs, "workers": procs[1:]}
    finally:
        for p in procs:
            p.kill()
            p.wait()


def _tls_config(certs: dict[str, Path]) -> dict:
    return {
        "distributed.comm.tls.ca-file": str(certs["ca"]),
        "distributed.comm.tls.client.cert": str(certs["cert"]),
        "distributed.comm.tls.client.key": str(certs["key"]),
        "distributed.comm.require-encryption": True,
    }


def test_dask_over_tls_grades_each_submission_once_with_a_worker_killed(tls_cluster, tmp_path: Path) -> None:
    """Three students through the TLS cluster; the busy worker is killed after the first is written: nothing lost."""
    import dask
    import distributed  # noqa: F401 - its configuration's defaults loaded before dask.config.set

    from specdec_lite.classroom.cluster import connect
    from specdec_lite.classroom.parallel import grade_class

    assert tls_cluster["address"].startswith("tls://127.0.0.1:")
    students = ["cheater", "crasher", "honest"]
    course = fresh_copy(tmp_path, students)
    killed = []
    with dask.config.set(_tls_config(tls_cluster["certs"])), connect(tls_cluster["address"]) as client:
        client.wait_for_workers(2, timeout=120)
        pids = client.run(os.getpid)

        def kill_a_busy_worker(lab: str, who: str) -> None:
            if killed:
                return
            busy = [addr for addr, keys in client.processing().items() if keys]
            if busy:
                os.kill(pids[busy[0]], signal.SIGKILL)
                killed.append(busy[0])

        out = grade_class(course, [LAB], client=client, on_merged=kill_a_busy_worker, progress=False)
    assert killed, "no worker was busy after the first submission was written"
    assert sorted(out.merged) == [(LAB, s) for s in students]  # each written once
    assert out.status == {LAB: dict.fromkeys(students, 0)} and not out.stopped
    same_as_reference(course, tmp_path, students)


def test_tls_scheduler_refuses_a_client_without_the_certificate(tls_cluster, tmp_path: Path) -> None:
    """No client certificate, a certificate of another CA, or plain tcp://: the scheduler lets none of them in."""
    from distributed import Client
    from distributed.security import Security

    from specdec_lite.classroom.cluster import SchedulerRefused, security

    address, certs = tls_cluster["address"], tls_cluster["certs"]
    host, port = address.removeprefix("tls://").rsplit(":", 1)
    context = ssl.create_default_context(cafile=str(certs["ca"]))  # trusts the scheduler, shows no certificate
    context.check_hostname = False
    with pytest.raises((ssl.SSLError, ConnectionError)):
        with socket.create_connection((host, int(port)), timeout=10) as raw, context.wrap_socket(raw) as tls:
            tls.sendall(b"\0" * 8)
            assert tls.recv(1) == b"", "the scheduler answered a client without a certificate"
            raise ConnectionError("closed by the scheduler")
    stranger = _certificates(tmp_path)  # a certificate signed by another CA
    foreign = Security(
        tls_ca_file=str(certs["ca"]),
        tls_client_cert=str(stranger["cert"]),
        tls_client_key=str(stranger["key"]),
        require_encryption=True,
    )
    with pytest.raises((OSError, TimeoutError)):
        Client(address, security=foreign, timeout=10, set_as_default=False)
    with pytest.raises((OSError, TimeoutError)):
        Client(address.replace("tls://", "tcp://"), timeout=10, set_as_default=False)
    with pytest.raises(SchedulerRefused, match="ca-file"):
        security()  # no TLS configuration in this process: refused before connecting


def test_a_result_out_of_shape_is_refused() -> None:
    """The instructor's process reads a job's result as hostile: only the shape, names and sizes of a result pass."""
    from specdec_lite.classroom.parallel import ResultRefused, check_result

    cells = {"grades": {(LAB, "check_tv"): 2.0}, "comments": {(LAB, "explore_q1")}, "notebooks": {LAB}}
    job = {"lab": LAB, "student": "ada"}
    good = {
        "lab": LAB,
        "student": "ada",
        "returncode": 0,
        "log": "",
        "files": [[f"{LAB}.ipynb", 0o444, b"{}"]],
        "grades": [[LAB, "check_tv", 2.0, False]],
        "comments": [[LAB, "explore_q1", None]],
        "penalties": [[LAB, None]],
    }
    assert check_result(good, job, cells) is good
    bad = [
        {**good, "student": "bob"},  # another submission
        {**good, "files": [["../../gradebook.db", 0o644, b""]]},
        {**good, "files": [["/etc/passwd", 0o644, b""]]},
        {**good, "files": [["a", 0o4755, b""]]},  # setuid
        {**good, "files": [["a", 0o644, b""], ["a", 0o644, b""]]},
        {**good, "grades": [[LAB, "check_tv", 99.0, False]]},  # above the cell's points
        {**good, "grades": [[LAB, "check_tv", float("nan"), False]]},
        {**good, "grades": [[LAB, "not_a_cell", 1.0, False]]},
        {**good, "comments": [[LAB, "explore_q1", "x" * 20_000]]},
        {**good, "penalties": [[LAB, -5.0]]},
        {**good, "extra": 1},
        {**good, "returncode": True},
        "not a result",
    ]
    for result in bad:
        with pytest.raises(ResultRefused):
            check_result(result, job, cells)


def test_the_class_table_gives_the_course_row_every_cell() -> None:
    """The course's row: its speed-up is that of the summed minutes; no cell is left blank."""
    from specdec_lite.classroom.parallel import class_runs, class_runs_table

    bench = class_runs()
    last = class_runs_table(bench).splitlines()[-1].strip("| ").split(" | ")
    course = bench["course_min"]
    assert last[-2] == f"{course['one_at_a_time'] / course['jobs2']:.2f}×" and last[-1] == "—"
    assert all(cell.strip() for cell in last), last
