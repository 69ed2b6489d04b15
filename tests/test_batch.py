"""Algorithm 4 (batch speculative decoding): unbiasedness, Theorem 3, the batch improvement, Proposition 1."""

import numpy as np
import pytest

import specdec_lite as sd
from specdec_lite import batch, batch_reference
from specdec_lite.laws import acceptance, residual
from specdec_lite.stats import chi_square, mean_and_se, sequence_index
from tests.conftest import ALPHA, Z


def pair(V, T, seed, concentration=1.0):
    target = sd.MarkovChain.random(V, T, rng=seed, concentration=concentration)
    draft = sd.MarkovChain.random(V, T, rng=seed + 1000, concentration=concentration)
    return draft, target


def joint_counts(res, V, T):
    idx = sequence_index(2 * res.tokens.astype(np.int64) + res.rejected, 2 * V)
    return np.bincount(idx, minlength=(2 * V) ** T)


def naive_batch(draft, target, M, runs, rng):
    """A biased multi-draft rule: every draft's first token is tried against q itself."""
    gen = np.random.default_rng(rng)
    p, q = draft.init, target.init
    x = np.full(runs, -1)
    for _ in range(M):
        todo = x < 0
        xt = gen.choice(draft.V, size=runs, p=p)
        ok = todo & (gen.random(runs) < acceptance(p, q)[xt])
        x[ok] = xt[ok]
    left = x < 0
    x[left] = gen.choice(target.V, size=int(left.sum()), p=residual(p, q))
    return x


# --- unbiasedness ---------------------------------------------------------------


@pytest.mark.parametrize("M", [1, 3, 8])
def test_batch_sampler_follows_the_exact_joint_law(M):
    V, T = 3, 4
    draft, target = pair(V, T, seed=3)
    res = batch.batch_speculative(draft, target, M, runs=60_000, rng=M)
    counts = joint_counts(res, V, T)
    assert chi_square(counts, batch.batch_joint_law(draft, target, M)).pvalue > ALPHA
    # The tokens alone follow the target: Theorem 3's unbiasedness.
    tok = np.bincount(sequence_index(res.tokens, V), minlength=V**T)
    assert chi_square(tok, sd.theory.sequence_law(target)).pvalue > ALPHA
    # Power: the same samples are far from the law of Algorithm 1's (tokens, rejections).
    if M > 1:
        assert chi_square(counts, sd.theory.speculative_joint_law(draft, target)).pvalue < ALPHA


def test_batch_reference_follows_the_exact_joint_law():
    V, T, M = 2, 3, 3
    draft, target = pair(V, T, seed=5)
    res = batch_reference.batch_speculative(draft, target, M, runs=3000, rng=0)
    assert chi_square(joint_counts(res, V, T), batch.batch_joint_law(draft, target, M)).pvalue > ALPHA
    assert np.array_equal(res.oracle_calls, 1 + res.rejected[:, :-1].sum(axis=1))


def test_batch_joint_law_is_a_law_whose_token_marginal_is_the_target():
    V, T = 3, 4
    draft, target = pair(V, T, seed=6)
    for M in (1, 2, 5):
        law = batch.batch_joint_law(draft, target, M).reshape((2 * V,) * T)
        tokens = law.reshape((V, 2) * T).sum(axis=tuple(range(1, 2 * T, 2))).ravel()
        assert np.allclose(tokens, sd.theory.sequence_law(target), atol=1e-14)
    assert np.allclose(batch.batch_joint_law(draft, target, 1), sd.theory.speculative_joint_law(draft, target))


def test_naive_multi_draft_rule_is_biased_and_the_test_sees_it():
    # Trying every draft against q (not the residuals q^m) over-weights the draft's tokens.
    none = np.empty((0, 4, 4))
    draft = sd.MarkovChain([0.4, 0.3, 0.2, 0.1], none)
    target = sd.MarkovChain([0.1, 0.2, 0.3, 0.4], none)
    M, runs = 4, 20_000
    x = naive_batch(draft, target, M, runs, rng=1)
    assert chi_square(np.bincount(x, minlength=4), target.init).pvalue < ALPHA
    good = batch.batch_speculative(draft, target, M, runs, rng=1).tokens[:, 0]
    assert chi_square(np.bincount(good, minlength=4), target.init).pvalue > ALPHA


# --- Theorem 3 ------------------------------------------------------------------


@pytest.mark.parametrize(
    "V, T, M, concentration, seed",
    [
        (7, 50, 4, 1.0, 10),
        (7, 50, 5, 1.0, 10),
        (2, 10, 3, 1.0, 0),
        (7, 30, 16, 0.2, 11),
        (12, 20, 2, 0.5, 12),
        (5, 1, 6, 1.0, 13),
    ],
)
def test_theorem3_matches_monte_carlo(V, T, M, concentration, seed):
    draft, target = pair(V, T, seed, concentration)
    res = batch.batch_speculative(draft, target, M, runs=20_000, rng=seed)
    exact = batch.expected_rejections_batch(draft, target, M)
    m, se = mean_and_se(res.rejections)
    assert abs(m - exact) <= Z * se, (m, exact, se)
    profile = batch.batch_rejection_profile(draft, target, M)
    frac = res.rejected.mean(axis=0)
    se_n = np.sqrt(np.maximum(profile * (1 - profile), 1e-12) / res.runs)
    assert np.all(np.abs(frac - profile) <= Z * se_n + 1e-12)


def test_theorem3_reference_matches_exact():
    draft, target = pair(3, 5, seed=21)
    M = 3
    res = batch_reference.batch_speculative(draft, target, M, runs=2000, rng=2)
    m, se = mean_and_se(res.rejections)
    assert abs(m - batch.expected_rejections_batch(draft, target, M)) <= Z * se


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_one_draft_is_theorem1(seed):
    draft, target = pair(7, 40, seed)
    assert batch.expected_rejections_batch(draft, target, 1) == pytest.approx(
        sd.theory.expected_rejections(draft, target), rel=1e-13
    )
    assert np.allclose(batch.batch_rejection_profile(draft, target, 1), sd.theory.rejection_profile(draft, target))


def test_batch_edge_cases():
    q = sd.MarkovChain.random(4, 12, rng=0)
    assert batch.expected_rejections_batch(q, q, 5) == 0.0
    res = batch.batch_speculative(q, q, 5, runs=500, rng=0)
    assert not res.rejected.any() and np.all(res.oracle_calls == 1)
    # Disjoint supports: no draft can ever be accepted, whatever M.
    V, T = 4, 6
    p_row, q_row = np.array([0.5, 0.5, 0, 0]), np.array([0, 0, 0.3, 0.7])
    draft = sd.MarkovChain(p_row, np.broadcast_to(p_row, (T - 1, V, V)))
    target = sd.MarkovChain(q_row, np.broadcast_to(q_row, (T - 1, V, V)))
    assert batch.expected_rejections_batch(draft, target, 10) == pytest.approx(T)
    assert batch.batch_rejection_limit(draft, target) == pytest.approx(T)
    res = batch.batch_speculative(draft, target, 10, runs=300, rng=1)
    assert res.rejected.all() and np.all(res.tokens >= 2)


def test_exact_batch_is_polynomial():
    target = sd.MarkovChain.random(7, 100, rng=0)
    draft = sd.draft_for(target, 0.5, rng=1)
    values = [batch.expected_rejections_batch(draft, target, M) for M in (1, 8, 64)]
    assert 0 < values[2] < values[1] < values[0] < 100


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "4"])
def test_bad_number_of_drafts_names_M(bad):
    draft, target = pair(3, 4, 0)
    for call in (
        lambda: batch.expected_rejections_batch(draft, target, bad),
        lambda: batch.batch_speculative(draft, target, bad, runs=10),
        lambda: batch.batch_improvement([0.5, 0.5], [0.2, 0.8], bad),
    ):
        with pytest.raises(ValueError, match="M"):
            call()


# --- the batch improvement of one token ----------------------------------------


@pytest.mark.parametrize("u", [0.0, 0.1, 0.3, 0.5, 0.7, 0.9, 1.0])
@pytest.mark.parametrize("v", [0.0, 0.5, 0.8])
def test_bernoulli_closed_form(u, v):
    p, q = np.array([1 - u, u]), np.array([1 - v, v])
    for M in (1, 2, 3, 7, 30):
        assert batch.batch_improvement(p, q, M) == pytest.approx(batch.batch_improvement_bernoulli(u, v, M), abs=1e-12)


@pytest.mark.parametrize("V, Vp", [(2, 1), (4, 1), (6, 3), (10, 7), (5, 5)])
def test_uniform_closed_form(V, Vp):
    p, q = np.full(V, 1 / V), np.r_[np.full(Vp, 1 / Vp), np.zeros(V - Vp)]
    for M in (1, 2, 5, 20):
        assert batch.batch_improvement(p, q, M) == pytest.approx(batch.batch_improvement_uniform(V / Vp, M), abs=1e-12)


def test_batch_improvement_properties():
    rng = np.random.default_rng(0)
    for _ in range(50):
        p, q = 0.5 / 6 + 0.5 * rng.dirichlet(np.ones(6)), rng.dirichlet(np.ones(6))
        reach, laws = batch.residual_cascade(p, q, 200)
        bi = sd.tv(p, q) - reach
        for M in (1, 2, 9, 200):
            assert batch.batch_improvement(p, q, M) == bi[M]
        assert bi[1] == pytest.approx(0.0, abs=1e-15)  # one draft: nothing to improve
        assert np.all(np.diff(bi[1:]) >= -1e-15) and np.all(bi <= sd.tv(p, q) + 1e-15)
        assert bi[-1] == pytest.approx(sd.tv(p, q), abs=1e-6)  # full support: the cascade ends up accepting
        assert np.allclose(laws.sum(axis=-1), 1.0) and np.all(laws >= 0)
    # Edges: p == q, one-hot target inside the draft's support, float32 input.
    p = np.array([0.2, 0.3, 0.5], dtype=np.float32)
    assert batch.batch_improvement(p, p, 5) == 0.0
    assert batch.batch_improvement([0.25, 0.25, 0.5], [1.0, 0, 0], 3) == pytest.approx(0.75 - 0.75**3)
    with pytest.raises(ValueError, match="q"):
        batch.batch_improvement([0.5, 0.5], [0.5, 0.6], 2)
    with pytest.raises(ValueError, match="u"):
        batch.batch_improvement_bernoulli(1.2, 0.5, 2)
    with pytest.raises(ValueError, match="r"):
        batch.batch_improvement_uniform(0.5, 2)


@pytest.mark.parametrize("u, M", [(0.9, 3), (0.2, 4), (0.7, 8)])
def test_batch_improvement_matches_monte_carlo(u, M):
    # One token (T = 1): E[R_1] = TV - BI under Algorithm 4.
    p, q = np.array([1 - u, u]), np.array([0.5, 0.5])
    draft, target = sd.MarkovChain(p, np.empty((0, 2, 2))), sd.MarkovChain(q, np.empty((0, 2, 2)))
    res = batch.batch_speculative(draft, target, M, runs=40_000, rng=M)
    m, se = mean_and_se(sd.tv(p, q) - res.rejected[:, 0])
    assert abs(m - batch.batch_improvement_bernoulli(u, 0.5, M)) <= Z * se


# --- Proposition 1 ----------------------------------------------------------------


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_limit_is_approached_from_above_and_positive(seed):
    draft, target = pair(7, 30, seed)
    limit = batch.batch_rejection_limit(draft, target)
    values = np.array([batch.expected_rejections_batch(draft, target, M) for M in (1, 2, 4, 8, 16, 64, 256, 2048)])
    assert limit > 0.5  # p != q: rejections inside rounds never go away
    assert np.all(np.diff(values) < 0) and np.all(values > limit)
    assert values[-1] - limit < 1e-2 * (values[0] - limit)
    assert limit < sd.theory.expected_rejections(draft, target)


def test_limit_with_zero_draft_probabilities():
    # Where p(x) = 0 no draft can propose x: the round start keeps rejecting with q(p = 0).
    V, T = 4, 8
    gen = np.random.default_rng(4)
    target = sd.MarkovChain.random(V, T, rng=4)
    p = (0.5 + gen.random((T, V, V))) * (gen.random((T, V, V)) > 0.3)
    p[..., 0] += 0.5
    p /= p.sum(axis=-1, keepdims=True)
    draft = sd.MarkovChain(p[0, 0], p[1:])
    limit = batch.batch_rejection_limit(draft, target)
    big = batch.expected_rejections_batch(draft, target, 5000)
    assert big == pytest.approx(limit, rel=1e-9)
    res = batch.batch_speculative(draft, target, 40, runs=20_000, rng=5)
    m, se = mean_and_se(res.rejections)
    assert abs(m - batch.expected_rejections_batch(draft, target, 40)) <= Z * se


def test_rejections_by_M_needs_at_least_one_M():
    draft, target = sd.MarkovChain.random(3, 4, rng=1), sd.MarkovChain.random(3, 4, rng=0)
    with pytest.raises(ValueError, match="^Ms: need at least one number of drafts"):
        batch.rejections_by_M(draft, target, [])
