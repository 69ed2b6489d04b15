"""Autograde lab by lab and student by student, keeping nbgrader's log next to the autograded notebooks.

One ``nbgrader autograde <lab> --student <id>`` per submission, so that one bad notebook
(a duplicated grade id, a file nbgrader cannot read) fails alone and every other student
is graded; the lab's log holds each run, headed by ``=== <student>/<lab> ===``. Each cell
runs with its lab's timeout (``timeouts``) in the sandbox (``sandbox``), applied by
``execute.GradingExecute``; ``sandboxed=False`` passes ``--GradingExecute.sandbox=off``.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from .progress import Progress
from .release import COURSE, masters, nbgrader_env


def log_path(course: Path, lab: str) -> Path:
    """Where nbgrader's output of the last ``autograde`` of ``lab`` is kept."""
    return Path(course) / "autograded" / f".autograde_{lab}.log"


def autograde(
    course: Path = COURSE,
    labs: Sequence[str] | None = None,
    student: str | None = None,
    force: bool = False,
    sandboxed: bool = True,
) -> dict[str, int]:
    """Autograde every submission of each lab that has some; ``{lab: worst exit status of nbgrader}``."""
    runs = autograde_each(course, labs, student=student, force=force, sandboxed=sandboxed)
    return {lab: max(codes.values()) for lab, codes in runs.items()}


def autograde_each(
    course: Path = COURSE,
    labs: Sequence[str] | None = None,
    student: str | None = None,
    force: bool = False,
    sandboxed: bool = True,
    progress: bool | None = False,
) -> dict[str, dict[str, int]]:
    """Run ``nbgrader autograde <lab> --student <id>`` per submission; ``{lab: {student: exit status}}``.

    ``progress``: the progress bar (``None``: when standard error is a terminal)."""
    course = Path(course)
    known = [m.stem for m in masters(course)]
    unknown = sorted(set(labs or ()) - set(known))
    if unknown:
        raise ValueError(f"labs: no master for {unknown} in {course / 'source'}")
    status: dict[str, dict[str, int]] = {}
    classes = {}
    for lab in labs or known:
        pattern = f"{student}/{lab}" if student else f"*/{lab}"
        classes[lab] = sorted(p.parent.name for p in (course / "submitted").glob(pattern) if p.is_dir())
    bar = Progress(sum(map(len, classes.values())), progress)
    for lab, students in classes.items():
        if not students:
            continue
        parts, status[lab] = [], {}
        for who in students:
            args = [sys.executable, "-m", "nbgrader", "autograde", lab, f"--student={who}"]
            args += ["--force"] if force else []
            args += [] if sandboxed else ["--GradingExecute.sandbox=off"]
            proc = subprocess.run(args, cwd=course, env=nbgrader_env(), capture_output=True, text=True)
            parts.append(f"=== {who}/{lab} (nbgrader exited with {proc.returncode}) ===\n{proc.stdout}{proc.stderr}")
            status[lab][who] = proc.returncode
            bar.step(proc.returncode == 0)
        log = log_path(course, lab)
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text("".join(parts))
    bar.close()
    return status
