"""Autograde lab by lab, keeping nbgrader's log of each run next to the autograded notebooks.

One ``nbgrader autograde <lab>`` per lab, so that a lab's run and its log stand alone;
each cell runs with its lab's timeout (``timeouts``), applied by ``execute.GradingExecute``.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from .release import COURSE, masters, nbgrader_env


def log_path(course: Path, lab: str) -> Path:
    """Where nbgrader's output of the last ``autograde`` of ``lab`` is kept."""
    return Path(course) / "autograded" / f".autograde_{lab}.log"


def autograde(
    course: Path = COURSE, labs: Sequence[str] | None = None, student: str | None = None, force: bool = False
) -> dict[str, int]:
    """Run ``nbgrader autograde`` once per lab that has submissions; ``{lab: exit status}``."""
    course = Path(course)
    known = [m.stem for m in masters(course)]
    unknown = sorted(set(labs or ()) - set(known))
    if unknown:
        raise ValueError(f"labs: no master for {unknown} in {course / 'source'}")
    status = {}
    for lab in labs or known:
        pattern = f"{student}/{lab}" if student else f"*/{lab}"
        if not any((course / "submitted").glob(pattern)):
            continue
        args = [sys.executable, "-m", "nbgrader", "autograde", lab]
        args += [f"--student={student}"] if student else []
        args += ["--force"] if force else []
        proc = subprocess.run(args, cwd=course, env=nbgrader_env(), capture_output=True, text=True)
        log = log_path(course, lab)
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text(proc.stdout + proc.stderr)
        status[lab] = proc.returncode
    return status
