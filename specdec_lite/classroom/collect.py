"""Collect: downloaded notebooks into ``submitted/<student>/<lab>/<lab>.ipynb``.

Students submit whatever their browser or LMS saved: ``Copy of lab03_rejections.ipynb``
(Colab's *Save a copy in Drive*), ``lab03_rejections (1).ipynb``,
``lab03_rejections.ipynb.ipynb``, ``LAB03_Rejections.IPYNB``, a ``.zip``, a PDF. nbgrader
grades only ``submitted/<student>/<lab>/<lab>.ipynb`` and skips anything else without a
word, so ``collect`` places each download there and lists every file it could not place.

*The student.* A downloads folder holds one folder per student (as LMS exports and shared
Drive folders give): ``DOWNLOADS/<student>/<anything>``; the folder's name is the student
id. A file directly in ``DOWNLOADS`` is named ``<student>_<anything>``: the id is what
comes before the lab's name (``jane_lab03_rejections.ipynb``, ``jane_Copy of
lab03_rejections.ipynb``) or, when the name holds no lab, before the first ``_``. A zip
file counts as the folder it would extract to, in place: a class export ``all.zip``
holding ``<student>/...`` folders, or a student's own ``jane_lab03.zip``.

*The lab.* From the notebook's content first: the nbgrader ``grade_id`` of its cells that
belong to one lab only, then the title of its first cell (``# Lab 3 · ...``); from its
name (``lab03``) when the content says nothing. A student id must be a plain name
(letters, digits, ``._@+-``), since nbgrader uses it as a folder name.
"""

from __future__ import annotations

import io
import json
import re
import zipfile
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path

import nbformat

from .release import COURSE, masters

#: Where ``collect`` keeps its record of every file it saw (``report`` reads it).
LOG = Path("submitted") / ".collect.json"

_STUDENT = re.compile(r"^[A-Za-z0-9][\w.@+-]*$")
_LAB_IN_NAME = re.compile(r"lab[ _-]?0?(\d{1,2})(?!\d)", re.I)
_COPY = re.compile(r"copy[ _]of[ _]", re.I)
_DUPLICATE = re.compile(r"\s*[(\[]\d+[)\]]\s*$")


@dataclass
class Download:
    """One file found in the downloads: where it came from, its folders and names, its bytes."""

    source: str
    folders: tuple[str, ...]
    names: tuple[str, ...]
    data: bytes
    modified: float


@dataclass
class Outcome:
    """What ``collect`` did with one download: ``target`` set when placed, else ``reason``."""

    source: str
    student: str | None = None
    lab: str | None = None
    target: str | None = None
    reason: str = ""
    notes: list[str] = field(default_factory=list)


def clean_name(name: str) -> str:
    """A download's name without its extensions, ``Copy of``, and `` (1)``-style suffixes."""
    stem = name
    while True:
        lowered = stem.lower()
        for ext in (".ipynb", ".json", ".txt", ".zip"):
            if lowered.endswith(ext):
                stem = stem[: -len(ext)]
                break
        else:
            break
    stem = _COPY.sub("", stem)
    while _DUPLICATE.search(stem):
        stem = _DUPLICATE.sub("", stem)
    return stem.strip()


def student_from_name(name: str) -> str | None:
    """The student id of a ``<student>_<anything>`` file name, or None."""
    stem = clean_name(name)
    m = _LAB_IN_NAME.search(stem)
    if m:
        head = stem[: m.start()].rstrip(" _-.")
        return head or None
    head, sep, _ = stem.partition("_")
    return head.strip() if sep and head.strip() else None


def lab_from_name(name: str, labs: list[str]) -> str | None:
    """The lab whose number the name holds (``lab03``, ``Lab 3``, ``LAB03_x``), or None."""
    m = _LAB_IN_NAME.search(clean_name(name))
    if not m:
        return None
    found = [lab for lab in labs if lab.startswith(f"lab{int(m[1]):02d}")]
    return found[0] if len(found) == 1 else None


@dataclass
class LabSignature:
    """What identifies a lab's notebook: grade ids no other lab uses, and the title line."""

    lab: str
    grade_ids: set[str]
    title: str


def signatures(course: Path = COURSE) -> list[LabSignature]:
    """Each lab's signature, read from the masters in ``course/source``."""
    ids: dict[str, set[str]] = {}
    titles: dict[str, str] = {}
    for master in masters(course):
        nb = nbformat.read(master, as_version=4)
        ids[master.stem] = {c.metadata["nbgrader"]["grade_id"] for c in nb.cells if "nbgrader" in c.metadata}
        titles[master.stem] = _title(nb)
    return [
        LabSignature(lab, own - set().union(*(v for k, v in ids.items() if k != lab)), titles[lab])
        for lab, own in ids.items()
    ]


def _title(nb: nbformat.NotebookNode) -> str:
    first = next((c.source for c in nb.cells if c.cell_type == "markdown"), "")
    line = first.strip().splitlines()[0] if first.strip() else ""
    return line.lstrip("# ").split("[")[0].strip()


def lab_from_content(nb: nbformat.NotebookNode, sigs: list[LabSignature]) -> str | None:
    """The lab a notebook comes from, by its nbgrader cells (then its title), or None."""
    ids = {c.metadata["nbgrader"].get("grade_id") for c in nb.cells if "nbgrader" in c.metadata}
    scores = {s.lab: len(ids & s.grade_ids) for s in sigs}
    best = max(scores.values(), default=0)
    if best > 0 and list(scores.values()).count(best) == 1:
        return max(scores, key=scores.__getitem__)
    title = _title(nb)
    by_title = [s.lab for s in sigs if title and s.title == title]
    return by_title[0] if len(by_title) == 1 else None


def downloads(root: Path) -> Iterator[Download]:
    """Every file under ``root``, zip members included (a zip counts as the folder it extracts to)."""
    root = Path(root)
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        rel = path.relative_to(root)
        yield from _expand(str(rel), tuple(rel.parts[:-1]), (rel.name,), path.read_bytes(), path.stat().st_mtime)


def _expand(source: str, folders: tuple[str, ...], names: tuple[str, ...], data: bytes, modified: float):
    if not zipfile.is_zipfile(io.BytesIO(data)):
        yield Download(source, folders, names, data, modified)
        return
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        for info in zf.infolist():
            if info.is_dir():
                continue
            parts = tuple(p for p in info.filename.split("/") if p)
            stamp = datetime(*info.date_time).timestamp()
            yield from _expand(
                f"{source}:{info.filename}", folders + parts[:-1], (parts[-1], *names), zf.read(info), stamp
            )


def _read_notebook(data: bytes) -> nbformat.NotebookNode | str:
    try:
        nb = nbformat.reads(data.decode("utf-8-sig"), as_version=4)
    except Exception as err:  # not JSON, not a notebook, not text
        return f"not a notebook ({type(err).__name__})"
    if not nb.get("cells"):
        return "not a notebook (no cells)"
    return nb


def place(item: Download, sigs: list[LabSignature], only: str | None = None) -> Outcome:
    """Decide the student and the lab of one download (writes nothing)."""
    out = Outcome(item.source)
    if item.folders:
        out.student = item.folders[0]
    else:
        out.student = next((s for s in map(student_from_name, item.names) if s), None)
    nb = _read_notebook(item.data)
    labs = [s.lab for s in sigs]
    by_name = next((lab for lab in (lab_from_name(n, labs) for n in item.names) if lab), None)
    if isinstance(nb, str):
        out.lab, out.reason = by_name, nb
        return out
    by_content = lab_from_content(nb, sigs)
    out.lab = by_content or by_name
    if by_content and by_name and by_content != by_name:
        out.notes.append(f"named like {by_name} but holds {by_content}")
    if by_content is None and by_name:
        out.notes.append("no nbgrader cells of the lab: its graded cells will be missing")
    if out.lab is None:
        out.reason = "unknown lab: neither its cells nor its name match a lab"
    elif only and out.lab != only:
        out.reason = f"another lab ({out.lab}), not collected with --lab {only}"
    elif out.student is None:
        out.reason = "no student id: put it in a folder named after the student, or name it <student>_<lab>.ipynb"
    elif not _STUDENT.match(out.student):
        out.reason = f"student id {out.student!r} has characters nbgrader cannot use in a folder name; rename it"
    return out


def collect(root: Path, course: Path = COURSE, lab: str | None = None, write: bool = True) -> list[Outcome]:
    """Place every notebook under ``root`` in ``course/submitted``; an outcome per download.

    When a student has several notebooks of one lab, the newest is placed and the others are
    listed. Every outcome is also kept in ``course/submitted/.collect.json`` for ``report``.
    """
    course = Path(course)
    sigs = signatures(course)
    if lab and lab not in {s.lab for s in sigs}:
        raise ValueError(f"lab: no master for {lab!r} in {course / 'source'}")
    items = list(downloads(root))
    outcomes = [place(item, sigs, lab) for item in items]
    chosen: dict[tuple[str, str], int] = {}
    for i, (item, out) in enumerate(zip(items, outcomes, strict=True)):
        if out.reason:
            continue
        key = (out.student, out.lab)
        if key in chosen and items[chosen[key]].modified >= item.modified:
            out.reason = f"older than {items[chosen[key]].source} (same student and lab)"
            continue
        if key in chosen:
            outcomes[chosen[key]].reason = f"older than {item.source} (same student and lab)"
        chosen[key] = i
    for (student, name), i in chosen.items():
        target = course / "submitted" / student / name / f"{name}.ipynb"
        outcomes[i].target = str(target.relative_to(course))
        if write:
            target.parent.mkdir(parents=True, exist_ok=True)
            if target.is_file() and target.read_bytes() != items[i].data:
                outcomes[i].notes.append("replaced the file collected before")
            target.write_bytes(items[i].data)
    if write:
        _log(course, outcomes)
    return outcomes


def _log(course: Path, outcomes: list[Outcome]) -> None:
    path = course / LOG
    path.parent.mkdir(parents=True, exist_ok=True)
    kept = json.loads(path.read_text()) if path.is_file() else {}
    kept.update({o.source: asdict(o) for o in outcomes})
    path.write_text(json.dumps(kept, indent=1, sort_keys=True))


def logged(course: Path = COURSE) -> list[Outcome]:
    """Every outcome ``collect`` recorded in ``course`` (latest run first for a given file)."""
    path = Path(course) / LOG
    if not path.is_file():
        return []
    return [Outcome(**row) for row in json.loads(path.read_text()).values()]


def describe(out: Outcome) -> str:
    """One line for the instructor."""
    notes = f" ({'; '.join(out.notes)})" if out.notes else ""
    if out.target:
        return f"placed   {out.source} -> {out.target}{notes}"
    return f"NOT PLACED {out.source}: {out.reason}{notes}"
