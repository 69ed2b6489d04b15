"""Theorem 1(b): E[N_rej] = sum_n E_q[TV(p_n, q_n)], exact against Monte Carlo."""

import numpy as np
import pytest

import specdec_lite as sd
from specdec_lite.stats import mean_and_se
from tests.conftest import Z


@pytest.mark.parametrize(
    "V, T, concentration, seed",
    [(2, 10, 1.0, 0), (7, 50, 1.0, 10), (7, 50, 0.2, 11), (20, 100, 0.5, 12), (12, 1, 1.0, 13)],
)
def test_expected_rejections_matches_monte_carlo(V, T, concentration, seed):
    target = sd.MarkovChain.random(V, T, rng=seed, concentration=concentration)
    draft = sd.MarkovChain.random(V, T, rng=seed + 1000, concentration=concentration)
    res = sd.decoding.speculative(draft, target, runs=20_000, rng=seed)
    exact = sd.theory.expected_rejections(draft, target)
    m, se = mean_and_se(res.rejections)
    assert abs(m - exact) <= Z * se, (m, exact, se)
    # Per position, E[R_n] is the weighted TV of that position.
    profile = sd.theory.rejection_profile(draft, target)
    frac = res.rejected.mean(axis=0)
    se_n = np.sqrt(np.maximum(profile * (1 - profile), 1e-12) / res.runs)
    assert np.all(np.abs(frac - profile) <= Z * se_n + 1e-12)
    # Oracle calls = 1 + rejections before the last position.
    m, se = mean_and_se(res.oracle_calls)
    assert abs(m - sd.theory.expected_oracle_calls(draft, target)) <= Z * se + 1e-12


def test_equal_models_never_reject():
    q = sd.MarkovChain.random(5, 30, rng=0)
    res = sd.decoding.speculative(q, q, runs=2000, rng=1)
    assert sd.theory.expected_rejections(q, q) == 0.0
    assert res.rejections.sum() == 0 and np.all(res.oracle_calls == 1)
    assert sd.theory.speedup(q, q) == pytest.approx(30)


def test_disjoint_supports_reject_everywhere():
    V, T = 4, 6
    # draft always on tokens {0, 1}, target always on {2, 3}
    p_row, q_row = np.array([0.5, 0.5, 0, 0]), np.array([0, 0, 0.3, 0.7])
    draft = sd.MarkovChain(p_row, np.broadcast_to(p_row, (T - 1, V, V)))
    target = sd.MarkovChain(q_row, np.broadcast_to(q_row, (T - 1, V, V)))
    res = sd.decoding.speculative(draft, target, runs=3000, rng=2)
    assert sd.theory.expected_rejections(draft, target) == pytest.approx(T)
    assert np.all(res.rejected) and np.all(res.tokens >= 2)
    assert np.all(res.oracle_calls == T) and sd.theory.speedup(draft, target) == pytest.approx(1)


def test_one_hot_laws():
    V, T = 3, 5
    e0, e2 = np.eye(V)[0], np.eye(V)[2]
    target = sd.MarkovChain(e2, np.broadcast_to(e2, (T - 1, V, V)))
    draft = sd.MarkovChain(e0, np.broadcast_to(e0, (T - 1, V, V)))
    res = sd.decoding.speculative(draft, target, runs=100, rng=0)
    assert np.all(res.tokens == 2) and np.all(res.rejected)
    same = sd.decoding.speculative(target, target, runs=100, rng=0)
    assert np.all(same.tokens == 2) and not same.rejected.any()


def test_theorem1_forward_pass_equals_enumeration_over_all_prefixes():
    """The O(T V^2) pass gives, at every position, the sum over all V^(n-1) prefixes of q(prefix) TV(p_n, q_n)."""
    V, T = 3, 6
    target = sd.MarkovChain.random(V, T, rng=0, concentration=0.5, uniform_init=False)
    draft = sd.draft_for(target, 0.3, rng=1)
    want = np.empty(T)
    for n in range(T):
        total = 0.0
        for prefix in np.ndindex(*(V,) * n):
            q_prefix = np.exp(sd.MarkovChain(target.init, target.trans[: max(n - 1, 0)]).log_prob(prefix)) if n else 1.0
            prev = prefix[-1] if n else 0
            total += q_prefix * sd.tv(draft.conditional(n, prev), target.conditional(n, prev))
        want[n] = total
    np.testing.assert_allclose(sd.theory.rejection_profile(draft, target), want, rtol=1e-12, atol=1e-15)


def test_theorem1_pass_handles_sizes_enumeration_cannot():
    """T = 1000, V = 200 (200^1000 sequences): the pass still gives the exact sum, here checked against a
    draft built to have TV(p_n, q_n) = 0.3 after every prefix, so E[N_rej] = 0.3 T exactly."""
    draft, target = sd.lookahead.tv_schedule_pair(200, 1000, 0.3, rng=0)
    assert sd.theory.expected_rejections(draft, target) == pytest.approx(0.3 * 1000, rel=1e-12)
