"""Checks also grade instances drawn while they run: a function that tabulates the public ones fails.

The public instances are in the package's source; a student can precompute their answers and return
them by lookup. Each check below also grades instances drawn from a generator seeded by the OS at check
time, and its message states the drawn input.
"""

from __future__ import annotations

import numpy as np
import pytest

from specdec_lite.exercises import instances, part1, real_models
from tests import check_answers as A


def tabulated(public: dict, key, fallback):
    """A student function answering by lookup: right on the public instances, ``fallback`` elsewhere."""

    def fn(*args):
        return public.get(key(*args), fallback(*args))

    return fn


def _pair_key(p, q):
    return p.tobytes(), q.tobytes()


@pytest.mark.parametrize(
    "check, answer, fallback",
    [
        (part1.check_tv, A.tv, lambda p, q: 0.25),
        (part1.check_acceptance, A.acceptance, lambda p, q: np.ones_like(p)),
        (part1.check_residual, A.residual, lambda p, q: q),
    ],
    ids=["tv", "acceptance", "residual"],
)
def test_lab1_and_lab2_answers_tabulated_on_the_public_pairs_fail(check, answer, fallback):
    public = {_pair_key(p, q): answer(p, q) for p, q in part1._cases()}
    student = tabulated(public, _pair_key, fallback)
    for p, q in part1._cases():
        assert np.allclose(student(p, q), answer(p, q))  # right on every public pair
    fb = check(student)
    assert not fb.ok, fb.message
    p = fb.message.split("p = ")[1].split("]")[0]
    assert all(f"p = {p}]" not in f"p = {part1.fmt(pp)}" for pp, _ in part1._cases()), fb.message  # a drawn pair
    for _ in range(10):  # the honest answer passes whatever is drawn
        assert check(answer).ok


def test_lab1_marginals_tabulated_on_the_public_chain_fail():
    public = part1.MarkovChain.random(3, 4, rng=7, uniform_init=False)
    want = A.marginals(public)

    def marginals(chain):
        if chain.T == public.T and chain.V == public.V and np.array_equal(chain.trans, public.trans):
            return want
        return np.full((chain.T, chain.V), 1 / chain.V)

    fb = part1.check_marginals(marginals)
    assert not fb.ok and fb.message.startswith("On a chain drawn for this check (init = ["), fb.message
    assert "trans = [[[" in fb.message
    for _ in range(10):
        assert part1.check_marginals(A.marginals).ok


def test_lab8_rounds_tabulated_on_the_public_ones_fail_and_the_message_states_the_round():
    public = {}
    for _, p, q, drafts, u in real_models._cases():
        public[(p.tobytes(), drafts.tobytes(), u.tobytes())] = A.verify_round(p, q, drafts, u)
    key = lambda p, q, d, u: (p.tobytes(), d.tobytes(), u.tobytes())  # noqa: E731
    student = tabulated(public, key, lambda p, q, d, u: (0, q[0]))
    fb = real_models.check_verify_round(student)
    assert not fb.ok and "drawn round" in fb.message, fb.message
    assert "(The round: drafts = [" in fb.message and ", u = [" in fb.message and ", q = [[" in fb.message
    for _ in range(10):
        assert real_models.check_verify_round(A.verify_round).ok


def test_drawn_instances_are_new_at_every_check_and_cannot_be_rebound():
    draws = [instances.pairs(instances.fresh()) for _ in range(2)]
    assert not all(np.array_equal(a[0], b[0]) for a, b in zip(*draws, strict=True))
    for p, _ in draws[0]:
        assert np.isclose(p.sum(), 1) and np.allclose(np.round(p * 100), p * 100, rtol=0, atol=1e-9)
    with pytest.raises(AttributeError):
        instances.fresh = lambda: np.random.default_rng(0)
    with pytest.raises(AttributeError):
        instances.DRAWN = 0


def _key(args) -> tuple:
    out = []
    for a in args:
        if isinstance(a, np.ndarray):
            out.append(a.tobytes())
        elif hasattr(a, "trans"):
            out.append((a.init.tobytes(), a.trans.tobytes()))
        else:
            out.append(repr(a))
    return tuple(out)


@pytest.mark.parametrize(
    "name",
    [
        "check_unbiased_rejection_law",
        "check_tv_loss",
        "check_optimal_rejection_law",
        "check_over_accept",
        "check_batch_improvement",
        "check_expected_rejections_batch",
        "check_tree_survivors",
        "check_tokens_per_call",
        "check_wallclock_speedup",
    ],
)
def test_a_function_replaying_the_answers_of_an_earlier_run_fails(name):
    """The student runs the check once with a recorder, then answers by lookup: the new draws are unknown."""
    check, answer = A.FUNCTION_CHECKS[name]
    seen = {}

    def recorder(*args):
        seen[_key(args)] = answer(*args)
        return seen[_key(args)]

    assert check(recorder).ok
    # Off by one where the table has no answer: a guess such as 0.0 is right on some drawn instances (a loss of 0).
    replay = check(lambda *args: seen[_key(args)] if _key(args) in seen else np.asarray(answer(*args)) + 1.0)
    assert not replay.ok, replay.message
    assert check(lambda *args: seen[_key(args)] if _key(args) in seen else answer(*args)).ok  # only draws differed


def test_lab9_residual_and_acceptance_tabulated_on_the_public_instances_fail():
    from specdec_lite.exercises import bugs

    def residual(p, q):
        pos = np.maximum(q - p, 0)
        return pos / pos.sum() if pos.sum() > 1e-12 else q

    public = {_pair_key(p, q): residual(p, q) for _, p, q in bugs._residual_cases()}
    fb = bugs.check_residual_guard(tabulated(public, _pair_key, lambda p, q: np.maximum(q - p, 0)))
    assert not fb.ok and "drawn for this check (p = [" in fb.message, fb.message
    P = np.array([0.4, 0.3, 0.2, 0.1])

    def accept(p, q, x, u):
        return u < min(1.0, q[x] / p[x]) if np.array_equal(p, P) else bool(u < 0.5)

    fb = bugs.check_accept(accept)
    assert not fb.ok and "p = [" in fb.message and "q = [" in fb.message, fb.message
    for _ in range(10):
        assert bugs.check_residual_guard(residual).ok
        assert bugs.check_accept(lambda p, q, x, u: u < min(1.0, q[x] / p[x])).ok


@pytest.mark.slow
def test_a_right_sampler_drawing_in_another_order_fails_at_the_stated_rate():
    """The instructors page: a right answer that draws its random numbers otherwise than the master fails a
    statistical check with probability at most n * alpha (n chi-square tests at level alpha; Lab 7's round
    lengths run three). Over ``SEEDS`` seeds, the failures of a right sampler (NumPy's geometric law, not the
    master's draws) stay within ``Z`` standard errors of that rate."""
    import inspect

    from specdec_lite.exercises import bugs, lookahead

    from .conftest import Z

    alpha = inspect.signature(part1.check_speculative_step).parameters["alpha"].default
    assert alpha == bugs.ALPHA
    rate = 1 - (1 - alpha) ** 3

    def right(a, K, runs, rng):
        return np.minimum(rng.geometric(1 - a, size=runs), K + 1)

    seeds = 400
    failed = sum(not lookahead.check_round_lengths(right, seed=1000 + s).ok for s in range(seeds))
    assert failed <= seeds * rate + Z * np.sqrt(seeds * rate * (1 - rate)), (failed, seeds, rate)
