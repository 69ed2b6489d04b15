"""A graded cell's score from its check's own outcome, not from nbgrader's reading of outputs.

nbgrader's ``determine_grade`` gives a graded code cell 0 for an error *or any stderr
output*, a partial score for a number shown as the cell's value, and full marks for any
other value shown before the error (so ``InteractiveShell.ast_node_interactivity = "all"``
above an untouched stub scored full marks: the check's first line is shown as a value,
then the check raises). Here, a graded code cell scores:

* full marks when it has no error output and, for each ``check_x(...).assert_correct()``
  it calls, a right outcome of ``check_x`` (``exercises.feedback.OUTCOME``, displayed by
  ``assert_correct`` on a right answer);
* full marks for a graded cell that calls no check (an instructor's cell of ``assert``\\ s)
  when it has no error output;
* 0 otherwise. What it prints, on stdout or stderr (a ``logging`` line, a warning), and
  the values it shows cost nothing and earn nothing.

Written answers (solution cells) keep nbgrader's rule: 0 when untouched, else graded by hand.
``SaveAutoGrades`` takes the place of nbgrader's, with the same name and job.
"""

from __future__ import annotations

import re
from typing import Any

from nbformat.notebooknode import NotebookNode
from nbgrader import utils
from nbgrader.preprocessors import SaveAutoGrades as _NbgraderSaveAutoGrades

from ..exercises.feedback import OUTCOME

_CHECK_CALL = re.compile(r"\b(check_\w+)\s*\(.*\)\s*\.\s*assert_correct\s*\(\s*\)")


def checks_called(source: str) -> set[str]:
    """The ``check_...`` functions whose ``.assert_correct()`` a graded cell's source calls."""
    return set(_CHECK_CALL.findall(source))


def outcomes(cell: NotebookNode) -> list[dict[str, Any]]:
    """The outcomes a cell's outputs carry."""
    found = []
    for out in cell.get("outputs", []):
        data = out.get("data", {}) if out.get("output_type") in ("display_data", "execute_result") else {}
        if isinstance(data.get(OUTCOME), dict):
            found.append(data[OUTCOME])
    return found


def determine_grade(cell: NotebookNode) -> tuple[float | None, float]:
    """``(score, max_score)`` of a graded cell (see the module's docstring)."""
    if not utils.is_grade(cell) or utils.is_solution(cell) or cell.cell_type != "code":
        return utils.determine_grade(cell)
    top = float(cell.metadata["nbgrader"]["points"])
    if any(out.get("output_type") == "error" for out in cell.get("outputs", [])):
        return 0.0, top
    passed = {v.get("check") for v in outcomes(cell) if v.get("ok") is True}
    return (top if checks_called(cell.source) <= passed else 0.0), top


class SaveAutoGrades(_NbgraderSaveAutoGrades):
    """nbgrader's ``SaveAutoGrades``, scoring each graded code cell with :func:`determine_grade`."""

    def _add_score(self, cell: NotebookNode, resources: Any) -> None:
        grade = self.gradebook.find_grade(
            cell.metadata["nbgrader"]["grade_id"], self.notebook_id, self.assignment_id, self.student_id
        )
        grade.auto_score, _ = determine_grade(cell)
        grade.needs_manual_grade = grade.manual_score is not None or grade.auto_score is None
        self.gradebook.db.commit()
