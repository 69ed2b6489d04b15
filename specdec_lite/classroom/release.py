"""Release: the labs' student copies, written by nbgrader from the instructor masters.

``notebooks/`` is an nbgrader course directory: ``notebooks/nbgrader_config.py`` and one
master per lab in ``notebooks/source/<lab>/<lab>.ipynb`` (paired by jupytext with the
MyST file ``<lab>.md`` next to it, which is the one to edit). A master carries nbgrader's
cell metadata: solution regions between ``### BEGIN SOLUTION`` and ``### END SOLUTION``,
graded cells that call a ``check_...(...).assert_correct()`` of ``specdec_lite.exercises``,
and manually graded answers to the exploration questions.

The student copies ``notebooks/<lab>.ipynb`` (what the book shows and the Colab badges
open) are exactly what ``nbgrader generate_assignment <lab>`` releases. The Chinese labs,
``zh/notebooks/`` (:data:`ZH_COURSE`), are a course directory of the same form. ``release`` runs
that command in a scratch copy of the course directory, so the repository gets no
gradebook or ``release/`` folder, and copies each result to ``notebooks/<lab>.ipynb``.
``points()`` reads each lab's points from those copies.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

#: The course directory of the repository (where the student copies are committed).
COURSE = Path(__file__).resolve().parents[2] / "notebooks"

#: The Chinese labs' course directory: the same labs with their text in Chinese, generated from the English
#: masters by ``tools/labs_zh.py`` (same cells, grade ids, points and checks), released with the English ones.
ZH_COURSE = COURSE.parent / "zh" / "notebooks"


def masters(course: Path = COURSE) -> list[Path]:
    """The master notebook of every lab: ``course/source/<lab>/<lab>.ipynb``."""
    course = Path(course)
    if not (course / "source").is_dir():
        raise ValueError(f"course: no source/ folder in {course}")
    return sorted(p for p in (course / "source").glob("*/*.ipynb") if p.stem == p.parent.name)


def points(course: Path = COURSE) -> dict[str, dict[str, Any]]:
    """Points per lab from the student copies' nbgrader metadata: ``{lab: {"title", "auto", "manual"}}``.

    ``title``: the lab's title (its first line); ``auto``: the points of the graded check cells
    (autograded); ``manual``: those of the answers to the exploration questions (graded by hand).
    """
    import nbformat

    out = {}
    for master in masters(course):
        nb = nbformat.read(Path(course) / master.name, as_version=4)
        row: dict[str, Any] = {"title": nb.cells[0].source.splitlines()[0].lstrip("# "), "auto": 0.0, "manual": 0.0}
        for cell in nb.cells:
            meta = cell.metadata.get("nbgrader", {})
            if meta.get("grade"):
                row["manual" if meta.get("solution") else "auto"] += float(meta["points"])
        out[master.stem] = row
    return out


def nbgrader_env() -> dict[str, str]:
    """The environment nbgrader needs.

    It calls ``alembic`` from PATH, so the interpreter's bin comes first; the course's
    ``nbgrader_config.py`` and the labs import ``specdec_lite``, so this package's folder
    is on PYTHONPATH (an editable install gives the same).
    """
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(p for p in [root, env.get("PYTHONPATH", "")] if p)
    return env


def generate(course: Path = COURSE, labs: Sequence[str] | None = None) -> dict[str, bytes]:
    """Run ``nbgrader generate_assignment`` on a scratch copy of ``course``: ``{lab: student copy}``."""
    course = Path(course)
    names = [p.stem for p in masters(course)]
    if labs:
        unknown = sorted(set(labs) - set(names))
        if unknown:
            raise ValueError(f"labs: no master for {unknown} in {course / 'source'}")
        names = [n for n in names if n in labs]
    out: dict[str, bytes] = {}
    with tempfile.TemporaryDirectory(prefix="specdec-course-") as tmp:
        scratch = Path(tmp)
        shutil.copy2(course / "nbgrader_config.py", scratch / "nbgrader_config.py")
        for name in names:
            (scratch / "source" / name).mkdir(parents=True)
            shutil.copy2(course / "source" / name / f"{name}.ipynb", scratch / "source" / name)
        for name in names:
            proc = subprocess.run(
                [sys.executable, "-m", "nbgrader", "generate_assignment", name, "--no-db", "--force"],
                cwd=scratch,
                env=nbgrader_env(),
                capture_output=True,
                text=True,
            )
            released = scratch / "release" / name / f"{name}.ipynb"
            if proc.returncode != 0 or not released.is_file():
                raise RuntimeError(f"nbgrader generate_assignment {name} failed:\n{proc.stderr[-3000:]}")
            out[name] = released.read_bytes()
    return out


def release(course: Path = COURSE, check: bool = False, labs: Sequence[str] | None = None) -> list[str]:
    """Write (or, with ``check``, compare) ``course/<lab>.ipynb``; the labs whose copy was stale."""
    stale = []
    for name, data in generate(course, labs).items():
        target = Path(course) / f"{name}.ipynb"
        if target.is_file() and target.read_bytes() == data:
            continue
        stale.append(name)
        if not check:
            target.write_bytes(data)
    return stale
