"""Grade one submission away from the course: what a grading job (a local job or a Dask worker) runs.

``grade_submission(job)`` receives one submission and what grading it needs, all as values
(``Job``: the lab's name, the student's id, the submission's files, the lab's source files,
the course's ``nbgrader_config.py`` and a copy of its gradebook holding the labs and no
student), builds a scratch course in a temporary folder, runs
``nbgrader autograde <lab> --student <id>`` there exactly as ``grade.autograde_each`` does
in the course (each kernel in the sandbox, with today's limits), in a fresh child of a
zygote that imported nbgrader once (``zygote``), and returns what the run produced
(``Result``), as plain values. It never
opens the instructor's course directory, gradebook or masters: on a cluster it may run on
another machine. The instructor's process checks the result (``parallel.check_result``)
and alone writes it into the course.

What nbgrader wrote to the scratch gradebook is told apart from what it left alone by
seeding the submission with marks no grader writes (``UNSET_SCORE``, ``UNSET_COMMENT``,
``UNSET_PENALTY``): only the values nbgrader changed come back, so a submission that fails
half-way leaves the course's gradebook as a one-at-a-time run would.
"""

from __future__ import annotations

import tempfile
import threading
import warnings
from datetime import timedelta
from pathlib import Path, PurePosixPath
from typing import Any

from .zygote import Zygotes

#: Marks seeded into the scratch gradebook: values that nbgrader never writes.
UNSET_SCORE = -1.0
UNSET_COMMENT = "\x00unset\x00"
UNSET_PENALTY = -1.0

#: What a job receives (``parallel.job_for`` builds it; every value is plain data).
Job = dict[str, Any]
#: What a job returns (``parallel.check_result`` checks it before anything is written).
Result = dict[str, Any]

#: The keys of a result, each with its type.
RESULT_KEYS: dict[str, type | tuple[type, ...]] = {
    "lab": str,
    "student": str,
    "returncode": int,
    "log": str,
    "files": list,
    "grades": list,
    "comments": list,
    "penalties": list,
}

#: Bytes of nbgrader's output kept in a result (its end is kept when longer).
MAX_LOG_BYTES = 1 << 20

#: The zygotes this process grades through (``zygote``): each job borrows one, and its fresh child runs nbgrader.
_ZYGOTES: Zygotes | None = None
_LOCK = threading.Lock()


def zygotes() -> Zygotes:
    """This process's pool of zygotes, started with nbgrader's environment (``release.nbgrader_env``)."""
    global _ZYGOTES
    from .release import nbgrader_env

    with _LOCK:
        if _ZYGOTES is None:
            _ZYGOTES = Zygotes(nbgrader_env)
        return _ZYGOTES


def stop_running() -> None:
    """End the ``nbgrader`` runs of this process's jobs (their kernels end with them: ``--die-with-parent``)."""
    if _ZYGOTES is not None:
        _ZYGOTES.stop_children()


def _write(root: Path, files: dict[str, bytes]) -> None:
    for rel, data in files.items():
        path = root / PurePosixPath(rel)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def _seed(course: Path, job: Job) -> None:
    """The submission in the scratch gradebook, every value nbgrader may write marked as unset."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # nbgrader's add_submission warns of SQLAlchemy's autoflush
        gb.update_or_create_student(job["student"])
        sub = gb.update_or_create_submission(job["lab"], job["student"])
        if job.get("extension_s") is not None:
            sub.extension = timedelta(seconds=float(job["extension_s"]))
        manual = job.get("manual") or {}
        for nb in sub.notebooks:
            nb.late_submission_penalty = UNSET_PENALTY
            for grade in nb.grades:
                grade.auto_score = UNSET_SCORE
                grade.manual_score = manual.get(f"{nb.name}/{grade.name}")
            for comment in nb.comments:
                comment.auto_comment = UNSET_COMMENT
        gb.db.commit()


def _written(course: Path, job: Job) -> tuple[list, list, list]:
    """What nbgrader wrote to the submission in the scratch gradebook: grades, comments, late penalties."""
    from nbgrader.api import Gradebook

    grades, comments, penalties = [], [], []
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        sub = gb.find_submission(job["lab"], job["student"])
        for nb in sub.notebooks:
            if nb.late_submission_penalty != UNSET_PENALTY:
                penalties.append([nb.name, nb.late_submission_penalty])
            for g in nb.grades:
                if g.auto_score != UNSET_SCORE:
                    grades.append([nb.name, g.name, g.auto_score, bool(g.needs_manual_grade)])
            for c in nb.comments:
                if c.auto_comment != UNSET_COMMENT:
                    comments.append([nb.name, c.name, c.auto_comment])
    return grades, comments, penalties


def _outputs(folder: Path) -> list[list]:
    """``[relative path, mode, bytes]`` of every file nbgrader left in the autograded folder."""
    if not folder.is_dir():
        return []
    found = []
    for path in sorted(folder.rglob("*")):
        if path.is_file() and not path.is_symlink():
            found.append([path.relative_to(folder).as_posix(), path.stat().st_mode & 0o777, path.read_bytes()])
    return found


def grade_submission(job: Job) -> Result:
    """Autograde one submission in a scratch course (see the module's docstring); the run's result, as values."""
    from . import sandbox
    from .release import nbgrader_env

    if job["sandboxed"]:
        sandbox.require()  # a worker without bubblewrap refuses, as the instructor's machine does
    lab, student = job["lab"], job["student"]
    with tempfile.TemporaryDirectory(prefix="specdec-grade-") as tmp:
        course = Path(tmp) / "course"
        course.mkdir()
        (course / "nbgrader_config.py").write_text(job["config"])
        (course / "gradebook.db").write_bytes(job["gradebook"])
        _write(course / "source" / lab, job["source"])
        _write(course / "submitted" / student / lab, job["submission"])
        _seed(course, job)
        args = ["autograde", lab, f"--student={student}"]
        args += [] if job["sandboxed"] else ["--GradingExecute.sandbox=off"]
        pool = zygotes()
        zygote = pool.borrow()
        try:
            returncode = zygote.run(args, course, nbgrader_env(), Path(tmp) / "nbgrader.log", job.get("core"))
        finally:
            pool.give_back(zygote)
        out = (Path(tmp) / "nbgrader.log").read_bytes().decode(errors="replace")
        log = out.replace(str(course), job.get("course", str(course)))
        if len(log.encode()) > MAX_LOG_BYTES:
            log = log.encode()[-MAX_LOG_BYTES:].decode(errors="replace")
        grades, comments, penalties = _written(course, job)
        return {
            "lab": lab,
            "student": student,
            "returncode": returncode,
            "log": log,
            "files": _outputs(course / "autograded" / student / lab),
            "grades": grades,
            "comments": comments,
            "penalties": penalties,
        }
