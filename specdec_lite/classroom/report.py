"""Report: every submission that is not fully autograded, with its cause, so no one is silently 0.

It reads what the grading left in the course directory: ``collect``'s record of the
downloads it could not place, ``submitted/``, ``autograded/`` (a cell that ran past its
timeout or killed the kernel carries an error output named by ``execute``), nbgrader's
log of each ``autograde`` run, the gradebook (scores, and the students of the roster who
sent nothing) and ``feedback/``; for each submission, the graded cells it lost that the
grader put back (``restore``), how its kernel was run (``execute.RECORD``: a notebook
graded without the sandbox is named), and what its code does that the checks cannot stop
in-process (``review``: to read by hand).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import nbformat

from .collect import changed_after_collect, logged
from .execute import DIED, NOT_RUN, RECORD, TIMEOUT
from .grade import log_path
from .release import COURSE, masters


@dataclass
class Problem:
    """One submission (or download) that needs the instructor's eye."""

    lab: str
    student: str
    cause: str
    score: float | None = None
    max_score: float | None = None

    def line(self) -> str:
        """One line for the instructor."""
        score = "" if self.score is None else f"; scored {self.score:g} of {self.max_score:g}"
        return f"{self.lab}  {self.student}: {self.cause}{score}"


_WHAT = {TIMEOUT: "timeout", DIED: "kernel died", NOT_RUN: "not run (too many failed cells before)"}


def _cell_name(cell: nbformat.NotebookNode) -> str:
    meta = cell.metadata.get("nbgrader", {})
    if meta.get("grade_id"):
        return meta["grade_id"]
    first = next((ln.strip() for ln in cell.source.splitlines() if ln.strip()), "")
    return first[:40]


def failed_cells(path: Path) -> list[str]:
    """The cells of an autograded notebook that timed out or lost the kernel, described."""
    nb = nbformat.read(path, as_version=4)
    found = []
    for i, cell in enumerate(nb.cells, start=1):
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error" and out.get("ename") in _WHAT:
                what = _WHAT[out["ename"]]
                found.append(f"{what} in cell {i} ({_cell_name(cell)})")
                break
    return found


def _log_error(course: Path, lab: str, student: str) -> str | None:
    log = log_path(course, lab)
    if not log.is_file():
        return None
    text = log.read_text(errors="replace")
    where = text.find(f"{student}/{lab}")
    text = text[where:] if where >= 0 else ""
    end = text.find("\n=== ")  # the next student's run (``grade`` runs one student at a time)
    text = text[: end if end >= 0 else len(text)]
    found = [
        (level, msg)
        for level, msg in re.findall(r"\[AutogradeApp \| (ERROR|WARNING)\] (.+)", text)
        if not msg.startswith(f"{student}/{lab}: ")  # the cells ``restore`` put back: listed on their own
    ]
    errors = [msg for level, msg in found if level == "ERROR"] or [msg for _, msg in found]
    return errors[0] if errors else None


def restored(course: Path, lab: str, student: str) -> list[str]:
    """What the grader put back in the student's submission (``restore.restore`` against the master)."""
    from .restore import master_of, restore

    sub, master = Path(course) / "submitted" / student / lab / f"{lab}.ipynb", master_of(Path(course), lab)
    if not (sub.is_file() and master.is_file()):
        return []
    try:
        nb = nbformat.read(sub, as_version=4)
    except Exception:  # noqa: BLE001 - not a notebook: nbgrader's own error says so
        return []
    return restore(nb, nbformat.read(master, as_version=4))


def to_review(course: Path, lab: str, student: str) -> list[str]:
    """What the student's own cells do that the checks cannot stop in-process (``review.suspicious``)."""
    from .restore import master_of
    from .review import suspicious

    sub, master = Path(course) / "submitted" / student / lab / f"{lab}.ipynb", master_of(Path(course), lab)
    try:
        return suspicious(nbformat.read(sub, as_version=4), nbformat.read(master, as_version=4))
    except Exception:  # noqa: BLE001 - no notebook, or not one: other lines say so
        return []


def sandbox_note(folder: Path) -> str | None:
    """A line when the notebook in ``folder`` (autograded) was not graded in the sandbox, else None."""
    record = Path(folder) / RECORD
    try:
        mode = json.loads(record.read_text()).get("sandbox")
    except (OSError, ValueError, AttributeError):
        return "no record of how it was graded (graded by an older grader?): grade it again"
    if mode != "bwrap":
        return (
            "graded WITHOUT the sandbox: the student's code ran with your rights; check the gradebook and the "
            "other submissions by hand, or grade again in the sandbox"
        )
    return None


def outputs_note(folder: Path) -> str | None:
    """A line when the grader cut outputs of the notebook in ``folder`` (autograded), else None."""
    try:
        cut = json.loads((Path(folder) / RECORD).read_text()).get("outputs", {}).get("cut") or []
    except (OSError, ValueError, AttributeError):
        return None
    if not cut:
        return None
    cells = ", ".join(str(c["cell"]) for c in cut)
    mib = sum(c.get("bytes", 0) for c in cut) / 2**20
    refused = sum(c.get("refused", 0) for c in cut)
    more = f" and {refused} message{'s' if refused > 1 else ''} refused unread" if refused else ""
    return f"output cut by the grader in cell{'s' if len(cut) > 1 else ''} {cells} ({mib:.1f} MiB left out{more})"


def _gradebook(course: Path):
    db = course / "gradebook.db"
    if not db.is_file():
        return None
    from nbgrader.api import Gradebook

    return Gradebook(f"sqlite:///{db}")


def problems(course: Path = COURSE, labs: Sequence[str] | None = None, feedback: bool | None = None) -> list[Problem]:
    """Every problem, lab by lab. ``feedback``: also flag missing feedback (default: where some exists)."""
    course = Path(course)
    names = list(labs or [m.stem for m in masters(course)])
    found = [
        Problem(o.lab or "?", o.student or "?", f"download {o.source} not placed: {o.reason}")
        for o in logged(course)
        if not o.target and not o.replaced_by and (o.lab in names or o.lab is None or not labs)
    ]
    found += [Problem(o.lab or "?", o.student or "?", o.reason) for o in changed_after_collect(course, names)]
    gb = _gradebook(course)
    try:
        roster = {s.id for s in gb.students} if gb else set()
        for lab in names:
            submitted = {p.parent.name for p in (course / "submitted").glob(f"*/{lab}") if p.is_dir()}
            check_feedback = feedback if feedback is not None else any((course / "feedback").glob(f"*/{lab}"))
            for student in sorted(submitted | roster):
                found += _check(course, gb, lab, student, student in submitted, check_feedback)
    finally:
        if gb:
            gb.close()
    return found


def _score(gb, lab: str, student: str) -> tuple[float | None, float | None]:
    if gb is None:
        return None, None
    try:
        sub = gb.find_submission(lab, student)
    except Exception:  # not in the gradebook
        return None, None
    return sub.score, sub.max_score


def _check(course: Path, gb, lab: str, student: str, submitted: bool, check_feedback: bool) -> list[Problem]:
    score, top = _score(gb, lab, student)
    if not submitted:
        if gb is not None and _assignment_exists(gb, lab):
            return [Problem(lab, student, "no submission (0 in the export)", 0.0, _max(gb, lab))]
        return []
    autograded = course / "autograded" / student / lab / f"{lab}.ipynb"
    put_back = [Problem(lab, student, f"graded cells: {line}", score, top) for line in restored(course, lab, student)]
    if not autograded.is_file():
        cause = _log_error(course, lab, student)
        cause = f"not autograded: {cause}" if cause else "not autograded yet"
        return put_back + [Problem(lab, student, cause, score, top)]
    out = put_back + [Problem(lab, student, what, score, top) for what in failed_cells(autograded)]
    note = sandbox_note(autograded.parent)
    out += [Problem(lab, student, note, score, top)] if note else []
    cut = outputs_note(autograded.parent)
    out += [Problem(lab, student, cut, score, top)] if cut else []
    out += [
        Problem(lab, student, f"to review by hand, its code uses {what}", score, top)
        for what in to_review(course, lab, student)
    ]
    if score is None:
        out.append(Problem(lab, student, "autograded but missing from the gradebook"))
    if check_feedback and not (course / "feedback" / student / lab / f"{lab}.html").is_file():
        out.append(Problem(lab, student, "no feedback (run: nbgrader generate_feedback " + lab + ")", score, top))
    return out


def _assignment_exists(gb, lab: str) -> bool:
    try:
        gb.find_assignment(lab)
    except Exception:
        return False
    return True


def _max(gb, lab: str) -> float:
    return float(gb.find_assignment(lab).max_score)
