"""What one graded submission costs: the grader spends on nothing a score does not depend on.

A graded kernel imports no heavy module the labs' grades do not need (SciPy's ``stats``, torch outside
Lab 8); a message the grader refuses costs its cell no wait for a status that was dropped with it; a graded
notebook's measurement section (Lab 8's) runs its smallest plan, which no score depends on: the graded cells
come before it (``tests/test_llm_measure_pair.py`` measures a graded pair). Times are in
``benchmarks/grading_cost.py``, not here.
"""

from __future__ import annotations

import ast
import json
import logging
import subprocess
import sys

import nbformat
import numpy as np
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from specdec_lite import stats
from specdec_lite.classroom import outputs, sandbox
from specdec_lite.classroom.execute import GRADED_VARIABLE, GradingExecute
from specdec_lite.classroom.release import COURSE

LABS_WITHOUT_MODELS = [f"lab0{n}" for n in range(1, 8)]  # Labs 8 and 9 load language models (torch)


def test_chi_squares_p_value_is_scipy_stats_own():
    """``chi_square`` takes its p-value from ``scipy.special.chdtrc``, the function ``scipy.stats.chi2.sf`` calls:
    the same floats, so every statistical check decides as before, without importing ``scipy.stats``."""
    from scipy.stats import chi2

    rng = np.random.default_rng(0)
    for cells in (2, 3, 5, 12, 40):
        probs = rng.dirichlet(np.ones(cells))
        for n in (10, 200, 5000):
            counts = rng.multinomial(n, probs)
            fit = stats.chi_square(counts, probs)
            if fit.dof >= 1:
                assert fit.pvalue == float(chi2.sf(fit.statistic, fit.dof))


def _import_lines(lab: str) -> str:
    (path,) = COURSE.glob(f"{lab}_*.ipynb")
    nb = nbformat.read(path, as_version=4)
    found = []
    for cell in nb.cells:
        if cell.cell_type == "code":
            body = ast.parse(cell.source).body
            found += [ast.unparse(node) for node in body if isinstance(node, (ast.Import, ast.ImportFrom))]
    return "\n".join(found)


@pytest.mark.slow
def test_the_labs_imports_load_neither_scipy_stats_nor_torch():
    """The import lines of Labs 1 to 7 (8 and 9 load language models), run in one fresh interpreter as a graded
    kernel runs them: SciPy's ``stats`` (most of a second) and torch are not among the modules loaded."""
    lines = "\n".join(_import_lines(lab) for lab in LABS_WITHOUT_MODELS)
    assert "specdec_lite" in lines and "check_" in lines
    loaded = "sorted(m for m in ('scipy.stats', 'torch') if m in sys.modules)"
    code = lines + f"\nimport json, sys\nprint(json.dumps({loaded}))"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == []


def _grade(tmp_path, monkeypatch, caplog, cells: list[str], **traits) -> nbformat.NotebookNode:
    """``cells`` run by the grader's Execute step in its sandbox, as nbgrader runs a Lab 1 submission."""
    if sandbox.missing():
        pytest.fail(f"the sandbox cannot run on this machine: {sandbox.missing()}")
    monkeypatch.chdir(tmp_path)  # the sandbox hides the folder nbgrader runs in (the course directory)
    folder = tmp_path / "notebook"
    folder.mkdir(exist_ok=True)
    log = logging.getLogger("test_grading_cost")
    caplog.set_level(logging.INFO, logger=log.name)
    ex = GradingExecute(log=log, **traits)
    resources = {"nbgrader": {"assignment": "lab01_markov_chains"}, "metadata": {"path": str(folder)}}
    nb, _ = ex.preprocess(new_notebook(cells=[new_code_cell(c) for c in cells]), resources)
    return nb


def _text(cell: nbformat.NotebookNode) -> str:
    return "".join(o.get("text", "") for o in cell.outputs if o.get("output_type") == "stream")


@pytest.mark.slow
def test_a_refused_message_costs_its_cell_no_wait_for_a_dropped_status(tmp_path, monkeypatch, caplog):
    """A print over ``max_message_bytes`` is refused unread: its connection drops, and the cell's last message
    (its idle status) with it. The grader then asks the kernel, which answers once the cell is over, instead
    of waiting out nbclient's ``iopub_timeout``: no "Timeout waiting for IOPub output" in the log. The cut is
    still reported, the next cell still runs, and the kernel is told it is graded."""
    nb = _grade(
        tmp_path,
        monkeypatch,
        caplog,
        [
            f"import os; print(os.environ.get({GRADED_VARIABLE!r}))",
            "print('x' * 600_000)",
            "print('after')",
        ],
        max_message_bytes=100_000,
    )
    first, flood, after = nb.cells
    assert _text(first).strip() == "1"
    assert outputs.CUT in _text(flood) and "x" * 1000 not in _text(flood)
    assert _text(after).strip() == "after"
    assert "Timeout waiting for IOPub output" not in caplog.text
    assert "failed" not in caplog.text


@pytest.mark.slow
def test_full_measurements_leave_the_kernel_untold(tmp_path, monkeypatch, caplog):
    """``--GradingExecute.measurements=full``: the kernel's environment does not say it is graded, even when the
    grader's own does (a grader run from inside another)."""
    monkeypatch.setenv(GRADED_VARIABLE, "1")
    nb = _grade(
        tmp_path, monkeypatch, caplog, [f"import os; print(os.environ.get({GRADED_VARIABLE!r}))"], measurements="full"
    )
    assert _text(nb.cells[0]).strip() == "None"


def test_lab8s_graded_cells_come_before_its_measurement():
    """The rule's premise: every graded cell of Lab 8 runs before the first cell that measures, and none reads what
    the measurement computes, so no score depends on how much it measures."""
    nb = nbformat.read(COURSE / "source" / "lab08_real_models" / "lab08_real_models.ipynb", as_version=4)
    measuring = min(i for i, c in enumerate(nb.cells) if c.cell_type == "code" and "measure_pair(" in c.source)
    graded = [i for i, c in enumerate(nb.cells) if c.metadata.get("nbgrader", {}).get("grade")]
    assert graded and max(graded) < measuring
    later = "\n".join(c.source for c in nb.cells[measuring:] if c.cell_type == "code")
    for name in ("results", "theorem1_rows", "speed_rows", "sweep_rows", "label"):
        assert name in later  # what the measurement section defines ...
        assert all(name not in nb.cells[i].source for i in graded)  # ... no graded cell reads
