"""Theorem 2 and Corollary 1: random unbiased members of F never reject less than speculative decoding."""

import numpy as np
import pytest

import specdec_lite as sd
from specdec_lite import biased as bi
from specdec_lite import optimality as op
from specdec_lite import tradeoff as tr
from specdec_lite.stats import chi_square, mean_and_se, sequence_index
from tests.conftest import ALPHA, Z


def laws(seed, V=6, size=(400,), concentration=0.5):
    rng = np.random.default_rng(seed)
    return rng.dirichlet(np.full(V, concentration), size=size), rng.dirichlet(np.full(V, concentration), size=size)


@pytest.mark.parametrize("seed", range(4))
def test_random_members_are_unbiased_and_reject_at_least_tv(seed):
    p, q = laws(seed)
    b, P = op.random_unbiased_member(p, q, rng=seed)
    assert np.all(op.is_unbiased(p, q, b, P))
    np.testing.assert_allclose(tr.output_law(p, b, P), q, atol=1e-12)
    reject = tr.reject_probability(p, b)
    bound = op.rejection_lower_bound(p, q)
    assert np.all(reject >= bound - 1e-12)
    np.testing.assert_allclose(reject - bound, op.rejection_excess(p, q, b), atol=1e-12)
    # equality exactly for the speculative rule
    spec = sd.acceptance(p, q)
    np.testing.assert_allclose(tr.reject_probability(p, spec), bound, atol=1e-12)
    strictly_below = np.any((b < spec - 1e-9) & (p > 0), axis=-1)
    assert strictly_below.mean() > 0.9
    assert np.all(reject[strictly_below] > bound[strictly_below])


def test_epsilon_rewriting():
    p, q = laws(5, size=(300,))
    b = np.random.default_rng(0).random(p.shape)
    eps = op.epsilon_of(p, q, b)
    seen = p > 1e-6  # on tokens p almost never proposes, eps / p amplifies rounding
    np.testing.assert_allclose(np.minimum(1, (q + eps) / p)[seen], b[seen], atol=1e-9)
    # unbiased members are exactly the rules with eps <= 0
    b_f, _ = op.random_unbiased_member(p, q, rng=1)
    assert np.all(op.epsilon_of(p, q, b_f) <= 1e-15)
    # a rule with eps > 0 somewhere has a positive loss whatever P is: it cannot be in F
    over = np.any(eps > 1e-9, axis=-1)
    assert over.any()
    loss = tr.tv_loss(p, q, b)
    assert np.all(loss[over] > 0)
    np.testing.assert_allclose(loss, np.maximum(eps, 0).sum(-1), atol=1e-12)


def test_corollary1_law_is_the_only_unbiased_one():
    p, q = np.array([0.5, 0.3, 0.2]), np.array([0.2, 0.3, 0.5])
    b = np.array([0.2, 0.5, 1.0])
    P = op.unbiased_rejection_law(p, q, b)
    np.testing.assert_allclose(P, (q - b * p) / ((1 - b) * p).sum())
    assert op.is_unbiased(p, q, b, P)
    for other in [sd.residual(p, q), q, np.full(3, 1 / 3)]:
        assert not op.is_unbiased(p, q, b, other)
    with pytest.raises(ValueError, match="accept"):
        op.unbiased_rejection_law(p, q, np.array([0.5, 0.5, 1.0]))  # 0.5 > q/p = 0.4 on token 0


def test_edges():
    q = np.array([0.1, 0.6, 0.3])
    # p == q: the speculative rule never rejects; Corollary 1 still returns a law
    P = op.unbiased_rejection_law(q, q, np.ones(3))
    np.testing.assert_allclose(P, q)
    # zero draft probability: b there is irrelevant and never blocks unbiasedness
    p = np.array([0.5, 0.5, 0.0])
    b, P = op.random_unbiased_member(p, q, rng=0)
    assert op.is_unbiased(p, q, b, P) and P[2] > 0
    # one-hot laws: only the residual can produce the target token
    e0, e1 = np.eye(3)[0], np.eye(3)[1]
    np.testing.assert_allclose(op.unbiased_rejection_law(e0, e1, np.zeros(3)), e1)


@pytest.mark.parametrize("V, T, seed", [(4, 30, 0), (7, 50, 10), (3, 1, 2)])
def test_theorem2_on_chains_exactly(V, T, seed):
    target = sd.MarkovChain.random(V, T, rng=seed, concentration=0.5)
    draft = sd.MarkovChain.random(V, T, rng=seed + 1, concentration=0.5)
    bound = sd.theory.expected_rejections(draft, target)
    bound_profile = sd.theory.rejection_profile(draft, target)
    for k in range(10):
        b, P = op.random_unbiased_chain_member(draft, target, rng=100 * seed + k)
        out = bi.output_chain(draft, b, P)
        np.testing.assert_allclose(out.laws(), target.laws(), atol=1e-12)  # unbiased as a sequence law
        profile = bi.rejection_profile_of(draft, b, P)
        assert np.all(profile >= bound_profile - 1e-12)
        assert profile.sum() >= bound - 1e-12
        if T > 1:
            assert profile.sum() > bound  # a random member is strictly worse
    # speculative decoding itself is the member that attains the bound
    spec, res = sd.acceptance(draft.laws(), target.laws()), sd.residual(draft.laws(), target.laws())
    assert bi.rejection_profile_of(draft, spec, res).sum() == pytest.approx(bound, abs=1e-12)


def test_random_member_monte_carlo():
    """A random member of F, sampled: output law is the target, rejections match the exact value."""
    V, T = 3, 4
    target = sd.MarkovChain.random(V, T, rng=31, concentration=1.0)
    draft = sd.MarkovChain.random(V, T, rng=32, concentration=0.5)
    b, P = op.random_unbiased_chain_member(draft, target, rng=3)
    res = bi.generic_speculative(draft, b, P, runs=100_000, rng=4)
    law = sd.theory.sequence_law(target)
    counts = np.bincount(sequence_index(res.tokens, V), minlength=law.size)
    assert chi_square(counts, law).pvalue > ALPHA
    m, se = mean_and_se(res.rejections)
    exact = bi.rejection_profile_of(draft, b, P).sum()
    assert abs(m - exact) <= Z * se
    assert exact > sd.theory.expected_rejections(draft, target)


def test_errors():
    p, q = np.array([0.5, 0.5]), np.array([0.2, 0.8])
    with pytest.raises(ValueError, match="accept"):
        op.epsilon_of(p, q, [0.5, 2.0])
    with pytest.raises(ValueError, match="accept"):
        op.rejection_excess(p, q, [0.5])
    with pytest.raises(ValueError, match="q"):
        op.rejection_lower_bound(p, [0.5, 0.6])
    with pytest.raises(ValueError, match="rng"):
        op.random_unbiased_member(p, q, rng="seed")
    with pytest.raises(ValueError, match="must share"):
        op.random_unbiased_chain_member(sd.MarkovChain.random(2, 3, 0), sd.MarkovChain.random(3, 3, 0))


def test_whole_draft_acceptance_tokenwise_vs_joint():
    """The class boundary: one joint test keeps the whole draft at least as often as any member of F."""
    V, T = 3, 5
    target = sd.MarkovChain.random(V, T, rng=51, concentration=0.5)
    draft = sd.draft_for(target, 0.5, rng=52)
    tokenwise = op.prob_all_accepted_tokenwise(draft, target)
    res = sd.decoding.speculative(draft, target, runs=50_000, rng=53)
    m, se = mean_and_se(res.rejections == 0)
    assert abs(m - tokenwise) <= Z * se
    # every random member of F keeps the whole draft less often than speculative decoding
    for k in range(5):
        b, P = op.random_unbiased_chain_member(draft, target, rng=k)
        keep = b * draft.laws()
        v = keep[0, 0]
        for n in range(1, T):
            v = v @ keep[n]
        assert v.sum() <= tokenwise + 1e-12
    joint = op.prob_all_accepted_joint(draft, target)
    assert joint == pytest.approx(1 - bi.sequence_tv(draft, target))
    assert joint > tokenwise
    # one token: the two coincide (1 - TV)
    one = [sd.MarkovChain(c.init, np.empty((0, V, V))) for c in (draft, target)]
    assert op.prob_all_accepted_joint(*one) == pytest.approx(op.prob_all_accepted_tokenwise(*one))


def test_spread_controls_distance_to_the_bound():
    p, q = laws(9)
    near, _ = op.random_unbiased_member(p, q, rng=0, spread=0.05)
    far, _ = op.random_unbiased_member(p, q, rng=0, spread=1.0)
    assert np.all(op.rejection_excess(p, q, near) <= 0.05 + 1e-12)
    assert op.rejection_excess(p, q, near).mean() < op.rejection_excess(p, q, far).mean()
    b0, P0 = op.random_unbiased_member(p, q, rng=0, spread=0.0)
    np.testing.assert_allclose(b0, sd.acceptance(p, q))
    with pytest.raises(ValueError, match="spread"):
        op.random_unbiased_member(p, q, rng=0, spread=1.5)


# --- sample and match: emit the target's draw, keep the draft when they agree ----------------------


def _match_joint_by_enumeration(p, q):
    """P(emit y, accepted) and P(emit y, rejected), summing over every pair (x, y) drawn independently."""
    V = len(p)
    joint = np.zeros((V, 2))
    for x in range(V):
        for y in range(V):
            joint[y, 0 if x == y else 1] += p[x] * q[y]
    return joint


@pytest.mark.parametrize("seed", range(4))
def test_sample_and_match_is_the_member_b_equals_q_and_rejects_at_least_tv(seed):
    p, q = laws(seed, size=(50,))
    b, P = op.sample_and_match_rule(p, q)
    np.testing.assert_allclose(b, q)
    assert np.all(op.is_unbiased(p, q, b, P))
    for i in range(len(p)):  # the same joint law of (token, rejection mark) as the rule it stands for
        r = tr.reject_probability(p[i], b[i])
        np.testing.assert_allclose(
            _match_joint_by_enumeration(p[i], q[i]), np.stack([b[i] * p[i], r * P[i]], axis=-1), atol=1e-12
        )
    accept = op.sample_and_match_acceptance(p, q)
    np.testing.assert_allclose(1 - accept, tr.reject_probability(p, b), atol=1e-12)
    assert np.all(accept <= 1 - sd.tv(p, q) + 1e-12)  # Theorem 2: sum p q <= sum min(p, q)
    assert np.all(accept < 1 - sd.tv(p, q) - 1e-6)  # strictly, for laws with full support


def test_sample_and_match_ties_only_on_disjoint_supports_or_a_point_mass():
    point, spread = np.array([0.0, 1.0, 0.0]), np.array([0.2, 0.5, 0.3])
    disjoint = (np.array([0.5, 0.5, 0.0]), np.array([0.0, 0.0, 1.0]))
    for p, q in [(point, point), disjoint, (point, spread), (spread, point)]:  # a greedy draft or target ties
        assert op.sample_and_match_acceptance(p, q) == pytest.approx(1 - sd.tv(p, q))
    p, q = np.array([0.5, 0.5, 0.0]), np.array([0.5, 0.5, 0.0])  # p = q, not a point mass: 0.5 against 1
    assert op.sample_and_match_acceptance(p, q) == pytest.approx(0.5)


@pytest.mark.parametrize(
    "p, q",
    [
        ([0.4, 0.3, 0.2, 0.1], [0.1, 0.2, 0.3, 0.4]),  # the worked example's pair
        tuple(np.random.default_rng(7).dirichlet(np.ones(5), size=2)),
    ],
)
def test_sample_and_match_monte_carlo_output_law_and_acceptance(p, q):
    p, q = np.asarray(p), np.asarray(q)
    runs = 40_000
    tokens, accepted = op.sample_and_match(p, q, runs, rng=3)
    assert chi_square(np.bincount(tokens, minlength=len(q)), q).pvalue > ALPHA  # exact: the law is q
    m, se = mean_and_se(accepted.astype(float))
    assert abs(m - op.sample_and_match_acceptance(p, q)) <= Z * se
    cells = np.bincount(2 * tokens + ~accepted, minlength=2 * len(q))  # (token, rejected) jointly
    assert chi_square(cells, _match_joint_by_enumeration(p, q).ravel()).pvalue > ALPHA
