"""Part II check functions: right answers pass, typical wrong answers get specific feedback, nothing raises."""

import numpy as np
import pytest

from specdec_lite import optimality as op
from specdec_lite import tradeoff as tr
from specdec_lite.exercises import part2 as ex
from specdec_lite.laws import residual
from tests import check_answers as A


def test_unbiased_rejection_law():
    assert not ex.check_unbiased_rejection_law(op.unbiased_rejection_law)
    assert ex.check_unbiased_rejection_law(lambda p, q, b: (q - b * p) / ((1 - b) * p).sum())
    cases = [
        (lambda p, q, b: q - b * p, "Divide by sum_x (1 - b(x)) p(x)"),
        (lambda p, q, b: A.residual(p, q), "residual [q - p]_+"),
        (lambda p, q, b: q, "double counts"),
        (lambda p, q, b: (p - b * q) / ((1 - b) * p).sum(), "check the sign"),
        (lambda p, q, b: 1 / 0, "ZeroDivisionError"),
        (lambda p, q, b: 0.5, "single number"),
    ]
    for fn, words in cases:
        fb = ex.check_unbiased_rejection_law(fn)
        assert not fb and words in fb.message, fb.message


def test_unbiased_member():
    p, q = np.array([0.4, 0.3, 0.2, 0.1]), np.array([0.1, 0.2, 0.3, 0.4])
    b = np.array([0.1, 0.5, 1.0, 1.0])
    fb = ex.check_unbiased_member(p, q, b, op.unbiased_rejection_law(p, q, b))
    assert fb and "≥ TV(p, q) = 0.400" in fb.message
    assert ex.check_unbiased_member(p, q, b, op.unbiased_rejection_law(p, q, b), target_reject=0.51)
    fb = ex.check_unbiased_member(p, q, b, op.unbiased_rejection_law(p, q, b), target_reject=0.6)
    assert not fb and "not 0.600" in fb.message
    fb = ex.check_unbiased_member(p, q, np.ones(4), q)
    assert not fb and "exceeds min(1, q/p)" in fb.message and "x=0" in fb.message
    fb = ex.check_unbiased_member(p, q, b, residual(p, q))
    assert not fb and "not q" in fb.message
    assert "probability law" in ex.check_unbiased_member(p, q, b, 2 * q).message
    assert "b must be a probability" in ex.check_unbiased_member(p, q, b + 1, q).message
    assert "shape" in ex.check_unbiased_member(p, q, b[:2], q).message


def test_tv_loss():
    assert ex.check_tv_loss(A.tv_loss) and not ex.check_tv_loss(tr.tv_loss)
    assert ex.check_tv_loss(lambda p, q, b: 0.5 * np.abs(q - b * p).sum() - 0.5 * ((1 - b) * p).sum())
    cases = [
        (lambda p, q, b: 0.5 * np.abs(q - b * p).sum(), "alone"),
        (lambda p, q, b: 0.5 * np.abs(q - b * p).sum() - ((1 - b) * p).sum(), "factor 1/2"),
        (lambda p, q, b: 0.5 * np.abs(p - q).sum(), "always accepting"),
        (lambda p, q, b: np.maximum(q - b * p, 0).sum(), "over-accepted"),
        (lambda p, q, b: "zero", "one number"),
    ]
    for fn, words in cases:
        fb = ex.check_tv_loss(fn)
        assert not fb and words in fb.message, fb.message


def test_optimal_rejection_law_accepts_any_optimal_law():
    assert ex.check_optimal_rejection_law(A.optimal_law)
    assert not ex.check_optimal_rejection_law(tr.optimal_rejection_law)

    def other_optimal(p, q, b):
        # A's positive part, filled up in token order until it sums to 1: also optimal (0 <= P <= A)
        r = ((1 - b) * p).sum()
        A = np.maximum((q - b * p) / r, 0)
        room = np.cumsum(A)
        return np.clip(1 - (room - A), 0, A)

    assert ex.check_optimal_rejection_law(other_optimal)

    def rounded(p, q, b):
        # an optimal law computed in floating point: a zero may come out as -1e-13
        P = np.asarray(A.optimal_law(p, q, b), float).copy()
        P[np.argmin(P)] -= 1e-13
        P[np.argmax(P)] += 1e-13
        return P

    assert ex.check_optimal_rejection_law(rounded)
    fb = ex.check_optimal_rejection_law(lambda p, q, b: q)
    assert not fb and "only adds bias" in fb.message
    fb = ex.check_optimal_rejection_law(lambda p, q, b: (q - b * p) / ((1 - b) * p).sum())
    assert not fb and "positive part" in fb.message


def test_over_accept():
    assert ex.check_over_accept(A.over_accept) and not ex.check_over_accept(tr.over_accept)
    assert ex.check_over_accept(lambda p, q, e: np.minimum(1, (q + e) / p))  # nan/inf where p = 0 is fine
    cases = [
        (lambda p, q, e: (q + e) / p, "min(1, ...)"),
        (lambda p, q, e: np.minimum(1, q / p + e), "before dividing"),
        (lambda p, q, e: np.minimum(1, q / p), "add eps"),
        (lambda p, q, e: np.ones_like(p), "b(x) = min(1, (q(x) + eps) / p(x))"),
    ]
    for fn, words in cases:
        fb = ex.check_over_accept(fn)
        assert not fb and words in fb.message, fb.message


@pytest.mark.parametrize(
    "check", [ex.check_unbiased_rejection_law, ex.check_tv_loss, ex.check_optimal_rejection_law, ex.check_over_accept]
)
def test_checks_never_raise(check):
    fb = check(lambda *args: None)
    assert not fb and isinstance(fb.message, str)
