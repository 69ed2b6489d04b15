"""Finite lookahead K: exact forward pass against Monte Carlo, unbiasedness, the limits
K = 0 (autoregressive) and K >= T (Theorem 1), Leviathan et al.'s i.i.d. formula, best K."""

import math

import numpy as np
import pytest
from scipy.stats import binomtest

import specdec_lite as sd
from specdec_lite import lookahead as la
from specdec_lite.stats import chi_square, mean_and_se, sequence_index
from tests.conftest import ALPHA, Z

CHAINS = [(2, 12, 1.0, 0), (7, 50, 1.0, 10), (7, 50, 0.2, 11), (15, 30, 0.5, 12)]


def random_pair(V, T, concentration, seed):
    target = sd.MarkovChain.random(V, T, rng=seed, concentration=concentration)
    draft = sd.MarkovChain.random(V, T, rng=seed + 1000, concentration=concentration)
    return draft, target


# --- the two limits -------------------------------------------------------------------


@pytest.mark.parametrize("V, T, concentration, seed", CHAINS)
def test_lookahead_at_least_T_is_theorem1(V, T, concentration, seed):
    draft, target = random_pair(V, T, concentration, seed)
    for K in (T, T + 7):
        prof = la.lookahead_profile(draft, target, K)
        assert prof.expected_oracle_calls == pytest.approx(sd.theory.expected_oracle_calls(draft, target), rel=1e-12)
        assert prof.expected_rejections == pytest.approx(sd.theory.expected_rejections(draft, target), rel=1e-12)
        np.testing.assert_allclose(prof.rejection, sd.theory.rejection_profile(draft, target), atol=1e-13)
        assert not prof.bonus.any()
    # K = T - 1 ends a fully accepted first round with a bonus token at the last position instead of a draft
    near = la.lookahead_profile(draft, target, T - 1)
    assert near.bonus[:-1].sum() == 0 and near.bonus[-1] > 0
    assert near.expected_rejections <= sd.theory.expected_rejections(draft, target) + 1e-12


@pytest.mark.parametrize("V, T, concentration, seed", CHAINS[:2])
def test_lookahead_zero_is_autoregressive(V, T, concentration, seed):
    draft, target = random_pair(V, T, concentration, seed)
    prof = la.lookahead_profile(draft, target, 0)
    assert prof.expected_oracle_calls == pytest.approx(T, rel=1e-12)
    assert prof.expected_rejections == 0 and prof.expected_draft_calls == 0
    assert prof.speedup(c=0.3) == pytest.approx(1.0, rel=1e-12)
    res = la.speculative_k(draft, target, 0, runs=500, rng=seed)
    assert np.all(res.oracle_calls == T) and np.all(res.bonus) and not res.rejected.any()
    assert np.all(res.draft_calls == 0)


@pytest.mark.parametrize("V, T, concentration, seed", CHAINS)
def test_sampler_with_K_at_least_T_reproduces_algorithm1_draw_for_draw(V, T, concentration, seed):
    draft, target = random_pair(V, T, concentration, seed)
    a = la.speculative_k(draft, target, T, runs=400, rng=seed)
    b = sd.decoding.speculative(draft, target, runs=400, rng=seed)
    np.testing.assert_array_equal(a.tokens, b.tokens)
    np.testing.assert_array_equal(a.rejected, b.rejected)
    np.testing.assert_array_equal(a.oracle_calls, b.oracle_calls)


# --- exact against Monte Carlo ------------------------------------------------------------


@pytest.mark.parametrize("V, T, concentration, seed", CHAINS)
@pytest.mark.parametrize("K", [1, 3, 8])
def test_exact_finite_K_matches_monte_carlo(V, T, concentration, seed, K):
    draft, target = random_pair(V, T, concentration, seed)
    prof = la.lookahead_profile(draft, target, K)
    res = la.speculative_k(draft, target, K, runs=20_000, rng=seed * 31 + K)
    for observed, exact in [
        (res.rejections, prof.expected_rejections),
        (res.oracle_calls, prof.expected_oracle_calls),
        (res.draft_calls, prof.expected_draft_calls),
        (res.time(0.2), prof.expected_time(0.2)),
    ]:
        m, se = mean_and_se(observed)
        assert abs(m - exact) <= Z * se + 1e-12, (m, exact, se)
    # per position: P(R_n = 1), P(round starts at n), P(bonus at n); some are rare events, so an
    # exact binomial test per position (Bonferroni over the T positions) instead of a normal bound
    starts = res.round_position == 0
    for flags, probs in [(res.rejected, prof.rejection), (starts, prof.round_start), (res.bonus, prof.bonus)]:
        hits = flags.sum(axis=0)
        probs = np.clip(probs, 0.0, 1.0)
        pvalues = [binomtest(int(h), res.runs, float(pr)).pvalue for h, pr in zip(hits, probs, strict=True)]
        assert min(pvalues) > ALPHA / T, (np.argmin(pvalues), min(pvalues))


def test_vectorised_profiles_equal_one_at_a_time():
    draft, target = random_pair(7, 25, 0.5, 3)
    Ks = [0, 1, 2, 5, 24, 25, 40]
    for K, prof in zip(Ks, la.lookahead_profiles(draft, target, Ks), strict=True):
        one = la.lookahead_profile(draft, target, K)
        assert prof.K == K
        for name in ("rejection", "round_start", "bonus", "draft_calls"):
            np.testing.assert_allclose(getattr(prof, name), getattr(one, name), atol=1e-14)


# --- unbiasedness -------------------------------------------------------------------------


@pytest.mark.parametrize("K", [1, 2, 3, 6])
def test_speculative_k_is_unbiased(K):
    V, T = 3, 4
    draft, target = random_pair(V, T, 0.7, 40)
    res = la.speculative_k(draft, target, K, runs=60_000, rng=100 + K)
    counts = np.bincount(sequence_index(res.tokens, V), minlength=V**T)
    law = sd.theory.sequence_law(target)
    assert chi_square(counts, law).pvalue > ALPHA
    # power: the same test tells this sample from a law 15% of the way to the draft
    assert chi_square(counts, sd.theory.sequence_law(target.mix(draft, 0.15))).pvalue < ALPHA


@pytest.mark.parametrize("K", [1, 2, 3])
def test_joint_law_of_tokens_and_round_positions(K):
    V, T = 3, 4
    draft, target = random_pair(V, T, 0.7, 41)
    law, J = la.lookahead_joint_law(draft, target, K)
    assert law.sum() == pytest.approx(1.0)
    res = la.speculative_k(draft, target, K, runs=80_000, rng=200 + K)
    idx = sequence_index(J * res.tokens.astype(np.int64) + res.next_round_position, V * J)
    counts = np.bincount(idx, minlength=law.size)
    assert chi_square(counts, law).pvalue > ALPHA
    # power: a sampler that never gives a bonus token (the law of K = infinity) is caught
    wrong, J_inf = la.lookahead_joint_law(draft, target, T)
    idx_inf = sequence_index(J_inf * res.tokens.astype(np.int64) + res.next_round_position, V * J_inf)
    assert chi_square(np.bincount(idx_inf, minlength=wrong.size), wrong).pvalue < ALPHA


# --- numerical edges --------------------------------------------------------------------------


@pytest.mark.parametrize("K", [0, 1, 3, 9, 12])
def test_equal_models_accept_everything(K):
    T = 10
    q = sd.MarkovChain.random(4, T, rng=5)
    res = la.speculative_k(q, q, K, runs=300, rng=6)
    rounds = math.ceil(T / (K + 1))
    assert not res.rejected.any() and np.all(res.oracle_calls == rounds)
    assert la.expected_oracle_calls_k(q, q, K) == pytest.approx(rounds)
    assert la.expected_rejections_k(q, q, K) == 0.0
    drafted = sum(min(K, T - n0) for n0 in range(0, T, K + 1))
    assert np.all(res.draft_calls == drafted) and la.expected_draft_calls_k(q, q, K) == pytest.approx(drafted)


@pytest.mark.parametrize("K", [1, 4])
def test_disjoint_supports_reject_every_draft(K):
    V, T = 4, 6
    p_row, q_row = np.array([0.5, 0.5, 0, 0]), np.array([0, 0, 0.3, 0.7])
    draft = sd.MarkovChain(p_row, np.broadcast_to(p_row, (T - 1, V, V)))
    target = sd.MarkovChain(q_row, np.broadcast_to(q_row, (T - 1, V, V)))
    res = la.speculative_k(draft, target, K, runs=500, rng=2)
    assert np.all(res.rejected) and np.all(res.tokens >= 2) and np.all(res.oracle_calls == T)
    prof = la.lookahead_profile(draft, target, K)
    assert prof.expected_oracle_calls == pytest.approx(T) and prof.expected_rejections == pytest.approx(T)
    assert prof.expected_draft_calls == pytest.approx(sum(min(K, T - n) for n in range(T)))
    assert prof.speedup(0.1) < 1  # drafting that never helps costs time


def test_one_hot_laws_with_lookahead():
    V, T = 3, 7
    e2 = np.eye(V)[2]
    target = sd.MarkovChain(e2, np.broadcast_to(e2, (T - 1, V, V)))
    res = la.speculative_k(target, target, 2, runs=50, rng=0)
    assert np.all(res.tokens == 2) and np.all(res.oracle_calls == 3)
    assert np.array_equal(res.bonus[0], [False, False, True] * 2 + [False])


# --- Leviathan et al.: i.i.d. acceptances ---------------------------------------------------------


def test_tokens_per_call_formula():
    for alpha in (0.0, 0.3, 0.8, 1.0):
        for K in (0, 1, 5):
            assert la.expected_tokens_per_call(alpha, K) == pytest.approx(sum(alpha**i for i in range(K + 1)))
    np.testing.assert_allclose(la.expected_tokens_per_call(np.array([0.5, 1.0]), 2), [1.75, 3.0])
    assert la.iid_speedup(0.6, 1, 0.1) == pytest.approx(1.6 / 1.1)  # K = 1: (1 + alpha) / (1 + c)


def test_calls_per_token_is_convex_in_alpha():
    # Chapter 7's Jensen argument: 1 / E[G] = (1 - alpha) / (1 - alpha^(K+1)) is convex in alpha,
    # and linear (1 - alpha) for K = infinity
    alpha = np.linspace(0.0, 1.0, 4001)
    for K in (1, 2, 3, 5, 10, 30, 100):
        g = 1 / la.expected_tokens_per_call(alpha, K)
        assert np.diff(g, 2).min() > -1e-12, K
    low = alpha[alpha <= 0.99]
    assert np.allclose(1 / la.expected_tokens_per_call(low, 5000), 1 - low, atol=1e-12)


def test_stretches_of_tv_make_the_formula_optimistic():
    T, K = 200, 8
    sched = np.where((np.arange(T) // 50) % 2 == 0, 0.02, 0.58)
    draft, target = la.tv_schedule_pair(7, T, sched, rng=2)
    assert T / la.expected_oracle_calls_k(draft, target, K) < 0.95 * la.expected_tokens_per_call(0.7, K)


@pytest.mark.parametrize("V, tv, seed", [(3, 0.3, 0), (9, 0.3, 1), (5, 0.6, 2), (6, 0.05, 3)])
def test_constant_tv_chain_is_the_iid_model(V, tv, seed):
    T = 60
    draft, target = la.tv_schedule_pair(V, T, tv, rng=seed)
    np.testing.assert_allclose(sd.tv(draft.laws(), target.laws()), tv, atol=1e-12)
    alpha = 1 - tv
    for K in (0, 1, 2, 5, 20):
        calls = la.expected_oracle_calls_k(draft, target, K)
        assert calls == pytest.approx(la.iid_expected_oracle_calls(alpha, K, T), rel=1e-10)
        # Wald's identity: E[calls] * E[tokens per round] = T + E[overshoot], overshoot in [0, K]
        ell = la.expected_tokens_per_call(alpha, K)
        assert T / ell - 1e-9 <= calls <= (T + K) / ell + 1e-9


def test_tv_schedule_pair_has_the_schedule_and_independent_acceptances():
    T, sched = 30, np.linspace(0.05, 0.6, 30)
    draft, target = la.tv_schedule_pair(6, T, sched, rng=4)
    np.testing.assert_allclose(sd.tv(draft.laws(), target.laws()), np.broadcast_to(sched[:, None], (T, 6)), atol=1e-12)
    np.testing.assert_allclose(sd.theory.rejection_profile(draft, target), sched, atol=1e-12)
    # K >= T: each position starts a round iff the one before was rejected, independently
    prof = la.lookahead_profile(draft, target, T)
    np.testing.assert_allclose(prof.round_start[1:], sched[:-1], atol=1e-12)


@pytest.mark.parametrize("tv, K", [(0.3, 3), (0.1, 6), (0.5, 1)])
def test_leviathan_formula_is_the_stationary_round_rate(tv, K):
    # Far from the start, a round starts at position n with probability exactly 1 / E[tokens per round].
    draft, target = la.tv_schedule_pair(4, 400, tv, rng=7)
    prof = la.lookahead_profile(draft, target, K)
    assert prof.round_start[-1] == pytest.approx(1 / la.expected_tokens_per_call(1 - tv, K), abs=1e-10)


def test_leviathan_formula_matches_monte_carlo_tokens_per_round():
    # The first round (T > K + 1, so never cut by the horizon) emits min(Geometric, K + 1) tokens.
    K = 4
    draft, target = la.tv_schedule_pair(5, 10, 0.25, rng=8)
    res = la.speculative_k(draft, target, K, runs=20_000, rng=9)
    first_round = np.argmax(res.round_position[:, 1:] == 0, axis=1) + 1
    m, se = mean_and_se(first_round)
    assert abs(m - la.expected_tokens_per_call(0.75, K)) <= Z * se


# --- best lookahead ----------------------------------------------------------------------------------


@pytest.mark.parametrize("alpha", [0.05, 0.3, 0.6, 0.8, 0.9, 0.97])
@pytest.mark.parametrize("c", [1e-6, 0.001, 0.01, 0.05, 0.1, 0.3, 0.6, 0.99])
def test_best_lookahead_iid_closed_form_against_brute_force(alpha, c):
    K = la.best_lookahead_iid(alpha, c)
    brute = np.array([la.iid_speedup(alpha, k, c) for k in range(1500)])
    assert isinstance(K, int) and la.iid_speedup(alpha, K, c) == pytest.approx(brute.max(), rel=1e-12)
    assert K == int(np.argmax(brute)) or brute[K] == pytest.approx(brute.max(), rel=1e-12)


def test_best_lookahead_iid_edges():
    assert la.best_lookahead_iid(0.0, 0.1) == 0
    assert la.best_lookahead_iid(0.9, 1.0) == 0 and la.best_lookahead_iid(0.9, 3.0) == 0
    assert la.best_lookahead_iid(0.9, 0.0) == math.inf and la.best_lookahead_iid(0.9, 0.0, K_max=12) == 12
    assert la.best_lookahead_iid(1.0, 0.5) == math.inf
    assert la.best_lookahead_iid(0.9, 0.01, K_max=3) == 3
    # one draft token pays off exactly when alpha > c (Leviathan et al.'s corollary)
    assert la.best_lookahead_iid(0.3, 0.29) >= 1 and la.best_lookahead_iid(0.3, 0.31) == 0


@pytest.mark.parametrize("V, T, concentration, seed", CHAINS[1:])
@pytest.mark.parametrize("c", [0.0, 0.02, 0.1, 0.5, 2.0])
def test_best_lookahead_on_chains_against_brute_force(V, T, concentration, seed, c):
    draft, target = random_pair(V, T, concentration, seed)
    K, s = la.best_lookahead(draft, target, c)
    brute = [la.wallclock_speedup_k(draft, target, k, c) for k in range(T + 4)]
    # ties up to rounding (c = 0 makes every long lookahead equally good) may go either way
    assert s == pytest.approx(max(brute), rel=1e-12) and brute[K] == pytest.approx(max(brute), rel=1e-12)
    assert K <= int(np.argmax(brute)) or c == 0.0
    K3, s3 = la.best_lookahead(draft, target, c, K_max=3)
    assert K3 == int(np.argmax(brute[:4])) and s3 == pytest.approx(max(brute[:4]), rel=1e-12)


def test_best_lookahead_extremes():
    q = sd.MarkovChain.random(4, 12, rng=1)
    assert la.best_lookahead(q, q, 0.0) == (11, pytest.approx(12.0))  # one round: 11 drafts and a bonus
    draft, target = random_pair(7, 50, 1.0, 10)
    assert la.best_lookahead(draft, target, 5.0) == (0, pytest.approx(1.0))


# --- bad input ------------------------------------------------------------------------------------------


def test_errors_name_the_argument():
    draft, target = random_pair(3, 5, 1.0, 0)
    for K in (-1, 1.5, True, "2", None):
        with pytest.raises(ValueError, match="^K:"):
            la.expected_oracle_calls_k(draft, target, K)
        with pytest.raises(ValueError, match="^K:"):
            la.speculative_k(draft, target, K, runs=10)
        with pytest.raises(ValueError, match="^K:"):
            la.expected_tokens_per_call(0.5, K)
    for c in (-0.1, float("nan"), float("inf"), "x", None):
        with pytest.raises(ValueError, match="^c:"):
            la.wallclock_speedup_k(draft, target, 2, c)
        with pytest.raises(ValueError, match="^c:"):
            la.best_lookahead(draft, target, c)
        with pytest.raises(ValueError, match="^c:"):
            la.best_lookahead_iid(0.5, c)
    for alpha in (-0.1, 1.5, float("nan")):
        with pytest.raises(ValueError, match="^alpha:"):
            la.expected_tokens_per_call(alpha, 2)
    with pytest.raises(ValueError, match="Ks"):
        la.lookahead_profiles(draft, target, [])
    with pytest.raises(ValueError, match="K_max"):
        la.best_lookahead(draft, target, 0.1, K_max=-2)
    with pytest.raises(ValueError, match="runs"):
        la.speculative_k(draft, target, 2, runs=0)
    with pytest.raises(ValueError, match="T"):
        la.iid_expected_oracle_calls(0.5, 2, 0)
    with pytest.raises(ValueError, match="tv"):
        la.tv_schedule_pair(3, 5, 1.5)
    with pytest.raises(ValueError, match="^tv:"):
        la.tv_schedule_pair(3, 5, [0.1, 0.2])
    with pytest.raises(ValueError, match="^V:"):
        la.tv_schedule_pair(1, 5, 0.2)
    other = sd.MarkovChain.random(3, 6, rng=0)
    with pytest.raises(ValueError, match="share"):
        la.speculative_k(other, target, 2, runs=10)


def test_reexports():
    assert sd.theory.expected_oracle_calls_k is la.expected_oracle_calls_k
    assert sd.decoding.speculative_k is la.speculative_k


# --- the readable reference -------------------------------------------------------------------------


@pytest.mark.parametrize("K", [0, 1, 2, 5])
def test_reference_follows_the_exact_joint_law(K):
    from specdec_lite import lookahead_reference as ref

    V, T = 3, 4
    draft, target = random_pair(V, T, 0.7, 42)
    res = ref.speculative_k(draft, target, K, runs=6000, rng=300 + K)
    law, J = la.lookahead_joint_law(draft, target, K)
    idx = sequence_index(J * res.tokens.astype(np.int64) + res.next_round_position, V * J)
    assert chi_square(np.bincount(idx, minlength=law.size), law).pvalue > ALPHA
    # its own bookkeeping agrees with the flags, and the means with the exact pass
    starts = res.round_position == 0
    np.testing.assert_array_equal(res.oracle_calls, starts.sum(axis=1))
    np.testing.assert_array_equal(res.draft_calls, (starts * np.minimum(K, T - np.arange(T))).sum(axis=1))
    prof = la.lookahead_profile(draft, target, K)
    pairs = [(res.oracle_calls, prof.expected_oracle_calls), (res.draft_calls, prof.expected_draft_calls)]
    for observed, exact in pairs:
        m, se = mean_and_se(observed)
        assert abs(m - exact) <= Z * se + 1e-12
