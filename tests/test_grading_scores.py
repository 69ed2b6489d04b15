"""Scores that only the work earns, and no honest student misgraded: the real nbgrader, then units.

The class of ``tests/grading_class.py`` (graded once, in the sandbox): the ``cheater``
(``ast_node_interactivity = "all"`` above untouched stubs, a planted answer cache, forged
outcomes) scores 0; the ``honest`` student (an answer that logs on stderr, a deleted check
cell, cells stripped of their metadata, a check cell pasted twice) scores full marks, and
the report says what was put back; a ``broken`` file stops no one else; the ``tabulator`` (answers
looked up from the public instances) scores 0; the ``evader`` (a second import of the package) keeps
its points and is listed for review.
"""

from __future__ import annotations

import gc
import inspect

import nbformat
import numpy as np
import pytest

from specdec_lite.classroom.restore import restore
from specdec_lite.classroom.scores import checks_called, determine_grade
from specdec_lite.exercises.feedback import OUTCOME
from specdec_lite.exercises.part1 import check_tv

from .grading_class import LAB, ROOT, autograded, graded_class, report_lines

AUTO = 4.0  # Lab 1: two checks of 2 points


@pytest.fixture(scope="module")
def graded():
    return graded_class()


def _graded_cells(nb) -> dict[str, nbformat.NotebookNode]:
    return {
        c.metadata["nbgrader"]["grade_id"]: c
        for c in nb.cells
        if c.metadata.get("nbgrader", {}).get("grade") and c.cell_type == "code"
    }


@pytest.mark.slow
def test_the_cheater_scores_0(graded):
    assert graded["scores"]["cheater"] == 0
    cells = _graded_cells(autograded("cheater"))
    for gid, cell in cells.items():
        kinds = [o.output_type for o in cell.outputs]
        assert "error" in kinds, (gid, kinds)
        assert "execute_result" not in kinds, "a check's feedback was published as a cell's value"
        forged = [o for o in cell.outputs if OUTCOME in o.get("data", {})]
        assert forged, f"{gid}: the forged outcomes were not shown: the cheat did not run"
    (line,) = report_lines("cheater")  # a plain 0, and the hooks it set, to read by hand
    assert "to review by hand, its code uses IPython or interpreter hooks" in line and "cell 4" in line


@pytest.mark.slow
def test_the_honest_student_gets_every_point(graded):
    assert graded["scores"]["honest"] == AUTO, report_lines("honest")
    cells = _graded_cells(autograded("honest"))
    assert set(cells) == {"check_marginals", "check_tv"}
    tv = cells["check_tv"]
    assert any(o.output_type == "stream" and o.name == "stderr" and "tv called" in o.text for o in tv.outputs), (
        "the logging line of the answer is shown (and costs nothing)"
    )


@pytest.mark.slow
def test_the_report_says_what_was_put_back(graded):
    lines = "\n".join(report_lines("honest"))
    assert "check_marginals was deleted from the notebook; put back from the master" in lines
    assert "marginals had lost its nbgrader metadata; put back" in lines
    assert "explore_q1 had lost its nbgrader metadata; put back" in lines
    assert "check_tv was held by 2 cells" in lines


@pytest.mark.slow
def test_one_bad_notebook_stops_no_one(graded):
    out = graded["runs"]["autograde"].stdout
    assert "nbgrader exited with an error for broken" in out
    (line,) = report_lines("broken")
    assert "not autograded" in line
    log = (graded["course"] / "autograded" / f".autograde_{LAB}.log").read_text()
    for student in ("attacker", "broken", "cheater", "evader", "honest", "tabulator"):
        assert f"=== {student}/{LAB}" in log


# --- units: the score of a cell, the cache, what a check displays, restoring cells ---------------------------


def _cell(source: str, outputs: list[dict], points: float = 2) -> nbformat.NotebookNode:
    cell = nbformat.v4.new_code_cell(source)
    cell.metadata["nbgrader"] = {"grade": True, "solution": False, "locked": True, "grade_id": "c", "points": points}
    cell.outputs = [nbformat.from_dict(o) for o in outputs]
    return cell


GRADED = "check_tv(tv)  # shown\nfrom specdec_lite.exercises.part1 import check_tv\ncheck_tv(tv).assert_correct()"
OK = {
    "output_type": "display_data",
    "metadata": {},
    "data": {"text/plain": "Correct.", OUTCOME: {"check": "check_tv", "ok": True}},
}
ERR = {"output_type": "error", "ename": "NotYet", "evalue": "Not yet.", "traceback": []}
VALUE = {"output_type": "execute_result", "execution_count": 1, "metadata": {}, "data": {"text/plain": "Not yet."}}
STDERR = {"output_type": "stream", "name": "stderr", "text": "INFO:tv called\n"}


@pytest.mark.parametrize(
    "outputs, score",
    [
        ([OK], 2.0),
        ([STDERR, OK], 2.0),  # a logging line of a right answer costs nothing
        ([VALUE, ERR], 0.0),  # a value shown before the error earns nothing (nbgrader: full marks)
        ([VALUE], 0.0),  # no outcome, no points
        ([], 0.0),
        ([OK, ERR], 0.0),
        ([{**OK, "data": {OUTCOME: {"check": "check_marginals", "ok": True}}}], 0.0),  # another check's outcome
        ([{**OK, "data": {OUTCOME: {"check": "check_tv", "ok": False}}}], 0.0),
    ],
)
def test_a_check_cell_scores_by_its_outcome(outputs, score):
    assert determine_grade(_cell(GRADED, outputs)) == (score, 2.0)


def test_a_cell_of_asserts_scores_by_its_errors():
    assert checks_called("assert f(2) == 4") == set()
    assert determine_grade(_cell("assert f(2) == 4", [STDERR, VALUE])) == (2.0, 2.0)
    assert determine_grade(_cell("assert f(2) == 4", [ERR])) == (0.0, 2.0)


def test_no_check_keeps_an_answer_or_a_feedback():
    """After a check, nothing of the package refers to the student's function or to the feedback it gave."""

    def student_tv(p, q):
        return 0.5 * np.abs(p - q).sum()

    fb = check_tv(student_tv)
    assert fb.ok and fb.check == "check_tv"
    gc.collect()
    assert [r for r in gc.get_referrers(student_tv) if not inspect.isframe(r)] == []
    assert [r for r in gc.get_referrers(fb) if not inspect.isframe(r)] == []
    from specdec_lite.exercises import feedback

    assert not hasattr(feedback, "_LAST")


def test_a_feedback_is_displayed_not_returned_and_only_assert_correct_gives_a_outcome():
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.utils.capture import capture_output

    shell = InteractiveShell.instance()
    shell.user_ns["check_tv"], shell.user_ns["np"] = check_tv, np
    shell.run_cell("def tv(p, q):\n    return 0.5 * np.abs(p - q).sum()")
    with capture_output() as shown:
        shell.run_cell("check_tv(tv)")
    with capture_output() as asserted:
        shell.run_cell("check_tv(tv).assert_correct()")
    assert "Correct" not in shown.stdout and len(shown.outputs) == 1, "shown through display, not as the value"
    assert "text/markdown" in shown.outputs[0].data and OUTCOME not in shown.outputs[0].data
    assert asserted.outputs[0].data[OUTCOME] == {"check": "check_tv", "ok": True}


def test_review_names_what_the_checks_cannot_stop_and_skips_the_lab_s_own_cells():
    from specdec_lite.classroom.review import suspicious

    master = _master()
    assert suspicious(master, master) == [], "the setup cell's subprocess is the lab's own"
    nb = nbformat.reads(nbformat.writes(master), as_version=4)
    nb.cells[
        _ids(nb).index("tv")
    ].source = "import sys, subprocess\ndef tv(p, q):\n    return sys._getframe(1).f_locals['want']"
    nb.cells.insert(4, nbformat.v4.new_code_cell("import sqlite3\nsqlite3.connect('../../gradebook.db')"))
    lines = suspicious(nb, master)
    assert lines == [
        "database or grader files (cell 5)",
        "subprocesses or process pools (cell 13)",
        "frame inspection (cell 13)",
    ], lines


def _master():
    return nbformat.read(ROOT / "notebooks" / "source" / LAB / f"{LAB}.ipynb", as_version=4)


def _ids(nb):
    return [c.metadata.get("nbgrader", {}).get("grade_id") for c in nb.cells]


def test_restore_puts_back_a_deleted_check_where_it_was():
    master = _master()
    nb = nbformat.reads(nbformat.writes(master), as_version=4)
    i = _ids(nb).index("check_tv")
    del nb.cells[i]
    (line,) = restore(nb, master)
    assert "check_tv was deleted" in line
    assert _ids(nb) == _ids(master) and nb.cells[i].source == master.cells[i].source
    assert restore(nb, master) == []


def test_restore_gives_back_lost_metadata():
    master = _master()
    nb = nbformat.reads(nbformat.writes(master), as_version=4)
    for cell in nb.cells:
        cell.metadata.pop("nbgrader", None)
    lines = restore(nb, master)
    assert len(lines) == len([g for g in _ids(master) if g]) and all("lost its nbgrader metadata" in ln for ln in lines)
    assert _ids(nb) == _ids(master)


def test_restore_keeps_the_last_of_a_pasted_cell():
    master = _master()
    nb = nbformat.reads(nbformat.writes(master), as_version=4)
    i = _ids(nb).index("check_tv")
    copy = nbformat.reads(nbformat.writes(master), as_version=4).cells[i]
    copy.id = "pasted"
    nb.cells.insert(i + 1, copy)
    (line,) = restore(nb, master)
    assert "check_tv was held by 2 cells" in line
    assert _ids(nb).count("check_tv") == 1 and _ids(nb).index("check_tv") == i + 1
    assert "nbgrader" not in nb.cells[i].metadata, "no empty metadata left for nbgrader to stop on"


@pytest.mark.slow
def test_answers_tabulated_from_the_public_instances_score_0(graded):
    """Right on every public instance, wrong on the instances the checks draw while they run."""
    assert graded["scores"]["tabulator"] == 0, report_lines("tabulator")
    cells = _graded_cells(autograded("tabulator"))
    for gid in ("check_marginals", "check_tv"):
        errors = [o for o in cells[gid].outputs if o.output_type == "error"]
        assert errors and errors[0].ename == "NotYet", (gid, [o.output_type for o in cells[gid].outputs])


@pytest.mark.slow
def test_a_second_copy_of_the_package_is_listed_for_review(graded):
    """What no lock in the student's process stops: the points stand, and the report asks a person to read it."""
    assert graded["scores"]["evader"] == AUTO
    (line,) = report_lines("evader")
    assert "to review by hand, its code uses a second import of a module" in line, line
