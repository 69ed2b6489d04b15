"""Part I lab checks: they accept the right answer and name the typical mistakes."""

import numpy as np
import pytest

import specdec_lite as sd
from specdec_lite.exercises import Feedback
from specdec_lite.exercises import part1 as E
from tests import check_answers as A


def assert_wrong(fb: Feedback, *fragments: str) -> None:
    assert isinstance(fb, Feedback) and not fb.ok, fb
    for f in fragments:
        assert f in fb.message, fb.message


# --- TV and marginals -------------------------------------------------------------


def test_check_tv():
    assert E.check_tv(A.tv)
    assert_wrong(E.check_tv(sd.tv), "write it yourself")
    assert E.check_tv(lambda p, q: 1 - np.minimum(p, q).sum())
    assert_wrong(E.check_tv(lambda p, q: np.abs(p - q).sum()), "factor 1/2")
    assert_wrong(E.check_tv(lambda p, q: np.abs(p - q).max()), "largest single-token gap")
    assert_wrong(E.check_tv(lambda p, q: np.minimum(p, q).sum()), "1 - TV")
    assert_wrong(E.check_tv(lambda p, q: 0.5 * (p - q).sum()), "cancel")
    assert_wrong(E.check_tv(lambda p, q: 1 / 0), "ZeroDivisionError")
    assert_wrong(E.check_tv(lambda p, q: "tv"), "one number")
    assert_wrong(E.check_tv(lambda p, q: 0.3), "1/2 sum_x")


def test_check_marginals():
    def mine(chain):
        mu = [chain.init]
        for P in chain.trans:
            mu.append(mu[-1] @ P)
        return np.array(mu)

    def column(chain):
        mu = [chain.init]
        for P in chain.trans:
            mu.append(P @ mu[-1])
        return np.array(mu)

    assert E.check_marginals(mine)
    assert_wrong(E.check_marginals(column), "column convention")
    assert_wrong(E.check_marginals(lambda c: mine(c)[1:]), "shape")
    assert_wrong(E.check_marginals(lambda c: np.tile(np.full(c.V, 1 / c.V), (c.T, 1))), "row 0")
    assert_wrong(E.check_marginals(lambda c: np.vstack([c.init, mine(c)[1:] * 2])), "summing to 1")


# --- acceptance, residual, one speculative step -------------------------------------


def test_check_acceptance():
    assert E.check_acceptance(A.acceptance)
    assert_wrong(E.check_acceptance(sd.acceptance), "write it yourself")
    with np.errstate(divide="ignore", invalid="ignore"):
        assert E.check_acceptance(lambda p, q: np.minimum(1, q / p))  # nan/inf where p = 0 is fine
        assert_wrong(E.check_acceptance(lambda p, q: q / p), "cannot exceed 1")
        assert_wrong(E.check_acceptance(lambda p, q: np.minimum(1, p / q)), "swapped")
    assert_wrong(E.check_acceptance(lambda p, q: np.ones_like(p)), "expected")
    assert_wrong(E.check_acceptance(lambda p, q: 1.0), "single number")


def test_check_residual():
    assert E.check_residual(A.residual)
    assert_wrong(E.check_residual(sd.residual), "write it yourself")

    def no_guard(p, q):
        pos = np.maximum(q - p, 0)
        with np.errstate(invalid="ignore"):
            return pos / pos.sum()

    def no_plus(p, q):
        d = q - p
        s = d.sum()
        return d / s if s else d

    assert_wrong(E.check_residual(no_guard), "0/0", "returns q")
    assert_wrong(E.check_residual(lambda p, q: np.maximum(q - p, 0)), "not normalised", "sums to 0.300")
    assert_wrong(E.check_residual(no_plus), "positive part")
    assert_wrong(E.check_residual(lambda p, q: A.residual(q, p)), "[p - q]+")
    # Any law is a correct fallback when p == q: it is never sampled.
    assert E.check_residual(lambda p, q: A.residual(p, q) if A.tv(p, q) > 0 else np.full(len(p), 1 / len(p)))
    assert_wrong(E.check_residual(lambda p, q: A.residual(p, q) if A.tv(p, q) > 0 else np.zeros(len(p))), "valid law")


def good_step(p, q, rng):
    x = rng.choice(len(p), p=p)
    if rng.random() < min(1.0, q[x] / p[x]):
        return x, False
    return rng.choice(len(q), p=sd.residual(p, q)), True


def test_check_speculative_step_accepts_algorithm_1():
    assert E.check_speculative_step(good_step, runs=5000)


def test_check_speculative_step_names_mistakes():
    def uno(p, q, rng):
        x, rej = good_step(p, q, rng)
        return (rng.choice(len(q), p=q), True) if rej else (x, False)

    def swapped(p, q, rng):
        x, rej = good_step(p, q, rng)
        return (rng.choice(len(q), p=sd.residual(q, p)), True) if rej else (x, False)

    assert_wrong(E.check_speculative_step(uno, runs=5000), "instead of the residual")
    assert_wrong(E.check_speculative_step(lambda p, q, rng: (rng.choice(len(p), p=p), False), runs=5000), "never")
    assert_wrong(E.check_speculative_step(swapped, runs=5000), "letters are swapped", "[p - q]+")
    assert_wrong(
        E.check_speculative_step(lambda p, q, rng: (good_step(p, q, rng)[0], False), runs=5000),
        "joint law of (token, rejected)",
    )
    flipped = E.check_speculative_step(lambda p, q, rng: (lambda x, r: (x, not r))(*good_step(p, q, rng)), runs=5000)
    assert_wrong(flipped, "flag accepted tokens")
    assert_wrong(E.check_speculative_step(lambda p, q, rng: 7, runs=10), "pair")
    assert_wrong(E.check_speculative_step(lambda p, q, rng: (9, False), runs=10), "outside the vocabulary")
    assert_wrong(E.check_speculative_step(lambda p, q, rng: (rng.integers(len(p)), False), runs=5000), "chi-square")


# --- Theorem 1(b) by hand -----------------------------------------------------------


def test_two_state_pair_is_what_the_lab_says():
    draft, target = E.two_state_pair()
    assert (draft.V, draft.T) == (2, 3)
    np.testing.assert_allclose(sd.theory.rejection_profile(draft, target), [0.3, 0.25, 0.265])


def test_check_expected_rejections_two_state():
    draft, target = E.two_state_pair()
    exact = sd.theory.expected_rejections(draft, target)
    assert E.check_expected_rejections_two_state(exact)
    assert E.check_expected_rejections_two_state(round(exact, 3))
    assert_wrong(E.check_expected_rejections_two_state(sd.theory.expected_oracle_calls(draft, target)), "oracle calls")
    assert_wrong(E.check_expected_rejections_two_state(0.832), "draft's marginals")
    assert_wrong(E.check_expected_rejections_two_state(0.8), "averaged the rows equally")
    assert_wrong(E.check_expected_rejections_two_state(0.515), "first position")
    assert_wrong(E.check_expected_rejections_two_state(0.55), "last position")
    assert_wrong(E.check_expected_rejections_two_state(2 * exact), "factor 1/2")
    assert_wrong(E.check_expected_rejections_two_state(0.9), "add them up")
    assert_wrong(E.check_expected_rejections_two_state("0.8"[::-1] + "x"), "one number")
    # Other chains can be passed in; the check compares with Theorem 1(b) for them.
    t = sd.MarkovChain.random(4, 10, rng=0)
    d = sd.draft_for(t, 0.4, rng=1)
    assert E.check_expected_rejections_two_state(sd.theory.expected_rejections(d, t), d, t)
    assert_wrong(E.check_expected_rejections_two_state(1.0, d), "both")


def test_check_speedup():
    draft, target = E.two_state_pair()
    e, calls = sd.theory.expected_rejections(draft, target), sd.theory.expected_oracle_calls(draft, target)
    fb = E.check_speedup(3 / calls)
    assert fb and "package's convention" in fb.message
    fb = E.check_speedup(3 / e)
    assert fb and "paper's convention" in fb.message
    assert_wrong(E.check_speedup(calls / 3), "inverse")
    assert_wrong(E.check_speedup(3.0), "not a speed-up")


@pytest.mark.parametrize("check", [E.check_tv, E.check_residual, E.check_acceptance, E.check_marginals])
def test_checks_never_raise_on_garbage(check):
    assert_wrong(check(lambda *a: None))
