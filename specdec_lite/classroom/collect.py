"""Collect: downloaded notebooks into ``submitted/<student>/<lab>/<lab>.ipynb``.

Students submit whatever their browser or LMS saved: ``Copy of lab03_rejections.ipynb``
(Colab's *Save a copy in Drive*), ``lab03_rejections (1).ipynb``,
``lab03_rejections.ipynb.ipynb``, ``LAB03_Rejections.IPYNB``, a ``.zip``, a PDF. nbgrader
grades only ``submitted/<student>/<lab>/<lab>.ipynb`` and skips anything else without a
word, so ``collect`` places each download there and lists every file it could not place,
with its cause.

*The student.* A downloads folder holds one folder per student (as LMS exports and shared
Drive folders give): ``DOWNLOADS/<student>/<anything>``; the folder's name is the student
id. A file directly in ``DOWNLOADS`` is named ``<student>_<anything>``: the id is what
comes before the lab's name (``jane_lab03_rejections.ipynb``, ``jane_Copy of
lab03_rejections.ipynb``) or, when the name holds no lab, before the first ``_``. A file
belongs to the student its own folder or name gives, whatever it holds: everything in
``jane_lab03.zip`` is Jane's, folders named after classmates included. A zip whose name
gives no student (``class.zip``, or the zip given as ``DOWNLOADS`` itself) is a class
export: it counts as the folder it would extract to. A student id is a plain name
(``STUDENT_ID``: ASCII letters, digits, ``._@+-``, at most 64 characters), since
nbgrader uses it as a folder name.

*The lab.* From the notebook's content first: the nbgrader ``grade_id`` of its cells that
belong to one lab only, then the title of its first cell (``# Lab 3 · ...``); from its
name (``lab03``) when the content says nothing.

*The date.* A download's date is its file's modification time on disk; a member of a
class export carries the date the export gives it; a member of a student's own zip
carries the date of that zip, never the date written inside it. Of several notebooks of
one student and lab the newest is placed; a later ``collect`` replaces a placed file only
with a download at least as new, and lists an older one as not placed.

*Reading.* ``uploads`` reads the files within bounds (a member's size, a download's
inflated size and number of files, the nesting of zips) and never follows a link. Each
placed file's sha256 is kept in ``submitted/.collect.json``; ``changed_after_collect`` finds the
submitted files that differ from what was collected.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import asdict, dataclass, field, fields
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

from .release import COURSE, masters
from .uploads import (  # noqa: F401 (the names collect's users know it by)
    LIMITS,
    STUDENT_ID,
    Download,
    Limits,
    Refused,
    check_student,
    clean_name,
    downloads,
    lab_from_name,
    student_from_name,
    zip_shape,
)

if TYPE_CHECKING:
    import nbformat

#: Where ``collect`` keeps its record of every file it saw (``report`` reads it).
LOG = Path("submitted") / ".collect.json"


class CollectError(ValueError):
    """A wrong argument to ``collect`` (a missing downloads folder, an unknown lab)."""


@dataclass
class Outcome:
    """What ``collect`` did with one download: ``target`` set when placed, else ``reason``.

    ``sha256`` and ``modified`` describe the download; ``replaced_by`` is set when a later
    ``collect`` placed a newer download in its place; ``downloads`` is the folder it came from.
    """

    source: str
    student: str | None = None
    lab: str | None = None
    target: str | None = None
    reason: str = ""
    notes: list[str] = field(default_factory=list)
    sha256: str | None = None
    modified: float | None = None
    replaced_by: str | None = None
    downloads: str | None = None


@dataclass
class LabSignature:
    """What identifies a lab's notebook: grade ids no other lab uses, and the title line."""

    lab: str
    grade_ids: set[str]
    title: str


def signatures(course: Path = COURSE) -> list[LabSignature]:
    """Each lab's signature, read from the masters in ``course/source``."""
    import nbformat

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


def _read_notebook(data: bytes) -> nbformat.NotebookNode | str:
    """The notebook, or why it is not one nbgrader can grade."""
    import nbformat

    try:
        nb = nbformat.reads(data.decode("utf-8-sig"), as_version=4)
    except Exception as err:  # not JSON, not a notebook, not text  # noqa: BLE001
        return f"not a notebook ({type(err).__name__})"
    cells = nb.get("cells") if isinstance(nb, dict) else None
    if not cells:
        return "not a notebook (no cells)"
    if not isinstance(cells, list):
        return "a damaged notebook (its cells are not a list)"
    for i, cell in enumerate(cells, start=1):
        if not isinstance(cell, dict) or not isinstance(cell.get("cell_type"), str):
            return f"a damaged notebook (cell {i} is not a cell)"
        if not isinstance(cell.get("source"), str):
            return f"a damaged notebook (the source of cell {i} is not text)"
        meta = cell.get("metadata", {})
        if not isinstance(meta, dict):
            return f"a damaged notebook (the metadata of cell {i} is not a mapping)"
        grading = meta.get("nbgrader", {})
        if not isinstance(grading, dict) or not isinstance(grading.get("grade_id", ""), str):
            return f"a damaged notebook (cell {i}'s nbgrader metadata is not what nbgrader wrote)"
    return nb


def place(item: Download, sigs: list[LabSignature], only: str | None = None) -> Outcome:
    """Decide the student and the lab of one download (writes nothing)."""
    out = Outcome(item.source, student=item.student, notes=list(item.notes))
    if item.data or not item.reason:
        out.sha256 = hashlib.sha256(item.data).hexdigest()
        out.modified = item.modified
    labs = [s.lab for s in sigs]
    by_name = next((lab for lab in (lab_from_name(n, labs) for n in item.names) if lab), None)
    if item.reason:
        out.lab, out.reason = by_name, item.reason
        return out
    nb = _read_notebook(item.data)
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
    elif not STUDENT_ID.fullmatch(out.student):
        shown = out.student if len(out.student) <= 70 else out.student[:60] + "..."
        out.reason = (
            f"student id {shown!r} is not a plain name (ASCII letters, digits, ._@+-, at most 64 "
            "characters): rename the folder or file"
        )
    return out


# --- placing --------------------------------------------------------------------------------


def _when(stamp: float | None) -> str:
    return (
        "an unknown date"
        if stamp is None
        else datetime.fromtimestamp(stamp, timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    )


def check_root(root: Path) -> Path:
    """``root`` if it is a downloads folder holding something, or a zip; else a ``CollectError``."""
    root = Path(root)
    if not root.exists():
        raise CollectError(f"downloads: {root} does not exist")
    if root.is_file():
        if zip_shape(root) is None:
            raise CollectError(
                f"downloads: {root} is a file but not a zip; give the folder of downloads (or the class export .zip)"
            )
        return root
    if not root.is_dir():
        raise CollectError(f"downloads: {root} is neither a folder nor a zip")
    with os.scandir(root) as entries:
        empty = not any(entries)
    if empty:
        raise CollectError(f"downloads: {root} is empty")
    return root


def collect(
    root: Path, course: Path = COURSE, lab: str | None = None, write: bool = True, limits: Limits = LIMITS
) -> list[Outcome]:
    """Place every notebook under ``root`` in ``course/submitted``; an outcome per download.

    When a student has several notebooks of one lab, the newest is placed and the others are
    listed; a file placed by an earlier run is replaced only by a download at least as new.
    Every outcome, with the sha256 and date of what was placed, is kept in
    ``course/submitted/.collect.json`` for ``report`` (written even when a file fails).
    """
    course = Path(course)
    root = check_root(root)
    sigs = signatures(course)
    if lab and lab not in {s.lab for s in sigs}:
        raise CollectError(f"lab: no master for {lab!r} in {course / 'source'}")
    here = str(root.resolve())
    outcomes: list[Outcome] = []
    earlier, unreadable = _read_log(course)
    with tempfile.TemporaryDirectory(prefix="specdec-collect-") as staging:
        chosen: dict[tuple[str, str], int] = {}
        try:
            for item in downloads(root, limits):
                try:
                    out = place(item, sigs, lab)
                except Exception as err:  # one strange file never stops the class  # noqa: BLE001
                    out = Outcome(item.source, item.student, reason=f"could not be read ({type(err).__name__}: {err})")
                out.downloads = here
                outcomes.append(out)
                if not out.reason:
                    _choose(chosen, outcomes, len(outcomes) - 1, item.data, Path(staging))
                item.data = b""
            for i in chosen.values():
                _settle(course, outcomes[i], earlier, Path(staging), write)
        finally:
            if write:
                _log(course, earlier, outcomes, unreadable)
    if unreadable:
        outcomes.append(Outcome(str(LOG), reason=unreadable))
    return outcomes


def _choose(chosen: dict, outcomes: list[Outcome], i: int, data: bytes, staging: Path) -> None:
    """Keep download ``i`` if it is the newest of its student and lab so far (its bytes in ``staging``)."""
    out = outcomes[i]
    key = (out.student, out.lab)
    if key in chosen:
        best = outcomes[chosen[key]]
        if best.modified >= out.modified:
            same = "as new as" if best.modified == out.modified else "older than"
            out.reason = f"{same} {best.source} (same student and lab; the newest is taken)"
            return
        best.reason = f"older than {out.source} (same student and lab; the newest is taken)"
    (staging / out.sha256).write_bytes(data)
    chosen[key] = i


def _settle(course: Path, out: Outcome, earlier: dict[str, dict], staging: Path, write: bool) -> None:
    """Place ``out`` at ``submitted/<student>/<lab>/<lab>.ipynb`` unless a newer file is there."""
    target = Path("submitted") / out.student / out.lab / f"{out.lab}.ipynb"
    path = course / target
    before = next(
        (row for row in earlier.values() if row.get("target") == str(target) and not row.get("replaced_by")), None
    )
    try:
        if path.is_symlink() or any(p.is_symlink() for p in (path.parent, path.parent.parent)):
            raise Refused(f"{target} or its folder is a symbolic link: not written (links are never followed)")
        current = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None
        if current is not None and current != out.sha256:
            then = (before or {}).get("modified") if (before or {}).get("sha256") == current else None
            if then is None:
                then = path.stat().st_mtime
            origin = f"collected before from {before['source']}" if before else "there before"
            if out.modified < then:
                raise Refused(
                    f"older ({_when(out.modified)}) than {target}, {origin} ({_when(then)}); "
                    "delete that file to take this one"
                )
            out.notes.append(f"replaced {target}, {origin} ({_when(then)})")
        if write and current != out.sha256:
            _write(course, target, (staging / out.sha256).read_bytes())
    except (Refused, OSError) as err:
        out.reason = str(err) if isinstance(err, Refused) else f"could not write {target} ({type(err).__name__})"
        return
    out.target = str(target)
    for row in earlier.values():
        if row.get("target") == str(target) and (row.get("source"), row.get("downloads")) != (
            out.source,
            out.downloads,
        ):
            row["replaced_by"] = out.source


def _write(course: Path, target: Path, data: bytes) -> None:
    """Write ``data`` at ``course/target`` through a temporary file (never through a link)."""
    path = course / target
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".collect-", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


# --- the record -----------------------------------------------------------------------------


def _key(row: dict) -> str:
    return json.dumps([row.get("downloads"), row["source"]])


def _read_log(course: Path) -> tuple[dict[str, dict], str]:
    """The record of earlier runs ``{key: row}``, and why it could not be read ("" when it could)."""
    path = course / LOG
    if not path.is_file():
        return {}, ""
    try:
        rows = json.loads(path.read_text())
        if not isinstance(rows, dict) or not all(isinstance(r, dict) and "source" in r for r in rows.values()):
            raise ValueError("not a record of downloads")
    except (ValueError, UnicodeDecodeError) as err:
        return {}, (
            f"the record of earlier runs was unreadable ({type(err).__name__}); kept as "
            f"{LOG.name}.unreadable, a new one started"
        )
    return {_key(r): r for r in rows.values()}, ""


def _log(course: Path, earlier: dict[str, dict], outcomes: list[Outcome], unreadable: str) -> None:
    path = course / LOG
    path.parent.mkdir(parents=True, exist_ok=True)
    if unreadable and path.is_file():
        os.replace(path, path.with_name(f"{LOG.name}.unreadable"))
    kept = dict(earlier)
    kept.update({_key(asdict(o)): asdict(o) for o in outcomes})
    fd, tmp = tempfile.mkstemp(prefix=".collect-", dir=path.parent)
    with os.fdopen(fd, "w") as f:
        json.dump(kept, f, indent=1, sort_keys=True)
    os.replace(tmp, path)


def logged(course: Path = COURSE) -> list[Outcome]:
    """Every outcome ``collect`` recorded in ``course`` (the latest run's for a file seen twice)."""
    rows, _ = _read_log(Path(course))
    known = {f.name for f in fields(Outcome)}
    return [Outcome(**{k: v for k, v in row.items() if k in known}) for row in rows.values()]


def changed_after_collect(course: Path = COURSE, labs: list[str] | None = None) -> list[Outcome]:
    """Placed downloads whose file in ``submitted/`` is no longer what was collected (``reason`` says how)."""
    course = Path(course)
    found = []
    for out in logged(course):
        if not out.target or out.replaced_by or not out.sha256 or (labs and out.lab not in labs):
            continue
        path = course / out.target
        if not path.is_file() or path.is_symlink():
            out.reason = f"{out.target} is gone since it was collected from {out.source}"
        elif hashlib.sha256(path.read_bytes()).hexdigest() != out.sha256:
            out.reason = f"{out.target} changed after it was collected from {out.source} (its sha256 differs)"
        else:
            continue
        found.append(out)
    return found


def shown(text: str) -> str:
    """``text`` on one line: control characters (a newline in a file name) written as escapes."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def describe(out: Outcome) -> str:
    """One line for the instructor."""
    notes = f" ({'; '.join(out.notes)})" if out.notes else ""
    if out.target:
        return shown(f"placed   {out.source} -> {out.target}{notes}")
    return shown(f"NOT PLACED {out.source}: {out.reason}{notes}")
