"""nbgrader's configuration of the course directory ``notebooks/`` (see the book's *For instructors*)."""

from nbconvert.preprocessors import ClearMetadataPreprocessor, CSSHTMLHeaderPreprocessor
from nbgrader.preprocessors import (
    AssignLatePenalties,
    CheckCellMetadata,
    ClearOutput,
    DeduplicateIds,
    GetGrades,
    IgnorePattern,
    LimitOutput,
    OverwriteCells,
    OverwriteKernelspec,
)

from specdec_lite.classroom.execute import GradingExecute
from specdec_lite.classroom.outputs import SanitizeFeedback
from specdec_lite.classroom.restore import RestoreGradedCells
from specdec_lite.classroom.scores import SaveAutoGrades

c = get_config()  # noqa: F821 (nbgrader provides get_config)
c.CourseDirectory.course_id = "specdec-theory"
# Autograde runs each cell with its lab's timeout (specdec_lite/classroom/timeouts.py: two minutes for
# Labs 1-7, Lab 8 its measurement budget and a margin); a cell that runs past it or kills the kernel
# scores 0 and the cells after it still run, in a fresh kernel (specdec_lite/classroom/execute.py).
# Each kernel runs in a sandbox (specdec_lite/classroom/sandbox.py: bubblewrap, an unprivileged uid,
# prlimit); grading refuses to start where it cannot run, unless c.GradingExecute.sandbox = "off".
# Each kernel is told its notebook is graded (SPECDEC_LITE_GRADED=1): Lab 8's measurement section, on which no
# score depends, then runs its smallest plan; c.GradingExecute.measurements = "full" measures at the lab's budget.
# A graded cell scores by its check's outcome (specdec_lite/classroom/scores.py: SaveAutoGrades).
# The rest is nbgrader's own list of autograde steps, with GradingExecute in place of Execute.
c.Autograde.autograde_preprocessors = [
    GradingExecute,
    IgnorePattern,
    ClearMetadataPreprocessor,
    LimitOutput,
    SaveAutoGrades,
    AssignLatePenalties,
    CheckCellMetadata,
]
# Before nbgrader's own sanitizing steps, graded cells a submission lost (deleted, metadata stripped)
# are put back from the master (specdec_lite/classroom/restore.py); report says so.
c.Autograde.sanitize_preprocessors = [
    ClearOutput,
    RestoreGradedCells,
    DeduplicateIds,
    OverwriteKernelspec,
    OverwriteCells,
    CheckCellMetadata,
]
# What the cells output is student input too: the grader keeps at most 1 MiB of one output, 4 MiB of a cell
# and 16 MiB of a notebook, and refuses unread any message over 4 MiB (specdec_lite/classroom/outputs.py); set
# c.GradingExecute.max_output_bytes, max_cell_output_bytes, max_notebook_output_bytes, max_message_bytes to change.
# Feedback pages are sanitized: no script, event handler, javascript: URL, iframe, object or SVG of a student's
# notebook reaches them: nbconvert's sanitize_html for outputs, and SanitizeFeedback (nbconvert's SanitizeHTML)
# for Markdown cells too, which nbgrader's feedback template renders unsanitized.
c.HTMLExporter.sanitize_html = True
c.GenerateFeedback.preprocessors = [GetGrades, CSSHTMLHeaderPreprocessor, SanitizeFeedback]
# A master's MyST twin holds the solutions: never copy it into release/, autograded/ or feedback/.
c.CourseDirectory.ignore = [
    ".ipynb_checkpoints",
    "*.pyc",
    "__pycache__",
    "feedback",
    "*.md",
    "jupytext.toml",
    ".grading.json",
]
