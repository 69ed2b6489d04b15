"""Lab 6 checks: right answers pass, typical wrong answers get a message naming the mistake."""

import re
from pathlib import Path

import nbformat
import numpy as np
import pytest

import specdec_lite as sd
from specdec_lite import batch, theory
from specdec_lite.exercises import batch as ex
from specdec_lite.laws import residual, tv

# --- batch improvement -----------------------------------------------------------


def bi_right(p, q, M):
    prod, qm = 1.0, q
    for _ in range(M):
        prod *= tv(qm, p)
        qm = residual(p, qm)
    return tv(q, p) - prod


def bi_power(p, q, M):
    return tv(q, p) - tv(q, p) ** M


def bi_product(p, q, M):
    return tv(q, p) - bi_right(p, q, M)


def bi_unnormalised(p, q, M):
    prod, qm = 1.0, q
    for _ in range(M):
        prod *= np.maximum(qm - p, 0).sum()
        qm = np.maximum(qm - p, 0)
    return tv(q, p) - prod


def bi_signed(p, q, M):
    prod, qm = 1.0, q
    for _ in range(M):
        prod *= tv(qm, p)
        with np.errstate(all="ignore"):
            qm = (qm - p) / (qm - p).sum()
    return tv(q, p) - prod


def bi_one_short(p, q, M):
    return bi_right(p, q, M - 1) if M > 1 else 0.0 - 0.3


def bi_raises(p, q, M):
    raise RuntimeError("boom")


def test_batch_improvement_right_answers_pass():
    assert ex.check_batch_improvement(bi_right).ok
    assert not ex.check_batch_improvement(batch.batch_improvement).ok
    assert not ex.check_batch_improvement(theory.batch_improvement).ok


@pytest.mark.parametrize(
    "fn, phrase",
    [
        (bi_power, "multiplied TV(q, p) by itself"),
        (bi_product, "the product r_1 ... r_M"),
        (bi_unnormalised, "not normalised"),
        (bi_signed, "positive"),
        (bi_one_short, "one factor too few"),
        (bi_raises, "raised RuntimeError"),
        (lambda p, q, M: "0.1", "return one number"),
        (lambda p, q, M: [1, 2], "return one number"),
        (lambda p, q, M: 2.0, "between 0 and TV"),
    ],
)
def test_batch_improvement_wrong_answers_get_specific_feedback(fn, phrase):
    fb = ex.check_batch_improvement(fn)
    assert not fb.ok and phrase in fb.message, fb.message


# --- Theorem 3's forward pass ------------------------------------------------------


def er_right(draft, target, M):
    p, q = draft.laws(), target.laws()
    mu = target.marginals()
    total, f = 0.0, None
    for n in range(target.T):
        rows = [0] if n == 0 else range(target.V)
        new_f = np.zeros(target.V)
        for u in rows:
            prod, qm = 1.0, q[n, u]
            for _ in range(M):
                prod *= tv(qm, p[n, u])
                qm = residual(p[n, u], qm)
            start = 1.0 if n == 0 else f[u]
            rest = 0.0 if n == 0 else mu[n - 1, u] - f[u]
            total += rest * tv(p[n, u], q[n, u]) + start * prod
            new_f += rest * np.maximum(q[n, u] - p[n, u], 0) + start * prod * qm
        f = new_f
    return total


def er_everywhere(draft, target, M):
    mu = target.marginals()
    reach, _ = batch.residual_cascade(draft.laws(), target.laws(), M)
    return reach[-1][0, 0] + sum(mu[n - 1] @ reach[-1][n] for n in range(1, target.T))


def er_first_only(draft, target, M):
    prof = theory.rejection_profile(draft, target)
    reach, _ = batch.residual_cascade(draft.laws(), target.laws(), M)
    return prof[1:].sum() + reach[-1][0, 0]


def test_expected_rejections_right_answers_pass():
    assert ex.check_expected_rejections_batch(er_right).ok
    assert not ex.check_expected_rejections_batch(theory.expected_rejections_batch).ok


@pytest.mark.parametrize(
    "fn, phrase",
    [
        (lambda d, t, M: theory.expected_rejections(d, t), "Theorem 1"),
        (er_everywhere, "at every position"),
        (er_first_only, "every position right after a rejection"),
        (lambda d, t, M: er_right(d, t, max(M - 1, 1)) if M > 1 else er_right(d, t, M), "M - 1 drafts"),
        (batch.expected_rejections_tree, "draft tree"),
        (lambda d, t, M: -1.0, "[0, T]"),
        (lambda d, t, M: er_right(d, t, M) + 0.01, "f_n(x)"),
        (lambda d, t, M: None, "not attempted yet"),
    ],
)
def test_expected_rejections_wrong_answers_get_specific_feedback(fn, phrase):
    fb = ex.check_expected_rejections_batch(fn)
    assert not fb.ok and phrase in fb.message, fb.message


# --- survivors of the tree ------------------------------------------------------------


def test_tree_survivors():
    assert ex.check_tree_survivors(lambda k, m, px: 1 + (k - m) * px).ok
    cases = [
        (lambda k, m, px: (k - m) * px, "accepted draft itself"),
        (lambda k, m, px: 1 + (k - 1) * px, "never be accepted later"),
        (lambda k, m, px: 1 + k * px, "which ones were tested"),
        (lambda k, m, px: k, "with what probability each"),
        (lambda k, m, px: {}, "return one number"),
    ]
    for fn, phrase in cases:
        fb = ex.check_tree_survivors(fn)
        assert not fb.ok and phrase in fb.message, fb.message


def test_checks_return_feedback_with_markdown():
    fb = ex.check_tree_survivors(lambda k, m, px: 0)
    assert "Not yet" in str(fb) and "❌" in fb._repr_markdown_()


# --- chapter 6 and lab 6: structure ---------------------------------------------------

ROOT = Path(__file__).resolve().parents[1]


def test_chapter_has_exercises_with_dropdown_solutions_and_package_code():
    text = (ROOT / "book" / "ch06_batch.md").read_text()
    exercises = re.findall(r":::\{exercise\}\n:label: (\S+)", text)
    solutions = re.findall(r":::\{solution\} (\S+)\n:class: dropdown", text)
    assert len(exercises) >= 3 and sorted(exercises) == sorted(solutions)
    assert "*coding (lab" in text.lower() and "*exploration (lab" in text.lower()
    assert ":pyobject: residual_cascade" in text and ":pyobject: batch_forward" in text
    assert not re.search(r"^def ", text, re.M)  # no formula is redefined in the chapter
    assert "not in the paper" in text  # the tree is the book's own analysis, and says so


def test_numbers_in_lab6_model_answers_are_the_package_numbers_and_their_claims_hold():
    """Lab 6's model answers quote these numbers; what they say of them is true."""
    from specdec_lite.figures.part1 import pair

    master = (ROOT / "notebooks" / "source" / "lab06_batch" / "lab06_batch.md").read_text()
    draft, target, _ = pair(7, 50, 0.0, 10)
    thm1, limit = theory.expected_rejections(draft, target), batch.batch_rejection_limit(draft, target)
    gap = thm1 - limit
    # (a) a few drafts close half of the gap, but M = 64 is still above the floor
    half = next(M for M in range(1, 100) if batch.expected_rejections_batch(draft, target, M) - limit < gap / 2)
    assert half <= 8 and batch.expected_rejections_batch(draft, target, 64) > limit + 0.05 * gap
    # (b) the tree goes below the floor at some M <= 64 and stays there
    below = next(M for M in range(1, 100) if batch.expected_rejections_tree(draft, target, M) < limit)
    assert below < 64 and batch.expected_rejections_tree(draft, target, 64) < limit
    for number in (
        f"{batch.expected_rejections_batch(draft, target, 64):.2f}",
        f"{limit:.2f}",
        f"{batch.expected_rejections_tree(draft, target, 64):.2f}",
        f"$M = {below}$",
        f"by $M = {half}$",
    ):
        assert number in master, number
    # The two-position exercise: p = (0.8, 0.2), q = (0.5, 0.5) at both positions.
    p, q = np.array([0.8, 0.2]), np.array([0.5, 0.5])
    d = sd.MarkovChain(p, np.broadcast_to(p, (1, 2, 2)))
    t = sd.MarkovChain(q, np.broadcast_to(q, (1, 2, 2)))
    assert [batch.expected_rejections_batch(d, t, M) for M in (1, 2)] == pytest.approx([0.6, 0.5256])
    assert batch.batch_rejection_limit(d, t) == pytest.approx(0.3)


def test_lab_structure():
    """The master of lab 6: three graded checks, in the chapter's order, and the batch explorer."""
    nb = nbformat.read(ROOT / "notebooks" / "source" / "lab06_batch" / "lab06_batch.ipynb", as_version=4)
    graded = [c.source for c in nb.cells if c.cell_type == "code" and c.metadata.get("nbgrader", {}).get("grade")]
    assert [re.match(r"check_\w+", g)[0] for g in graded] == [
        "check_batch_improvement",
        "check_expected_rejections_batch",
        "check_tree_survivors",
    ]
    assert any(c.source == "batch_explorer()" for c in nb.cells)
