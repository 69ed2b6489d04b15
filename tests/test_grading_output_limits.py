"""The grader's output limits and feedback cleaning, unit by unit (``specdec_lite/classroom/outputs.py``).

The real grading run is ``tests/test_grading_outputs.py``; these check each rule on its own, quickly.
"""

from __future__ import annotations

from nbformat.notebooknode import NotebookNode

from specdec_lite.classroom import outputs
from specdec_lite.exercises.feedback import OUTCOME

LIMITS = outputs.Limits(output=1000, cell=3000, notebook=5000, message=4000)


def stream(n: int) -> NotebookNode:
    return NotebookNode(output_type="stream", name="stdout", text="x" * n)


def test_an_output_over_its_limit_is_shortened_and_counted():
    budget = outputs.OutputBudget(LIMITS)
    out = stream(2500)
    assert budget.take(out, 0)
    assert outputs.size(out.text) == LIMITS.output
    assert budget.cuts[0].bytes == 1500 and budget.cuts[0].outputs == 1
    assert outputs.CUT in budget.notice(0).text and "1 output" in budget.notice(0).text


def test_a_cell_and_a_notebook_keep_no_more_than_their_limits():
    budget = outputs.OutputBudget(LIMITS)
    kept = 0
    for cell in range(3):
        budget.start_cell()
        for _ in range(10):
            out = stream(900)
            if budget.take(out, cell):
                kept += outputs.size(out.text)
        assert budget.cell_used <= LIMITS.cell
    assert kept == budget.used <= LIMITS.notebook
    assert sum(c.bytes for c in budget.cuts.values()) == 30 * 900 - kept


def test_errors_and_outcomes_are_kept_past_the_limits_so_a_graded_cell_scores_as_it_would():
    budget = outputs.OutputBudget(LIMITS)
    budget.start_cell()
    assert budget.take(stream(LIMITS.cell), 0)  # the cell's whole allowance
    error = NotebookNode(output_type="error", ename="NotYet", evalue="e" * 10_000, traceback=["t" * 10_000] * 5)
    outcome = NotebookNode(
        output_type="display_data", metadata={}, data={"text/plain": "Correct." * 1000, OUTCOME: {"ok": True}}
    )
    assert budget.take(error, 0) and budget.take(outcome, 0)
    assert error.ename == "NotYet" and outputs.size(error.traceback) < 10_000
    assert outcome.data[OUTCOME] == {"ok": True}
    assert not budget.take(stream(10), 0), "a plain output past the limits is dropped"


def test_a_flood_of_errors_or_outcomes_past_the_limits_is_bounded():
    budget = outputs.OutputBudget(LIMITS)
    budget.take(stream(LIMITS.cell), 0)
    kept = sum(
        budget.take(NotebookNode(output_type="error", ename="E", evalue="v" * 5000, traceback=[]), 0)
        for _ in range(100)
    )
    assert 0 < kept < 100


def test_a_display_keeps_the_representations_that_fit():
    out = NotebookNode(
        output_type="display_data", metadata={}, data={"image/png": "i" * 5000, "text/plain": "<Figure>"}
    )
    assert outputs.fit(out, LIMITS.output) == 5000
    assert out.data == {"text/plain": "<Figure>"}


def test_a_large_metadata_is_cut_too():
    out = NotebookNode(output_type="display_data", metadata={"junk": "m" * 10_000}, data={"text/plain": "ok"})
    budget = outputs.OutputBudget(LIMITS)
    assert budget.take(out, 0) and out.metadata == {} and budget.cuts[0].bytes > 10_000


def test_markdown_is_rendered_then_cleaned():
    source = (
        "# Title\nText <script>alert(1)</script> <img src=x onerror=alert(2)> "
        "[bad](javascript:alert(3)) [good](https://example.org)\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"
    )
    html = outputs.markdown_to_safe_html(source)
    assert "<script" not in html and "onerror" not in html and "javascript:" not in html and "<img" not in html
    assert '<a href="https://example.org">good</a>' in html and "<td>1</td>" in html and "<h1>" in html
