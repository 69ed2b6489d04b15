"""Graded cells a submission lost, put back before grading: deleted, copied twice, or stripped of metadata.

nbgrader finds a lab's cells by their metadata (``grade_id``). A student who deletes a
graded check cell, or whose notebook lost its cells' nbgrader metadata (a notebook
rebuilt by copy-paste, a tool that strips metadata), got no grade for it and no word;
two cells with one ``grade_id`` (a copied cell) made nbgrader keep one and drop the
other's metadata. ``restore(nb, master)`` compares a submission with the lab's master:

* a read-only cell of the master (a graded check, a locked cell) whose ``grade_id`` is
  missing gets its metadata back when a cell of the same source is there, or is put
  back from the master, after the cell that precedes it in the master;
* an answer cell (``### BEGIN SOLUTION`` in the master) whose ``grade_id`` is missing gets
  its metadata back when a cell of the same kind without metadata starts with the same
  line (``def tv(p, q):``, ``**Answer to question 1.**``);
* a ``grade_id`` held by several cells (a copied cell) stays on the last one only; the
  others run as plain cells (nbgrader would leave them with empty metadata, then stop
  on them: nbgrader #1083).

It returns one line per change, which ``report`` prints. ``RestoreGradedCells`` runs it
in nbgrader's sanitizing step, before nbgrader overwrites read-only cells from the master.
"""

from __future__ import annotations

import copy
from collections import Counter
from pathlib import Path
from typing import Any

import nbformat
from nbformat.notebooknode import NotebookNode
from nbgrader.preprocessors import NbGraderPreprocessor


def _meta(cell: NotebookNode) -> dict[str, Any]:
    return cell.get("metadata", {}).get("nbgrader", {}) or {}


def _first_line(text: str) -> str:
    return next((ln.strip() for ln in text.splitlines() if ln.strip()), "")


def _ids(nb: NotebookNode) -> Counter:
    return Counter(_meta(c).get("grade_id") for c in nb.cells if _meta(c).get("grade_id"))


def restore(nb: NotebookNode, master: NotebookNode) -> list[str]:
    """Put back in ``nb`` (in place) what it lost of ``master``'s nbgrader cells; one line per change."""
    events = []
    for gid, n in _ids(nb).items():
        if n > 1:  # nbgrader would empty the metadata of all but the last and then stop on it (nbgrader #1083)
            held = [c for c in nb.cells if _meta(c).get("grade_id") == gid]
            for cell in held[:-1]:
                cell.metadata.pop("nbgrader")
            events.append(f"{gid} was held by {n} cells (a copied cell?); the last one is graded, the others run")
    for index, ref in enumerate(master.cells):
        meta = _meta(ref)
        gid = meta.get("grade_id")
        if not gid or gid in _ids(nb):
            continue
        bare = [c for c in nb.cells if not _meta(c) and c.cell_type == ref.cell_type]
        if meta.get("solution"):
            head = _first_line(ref.source)
            same = [c for c in bare if head and _first_line(c.source) == head]
            if same:
                same[0].metadata["nbgrader"] = copy.deepcopy(dict(meta))
                events.append(f"{gid} had lost its nbgrader metadata; put back (the answer is graded)")
            else:
                events.append(f"{gid}: the answer cell is missing (deleted?); it scores 0")
            continue
        same = [c for c in bare if c.source.strip() == ref.source.strip()]
        if same:
            same[0].metadata["nbgrader"] = copy.deepcopy(dict(meta))
            events.append(f"{gid} had lost its nbgrader metadata; put back (graded)")
            continue
        new = nbformat.v4.new_code_cell if ref.cell_type == "code" else nbformat.v4.new_markdown_cell
        cell = new(ref.source, metadata=copy.deepcopy(dict(ref.metadata)))
        nb.cells.insert(_after(nb, master, index), cell)
        events.append(f"{gid} was deleted from the notebook; put back from the master (graded)")
    return events


def _after(nb: NotebookNode, master: NotebookNode, index: int) -> int:
    """Where to insert the master's cell ``index``: after the nearest earlier master cell that ``nb`` holds."""
    for ref in reversed(master.cells[:index]):
        gid = _meta(ref).get("grade_id")
        for i, cell in enumerate(nb.cells):
            if (gid and _meta(cell).get("grade_id") == gid) or (
                not gid and cell.cell_type == ref.cell_type and cell.source.strip() == ref.source.strip()
            ):
                return i + 1
    return len(nb.cells)


def master_of(course: Path, lab: str, notebook: str | None = None) -> Path:
    """The master notebook of ``lab`` in the course directory."""
    return Path(course) / "source" / lab / f"{notebook or lab}.ipynb"


class RestoreGradedCells(NbGraderPreprocessor):
    """nbgrader sanitizing step: :func:`restore` each submission against its lab's master."""

    def preprocess(self, nb: NotebookNode, resources: Any) -> tuple[NotebookNode, Any]:
        info = resources.get("nbgrader", {})
        folder = Path(resources.get("metadata", {}).get("path") or ".").resolve()
        master = master_of(folder.parents[2], info.get("assignment", ""), info.get("notebook"))
        if not master.is_file():
            self.log.warning("no master %s: graded cells not checked for deletion", master)
            return nb, resources
        for line in restore(nb, nbformat.read(master, as_version=4)):
            self.log.warning("%s/%s: %s", info.get("student"), info.get("assignment"), line)
        return nb, resources
