"""Each lab master and its MyST twin hold the same cells (the jupytext pairing; ``tests/test_classroom.py``).

A master ``<course>/source/<lab>/<lab>.ipynb`` is edited through its twin ``<lab>.md``, then
``jupytext --sync <lab>.md`` writes the notebook; both must hold the same cells (type, source and
nbgrader metadata), for the English course ``notebooks/`` and the Chinese one ``zh/notebooks/``.

Command line (from the repository root)::

    python tools/lab_twins.py      # the masters out of step with their twins, exit status 1 if any
"""

from __future__ import annotations

import sys
from pathlib import Path

import jupytext
import nbformat

ROOT = Path(__file__).resolve().parents[1]
COURSES = (ROOT / "notebooks", ROOT / "zh" / "notebooks")


def cells(nb: nbformat.NotebookNode) -> list[tuple[str, str, dict]]:
    """What the pairing keeps: each cell's type, source and nbgrader metadata."""
    return [(c.cell_type, c.source, c.metadata.get("nbgrader", {})) for c in nb.cells]


def unpaired(courses: tuple[Path, ...] = COURSES) -> list[str]:
    """The masters whose cells differ from their MyST twin's (or that have none), with the command to run."""
    out = []
    for course in courses:
        for master in sorted((course / "source").glob("*/*.ipynb")):
            if master.stem != master.parent.name:
                continue
            twin = master.with_suffix(".md")
            shown = twin.relative_to(ROOT)
            if not twin.is_file():
                out.append(f"{master.relative_to(ROOT)}: no MyST twin {shown}")
            elif cells(jupytext.read(twin)) != cells(nbformat.read(master, as_version=4)):
                out.append(f"{master.relative_to(ROOT)}: not its twin's cells: jupytext --sync {shown}")
    return out


if __name__ == "__main__":
    found = unpaired()
    print("\n".join(found) or "every lab master holds its MyST twin's cells")
    sys.exit(1 if found else 0)
