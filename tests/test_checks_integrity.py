"""The labs' checks test the student's own work: handing it to the package, or patching the grader, fails."""

from __future__ import annotations

import inspect
import os
import re
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

import specdec_lite as sd
from specdec_lite import _lock, batch, chains, laws, lookahead, tradeoff
from specdec_lite.exercises import Feedback, NotYet, feedback, part1
from tests import check_answers as A

ROOT = Path(__file__).resolve().parents[1]
MASTERS = sorted((ROOT / "notebooks" / "source").glob("lab0[1-9]_*/lab0*.md"))


def cases():
    for name, variants in A.DELEGATING.items():
        for i, fn in enumerate(variants):
            yield pytest.param(name, fn, id=f"{name}-{i}")


# --- delegating to the package -------------------------------------------------------------


@pytest.mark.parametrize("name, fn", list(cases()))
def test_an_answer_that_calls_the_package_gets_write_it_yourself(name, fn):
    check, _ = A.FUNCTION_CHECKS[name]
    fb = check(fn)
    assert isinstance(fb, Feedback) and not fb.ok, fb
    assert "write it yourself" in fb.message, fb.message


def test_the_eleven_functions_of_the_report_are_all_switched_off():
    """laws.tv, .acceptance, .residual, chain.marginals(), tradeoff.tv_loss, .optimal_rejection_law, .over_accept,
    batch.batch_improvement, .expected_rejections_batch, lookahead.expected_tokens_per_call."""
    named = [
        laws.tv,
        laws.acceptance,
        laws.residual,
        chains.MarkovChain.marginals,
        tradeoff.tv_loss,
        tradeoff.optimal_rejection_law,
        tradeoff.over_accept,
        batch.batch_improvement,
        batch.expected_rejections_batch,
        lookahead.expected_tokens_per_call,
    ]
    for fn in named:
        name = getattr(fn, "__guarded__", None)
        assert name and _lock.GUARDED[name] is fn, fn.__qualname__
        assert inspect.getsource(fn).lstrip().startswith(f'@_lock.guarded("{name}")\n'), fn.__qualname__
    delegated = {n for n in A.DELEGATING}
    assert {
        "check_tv",
        "check_marginals",
        "check_acceptance",
        "check_residual",
        "check_tv_loss",
        "check_optimal_rejection_law",
        "check_over_accept",
        "check_batch_improvement",
        "check_expected_rejections_batch",
        "check_tokens_per_call",
    } <= delegated


def test_outside_a_check_the_package_works_as_before():
    p, q = np.array([0.5, 0.3, 0.2]), np.array([0.2, 0.3, 0.5])
    part1.check_tv(lambda p, q: sd.tv(p, q))  # a check that refused the package leaves nothing held
    assert _lock.held == frozenset() and "SPECDEC_LITE_LOCKED" not in os.environ
    assert sd.tv(p, q) == pytest.approx(0.3)
    assert sd.residual(p, q) == pytest.approx([0, 0, 1])
    assert str(inspect.signature(laws.tv)) == "(p: 'Any', q: 'Any', *, check: 'bool' = True) -> 'Any'"
    assert laws.tv.__doc__.startswith("Total variation")
    assert sd.tv is laws.tv and sd.theory.expected_rejections_batch is batch.expected_rejections_batch


def test_a_student_helper_the_exercise_allows_still_works():
    """Lab 6 exercise 2 hints at batch.residual_cascade; Lab 8 allows laws.acceptance and laws.residual."""
    check, _ = A.FUNCTION_CHECKS["check_expected_rejections_batch"]
    assert check(A.expected_rejections_batch)  # it calls batch.residual_cascade and sd.tv
    check, _ = A.FUNCTION_CHECKS["check_verify_round"]
    assert check(A.verify_round)  # it calls sd.acceptance and sd.residual


def test_a_thread_or_a_child_process_is_locked_too():
    def in_thread(p, q):
        out = {}

        def work():
            try:
                out["v"] = sd.tv(p, q)
            except Exception as e:  # noqa: BLE001
                out["e"] = e

        t = threading.Thread(target=work)
        t.start()
        t.join()
        if "e" in out:
            raise out["e"]
        return out["v"]

    fb = part1.check_tv(in_thread)
    assert not fb and "write it yourself" in fb.message

    def in_child(p, q):
        code = f"import specdec_lite as sd; print(sd.tv({p.tolist()}, {q.tolist()}))"
        out = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        return float(out.stdout)

    fb = part1.check_tv(in_child)
    assert not fb and "CalledProcessError" in fb.message, fb.message


def test_switching_the_lock_off_from_inside_is_caught():
    def unlock(p, q):
        vars(_lock)["held"] = frozenset()
        return sd.tv(p, q)

    fb = part1.check_tv(unlock)
    assert not fb and "grading lock" in fb.message
    assert _lock.held == frozenset()

    def no_refuse(p, q):
        vars(_lock)["refuse"] = lambda name: None
        return sd.tv(p, q)

    try:
        fb = part1.check_tv(no_refuse)
    finally:
        vars(_lock)["refuse"] = feedback._REFUSE
    assert not fb and "grading lock" in fb.message


# --- patching the grader --------------------------------------------------------------------


def test_feedback_and_the_check_modules_refuse_simple_assignment():
    with pytest.raises(AttributeError):
        Feedback.assert_correct = lambda self: None
    with pytest.raises(AttributeError):
        Feedback(False, "x").ok = True
    with pytest.raises(AttributeError):
        part1.check_tv = lambda fn: Feedback(True, "")
    with pytest.raises(AttributeError):
        feedback.wrong = feedback.correct
    with pytest.raises(AttributeError):
        _lock.held = frozenset()
    with pytest.raises(NotYet):
        part1.check_tv(lambda p, q: 0.0).assert_correct()


def test_a_forced_patch_of_assert_correct_is_undone_by_the_next_check():
    type.__setattr__(Feedback, "assert_correct", lambda self: None)
    try:
        with pytest.raises(NotYet):
            part1.check_tv(lambda p, q: 0.0).assert_correct()
    finally:
        feedback._reseal()


def graded_cells(master: Path) -> list[str]:
    text = master.read_text()
    return [
        m[1]
        for m in re.finditer(r"```\{code-cell\}\n---\nnbgrader:\n  grade: true\n(?:  .*\n)*---\n(.*?)\n```", text, re.S)
    ]


@pytest.mark.parametrize("master", MASTERS, ids=lambda p: p.parent.name)
def test_graded_cells_import_the_check_afresh(master):
    cells = graded_cells(master)
    assert cells, master
    for cell in cells:
        # a comment line tells the student what the cell runs; the code is the three lines around it
        first, imp, last = [line for line in cell.splitlines() if not line.startswith("#")]
        assert len(cell.splitlines()) <= 4, cell
        name = re.match(r"(check_\w+)\(", last)[1]
        assert (
            first.startswith(f"{name}(")
            and imp.startswith("from specdec_lite.exercises.")
            and imp.endswith(f" import {name}")
            and last.endswith(".assert_correct()")
        ), cell


class _Fake:
    def assert_correct(self):
        return None


@pytest.mark.parametrize("master", MASTERS, ids=lambda p: p.parent.name)
def test_rebinding_the_check_name_in_the_notebook_does_not_grade(master):
    """Run each graded cell with its check name rebound to a fake that always passes, and wrong answers."""
    for cell in graded_cells(master):
        name = re.match(r"(check_\w+)\(", cell)[1]
        names = set(re.findall(r"\b([A-Za-z_]\w*)\b", cell.splitlines()[-1])) - {name, "assert_correct"}
        namespace = {n: None for n in names} | {name: lambda *a, **k: _Fake()}
        with pytest.raises(NotYet):
            exec(cell, namespace)


# --- no answers in the help text --------------------------------------------------------------

ANSWERS = [
    "1 + (k - m) p",
    "(q - b p) / sum",
    "1/2 sum|q - b p| - 1/2 sum (1 - b) p",
    "(1 - a^(K+1))/(1 - a)",
    "(1 - alpha^(K+1)) / (1 - alpha)",
    "(1 - a^(K+1)) / ((1 - a)(K c + 1))",
    "mu_{n+1} = mu_n",
    "TV(q, p) - prod",
    "min(1, (q + eps)/p)",
    "1/2 sum_x |p(x) - q(x)|",
    "Binomial(k - m",
]


def test_no_docstring_of_a_check_states_its_answer():
    from specdec_lite.exercises import batch as ex_batch
    from specdec_lite.exercises import lookahead as ex_lookahead
    from specdec_lite.exercises import part2, real_models

    texts = []
    for mod in (part1, part2, ex_batch, ex_lookahead, real_models, feedback):
        texts.append((mod.__name__, mod.__doc__ or ""))
        for n, obj in vars(mod).items():
            if callable(obj) and getattr(obj, "__module__", None) == mod.__name__:
                texts.append((f"{mod.__name__}.{n}", inspect.getdoc(obj) or ""))
    for where, text in texts:
        flat = " ".join(text.split())
        for answer in ANSWERS:
            assert answer not in flat, f"{where} states {answer!r}"


def test_a_custom_ipython_exception_handler_does_not_hide_a_failing_graded_cell():
    from IPython.core.interactiveshell import InteractiveShell

    ip = InteractiveShell.instance()
    swallowed = []
    ip.set_custom_exc((Exception,), lambda shell, etype, value, tb, tb_offset=None: swallowed.append(etype))
    try:
        ip.run_cell("from specdec_lite.exercises.part1 import check_tv")
        result = ip.run_cell(
            "check_tv(lambda p, q: 0.0)\n"
            "from specdec_lite.exercises.part1 import check_tv\n"
            "check_tv(lambda p, q: 0.0).assert_correct()"
        )
    finally:
        ip.set_custom_exc((), None)
    assert isinstance(result.error_in_exec, NotYet) and not swallowed
